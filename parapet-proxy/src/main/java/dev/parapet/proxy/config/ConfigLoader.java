package dev.parapet.proxy.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads a proxy configuration file: Jackson's YAML parser builds a tree that remembers lines
 * ({@link YamlTreeReader}), a hand-written walker reads it into {@link ProxyConfig} tracking the
 * YAML path ({@link ProxyConfigReader}), and every problem is collected before deciding. Refusal
 * lists all errors at once, in file order, each as DESIGN.md's {@code path: message}: an operator
 * fixes a file in one round, and a typo never silently falls back to a default (unknown keys are
 * errors, with the closest known key suggested).
 */
public final class ConfigLoader {
  private ConfigLoader() {}

  /**
   * Loads and validates {@code file}; relative paths inside it (such as {@code admin.token_file})
   * are resolved against the file's directory.
   *
   * @throws IOException when the file cannot be read
   * @throws InvalidConfigException with every error found
   */
  public static LoadedConfig load(Path file) throws IOException, InvalidConfigException {
    String yaml = Files.readString(file, StandardCharsets.UTF_8);
    Path dir = file.toAbsolutePath().getParent();
    return parse(yaml, file.toString(), dir == null ? Path.of("") : dir);
  }

  /**
   * Validates {@code yaml}; {@code source} names it in messages, {@code baseDir} resolves relative
   * paths.
   *
   * @throws InvalidConfigException with every error found
   */
  public static LoadedConfig parse(String yaml, String source, Path baseDir)
      throws InvalidConfigException {
    return parse(yaml, source, baseDir, Instant.now());
  }

  /**
   * {@link #parse(String, String, Path)} with {@code now} the instant certificates must be valid
   * at.
   *
   * @throws InvalidConfigException with every error found
   */
  public static LoadedConfig parse(String yaml, String source, Path baseDir, Instant now)
      throws InvalidConfigException {
    List<ConfigProblem> problems = new ArrayList<>();
    YamlNode.Mapping root;
    try {
      root = new YamlTreeReader(problems).read(yaml);
    } catch (JsonProcessingException e) {
      problems.add(malformed(e));
      throw refused(source, problems);
    } catch (IOException e) {
      problems.add(ConfigProblem.error("", "cannot be read: " + e.getMessage(), null));
      throw refused(source, problems);
    }
    ProxyConfig config = new ProxyConfigReader(problems, baseDir, now).read(root);
    if (problems.stream().anyMatch(p -> p.severity() == ConfigProblem.Severity.ERROR)) {
      throw refused(source, problems);
    }
    return new LoadedConfig(config, inFileOrder(problems));
  }

  private static InvalidConfigException refused(String source, List<ConfigProblem> problems) {
    List<ConfigProblem> sorted = inFileOrder(problems);
    return new InvalidConfigException(
        source,
        sorted.stream().filter(p -> p.severity() == ConfigProblem.Severity.ERROR).toList(),
        sorted.stream().filter(p -> p.severity() == ConfigProblem.Severity.WARNING).toList());
  }

  /** Stable sort by line, problems without a line last: the order an operator reads the file. */
  private static List<ConfigProblem> inFileOrder(List<ConfigProblem> problems) {
    return problems.stream()
        .sorted(
            Comparator.comparingInt(
                    (ConfigProblem p) -> p.line() == 0 ? Integer.MAX_VALUE : p.line())
                .thenComparingInt(ConfigProblem::column))
        .toList();
  }

  /** Jackson/SnakeYAML's multi-line message condensed to one line, with where it went wrong. */
  private static ConfigProblem malformed(JsonProcessingException e) {
    String detail = yamlProblem(e.getCause());
    if (detail == null) {
      detail = firstLine(e.getOriginalMessage());
    }
    YamlNode.Location at = YamlTreeReader.location(e.getLocation());
    if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException m
        && m.getProblemMark() != null) {
      at =
          new YamlNode.Location(
              m.getProblemMark().getLine() + 1, m.getProblemMark().getColumn() + 1);
    }
    return new ConfigProblem(
        ConfigProblem.Severity.ERROR,
        "",
        "malformed YAML at line " + at.line() + ", column " + at.column() + ": " + detail,
        at.line(),
        at.column());
  }

  private static @Nullable String yamlProblem(@Nullable Throwable cause) {
    if (cause instanceof org.yaml.snakeyaml.error.MarkedYAMLException m) {
      String problem = m.getProblem();
      String context = m.getContext();
      org.yaml.snakeyaml.error.Mark contextMark = m.getContextMark();
      StringBuilder out = new StringBuilder(problem == null ? "invalid YAML" : problem.trim());
      if (context != null && contextMark != null) {
        out.append(" (")
            .append(context.trim())
            .append(" started at line ")
            .append(contextMark.getLine() + 1)
            .append(", column ")
            .append(contextMark.getColumn() + 1)
            .append(')');
      }
      return out.toString();
    }
    return null;
  }

  private static String firstLine(@Nullable String s) {
    if (s == null) {
      return "invalid YAML";
    }
    int nl = s.indexOf('\n');
    return (nl < 0 ? s : s.substring(0, nl)).trim();
  }
}
