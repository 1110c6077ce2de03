package dev.parapet.core.breaker;

/**
 * A breaker opened more often than its flapping threshold within the span (seed 004: "tripping more
 * than 15-20 times an hour ... it's hiding a deeper problem"). Raised once when the threshold is
 * crossed, and again only after the rate has fallen back under it.
 *
 * @param key the breaker
 * @param opens opens within the span, including this one
 * @param spanNanos the span (one hour by default)
 * @param nowNanos the ticker reading
 */
public record FlappingEvent(BreakerKey key, int opens, long spanNanos, long nowNanos) {}
