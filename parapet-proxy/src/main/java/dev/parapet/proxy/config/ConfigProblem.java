package dev.parapet.proxy.config;

import org.jspecify.annotations.Nullable;

/**
 * One thing wrong (or suspicious) in a configuration: the YAML path, what is wrong, and where in
 * the file. {@link #toString()} is DESIGN.md's form, {@code origins.api.breaker.failure_rate: must
 * be in (0%, 100%], was 150%}.
 *
 * @param line 1-based line in the file, or 0 when unknown
 * @param column 1-based column, or 0 when unknown
 */
public record ConfigProblem(Severity severity, String path, String message, int line, int column) {

  /** Errors refuse the configuration; warnings are printed and the configuration is used. */
  public enum Severity {
    ERROR,
    WARNING
  }

  static ConfigProblem error(String path, String message, YamlNode.@Nullable Location at) {
    return new ConfigProblem(
        Severity.ERROR, path, message, at == null ? 0 : at.line(), at == null ? 0 : at.column());
  }

  static ConfigProblem warning(String path, String message, YamlNode.@Nullable Location at) {
    return new ConfigProblem(
        Severity.WARNING, path, message, at == null ? 0 : at.line(), at == null ? 0 : at.column());
  }

  /**
   * The problem as one line prefixed with {@code source}, as {@code parapet validate} prints it:
   * {@code edge.yaml:12:20: origins.api.breaker.failure_rate: must be ...}; warnings say so.
   */
  public String format(String source) {
    StringBuilder out = new StringBuilder(source);
    if (line > 0) {
      out.append(':').append(line).append(':').append(column);
    }
    out.append(": ");
    if (severity == Severity.WARNING) {
      out.append("warning: ");
    }
    return out.append(this).toString();
  }

  @Override
  public String toString() {
    return path.isEmpty() ? message : path + ": " + message;
  }
}
