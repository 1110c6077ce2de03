package dev.parapet.proxy.cache;

import dev.parapet.core.time.HttpDate;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;

/** Test helpers: headers from name/value pairs, responses at fixed times. */
final class Http {
  /** Wall clock of the tests: 2023-11-14T22:13:20Z. */
  static final long WALL = 1_700_000_000_000L;

  /** Monotonic start near the wrap-around, so every subtraction is exercised across it. */
  static final long T0 = Long.MAX_VALUE - 5_000_000_000L;

  static final long SECOND = 1_000_000_000L;

  private Http() {}

  static HttpHeaders headers(String... pairs) {
    HttpHeaders h = new DefaultHttpHeaders();
    for (int i = 0; i < pairs.length; i += 2) {
      h.add(pairs[i], pairs[i + 1]);
    }
    return h;
  }

  /** A 200 received at T0 (sent at T0), Date = WALL unless given. */
  static CachedResponse response(String... pairs) {
    return response(200, headers(), pairs);
  }

  static CachedResponse response(int status, HttpHeaders request, String... pairs) {
    HttpHeaders h = headers(pairs);
    if (!h.contains("date")) {
      h.set("date", HttpDate.format(WALL));
    }
    return CachedResponse.of(status, h, "hello".getBytes(), request, T0, T0, WALL, 0);
  }
}
