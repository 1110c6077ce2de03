package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Reads one YAML mapping at a known path, field by field, starting from a base value for each field
 * (the default, or for a route's breaker the origin's value). A bad field is reported as a problem
 * at its path and the base value is returned, so reading always continues and every mistake in the
 * file is found in one pass. Keys the block does not know are reported with the closest known key.
 */
final class MappingReader {
  /** The upper bound of most counts (limits, queue lengths, request minimums). */
  static final int MAX_COUNT = 1_000_000;

  private final String path;
  private final YamlNode.@Nullable Mapping mapping;
  private final YamlNode.Location location;
  private final List<ConfigProblem> problems;
  private final Set<String> failed = new HashSet<>();

  private MappingReader(
      String path,
      YamlNode.@Nullable Mapping mapping,
      YamlNode.Location location,
      List<ConfigProblem> problems) {
    this.path = path;
    this.mapping = mapping;
    this.location = location;
    this.problems = problems;
  }

  /**
   * A reader for {@code node} at {@code path}; an absent or null node reads as an empty block (all
   * base values), anything but a mapping is reported.
   */
  static MappingReader of(
      @Nullable YamlNode node,
      String path,
      YamlNode.Location location,
      List<ConfigProblem> problems,
      Set<String> keys) {
    if (node == null || (node instanceof YamlNode.Scalar s && s.isNull())) {
      return new MappingReader(path, null, location, problems);
    }
    if (!(node instanceof YamlNode.Mapping m)) {
      problems.add(
          ConfigProblem.error(
              path,
              "must be a mapping with keys " + String.join(", ", keys) + ", was " + node.describe(),
              node.location()));
      return new MappingReader(path, null, node.location(), problems);
    }
    for (YamlNode.Entry e : m.entries().values()) {
      if (!keys.contains(e.key())) {
        Optional<String> near = Spelling.closest(e.key(), keys);
        problems.add(
            ConfigProblem.error(
                join(path, e.key()),
                "unknown key '"
                    + e.key()
                    + "' "
                    + near.map(k -> "(did you mean '" + k + "'?)")
                        .orElse("(known: " + String.join(", ", keys) + ")"),
                e.keyLocation()));
      }
    }
    return new MappingReader(path, m, m.location(), problems);
  }

  /** The keys a block knows, in the order messages list them. */
  static Set<String> keys(String... names) {
    return new LinkedHashSet<>(List.of(names));
  }

  static String join(String path, String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  String path() {
    return path;
  }

  String path(String key) {
    return join(path, key);
  }

  YamlNode.Location location() {
    return location;
  }

  List<ConfigProblem> problems() {
    return problems;
  }

  /** The value at {@code key}, or null when absent or written as null ({@code ~}). */
  @Nullable YamlNode node(String key) {
    if (mapping == null) {
      return null;
    }
    YamlNode.Entry e = mapping.entries().get(key);
    if (e == null || (e.value() instanceof YamlNode.Scalar s && s.isNull())) {
      return null;
    }
    return e.value();
  }

  boolean has(String key) {
    return node(key) != null;
  }

  /**
   * True when a required {@code key} is absent or null; false for an alias, which was already
   * reported where it is written.
   */
  boolean missing(String key) {
    if (mapping == null) {
      return true;
    }
    YamlNode.Entry e = mapping.entries().get(key);
    return e == null
        || (e.value() instanceof YamlNode.Scalar s && s.kind() == YamlNode.Scalar.Kind.NULL);
  }

  /** Where {@code key}'s value is, else where this block is. */
  YamlNode.Location location(String key) {
    YamlNode n = node(key);
    return n != null ? n.location() : location;
  }

  /** True when any of {@code keys} was reported as wrong (so checks across fields skip it). */
  boolean failed(String... keys) {
    for (String k : keys) {
      if (failed.contains(k)) {
        return true;
      }
    }
    return false;
  }

  void error(String key, String message) {
    failed.add(key);
    problems.add(ConfigProblem.error(path(key), message, location(key)));
  }

  void warning(String key, String message) {
    problems.add(ConfigProblem.warning(path(key), message, location(key)));
  }

  MappingReader mapping(String key, Set<String> keys) {
    return of(node(key), path(key), location(key), problems, keys);
  }

  /** The scalar at {@code key}, or null (absent, or reported as not a scalar). */
  YamlNode.@Nullable Scalar scalar(String key, String expected) {
    YamlNode n = node(key);
    if (n == null) {
      return null;
    }
    if (n instanceof YamlNode.Scalar s) {
      return s;
    }
    error(key, "must be " + expected + ", was " + n.describe());
    return null;
  }

  /** Parses the scalar at {@code key} with {@code parser}, whose exception message is the error. */
  <T> T parsed(String key, T base, String expected, Function<String, T> parser) {
    YamlNode.Scalar s = scalar(key, expected);
    if (s == null) {
      return base;
    }
    try {
      return parser.apply(s.text());
    } catch (IllegalArgumentException e) {
      error(key, String.valueOf(e.getMessage()));
      return base;
    }
  }

  Duration duration(String key, Duration base) {
    YamlNode.Scalar s = scalar(key, "a duration like 250ms, 3s, 5m or 1h");
    if (s == null) {
      return base;
    }
    if (s.kind() == YamlNode.Scalar.Kind.INTEGER || s.kind() == YamlNode.Scalar.Kind.FLOAT) {
      error(
          key,
          "must be a duration with a unit like "
              + s.text()
              + "s or "
              + s.text()
              + "ms, was "
              + s.text());
      return base;
    }
    try {
      return HumanDuration.parse(s.text());
    } catch (IllegalArgumentException e) {
      error(key, String.valueOf(e.getMessage()));
      return base;
    }
  }

  Duration positiveDuration(String key, Duration base) {
    Duration d = duration(key, base);
    if (has(key) && !failed(key) && d.isZero()) {
      error(key, "must be > 0s, was " + HumanDuration.format(d));
      return base;
    }
    return d;
  }

  int integer(String key, int base, int min, int max) {
    YamlNode.Scalar s = scalar(key, "a whole number");
    if (s == null) {
      return base;
    }
    long v;
    try {
      v = Long.parseLong(s.text().trim());
    } catch (NumberFormatException e) {
      error(key, "must be a whole number, was " + s.describe());
      return base;
    }
    if (v < min || v > max) {
      error(key, "must be in [" + min + ", " + max + "], was " + v);
      return base;
    }
    return (int) v;
  }

  /** The bounds of a share, as the messages print them. */
  enum ShareRange {
    /** (0%, 100%]: a rate that must be able to trip. */
    ABOVE_ZERO(false, true),
    /** [0%, 100%]. */
    ANY(true, true),
    /** [0%, 100%): a jitter, which must leave something. */
    BELOW_ALL(true, false);

    private final boolean zeroIncluded;
    private final boolean allIncluded;

    ShareRange(boolean zeroIncluded, boolean allIncluded) {
      this.zeroIncluded = zeroIncluded;
      this.allIncluded = allIncluded;
    }

    boolean contains(double v) {
      return (zeroIncluded ? v >= 0 : v > 0) && (allIncluded ? v <= 1 : v < 1);
    }

    /** {@code (0%, 100%]} for a value written as a percentage, {@code (0, 1]} for a fraction. */
    String describe(boolean asPercent) {
      return (zeroIncluded ? "[" : "(")
          + (asPercent ? "0%, 100%" : "0, 1")
          + (allIncluded ? "]" : ")");
    }
  }

  /** A share written as a percentage ({@code 20%}), within {@code range}. */
  double percent(String key, double base, ShareRange range) {
    return share(key, base, range, false);
  }

  /** A share written as a percentage ({@code 85%}) or a fraction ({@code 0.85}). */
  double percentOrFraction(String key, double base, ShareRange range) {
    return share(key, base, range, true);
  }

  private double share(String key, double base, ShareRange range, boolean fractionAllowed) {
    YamlNode.Scalar s = scalar(key, "a percentage like 20%");
    if (s == null) {
      return base;
    }
    double v;
    try {
      v = Percent.parse(s.text(), fractionAllowed);
    } catch (IllegalArgumentException e) {
      error(key, String.valueOf(e.getMessage()));
      return base;
    }
    if (!range.contains(v)) {
      String written = s.text().trim();
      error(key, "must be in " + range.describe(written.endsWith("%")) + ", was " + written);
      return base;
    }
    return v;
  }

  String string(String key, String base) {
    YamlNode.Scalar s = scalar(key, "a string");
    if (s == null) {
      return base;
    }
    if (s.text().isBlank()) {
      error(key, "must not be empty");
      return base;
    }
    return s.text();
  }

  /** One of {@code values}, written as its lower-case name ({@code round_robin}). */
  <E extends Enum<E>> E choice(String key, E base, E[] values) {
    List<String> names = new ArrayList<>();
    for (E e : values) {
      names.add(e.name().toLowerCase(Locale.ROOT));
    }
    YamlNode.Scalar s = scalar(key, "one of " + String.join(", ", names));
    if (s == null) {
      return base;
    }
    String t = s.text().trim().toLowerCase(Locale.ROOT);
    int i = names.indexOf(t);
    if (i >= 0) {
      return values[i];
    }
    error(
        key,
        "must be one of "
            + String.join(", ", names)
            + ", was "
            + s.describe()
            + Spelling.closest(t, names).map(n -> " (did you mean '" + n + "'?)").orElse(""));
    return base;
  }

  HostPort hostPort(String key, HostPort base) {
    return parsed(key, base, "host:port", HostPort::parse);
  }

  /** The list at {@code key} (a single scalar counts as a one-item list); empty when absent. */
  List<YamlNode> list(String key, String expected) {
    YamlNode n = node(key);
    if (n == null) {
      return List.of();
    }
    if (n instanceof YamlNode.Sequence seq) {
      return seq.items();
    }
    if (n instanceof YamlNode.Scalar) {
      return List.of(n);
    }
    error(key, "must be a list of " + expected + ", was " + n.describe());
    return List.of();
  }

  /**
   * The networks listed at {@code key} ({@code [10.0.0.0/8, fd00::/8]}), {@code base} when absent;
   * each bad item is an error at its own path ({@code key[i]}).
   */
  List<Cidr> cidrs(String key, List<Cidr> base) {
    if (!has(key)) {
      return base;
    }
    List<Cidr> out = new ArrayList<>();
    List<YamlNode> items = list(key, "CIDRs like 10.0.0.0/8");
    for (int i = 0; i < items.size(); i++) {
      YamlNode item = items.get(i);
      String at = path(key) + "[" + i + "]";
      if (!(item instanceof YamlNode.Scalar s)) {
        problems.add(
            ConfigProblem.error(
                at, "must be a CIDR like 10.0.0.0/8, was " + item.describe(), item.location()));
        continue;
      }
      try {
        out.add(Cidr.parse(s.text()));
      } catch (IllegalArgumentException e) {
        problems.add(ConfigProblem.error(at, String.valueOf(e.getMessage()), s.location()));
      }
    }
    return out;
  }

  /**
   * The block at {@code key} of a feature that can be switched: {@code key: on} (or {@code true})
   * reads as an empty block, i.e. the feature with its defaults.
   */
  MappingReader switchedOn(String key, Set<String> keys) {
    if (node(key) instanceof YamlNode.Scalar s && s.kind() == YamlNode.Scalar.Kind.TRUE) {
      return of(null, path(key), s.location(), problems, keys);
    }
    return mapping(key, keys);
  }

  /** {@code key: off} (or {@code false}): the feature is switched off. */
  boolean isOff(String key) {
    return node(key) instanceof YamlNode.Scalar s
        && (s.kind() == YamlNode.Scalar.Kind.FALSE || s.text().trim().equalsIgnoreCase("off"));
  }

  /**
   * Reports {@code max < min} at {@code maxKey}; true when they are in order (or already failed).
   */
  boolean checkOrder(String minKey, Duration min, String maxKey, Duration max, String minName) {
    if (!failed(minKey, maxKey) && max.compareTo(min) < 0) {
      error(
          maxKey,
          "must be >= "
              + minName
              + " ("
              + HumanDuration.format(min)
              + "), was "
              + HumanDuration.format(max));
      return false;
    }
    return true;
  }
}
