package dev.parapet.proxy.net;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips a test run whose {@value Transport#PROPERTY} property names a transport this machine lacks,
 * with Netty's reason, instead of failing every test in it. The build runs the socket-heavy classes
 * a second time on io_uring (parapet-proxy's pom), and a kernel or a container's seccomp profile
 * may refuse io_uring; there that run is reported as skipped. Registered for every test class by
 * JUnit's extension auto-detection (src/test/resources/junit-platform.properties); with the
 * property unset or {@code auto} it does nothing.
 */
public final class TransportCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    String name = System.getProperty(Transport.PROPERTY, "auto");
    try {
      Transport.named(name);
      return ConditionEvaluationResult.enabled("transport " + name + " is available");
    } catch (IllegalArgumentException e) {
      return ConditionEvaluationResult.disabled(e.getMessage());
    }
  }
}
