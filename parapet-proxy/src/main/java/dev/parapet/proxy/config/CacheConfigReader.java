package dev.parapet.proxy.config;

import dev.parapet.proxy.config.MappingReader.ShareRange;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads the {@code cache:} block: the edge cache's size, when stale answers may serve, and the
 * heuristic freshness of responses that state none.
 */
final class CacheConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys(
          "max_size", "stale_if_error", "stale_if_error_on", "stale_while_revalidate", "heuristic");
  private static final Set<String> HEURISTIC = MappingReader.keys("fraction", "max");

  private CacheConfigReader() {}

  static CacheConfig read(MappingReader r) {
    CacheConfig d = CacheConfig.DEFAULTS;
    double fraction = d.heuristicFraction();
    java.time.Duration max = d.heuristicMax();
    if (r.isOff("heuristic")) {
      fraction = 0;
    } else if (r.has("heuristic")) {
      MappingReader h = r.switchedOn("heuristic", HEURISTIC);
      fraction = h.percentOrFraction("fraction", fraction, ShareRange.ANY);
      max = h.duration("max", max);
    }
    return new CacheConfig(
        r.parsed("max_size", d.maxSize(), "a size like 256MiB", DataSize::parse),
        r.duration("stale_if_error", d.staleIfError()),
        r.duration("stale_while_revalidate", d.staleWhileRevalidate()),
        triggers(r, d.staleIfErrorOn()),
        fraction,
        max);
  }

  private static List<String> triggers(MappingReader r, List<String> base) {
    if (!r.has("stale_if_error_on")) {
      return base;
    }
    List<String> out = new ArrayList<>();
    List<YamlNode> items = r.list("stale_if_error_on", String.join(", ", CacheConfig.TRIGGERS));
    for (int i = 0; i < items.size(); i++) {
      YamlNode item = items.get(i);
      String at = r.path("stale_if_error_on") + "[" + i + "]";
      String name = item instanceof YamlNode.Scalar s ? s.text().trim() : null;
      if (name == null || !CacheConfig.TRIGGERS.contains(name)) {
        r.problems()
            .add(
                ConfigProblem.error(
                    at,
                    "must be one of "
                        + String.join(", ", CacheConfig.TRIGGERS)
                        + ", was "
                        + item.describe(),
                    item.location()));
      } else if (!out.contains(name)) {
        out.add(name);
      }
    }
    return out;
  }
}
