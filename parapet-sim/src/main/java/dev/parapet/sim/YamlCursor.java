package dev.parapet.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A read cursor over a parsed YAML tree that knows its path and collects errors instead of
 * throwing, so a file is reported with every problem at once, each as "path: what (expected: ...,
 * was ...)" (DESIGN "Invalid configuration is refused with every error at once, each with its
 * path"). Durations are written like the proxy's configuration ({@code 250ms}, {@code 8s}, {@code
 * 5m}); rates as {@code 20%} or a fraction.
 */
final class YamlCursor {
  private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

  private final @Nullable JsonNode node;
  private final String path;
  private final List<String> errors;

  YamlCursor(@Nullable JsonNode node, String path, List<String> errors) {
    this.node = node;
    this.path = path;
    this.errors = errors;
  }

  String path() {
    return path;
  }

  boolean present() {
    return node != null && !node.isNull() && !node.isMissingNode();
  }

  void error(String message) {
    errors.add((path.isEmpty() ? "(root)" : path) + ": " + message);
  }

  private String child(String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  /** The field {@code key} of this mapping (possibly absent). */
  YamlCursor get(String key) {
    JsonNode n = node;
    return new YamlCursor(n == null ? null : n.get(key), child(key), errors);
  }

  /** Reports every key of this mapping that is not in {@code known}. */
  void allowOnly(Set<String> known) {
    JsonNode n = node;
    if (n == null || !n.isObject()) {
      if (present()) {
        error("must be a mapping, was " + describe(n));
      }
      return;
    }
    Iterator<String> names = n.fieldNames();
    while (names.hasNext()) {
      String k = names.next();
      if (!known.contains(k)) {
        errors.add(
            child(k) + ": unknown key (expected one of " + new java.util.TreeSet<>(known) + ")");
      }
    }
  }

  List<YamlCursor> list() {
    List<YamlCursor> out = new ArrayList<>();
    JsonNode n = node;
    if (n == null || !present()) {
      return out;
    }
    if (!n.isArray()) {
      error("must be a list, was " + describe(n));
      return out;
    }
    for (int i = 0; i < n.size(); i++) {
      out.add(new YamlCursor(n.get(i), path + "[" + i + "]", errors));
    }
    return out;
  }

  /** Whether this node is a string (not a number, a mapping or a list). */
  boolean isText() {
    JsonNode n = node;
    return n != null && n.isTextual();
  }

  String text(String dflt) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    if (!n.isValueNode()) {
      error("must be a string, was " + describe(n));
      return dflt;
    }
    return n.asText();
  }

  String requiredText() {
    if (!present()) {
      error("required (expected: a string)");
      return "";
    }
    return text("");
  }

  long integer(long dflt, long min, long max) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    if (!n.canConvertToLong() || !n.isIntegralNumber()) {
      error("must be an integer in [" + min + ", " + max + "], was " + describe(n));
      return dflt;
    }
    long v = n.asLong();
    if (v < min || v > max) {
      error("must be in [" + min + ", " + max + "], was " + v);
      return dflt;
    }
    return v;
  }

  double number(double dflt, double min, double max) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    if (!n.isNumber()) {
      error("must be a number in [" + min + ", " + max + "], was " + describe(n));
      return dflt;
    }
    double v = n.asDouble();
    if (!(v >= min && v <= max)) {
      error("must be in [" + min + ", " + max + "], was " + n.asText());
      return dflt;
    }
    return v;
  }

  /** A rate: {@code 20%} or {@code 0.2}, within [min, max] as a fraction. */
  double rate(double dflt, double min, double max) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    double v;
    String t = n.asText().trim();
    try {
      v =
          t.endsWith("%")
              ? Double.parseDouble(t.substring(0, t.length() - 1)) / 100.0
              : n.isNumber() ? n.asDouble() : Double.parseDouble(t);
    } catch (NumberFormatException e) {
      error("must be a rate like 20% or 0.2, was " + describe(n));
      return dflt;
    }
    if (!(v >= min && v <= max)) {
      error(
          String.format(
              Locale.ROOT, "must be in [%s%%, %s%%], was %s", pctText(min), pctText(max), t));
      return dflt;
    }
    return v;
  }

  private static String pctText(double f) {
    double p = f * 100;
    return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
  }

  boolean bool(boolean dflt) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      error("must be true or false, was " + describe(n));
      return dflt;
    }
    return n.asBoolean();
  }

  /** A duration like {@code 250ms}, {@code 8s}, {@code 5m}, {@code 1h}; must be > 0. */
  Duration duration(Duration dflt) {
    JsonNode n = node;
    if (n == null || !present()) {
      return dflt;
    }
    Matcher m = DURATION.matcher(n.asText().trim());
    if (!n.isTextual() || !m.matches()) {
      error("must be a duration like 250ms, 8s or 5m, was " + describe(n));
      return dflt;
    }
    double v = Double.parseDouble(m.group(1));
    double millis =
        switch (m.group(2)) {
          case "ms" -> v;
          case "s" -> v * 1000;
          case "m" -> v * 60_000;
          default -> v * 3_600_000;
        };
    if (!(millis > 0)) {
      error("must be > 0, was " + n.asText());
      return dflt;
    }
    return Duration.ofNanos((long) (millis * 1_000_000L));
  }

  private static String describe(@Nullable JsonNode n) {
    if (n == null) {
      return "nothing";
    }
    if (n.isObject()) {
      return "a mapping";
    }
    if (n.isArray()) {
      return "a list";
    }
    return n.isTextual() ? "'" + n.asText() + "'" : n.asText();
  }
}
