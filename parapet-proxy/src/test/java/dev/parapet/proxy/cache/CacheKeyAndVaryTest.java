package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.api.Test;

/** RFC 9111 §4.1: primary key (target URI) and secondary key (Vary). */
class CacheKeyAndVaryTest {

  @Test
  void hostIsLowerCasedWithoutDefaultPortOrTrailingDot() {
    assertThat(CacheKey.of("Shop.Example.COM:80", "/a?b=1"))
        .isEqualTo(CacheKey.of("shop.example.com", "/a?b=1"))
        .isEqualTo(CacheKey.of("shop.example.com.", "/a?b=1"));
    assertThat(CacheKey.of("shop.example.com:8080", "/a"))
        .isNotEqualTo(CacheKey.of("shop.example.com", "/a"));
    assertThat(CacheKey.of("[::1]:80", "/").host()).isEqualTo("[::1]");
  }

  @Test
  void theSchemeIsPartOfTheKeyWithItsOwnDefaultPort() {
    CacheKey https = CacheKey.of("Shop.Example.com:443", "/a", true);
    assertThat(https).isEqualTo(CacheKey.of("shop.example.com", "/a", true));
    assertThat(https).isNotEqualTo(CacheKey.of("shop.example.com", "/a", false));
    assertThat(https.toString()).isEqualTo("https://shop.example.com/a");
    // :443 is not http's default port, nor :80 https's.
    assertThat(CacheKey.of("h:443", "/", false).host()).isEqualTo("h:443");
    assertThat(CacheKey.of("h:80", "/", true).host()).isEqualTo("h:80");
    assertThat(CacheKey.of("h", "/")).isEqualTo(new CacheKey("h", "/", false));
  }

  @Test
  void aPurgeByUrlOrPrefixCoversBothSchemes() {
    assertThat(Purge.key("https://h/a", true)).isEqualTo(CacheKey.of("h", "/a", true));
    assertThat(Purge.key("https://h/a", false)).isEqualTo(CacheKey.of("h", "/a", false));
    assertThat(Purge.key("http://h:443/a", true)).isEqualTo(CacheKey.of("h", "/a", true));
  }

  @Test
  void pathAndQueryAreKeptByteForByte() {
    assertThat(CacheKey.of("h", "/a?x=1&y=2")).isNotEqualTo(CacheKey.of("h", "/a?y=2&x=1"));
    assertThat(CacheKey.of("h", "/A")).isNotEqualTo(CacheKey.of("h", "/a"));
    assertThat(CacheKey.of("h", "/a%2Fb")).isNotEqualTo(CacheKey.of("h", "/a/b"));
    assertThat(CacheKey.of("h", "").target()).isEqualTo("/");
  }

  @Test
  void methodsThatLookUpAndMethodsThatInvalidate() {
    assertThat(CacheKey.isLookupMethod(HttpMethod.GET)).isTrue();
    assertThat(CacheKey.isLookupMethod(HttpMethod.HEAD)).isTrue();
    assertThat(CacheKey.isLookupMethod(HttpMethod.POST)).isFalse();
    for (HttpMethod m :
        new HttpMethod[] {
          HttpMethod.POST,
          HttpMethod.PUT,
          HttpMethod.DELETE,
          HttpMethod.PATCH,
          HttpMethod.valueOf("PURGEX")
        }) {
      assertThat(CacheKey.isUnsafe(m)).as(m.name()).isTrue();
    }
    assertThat(CacheKey.isUnsafe(HttpMethod.GET)).isFalse();
    assertThat(CacheKey.isUnsafe(HttpMethod.OPTIONS)).isFalse();
  }

  @Test
  void varyNamesAreCaseInsensitiveSortedAndDistinct() {
    assertThat(
            VaryKey.fieldNames(
                headers("Vary", "User-Agent, accept-encoding", "vary", "Accept-Encoding")))
        .containsExactly("accept-encoding", "user-agent");
    assertThat(VaryKey.fieldNames(headers())).isEmpty();
    assertThat(VaryKey.isStar(headers("Vary", "Accept, *"))).isTrue();
    assertThat(VaryKey.isStar(headers("Vary", "Accept"))).isFalse();
  }

  @Test
  void secondaryKeyNormalizesWhitespaceLinesAndNameCase() {
    var names = VaryKey.fieldNames(headers("Vary", "Accept-Language"));
    String a = VaryKey.of(names, headers("Accept-Language", "en-US,  fr ;q=0.5"));
    String b = VaryKey.of(names, headers("accept-language", "en-US , fr;q=0.5"));
    String c =
        VaryKey.of(names, headers("Accept-Language", "en-US", "Accept-Language", "fr;q=0.5"));
    assertThat(a).isEqualTo(b).isEqualTo(c);
    assertThat(VaryKey.of(names, headers("Accept-Language", "de"))).isNotEqualTo(a);
  }

  @Test
  void absentFieldMatchesOnlyAbsentNotEmpty() {
    var names = VaryKey.fieldNames(headers("Vary", "X-Variant"));
    String absent = VaryKey.of(names, headers());
    String empty = VaryKey.of(names, headers("X-Variant", ""));
    assertThat(absent).isNotEqualTo(empty).isEqualTo(VaryKey.of(names, headers("Other", "1")));
  }

  @Test
  void acceptEncodingValuesAreCaseInsensitiveOthersAreNot() {
    var ae = VaryKey.fieldNames(headers("Vary", "Accept-Encoding"));
    assertThat(VaryKey.of(ae, headers("Accept-Encoding", "GZIP, br")))
        .isEqualTo(VaryKey.of(ae, headers("Accept-Encoding", "gzip,br")));
    var ua = VaryKey.fieldNames(headers("Vary", "X-Theme"));
    assertThat(VaryKey.of(ua, headers("X-Theme", "Dark")))
        .isNotEqualTo(VaryKey.of(ua, headers("X-Theme", "dark")));
  }
}
