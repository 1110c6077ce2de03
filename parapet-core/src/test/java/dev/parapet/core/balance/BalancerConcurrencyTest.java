package dev.parapet.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.RandomSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pickers race with snapshot swaps and health changes: every pick returns a host of some snapshot,
 * and while one host always stays available, never null. Invariants only, no timing.
 */
class BalancerConcurrencyTest {

  static Stream<Function<HostSet, LoadBalancer>> balancers() {
    return Stream.of(
        h -> new RoundRobinBalancer(h, SlowStart.NONE),
        h -> new LeastRequestBalancer(h, SlowStart.NONE, RandomSource.seeded(1)),
        h -> new RingHashBalancer(h, SlowStart.NONE),
        h -> new IpHashBalancer(h, SlowStart.NONE));
  }

  @ParameterizedTest
  @MethodSource("balancers")
  void picksStayWithinSnapshotsWhileTheyAreSwapped(Function<HostSet, LoadBalancer> factory)
      throws Exception {
    List<Host> a = TestHealth.equalHosts(8);
    List<Host> b = new ArrayList<>(a.subList(0, 5));
    b.add(new Host("10.1.1.1:80", 3));
    Set<Host> known = new HashSet<>(a);
    known.addAll(b);
    TestHealth healthA = new TestHealth(a.size());
    TestHealth healthB = new TestHealth(b.size());
    LoadBalancer lb = factory.apply(HostSet.of(a, healthA));
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      threads.add(
          new Thread(() -> {
            await(go);
            for (int i = 0; i < 20_000; i++) {
              Host h = lb.pick(i, i * 0x9e3779b97f4a7c15L);
              if (h == null || !known.contains(h)) {
                problems.add("pick " + i + " gave " + h);
                return;
              }
            }
          }));
    }
    threads.add(
        new Thread(() -> {
          await(go);
          for (int i = 0; i < 300; i++) {
            // Host 0 of each snapshot never leaves, so a pick always has a candidate.
            int victim = 1 + (i % 4);
            healthA.ejected[victim] = !healthA.ejected[victim];
            healthA.generation++;
            healthB.ejected[victim] = !healthB.ejected[victim];
            healthB.generation++;
            lb.update(i % 2 == 0 ? HostSet.of(b, healthB) : HostSet.of(a, healthA));
          }
        }));
    threads.forEach(Thread::start);
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    assertThat(problems).isEmpty();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
