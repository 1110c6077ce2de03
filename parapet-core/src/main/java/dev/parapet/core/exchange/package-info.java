/**
 * One request's way to the origin, free of any network: {@link
 * dev.parapet.core.exchange.AttemptSequence} runs the gate (breaker, fallback, admission, deadline)
 * and the attempts (classification, evidence, retries, one hedge, one winner) in one order, driven
 * by the proxy's exchanges and by the simulator alike; {@link dev.parapet.core.exchange.Attempt} is
 * one try, {@link dev.parapet.core.exchange.AttemptPolicy} how tries at one origin are made.
 */
@NullMarked
package dev.parapet.core.exchange;

import org.jspecify.annotations.NullMarked;
