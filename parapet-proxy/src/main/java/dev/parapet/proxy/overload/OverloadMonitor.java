package dev.parapet.proxy.overload;

import dev.parapet.core.overload.EventLoopLagEstimator;
import dev.parapet.core.overload.HeapAfterGcSampler;
import dev.parapet.core.overload.OverloadConfig;
import dev.parapet.core.overload.OverloadLevel;
import dev.parapet.core.overload.OverloadPolicy;
import dev.parapet.core.overload.OverloadResource;
import dev.parapet.core.overload.ProcessCpuSampler;
import dev.parapet.core.time.Ticker;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The proxy's overload manager (DESIGN.md "Overload manager", seed 003): samples heap after GC,
 * process CPU and event-loop lag into the core {@link OverloadPolicy}, whose {@link OverloadLevel}
 * the request path reads with one volatile read ({@link #current()}).
 *
 * <pre>
 *  sampler thread, every samplePeriod:   heap() ─┐
 *                                        cpu()  ─┼─► OverloadPolicy.onReading ─► level (volatile)
 *  each event loop, every lagPeriod:     lag    ─┘      (up at once, down after cooldown)
 * </pre>
 *
 * <p>The JVM readers run on a thread of their own (MXBean calls allocate and may take locks), never
 * on an event loop. Event-loop lag is measured by a task each loop reschedules for itself: how late
 * it runs is how long queued work waits on that loop ({@link EventLoopLagEstimator}); the policy is
 * fed the worst loop. Lag uses {@link System#nanoTime()} because it measures Netty's own
 * scheduling, which runs on that clock; the policy's cooldown uses the injected {@link Ticker}. The
 * samplers are injected, so tests force any level with a sampler that returns a chosen value.
 */
public final class OverloadMonitor implements AutoCloseable {
  /** How often heap and CPU are read, by default. */
  public static final Duration DEFAULT_SAMPLE_PERIOD = Duration.ofMillis(500);

  /** How often each event loop's lag probe runs, by default. */
  public static final Duration DEFAULT_LAG_PERIOD = Duration.ofMillis(100);

  private final OverloadPolicy policy;
  private final DoubleSupplier heap;
  private final DoubleSupplier cpu;
  private final Ticker ticker;
  private final long samplePeriodNanos;
  private final long lagPeriodNanos;
  private final List<EventLoopLagEstimator> lags = new ArrayList<>();
  private volatile boolean running;
  private @Nullable ScheduledExecutorService sampler;

  /**
   * @param config thresholds per resource and level, with hysteresis
   * @param heap heap after GC / max heap in {@code [0, 1]}, NaN when unknown
   * @param cpu process CPU load in {@code [0, 1]}, NaN when unknown
   * @param ticker monotonic time for the policy's cooldown
   */
  public OverloadMonitor(
      OverloadConfig config,
      DoubleSupplier heap,
      DoubleSupplier cpu,
      Ticker ticker,
      Duration samplePeriod,
      Duration lagPeriod) {
    this.policy = new OverloadPolicy(config);
    this.heap = heap;
    this.cpu = cpu;
    this.ticker = ticker;
    this.samplePeriodNanos = positive("sample_period", samplePeriod);
    this.lagPeriodNanos = positive("lag_period", lagPeriod);
  }

  /** Reads this JVM ({@link HeapAfterGcSampler}, {@link ProcessCpuSampler}) at the defaults. */
  public static OverloadMonitor ofJvm(OverloadConfig config, Ticker ticker) {
    HeapAfterGcSampler heap = new HeapAfterGcSampler();
    ProcessCpuSampler cpu = new ProcessCpuSampler();
    return new OverloadMonitor(
        config, heap::sample, cpu::sample, ticker, DEFAULT_SAMPLE_PERIOD, DEFAULT_LAG_PERIOD);
  }

  /** No thresholds: the level stays {@link OverloadLevel#NONE} (tests, embedded servers). */
  public static OverloadMonitor disabled() {
    return new OverloadMonitor(
        OverloadConfig.none(),
        () -> Double.NaN,
        () -> Double.NaN,
        Ticker.system(),
        DEFAULT_SAMPLE_PERIOD,
        DEFAULT_LAG_PERIOD);
  }

  /**
   * The core thresholds from the YAML {@code overload:} block: heap {@code shed_low} and {@code
   * stop_accepting}, CPU {@code shed_low}, event loop lag {@code shed_low} and {@code
   * stop_accepting} (in nanoseconds, as the lag reading).
   */
  public static OverloadConfig thresholds(dev.parapet.proxy.config.OverloadConfig c) {
    return OverloadConfig.none()
        .with(OverloadResource.HEAP, OverloadLevel.SHED_LOW_PRIORITY, c.heap().shedLow())
        .with(OverloadResource.HEAP, OverloadLevel.STOP_ACCEPTING, c.heap().stopAccepting())
        .with(OverloadResource.CPU, OverloadLevel.SHED_LOW_PRIORITY, c.cpu().shedLow())
        .withLag(OverloadLevel.SHED_LOW_PRIORITY, c.eventLoopLag().shedLow())
        .withLag(OverloadLevel.STOP_ACCEPTING, c.eventLoopLag().stopAccepting());
  }

  /**
   * Process CPU is bursty (JIT compilation right after start-up, a GC cycle): shedding on one
   * sample would turn priority 3-4 traffic away while a freshly started proxy warms up. The policy
   * sees an exponentially weighted average instead (weight {@link #CPU_SMOOTHING} per sample,
   * starting from idle: at the default 500 ms period a reading must stay high for several seconds
   * to count). Heap after GC is already a settled value and is not smoothed.
   */
  private synchronized double smoothCpu(double reading) {
    if (Double.isNaN(reading)) {
      return cpuAverage;
    }
    double prev = Double.isNaN(cpuAverage) ? 0.0 : cpuAverage;
    cpuAverage = prev + CPU_SMOOTHING * (reading - prev);
    return cpuAverage;
  }

  /** Weight of each new CPU sample in the average the policy sees. */
  static final double CPU_SMOOTHING = 0.1;

  private double cpuAverage = Double.NaN;

  private static long positive(String name, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " : " + d + " (expected: > 0)");
    }
    return d.toNanos();
  }

  // ---- the request path

  /** The current level: one volatile read. */
  public OverloadLevel current() {
    return policy.level();
  }

  /**
   * True at {@link OverloadLevel#STOP_ACCEPTING}: readyz 503, responses carry Connection: close.
   */
  public boolean stopAccepting() {
    return policy.level().stopsAccepting();
  }

  // ---- sampling

  /**
   * Starts the lag probes on every loop of {@code loops} and the sampling thread. Call once, after
   * the loops exist; {@link #close()} stops both.
   */
  public synchronized void start(EventLoopGroup loops) {
    if (running) {
      return;
    }
    running = true;
    for (EventExecutor loop : loops) {
      EventLoopLagEstimator lag = new EventLoopLagEstimator();
      lags.add(lag);
      long due = System.nanoTime() + lagPeriodNanos;
      loop.schedule(() -> probe(loop, lag, due), lagPeriodNanos, TimeUnit.NANOSECONDS);
    }
    ScheduledExecutorService s =
        Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "parapet-overload");
          t.setDaemon(true);
          return t;
        });
    s.scheduleWithFixedDelay(
        this::sampleNow, samplePeriodNanos, samplePeriodNanos, TimeUnit.NANOSECONDS);
    sampler = s;
  }

  private void probe(EventExecutor loop, EventLoopLagEstimator lag, long dueNanos) {
    if (!running) {
      return;
    }
    long ran = System.nanoTime();
    lag.record(dueNanos, ran);
    long next = ran + lagPeriodNanos;
    try {
      loop.schedule(() -> probe(loop, lag, next), lagPeriodNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The loop is shutting down: the probe ends with it.
    }
  }

  /**
   * Reads every resource once and feeds the policy; returns the level. The sampling thread calls
   * it; tests call it to apply a forced reading at once.
   */
  public OverloadLevel sampleNow() {
    long now = ticker.read();
    policy.onReading(OverloadResource.HEAP, heap.getAsDouble(), now);
    policy.onReading(OverloadResource.CPU, smoothCpu(cpu.getAsDouble()), now);
    return policy.onReading(OverloadResource.EVENT_LOOP_LAG, (double) lagNanos(), now);
  }

  /** The worst smoothed lag over the event loops (0 before the first probe). */
  public synchronized long lagNanos() {
    long worst = 0;
    for (EventLoopLagEstimator l : lags) {
      worst = Math.max(worst, l.lagNanos());
    }
    return worst;
  }

  /** The latest reading of {@code resource} (NaN when none yet). */
  public double reading(OverloadResource resource) {
    return policy.reading(resource);
  }

  @Override
  public synchronized void close() {
    running = false;
    ScheduledExecutorService s = sampler;
    if (s != null) {
      s.shutdownNow();
      sampler = null;
    }
  }
}
