package dev.parapet.core.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.limit.AimdLimit;
import dev.parapet.core.limit.FixedLimit;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Seeded random sequences; a failure message names the seed and step so it replays. */
class AdmissionPropertyTest {
  private static final long MS = 1_000_000L;
  private static final RequestKind[] KINDS = RequestKind.values();

  /** The simplest thing that could be right: lists, linear scans, no CoDel. */
  static final class Model {
    record Queued(String name, int rank, long seq) {}

    final int limit;
    final int queueMax;
    int inflight;
    long seq;
    OverloadLevel level = OverloadLevel.NONE;
    final List<Queued> queue = new ArrayList<>();
    final List<String> events = new ArrayList<>();
    final List<String> admitted = new ArrayList<>();

    Model(int limit, int queueMax) {
      this.limit = limit;
      this.queueMax = queueMax;
    }

    static boolean survives(int rank) {
      return rank >= AdmissionController.rank(2, RequestKind.ORDINARY);
    }

    /** Returns "ADMITTED", "QUEUED" or the reject reason. */
    String offer(String name, int rank) {
      if (level.stopsAccepting() || (level.shedsLowPriority() && !survives(rank))) {
        return "OVERLOAD";
      }
      if (queue.isEmpty() && inflight < limit) {
        inflight++;
        admitted.add(name);
        return "ADMITTED";
      }
      if (queueMax == 0) {
        return "LIMIT_REACHED";
      }
      if (queue.size() >= queueMax) {
        Queued victim = lowest();
        if (victim.rank() >= rank) {
          return "QUEUE_FULL";
        }
        queue.remove(victim);
        events.add("rejected " + victim.name() + " DISPLACED");
      }
      queue.add(new Queued(name, rank, seq++));
      return "QUEUED";
    }

    void release(String name) {
      admitted.remove(name);
      inflight--;
      while (!queue.isEmpty() && inflight < limit) {
        Queued best =
            queue.stream()
                .max(Comparator.comparingInt(Queued::rank).thenComparing(q -> -q.seq()))
                .orElseThrow();
        queue.remove(best);
        inflight++;
        admitted.add(best.name());
        events.add("admitted " + best.name());
      }
    }

    Queued lowest() {
      return queue.stream()
          .min(Comparator.comparingInt(Queued::rank).thenComparingLong(Queued::seq))
          .orElseThrow();
    }

    void level(OverloadLevel newLevel) {
      level = newLevel;
      if (!newLevel.shedsLowPriority()) {
        return;
      }
      while (!queue.isEmpty() && !survives(lowest().rank())) {
        Queued victim = lowest();
        queue.remove(victim);
        events.add("rejected " + victim.name() + " OVERLOAD");
      }
    }

    boolean cancel(String name) {
      return queue.removeIf(q -> q.name().equals(name));
    }
  }

  @Test
  void matchesTheReferenceModelWithoutCodel() {
    long displaced = 0;
    long fromQueue = 0;
    for (long seed = 1; seed <= 40; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      int limit = 1 + (int) random.nextLong(4);
      int queueMax = (int) random.nextLong(6);
      AdmissionController ctl =
          new AdmissionController(FixedLimit.of(limit), queueMax, Long.MAX_VALUE / 4, MS);
      Model model = new Model(limit, queueMax);
      Recorder rec = new Recorder();
      List<AdmissionTicket> pool = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        pool.add(rec.ticket("t" + i));
      }
      long now = Long.MAX_VALUE - 300 * MS;
      for (int step = 0; step < 1500; step++) {
        String where = "seed " + seed + " step " + step;
        now += random.nextLong(3 * MS);
        AdmissionTicket t = pool.get((int) random.nextLong(pool.size()));
        String name = rec.name(t);
        long action = random.nextLong(20);
        if (action == 0) {
          OverloadLevel lvl =
              OverloadLevel.values()[(int) random.nextLong(OverloadLevel.values().length)];
          ctl.overloadLevel(lvl, now);
          model.level(lvl);
        } else if (t.isQueued()) {
          if (action < 4) {
            assertThat(ctl.cancel(t)).as(where).isEqualTo(model.cancel(name)).isTrue();
          }
        } else if (t.permit().isActive()) {
          long how = random.nextLong(3);
          boolean done =
              how == 0
                  ? t.permit().onSuccess(now)
                  : how == 1 ? t.permit().onDropped(now) : t.permit().onIgnore(now);
          assertThat(done).as(where).isTrue();
          model.release(name);
        } else {
          int priority = 1 + (int) random.nextLong(4);
          RequestKind kind = KINDS[(int) random.nextLong(KINDS.length)];
          Decision d = ctl.offer(t, priority, kind, now);
          String expected = model.offer(name, AdmissionController.rank(priority, kind));
          String actual = d == Decision.REJECTED ? String.valueOf(t.rejectReason()) : d.toString();
          assertThat(actual).as(where + " offer " + name).isEqualTo(expected);
        }
        List<String> actualEvents = new ArrayList<>();
        for (String e : rec.events) {
          actualEvents.add(e.substring(0, e.indexOf('@')));
        }
        assertThat(actualEvents).as(where + " events").isEqualTo(model.events);
        assertThat(ctl.inflight()).as(where).isEqualTo(model.inflight).isLessThanOrEqualTo(limit);
        assertThat(ctl.queueDepth()).as(where).isEqualTo(model.queue.size());
      }
      displaced += ctl.rejectedCount(RejectReason.DISPLACED);
      fromQueue += ctl.admittedFromQueueCount();
    }
    assertThat(displaced).as("sequences exercised displacement").isPositive();
    assertThat(fromQueue).as("sequences exercised the queue").isPositive();
  }

  /**
   * With CoDel and a moving limit the exact schedule is the implementation's, but the ordering
   * rules hold at every event: whoever is admitted from the queue outranks (or ties) everyone still
   * waiting; whoever is dropped ranks at or below everyone still waiting; each queued request hears
   * exactly once.
   */
  @Test
  void neverShedsAMoreImportantRequestThanOneItAdmitsFromTheQueue() {
    long codelDrops = 0;
    long displaced = 0;
    for (long seed = 1; seed <= 40; seed++) {
      RandomSource random = RandomSource.seeded(seed);
      String where = "seed " + seed;
      List<AdmissionTicket> pool = new ArrayList<>();
      int[] heard = new int[24];
      List<String> violations = new ArrayList<>();
      AdmissionListener checker =
          new AdmissionListener() {
            @Override
            public void onAdmitted(AdmissionTicket ticket, long nowNanos) {
              check(ticket, true);
            }

            @Override
            public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {
              check(ticket, false);
            }

            private void check(AdmissionTicket ticket, boolean admitted) {
              int index = pool.indexOf(ticket);
              heard[index]++;
              int rank = AdmissionController.rank(ticket.priority(), ticket.kind());
              for (AdmissionTicket other : pool) {
                if (other.isQueued()) {
                  int otherRank = AdmissionController.rank(other.priority(), other.kind());
                  if (admitted ? otherRank > rank : otherRank < rank) {
                    violations.add(
                        (admitted ? "admitted " : "shed ")
                            + index
                            + " rank "
                            + rank
                            + " while rank "
                            + otherRank
                            + " waits");
                  }
                }
              }
            }
          };
      for (int i = 0; i < heard.length; i++) {
        pool.add(new AdmissionTicket(checker));
      }
      AdmissionController ctl =
          new AdmissionController(new AimdLimit(3, 1, 6, 0.5, 30 * MS), 5, 5 * MS, 20 * MS);
      int[] queuedOffers = new int[heard.length];
      long now = -50 * MS;
      for (int step = 0; step < 3000; step++) {
        now += random.nextLong(4 * MS);
        int index = (int) random.nextLong(pool.size());
        AdmissionTicket t = pool.get(index);
        long action = random.nextLong(30);
        if (action == 0) {
          ctl.overloadLevel(
              OverloadLevel.values()[(int) random.nextLong(OverloadLevel.values().length)], now);
        } else if (t.isQueued()) {
          continue;
        } else if (t.permit().isActive()) {
          t.permit().onSuccess(now + random.nextLong(40 * MS));
        } else {
          int priority = 1 + (int) random.nextLong(4);
          RequestKind kind = KINDS[(int) random.nextLong(KINDS.length)];
          Decision d = ctl.offer(t, priority, kind, now);
          if (d == Decision.QUEUED) {
            queuedOffers[index]++;
          } else if (d == Decision.REJECTED
              && t.rejectReason() != RejectReason.OVERLOAD
              && t.rejectReason() != RejectReason.LIMIT_REACHED) {
            int rank = AdmissionController.rank(priority, kind);
            for (AdmissionTicket other : pool) {
              if (other.isQueued()) {
                assertThat(AdmissionController.rank(other.priority(), other.kind()))
                    .as(where + " step " + step + ": arrival shed below a waiting request")
                    .isGreaterThanOrEqualTo(rank);
              }
            }
          }
        }
        assertThat(ctl.queueDepth()).as(where).isLessThanOrEqualTo(5);
        assertThat(ctl.inflight()).as(where).isLessThanOrEqualTo(6);
      }
      // Let everything drain, then every queued offer has been answered exactly once.
      ctl.overloadLevel(OverloadLevel.NONE, now);
      for (int round = 0; round < 100 && (ctl.queueDepth() > 0 || ctl.inflight() > 0); round++) {
        for (AdmissionTicket t : pool) {
          if (t.permit().isActive()) {
            t.permit().onIgnore(now);
          }
        }
      }
      assertThat(violations).as(where).isEmpty();
      assertThat(ctl.queueDepth()).as(where).isZero();
      for (int i = 0; i < heard.length; i++) {
        assertThat(heard[i]).as(where + " ticket " + i).isEqualTo(queuedOffers[i]);
      }
      codelDrops += ctl.rejectedCount(RejectReason.CODEL_DROP);
      displaced += ctl.rejectedCount(RejectReason.DISPLACED);
    }
    assertThat(codelDrops).as("sequences exercised CoDel").isPositive();
    assertThat(displaced).as("sequences exercised displacement").isPositive();
  }
}
