package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.time.HttpDate;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded random header values: the parsers never throw, and what they return keeps its invariants
 * (delta-seconds are ABSENT or in [0, 2^31]; a date is INVALID or formats back to itself).
 */
class ParserFuzzTest {
  private static final String ALPHABET =
      "max-age=s-maxage,no-cache\"private; \t=0123456789W/\\*GMTSun,";
  private static final long SEED = 20261201L;

  private static String randomValue(SplittableRandom r) {
    int n = r.nextInt(40);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append(
          r.nextInt(20) == 0
              ? (char) r.nextInt(0x20, 0x7F)
              : ALPHABET.charAt(r.nextInt(ALPHABET.length())));
    }
    return b.toString();
  }

  @Test
  void cacheControlNeverThrowsAndKeepsValuesInRange() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int i = 0; i < 20_000; i++) {
      String v = randomValue(r);
      CacheControlFuzzTest.check(CacheControl.parse(v), v);
    }
  }

  @Test
  void httpDateNeverThrowsAndRoundTrips() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int i = 0; i < 20_000; i++) {
      String v =
          i % 2 == 0
              ? randomValue(r)
              : mutate(HttpDate.format(r.nextLong(0, 4_000_000_000_000L)), r);
      long t = HttpDate.parse(v, Http.WALL);
      if (t != HttpDate.INVALID) {
        assertThat(HttpDate.parse(HttpDate.format(t), Http.WALL)).as("[%s]", v).isEqualTo(t);
      }
    }
  }

  @Test
  void etagListsNeverThrow() {
    SplittableRandom r = new SplittableRandom(SEED);
    for (int i = 0; i < 20_000; i++) {
      Revalidation.listMatchesWeakly(randomValue(r), "\"v1\"");
    }
  }

  private static String mutate(String s, SplittableRandom r) {
    char[] c = s.toCharArray();
    c[r.nextInt(c.length)] = ALPHABET.charAt(r.nextInt(ALPHABET.length()));
    return new String(c);
  }
}
