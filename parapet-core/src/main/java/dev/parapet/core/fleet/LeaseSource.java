package dev.parapet.core.fleet;

import java.util.concurrent.CompletionStage;

/**
 * The fleet's shared token bucket, asked for leases by every {@link FleetLimiter} of every proxy
 * that shares it (the proxy's is a Lua script on one Redis key).
 *
 * <p>{@link #lease} must not block: it returns at once and completes later, on any thread. A lease
 * that fails completes exceptionally; the limiter then falls back to its local share.
 */
@FunctionalInterface
public interface LeaseSource {

  /** Takes up to {@code tokens} tokens from the shared bucket ({@code tokens >= 1}). */
  CompletionStage<Lease> lease(int tokens);
}
