/**
 * Streaming shadow replay of access logs: records are read from (compressed) files in one pass,
 * parsed in place from reused byte buffers, put in start order by a bounded reorder window, and fed
 * to one real {@link dev.parapet.core.breaker.CircuitBreaker} per route and per policy, then
 * dropped. What is retained is bounded by the traffic rate times the reorder window, never by the
 * length of the log.
 */
@NullMarked
package dev.parapet.sim.replay;

import org.jspecify.annotations.NullMarked;
