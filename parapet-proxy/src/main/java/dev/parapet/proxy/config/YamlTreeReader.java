package dev.parapet.proxy.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link YamlNode} tree from Jackson's streaming YAML parser. Jackson's own {@code
 * JsonNode} tree forgets where each value was written and silently keeps the last of two equal
 * keys; this reader keeps every node's line and column and reports duplicate keys as problems.
 */
final class YamlTreeReader {
  private static final YAMLFactory FACTORY = YAMLFactory.builder().build();

  private final List<ConfigProblem> problems;

  YamlTreeReader(List<ConfigProblem> problems) {
    this.problems = problems;
  }

  /**
   * Reads one YAML document; an empty document is {@code null}.
   *
   * @throws IOException on malformed YAML (Jackson's exception, with its location)
   */
  YamlNode.@Nullable Mapping read(String yaml) throws IOException {
    try (JsonParser p = FACTORY.createParser(yaml)) {
      try {
        return document(p);
      } catch (StreamConstraintsException e) {
        // Jackson's limits (nesting deeper than 1000, ...) come without a location: the parser's
        // is where it stopped.
        throw new JsonParseException(p, e.getOriginalMessage(), e);
      }
    }
  }

  private YamlNode.@Nullable Mapping document(JsonParser p) throws IOException {
    JsonToken first = p.nextToken();
    if (first == null) {
      return null;
    }
    YamlNode root = value(p, "");
    if (p.nextToken() != null) {
      problems.add(
          ConfigProblem.error(
              "",
              "must be a single YAML document, found a second one",
              location(p.currentTokenLocation())));
    }
    if (root instanceof YamlNode.Mapping m) {
      return m;
    }
    if (root instanceof YamlNode.Scalar s && s.isNull()) {
      return null;
    }
    problems.add(
        ConfigProblem.error(
            "",
            "must be a mapping of keys such as name, listen, origins and routes, was "
                + root.describe(),
            root.location()));
    return new YamlNode.Mapping(Map.of(), root.location());
  }

  private YamlNode value(JsonParser p, String path) throws IOException {
    JsonToken t = p.currentToken();
    YamlNode.Location at = location(p.currentTokenLocation());
    if (t == JsonToken.START_OBJECT) {
      Map<String, YamlNode.Entry> entries = new LinkedHashMap<>();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        YamlNode.Location keyAt = location(p.currentTokenLocation());
        p.nextToken();
        String childPath = path.isEmpty() ? key : path + "." + key;
        YamlNode child = value(p, childPath);
        YamlNode.Entry previous = entries.get(key);
        if (previous != null) {
          problems.add(
              ConfigProblem.error(
                  childPath,
                  "duplicate key (first written at line " + previous.keyLocation().line() + ")",
                  keyAt));
        } else {
          entries.put(key, new YamlNode.Entry(key, keyAt, child));
        }
      }
      return new YamlNode.Mapping(entries, at);
    }
    if (t == JsonToken.START_ARRAY) {
      List<YamlNode> items = new ArrayList<>();
      while (p.nextToken() != JsonToken.END_ARRAY) {
        items.add(value(p, path + "[" + items.size() + "]"));
      }
      return new YamlNode.Sequence(items, at);
    }
    if (p instanceof YAMLParser yaml && yaml.isCurrentAlias()) {
      // Jackson hands an alias over as a string holding the anchor's name: refuse it rather than
      // let "*defaults" be read as a value.
      problems.add(
          ConfigProblem.error(
              path,
              "must be written out: YAML aliases are not supported, was *" + p.getText(),
              at));
      return new YamlNode.Scalar("", YamlNode.Scalar.Kind.ALIAS, at);
    }
    YamlNode.Scalar.Kind kind =
        switch (t) {
          case VALUE_NUMBER_INT -> YamlNode.Scalar.Kind.INTEGER;
          case VALUE_NUMBER_FLOAT -> YamlNode.Scalar.Kind.FLOAT;
          case VALUE_TRUE -> YamlNode.Scalar.Kind.TRUE;
          case VALUE_FALSE -> YamlNode.Scalar.Kind.FALSE;
          case VALUE_NULL -> YamlNode.Scalar.Kind.NULL;
          default -> YamlNode.Scalar.Kind.STRING;
        };
    String text = p.getText();
    return new YamlNode.Scalar(text == null ? "" : text, kind, at);
  }

  static YamlNode.Location location(@Nullable JsonLocation l) {
    return l == null
        ? new YamlNode.Location(0, 0)
        : new YamlNode.Location(l.getLineNr(), l.getColumnNr());
  }
}
