package dev.parapet.proxy.config;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Walks a {@link YamlNode} tree into a {@link ProxyConfig}, block by block, tracking the YAML path.
 * This class reads the root and hands each block to its reader ({@link AdmissionConfigReader},
 * {@link OriginConfigReader}, {@link RouteConfigReader}, …). Every field is read with a {@link
 * MappingReader} from a base value (DESIGN.md's default), so one bad value never hides the next:
 * all problems are collected. The checks across blocks — references between routes, origins and
 * fallbacks, the admin token, timeouts that leave no room — are {@link CrossBlockChecks}, each run
 * as soon as the blocks it compares are read.
 *
 * <p>Messages follow DESIGN.md: {@code path: must be <expected>, was <found>}.
 */
final class ProxyConfigReader {
  private static final Set<String> KEYS =
      MappingReader.keys(
          "name",
          "listen",
          "trusted_proxies",
          "admin",
          "deadline",
          "admission",
          "overload",
          "cache",
          "origins",
          "routes",
          "access_log",
          "tracing",
          "tls",
          "http2",
          "drain_timeout");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

  private final List<ConfigProblem> problems;
  private final Path baseDir;
  private final BreakerConfigReader breakers;
  private final CrossBlockChecks checks;

  private final TlsConfigReader tls;

  ProxyConfigReader(List<ConfigProblem> problems, Path baseDir, Instant now) {
    this.problems = problems;
    this.baseDir = baseDir;
    this.tls = new TlsConfigReader(problems, baseDir, now);
    this.breakers = new BreakerConfigReader(problems);
    this.checks = new CrossBlockChecks(problems);
  }

  ProxyConfig read(YamlNode.@Nullable Mapping root) {
    YamlNode.Location top = root == null ? new YamlNode.Location(1, 1) : root.location();
    MappingReader r = MappingReader.of(root, "", top, problems, KEYS);
    String name = r.string("name", ProxyConfig.DEFAULT_NAME);
    if (r.has("name") && !r.failed("name") && !NAME.matcher(name).matches()) {
      r.error(
          "name",
          "must be letters, digits, '.', '_' or '-' (it appears in Via and Proxy-Status), was '"
              + name
              + "'");
    }
    HostPort listen = r.hostPort("listen", ProxyConfig.DEFAULT_LISTEN);
    List<Cidr> trustedProxies = r.cidrs("trusted_proxies", List.of());
    MappingReader adminBlock = r.mapping("admin", AdminConfigReader.KEYS);
    AdminConfig admin = AdminConfigReader.read(adminBlock, baseDir);
    checks.admin(adminBlock, admin, listen, r.failed("listen"));
    DeadlineConfig deadline =
        DeadlineConfigReader.read(r.mapping("deadline", DeadlineConfigReader.KEYS));
    AdmissionConfig admission =
        new AdmissionConfigReader(problems)
            .read(r.mapping("admission", AdmissionConfigReader.KEYS));
    OverloadConfig overload =
        OverloadConfigReader.read(r.mapping("overload", OverloadConfigReader.KEYS));
    CacheConfig cache = CacheConfigReader.read(r.mapping("cache", CacheConfigReader.KEYS));
    OriginConfigReader.Origins origins = new OriginConfigReader(problems, breakers, tls).read(r);
    checks.fallbacks(origins);
    List<RouteConfig> routes =
        new RouteConfigReader(problems, breakers, checks)
            .read(r, origins.configs(), deadline, admission);
    checks.unusedOrigins(origins, routes);
    Path accessLog =
        AccessLogConfigReader.read(r.mapping("access_log", AccessLogConfigReader.KEYS), baseDir);
    TracingConfig tracing =
        TracingConfigReader.read(r.mapping("tracing", TracingConfigReader.KEYS));
    TlsConfig tlsListener = tls.listener(r);
    if (tlsListener != null
        && !r.failed("listen")
        && (tlsListener.listen().equals(listen) || tlsListener.listen().equals(admin.listen()))) {
      problems.add(
          ConfigProblem.error(
              "tls.listen",
              "must differ from listen and admin.listen, was " + tlsListener.listen(),
              r.mapping("tls", TlsConfigReader.KEYS).location("listen")));
    }
    Http2Config http2 = Http2ConfigReader.read(r.mapping("http2", Http2ConfigReader.KEYS));
    Duration drainTimeout = r.duration("drain_timeout", ProxyConfig.DEFAULT_DRAIN_TIMEOUT);
    return new ProxyConfig(
        name,
        listen,
        trustedProxies,
        admin,
        deadline,
        admission,
        overload,
        cache,
        origins.configs(),
        routes,
        accessLog,
        tracing,
        tlsListener,
        http2,
        drainTimeout);
  }
}
