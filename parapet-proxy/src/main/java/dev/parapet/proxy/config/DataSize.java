package dev.parapet.proxy.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A size in bytes, written with binary units: {@code 512KiB}, {@code 256MiB}, {@code 1GiB}, or a
 * bare byte count. Decimal units ({@code MB}, {@code GB}) are refused with a suggestion, because a
 * cache bounded at "256MB" would silently be 5 % smaller or larger than the operator meant.
 */
public record DataSize(long bytes) implements Comparable<DataSize> {
  private static final Pattern SIZE = Pattern.compile("(\\d{1,15})\\s*(B|KiB|MiB|GiB|TiB)?");
  private static final Pattern DECIMAL_UNIT =
      Pattern.compile("(\\d{1,15})\\s*([KMGT])B?", Pattern.CASE_INSENSITIVE);

  public DataSize {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes : " + bytes + " (expected: >= 0)");
    }
  }

  public static DataSize ofMebibytes(long mebibytes) {
    return new DataSize(mebibytes << 20);
  }

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException "must be a size like 512KiB, 256MiB or 1GiB, was '...'"
   */
  public static DataSize parse(String text) {
    String s = text.trim();
    Matcher m = SIZE.matcher(s);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      String unit = m.group(2);
      int shift =
          switch (unit == null ? "B" : unit) {
            case "KiB" -> 10;
            case "MiB" -> 20;
            case "GiB" -> 30;
            case "TiB" -> 40;
            default -> 0;
          };
      if (Long.numberOfLeadingZeros(n) <= shift) {
        throw new IllegalArgumentException("must be at most 8EiB, was '" + text + "'");
      }
      return new DataSize(n << shift);
    }
    String hint = "";
    Matcher d = DECIMAL_UNIT.matcher(s);
    if (d.matches()) {
      hint = " (did you mean " + d.group(1) + d.group(2).toUpperCase(Locale.ROOT) + "iB?)";
    }
    throw new IllegalArgumentException(
        "must be a size like 512KiB, 256MiB or 1GiB, was '" + text + "'" + hint);
  }

  @Override
  public int compareTo(DataSize o) {
    return Long.compare(bytes, o.bytes);
  }

  /** The largest exact binary unit: {@code 256MiB}, {@code 1536KiB}, {@code 100B}. */
  @Override
  public String toString() {
    String[] units = {"TiB", "GiB", "MiB", "KiB"};
    for (int i = 0; i < units.length; i++) {
      int shift = 40 - 10 * i;
      if (bytes != 0 && bytes % (1L << shift) == 0) {
        return (bytes >> shift) + units[i];
      }
    }
    return bytes + "B";
  }
}
