package dev.parapet.proxy.faultorigin;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Percentages as people write them ({@code 30%}, {@code 0.5%}) to and from the probability in
 * {@code [0, 1]} the plan stores. The percent sign is required so that {@code 30} (a number of
 * what?) is refused instead of guessed.
 */
public final class Percent {
  private Percent() {}

  /** Parses {@code text} such as {@code 30%} into {@code 0.3}; {@code field} names it in errors. */
  public static double parse(String field, String text) {
    String t = text.strip();
    if (!t.endsWith("%")) {
      throw new PlanException(field, "a percentage such as 30%", PlanException.quoted(text));
    }
    BigDecimal value;
    try {
      value = new BigDecimal(t.substring(0, t.length() - 1).strip());
    } catch (NumberFormatException e) {
      throw new PlanException(field, "a percentage such as 30%", PlanException.quoted(text));
    }
    return checked(field, value.movePointLeft(2).doubleValue(), PlanException.quoted(text));
  }

  /** Checks a probability is in {@code [0, 1]}; {@code found} is how the caller wrote it. */
  static double checked(String field, double probability, String found) {
    if (!(probability >= 0.0 && probability <= 1.0)) {
      throw new PlanException(field, "a percentage in [0%, 100%]", found);
    }
    return probability;
  }

  /** Formats {@code 0.3} as {@code 30%}, keeping up to four decimals of the percentage. */
  public static String format(double probability) {
    return BigDecimal.valueOf(probability)
            .movePointRight(2)
            .setScale(4, RoundingMode.HALF_EVEN)
            .stripTrailingZeros()
            .toPlainString()
        + "%";
  }
}
