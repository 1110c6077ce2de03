package dev.parapet.proxy.cache;

/** What the cache decorator ({@link CachingDownstream}) does with what passes through it. */
enum CacheMode {
  /** Not looked up (an unsafe method, a body): invalidate on success, add Cache-Status. */
  BYPASS,
  /** Looked up and forwarded: merge a 304, answer stale on errors, record what is storable. */
  FORWARD,
  /** Waiting for another request's fetch. */
  WAITING,
  /** A background refresh: merge or record; there is no client to answer. */
  REFRESH,
  /** Answered (a merged 304, a stale copy): the rest of the origin's response is dropped. */
  ANSWERED,
  /** A 304 for a representation not held: drop it, then send the request again in full. */
  REFETCH,
  /**
   * Answered stale because the origin was slower than {@code stale_on_slow}: the fetch goes on,
   * recorded into the store like a refresh, nothing more reaches the client.
   */
  DETACHED,
  /** The client left. */
  GONE
}
