package dev.parapet.proxy.flow;

import dev.parapet.core.time.RandomSource;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The {@code X-Request-Id} of every request, and the number the core carries for it.
 *
 * <p>The core knows a request by a {@code long} (a breaker permit's id, a transition event's {@code
 * requestId}); the proxy and the tiers around it know it by the text of {@code X-Request-Id}. A
 * request that arrives without one (or from an untrusted peer, whose id was stripped at the trust
 * boundary) gets a generated id that <i>is</i> its number, written as 16 hex digits, so nothing is
 * stored. A trusted peer's id is adopted: its text is kept beside the number while the request is
 * in flight, so a breaker transition the request causes names the id the tier in front logged.
 *
 * <p>Numbers start at a random point per process, so ids of two proxies (or two runs) do not
 * collide, and never repeat across a reload.
 */
public final class RequestIds {
  /** The field's name. */
  public static final String HEADER = "X-Request-Id";

  private static final int MAX_LENGTH = 128;
  private static final HexFormat HEX = HexFormat.of();

  private final AtomicLong next;
  private final ConcurrentHashMap<Long, String> adopted = new ConcurrentHashMap<>();

  public RequestIds(RandomSource random) {
    long start = random.nextLong(Long.MAX_VALUE);
    this.next = new AtomicLong(start == 0 ? 1 : start);
  }

  /** A new number, never 0 (which the core uses for "no request"). */
  public long next() {
    long id = next.getAndIncrement();
    return id == 0 ? next.getAndIncrement() : id;
  }

  /** The generated id of {@code id}: 16 lower-case hex digits. */
  public static String format(long id) {
    // Once per request: HexFormat makes the String around its own byte array, without the char[]
    // and the copy a String made of one takes.
    return HEX.toHexDigits(id);
  }

  /**
   * Keeps a trusted peer's id for {@code id} until {@link #release}; false (nothing kept) when the
   * text is not a usable id: empty, longer than 128 characters, or not visible ASCII.
   */
  public boolean adopt(long id, String text) {
    if (!usable(text)) {
      return false;
    }
    adopted.put(id, text);
    return true;
  }

  /** Forgets an adopted id (the request ended). */
  public void release(long id) {
    adopted.remove(id);
  }

  /** The {@code X-Request-Id} of request {@code id}; null for 0 (no request). */
  public @Nullable String name(long id) {
    if (id == 0) {
      return null;
    }
    String a = adopted.get(id);
    return a != null ? a : format(id);
  }

  static boolean usable(String text) {
    if (text.isEmpty() || text.length() > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c <= ' ' || c > '~') {
        return false;
      }
    }
    return true;
  }
}
