package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as operators write them: {@code 250ms}, {@code 3s}, {@code 5m}, {@code 1h}, {@code 0s},
 * and sums such as {@code 1m30s}. Units are required (a bare {@code 3} is ambiguous: seconds in one
 * tool, milliseconds in the next), fractions are not accepted ({@code 1500ms}, not {@code 1.5s}),
 * so every configured duration is exact.
 */
public final class HumanDuration {
  private static final Pattern PART = Pattern.compile("(\\d{1,12})(ms|s|m|h)");
  private static final String EXPECTED = "a duration like 250ms, 3s, 5m or 1h";

  private HumanDuration() {}

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException "must be a duration like 250ms, 3s, 5m or 1h, was '...'"
   */
  public static Duration parse(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    Matcher m = PART.matcher(s);
    Duration total = Duration.ZERO;
    int at = 0;
    while (at < s.length()) {
      if (!m.find(at) || m.start() != at) {
        throw new IllegalArgumentException("must be " + EXPECTED + ", was '" + text + "'");
      }
      long amount = Long.parseLong(m.group(1));
      Duration part =
          switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            default -> Duration.ofHours(amount);
          };
      total = total.plus(part);
      at = m.end();
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("must be " + EXPECTED + ", was '" + text + "'");
    }
    return total;
  }

  /** The shortest exact form: {@code 250ms}, {@code 3s}, {@code 5m}, {@code 1h}, {@code 1m30s}. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    if (d.isNegative()) {
      return "-" + format(d.negated());
    }
    if (d.toNanosPart() % 1_000_000 != 0) {
      return d.toNanos() + "ns";
    }
    if (d.toMillisPart() != 0) {
      return d.toMillis() + "ms";
    }
    StringBuilder out = new StringBuilder();
    long hours = d.toHours();
    if (hours > 0) {
      out.append(hours).append('h');
    }
    if (d.toMinutesPart() > 0) {
      out.append(d.toMinutesPart()).append('m');
    }
    if (d.toSecondsPart() > 0) {
      out.append(d.toSecondsPart()).append('s');
    }
    return out.toString();
  }
}
