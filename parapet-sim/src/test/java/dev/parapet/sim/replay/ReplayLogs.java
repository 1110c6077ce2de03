package dev.parapet.sim.replay;

import dev.parapet.core.breaker.BreakerPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/** Logs for the replay tests. */
public final class ReplayLogs {
  public static final long T0 = 1_764_000_000L;

  private ReplayLogs() {}

  /** /api healthy for 30 s then all 503 for 20 s, then healthy; /static always healthy. 50 rps. */
  public static String csvLog() {
    StringBuilder b = new StringBuilder("time,route,status,latency_ms\n");
    for (int i = 0; i < 80 * 50; i++) {
      double t = T0 + i / 50.0;
      boolean broken = i >= 30 * 50 && i < 50 * 50;
      b.append(String.format(Locale.ROOT, "%.2f,/api,%d,%d%n", t, broken ? 503 : 200, 40));
      b.append(String.format(Locale.ROOT, "%.2f,/static,200,5%n", t));
    }
    return b.toString();
  }

  public static LogSource source(String name, String content) {
    return LogSource.bytes(name, content.getBytes(StandardCharsets.UTF_8));
  }

  public static ReplayResult replay(String log, ReplayOptions o, BreakerPolicy... policies)
      throws IOException {
    return replay(List.of(source("access.log", log)), o, policies);
  }

  public static ReplayResult replay(
      List<LogSource> sources, ReplayOptions o, BreakerPolicy... policies) throws IOException {
    List<ReplayPolicy> ps =
        java.util.stream.IntStream.range(0, policies.length)
            .mapToObj(i -> new ReplayPolicy("p" + i, policies[i]))
            .toList();
    return LogReplay.run(sources, ps, o, null);
  }

  /**
   * A CSV log generated while it is read: {@code lines} records, {@code rate} per second over
   * {@code routes} routes, each written up to {@code jitterMillis} away from its place (several
   * writers), a tenth of one route failing for a minute every ten.
   */
  static LogSource generated(long lines, int rate, int routes, int jitterMillis) {
    return new LogSource() {
      @Override
      public String name() {
        return "generated";
      }

      @Override
      InputStream openRaw() {
        return new InputStream() {
          private final StringBuilder line = new StringBuilder(64);
          private byte[] buf = "time,route,status,latency_ms\n".getBytes(StandardCharsets.UTF_8);
          private int pos;
          private long n;
          private long x = 12345;

          @Override
          public int read() {
            if (pos == buf.length && !refill()) {
              return -1;
            }
            return buf[pos++] & 0xff;
          }

          @Override
          public int read(byte[] b, int off, int len) {
            if (pos == buf.length && !refill()) {
              return -1;
            }
            int k = Math.min(len, buf.length - pos);
            System.arraycopy(buf, pos, b, off, k);
            pos += k;
            return k;
          }

          private boolean refill() {
            if (n >= lines) {
              return false;
            }
            line.setLength(0);
            for (int j = 0; j < 256 && n < lines; j++, n++) {
              x = x * 6364136223846793005L + 1442695040888963407L;
              long jitter =
                  jitterMillis == 0 ? 0 : Math.floorMod(x >>> 20, 2L * jitterMillis) - jitterMillis;
              long ms = T0 * 1000 + n * 1000 / rate + jitter;
              int route = (int) Math.floorMod(x >>> 40, routes);
              long minute = (n / rate) / 60;
              boolean failing = route == 0 && minute % 10 == 9;
              line.append(ms / 1000).append('.');
              long f = ms % 1000;
              line.append(f < 100 ? (f < 10 ? "00" : "0") : "").append(f);
              line.append(",/r").append(route).append(',').append(failing ? 503 : 200);
              line.append(',').append(5 + (x >>> 58)).append('\n');
            }
            buf = line.toString().getBytes(StandardCharsets.US_ASCII);
            pos = 0;
            return true;
          }
        };
      }
    };
  }
}
