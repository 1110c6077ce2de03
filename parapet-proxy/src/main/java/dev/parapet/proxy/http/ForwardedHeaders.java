package dev.parapet.proxy.http;

import dev.parapet.proxy.http1.HeaderList;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Header rules at a hop (RFC 9110 §7.6.1): connection-specific fields — the fixed hop-by-hop set
 * and every field named in {@code Connection} — are removed before forwarding in either direction;
 * {@code Via} gets this hop appended. A request from a peer that is not a trusted tier loses every
 * internal signal first ({@link #stripInternalSignals}).
 */
public final class ForwardedHeaders {
  // AsciiString constants: their hash is computed once, not on every request's removal.
  private static final AsciiString[] HOP_BY_HOP = {
    HttpHeaderNames.CONNECTION,
    HttpHeaderNames.KEEP_ALIVE,
    AsciiString.cached("proxy-connection"),
    HttpHeaderNames.TE,
    HttpHeaderNames.TRAILER,
    HttpHeaderNames.TRANSFER_ENCODING,
    HttpHeaderNames.UPGRADE,
    HttpHeaderNames.PROXY_AUTHORIZATION,
    HttpHeaderNames.PROXY_AUTHENTICATE
  };

  /**
   * What this proxy, the tier behind it or the origin act on as facts about the request rather than
   * as its content: forwarding headers (the client's address, scheme, host and port as an earlier
   * hop saw them, RFC 7239 and its de-facto predecessors), the URL rewrites some origin frameworks
   * obey ({@code X-Original-URL}, {@code X-Rewrite-URL}: an access-control bypass when a client
   * sets them), the request id, and this proxy's own deadline. The priority header is configurable
   * and passed separately. {@code X-Forwarded-For} and {@code X-Forwarded-Proto} are then written
   * by this hop ({@code OutboundRequest}).
   */
  private static final AsciiString[] INTERNAL_SIGNALS = {
    AsciiString.cached("forwarded"),
    AsciiString.cached("x-forwarded-for"),
    AsciiString.cached("x-forwarded-host"),
    AsciiString.cached("x-forwarded-proto"),
    AsciiString.cached("x-forwarded-port"),
    AsciiString.cached("x-forwarded-prefix"),
    AsciiString.cached("x-forwarded-server"),
    AsciiString.cached("x-forwarded-scheme"),
    AsciiString.cached("x-real-ip"),
    AsciiString.cached("x-client-ip"),
    AsciiString.cached("true-client-ip"),
    AsciiString.cached("x-original-url"),
    AsciiString.cached("x-rewrite-url"),
    AsciiString.cached("x-original-host"),
    AsciiString.cached("x-request-id"),
    AsciiString.cached("parapet-deadline")
  };

  private ForwardedHeaders() {}

  /**
   * Removes from the request of an untrusted peer every internal signal ({@link #INTERNAL_SIGNALS})
   * and {@code priorityHeader}: a client on the internet must not choose its own priority or
   * deadline, pose as another address, scheme or host, or steer a rewrite. One walk over the fields
   * finds which are present (usually none), so only those are removed.
   */
  public static void stripInternalSignals(HttpHeaders h, AsciiString priorityHeader) {
    int present = 0;
    if (h instanceof HeaderList o) { // by index: no entry objects
      for (int f = 0; f < o.size(); f++) {
        present |= internalSignalBit(o.nameAt(f), priorityHeader);
      }
    } else {
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
          it.hasNext(); ) {
        present |= internalSignalBit(it.next().getKey(), priorityHeader);
      }
    }
    if (present == 0) {
      return;
    }
    for (int i = 0; i < INTERNAL_SIGNALS.length; i++) {
      if ((present & (1 << i)) != 0) {
        h.remove(INTERNAL_SIGNALS[i]);
      }
    }
    if ((present & (1 << INTERNAL_SIGNALS.length)) != 0) {
      h.remove(priorityHeader);
    }
  }

  /**
   * {@code 1 << } the index of {@code name} in {@link #INTERNAL_SIGNALS} ({@code 1 <<} its length
   * for the priority header), or 0.
   */
  private static int internalSignalBit(CharSequence name, AsciiString priorityHeader) {
    if (name.length() == priorityHeader.length() && priorityHeader.contentEqualsIgnoreCase(name)) {
      return 1 << INTERNAL_SIGNALS.length;
    }
    char c = (char) (name.length() == 0 ? 0 : name.charAt(0) | 0x20);
    if (c != 'x' && c != 'f' && c != 't' && c != 'p') {
      return 0; // most fields: Host, Accept*, User-Agent, Cookie, Referer, Cache-Control, ...
    }
    for (int i = 0; i < INTERNAL_SIGNALS.length; i++) {
      AsciiString s = INTERNAL_SIGNALS[i];
      if (s.length() == name.length() && s.contentEqualsIgnoreCase(name)) {
        return 1 << i;
      }
    }
    return 0;
  }

  /**
   * Removes hop-by-hop fields and the fields {@code Connection} names. One walk over the fields
   * finds which are present (most messages carry only {@code Connection: keep-alive}), so only
   * those are removed and the {@code Connection} value is scanned in place, without splitting it.
   */
  public static void stripHopByHop(HttpHeaders h) {
    int present = 0;
    if (h instanceof HeaderList o) { // by index: no entry objects
      for (int f = 0; f < o.size(); f++) {
        present |= hopByHopBit(o.nameAt(f));
      }
    } else {
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
          it.hasNext(); ) {
        present |= hopByHopBit(it.next().getKey());
      }
    }
    @Nullable List<String> named = null;
    if ((present & 1) != 0) { // Connection (HOP_BY_HOP[0]) is there: what does it name?
      for (Iterator<? extends CharSequence> it =
              h.valueCharSequenceIterator(HttpHeaderNames.CONNECTION);
          it.hasNext(); ) {
        named = connectionOptions(it.next(), named);
      }
    }
    for (int i = 0; present != 0; i++, present >>>= 1) {
      if ((present & 1) != 0) {
        h.remove(HOP_BY_HOP[i]);
      }
    }
    if (named != null) {
      for (String n : named) {
        h.remove(n);
      }
    }
  }

  /** {@code 1 << } the index of {@code name} in {@link #HOP_BY_HOP}, or 0. */
  private static int hopByHopBit(CharSequence name) {
    int i = hopByHopIndex(name);
    return i < 0 ? 0 : 1 << i;
  }

  /** The index of {@code name} in {@link #HOP_BY_HOP}, or -1. */
  private static int hopByHopIndex(CharSequence name) {
    int n = name.length();
    if (n != 2 && n != 7 && n != 10 && n < 16) {
      return -1; // no hop-by-hop name has this length (most names: Host, Date, Content-Type, ...)
    }
    for (int i = 0; i < HOP_BY_HOP.length; i++) {
      AsciiString h = HOP_BY_HOP[i];
      if (h.length() == n && h.contentEqualsIgnoreCase(name)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Adds to {@code into} (made when first needed) the field names a {@code Connection} value lists,
   * lowercase, leaving out the hop-by-hop fields removed anyway, {@code keep-alive} and {@code
   * close}, and the end-to-end fields a client must never strip through Connection (Host,
   * Content-Length).
   */
  private static @Nullable List<String> connectionOptions(
      CharSequence value, @Nullable List<String> into) {
    int n = value.length();
    int i = 0;
    while (i < n) {
      int end = i;
      while (end < n && value.charAt(end) != ',') {
        end++;
      }
      int from = i;
      int to = end;
      while (from < to && isOws(value.charAt(from))) {
        from++;
      }
      while (to > from && isOws(value.charAt(to - 1))) {
        to--;
      }
      if (from < to) {
        CharSequence token = value.subSequence(from, to);
        if (hopByHopIndex(token) < 0
            && !AsciiString.contentEqualsIgnoreCase(token, HttpHeaderValues.CLOSE)
            && !AsciiString.contentEqualsIgnoreCase(token, HttpHeaderNames.HOST)
            && !AsciiString.contentEqualsIgnoreCase(token, HttpHeaderNames.CONTENT_LENGTH)) {
          if (into == null) {
            into = new ArrayList<>(2);
          }
          into.add(token.toString().toLowerCase(Locale.ROOT));
        }
      }
      i = end + 1;
    }
    return into;
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  /**
   * This hop's {@code Via} member for a proxy called {@code name}: {@code 1.1 name}, as bytes made
   * once (an AsciiString is written with one copy; a String character by character).
   */
  public static AsciiString viaMember(String name) {
    return viaMember("1.1", name);
  }

  /** This hop's {@code Via} member for a request received as {@code protocol} ({@code 2}). */
  public static AsciiString viaMember(String protocol, String name) {
    return new AsciiString(protocol + " " + name);
  }

  /** Appends this hop's {@code member} (see {@link #viaMember}) to Via. */
  public static void appendVia(HttpHeaders h, AsciiString member) {
    String via = h.get(HttpHeaderNames.VIA);
    h.set(HttpHeaderNames.VIA, via == null || via.isBlank() ? member : via + ", " + member);
  }

  /** True when {@code name} already appears as a received-by in Via: the request looped. */
  public static boolean viaContains(HttpHeaders h, String name) {
    if (!h.contains(HttpHeaderNames.VIA)) {
      return false; // the common case at an edge: no regex, no list
    }
    for (String via : h.getAll(HttpHeaderNames.VIA)) {
      int i = 0;
      int n = via.length();
      while (i < n) {
        int end = via.indexOf(',', i);
        if (end < 0) {
          end = n;
        }
        if (receivedByIs(via, i, end, name)) {
          return true;
        }
        i = end + 1;
      }
    }
    return false;
  }

  /**
   * Whether the Via member in {@code via[from, to)} ({@code protocol received-by [comment]}) names
   * {@code name}.
   */
  private static boolean receivedByIs(String via, int from, int to, String name) {
    int i = from;
    while (i < to && Character.isWhitespace(via.charAt(i))) {
      i++;
    }
    while (i < to && !Character.isWhitespace(via.charAt(i))) {
      i++; // the protocol
    }
    while (i < to && Character.isWhitespace(via.charAt(i))) {
      i++;
    }
    int start = i;
    while (i < to && !Character.isWhitespace(via.charAt(i))) {
      i++; // received-by
    }
    return i - start == name.length() && via.regionMatches(true, start, name, 0, name.length());
  }
}
