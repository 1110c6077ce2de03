package dev.parapet.proxy.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A Prometheus text exposition read the way a test asks about it: the value of one series (metric
 * name and labels exactly as printed, labels in the exposition's order) and the set of metric names
 * present.
 */
final class Scrape {
  private final String text;
  private final Map<String, Double> series = new LinkedHashMap<>();
  private final Set<String> names = new TreeSet<>();

  Scrape(String text) {
    this.text = text;
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      String id = line.substring(0, space);
      series.put(id, Double.parseDouble(line.substring(space + 1)));
      int brace = id.indexOf('{');
      names.add(brace < 0 ? id : id.substring(0, brace));
    }
  }

  /** The value of {@code id} ({@code name{label="v",...}}); fails when it is not exported. */
  double value(String id) {
    Double v = series.get(id);
    if (v == null) {
      throw new AssertionError(
          "series : " + id + " (expected: in the scrape); the scrape:\n" + text);
    }
    return v;
  }

  /** Metric names as exported, histogram and counter suffixes included. */
  Set<String> names() {
    return names;
  }
}
