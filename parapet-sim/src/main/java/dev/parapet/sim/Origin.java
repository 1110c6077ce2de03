package dev.parapet.sim;

import dev.parapet.core.outcome.Outcome;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The origin under test: a queue in front of {@code c} workers, answering attempts from the current
 * phase of the scenario's fault timeline.
 *
 * <p>How it works. With limited workers the origin is a first-come-first-served c-server queue with
 * a bounded accept queue (Kendall's G/G/c/c+K). Its state is the time at which each worker next
 * falls free, kept in a binary min-heap: an attempt that arrives at {@code now} starts at {@code
 * max(now, earliest free time)} on that worker, which is then busy until the start plus the
 * attempt's service time (the Kiefer–Wolfowitz recursion for FCFS c servers). Every attempt's start
 * and end are therefore known when it arrives, so the origin needs no event of its own: the
 * attempt's one end event stays the only event, as with unlimited workers. Waiting attempts are
 * tracked by the time they leave the queue, in a second heap, to enforce the queue bound; one that
 * arrives to a full queue is refused at once (a connect failure at the edge).
 *
 * <p>What the client sees: the answer at the service's end when that comes before the attempt's
 * timeout, else a timeout at the timeout. What the origin does with work its client gave up on is
 * the scenario's choice ({@code abandoned}). {@code serve}: the origin cannot tell, and serves
 * everything it accepted, in order — under sustained overload the queue fills with work nobody
 * waits for and goodput collapses (the overload collapse of the seeds' retry storm). {@code drop}:
 * the origin knows each attempt's deadline (a propagated deadline) and does not start work that its
 * mean service time says would end after it, so almost every worker-second goes to an answer a
 * client receives and goodput stays near capacity (work longer than the mean can still overrun).
 * Since a client's patience (its timeout) is known when the attempt arrives, whether it will be
 * dropped is known then too, which keeps the recursion exact. Attempts the edge cancels early (a
 * hedge that lost) are still served. Hung attempts ({@code hang_rate}) hold their worker until the
 * client gives up. A {@code down} phase refuses connections within 1 ms and does not touch the
 * workers.
 *
 * <p>With unlimited workers every attempt is served at once: its latency is its service time.
 *
 * <p>Service times: log-normal around the phase's median with its {@code sigma}, picked from a
 * per-phase table of 16,384 seeded values (median × e^(σ·z)) — one draw and a load per attempt
 * instead of a Gaussian and an {@code exp()}; exponential by inversion, −mean·ln(1 − u), exact (the
 * M/M/c validation depends on it); or fixed.
 *
 * <p>Accounting (per second, for the report): attempts accepted, refused and dropped; worker time
 * busy and wasted (service whose answer no client received), attributed to the seconds it spans;
 * time in the origin by arrival second; and the number of attempts in the origin sampled at every
 * tick, so that Little's law (L = λW) can be checked on every run with L measured independently of
 * W.
 */
final class Origin {
  private static final long SECOND = 1_000_000_000L;
  private static final long CONNECT_REFUSED_NANOS = 1_000_000L;
  private static final int SAMPLES = 16384;

  private final List<OriginPhase> timeline;
  private final SimRandom random;
  private final long[] phaseEnds;
  private final double[][] latencyNanos;
  private final int workers;
  private final int queueBound;
  private final boolean serveAbandoned;
  // Min-heap of the workers' next free times (all 0 at first); min-heap of queued attempts' leave
  // times (used only with a bounded queue).
  private final long[] freeAt;
  private long[] leaving = new long[256];
  private int queued;
  private int phase;
  private OriginPhase current;
  private double @Nullable [] currentLatencies;
  private long currentMeanNanos;

  // Per-second accounting, by second of the run.
  private final int seconds;
  private final long[] accepted;
  private final long[] refused;
  private final long[] dropped;
  private final long[] busyNanos;
  private final long[] wastedNanos;
  private final long[] sojournNanos;
  private final long[] inSamples;
  // Attempts in the origin, for the samples: arrivals and departures counted by the half-tick they
  // fall in (an event at t is in bucket ceil(t / half)). Samples are taken half a tick before each
  // tick: arrivals come in batches at tick times, so a sample at the tick itself would see each
  // attempt half a tick less than it stays, on average.
  private final long halfTick;
  private final int[] arrivalsByHalfTick;
  private final int[] departuresByHalfTick;
  private int lastSampledHalfTick = -1;
  private long inOrigin;

  // Run totals.
  private long totalAccepted;
  private long totalWaitNanos;
  private long totalBusyNanos;
  private long totalSojournNanos;

  // The last attempt's wait, for tests that drive the origin directly.
  private long lastWaitNanos;

  /**
   * @param seconds the run's length in whole seconds (the accounting's extent)
   * @param tickNanos the interval at which {@link #sample} is called
   */
  Origin(
      List<OriginPhase> timeline,
      OriginCapacity capacity,
      long seed,
      SimRandom random,
      int seconds,
      long tickNanos) {
    this.timeline = List.copyOf(timeline);
    this.random = random;
    this.phaseEnds = new long[timeline.size()];
    double start = 0;
    for (int i = 0; i < phaseEnds.length; i++) {
      start += timeline.get(i).seconds();
      phaseEnds[i] = (long) (start * SECOND);
    }
    this.latencyNanos = new double[timeline.size()][];
    boolean anyLogNormal = false;
    for (OriginPhase p : timeline) {
      anyLogNormal |= p.distribution() == OriginPhase.Distribution.LOGNORMAL;
    }
    if (anyLogNormal) {
      // A stream of its own, so the table does not shift the run's draws.
      Engine tableSource = new Engine(seed ^ 0x632be59bd9b4e019L);
      double[] z = new double[SAMPLES];
      for (int i = 0; i < SAMPLES; i++) {
        z[i] = tableSource.nextGaussian();
      }
      for (int i = 0; i < latencyNanos.length; i++) {
        OriginPhase p = timeline.get(i);
        if (p.distribution() == OriginPhase.Distribution.LOGNORMAL) {
          double[] table = new double[SAMPLES];
          for (int k = 0; k < SAMPLES; k++) {
            table[k] = p.medianMillis() * 1_000_000.0 * Math.exp(p.sigma() * z[k]);
          }
          latencyNanos[i] = table;
        }
      }
    }
    this.workers = capacity.workers();
    this.queueBound = capacity.queue();
    this.serveAbandoned = capacity.serveAbandoned();
    this.freeAt = new long[workers];
    this.current = timeline.get(0);
    this.currentLatencies = latencyNanos[0];
    this.currentMeanNanos = (long) (current.meanMillis() * 1_000_000.0);
    this.seconds = seconds;
    this.accepted = new long[seconds];
    this.refused = new long[seconds];
    this.dropped = new long[seconds];
    this.busyNanos = new long[seconds];
    this.wastedNanos = new long[seconds];
    this.sojournNanos = new long[seconds];
    this.inSamples = new long[seconds];
    this.halfTick = tickNanos / 2;
    int halfTicks = (int) (seconds * SECOND / halfTick) + 4;
    this.arrivalsByHalfTick = new int[halfTicks];
    this.departuresByHalfTick = new int[halfTicks];
  }

  /** Moves to the phase that holds {@code now}. */
  void advance(long now) {
    while (phase < phaseEnds.length - 1 && now - phaseEnds[phase] >= 0) {
      phase++;
      current = timeline.get(phase);
      currentLatencies = latencyNanos[phase];
      currentMeanNanos = (long) (current.meanMillis() * 1_000_000.0);
    }
  }

  /**
   * Draws the answer to {@code a}, started at {@code now} with its timeout: sets its status or
   * failure and returns how long it holds the connection.
   */
  long draw(SimAttempt a, long now) {
    long hold = serve(now, a.timeoutNanos());
    a.failure = lastFailure;
    a.status = lastStatus;
    return hold;
  }

  private @Nullable Outcome lastFailure;
  private int lastStatus;

  /**
   * One attempt arriving at {@code now} whose client waits at most {@code timeoutNanos}: returns
   * how long until the client has its answer or gives up; {@link #lastFailure} and {@link
   * #lastStatus} say which.
   */
  long serve(long now, long timeoutNanos) {
    OriginPhase p = current;
    lastFailure = null;
    lastStatus = 0;
    lastWaitNanos = 0;
    if (p.down()) {
      lastFailure = Outcome.CONNECT_FAILURE;
      return CONNECT_REFUSED_NANOS;
    }
    long deadline = now + timeoutNanos;
    boolean hang = p.hangRate() > 0 && random.nextDouble() < p.hangRate();
    long service = hang ? 0 : serviceNanos(p);
    long start = now;
    long end;
    if (workers == 0) {
      end = hang ? deadline : now + service;
      busy(now, end, hang || end - deadline > 0);
    } else {
      long free = freeAt[0];
      if (free - now > 0) {
        if (queueBound != OriginCapacity.UNBOUNDED) {
          while (queued > 0 && leaving[0] - now <= 0) {
            pollLeaving();
          }
          if (queued >= queueBound) {
            count(refused, now);
            lastFailure = Outcome.CONNECT_FAILURE;
            return CONNECT_REFUSED_NANOS;
          }
        }
        start = free;
      }
      if (!serveAbandoned && start + currentMeanNanos - deadline > 0) {
        // The origin knows the client's deadline and does not start work it expects (from its
        // mean service time) to end after it: the attempt leaves the queue unserved when it
        // reaches the front or when its client leaves, whichever comes first.
        long leaves = Math.min(start, deadline);
        if (queueBound != OriginCapacity.UNBOUNDED && leaves != now) {
          addLeaving(leaves);
        }
        count(dropped, now);
        admitted(now, leaves);
        lastWaitNanos = timeoutNanos;
        lastFailure = Outcome.TIMEOUT;
        return timeoutNanos;
      }
      if (start != now && queueBound != OriginCapacity.UNBOUNDED) {
        addLeaving(start);
      }
      end = hang ? Math.max(start, deadline) : start + service;
      replaceEarliestFree(end);
      busy(start, end, hang || end - deadline > 0);
    }
    admitted(now, end);
    lastWaitNanos = start - now;
    totalWaitNanos += start - now;
    if (hang || end - deadline > 0) {
      lastFailure = Outcome.TIMEOUT;
      return timeoutNanos;
    }
    lastStatus = p.errorRate() > 0 && random.nextDouble() < p.errorRate() ? 503 : 200;
    return Math.max(1L, end - now);
  }

  private long serviceNanos(OriginPhase p) {
    double[] table = currentLatencies;
    if (table != null) {
      return Math.max(1L, (long) table[random.nextInt(SAMPLES)]);
    }
    double mean = p.medianMillis() * 1_000_000.0;
    return switch (p.distribution()) {
      case EXPONENTIAL -> Math.max(1L, (long) (-mean * Math.log(1.0 - random.nextDouble())));
      case FIXED, LOGNORMAL -> Math.max(1L, (long) mean);
    };
  }

  /** An attempt entered the origin at {@code now} and leaves it at {@code departure}. */
  private void admitted(long now, long departure) {
    totalAccepted++;
    totalSojournNanos += departure - now;
    int sec = (int) (now / SECOND);
    if (sec < seconds) {
      accepted[sec]++;
      sojournNanos[sec] += departure - now;
    }
    int last = arrivalsByHalfTick.length - 1;
    arrivalsByHalfTick[(int) Math.min(last, (now + halfTick - 1) / halfTick)]++;
    departuresByHalfTick[(int) Math.min(last, (departure + halfTick - 1) / halfTick)]++;
  }

  /** A worker is busy over [start, end); all of it wasted when its answer reaches no client. */
  private void busy(long start, long end, boolean wasted) {
    totalBusyNanos += end - start;
    long from = start;
    while (from < end) {
      int sec = (int) (from / SECOND);
      if (sec >= seconds) {
        break;
      }
      long to = Math.min(end, (sec + 1L) * SECOND);
      busyNanos[sec] += to - from;
      if (wasted) {
        wastedNanos[sec] += to - from;
      }
      from = to;
    }
  }

  private void count(long[] perSecond, long now) {
    int sec = (int) (now / SECOND);
    if (sec < seconds) {
      perSecond[sec]++;
    }
  }

  /**
   * At tick time {@code now}, samples the number of attempts in the origin (queued or in service)
   * half a tick earlier. Every arrival up to then has happened, and every departure is known.
   */
  void sample(long now) {
    int at = (int) Math.min(arrivalsByHalfTick.length - 1, now / halfTick - 1);
    if (at < 0) {
      return;
    }
    for (int b = lastSampledHalfTick + 1; b <= at; b++) {
      inOrigin += arrivalsByHalfTick[b] - departuresByHalfTick[b];
    }
    lastSampledHalfTick = at;
    int sec = (int) (now / SECOND);
    if (sec < seconds) {
      inSamples[sec] += inOrigin;
    }
  }

  /** Copies the per-second accounting into {@code series}. */
  void writeTo(Series series) {
    for (int s = 0; s < seconds; s++) {
      series.set(s, Series.Col.ORIGIN_ACCEPTED, accepted[s]);
      series.set(s, Series.Col.ORIGIN_REFUSED, refused[s]);
      series.set(s, Series.Col.ORIGIN_DROPPED, dropped[s]);
      series.set(s, Series.Col.ORIGIN_BUSY_MS, busyNanos[s] / 1_000_000L);
      series.set(s, Series.Col.ORIGIN_WASTED_MS, wastedNanos[s] / 1_000_000L);
      series.set(s, Series.Col.ORIGIN_SOJOURN_MS, sojournNanos[s] / 1_000_000L);
      series.set(s, Series.Col.ORIGIN_IN_SAMPLES, inSamples[s]);
    }
  }

  int workers() {
    return workers;
  }

  long totalAccepted() {
    return totalAccepted;
  }

  /** Total time attempts waited for a worker (dropped ones excluded), in ns. */
  long totalWaitNanos() {
    return totalWaitNanos;
  }

  /** Total worker time spent serving, in ns. */
  long totalBusyNanos() {
    return totalBusyNanos;
  }

  /** Total time accepted attempts spent in the origin, queued or served, in ns. */
  long totalSojournNanos() {
    return totalSojournNanos;
  }

  long lastWaitNanos() {
    return lastWaitNanos;
  }

  @Nullable Outcome lastFailure() {
    return lastFailure;
  }

  // ----------------------------------------------------------------------------------------------
  // The two heaps, on primitive arrays.

  private void replaceEarliestFree(long value) {
    siftDown(freeAt, freeAt.length, value);
  }

  /**
   * Puts {@code value} at the root of the min-heap {@code h[0, n)} (times, compared by subtraction)
   * and sifts it down to its place.
   */
  private static void siftDown(long[] h, int n, long value) {
    int i = 0;
    while (true) {
      int c = 2 * i + 1;
      if (c >= n) {
        break;
      }
      int r = c + 1;
      if (r < n && h[r] - h[c] < 0) {
        c = r;
      }
      if (value - h[c] <= 0) {
        break;
      }
      h[i] = h[c];
      i = c;
    }
    h[i] = value;
  }

  private void addLeaving(long at) {
    if (queued == leaving.length) {
      leaving = Arrays.copyOf(leaving, queued * 2);
    }
    int i = queued++;
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (leaving[parent] - at <= 0) {
        break;
      }
      leaving[i] = leaving[parent];
      i = parent;
    }
    leaving[i] = at;
  }

  private void pollLeaving() {
    long last = leaving[--queued];
    if (queued > 0) {
      siftDown(leaving, queued, last);
    }
  }
}
