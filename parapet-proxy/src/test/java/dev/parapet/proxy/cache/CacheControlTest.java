package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CacheControlTest {

  @Test
  void absentHeaderHasNoDirectives() {
    CacheControl cc = CacheControl.of(Http.headers());
    assertThat(cc).isSameAs(CacheControl.EMPTY);
    assertThat(cc.maxAge()).isEqualTo(CacheControl.ABSENT);
    assertThat(cc.noStore() || cc.noCache() || cc.isPrivate() || cc.isPublic()).isFalse();
    assertThat(cc.forbidsStale()).isFalse();
  }

  @Test
  void responseDirectives() {
    CacheControl cc =
        CacheControl.parse(
            "public, max-age=60, s-maxage=120, must-revalidate, proxy-revalidate,"
                + " stale-while-revalidate=30, stale-if-error=600, no-transform, immutable");
    assertThat(cc.isPublic()).isTrue();
    assertThat(cc.maxAge()).isEqualTo(60);
    assertThat(cc.sMaxAge()).isEqualTo(120);
    assertThat(cc.mustRevalidate()).isTrue();
    assertThat(cc.proxyRevalidate()).isTrue();
    assertThat(cc.staleWhileRevalidate()).isEqualTo(30);
    assertThat(cc.staleIfError()).isEqualTo(600);
    assertThat(cc.noTransform()).isTrue();
    assertThat(cc.immutable()).isTrue();
  }

  @Test
  void requestDirectives() {
    CacheControl cc = CacheControl.parse("max-age=5, max-stale=10, min-fresh=3, only-if-cached");
    assertThat(cc.maxAge()).isEqualTo(5);
    assertThat(cc.maxStale()).isEqualTo(10);
    assertThat(cc.minFresh()).isEqualTo(3);
    assertThat(cc.onlyIfCached()).isTrue();
    assertThat(CacheControl.parse("max-stale").maxStale())
        .isEqualTo(CacheControl.MAX_DELTA_SECONDS);
  }

  @Test
  void noStoreNoCachePrivate() {
    assertThat(CacheControl.parse("no-store").noStore()).isTrue();
    CacheControl noCache = CacheControl.parse("no-cache");
    assertThat(noCache.noCache()).isTrue();
    assertThat(noCache.noCacheFields()).isEmpty();
    assertThat(noCache.forbidsStale()).isTrue();
    CacheControl priv = CacheControl.parse("private");
    assertThat(priv.isPrivate()).isTrue();
    assertThat(priv.privateFields()).isEmpty();
  }

  @Test
  void qualifiedNoCacheAndPrivateCarryLowerCaseFieldNames() {
    CacheControl cc =
        CacheControl.parse("no-cache=\"Set-Cookie, X-Token\", private=\"Authorization-Info\"");
    assertThat(cc.noCache()).isFalse();
    assertThat(cc.noCacheFields()).containsExactly("set-cookie", "x-token");
    assertThat(cc.isPrivate()).isFalse();
    assertThat(cc.privateFields()).containsExactly("authorization-info");
    // token form, one name
    assertThat(CacheControl.parse("no-cache=Set-Cookie").noCacheFields())
        .containsExactly("set-cookie");
  }

  @Test
  void unqualifiedWinsOverQualified() {
    CacheControl cc = CacheControl.parse("no-cache=\"set-cookie\", no-cache, private=x, private");
    assertThat(cc.noCache()).isTrue();
    assertThat(cc.noCacheFields()).isEmpty();
    assertThat(cc.isPrivate()).isTrue();
    assertThat(cc.privateFields()).isEmpty();
  }

  @Test
  void toleratesCaseQuotingAndWhitespace() {
    CacheControl cc =
        CacheControl.parse("  MAX-AGE = \"60\" ,,  No-Store ,Public,\tS-MaxAge=\"7\" ");
    assertThat(cc.maxAge()).isEqualTo(60);
    assertThat(cc.sMaxAge()).isEqualTo(7);
    assertThat(cc.noStore()).isTrue();
    assertThat(cc.isPublic()).isTrue();
  }

  @Test
  void unknownDirectivesAndExtensionsAreIgnored() {
    CacheControl cc = CacheControl.parse("foo, bar=\"a,b\", max-age=9, community=\"UCI\"");
    assertThat(cc.maxAge()).isEqualTo(9);
    assertThat(cc.toString()).isEqualTo("max-age=9");
  }

  @Test
  void invalidFreshnessIsStaleNotFresh() {
    assertThat(CacheControl.parse("max-age=abc").maxAge()).isZero();
    assertThat(CacheControl.parse("max-age=").maxAge()).isZero();
    assertThat(CacheControl.parse("max-age").maxAge()).isZero();
    assertThat(CacheControl.parse("max-age=-5").maxAge()).isZero();
    assertThat(CacheControl.parse("s-maxage=1.5").sMaxAge()).isZero();
  }

  @Test
  void theFirstOfDuplicateFreshnessDirectivesCounts() {
    assertThat(CacheControl.parse("max-age=60, max-age=120").maxAge()).isEqualTo(60);
    assertThat(CacheControl.parse("s-maxage=5, s-maxage=0").sMaxAge()).isEqualTo(5);
    assertThat(CacheControl.parse("max-age=60, max-age=60").maxAge()).isEqualTo(60);
    assertThat(CacheControl.parse("stale-if-error=60, stale-if-error=10").staleIfError())
        .isEqualTo(10);
    assertThat(CacheControl.parse("stale-while-revalidate=x").staleWhileRevalidate()).isZero();
  }

  @Test
  void invalidRequestDirectivesAreIgnored() {
    CacheControl cc = CacheControl.parse("max-stale=abc, min-fresh=-1");
    assertThat(cc.maxStale()).isEqualTo(CacheControl.ABSENT);
    assertThat(cc.minFresh()).isEqualTo(CacheControl.ABSENT);
  }

  @Test
  void mustUnderstandIsParsed() {
    assertThat(CacheControl.parse("no-store, Must-Understand").mustUnderstand()).isTrue();
    assertThat(CacheControl.parse("no-store").mustUnderstand()).isFalse();
  }

  @Test
  void hugeDeltaSecondsSaturateAt2Pow31() {
    assertThat(CacheControl.parse("max-age=99999999999999999999999").maxAge())
        .isEqualTo(2_147_483_648L);
  }

  @Test
  void everyFieldLineCounts() {
    CacheControl cc =
        CacheControl.of(
            Http.headers("Cache-Control", "max-age=10", "cache-control", "must-revalidate"));
    assertThat(cc.maxAge()).isEqualTo(10);
    assertThat(cc.mustRevalidate()).isTrue();
    // a duplicate across lines: the first occurrence counts, as on a single line (§4.2.1)
    assertThat(
            CacheControl.of(
                    Http.headers("Cache-Control", "max-age=10", "Cache-Control", "max-age=5"))
                .maxAge())
        .isEqualTo(10);
    assertThat(CacheControl.parse("max-age=abc, max-age=60").maxAge()).isZero();
  }

  @Test
  void forbidsStaleForEachDirectiveThatSaysSo() {
    assertThat(CacheControl.parse("must-revalidate").forbidsStale()).isTrue();
    assertThat(CacheControl.parse("proxy-revalidate").forbidsStale()).isTrue();
    assertThat(CacheControl.parse("s-maxage=5").forbidsStale()).isTrue();
    assertThat(CacheControl.parse("no-cache").forbidsStale()).isTrue();
    assertThat(CacheControl.parse("max-age=5, public").forbidsStale()).isFalse();
    assertThat(CacheControl.parse("no-cache=\"set-cookie\"").forbidsStale()).isFalse();
  }

  @Test
  void toStringListsWhatWasUnderstood() {
    assertThat(CacheControl.parse("Public, Max-Age=\"5\", no-cache=\"A\"").toString())
        .isEqualTo("no-cache=\"a\", public, max-age=5");
  }
}
