package dev.parapet.proxy.fleet;

import dev.parapet.core.fleet.Lease;
import dev.parapet.core.fleet.LeaseSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The fleet's shared bucket in Redis: one hash per key ({@code tokens}, {@code ts}), refilled and
 * taken from atomically by a Lua script ({@code lease.lua}) that reads Redis's own clock ({@code
 * TIME}), so the proxies sharing it need no synchronised clocks. The key expires after twice the
 * time the bucket takes to fill (at least a second): an idle bucket is a full one.
 *
 * <p>The script is sent by its SHA-1 ({@code EVALSHA}); a Redis that does not know it (restarted,
 * flushed) answers {@code NOSCRIPT} and gets the script itself ({@code EVAL}, which caches it).
 *
 * <p>Jedis blocks, and a request's event loop must not: every lease runs on this source's own
 * thread and completes its future there. The limiter asks for one lease at a time, so one thread
 * and one pooled connection suffice; connect and read time out after {@link #IO_TIMEOUT} so a
 * blackholed Redis cannot hold the thread for long (the limiter has long fallen back by then).
 * Jedis, called this way, had a lower median and worst tail than Lettuce here (docs/benchmarks.md).
 */
public final class RedisLeaseSource implements LeaseSource, AutoCloseable {
  /** Connect and read timeout of one Redis call. */
  static final Duration IO_TIMEOUT = Duration.ofMillis(250);

  private static final String SCRIPT = loadScript();
  private static final String SHA = sha1(SCRIPT);

  private final RedisClient redis;
  private final ExecutorService thread;
  private final List<String> keys;
  private final String rate;
  private final String burst;
  private final String ttlMillis;

  /**
   * A source for the bucket at {@code key} on {@code uri} ({@code redis://[user:password@]host:
   * port[/db]}). Connects lazily: a Redis that is down now only makes leases fail.
   */
  public RedisLeaseSource(URI uri, String key, double ratePerSecond, int burst, String threadName) {
    DefaultJedisClientConfig.Builder c =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis((int) IO_TIMEOUT.toMillis())
            .socketTimeoutMillis((int) IO_TIMEOUT.toMillis())
            .clientName("parapet-fleet");
    String info = uri.getUserInfo();
    if (info != null) {
      int colon = info.indexOf(':');
      if (colon < 0) {
        c.password(info);
      } else {
        if (colon > 0) {
          c.user(info.substring(0, colon));
        }
        c.password(info.substring(colon + 1));
      }
    }
    String path = uri.getPath();
    if (path != null && path.length() > 1) {
      c.database(Integer.parseInt(path.substring(1)));
    }
    GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
    pool.setMaxTotal(2);
    pool.setMaxIdle(2);
    pool.setMinIdle(0);
    pool.setMaxWait(IO_TIMEOUT);
    pool.setJmxEnabled(false);
    this.redis =
        RedisClient.builder()
            .hostAndPort(uri.getHost(), uri.getPort())
            .clientConfig(c.build())
            .poolConfig(pool)
            .build();
    this.thread =
        Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, threadName);
          t.setDaemon(true);
          return t;
        });
    this.keys = List.of(key);
    this.rate = Double.toString(ratePerSecond);
    this.burst = Integer.toString(burst);
    long fillMillis = (long) Math.ceil(burst / ratePerSecond * 1000);
    this.ttlMillis = Long.toString(Math.max(1000, 2 * fillMillis));
  }

  @Override
  public CompletionStage<Lease> lease(int tokens) {
    try {
      return CompletableFuture.supplyAsync(() -> call(tokens), thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e); // closed
    }
  }

  private Lease call(int tokens) {
    List<String> args = List.of(rate, burst, Integer.toString(tokens), ttlMillis);
    Object answer;
    try {
      answer = redis.evalsha(SHA, keys, args);
    } catch (JedisNoScriptException e) {
      answer = redis.eval(SCRIPT, keys, args);
    }
    if (!(answer instanceof List<?> l)
        || l.size() != 2
        || !(l.get(0) instanceof Long granted)
        || !(l.get(1) instanceof Long waitMicros)) {
      throw new IllegalStateException(
          "lease script answer : " + answer + " (expected: [granted, wait microseconds])");
    }
    return new Lease(
        (int) Math.max(0, Math.min(tokens, granted)), Math.max(0, waitMicros) * 1_000L);
  }

  @Override
  public void close() {
    thread.shutdownNow();
    redis.close();
  }

  private static String loadScript() {
    try (InputStream in = RedisLeaseSource.class.getResourceAsStream("lease.lua")) {
      if (in == null) {
        throw new IllegalStateException("lease.lua : missing (expected: beside RedisLeaseSource)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("lease.lua : unreadable", e);
    }
  }

  private static String sha1(String s) {
    try {
      return HexFormat.of()
          .formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 : unavailable (expected: in every JDK)", e);
    }
  }
}
