package dev.parapet.core.admission;

import static dev.parapet.core.admission.RequestKind.ORDINARY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.limit.FixedLimit;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Guaranteed shares of the limit by partition (route bulkheads). */
class AdmissionPartitionsTest {
  private static final long MS = 1_000_000L;
  private static final long NO_CODEL = Long.MAX_VALUE / 4;

  private final Recorder rec = new Recorder();

  private static AdmissionController controller(int limit, int queueMax, Partitions p) {
    AdmissionController c =
        new AdmissionController(FixedLimit.of(limit), queueMax, NO_CODEL, 100 * MS);
    c.partitions(p);
    return c;
  }

  private Decision offer(AdmissionController c, String name, int partition) {
    return c.offer(rec.ticket(name).partition(partition), 2, ORDINARY, 0);
  }

  @Test
  void aBorrowerIsCutBackWhileItsQuietSiblingGetsItsShareAtOnce() {
    Partitions p = Partitions.equal(2);
    AdmissionController c = controller(10, 10, p);
    List<AdmissionTicket> slow = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      AdmissionTicket t = rec.ticket("slow" + i).partition(0);
      assertThat(c.offer(t, 2, ORDINARY, 0)).isEqualTo(Decision.ADMITTED); // idle: borrowed
      slow.add(t);
    }
    // The limit is reached by the slow route; its next request waits.
    assertThat(offer(c, "slow10", 0)).isEqualTo(Decision.QUEUED);
    // The healthy route still gets its five at once, beyond the limit.
    for (int i = 0; i < 5; i++) {
      assertThat(offer(c, "fast" + i, 1)).isEqualTo(Decision.ADMITTED);
    }
    assertThat(p.inflight(1)).isEqualTo(5);
    assertThat(c.inflight()).isEqualTo(15);
    // Beyond its share it waits like anyone.
    assertThat(offer(c, "fast5", 1)).isEqualTo(Decision.QUEUED);
    // Slow requests ending give slots back; the queue is served once below the limit.
    for (int i = 0; i < 6; i++) {
      c.complete(slow.get(i), false, 1);
    }
    // 9 in flight: the oldest waiter, slow10, takes the tenth slot; fast5 waits for the next.
    assertThat(rec.events).containsExactly("admitted slow10@1");
    assertThat(p.inflight(0)).isEqualTo(5);
    assertThat(c.inflight()).isEqualTo(10);
  }

  @Test
  void withoutAPartitionNothingChanges() {
    AdmissionController c = controller(2, 0, Partitions.equal(2));
    assertThat(offer(c, "a", -1)).isEqualTo(Decision.ADMITTED);
    assertThat(offer(c, "b", -1)).isEqualTo(Decision.ADMITTED);
    assertThat(offer(c, "c", -1)).isEqualTo(Decision.REJECTED);
  }

  @Test
  void sharesAreCheckedAndSplitEqually() {
    assertThat(Partitions.equal(4).share(3)).isEqualTo(0.25);
    Partitions mixed = Partitions.withDefaults(new double[] {0.5, Double.NaN, Double.NaN});
    assertThat(mixed.share(0)).isEqualTo(0.5);
    assertThat(mixed.share(1)).isEqualTo(0.25);
    assertThat(mixed.share(2)).isEqualTo(0.25);
    assertThat(Partitions.withDefaults(new double[] {1.0, Double.NaN}).share(1)).isZero();
    assertThatThrownBy(() -> new Partitions(new double[] {0.7, 0.7}))
        .hasMessageContaining("expected: a sum <= 1");
    assertThatThrownBy(() -> new Partitions(new double[] {-0.1}))
        .hasMessageContaining("expected: in [0, 1]");
  }

  /**
   * Seeded random arrivals and completions over three partitions: a partition below its share is
   * never made to wait or refused, in-flight counts match what was admitted, and the limit is
   * exceeded by at most the guarantees.
   */
  @Test
  void underItsShareAPartitionIsNeverQueuedOrRefused() {
    for (long seed = 1; seed <= 20; seed++) {
      SplittableRandom random = new SplittableRandom(seed);
      Partitions p = new Partitions(new double[] {0.5, 0.3, 0.2});
      int limit = 10;
      AdmissionController c = controller(limit, 5, p);
      List<AdmissionTicket> admitted = new ArrayList<>();
      List<AdmissionTicket> queued = new ArrayList<>();
      for (int step = 0; step < 2_000; step++) {
        if (random.nextInt(3) > 0 || admitted.isEmpty()) {
          int part = random.nextInt(3);
          boolean under = p.inflight(part) < Math.ceil(p.share(part) * limit);
          AdmissionTicket t = rec.ticket("t").partition(part);
          Decision d = c.offer(t, 1 + random.nextInt(4), ORDINARY, step);
          if (under) {
            assertThat(d).as("seed %d step %d", seed, step).isEqualTo(Decision.ADMITTED);
          }
          if (d == Decision.ADMITTED) {
            admitted.add(t);
          } else if (d == Decision.QUEUED) {
            queued.add(t);
          }
        } else {
          AdmissionTicket t = admitted.remove(random.nextInt(admitted.size()));
          c.complete(t, random.nextBoolean(), step);
        }
        for (AdmissionTicket t : List.copyOf(queued)) {
          if (t.permit().isActive()) {
            queued.remove(t);
            admitted.add(t);
          } else if (!t.isQueued()) {
            queued.remove(t); // shed from the queue
          }
        }
        int[] count = new int[3];
        for (AdmissionTicket t : admitted) {
          count[t.partition]++;
        }
        for (int i = 0; i < 3; i++) {
          assertThat(p.inflight(i)).as("seed %d step %d", seed, step).isEqualTo(count[i]);
        }
        assertThat(c.inflight()).isEqualTo(admitted.size()).isLessThanOrEqualTo(limit + 10);
      }
    }
  }
}
