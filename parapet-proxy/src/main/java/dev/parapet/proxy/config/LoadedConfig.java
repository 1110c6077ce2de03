package dev.parapet.proxy.config;

import java.util.List;

/**
 * A configuration that passed validation, with the warnings found on the way (DESIGN.md: {@code
 * parapet validate} warns, for example, when an origin's timeout is not smaller than its route's).
 */
public record LoadedConfig(ProxyConfig config, List<ConfigProblem> warnings) {
  public LoadedConfig {
    warnings = List.copyOf(warnings);
  }
}
