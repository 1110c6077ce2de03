package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.Set;

/**
 * Reads the {@code deadline:} block. The reserve and the minimum useful budget are parts of the
 * default budget, so each must be smaller than it.
 */
final class DeadlineConfigReader {
  static final Set<String> KEYS = MappingReader.keys("default", "reserve", "min_useful");

  private DeadlineConfigReader() {}

  static DeadlineConfig read(MappingReader r) {
    DeadlineConfig d = DeadlineConfig.DEFAULTS;
    Duration budget = r.positiveDuration("default", d.defaultBudget());
    Duration reserve = r.duration("reserve", d.reserve());
    Duration minUseful = r.duration("min_useful", d.minUseful());
    if (!r.failed("default", "reserve") && reserve.compareTo(budget) >= 0) {
      r.error(
          "reserve",
          "must be smaller than deadline.default ("
              + HumanDuration.format(budget)
              + "), was "
              + HumanDuration.format(reserve));
    }
    if (!r.failed("default", "min_useful") && minUseful.compareTo(budget) >= 0) {
      r.error(
          "min_useful",
          "must be smaller than deadline.default ("
              + HumanDuration.format(budget)
              + "), was "
              + HumanDuration.format(minUseful));
    }
    return new DeadlineConfig(budget, reserve, minUseful);
  }
}
