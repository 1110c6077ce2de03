package dev.parapet.proxy.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Reads {@code origins.NAME.fleet_limit:} ({@link FleetLimitConfig}). */
final class FleetLimitConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys("rate", "burst", "redis", "key", "instances", "lease", "timeout");
  private static final Pattern RATE =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*/\\s*(s|sec|second|m|min|minute)");
  private static final Pattern KEY = Pattern.compile("[A-Za-z0-9:_.{}-]{1,200}");
  private static final double MAX_RATE = 1e9;
  private static final URI NO_REDIS = URI.create("redis://unset:1");

  private FleetLimitConfigReader() {}

  /** The block, or null when it is absent or switched off; problems go to the reader's list. */
  static @Nullable FleetLimitConfig read(MappingReader origin, String originName) {
    if (!origin.has("fleet_limit") || origin.isOff("fleet_limit")) {
      return null;
    }
    MappingReader f = origin.switchedOn("fleet_limit", KEYS);
    boolean ok = true;
    double rate = 0;
    if (f.missing("rate")) {
      f.problems()
          .add(
              ConfigProblem.error(
                  f.path("rate"), "required: attempts per second like 5000/s", f.location()));
      ok = false;
    } else {
      rate = f.parsed("rate", -1.0, "a rate like 5000/s or 600/min", FleetLimitConfigReader::rate);
      ok &= !f.failed("rate") && rate > 0;
    }
    int burst =
        f.integer(
            "burst",
            rate > 0 ? FleetLimitConfig.defaultBurst(rate) : 1,
            1,
            MappingReader.MAX_COUNT);
    URI redis = NO_REDIS;
    if (f.missing("redis")) {
      f.problems()
          .add(
              ConfigProblem.error(
                  f.path("redis"),
                  "required: the Redis holding the shared bucket, like redis://127.0.0.1:6379",
                  f.location()));
      ok = false;
    } else {
      redis =
          f.parsed(
              "redis",
              NO_REDIS,
              "a URI like redis://127.0.0.1:6379",
              FleetLimitConfigReader::redis);
      ok &= !f.failed("redis");
    }
    String key = f.string("key", "parapet:fleet:" + originName);
    if (!f.failed("key") && !KEY.matcher(key).matches()) {
      f.error("key", "must be 1 to 200 of letters, digits and :_.{}- , was '" + key + "'");
      ok = false;
    }
    int instances = f.integer("instances", 1, 1, 100_000);
    Integer lease = f.has("lease") ? f.integer("lease", 1, 1, 1_000_000) : null;
    if (lease != null && !f.failed("lease", "burst") && lease > burst) {
      f.error(
          "lease",
          "must be <= fleet_limit.burst ("
              + burst
              + "): the shared bucket never holds more, was "
              + lease);
    }
    Duration timeout = f.positiveDuration("timeout", FleetLimitConfig.DEFAULT_TIMEOUT);
    if (!f.failed("timeout") && timeout.compareTo(Duration.ofSeconds(1)) > 0) {
      f.error(
          "timeout",
          "must be <= 1s (a lease late by more says Redis is down), was "
              + HumanDuration.format(timeout));
    }
    if (!ok || f.failed("burst", "key", "instances", "lease", "timeout")) {
      return null;
    }
    return new FleetLimitConfig(rate, burst, redis, key, instances, lease, timeout);
  }

  /** {@code 5000/s}, {@code 600/min}; a bare number is per second. */
  static double rate(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    double value;
    Matcher m = RATE.matcher(t);
    if (m.matches()) {
      value = Double.parseDouble(m.group(1));
      if (m.group(2).startsWith("m")) {
        value /= 60;
      }
    } else {
      try {
        value = Double.parseDouble(t);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "must be a rate like 5000/s or 600/min, was '" + text + "'", e);
      }
    }
    if (!(value > 0) || value > MAX_RATE) {
      throw new IllegalArgumentException(
          "must be a rate in (0, 1000000000]/s like 5000/s, was '" + text + "'");
    }
    return value;
  }

  /** {@code redis://[user:password@]host:port[/db]}. */
  static URI redis(String text) {
    URI u;
    try {
      u = new URI(text.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "must be a URI like redis://127.0.0.1:6379, was '" + text + "'", e);
    }
    if (!"redis".equals(u.getScheme()) || u.getHost() == null || u.getPort() <= 0) {
      throw new IllegalArgumentException(
          "must be redis://host:port (a port is required), was '" + text + "'");
    }
    String db = u.getPath();
    if (db != null && !db.isEmpty() && !db.equals("/") && !db.matches("/\\d{1,2}")) {
      throw new IllegalArgumentException(
          "must name a database by number (redis://host:port/0), was '" + text + "'");
    }
    return u;
  }
}
