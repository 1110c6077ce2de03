package dev.parapet.core.breaker;

/** What a breaker protects (seed 002: "useful scope often follows the failure domain"). */
public enum Scope {
  ORIGIN,
  ROUTE,
  HOST,
  SHARD
}
