package dev.parapet.proxy.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shares written as percentages ({@code 20%}, {@code 12.5%}) and held as fractions ({@code 0.2}),
 * in the configuration and in the fault-injecting origin's plans alike. Configuration also accepts
 * a plain fraction such as {@code 0.85} where DESIGN.md writes one (the overload thresholds); see
 * {@link #parse(String, boolean)}. Ranges are the caller's to check.
 */
public final class Percent {
  private static final Pattern PERCENT = Pattern.compile("(\\d{1,6}(?:\\.\\d{1,6})?)\\s*%");
  private static final Pattern FRACTION = Pattern.compile("\\d{1,6}(?:\\.\\d{1,9})?");

  private Percent() {}

  /**
   * Parses a percentage such as {@code 20%} into a fraction ({@code 0.2}); with {@code
   * fractionAllowed}, a bare number such as {@code 0.85} is taken as the fraction itself.
   *
   * @throws IllegalArgumentException "must be a percentage like 20%, was '...'"
   */
  public static double parse(String text, boolean fractionAllowed) {
    String s = text.trim();
    Matcher m = PERCENT.matcher(s);
    if (m.matches()) {
      return new BigDecimal(m.group(1)).movePointLeft(2).doubleValue();
    }
    if (fractionAllowed && FRACTION.matcher(s).matches()) {
      return Double.parseDouble(s);
    }
    throw new IllegalArgumentException(
        "must be a percentage like 20%"
            + (fractionAllowed ? " or a fraction like 0.2" : "")
            + ", was '"
            + text
            + "'");
  }

  /**
   * A fraction as a percentage, in the shortest form that reads back to it: {@code 0.2} → {@code
   * 20%}, {@code 0.125} → {@code 12.5%}.
   */
  public static String format(double fraction) {
    return plain(BigDecimal.valueOf(fraction).movePointRight(2));
  }

  /**
   * A fraction as a percentage rounded (half even) to at most {@code maxDecimals} decimals, for
   * computed values whose binary noise should not show: {@code 0.7 + 0.4} → {@code 110%}, and with
   * four decimals {@code 1.0 / 3} → {@code 33.3333%}.
   */
  public static String format(double fraction, int maxDecimals) {
    return plain(
        BigDecimal.valueOf(fraction)
            .movePointRight(2)
            .setScale(maxDecimals, RoundingMode.HALF_EVEN));
  }

  private static String plain(BigDecimal percent) {
    return percent.stripTrailingZeros().toPlainString() + "%";
  }
}
