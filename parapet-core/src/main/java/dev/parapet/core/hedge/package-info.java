/**
 * Hedged requests: one extra attempt after the origin's rolling p95, capped at 15 % of requests,
 * only while the breaker is CLOSED, optionally sharing one extra-load budget with retries.
 */
@NullMarked
package dev.parapet.core.hedge;

import org.jspecify.annotations.NullMarked;
