package dev.parapet.proxy.config;

import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Shares written as percentages ({@code 20%}, {@code 12.5%}) and held as fractions ({@code 0.2}).
 * Configuration also accepts a plain fraction such as {@code 0.85} where DESIGN.md writes one (the
 * overload thresholds); see {@link #parse(String, boolean)}.
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

  /** A fraction as a percentage: {@code 0.2} → {@code 20%}, {@code 0.125} → {@code 12.5%}. */
  public static String format(double fraction) {
    BigDecimal p = new BigDecimal(Double.toString(fraction)).movePointRight(2).stripTrailingZeros();
    return (p.scale() < 0 ? p.setScale(0) : p).toPlainString() + "%";
  }
}
