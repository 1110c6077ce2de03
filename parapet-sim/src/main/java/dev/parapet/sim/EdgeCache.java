package dev.parapet.sim;

/**
 * The edge's cache in front of the origin under test ({@code cache: {hit_ratio, stale_if_error}} in
 * a scenario file), so that "user success" counts what a user sees.
 *
 * @param hitRatio share of the requests for the origin under test's objects that are fresh hits:
 *     answered by the edge at once, without an origin attempt
 * @param staleIfError share of the misses for which the edge holds a stale copy it may serve when
 *     the request fails (breaker open, timeout, refusal, 5xx): the user gets the stale copy, the
 *     breaker still counts the failure
 */
record EdgeCache(double hitRatio, double staleIfError) {
  static final EdgeCache NONE = new EdgeCache(0, 0);

  EdgeCache {
    if (!(hitRatio >= 0 && hitRatio <= 1)) {
      throw new IllegalArgumentException("hit_ratio : " + hitRatio + " (expected: in [0, 1])");
    }
    if (!(staleIfError >= 0 && staleIfError <= 1)) {
      throw new IllegalArgumentException(
          "stale_if_error : " + staleIfError + " (expected: in [0, 1])");
    }
  }
}
