package dev.parapet.proxy.demo;

import dev.parapet.proxy.faultorigin.Behaviour;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.faultorigin.Latency;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the API origin does during one run, as phases that share the run's length by fixed fractions
 * (so {@code --duration} scales the story, not its shape): healthy (p50 120 ms), brownout (p50 4 s,
 * seed 001's slow origin), hard down and recovery. How it is down is the demo's {@code --api-down}
 * ({@link Down}): by default first hanging (connections accepted, never answered), then refusing
 * connections; or answering every request with a 503 at once.
 */
record Timeline(List<Phase> phases, Down down) {

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
  static final String DOWN_503 = "down (503)";

  /** How the API origin is down in the down phases: the demo's {@code --api-down}. */
  enum Down {
    /** First hanging (connections accepted, never answered), then refusing connections. */
    HANG_REFUSE("hang-refuse", "down (hang, then refused)"),
    /** Every request answered 503 at once, the listener up. */
    FAST_503("503", "down (503 at once)");

    /** The option's value. */
    final String option;

    /** The phase as the demo's header describes it. */
    final String described;

    Down(String option, String described) {
      this.option = option;
      this.described = described;
    }

    /** The value of {@code --api-down}, or null when it names none. */
    static @Nullable Down ofOption(String value) {
      for (Down d : values()) {
        if (d.option.equals(value)) {
          return d;
        }
      }
      return null;
    }
  }

  static FaultPlan healthyPlan() {
    return FaultPlan.of(
        Behaviour.builder().latency(Latency.parse("latency", "lognormal:120ms,400ms")).build());
  }

  static Timeline standard() {
    return of(Down.HANG_REFUSE);
  }

  /** The timeline with the API origin down as {@code down} says in [50 %, 75 %) of the run. */
  static Timeline of(Down down) {
    FaultPlan healthy = healthyPlan();
    FaultPlan brownout =
        FaultPlan.of(
            Behaviour.builder().latency(Latency.parse("latency", "lognormal:4s,8s")).build());
    List<Phase> phases = new ArrayList<>();
    phases.add(new Phase(HEALTHY, 0.0, 0.2, healthy, false));
    phases.add(new Phase(BROWNOUT, 0.2, 0.5, brownout, true));
    switch (down) {
      case HANG_REFUSE -> {
        phases.add(
            new Phase(
                HANG, 0.5, 0.625, FaultPlan.of(Behaviour.builder().hangRate(1.0).build()), true));
        phases.add(new Phase(REFUSE, 0.625, 0.75, healthy.withRefuse(true), true));
      }
      case FAST_503 ->
          phases.add(
              new Phase(
                  DOWN_503,
                  0.5,
                  0.75,
                  FaultPlan.of(Behaviour.builder().errorRate(1.0).errorStatus(503).build()),
                  true));
    }
    phases.add(new Phase(RECOVERY, 0.75, 1.0, healthy, false));
    return new Timeline(List.copyOf(phases), down);
  }

  /** The timeline as the demo's header line says it. */
  String describe() {
    return "healthy -> brownout (p50 120 ms -> 4 s) -> " + down.described + " -> recovery";
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
