package dev.parapet.core.limit;

/** Argument checks shared by the algorithms; messages say what, expected and found. */
final class Limits {
  private Limits() {}

  static void checkPositive(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " : " + value + " (expected: >= 1)");
    }
  }

  static void checkBounds(int initial, int min, int max) {
    checkPositive("min", min);
    if (max < min) {
      throw new IllegalArgumentException("max : " + max + " (expected: >= min " + min + ")");
    }
    if (initial < min || initial > max) {
      throw new IllegalArgumentException(
          "initial : " + initial + " (expected: in [" + min + ", " + max + "])");
    }
  }

  static void checkFraction(String name, double value, boolean includeZero) {
    boolean ok = includeZero ? value >= 0.0 && value <= 1.0 : value > 0.0 && value <= 1.0;
    if (!ok) {
      throw new IllegalArgumentException(
          name + " : " + value + " (expected: in " + (includeZero ? "[0, 1]" : "(0, 1]") + ")");
    }
  }

  /** {@code max(1, floor(log10(x)))}: the slow-growing step Vegas uses at large limits. */
  static int log10Step(double x) {
    return x < 100.0 ? 1 : (int) Math.log10(x);
  }

  static double clamp(double value, int min, int max) {
    return Math.max(min, Math.min(max, value));
  }
}
