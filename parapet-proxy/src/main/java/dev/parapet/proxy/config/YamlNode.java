package dev.parapet.proxy.config;

import java.util.List;
import java.util.Map;

/**
 * A parsed YAML document as the loader walks it: mappings, sequences and scalars, each remembering
 * where it was written so every problem can point at a line. Scalars keep their source text ({@code
 * off} stays {@code off}, {@code 0.85} stays {@code 0.85}); {@link Scalar#kind} says how YAML typed
 * it.
 */
sealed interface YamlNode {

  Location location();

  /** A short description for "must be a mapping, was a list" messages. */
  String describe();

  /** Where a node starts in the file (1-based). */
  record Location(int line, int column) {
    @Override
    public String toString() {
      return line + ":" + column;
    }
  }

  /** A key of a mapping with the key's own location. */
  record Entry(String key, Location keyLocation, YamlNode value) {}

  record Mapping(Map<String, Entry> entries, Location location) implements YamlNode {
    @Override
    public String describe() {
      return "a mapping";
    }
  }

  record Sequence(List<YamlNode> items, Location location) implements YamlNode {
    @Override
    public String describe() {
      return "a list";
    }
  }

  record Scalar(String text, Kind kind, Location location) implements YamlNode {
    /** How YAML typed the scalar. */
    enum Kind {
      STRING,
      INTEGER,
      FLOAT,
      TRUE,
      FALSE,
      NULL,
      /** A YAML alias ({@code *name}), already reported: reads as absent, but is not missing. */
      ALIAS
    }

    boolean isNull() {
      return kind == Kind.NULL || kind == Kind.ALIAS;
    }

    @Override
    public String describe() {
      return kind == Kind.STRING ? "'" + text + "'" : text;
    }
  }
}
