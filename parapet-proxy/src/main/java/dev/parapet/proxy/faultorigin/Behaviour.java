package dev.parapet.proxy.faultorigin;

import dev.parapet.proxy.config.Percent;
import org.jspecify.annotations.Nullable;

/**
 * What the origin does with a request: the answer it gives when all goes well, how long it waits,
 * and how often it fails in each way instead.
 *
 * <p>One uniform draw per request picks the outcome from the cumulative rates in a fixed order:
 * reset, mid-body reset, hang, garbage, error, and otherwise OK; so the rates must add up to at
 * most 100 %. Every outcome except a hang waits for one latency sample first (a timed-out
 * connection that is then reset is how a sick origin usually looks).
 *
 * @param status status of an OK answer, in [200, 599]
 * @param bodySize bytes in an OK body, in [0, 1 GiB]; the content repeats a fixed 64-byte line
 * @param cacheControl {@code Cache-Control} header of an OK answer, or null for none
 * @param etag {@code ETag} header of an OK answer (quoted, like {@code "v1"}), or null for none; a
 *     request whose {@code If-None-Match} names it gets 304
 * @param latency delay before answering
 * @param errorRate share of requests answered with {@code errorStatus}
 * @param errorStatus status of an injected error, in [200, 599]
 * @param resetRate share of connections reset before any answer
 * @param midBodyResetRate share of answers reset after half the body
 * @param hangRate share of requests never answered
 * @param garbageRate share of requests answered with a malformed response
 */
public record Behaviour(
    int status,
    int bodySize,
    @Nullable String cacheControl,
    @Nullable String etag,
    Latency latency,
    double errorRate,
    int errorStatus,
    double resetRate,
    double midBodyResetRate,
    double hangRate,
    double garbageRate) {

  private static final String RATE_RANGE = "a percentage in [0%, 100%]";

  /** Largest body the origin sends. */
  public static final int MAX_BODY_SIZE = 1 << 30;

  /** 200, 1024 bytes, no cache headers, no latency, no faults (errors would be 503). */
  public static final Behaviour DEFAULT =
      new Behaviour(200, 1024, null, null, Latency.NONE, 0, 503, 0, 0, 0, 0);

  public Behaviour {
    requireStatus("status", status);
    requireStatus("error_status", errorStatus);
    if (bodySize < 0 || bodySize > MAX_BODY_SIZE) {
      throw new PlanException(
          "body_size", "a byte count in [0, " + MAX_BODY_SIZE + "]", Integer.toString(bodySize));
    }
    requireHeaderValue("cache_control", cacheControl);
    requireHeaderValue("etag", etag);
    if (etag != null && !etag.matches("(W/)?\"[^\"]*\"")) {
      throw new PlanException(
          "etag", "a quoted entity tag such as \"v1\"", PlanException.quoted(etag));
    }
    requireRate("error_rate", errorRate);
    requireRate("reset_rate", resetRate);
    requireRate("mid_body_reset_rate", midBodyResetRate);
    requireRate("hang_rate", hangRate);
    requireRate("garbage_rate", garbageRate);
    double sum = errorRate + resetRate + midBodyResetRate + hangRate + garbageRate;
    if (sum > 1.0 + 1e-9) {
      throw new PlanException(
          "error_rate + reset_rate + mid_body_reset_rate + hang_rate + garbage_rate",
          "a sum <= 100%",
          formatRate(sum));
    }
  }

  /** Picks the outcome for a uniform draw {@code u} in {@code [0, 1)}. */
  public FaultOutcome pick(double u) {
    double edge = resetRate;
    if (u < edge) {
      return FaultOutcome.RESET;
    }
    edge += midBodyResetRate;
    if (u < edge) {
      return FaultOutcome.MID_BODY_RESET;
    }
    edge += hangRate;
    if (u < edge) {
      return FaultOutcome.HANG;
    }
    edge += garbageRate;
    if (u < edge) {
      return FaultOutcome.GARBAGE;
    }
    edge += errorRate;
    if (u < edge) {
      return FaultOutcome.ERROR;
    }
    return FaultOutcome.OK;
  }

  /** A builder starting from this behaviour. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A builder starting from {@link #DEFAULT}. */
  public static Builder builder() {
    return new Builder(DEFAULT);
  }

  private static void requireStatus(String field, int status) {
    if (status < 200 || status > 599) {
      throw new PlanException(field, "an HTTP status in [200, 599]", Integer.toString(status));
    }
  }

  /**
   * Reads a rate as people write it, {@code 30%} or {@code 0.5%}, into the probability the plan
   * stores ({@code 0.3}). The percent sign is required so that {@code 30} (a number of what?) is
   * refused instead of guessed; {@code field} names the value in errors.
   *
   * @throws PlanException when {@code text} is not a percentage in [0%, 100%]
   */
  public static double parseRate(String field, String text) {
    String t = text.strip();
    // "-1%" is a percentage, only out of range: say so rather than that it is no percentage.
    boolean negative = t.length() > 1 && t.charAt(0) == '-' && Character.isDigit(t.charAt(1));
    double rate;
    try {
      rate = Percent.parse(negative ? t.substring(1) : t, false);
    } catch (IllegalArgumentException e) {
      throw new PlanException(field, "a percentage such as 30%", PlanException.quoted(text));
    }
    if (negative && rate > 0) {
      throw new PlanException(field, RATE_RANGE, PlanException.quoted(text));
    }
    return requireRate(field, rate, PlanException.quoted(text));
  }

  /** Checks a rate is a probability in {@code [0, 1]}; {@code found} is how the caller wrote it. */
  static double requireRate(String field, double rate, String found) {
    if (!(rate >= 0.0 && rate <= 1.0)) {
      throw new PlanException(field, RATE_RANGE, found);
    }
    return rate;
  }

  /** A rate as a percentage with up to four decimals: {@code 0.3} → {@code 30%}. */
  static String formatRate(double rate) {
    return Percent.format(rate, 4);
  }

  private static void requireRate(String field, double rate) {
    requireRate(field, rate, formatRate(rate));
  }

  private static void requireHeaderValue(String field, @Nullable String value) {
    if (value == null) {
      return;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new PlanException(
            field, "a header value of printable ASCII characters", PlanException.quoted(value));
      }
    }
  }

  /** Builds a {@link Behaviour}; {@link #build()} validates. */
  public static final class Builder {
    private int status;
    private int bodySize;
    private @Nullable String cacheControl;
    private @Nullable String etag;
    private Latency latency;
    private double errorRate;
    private int errorStatus;
    private double resetRate;
    private double midBodyResetRate;
    private double hangRate;
    private double garbageRate;

    private Builder(Behaviour b) {
      status = b.status;
      bodySize = b.bodySize;
      cacheControl = b.cacheControl;
      etag = b.etag;
      latency = b.latency;
      errorRate = b.errorRate;
      errorStatus = b.errorStatus;
      resetRate = b.resetRate;
      midBodyResetRate = b.midBodyResetRate;
      hangRate = b.hangRate;
      garbageRate = b.garbageRate;
    }

    public Builder status(int status) {
      this.status = status;
      return this;
    }

    public Builder bodySize(int bodySize) {
      this.bodySize = bodySize;
      return this;
    }

    public Builder cacheControl(@Nullable String cacheControl) {
      this.cacheControl = cacheControl;
      return this;
    }

    public Builder etag(@Nullable String etag) {
      this.etag = etag;
      return this;
    }

    public Builder latency(Latency latency) {
      this.latency = latency;
      return this;
    }

    public Builder errorRate(double errorRate) {
      this.errorRate = errorRate;
      return this;
    }

    public Builder errorStatus(int errorStatus) {
      this.errorStatus = errorStatus;
      return this;
    }

    public Builder resetRate(double resetRate) {
      this.resetRate = resetRate;
      return this;
    }

    public Builder midBodyResetRate(double midBodyResetRate) {
      this.midBodyResetRate = midBodyResetRate;
      return this;
    }

    public Builder hangRate(double hangRate) {
      this.hangRate = hangRate;
      return this;
    }

    public Builder garbageRate(double garbageRate) {
      this.garbageRate = garbageRate;
      return this;
    }

    /** Validates and builds; throws {@link PlanException} on the first invalid field. */
    public Behaviour build() {
      return new Behaviour(
          status,
          bodySize,
          cacheControl,
          etag,
          latency,
          errorRate,
          errorStatus,
          resetRate,
          midBodyResetRate,
          hangRate,
          garbageRate);
    }
  }
}
