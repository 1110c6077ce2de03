package dev.parapet.proxy.config;

import java.time.Duration;

/**
 * Request deadlines ({@code deadline:}).
 *
 * @param defaultBudget {@code default}: the budget of a route without its own {@code timeout}; 8 s
 * @param reserve {@code reserve}: subtracted from an incoming {@code Parapet-Deadline} for this
 *     hop's own work; 50 ms
 * @param minUseful {@code min_useful}: below this remaining budget, answer 504 without calling the
 *     origin; 20 ms
 */
public record DeadlineConfig(Duration defaultBudget, Duration reserve, Duration minUseful) {
  public static final DeadlineConfig DEFAULTS =
      new DeadlineConfig(Duration.ofSeconds(8), Duration.ofMillis(50), Duration.ofMillis(20));
}
