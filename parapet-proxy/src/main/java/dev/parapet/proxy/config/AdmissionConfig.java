package dev.parapet.proxy.config;

import java.time.Duration;

/** Admission control for origin-bound work ({@code admission:}). */
public record AdmissionConfig(
    Limit limit, Queue queue, Priority priority, RetryAfter retryAfter, PerClient perClient) {

  public static final AdmissionConfig DEFAULTS =
      new AdmissionConfig(
          Limit.DEFAULTS, Queue.DEFAULTS, Priority.DEFAULTS, RetryAfter.DEFAULTS, PerClient.OFF);

  /** Admission without a per-client limit. */
  public AdmissionConfig(Limit limit, Queue queue, Priority priority, RetryAfter retryAfter) {
    this(limit, queue, priority, retryAfter, PerClient.OFF);
  }

  /**
   * {@code per_client:} requests one client address may have in flight at once; beyond it the proxy
   * answers 429 (the client, not the origin, is what is over its limit).
   *
   * @param maxInflight the limit; 0 (the default) switches it off
   */
  public record PerClient(int maxInflight) {
    public static final PerClient OFF = new PerClient(0);
  }

  /** The concurrency-limit algorithm. */
  public enum Algorithm {
    FIXED,
    AIMD,
    VEGAS,
    GRADIENT2
  }

  /**
   * {@code limit:} one concurrency limit per listener.
   *
   * @param initial starting limit (the fixed limit for {@code fixed}); 200
   * @param min floor; 20
   * @param max ceiling; 2000
   */
  public record Limit(Algorithm algorithm, int initial, int min, int max) {
    public static final Limit DEFAULTS = new Limit(Algorithm.GRADIENT2, 200, 20, 2000);
  }

  /**
   * {@code queue:} the short bounded queue in front of the limit, drained by CoDel.
   *
   * @param max queue length; 250
   * @param targetSojourn CoDel target; 20 ms
   * @param interval CoDel interval; 100 ms
   */
  public record Queue(int max, Duration targetSojourn, Duration interval) {
    public static final Queue DEFAULTS =
        new Queue(250, Duration.ofMillis(20), Duration.ofMillis(100));
  }

  /**
   * {@code priority:} where a request's class (1 critical … 4 background) comes from.
   *
   * @param header the RFC 9218 header, believed only from a peer in {@code trusted_proxies} (and
   *     removed from the requests of every other peer); {@code Priority}
   * @param defaultPriority {@code default}: class of a request no route or header classifies; 2
   */
  public record Priority(String header, int defaultPriority) {
    public static final Priority DEFAULTS = new Priority("Priority", 2);
  }

  /**
   * {@code retry_after:} the range a locally made 503's {@code Retry-After} is jittered in.
   *
   * @param min 1 s
   * @param max 5 s
   */
  public record RetryAfter(Duration min, Duration max) {
    public static final RetryAfter DEFAULTS =
        new RetryAfter(Duration.ofSeconds(1), Duration.ofSeconds(5));
  }
}
