package dev.parapet.proxy.config;

import java.util.List;

/**
 * A configuration was refused. Carries every error found (never only the first) and the warnings,
 * each with its YAML path; the message lists the errors one per line.
 */
public final class InvalidConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient List<ConfigProblem> errors;
  private final transient List<ConfigProblem> warnings;

  InvalidConfigException(String source, List<ConfigProblem> errors, List<ConfigProblem> warnings) {
    super(
        source
            + ": "
            + errors.size()
            + (errors.size() == 1 ? " error" : " errors")
            + "\n"
            + String.join("\n", errors.stream().map(ConfigProblem::toString).toList()));
    this.errors = List.copyOf(errors);
    this.warnings = List.copyOf(warnings);
  }

  /** Every error, in file order. */
  public List<ConfigProblem> errors() {
    return errors;
  }

  /** Warnings found along the way (the configuration was refused for the errors). */
  public List<ConfigProblem> warnings() {
    return warnings;
  }
}
