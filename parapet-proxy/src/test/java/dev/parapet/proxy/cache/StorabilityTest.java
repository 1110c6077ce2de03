package dev.parapet.proxy.cache;

import static dev.parapet.proxy.cache.Http.SECOND;
import static dev.parapet.proxy.cache.Http.headers;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** RFC 9111 §3 for a shared cache, one row per rule (request headers | status | response). */
class StorabilityTest {

  @ParameterizedTest(name = "{0} [{1}] {2} [{3}] ttl={4} => {5}")
  @CsvSource(
      delimiter = '|',
      value = {
        // method | request | status | response | default ttl s | expected
        "GET  |                         | 200 | Cache-Control: max-age=60 | 0  | STORE",
        "HEAD |                         | 200 | Cache-Control: max-age=60 | 0  | METHOD",
        "POST |                         | 200 | Cache-Control: max-age=60 | 0  | METHOD",
        "GET  |                         | 206 | Cache-Control: max-age=60 | 0  | STATUS",
        "GET  |                         | 304 | Cache-Control: max-age=60 | 0  | STATUS",
        "GET  |                         | 302 | Cache-Control: max-age=60 | 0  | STORE",
        "GET  |                         | 503 | Cache-Control: max-age=5  | 0  | STORE",
        "GET  |                         | 200 | Cache-Control: no-store, max-age=60 | 0 | NO_STORE",
        "GET  | Cache-Control: no-store | 200 | Cache-Control: max-age=60 | 0  | NO_STORE",
        "GET  |                         | 200 | Cache-Control: private, max-age=60 | 0 | PRIVATE",
        "GET  |                         | 200 | Cache-Control: private=\"X-User\", max-age=60 | 0 | STORE",
        "GET  | Authorization: Basic x  | 200 | Cache-Control: max-age=60 | 0  | AUTHORIZATION",
        "GET  | Authorization: Basic x  | 200 | Cache-Control: max-age=60, public | 0 | STORE",
        "GET  | Authorization: Basic x  | 200 | Cache-Control: s-maxage=60 | 0 | STORE",
        "GET  | Authorization: Basic x  | 200 | Cache-Control: max-age=60, must-revalidate | 0 | STORE",
        "GET  | Authorization: Basic x  | 200 |                           | 60 | AUTHORIZATION",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: max-age=60 | 0 | SET_COOKIE",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: max-age=60 | 60 | SET_COOKIE",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: public, max-age=60 | 0 | STORE",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: s-maxage=60 | 0 | STORE",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: no-cache=\"Set-Cookie\", max-age=60 | 0 | STORE",
        "GET  |                         | 200 | Set-Cookie: s=1; Cache-Control: private=\"set-cookie\", max-age=60 | 0 | STORE",
        "GET  |                         | 200 | Vary: *; Cache-Control: max-age=60 | 0 | VARY_STAR",
        "GET  |                         | 200 | Vary: Accept, *; Cache-Control: max-age=60 | 0 | VARY_STAR",
        "GET  |                         | 200 | Vary: Accept-Encoding; Cache-Control: max-age=60 | 0 | STORE",
        "GET  |                         | 200 |                           | 0  | NO_FRESHNESS",
        "GET  |                         | 200 |                           | 60 | STORE",
        "GET  |                         | 404 |                           | 60 | STORE",
        "GET  |                         | 302 |                           | 60 | NO_FRESHNESS",
        "GET  |                         | 500 |                           | 60 | NO_FRESHNESS",
        "GET  |                         | 302 | Cache-Control: public     | 60 | STORE",
        "GET  |                         | 200 | Expires: Thu, 01 Jan 2099 00:00:00 GMT | 0 | STORE",
        "GET  |                         | 200 | Cache-Control: no-cache   | 0  | NO_FRESHNESS",
        "GET  |                         | 200 | Cache-Control: no-cache, max-age=60 | 0 | STORE",
        // no-cache with a validator: stored, validated before each use (§5.2.2.4)
        "GET  |                         | 200 | Cache-Control: no-cache; ETag: \"v1\" | 0 | STORE",
        "GET  |                         | 200 | Cache-Control: no-cache; Last-Modified: Thu, 01 Jan 2015 00:00:00 GMT | 0 | STORE",
        // must-understand (§5.2.2.3): no-store ignored for a status understood, else not stored
        "GET  |                         | 200 | Cache-Control: must-understand, no-store, max-age=60 | 0 | STORE",
        "GET  |                         | 299 | Cache-Control: must-understand, no-store, max-age=60 | 0 | STATUS",
        "GET  |                         | 299 | Cache-Control: max-age=60 | 0 | STORE",
        "GET  | Cache-Control: no-store | 200 | Cache-Control: must-understand, max-age=60 | 0 | NO_STORE",
      })
  void matrix(
      String method,
      String request,
      int status,
      String response,
      int defaultTtlSeconds,
      Storability expected) {
    Storability got =
        Storability.of(
            HttpMethod.valueOf(method),
            parse(request),
            status,
            parse(response),
            defaultTtlSeconds * SECOND);
    assertThat(got).isEqualTo(expected);
    assertThat(got.isStorable()).isEqualTo(expected == Storability.STORE);
  }

  /** "Name: value; Name: value" (a value may hold commas, not semicolons). */
  private static HttpHeaders parse(String spec) {
    HttpHeaders h = headers();
    if (spec == null || spec.isBlank()) {
      return h;
    }
    for (String field : spec.split(";")) {
      int colon = field.indexOf(':');
      String name = field.substring(0, colon).trim();
      String value = field.substring(colon + 1).trim();
      h.add(name, value);
    }
    return h;
  }
}
