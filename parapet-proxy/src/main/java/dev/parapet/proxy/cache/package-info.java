/**
 * The edge cache's building blocks (RFC 9111, RFC 5861, RFC 9211): Cache-Control parsing,
 * storability, freshness and age, keys with {@code Vary}, a byte-bounded store, stale decisions,
 * revalidation, {@code Cache-Status} and request collapsing. Nothing here reads a clock: monotonic
 * nanos and wall-clock epoch millis are passed in. See {@code docs/cache.md}.
 */
@NullMarked
package dev.parapet.proxy.cache;

import org.jspecify.annotations.NullMarked;
