package dev.parapet.proxy.demo;

import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Latency;
import java.util.List;

/**
 * What the API origin does during one run, as phases that share the run's length by fixed fractions
 * (so {@code --duration} scales the story, not its shape): healthy (p50 120 ms), brownout (p50 4 s,
 * seed 001's slow origin), hard down — first hanging (connections accepted, never answered), then
 * refusing connections — and recovery.
 */
record Timeline(List<Phase> phases) {

  /** One stretch of the run: from {@code from} to {@code to} as fractions of it. */
  record Phase(String name, double from, double to, FaultPlan plan, boolean outage) {
    long startNanos(long runNanos) {
      return (long) (from * runNanos);
    }

    long endNanos(long runNanos) {
      return (long) (to * runNanos);
    }
  }

  static final String HEALTHY = "healthy";
  static final String BROWNOUT = "brownout";
  static final String HANG = "down (hang)";
  static final String REFUSE = "down (refused)";
  static final String RECOVERY = "recovery";

  static FaultPlan healthyPlan() {
    return FaultPlan.of(
        Behaviour.builder().latency(Latency.parse("latency", "lognormal:120ms,400ms")).build());
  }

  static Timeline standard() {
    FaultPlan healthy = healthyPlan();
    FaultPlan brownout =
        FaultPlan.of(
            Behaviour.builder().latency(Latency.parse("latency", "lognormal:4s,8s")).build());
    FaultPlan hang = FaultPlan.of(Behaviour.builder().hangRate(1.0).build());
    FaultPlan refuse = healthy.withRefuse(true);
    return new Timeline(
        List.of(
            new Phase(HEALTHY, 0.0, 0.2, healthy, false),
            new Phase(BROWNOUT, 0.2, 0.5, brownout, true),
            new Phase(HANG, 0.5, 0.625, hang, true),
            new Phase(REFUSE, 0.625, 0.75, refuse, true),
            new Phase(RECOVERY, 0.75, 1.0, healthy, false)));
  }

  Phase phase(String name) {
    for (Phase p : phases) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("phase : " + name + " (expected: one of " + phases + ")");
  }

  /** The phase at {@code elapsedNanos} into a run of {@code runNanos}. */
  Phase at(long elapsedNanos, long runNanos) {
    for (Phase p : phases) {
      if (elapsedNanos < p.endNanos(runNanos)) {
        return p;
      }
    }
    return phases.get(phases.size() - 1);
  }
}
