package dev.parapet.core.admission;

import static dev.parapet.core.admission.RequestKind.BACKGROUND;
import static dev.parapet.core.admission.RequestKind.ORDINARY;
import static dev.parapet.core.admission.RequestKind.STALE_REFRESH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.limit.FixedLimit;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.time.ManualTicker;
import org.junit.jupiter.api.Test;

class AdmissionControllerTest {
  private static final long MS = 1_000_000L;
  private static final long NO_CODEL = Long.MAX_VALUE / 4;

  private final Recorder rec = new Recorder();

  private static AdmissionController controller(int limit, int queueMax) {
    return new AdmissionController(FixedLimit.of(limit), queueMax, NO_CODEL, 100 * MS);
  }

  @Test
  void admitsUpToTheLimitThenQueuesThenHandsOverOnRelease() {
    AdmissionController ctl = controller(1, 10);
    AdmissionTicket a = rec.ticket("a");
    AdmissionTicket b = rec.ticket("b");
    assertThat(ctl.offer(a, 2, ORDINARY, 0)).isEqualTo(Decision.ADMITTED);
    assertThat(a.permit().isActive()).isTrue();
    assertThat(ctl.offer(b, 2, ORDINARY, 1)).isEqualTo(Decision.QUEUED);
    assertThat(b.isQueued()).isTrue();
    assertThat(ctl.queueDepth()).isEqualTo(1);
    assertThat(rec.events).isEmpty();
    a.permit().onSuccess(5);
    assertThat(rec.events).containsExactly("admitted b@5");
    assertThat(b.permit().isActive()).isTrue();
    assertThat(ctl.inflight()).isEqualTo(1);
    assertThat(ctl.queueDepth()).isZero();
    assertThat(ctl.admittedFromQueueCount()).isEqualTo(1);
    b.permit().onIgnore(6);
    assertThat(ctl.inflight()).isZero();
  }

  @Test
  void admitsTheMostImportantFirstAndFifoWithinAClass() {
    AdmissionController ctl = controller(1, 10);
    AdmissionTicket holder = rec.ticket("holder");
    ctl.offer(holder, 1, ORDINARY, 0);
    String[] names = {"p4", "p3", "p2a", "p1", "p2b"};
    int[] classes = {4, 3, 2, 1, 2};
    AdmissionTicket[] tickets = new AdmissionTicket[names.length];
    for (int i = 0; i < names.length; i++) {
      tickets[i] = rec.ticket(names[i]);
      assertThat(ctl.offer(tickets[i], classes[i], ORDINARY, i)).isEqualTo(Decision.QUEUED);
    }
    AdmissionTicket running = holder;
    for (int i = 0; i < names.length; i++) {
      running.permit().onSuccess(10 + i);
      running = next(tickets);
    }
    assertThat(rec.events)
        .containsExactly(
            "admitted p1@10",
            "admitted p2a@11",
            "admitted p2b@12",
            "admitted p3@13",
            "admitted p4@14");
  }

  private static AdmissionTicket next(AdmissionTicket[] tickets) {
    AdmissionTicket found = null;
    for (AdmissionTicket t : tickets) {
      if (t.permit().isActive()) {
        found = t;
      }
    }
    assertThat(found).isNotNull();
    return found;
  }

  @Test
  void kindLowersTheEffectiveClassSoRefreshesAndBackgroundWorkWait() {
    assertThat(AdmissionController.rank(1, BACKGROUND))
        .isLessThan(AdmissionController.rank(4, STALE_REFRESH));
    assertThat(AdmissionController.rank(4, STALE_REFRESH))
        .isLessThan(AdmissionController.rank(4, ORDINARY));
    assertThat(AdmissionController.rank(4, ORDINARY))
        .isLessThan(AdmissionController.rank(1, STALE_REFRESH));
    assertThat(AdmissionController.rank(1, STALE_REFRESH))
        .as("a refresh of a critical route still waits behind low-priority users")
        .isLessThan(AdmissionController.rank(3, ORDINARY));
    assertThat(AdmissionController.rank(3, ORDINARY))
        .isLessThan(AdmissionController.rank(2, ORDINARY));
    assertThat(AdmissionController.rank(2, ORDINARY))
        .isLessThan(AdmissionController.rank(1, ORDINARY));
    assertThat(AdmissionController.rank(2, STALE_REFRESH))
        .as("same class: refresh sheds before ordinary")
        .isLessThan(AdmissionController.rank(2, ORDINARY));
    assertThat(AdmissionController.rank(1, ORDINARY)).isEqualTo(AdmissionController.RANKS - 1);
    assertThat(AdmissionController.rank(4, BACKGROUND)).isZero();
  }

  @Test
  void fullQueueShedsInSeedOrderBackgroundThenRefreshThenLowThenOrdinary() {
    AdmissionController ctl = controller(1, 4);
    ctl.offer(rec.ticket("holder"), 1, ORDINARY, 0);
    // Offered in reverse of the shed order, so arrival time cannot explain the result.
    ctl.offer(rec.ticket("ordinary2"), 2, ORDINARY, 1);
    ctl.offer(rec.ticket("bot3"), 3, ORDINARY, 2);
    ctl.offer(rec.ticket("refresh2"), 2, STALE_REFRESH, 3);
    ctl.offer(rec.ticket("prefetch1"), 1, BACKGROUND, 4);
    for (int i = 0; i < 4; i++) {
      AdmissionTicket critical = rec.ticket("critical" + i);
      assertThat(ctl.offer(critical, 1, ORDINARY, 10 + i)).isEqualTo(Decision.QUEUED);
    }
    assertThat(rec.events)
        .containsExactly(
            "rejected prefetch1 DISPLACED@10",
            "rejected refresh2 DISPLACED@11",
            "rejected bot3 DISPLACED@12",
            "rejected ordinary2 DISPLACED@13");
    assertThat(ctl.rejectedCount(RejectReason.DISPLACED)).isEqualTo(4);
  }

  @Test
  void fullQueueRefusesAnArrivalThatIsNotMoreImportant() {
    AdmissionController ctl = controller(1, 2);
    ctl.offer(rec.ticket("holder"), 1, ORDINARY, 0);
    ctl.offer(rec.ticket("q1"), 2, ORDINARY, 1);
    ctl.offer(rec.ticket("q2"), 3, ORDINARY, 2);
    AdmissionTicket same = rec.ticket("same");
    assertThat(ctl.offer(same, 3, ORDINARY, 3)).isEqualTo(Decision.REJECTED);
    assertThat(same.rejectReason()).isEqualTo(RejectReason.QUEUE_FULL);
    AdmissionTicket lower = rec.ticket("lower");
    assertThat(ctl.offer(lower, 2, STALE_REFRESH, 4)).isEqualTo(Decision.REJECTED);
    assertThat(rec.events).as("rejections by return value are not also called back").isEmpty();
    AdmissionTicket higher = rec.ticket("higher");
    assertThat(ctl.offer(higher, 2, ORDINARY, 5)).isEqualTo(Decision.QUEUED);
    assertThat(higher.rejectReason()).isNull();
    assertThat(rec.events).containsExactly("rejected q2 DISPLACED@5");
    assertThat(ctl.rejectedCount(RejectReason.QUEUE_FULL)).isEqualTo(2);
  }

  @Test
  void withoutAQueueTheLimitRejectsAtOnce() {
    AdmissionController ctl = controller(1, 0);
    ctl.offer(rec.ticket("a"), 1, ORDINARY, 0);
    AdmissionTicket b = rec.ticket("b");
    assertThat(ctl.offer(b, 1, ORDINARY, 0)).isEqualTo(Decision.REJECTED);
    assertThat(b.rejectReason()).isEqualTo(RejectReason.LIMIT_REACHED);
  }

  @Test
  void codelDropsOnlyAfterSojournStaysAboveTargetForAnInterval() {
    codelScenario(0L);
  }

  @Test
  void codelWorksAcrossNanoTimeWrapAround() {
    codelScenario(Long.MAX_VALUE - 150 * MS);
  }

  private void codelScenario(long start) {
    ManualTicker clock = new ManualTicker(start);
    AdmissionController ctl = new AdmissionController(FixedLimit.of(1), 20, 20 * MS, 100 * MS);
    AdmissionTicket running = rec.ticket("r0");
    ctl.offer(running, 1, ORDINARY, clock.read());
    AdmissionTicket[] queued = new AdmissionTicket[8];
    for (int i = 0; i < queued.length; i++) {
      queued[i] = rec.ticket((i < 4 ? "low" : "high") + i);
      ctl.offer(queued[i], i < 4 ? 3 : 2, ORDINARY, clock.read());
    }
    // t=30ms: sojourn 30 >= 20 starts the clock (first above = t + 100ms); no drop yet.
    running = release(ctl, running, queued, clock.advance(30 * MS));
    // t=100ms: still inside the interval.
    running = release(ctl, running, queued, clock.advance(70 * MS));
    assertThat(rec.events).allMatch(e -> e.startsWith("admitted"));
    // t=131ms: above target for a whole interval: drop the least important, then admit.
    rec.events.clear();
    running = release(ctl, running, queued, clock.advance(31 * MS));
    assertThat(rec.events)
        .containsExactly(
            "rejected low0 CODEL_DROP@" + clock.read(), "admitted high6@" + clock.read());
    // Next drop is due 100ms / sqrt(1) later; before that, plain admissions.
    rec.events.clear();
    running = release(ctl, running, queued, clock.advance(50 * MS));
    assertThat(rec.events).containsExactly("admitted high7@" + clock.read());
    rec.events.clear();
    running = release(ctl, running, queued, clock.advance(50 * MS));
    assertThat(rec.events)
        .containsExactly(
            "rejected low1 CODEL_DROP@" + clock.read(), "admitted low2@" + clock.read());
    // Then 100 / sqrt(2) = 70.7ms later.
    rec.events.clear();
    running = release(ctl, running, queued, clock.advance(70 * MS));
    assertThat(rec.events).containsExactly("admitted low3@" + clock.read());
    assertThat(ctl.rejectedCount(RejectReason.CODEL_DROP)).isEqualTo(2);
  }

  @Test
  void codelStopsDroppingOnceSojournFallsBelowTarget() {
    ManualTicker clock = new ManualTicker(-5 * MS);
    AdmissionController ctl = new AdmissionController(FixedLimit.of(1), 20, 20 * MS, 100 * MS);
    AdmissionTicket running = rec.ticket("r0");
    ctl.offer(running, 1, ORDINARY, clock.read());
    AdmissionTicket[] old = new AdmissionTicket[3];
    for (int i = 0; i < old.length; i++) {
      old[i] = rec.ticket("old" + i);
      ctl.offer(old[i], 2, ORDINARY, clock.read());
    }
    running = release(ctl, running, old, clock.advance(30 * MS));
    running = release(ctl, running, old, clock.advance(101 * MS)); // drops old1, admits old2
    assertThat(rec.events).contains("rejected old1 CODEL_DROP@" + clock.read());
    AdmissionTicket[] fresh = new AdmissionTicket[3];
    for (int i = 0; i < fresh.length; i++) {
      fresh[i] = rec.ticket("fresh" + i);
      ctl.offer(fresh[i], 2, ORDINARY, clock.read());
    }
    rec.events.clear();
    // 5ms later: sojourn below target ends the dropping state, even though a drop would be due.
    running = release(ctl, running, fresh, clock.advance(5 * MS));
    running = release(ctl, running, fresh, clock.advance(200 * MS));
    assertThat(rec.events)
        .containsExactly(
            "admitted fresh0@" + (clock.read() - 200 * MS), "admitted fresh1@" + clock.read());
  }

  private static AdmissionTicket release(
      AdmissionController ctl, AdmissionTicket running, AdmissionTicket[] pool, ManualTicker t) {
    running.permit().onSuccess(t.read());
    for (AdmissionTicket candidate : pool) {
      if (candidate.permit().isActive()) {
        return candidate;
      }
    }
    throw new AssertionError("nothing admitted at " + t.read() + ": " + ctl);
  }

  @Test
  void shedLowRefusesAndDropsClassesThreeAndFour() {
    AdmissionController ctl = controller(1, 10);
    ctl.offer(rec.ticket("holder"), 1, ORDINARY, 0);
    AdmissionTicket keep = rec.ticket("keep");
    ctl.offer(keep, 2, ORDINARY, 1);
    ctl.offer(rec.ticket("bot"), 3, ORDINARY, 2);
    ctl.offer(rec.ticket("refresh"), 1, STALE_REFRESH, 3);
    ctl.overloadLevel(OverloadLevel.SHED_LOW_PRIORITY, 10);
    assertThat(rec.events)
        .containsExactly("rejected refresh OVERLOAD@10", "rejected bot OVERLOAD@10");
    assertThat(ctl.queueDepth()).isEqualTo(1);
    AdmissionTicket low = rec.ticket("low");
    assertThat(ctl.offer(low, 3, ORDINARY, 11)).isEqualTo(Decision.REJECTED);
    assertThat(low.rejectReason()).isEqualTo(RejectReason.OVERLOAD);
    assertThat(ctl.offer(rec.ticket("critical"), 1, ORDINARY, 12)).isEqualTo(Decision.QUEUED);
    ctl.overloadLevel(OverloadLevel.NONE, 13);
    assertThat(ctl.offer(low, 3, ORDINARY, 14)).isEqualTo(Decision.QUEUED);
    assertThat(ctl.rejectedCount(RejectReason.OVERLOAD)).isEqualTo(3);
  }

  @Test
  void stopAcceptingRefusesEveryArrivalButDrainsImportantQueuedWork() {
    AdmissionController ctl = controller(1, 10);
    AdmissionTicket holder = rec.ticket("holder");
    ctl.offer(holder, 1, ORDINARY, 0);
    AdmissionTicket queued = rec.ticket("queued");
    ctl.offer(queued, 2, ORDINARY, 1);
    ctl.offer(rec.ticket("background"), 4, ORDINARY, 1);
    ctl.overloadLevel(OverloadLevel.STOP_ACCEPTING, 2);
    assertThat(ctl.overloadLevel()).isEqualTo(OverloadLevel.STOP_ACCEPTING);
    AdmissionTicket critical = rec.ticket("critical");
    assertThat(ctl.offer(critical, 1, ORDINARY, 3)).isEqualTo(Decision.REJECTED);
    assertThat(critical.rejectReason()).isEqualTo(RejectReason.OVERLOAD);
    holder.permit().onSuccess(4);
    assertThat(rec.events).containsExactly("rejected background OVERLOAD@2", "admitted queued@4");
  }

  @Test
  void cancelTakesAQueuedRequestOutSilently() {
    AdmissionController ctl = controller(1, 10);
    AdmissionTicket holder = rec.ticket("holder");
    ctl.offer(holder, 1, ORDINARY, 0);
    AdmissionTicket gone = rec.ticket("gone");
    ctl.offer(gone, 2, ORDINARY, 1);
    assertThat(ctl.cancel(gone)).isTrue();
    assertThat(ctl.cancel(gone)).isFalse();
    assertThat(ctl.queueDepth()).isZero();
    holder.permit().onSuccess(2);
    assertThat(rec.events).isEmpty();
    assertThat(ctl.inflight()).isZero();
    assertThat(ctl.offer(gone, 2, ORDINARY, 3)).as("reusable").isEqualTo(Decision.ADMITTED);
  }

  @Test
  void aListenerThatCompletesAtOnceLetsTheNextOneIn() {
    AdmissionController ctl = controller(1, 10);
    AdmissionListener instant =
        new AdmissionListener() {
          @Override
          public void onAdmitted(AdmissionTicket ticket, long nowNanos) {
            ticket.permit().onSuccess(nowNanos);
          }

          @Override
          public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {}
        };
    AdmissionTicket holder = rec.ticket("holder");
    ctl.offer(holder, 1, ORDINARY, 0);
    AdmissionTicket[] quick = {new AdmissionTicket(instant), new AdmissionTicket(instant)};
    ctl.offer(quick[0], 2, ORDINARY, 1);
    ctl.offer(quick[1], 2, ORDINARY, 1);
    holder.permit().onSuccess(2);
    assertThat(ctl.queueDepth()).isZero();
    assertThat(ctl.inflight()).isZero();
    assertThat(ctl.admittedFromQueueCount()).isEqualTo(2);
  }

  @Test
  void rejectsBadArguments() {
    AdmissionController ctl = controller(1, 10);
    AdmissionTicket t = rec.ticket("t");
    assertThatThrownBy(() -> ctl.offer(t, 0, ORDINARY, 0))
        .hasMessage("priority : 0 (expected: in [1, 4])");
    assertThatThrownBy(() -> ctl.offer(t, 5, ORDINARY, 0))
        .hasMessage("priority : 5 (expected: in [1, 4])");
    ctl.offer(t, 1, ORDINARY, 0);
    assertThatThrownBy(() -> ctl.offer(t, 1, ORDINARY, 0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("ticket : ")
        .hasMessageEndingWith("(expected: idle)");
    assertThatThrownBy(() -> new AdmissionController(FixedLimit.of(1), -1, 1, 1))
        .hasMessage("queueMax : -1 (expected: >= 0)");
    assertThatThrownBy(() -> new AdmissionController(FixedLimit.of(1), 1, 0, 1))
        .hasMessage("targetSojournNanos : 0 (expected: > 0)");
    assertThatThrownBy(() -> new AdmissionController(FixedLimit.of(1), 1, 1, 0))
        .hasMessage("intervalNanos : 0 (expected: > 0)");
  }

  @Test
  void defaultsFollowTheDesign() {
    AdmissionController ctl = AdmissionController.withDefaults();
    assertThat(ctl.limit()).isEqualTo(200);
    assertThat(ctl.overloadLevel()).isEqualTo(OverloadLevel.NONE);
    assertThat(AdmissionController.DEFAULT_QUEUE_MAX).isEqualTo(250);
    assertThat(AdmissionController.DEFAULT_TARGET_SOJOURN_NANOS).isEqualTo(20 * MS);
    assertThat(AdmissionController.DEFAULT_INTERVAL_NANOS).isEqualTo(100 * MS);
  }
}
