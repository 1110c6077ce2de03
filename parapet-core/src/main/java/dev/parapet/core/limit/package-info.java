/**
 * Adaptive concurrency limits: pure limit algorithms ({@link dev.parapet.core.limit.FixedLimit},
 * {@link dev.parapet.core.limit.AimdLimit}, {@link dev.parapet.core.limit.VegasLimit}, {@link
 * dev.parapet.core.limit.Gradient2Limit}) fed by samples, and the {@link
 * dev.parapet.core.limit.ConcurrencyGate} that hands out {@link dev.parapet.core.limit.Permit}s and
 * never lets in-flight work exceed the current limit.
 */
@NullMarked
package dev.parapet.core.limit;

import org.jspecify.annotations.NullMarked;
