package dev.parapet.core.outcome;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

/**
 * An immutable set of HTTP status codes (100..599), written as in configuration: {@code "5xx"},
 * {@code "429"}, {@code "500-504"}. Lookup is a bit test and allocates nothing.
 */
public final class StatusSet {
  private static final int MIN = 100;
  private static final int MAX = 599;

  /** 500, 502, 503, 504 and 429: the failure statuses of DESIGN.md. */
  public static final StatusSet DEFAULT_FAILURES =
      parse(List.of("500", "502", "503", "504", "429"));

  private final long[] bits;
  private final List<String> spec;

  private StatusSet(BitSet set, List<String> spec) {
    this.bits = set.toLongArray();
    this.spec = List.copyOf(spec);
  }

  /** No status at all. */
  public static StatusSet none() {
    return new StatusSet(new BitSet(), List.of());
  }

  /**
   * Parses entries such as {@code 503}, {@code 5xx} or {@code 500-504}.
   *
   * @throws IllegalArgumentException listing every malformed entry
   */
  public static StatusSet parse(List<String> entries) {
    BitSet set = new BitSet(MAX + 1);
    List<String> errors = new ArrayList<>();
    for (String raw : entries) {
      String e = raw.trim().toLowerCase(Locale.ROOT);
      int from;
      int to;
      try {
        if (e.length() == 3 && e.endsWith("xx") && Character.isDigit(e.charAt(0))) {
          from = (e.charAt(0) - '0') * 100;
          to = from + 99;
        } else if (e.contains("-")) {
          int dash = e.indexOf('-');
          from = Integer.parseInt(e.substring(0, dash).trim());
          to = Integer.parseInt(e.substring(dash + 1).trim());
        } else {
          from = Integer.parseInt(e);
          to = from;
        }
      } catch (NumberFormatException nfe) {
        errors.add("status : " + raw + " (expected: a code like 503, a class like 5xx or a range)");
        continue;
      }
      if (from < MIN || to > MAX || from > to) {
        errors.add("status : " + raw + " (expected: codes within 100-599)");
        continue;
      }
      set.set(from, to + 1);
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", errors));
    }
    return new StatusSet(set, entries);
  }

  /** True when {@code status} is in the set; any value outside 100..599 is not. */
  public boolean contains(int status) {
    if (status < MIN || status > MAX) {
      return false;
    }
    int word = status >>> 6;
    return word < bits.length && (bits[word] & (1L << status)) != 0;
  }

  /** Equal when the same codes are in the set, however they were written. */
  @Override
  public boolean equals(Object o) {
    return o instanceof StatusSet other && java.util.Arrays.equals(bits, other.bits);
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(bits);
  }

  @Override
  public String toString() {
    return spec.toString();
  }
}
