package dev.parapet.core.breaker;

import java.util.Objects;

/**
 * A breaker's identity: its scope and a name from configuration, such as {@code route:/api/} or
 * {@code host:api/127.0.0.1:9001}. Names come from configuration, never from request data, so the
 * number of keys (and metric labels) stays bounded.
 */
public record BreakerKey(Scope scope, String name) {

  public BreakerKey {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(name, "name");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("name : \"\" (expected: a non-empty name)");
    }
  }

  /** Shorthand. */
  public static BreakerKey of(Scope scope, String name) {
    return new BreakerKey(scope, name);
  }

  @Override
  public String toString() {
    return scope.name().toLowerCase(java.util.Locale.ROOT) + ":" + name;
  }
}
