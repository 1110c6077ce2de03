package dev.parapet.sim;

/**
 * How much the origin under test can do at once ({@code origin: workers, queue, abandoned} in a
 * scenario file).
 *
 * @param workers attempts served at once (c servers); 0 means unlimited, every attempt is served at
 *     once and only its latency matters
 * @param queue attempts that may wait for a worker; one more is refused at once (a full accept
 *     queue: the edge sees a connect failure); {@link Integer#MAX_VALUE} for unbounded
 * @param serveAbandoned whether the origin serves work whose client has given up ({@code abandoned:
 *     serve}: it cannot tell; under overload the queue fills with work nobody waits for and goodput
 *     collapses) or does not start work that its mean service time says would end after the
 *     client's deadline ({@code abandoned: drop}: a deadline-aware origin; goodput stays near
 *     capacity)
 */
record OriginCapacity(int workers, int queue, boolean serveAbandoned) {
  static final int UNBOUNDED = Integer.MAX_VALUE;
  static final OriginCapacity UNLIMITED = new OriginCapacity(0, UNBOUNDED, false);

  OriginCapacity {
    if (workers < 0) {
      throw new IllegalArgumentException("workers : " + workers + " (expected: >= 0)");
    }
    if (queue < 0) {
      throw new IllegalArgumentException("queue : " + queue + " (expected: >= 0)");
    }
  }

  boolean limited() {
    return workers > 0;
  }

  /** Workers and queue multiplied by {@code factor} (at least one worker when limited). */
  OriginCapacity scaled(double factor) {
    if (!limited()) {
      return this;
    }
    int q = queue == UNBOUNDED ? UNBOUNDED : (int) Math.round(queue * factor);
    return new OriginCapacity(Math.max(1, (int) Math.round(workers * factor)), q, serveAbandoned);
  }
}
