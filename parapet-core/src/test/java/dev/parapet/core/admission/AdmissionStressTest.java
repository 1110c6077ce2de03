package dev.parapet.core.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.limit.FixedLimit;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Threads offer and complete concurrently; queued requests are admitted on whichever thread frees a
 * slot. Invariants only: the limit holds, every queued request hears exactly once, and nothing is
 * left waiting once all work completes (no lost wake-up between "queue" and "slot freed").
 */
class AdmissionStressTest {
  private static final int THREADS = 4;
  private static final int ITERATIONS = 50_000;
  private static final int TICKETS_PER_THREAD = 8;
  private static final int LIMIT = 3;

  @Test
  void limitHoldsAndEveryQueuedRequestHearsOnce() throws Exception {
    AdmissionController ctl =
        new AdmissionController(FixedLimit.of(LIMIT), 6, Long.MAX_VALUE / 4, 1_000_000L);
    int total = THREADS * TICKETS_PER_THREAD;
    AtomicIntegerArray heard = new AtomicIntegerArray(total);
    AtomicIntegerArray queuedOffers = new AtomicIntegerArray(total);
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger highWater = new AtomicInteger();
    ConcurrentLinkedQueue<AdmissionTicket> admittedLater = new ConcurrentLinkedQueue<>();
    AdmissionTicket[] tickets = new AdmissionTicket[total];
    AdmissionListener listener =
        new AdmissionListener() {
          @Override
          public void onAdmitted(AdmissionTicket ticket, long nowNanos) {
            heard.incrementAndGet(indexOf(tickets, ticket));
            highWater.accumulateAndGet(holders.incrementAndGet(), Math::max);
            admittedLater.add(ticket);
          }

          @Override
          public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {
            heard.incrementAndGet(indexOf(tickets, ticket));
          }
        };
    for (int i = 0; i < total; i++) {
      tickets[i] = new AdmissionTicket(listener);
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong clock = new AtomicLong();
    CyclicBarrier start = new CyclicBarrier(THREADS);
    Thread[] threads = new Thread[THREADS];
    for (int t = 0; t < THREADS; t++) {
      int first = t * TICKETS_PER_THREAD;
      long seed = 7L * t + 1;
      threads[t] =
          new Thread(() -> {
            SplittableRandom random = new SplittableRandom(seed);
            try {
              start.await();
              for (int i = 0; i < ITERATIONS; i++) {
                long now = clock.incrementAndGet();
                AdmissionTicket done = random.nextInt(3) == 0 ? admittedLater.poll() : null;
                if (done != null) {
                  holders.decrementAndGet();
                  done.permit().onSuccess(now);
                  continue;
                }
                int index = first + random.nextInt(TICKETS_PER_THREAD);
                AdmissionTicket ticket = tickets[index];
                if (ticket.isQueued() || ticket.permit().isActive()) {
                  continue;
                }
                Decision d = ctl.offer(ticket, 1 + random.nextInt(4), RequestKind.ORDINARY, now);
                if (d == Decision.ADMITTED) {
                  highWater.accumulateAndGet(holders.incrementAndGet(), Math::max);
                  admittedLater.add(ticket);
                } else if (d == Decision.QUEUED) {
                  queuedOffers.incrementAndGet(index);
                }
              }
            } catch (Throwable e) {
              failure.set(e);
            }
          });
      threads[t].start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(failure.get()).isNull();
    for (AdmissionTicket done; (done = admittedLater.poll()) != null; ) {
      holders.decrementAndGet();
      done.permit().onSuccess(clock.incrementAndGet());
    }
    assertThat(highWater.get()).isLessThanOrEqualTo(LIMIT);
    assertThat(ctl.queueDepth()).as("nothing left waiting").isZero();
    assertThat(ctl.inflight()).isZero();
    assertThat(ctl.admittedFromQueueCount()).as("the queue was exercised").isPositive();
    for (int i = 0; i < total; i++) {
      assertThat(heard.get(i)).as("ticket " + i).isEqualTo(queuedOffers.get(i));
    }
  }

  private static int indexOf(AdmissionTicket[] tickets, AdmissionTicket ticket) {
    for (int i = 0; i < tickets.length; i++) {
      if (tickets[i] == ticket) {
        return i;
      }
    }
    throw new AssertionError("unknown ticket");
  }
}
