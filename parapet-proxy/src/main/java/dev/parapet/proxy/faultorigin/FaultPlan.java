package dev.parapet.proxy.faultorigin;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything the fault origin does, as one immutable value that the origin holds in an atomic
 * reference and swaps whole: a request reads the plan once and follows it to the end, so a change
 * never applies half.
 *
 * @param behaviour what every request gets unless a path override matches
 * @param paths per-path overrides by path prefix; the longest matching prefix wins
 * @param refuse when true, the listener is closed (connects get ECONNREFUSED) and open connections
 *     are closed; when false again the origin binds the same port
 * @param health how {@code GET /healthz} answers
 */
public record FaultPlan(
    Behaviour behaviour, SortedMap<String, Behaviour> paths, boolean refuse, Health health) {

  /** The path that answers health checks. */
  public static final String HEALTH_PATH = "/healthz";

  /** 200 with 1024 bytes at once, no overrides, listening, health following the plan. */
  public static final FaultPlan DEFAULT =
      new FaultPlan(Behaviour.DEFAULT, new TreeMap<>(), false, Health.FOLLOW);

  public FaultPlan {
    for (String prefix : paths.keySet()) {
      if (!prefix.startsWith("/")) {
        throw new PlanException(
            "paths", "path prefixes starting with /", PlanException.quoted(prefix));
      }
    }
    paths = Collections.unmodifiableSortedMap(new TreeMap<>(paths));
  }

  /** A plan with {@code behaviour} for every path and everything else default. */
  public static FaultPlan of(Behaviour behaviour) {
    return DEFAULT.withBehaviour(behaviour);
  }

  /** The behaviour for a request path: the longest matching override, else {@link #behaviour}. */
  public Behaviour behaviourFor(String path) {
    Behaviour best = behaviour;
    int bestLength = -1;
    for (Map.Entry<String, Behaviour> e : paths.entrySet()) {
      String prefix = e.getKey();
      if (prefix.length() > bestLength && path.startsWith(prefix)) {
        best = e.getValue();
        bestLength = prefix.length();
      }
    }
    return best;
  }

  public FaultPlan withBehaviour(Behaviour behaviour) {
    return new FaultPlan(behaviour, paths, refuse, health);
  }

  public FaultPlan withPaths(Map<String, Behaviour> paths) {
    return new FaultPlan(behaviour, new TreeMap<>(paths), refuse, health);
  }

  public FaultPlan withRefuse(boolean refuse) {
    return new FaultPlan(behaviour, paths, refuse, health);
  }

  public FaultPlan withHealth(Health health) {
    return new FaultPlan(behaviour, paths, refuse, health);
  }
}
