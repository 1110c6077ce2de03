/**
 * Retries: the concurrency budget shared by extra attempts ({@link
 * dev.parapet.core.retry.RetryBudget}, Envoy/Finagle semantics), the per-request decision ({@link
 * dev.parapet.core.retry.RetryPolicy}: attempts, full-jitter backoff, Retry-After, deadline fit,
 * never a local rejection) and {@code Retry-After} parsing.
 */
@NullMarked
package dev.parapet.core.retry;

import org.jspecify.annotations.NullMarked;
