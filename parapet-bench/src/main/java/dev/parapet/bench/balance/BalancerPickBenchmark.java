package dev.parapet.bench.balance;

import dev.parapet.core.balance.Host;
import dev.parapet.core.balance.HostHealth;
import dev.parapet.core.balance.HostSet;
import dev.parapet.core.balance.IpHashBalancer;
import dev.parapet.core.balance.LeastRequestBalancer;
import dev.parapet.core.balance.LoadBalancer;
import dev.parapet.core.balance.RingHashBalancer;
import dev.parapet.core.balance.RoundRobinBalancer;
import dev.parapet.core.balance.SlowStart;
import dev.parapet.core.time.RandomSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One {@code pick} over 100 hosts (weights 1..4) for each balancer, with no host ejected and with
 * 10 of them ejected, and with one host in slow start or none. Target: <= 50 ns and 0 B/op ({@code
 * -prof gc}). Keys vary per call so the hashing balancers do a real lookup.
 *
 * <pre>
 * java -jar parapet-bench/target/benchmarks.jar 'dev.parapet.bench.balance.BalancerPickBenchmark' -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class BalancerPickBenchmark {

  @Param({"round_robin", "least_request", "ring_hash", "ip_hash"})
  public String balancer;

  @Param({"0", "10"})
  public int ejected;

  /** Whether one host is in its slow-start window (round robin then runs nginx's O(n) loop). */
  @Param({"false", "true"})
  public boolean slowStarting;

  private LoadBalancer lb;
  private long key;

  @Setup(Level.Trial)
  public void setUp() {
    List<Host> hosts = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      hosts.add(new Host("10.0." + (i / 250) + "." + (i % 250) + ":8080", 1 + (i % 4)));
    }
    boolean[] out = new boolean[100];
    for (int i = 0; i < ejected; i++) {
      out[i * 7 % 100] = true;
    }
    HostHealth health =
        new HostHealth() {
          @Override
          public boolean isEjected(int host) {
            return out[host];
          }

          @Override
          public boolean hasReturned(int host) {
            return slowStarting && host == 99;
          }

          @Override
          public long returnedAtNanos(int host) {
            return 0L;
          }

          @Override
          public long generation() {
            return 0L;
          }
        };
    HostSet set = HostSet.of(hosts, health);
    SlowStart slowStart = SlowStart.of(Duration.ofSeconds(30));
    lb =
        switch (balancer) {
          case "round_robin" -> new RoundRobinBalancer(set, slowStart);
          case "least_request" ->
              new LeastRequestBalancer(set, slowStart, RandomSource.threadLocal());
          case "ring_hash" -> new RingHashBalancer(set, slowStart);
          case "ip_hash" -> new IpHashBalancer(set, slowStart);
          default -> throw new IllegalArgumentException("balancer : " + balancer);
        };
  }

  @Benchmark
  public Host pick() {
    return lb.pick(1_000L, key += 0x9e3779b97f4a7c15L);
  }
}
