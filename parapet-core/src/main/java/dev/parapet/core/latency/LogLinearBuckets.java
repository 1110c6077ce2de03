package dev.parapet.core.latency;

/**
 * Maps a latency in nanoseconds to a histogram bucket and back, HdrHistogram-style.
 *
 * <p>Values below 64 ns each get their own bucket (exact). From 64 ns up, every power of two {@code
 * [2^e, 2^(e+1))} is split into 32 equal sub-buckets of width {@code 2^(e-5)}, so a bucket is never
 * wider than 1/32 of its lower bound. Reporting the bucket midpoint therefore errs by at most half
 * a width: a relative error of at most 1/64 (1.5625 %) for every value up to {@link
 * #MAX_TRACKABLE_NANOS}. Larger values are clamped to that maximum (about 18 minutes, far beyond
 * any origin timeout). 34 octaves of 32 sub-buckets plus 64 exact buckets: {@value #COUNT} buckets.
 */
final class LogLinearBuckets {
  private static final int SUB_BITS = 5;
  private static final int SUB_COUNT = 1 << SUB_BITS; // 32
  private static final int EXACT = 2 * SUB_COUNT; // 64 values below 2^6 are exact
  private static final int FIRST_EXP = 6;
  private static final int LAST_EXP = 39;

  /** Largest latency told apart; larger values are recorded as this. */
  static final long MAX_TRACKABLE_NANOS = (1L << (LAST_EXP + 1)) - 1;

  /** Number of buckets. */
  static final int COUNT = EXACT + (LAST_EXP - FIRST_EXP + 1) * SUB_COUNT;

  /** Worst relative error of {@link #midpoint} against any value in the same bucket. */
  static final double MAX_RELATIVE_ERROR = 1.0 / (2 * SUB_COUNT);

  private LogLinearBuckets() {}

  /** Bucket of {@code nanos}; negative values count as zero, huge ones are clamped. */
  static int index(long nanos) {
    if (nanos < EXACT) {
      return nanos <= 0 ? 0 : (int) nanos;
    }
    long v = Math.min(nanos, MAX_TRACKABLE_NANOS);
    int exp = 63 - Long.numberOfLeadingZeros(v);
    int sub = (int) (v >>> (exp - SUB_BITS)) - SUB_COUNT;
    return EXACT + (exp - FIRST_EXP) * SUB_COUNT + sub;
  }

  /** Smallest value that maps to {@code index}. */
  static long lowerBound(int index) {
    if (index < EXACT) {
      return index;
    }
    int k = index - EXACT;
    int exp = FIRST_EXP + k / SUB_COUNT;
    long sub = SUB_COUNT + (long) (k % SUB_COUNT);
    return sub << (exp - SUB_BITS);
  }

  /** The value reported for {@code index}: its midpoint (or the exact value below 64 ns). */
  static long midpoint(int index) {
    if (index < EXACT) {
      return index;
    }
    int exp = FIRST_EXP + (index - EXACT) / SUB_COUNT;
    long width = 1L << (exp - SUB_BITS);
    return lowerBound(index) + width / 2;
  }
}
