package dev.parapet.proxy.config;

import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.time.Duration;
import java.util.Set;

/**
 * Reads the {@code overload:} block: heap, CPU and event-loop lag thresholds. Where a signal has
 * two thresholds, the one that stops accepting must lie above the one that sheds low priorities.
 */
final class OverloadConfigReader {
  static final Set<String> KEYS = MappingReader.keys("heap", "cpu", "event_loop_lag");
  private static final Set<String> HEAP = MappingReader.keys("shed_low", "stop_accepting");
  private static final Set<String> CPU = MappingReader.keys("shed_low");
  private static final Set<String> EVENT_LOOP_LAG =
      MappingReader.keys("shed_low", "stop_accepting");

  private OverloadConfigReader() {}

  static OverloadConfig read(MappingReader r) {
    MappingReader h = r.mapping("heap", HEAP);
    OverloadConfig.Heap dh = OverloadConfig.Heap.DEFAULTS;
    double shedLow = h.percentOrFraction("shed_low", dh.shedLow(), ShareRange.ABOVE_ZERO);
    double stop = h.percentOrFraction("stop_accepting", dh.stopAccepting(), ShareRange.ABOVE_ZERO);
    if (!h.failed("shed_low", "stop_accepting") && stop <= shedLow) {
      h.error(
          "stop_accepting",
          "must be greater than heap.shed_low ("
              + Percent.format(shedLow)
              + "), was "
              + Percent.format(stop));
    }
    MappingReader c = r.mapping("cpu", CPU);
    double cpuShedLow =
        c.percentOrFraction(
            "shed_low", OverloadConfig.Cpu.DEFAULTS.shedLow(), ShareRange.ABOVE_ZERO);
    MappingReader l = r.mapping("event_loop_lag", EVENT_LOOP_LAG);
    OverloadConfig.EventLoopLag dl = OverloadConfig.EventLoopLag.DEFAULTS;
    Duration lagShed = l.positiveDuration("shed_low", dl.shedLow());
    Duration lagStop = l.positiveDuration("stop_accepting", dl.stopAccepting());
    if (!l.failed("shed_low", "stop_accepting") && lagStop.compareTo(lagShed) <= 0) {
      l.error(
          "stop_accepting",
          "must be greater than event_loop_lag.shed_low ("
              + HumanDuration.format(lagShed)
              + "), was "
              + HumanDuration.format(lagStop));
    }
    return new OverloadConfig(
        new OverloadConfig.Heap(shedLow, stop),
        new OverloadConfig.Cpu(cpuShedLow),
        new OverloadConfig.EventLoopLag(lagShed, lagStop));
  }
}
