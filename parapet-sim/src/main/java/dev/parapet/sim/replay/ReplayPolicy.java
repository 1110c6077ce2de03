package dev.parapet.sim.replay;

import dev.parapet.core.breaker.BreakerPolicy;

/** A breaker policy under a name for the side-by-side table (its file, or a swept value). */
public record ReplayPolicy(String name, BreakerPolicy policy) {}
