package dev.parapet.proxy.faultorigin;

import dev.parapet.core.time.RandomSource;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long the origin waits before it answers: one sample per request.
 *
 * <p>Written as text on the command line and in the control API alike:
 *
 * <pre>
 * none                       answer at once
 * fixed:50ms                 always 50 ms
 * uniform:10ms-200ms         uniform in [10 ms, 200 ms]
 * lognormal:120ms,4s         log-normal with median 120 ms and 99th percentile 4 s
 * bimodal:90%:20ms,2s        90 % of requests take 20 ms, the rest 2 s
 * </pre>
 *
 * Durations take {@code ns}, {@code us}, {@code ms}, {@code s} or {@code m} and may have decimals
 * ({@code 1.5s}).
 *
 * <p>The log-normal form is the usual model of service latency: {@code ln(delay)} is normal with
 * {@code mu = ln(p50)} and {@code sigma = (ln(p99) - mu) / z(0.99)}, {@code z(0.99) = 2.3263...}. A
 * sample is {@code exp(mu + sigma * Z)} with {@code Z} from the Box-Muller transform of two uniform
 * draws. Samples are capped at ten times p99 so that one unlucky draw cannot hold a connection for
 * hours (with p50 120 ms and p99 4 s, about one request in 17 000 is capped).
 *
 * <p>The origin turns a sample into a timer on the connection's event loop, never a sleep.
 */
public sealed interface Latency {

  /** No delay. */
  Latency NONE = new None();

  /** The grammar, for error messages. */
  String SYNTAX =
      "none | fixed:DELAY | uniform:MIN-MAX | lognormal:P50,P99 | bimodal:FAST%:FAST,SLOW";

  /** One delay in nanoseconds, drawn from {@code random}. */
  long sampleNanos(RandomSource random);

  /** The canonical text of this distribution, which {@link #parse} reads back. */
  String text();

  /** No delay at all. */
  record None() implements Latency {
    @Override
    public long sampleNanos(RandomSource random) {
      return 0;
    }

    @Override
    public String text() {
      return "none";
    }
  }

  /** Always {@code delayNanos}. */
  record Fixed(long delayNanos) implements Latency {
    public Fixed {
      requireNonNegative("fixed", delayNanos);
    }

    @Override
    public long sampleNanos(RandomSource random) {
      return delayNanos;
    }

    @Override
    public String text() {
      return "fixed:" + formatDuration(delayNanos);
    }
  }

  /** Uniform in {@code [minNanos, maxNanos]}. */
  record Uniform(long minNanos, long maxNanos) implements Latency {
    public Uniform {
      requireNonNegative("uniform", minNanos);
      if (maxNanos < minNanos) {
        throw new IllegalArgumentException(
            "uniform : "
                + formatDuration(minNanos)
                + "-"
                + formatDuration(maxNanos)
                + " (expected: min <= max)");
      }
    }

    @Override
    public long sampleNanos(RandomSource random) {
      return minNanos + (long) (random.nextDouble() * (maxNanos - minNanos));
    }

    @Override
    public String text() {
      return "uniform:" + formatDuration(minNanos) + "-" + formatDuration(maxNanos);
    }
  }

  /** Log-normal with median {@code p50Nanos} and 99th percentile {@code p99Nanos}. */
  record LogNormal(long p50Nanos, long p99Nanos) implements Latency {
    /** The 99th percentile of the standard normal distribution. */
    static final double Z_99 = 2.3263478740408408;

    public LogNormal {
      if (p50Nanos <= 0 || p99Nanos < p50Nanos) {
        throw new IllegalArgumentException(
            "lognormal : "
                + formatDuration(p50Nanos)
                + ","
                + formatDuration(p99Nanos)
                + " (expected: 0 < p50 <= p99)");
      }
    }

    @Override
    public long sampleNanos(RandomSource random) {
      double mu = Math.log(p50Nanos);
      double sigma = (Math.log(p99Nanos) - mu) / Z_99;
      double u1 = 1.0 - random.nextDouble(); // (0, 1]: log(0) is undefined
      double u2 = random.nextDouble();
      double z = Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
      double sample = Math.exp(mu + sigma * z);
      return (long) Math.min(sample, 10.0 * p99Nanos);
    }

    @Override
    public String text() {
      return "lognormal:" + formatDuration(p50Nanos) + "," + formatDuration(p99Nanos);
    }
  }

  /** {@code fastShare} of requests take {@code fastNanos}, the rest {@code slowNanos}. */
  record Bimodal(double fastShare, long fastNanos, long slowNanos) implements Latency {
    public Bimodal {
      if (!(fastShare >= 0.0 && fastShare <= 1.0)) {
        throw new IllegalArgumentException(
            "bimodal fast share : " + fastShare + " (expected: in [0, 1])");
      }
      requireNonNegative("bimodal fast", fastNanos);
      requireNonNegative("bimodal slow", slowNanos);
    }

    @Override
    public long sampleNanos(RandomSource random) {
      return random.nextDouble() < fastShare ? fastNanos : slowNanos;
    }

    @Override
    public String text() {
      return "bimodal:"
          + Behaviour.formatRate(fastShare)
          + ":"
          + formatDuration(fastNanos)
          + ","
          + formatDuration(slowNanos);
    }
  }

  /**
   * Parses the text form; errors name {@code field} ({@code latency} or {@code --latency}) and say
   * what was expected and what was found.
   */
  static Latency parse(String field, String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    int colon = t.indexOf(':');
    String kind = colon < 0 ? t : t.substring(0, colon);
    String args = colon < 0 ? "" : t.substring(colon + 1);
    try {
      switch (kind) {
        case "none":
          if (colon < 0) {
            return NONE;
          }
          break;
        case "fixed":
          return new Fixed(parseDuration(args));
        case "uniform":
          {
            int dash = args.indexOf('-');
            if (dash > 0) {
              return new Uniform(
                  parseDuration(args.substring(0, dash)), parseDuration(args.substring(dash + 1)));
            }
            break;
          }
        case "lognormal":
          {
            int comma = args.indexOf(',');
            if (comma > 0) {
              return new LogNormal(
                  parseDuration(args.substring(0, comma)),
                  parseDuration(args.substring(comma + 1)));
            }
            break;
          }
        case "bimodal":
          {
            int share = args.indexOf(':');
            int comma = args.indexOf(',');
            if (share > 0 && comma > share) {
              return new Bimodal(
                  Behaviour.parseRate(field, args.substring(0, share)),
                  parseDuration(args.substring(share + 1, comma)),
                  parseDuration(args.substring(comma + 1)));
            }
            break;
          }
        default:
          break;
      }
    } catch (IllegalArgumentException e) {
      throw new PlanException(
          field, SYNTAX, PlanException.quoted(text) + " (" + e.getMessage() + ")");
    }
    throw new PlanException(field, SYNTAX, PlanException.quoted(text));
  }

  /** Reads {@code 50ms}, {@code 1.5s}, {@code 2m}, {@code 250us}, {@code 10ns}. */
  static long parseDuration(String text) {
    // Parsed only when a plan is set, never per request: compiling here keeps the interface small.
    Matcher m = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m)").matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "duration : '" + text + "' (expected: a number with ns, us, ms, s or m, such as 50ms)");
    }
    TimeUnit unit =
        switch (m.group(2)) {
          case "ns" -> TimeUnit.NANOSECONDS;
          case "us" -> TimeUnit.MICROSECONDS;
          case "ms" -> TimeUnit.MILLISECONDS;
          case "s" -> TimeUnit.SECONDS;
          default -> TimeUnit.MINUTES;
        };
    BigDecimal nanos = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit.toNanos(1)));
    if (nanos.compareTo(BigDecimal.valueOf(TimeUnit.HOURS.toNanos(24))) > 0) {
      throw new IllegalArgumentException("duration : '" + text + "' (expected: <= 24h)");
    }
    return nanos.longValue();
  }

  /** Writes the largest unit that represents {@code nanos} exactly: {@code 2s}, {@code 1500ms}. */
  static String formatDuration(long nanos) {
    if (nanos == 0) {
      return "0ms";
    }
    if (nanos % TimeUnit.MINUTES.toNanos(1) == 0) {
      return nanos / TimeUnit.MINUTES.toNanos(1) + "m";
    }
    if (nanos % TimeUnit.SECONDS.toNanos(1) == 0) {
      return nanos / TimeUnit.SECONDS.toNanos(1) + "s";
    }
    if (nanos % TimeUnit.MILLISECONDS.toNanos(1) == 0) {
      return nanos / TimeUnit.MILLISECONDS.toNanos(1) + "ms";
    }
    if (nanos % TimeUnit.MICROSECONDS.toNanos(1) == 0) {
      return nanos / TimeUnit.MICROSECONDS.toNanos(1) + "us";
    }
    return nanos + "ns";
  }

  private static void requireNonNegative(String what, long nanos) {
    if (nanos < 0) {
      throw new IllegalArgumentException(what + " : " + nanos + "ns (expected: >= 0)");
    }
  }
}
