package dev.parapet.sim;

import java.util.List;

/** A scenario or policy file that cannot be used; carries every error, each with its YAML path. */
final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  private final List<String> errors;

  ConfigException(String source, List<String> errors) {
    super(source + ": " + errors.size() + " error(s)\n  " + String.join("\n  ", errors));
    this.errors = List.copyOf(errors);
  }

  List<String> errors() {
    return errors;
  }
}
