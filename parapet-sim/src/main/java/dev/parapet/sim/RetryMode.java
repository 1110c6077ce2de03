package dev.parapet.sim;

/** How a simulated server retries a failed origin attempt. */
enum RetryMode {
  /** Never retries. */
  NONE,
  /** Seed 000's naive policy: one immediate retry of every failure, no budget. */
  NAIVE,
  /** The core's {@code RetryPolicy} (2 attempts, jittered backoff, deadline) and retry budget. */
  BUDGET
}
