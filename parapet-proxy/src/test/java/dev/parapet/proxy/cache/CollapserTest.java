package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.proxy.cache.Collapser.Role;
import dev.parapet.proxy.cache.Collapser.Ticket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CollapserTest {

  /** Records what a waiter was told. */
  static final class Recorder implements Collapser.Waiter<String> {
    final List<String> events = new ArrayList<>();

    @Override
    public void onSuccess(String value) {
      events.add("ok:" + value);
    }

    @Override
    public void onFailure(Throwable cause) {
      events.add("fail:" + cause.getMessage());
    }

    @Override
    public void onNoValueBefore(long atNanos) {
      events.add("not-before:" + atNanos);
    }
  }

  @Test
  void aLeaderThatKnowsItsFetchEndsLaterTellsItsWaitersAndThoseWhoJoinLaterCanAsk() {
    Collapser<String, String> c = new Collapser<>(10);
    Ticket<String, String> leader = c.join("k", new Recorder());
    Recorder early = new Recorder();
    Ticket<String, String> earlyTicket = c.join("k", early);
    Collapser.Flight<String, String> f = leader.flight();
    assertThat(earlyTicket.endsNoSoonerThan(0)).as("nothing said yet").isFalse();

    f.noValueBefore(2_000);
    assertThat(early.events).containsExactly("not-before:2000");
    Recorder late = new Recorder();
    Ticket<String, String> lateTicket = c.join("k", late);
    assertThat(lateTicket.role()).isEqualTo(Role.WAITER);
    assertThat(late.events).as("told nothing when joining; it asks").isEmpty();
    assertThat(lateTicket.endsNoSoonerThan(1_999)).isTrue();
    assertThat(lateTicket.endsNoSoonerThan(2_000)).isTrue();
    assertThat(lateTicket.endsNoSoonerThan(2_001)).isFalse();

    f.complete("body");
    assertThat(late.events).containsExactly("ok:body");
    assertThat(lateTicket.endsNoSoonerThan(0)).as("an ended flight says nothing more").isFalse();
    f.noValueBefore(5_000);
    assertThat(early.events).containsExactly("not-before:2000", "ok:body");
  }

  @Test
  void concurrentMissesMakeOneFetchAndEveryWaiterGetsTheResponse() {
    Collapser<String, String> c = new Collapser<>(10);
    Recorder leaderSelf = new Recorder();
    Ticket<String, String> leader = c.join("k", leaderSelf);
    assertThat(leader.role()).isEqualTo(Role.LEADER);
    assertThat(c.inFlight("k")).isTrue();

    List<Recorder> waiters = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Recorder r = new Recorder();
      waiters.add(r);
      assertThat(c.join("k", r).role()).isEqualTo(Role.WAITER);
    }
    assertThat(leader.flight().waiterCount()).isEqualTo(5);
    assertThat(waiters).allSatisfy(r -> assertThat(r.events).isEmpty()); // nobody woken yet

    assertThat(leader.flight().complete("body")).isTrue();
    assertThat(waiters).allSatisfy(r -> assertThat(r.events).containsExactly("ok:body"));
    assertThat(leaderSelf.events).as("the leader handles its own response").isEmpty();
    assertThat(c.inFlight("k")).isFalse();
    assertThat(c.collapsedTotal()).isEqualTo(5);

    // the next miss starts a new flight
    assertThat(c.join("k", new Recorder()).role()).isEqualTo(Role.LEADER);
  }

  @Test
  void keysAreIndependent() {
    Collapser<String, String> c = new Collapser<>(10);
    assertThat(c.join("a", new Recorder()).role()).isEqualTo(Role.LEADER);
    assertThat(c.join("b", new Recorder()).role()).isEqualTo(Role.LEADER);
    assertThat(c.flightCount()).isEqualTo(2);
  }

  @Test
  void waitersAreBoundedAndTheOverflowGoesToTheOriginItself() {
    Collapser<String, String> c = new Collapser<>(2);
    Ticket<String, String> leader = c.join("k", new Recorder());
    Recorder w1 = new Recorder();
    Recorder w2 = new Recorder();
    Recorder over = new Recorder();
    assertThat(c.join("k", w1).role()).isEqualTo(Role.WAITER);
    assertThat(c.join("k", w2).role()).isEqualTo(Role.WAITER);
    Ticket<String, String> overflow = c.join("k", over);
    assertThat(overflow.role()).isEqualTo(Role.OVERFLOW);
    assertThat(c.overflowTotal()).isEqualTo(1);
    assertThatThrownBy(overflow::flight).hasMessage("ticket role : OVERFLOW (expected: LEADER)");

    leader.flight().complete("v");
    assertThat(over.events).as("an overflowed caller is never called back").isEmpty();
    assertThat(w1.events).containsExactly("ok:v");
  }

  @Test
  void aCancelledWaiterFreesItsSlotAndIsNotCalled() {
    Collapser<String, String> c = new Collapser<>(1);
    Ticket<String, String> leader = c.join("k", new Recorder());
    Recorder gone = new Recorder();
    Ticket<String, String> waiter = c.join("k", gone);
    assertThat(c.join("k", new Recorder()).role()).isEqualTo(Role.OVERFLOW);
    assertThat(waiter.cancel()).isTrue();
    Recorder next = new Recorder();
    assertThat(c.join("k", next).role()).isEqualTo(Role.WAITER);
    leader.flight().complete("v");
    assertThat(gone.events).isEmpty();
    assertThat(next.events).containsExactly("ok:v");
    assertThat(waiter.cancel()).as("too late: the flight ended").isFalse();
    assertThat(leader.cancel()).as("a leader cannot cancel; it must end the flight").isFalse();
  }

  @Test
  void aFailedFetchReleasesEveryWaiterWithTheFailure() {
    Collapser<String, String> c = new Collapser<>(10);
    Ticket<String, String> leader = c.join("k", new Recorder());
    Recorder w1 = new Recorder();
    Recorder w2 = new Recorder();
    c.join("k", w1);
    c.join("k", w2);
    assertThat(leader.flight().fail(new IllegalStateException("origin 503"))).isTrue();
    assertThat(w1.events).containsExactly("fail:origin 503");
    assertThat(w2.events).containsExactly("fail:origin 503");
    assertThat(c.inFlight("k")).isFalse();
  }

  @Test
  void endingTwiceIsANoOpCountedAsMisuse() {
    Collapser<String, String> c = new Collapser<>(10);
    Ticket<String, String> leader = c.join("k", new Recorder());
    Recorder w = new Recorder();
    c.join("k", w);
    assertThat(leader.flight().complete("a")).isTrue();
    assertThat(leader.flight().fail(new RuntimeException("late"))).isFalse();
    assertThat(leader.flight().complete("b")).isFalse();
    assertThat(w.events).containsExactly("ok:a");
    assertThat(c.misuseTotal()).isEqualTo(2);
  }

  @Test
  void aThrowingWaiterDoesNotStrandTheOthers() {
    Collapser<String, String> c = new Collapser<>(10);
    Ticket<String, String> leader = c.join("k", new Recorder());
    c.join(
        "k",
        new Collapser.Waiter<>() {
          @Override
          public void onSuccess(String value) {
            throw new IllegalStateException("boom");
          }

          @Override
          public void onFailure(Throwable cause) {}
        });
    Recorder after = new Recorder();
    c.join("k", after);
    assertThatThrownBy(() -> leader.flight().complete("v")).hasMessage("boom");
    assertThat(after.events).containsExactly("ok:v");
    assertThat(c.inFlight("k")).isFalse();
  }

  @Test
  void rejectsANonPositiveBound() {
    assertThatThrownBy(() -> new Collapser<String, String>(0))
        .hasMessage("maxWaitersPerKey : 0 (expected: >= 1)");
  }

  /**
   * Many threads miss the same key at once: exactly one fetches. The leader ends the flight only
   * after every thread has joined, so no thread can legitimately start a second flight.
   */
  @Test
  void manyThreadsExactlyOneFetch() throws Exception {
    int threads = 16;
    Collapser<String, String> c = new Collapser<>(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 50; round++) {
        String key = "k" + round;
        AtomicInteger fetches = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch joined = new CountDownLatch(threads);
        CountDownLatch answered = new CountDownLatch(threads - 1);
        ConcurrentLinkedQueue<String> got = new ConcurrentLinkedQueue<>();
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          futures.add(
              pool.submit(() -> {
                start.await();
                Ticket<String, String> ticket =
                    c.join(
                        key,
                        new Collapser.Waiter<>() {
                          @Override
                          public void onSuccess(String value) {
                            got.add(value);
                            answered.countDown();
                          }

                          @Override
                          public void onFailure(Throwable cause) {
                            got.add("failure");
                            answered.countDown();
                          }
                        });
                joined.countDown();
                if (ticket.role() == Role.LEADER) {
                  fetches.incrementAndGet();
                  joined.await();
                  ticket.flight().complete("response");
                }
                return null;
              }));
        }
        start.countDown();
        for (Future<?> f : futures) {
          f.get(20, TimeUnit.SECONDS);
        }
        assertThat(answered.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(fetches.get()).as("round %d", round).isEqualTo(1);
        assertThat(got).hasSize(threads - 1).containsOnly("response");
        assertThat(c.inFlight(key)).isFalse();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(c.misuseTotal()).isZero();
  }
}
