package dev.parapet.proxy.cache;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** RFC 9211 members, serialized as RFC 8941 list members. */
class CacheStatusTest {

  @Test
  void freshHit() {
    assertThat(CacheStatus.of("edge-1").hit().ttl(42).toString()).isEqualTo("edge-1; hit; ttl=42");
  }

  @Test
  void staleHitWithDetail() {
    assertThat(CacheStatus.of("edge-1").hit().ttl(-42).detail("stale breaker-open").toString())
        .isEqualTo("edge-1; hit; ttl=-42; detail=\"stale breaker-open\"");
  }

  @Test
  void missStoredAndForwardedStatus() {
    assertThat(CacheStatus.of("edge-1").fwd(CacheStatus.Fwd.MISS).stored().toString())
        .isEqualTo("edge-1; fwd=miss; stored");
    assertThat(
            CacheStatus.of("edge-1")
                .fwd(CacheStatus.Fwd.STALE)
                .fwdStatus(503)
                .ttl(-5)
                .detail("stale-if-error")
                .toString())
        .isEqualTo("edge-1; fwd=stale; fwd-status=503; ttl=-5; detail=stale-if-error");
    assertThat(CacheStatus.of("e").fwd(CacheStatus.Fwd.URI_MISS).collapsed().toString())
        .isEqualTo("e; fwd=uri-miss; collapsed");
    assertThat(CacheStatus.of("e").fwd(CacheStatus.Fwd.VARY_MISS).toString())
        .isEqualTo("e; fwd=vary-miss");
  }

  @Test
  void tokensStayTokensOthersBecomeEscapedStrings() {
    assertThat(CacheStatus.of("cdn.example/edge:1").hit().toString())
        .isEqualTo("cdn.example/edge:1; hit");
    assertThat(CacheStatus.of("1edge").hit().toString()).isEqualTo("\"1edge\"; hit");
    assertThat(CacheStatus.of("my cache").detail("a \"q\" \\ b\u00e9\n").toString())
        .isEqualTo("\"my cache\"; detail=\"a \\\"q\\\" \\\\ b??\"");
    assertThat(CacheStatus.isToken("")).isFalse();
    assertThat(CacheStatus.isToken("*x")).isTrue();
  }

  @Test
  void appendsAfterTheUpstreamMembers() {
    CacheStatus ours = CacheStatus.of("edge-1").hit().ttl(3);
    assertThat(CacheStatus.append(null, ours)).isEqualTo("edge-1; hit; ttl=3");
    assertThat(CacheStatus.append(" shield-1; fwd=miss; stored ", ours))
        .isEqualTo("shield-1; fwd=miss; stored, edge-1; hit; ttl=3");
  }
}
