package dev.parapet.proxy.config;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the {@code admission:} block: the concurrency limit, the queue in front of it, request
 * priorities and the header that carries them, the {@code Retry-After} range of a rejection, and
 * the per-client cap. Ranges are checked within their block ({@code limit.min <= initial <=
 * limit.max}, {@code queue.target_sojourn < queue.interval}, {@code retry_after.min <= max}).
 */
final class AdmissionConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys("limit", "queue", "priority", "retry_after", "per_client");
  private static final Set<String> LIMIT = MappingReader.keys("algorithm", "initial", "min", "max");
  private static final Set<String> QUEUE = MappingReader.keys("max", "target_sojourn", "interval");
  private static final Set<String> PRIORITY =
      MappingReader.keys("header", "trusted_sources", "default");
  private static final Set<String> RETRY_AFTER = MappingReader.keys("min", "max");
  private static final Set<String> PER_CLIENT = MappingReader.keys("max_inflight");
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

  private final List<ConfigProblem> problems;

  AdmissionConfigReader(List<ConfigProblem> problems) {
    this.problems = problems;
  }

  AdmissionConfig read(MappingReader r) {
    MappingReader l = r.mapping("limit", LIMIT);
    AdmissionConfig.Limit dl = AdmissionConfig.Limit.DEFAULTS;
    AdmissionConfig.Algorithm algorithm =
        l.choice("algorithm", dl.algorithm(), AdmissionConfig.Algorithm.values());
    int initial = l.integer("initial", dl.initial(), 1, MappingReader.MAX_COUNT);
    int min = l.integer("min", dl.min(), 1, MappingReader.MAX_COUNT);
    int max = l.integer("max", dl.max(), 1, MappingReader.MAX_COUNT);
    if (!l.failed("min", "max") && max < min) {
      l.error("max", "must be >= limit.min (" + min + "), was " + max);
    } else if (!l.failed("min", "max", "initial") && (initial < min || initial > max)) {
      l.error(
          "initial",
          "must be in [limit.min, limit.max] = [" + min + ", " + max + "], was " + initial);
    }

    MappingReader q = r.mapping("queue", QUEUE);
    AdmissionConfig.Queue dq = AdmissionConfig.Queue.DEFAULTS;
    int queueMax = q.integer("max", dq.max(), 0, MappingReader.MAX_COUNT);
    Duration target = q.positiveDuration("target_sojourn", dq.targetSojourn());
    Duration interval = q.positiveDuration("interval", dq.interval());
    if (!q.failed("target_sojourn", "interval") && target.compareTo(interval) >= 0) {
      q.error(
          "target_sojourn",
          "must be smaller than queue.interval ("
              + HumanDuration.format(interval)
              + "), was "
              + HumanDuration.format(target));
    }

    MappingReader p = r.mapping("priority", PRIORITY);
    AdmissionConfig.Priority dp = AdmissionConfig.Priority.DEFAULTS;
    String header = p.string("header", dp.header());
    if (p.has("header") && !p.failed("header") && !HEADER_NAME.matcher(header).matches()) {
      p.error("header", "must be an HTTP header name, was '" + header + "'");
    }
    if (p.has("trusted_sources")) {
      // Trust is defined once, for every signal a peer may send (priority, deadline, forwarding
      // headers): a second list here would let the two disagree.
      p.error(
          "trusted_sources",
          "is not a key here: the peers whose Priority header is believed are the top-level"
              + " trusted_proxies");
    }
    int defaultPriority = p.integer("default", dp.defaultPriority(), 1, 4);

    MappingReader ra = r.mapping("retry_after", RETRY_AFTER);
    AdmissionConfig.RetryAfter dra = AdmissionConfig.RetryAfter.DEFAULTS;
    Duration raMin = ra.duration("min", dra.min());
    Duration raMax = ra.positiveDuration("max", dra.max());
    ra.checkOrder("min", raMin, "max", raMax, "retry_after.min");
    MappingReader pc = r.mapping("per_client", PER_CLIENT);
    int perClient = pc.integer("max_inflight", 0, 0, MappingReader.MAX_COUNT);
    return new AdmissionConfig(
        new AdmissionConfig.Limit(algorithm, initial, min, max),
        new AdmissionConfig.Queue(queueMax, target, interval),
        new AdmissionConfig.Priority(header, defaultPriority),
        new AdmissionConfig.RetryAfter(raMin, raMax),
        new AdmissionConfig.PerClient(perClient));
  }
}
