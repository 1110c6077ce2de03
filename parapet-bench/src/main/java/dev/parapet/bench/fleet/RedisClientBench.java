package dev.parapet.bench.fleet;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The fleet ceiling's lease script ({@code EVALSHA} of {@code lease.lua}) through Lettuce and
 * through Jedis against one local redis-server: one call at a time (how the limiter calls it), on a
 * thread of its own for Jedis (how the proxy calls it, so no event loop blocks), and three callers
 * at once. A timed loop, not JMH: the question is a network round trip's median and tail, not
 * nanoseconds of code. Round 0 is warm-up.
 *
 * <pre>
 * java -cp parapet-bench/target/benchmarks.jar dev.parapet.bench.fleet.RedisClientBench PORT CALLS \
 *     parapet-proxy/src/main/resources/dev/parapet/proxy/fleet/lease.lua
 * </pre>
 */
public final class RedisClientBench {
  private RedisClientBench() {}

  public static void main(String[] a) throws Exception {
    int port = Integer.parseInt(a[0]);
    int n = Integer.parseInt(a[1]);
    String script = Files.readString(Path.of(a[2]));
    String[] args = {"1000000000", "1000000000", "10", "60000"};
    int callers = 3;
    for (int round = 0; round < 3; round++) {
      RedisClient client = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + port));
      StatefulRedisConnection<String, String> c = client.connect();
      RedisAsyncCommands<String, String> async = c.async();
      String sha = c.sync().scriptLoad(script);
      long[] lat = new long[n];
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long s0 = System.nanoTime();
        async.evalsha(sha, ScriptOutputType.MULTI, new String[] {"bench-l"}, args).get();
        lat[i] = System.nanoTime() - s0;
      }
      report(round, "lettuce async, one at a time", lat, System.nanoTime() - t0);
      ExecutorService ex = Executors.newFixedThreadPool(callers);
      List<Future<?>> fs = new ArrayList<>();
      t0 = System.nanoTime();
      for (int k = 0; k < callers; k++) {
        fs.add(
            ex.submit(() -> {
              for (int i = 0; i < n / callers; i++) {
                async.evalsha(sha, ScriptOutputType.MULTI, new String[] {"bench-l"}, args).get();
              }
              return null;
            }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
      System.out.printf(
          Locale.ROOT,
          "round %d: lettuce, %d callers: %.0f leases/s%n",
          round,
          callers,
          n / callers * callers / ((System.nanoTime() - t0) / 1e9));
      ex.shutdown();
      c.close();
      client.shutdown();
      try (redis.clients.jedis.RedisClient j =
          redis.clients.jedis.RedisClient.create("127.0.0.1", port)) {
        String jsha = j.scriptLoad(script);
        List<String> keys = List.of("bench-j");
        List<String> argList = List.of(args);
        t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          long s0 = System.nanoTime();
          j.evalsha(jsha, keys, argList);
          lat[i] = System.nanoTime() - s0;
        }
        report(round, "jedis, calling thread, one at a time", lat, System.nanoTime() - t0);
        ExecutorService own = Executors.newSingleThreadExecutor();
        t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          long s0 = System.nanoTime();
          CompletableFuture.supplyAsync(() -> j.evalsha(jsha, keys, argList), own).get();
          lat[i] = System.nanoTime() - s0;
        }
        report(round, "jedis, on its own thread, one at a time", lat, System.nanoTime() - t0);
        own.shutdown();
        ExecutorService ex2 = Executors.newFixedThreadPool(callers);
        fs.clear();
        t0 = System.nanoTime();
        for (int k = 0; k < callers; k++) {
          fs.add(
              ex2.submit(() -> {
                for (int i = 0; i < n / callers; i++) {
                  j.evalsha(jsha, keys, argList);
                }
                return null;
              }));
        }
        for (Future<?> f : fs) {
          f.get();
        }
        System.out.printf(
            Locale.ROOT,
            "round %d: jedis, %d callers: %.0f leases/s%n",
            round,
            callers,
            n / callers * callers / ((System.nanoTime() - t0) / 1e9));
        ex2.shutdown();
      }
    }
  }

  private static void report(int round, String what, long[] lat, long elapsedNanos) {
    long[] s = lat.clone();
    Arrays.sort(s);
    int n = s.length;
    System.out.printf(
        Locale.ROOT,
        "round %d: %s: %.0f leases/s, p50 %.1f us, p99 %.1f us%n",
        round,
        what,
        n / (elapsedNanos / 1e9),
        s[n / 2] / 1e3,
        s[(int) (n * 0.99)] / 1e3);
  }
}
