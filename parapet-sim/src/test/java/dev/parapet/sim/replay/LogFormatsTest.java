package dev.parapet.sim.replay;

import static dev.parapet.sim.replay.ReplayLogs.csvLog;
import static dev.parapet.sim.replay.ReplayLogs.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdOutputStream;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.outcome.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogFormatsTest {
  private static final ReplayOptions O = ReplayOptions.defaults();
  @TempDir Path dir;

  private static byte[] gzip(byte[] b) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream z = new GZIPOutputStream(out)) {
      z.write(b);
    }
    return out.toByteArray();
  }

  private static byte[] zstd(byte[] b) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream z = new ZstdOutputStream(out)) {
      z.write(b);
    }
    return out.toByteArray();
  }

  @Test
  void gzipAndZstdFilesAreRecognisedByTheirFirstBytes() throws Exception {
    byte[] plain = csvLog().getBytes(StandardCharsets.UTF_8);
    Files.write(dir.resolve("access-1.log"), plain);
    Files.write(dir.resolve("access-2.log.gz"), gzip(plain));
    Files.write(dir.resolve("access-3.zst"), zstd(plain));
    String expected = ReplayReport.text(replay(csvLog(), O, BreakerPolicy.defaults()), O);
    for (String name : List.of("access-1.log", "access-2.log.gz", "access-3.zst")) {
      ReplayResult r =
          replay(
              LogSource.expand(List.of(dir.resolve(name).toString())), O, BreakerPolicy.defaults());
      assertThat(ReplayReport.text(r, O)).as(name).isEqualTo(expected);
    }
  }

  @Test
  void aGlobExpandsToItsFilesAndAMissingFileIsNamed() throws Exception {
    Files.writeString(dir.resolve("a-1.log"), "x");
    Files.writeString(dir.resolve("a-2.log"), "x");
    Files.writeString(dir.resolve("b.log"), "x");
    assertThat(LogSource.expand(List.of(dir.resolve("a-*.log").toString())))
        .extracting(LogSource::name)
        .containsExactly(dir.resolve("a-1.log").toString(), dir.resolve("a-2.log").toString());
    assertThatThrownBy(() -> LogSource.expand(List.of(dir.resolve("nope.log").toString())))
        .hasMessageContaining("nope.log (expected: a readable file)");
    assertThatThrownBy(() -> LogSource.expand(List.of(dir.resolve("z-*.log").toString())))
        .hasMessageContaining("matches no file");
  }

  @Test
  void nginxCombinedWithAndWithoutRequestTime() {
    RouteTable routes = new RouteTable(100);
    NginxLineParser p = new NginxLineParser(routes, 1);
    String line =
        "203.0.113.7 - - [01/Dec/2025:08:00:01 +0100] \"GET /api/users/7?x=1 HTTP/1.1\" 503 12"
            + " \"-\" \"curl/8.5 \\\"quoted\\\"\" 0.250";
    assertThat(parse(p, line)).isTrue();
    assertThat(routes.name(p.route)).isEqualTo("/api");
    assertThat(p.status).isEqualTo(503);
    assertThat(p.latencyNanos).isEqualTo(250_000_000L);
    // 08:00:01 at +01:00 is 07:00:01 UTC, written when the request ended
    assertThat(p.time).isEqualTo(1_764_572_401L * 1_000_000_000L);
    assertThat(p.timeIsEnd()).isTrue();
    String plain =
        "10.0.0.1 - bob [01/Dec/2025:07:00:01 +0000] \"POST /static HTTP/1.1\" 499 0 \"-\" \"x\"";
    assertThat(parse(p, plain)).isTrue();
    assertThat(routes.name(p.route)).isEqualTo("/static");
    assertThat(p.latencyNanos).isZero();
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.CLIENT_CANCELLED));
    // garbage requests share the route "-"; absolute-form targets are read from their path
    String tls =
        "10.0.0.1 - - [01/Dec/2025:07:00:01 +0000] \"\\x16\\x03\\x01\\x02\" 400 150 \"-\" \"-\"";
    assertThat(parse(p, tls)).isTrue();
    assertThat(routes.name(p.route)).isEqualTo("-");
    parse(p, plain.replace("POST /static", "GET http://example.com/api/v1"));
    assertThat(routes.name(p.route)).isEqualTo("/api");
    assertThat(routes.size()).isEqualTo(3);
    assertThatThrownBy(() -> parse(p, "10.0.0.1 - - [01/Foo/2025:07:00:01 +0000] \"GET / x\" 200"))
        .hasMessageContaining("time_local : 01/Foo/2025:07:00:01 +0000");
  }

  @Test
  void envoyDefaultFormatWithItsResponseFlags() {
    RouteTable routes = new RouteTable(100);
    EnvoyLineParser p = new EnvoyLineParser(routes, 2);
    String line =
        "[2016-04-15T20:17:00.310Z] \"POST /api/v1/locations HTTP/2\" 204 - 154 0 226 100"
            + " \"10.0.35.28\" \"nsq2http\" \"cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2\" \"locations\""
            + " \"tcp://10.0.2.1:80\"";
    assertThat(parse(p, line)).isTrue();
    assertThat(routes.name(p.route)).isEqualTo("/api/v1");
    assertThat(p.status).isEqualTo(204);
    assertThat(p.latencyNanos).isEqualTo(226_000_000L);
    assertThat(p.time).isEqualTo(1_460_751_420_310_000_000L);
    assertThat(p.timeIsEnd()).isFalse();
    assertThat(p.outcome).isEqualTo(LineParser.BY_STATUS);
    parse(p, line.replace("204 - ", "504 UT "));
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.TIMEOUT));
    parse(p, line.replace("204 - ", "503 UF,URX "));
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.CONNECT_FAILURE));
    parse(p, line.replace("204 - ", "0 DC "));
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.CLIENT_CANCELLED));
  }

  @Test
  void parapetJsonErrorsSayWhatTheStatusCannot() {
    RouteTable routes = new RouteTable(100);
    JsonLineParser p = new JsonLineParser(routes);
    String base =
        "{\"time\":1764576000.500,\"route\":\"api\\u002fv2\",\"method\":\"GET\","
            + "\"target\":\"/a\",\"status\":504,\"latency_ms\":2000.000,\"attempts\":1";
    assertThat(parse(p, base + ",\"error\":\"RESPONSE_TIMEOUT\"}")).isTrue();
    assertThat(routes.name(p.route)).isEqualTo("api/v2");
    assertThat(p.latencyNanos).isEqualTo(2_000_000_000L);
    assertThat(p.time).isEqualTo(1_764_576_000_500_000_000L);
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.TIMEOUT));
    parse(p, base + ",\"error\":\"CONNECTION_REFUSED\",\"client\":\"10.0.0.1\"}");
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.CONNECT_FAILURE));
    parse(p, base + ",\"error\":\"BREAKER_OPEN\"}");
    assertThat(p.outcome).isEqualTo(LineParser.outcome(Outcome.LOCAL_REJECTION));
    parse(p, base + "}");
    assertThat(p.outcome).isEqualTo(LineParser.BY_STATUS);
    assertThatThrownBy(() -> parse(p, "{\"time\":1,\"status\":200,\"latency_ms\":1}"))
        .hasMessage("route : missing (expected: a value)");
  }

  @Test
  void standardInputIsALog() throws Exception {
    java.io.InputStream saved = System.in;
    try {
      System.setIn(
          new java.io.ByteArrayInputStream(gzip(csvLog().getBytes(StandardCharsets.UTF_8))));
      ReplayResult r = replay(LogSource.expand(List.of("-")), O, BreakerPolicy.defaults());
      assertThat(r.records()).isEqualTo(8000);
      assertThat(r.policies().get(0).route("/api").opens).isPositive();
    } finally {
      System.setIn(saved);
    }
  }

  @Test
  void formatsAreRecognisedFromTheFirstLine() {
    assertThat(detect("{\"time\":1}")).isEqualTo(LogFormat.JSON);
    assertThat(detect("[2016-04-15T20:17:00.310Z] \"GET / HTTP/1.1\" 200"))
        .isEqualTo(LogFormat.ENVOY);
    assertThat(
            detect("1.2.3.4 - - [01/Dec/2025:07:00:01 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\""))
        .isEqualTo(LogFormat.NGINX);
    assertThat(detect("time,route,status,latency_ms")).isEqualTo(LogFormat.CSV);
  }

  @Test
  void isoTimesWithOffsetsAndFractions() {
    assertThat(iso("2025-12-01T08:00:00Z")).isEqualTo(1_764_576_000_000_000_000L);
    assertThat(iso("2025-12-01T09:00:00.123456789+01:00")).isEqualTo(1_764_576_000_123_456_789L);
    assertThat(iso("2025-12-01T07:30:00.5-0030")).isEqualTo(1_764_576_000_500_000_000L);
    assertThat(iso("2024-02-29T00:00:00Z")).isEqualTo(1_709_164_800_000_000_000L);
    assertThatThrownBy(() -> iso("2025-13-01T00:00:00Z")).hasMessageContaining("a valid date");
  }

  private static long iso(String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    return Scan.time(b, 0, b.length);
  }

  private static LogFormat detect(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    return LogFormat.detect(b, 0, b.length);
  }

  private static boolean parse(LineParser p, String line) {
    byte[] b = line.getBytes(StandardCharsets.UTF_8);
    return p.parse(b, 0, b.length);
  }
}
