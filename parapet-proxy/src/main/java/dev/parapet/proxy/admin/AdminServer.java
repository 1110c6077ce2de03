package dev.parapet.proxy.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerSnapshot;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Mode;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.fleet.FleetLimiter;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.cache.Purge;
import dev.parapet.proxy.flow.IncidentMode;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.upstream.OriginPool;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The admin API on its own listener (DESIGN.md "Admin API"): health, readiness, Prometheus metrics,
 * breakers (list; force open, close, reset, shadow, enforce), origins (hosts: health, ejection,
 * slow start, in flight), the incident runbook ({@code GET/POST/DELETE /admin/incident}), cache
 * purges ({@code POST /admin/purge}) and the live {@link Dashboard}. {@code /readyz} is false while
 * starting, draining, or when the overload monitor is at STOP_ACCEPTING.
 *
 * <p>Security: it listens on loopback by default, and binding off loopback without a token is
 * refused at start-up. Before any endpoint runs, {@link AdminGate} checks that {@code Host} names
 * this listener (DNS rebinding), that a change carries no foreign {@code Origin} (cross-site
 * writes), and the bearer token: for every change, and for reads other than {@code /healthz} and
 * {@code /readyz} off loopback or with {@code admin.read_token: required}. No answer carries CORS
 * headers.
 */
public final class AdminServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String BREAKERS = "/admin/breakers";
  private static final String INCIDENT = "/admin/incident";
  private static final String PURGE = "/admin/purge";

  private final InetSocketAddress listen;
  private final AdminGate gate;
  private final ProxyServer proxy;
  private final Ticker ticker;
  private final AtomicBoolean ready = new AtomicBoolean();
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private @Nullable Channel channel;
  private volatile @Nullable Reloader reloader;
  private final Dashboard dashboard;

  /**
   * The admin API with the default {@link AdminAccess}: {@code token}, the loopback names and the
   * listen address, reads on loopback without a token.
   *
   * @param token the bearer token, or null (then the listener must be on loopback and every change
   *     is refused)
   * @throws IllegalArgumentException when {@code listen} is off loopback and there is no token
   */
  public AdminServer(
      InetSocketAddress listen, @Nullable String token, ProxyServer proxy, Ticker ticker) {
    this(listen, AdminAccess.withToken(token), proxy, ticker);
  }

  /**
   * @throws IllegalArgumentException when {@code listen} is off loopback and there is no token, or
   *     for a host in {@code access} that is not a host name or IP address
   */
  public AdminServer(
      InetSocketAddress listen, AdminAccess access, ProxyServer proxy, Ticker ticker) {
    boolean loopback = listen.getAddress() != null && listen.getAddress().isLoopbackAddress();
    String token = access.token();
    try {
      if (!loopback && (token == null || token.isBlank())) {
        throw new IllegalArgumentException(
            "admin.listen : "
                + listen
                + " (expected: a loopback address, or admin.token_file set: an admin API off loopback needs a token)");
      }
      this.gate = new AdminGate(listen, access);
    } catch (IllegalArgumentException e) {
      group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
    this.listen = listen;
    this.proxy = proxy;
    this.ticker = ticker;
    this.dashboard = new Dashboard(proxy, ticker);
  }

  /** Binds the admin listener. */
  public AdminServer start() throws InterruptedException {
    channel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(64 * 1024))
                        .addLast(new Handler());
                  }
                })
            .bind(listen)
            .sync()
            .channel();
    dashboard.start(group.next());
    return this;
  }

  /** The bound port. */
  public int port() {
    Channel c = channel;
    if (c == null) {
      throw new IllegalStateException("admin : not started (expected: start() first)");
    }
    return ((InetSocketAddress) c.localAddress()).getPort();
  }

  /** Enables {@code POST /admin/reload}. */
  public AdminServer reloader(Reloader r) {
    this.reloader = r;
    return this;
  }

  /**
   * What {@code POST /admin/reload} runs, or null (also what SIGHUP runs under {@code parapet
   * run}).
   */
  public @Nullable Reloader reloader() {
    return reloader;
  }

  /** Sets what {@code /readyz} answers (false while starting, draining or overloaded). */
  public void ready(boolean isReady) {
    ready.set(isReady);
  }

  @Override
  public void close() {
    dashboard.close();
    Channel c = channel;
    if (c != null) {
      c.close().syncUninterruptibly();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      FullHttpResponse r;
      try {
        r = handle(req);
      } catch (RuntimeException e) {
        r =
            json(
                HttpResponseStatus.INTERNAL_SERVER_ERROR,
                error("internal error: " + e.getClass().getSimpleName()));
      }
      boolean keepAlive = HttpUtil.isKeepAlive(req);
      HttpUtil.setKeepAlive(r, keepAlive);
      if (keepAlive) {
        ctx.writeAndFlush(r);
      } else {
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  FullHttpResponse handle(FullHttpRequest req) {
    if (req.decoderResult().isFailure()) {
      return json(HttpResponseStatus.BAD_REQUEST, error("malformed request"));
    }
    String path = req.uri();
    int q = path.indexOf('?');
    if (q >= 0) {
      path = path.substring(0, q);
    }
    AdminGate.Refusal refusal = gate.check(req, path);
    if (refusal != null) {
      return refused(refusal);
    }
    boolean change = !req.method().equals(HttpMethod.GET) && !req.method().equals(HttpMethod.HEAD);
    if (!change) {
      switch (path) {
        case "/healthz":
          return text(HttpResponseStatus.OK, "ok\n", "text/plain; charset=utf-8");
        case "/readyz":
          String state = Dashboard.state(proxy);
          if (state.equals("draining")) {
            return text(
                HttpResponseStatus.SERVICE_UNAVAILABLE, "draining\n", "text/plain; charset=utf-8");
          }
          return ready.get() && state.equals("serving")
              ? text(HttpResponseStatus.OK, "ready\n", "text/plain; charset=utf-8")
              : text(
                  HttpResponseStatus.SERVICE_UNAVAILABLE,
                  "not ready\n",
                  "text/plain; charset=utf-8");
        case "/metrics":
          return text(
              HttpResponseStatus.OK,
              proxy.metrics().scrape(),
              "text/plain; version=0.0.4; charset=utf-8");
        case BREAKERS:
          return json(HttpResponseStatus.OK, breakers());
        case "/admin/origins":
          return json(HttpResponseStatus.OK, origins());
        case INCIDENT:
          return json(HttpResponseStatus.OK, incidentJson(proxy.incident().active()));
        case Dashboard.PAGE_PATH:
          return bytes(HttpResponseStatus.OK, dashboard.page(), "text/html; charset=utf-8");
        case Dashboard.JSON_PATH:
          return json(HttpResponseStatus.OK, dashboard.json(Dashboard.since(req.uri())));
        default:
          return json(HttpResponseStatus.NOT_FOUND, error("no such endpoint: " + path));
      }
    }
    if (req.method().equals(HttpMethod.POST) && path.equals("/admin/reload")) {
      return reload();
    }
    if (path.equals(INCIDENT)
        && (req.method().equals(HttpMethod.POST) || req.method().equals(HttpMethod.DELETE))) {
      return incident(req.method().equals(HttpMethod.POST));
    }
    if (req.method().equals(HttpMethod.POST) && path.equals(PURGE)) {
      return purge(req);
    }
    if (req.method().equals(HttpMethod.POST) && path.startsWith(BREAKERS + "/")) {
      return breakerAction(path.substring(BREAKERS.length() + 1));
    }
    return json(
        HttpResponseStatus.NOT_FOUND, error("no such endpoint: " + req.method() + " " + path));
  }

  /** A refusal by the gate as RFC 9457 {@code application/problem+json}. */
  private static FullHttpResponse refused(AdminGate.Refusal refusal) {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "https://parapet.dev/problems/" + refusal.type());
    body.put("title", refusal.status().reasonPhrase());
    body.put("status", refusal.status().code());
    body.put("detail", refusal.detail());
    FullHttpResponse r = json(refusal.status(), body);
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/problem+json");
    if (refusal.status().equals(HttpResponseStatus.UNAUTHORIZED)) {
      r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"parapet-admin\"");
    }
    return r;
  }

  /** {@code scope:name/action}, the key URL-encoded (names may hold '/'). */
  private FullHttpResponse breakerAction(String rest) {
    int slash = rest.lastIndexOf('/');
    if (slash <= 0) {
      return json(
          HttpResponseStatus.NOT_FOUND,
          error("expected /admin/breakers/{key}/{open|close|reset|shadow|enforce}"));
    }
    String key = URLDecoder.decode(rest.substring(0, slash), StandardCharsets.UTF_8);
    String action = rest.substring(slash + 1);
    CircuitBreaker b = find(key);
    if (b == null) {
      return json(HttpResponseStatus.NOT_FOUND, error("no breaker " + key));
    }
    long now = ticker.read();
    switch (action) {
      case "open" -> b.forceOpen(now);
      case "close" -> b.close(now);
      case "reset" -> b.reset(now);
      case "shadow" -> b.mode(Mode.SHADOW);
      case "enforce" -> b.mode(Mode.ENFORCE);
      default -> {
        return json(
            HttpResponseStatus.NOT_FOUND,
            error("action : " + action + " (expected: open, close, reset, shadow or enforce)"));
      }
    }
    org.slf4j.LoggerFactory.getLogger("parapet.admin")
        .info("breaker {} {} by admin API", key, action);
    return json(HttpResponseStatus.OK, breakerJson(b.snapshot(now)));
  }

  /**
   * {@code POST /admin/purge} with a JSON body: one of {@code "url"}, {@code "prefix"} (absolute
   * URLs) or {@code "key"} (a surrogate key), and {@code "soft": true} to mark stale instead of
   * removing. Answers how many stored responses were purged.
   */
  private FullHttpResponse purge(FullHttpRequest req) {
    com.fasterxml.jackson.databind.JsonNode body;
    try {
      body = JSON.readTree(req.content().toString(StandardCharsets.UTF_8));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      body = null;
    }
    String expected =
        "a JSON object with one of url, prefix, key (a string) and optionally soft (a boolean)";
    if (body == null || !body.isObject()) {
      return json(
          HttpResponseStatus.BAD_REQUEST, error("body : not JSON (expected: " + expected + ")"));
    }
    Purge.By by = null;
    String value = null;
    for (Purge.By b : Purge.By.values()) {
      com.fasterxml.jackson.databind.JsonNode v = body.get(b.label());
      if (v != null) {
        if (by != null || !v.isTextual()) {
          return json(
              HttpResponseStatus.BAD_REQUEST,
              error("body : " + body + " (expected: " + expected + ")"));
        }
        by = b;
        value = v.asText();
      }
    }
    com.fasterxml.jackson.databind.JsonNode soft = body.get("soft");
    if (by == null || value == null || (soft != null && !soft.isBoolean())) {
      return json(
          HttpResponseStatus.BAD_REQUEST,
          error("body : " + body + " (expected: " + expected + ")"));
    }
    Purge.Result result;
    try {
      result = Purge.run(proxy.cache(), by, value, soft != null && soft.asBoolean(), ticker.read());
    } catch (IllegalArgumentException e) {
      return json(HttpResponseStatus.BAD_REQUEST, error(String.valueOf(e.getMessage())));
    }
    String mode = result.soft() ? "soft" : "hard";
    proxy.metrics().count("parapet.cache.purges", "by", by.label(), "mode", mode);
    for (int i = 0; i < result.purged(); i++) {
      proxy.metrics().cache(EdgeCache.Status.PURGED.label());
    }
    org.slf4j.LoggerFactory.getLogger("parapet.admin")
        .info("purge {} {} {}: {} responses", mode, by.label(), value, result.purged());
    ObjectNode out = JSON.createObjectNode();
    out.put(by.label(), value);
    out.put("mode", mode);
    out.put("purged", result.purged());
    return json(HttpResponseStatus.OK, out);
  }

  private FullHttpResponse reload() {
    Reloader r = reloader;
    if (r == null) {
      return json(
          HttpResponseStatus.NOT_FOUND,
          error("reload is not available: the proxy was not started from a file"));
    }
    Reloader.Result result = r.reload();
    ObjectNode body = JSON.createObjectNode();
    body.put("applied", result.status() == 200);
    body.put("summary", result.summary());
    ArrayNode errors = body.putArray("errors");
    result.errors().forEach(errors::add);
    org.slf4j.LoggerFactory.getLogger("parapet.admin").info("reload: {}", result.summary());
    return json(HttpResponseStatus.valueOf(result.status()), body);
  }

  private @Nullable CircuitBreaker find(String key) {
    int colon = key.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    Scope scope;
    try {
      scope = Scope.valueOf(key.substring(0, colon).toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return null;
    }
    String name = key.substring(colon + 1);
    return name.isEmpty() ? null : proxy.breakers().find(BreakerKey.of(scope, name));
  }

  private ArrayNode breakers() {
    ArrayNode list = JSON.createArrayNode();
    long now = ticker.read();
    for (CircuitBreaker b : proxy.breakers().all()) {
      list.add(breakerJson(b.snapshot(now)));
    }
    return list;
  }

  private static ObjectNode breakerJson(BreakerSnapshot s) {
    ObjectNode n = JSON.createObjectNode();
    n.put("key", s.key().toString());
    n.put("scope", s.key().scope().name().toLowerCase(Locale.ROOT));
    n.put("state", s.state().name());
    n.put("mode", s.mode().name().toLowerCase(Locale.ROOT));
    n.put("calls", s.calls());
    n.put("failure_rate", s.failureRate());
    n.put("slow_rate", s.slowRate());
    n.put("open_remaining_ms", s.openRemainingNanos() / 1_000_000);
    n.put("backoff_level", s.backoffLevel());
    n.put("probes_issued", s.probesIssued());
    n.put("probes_succeeded", s.probesSucceeded());
    n.put("flapping", s.flapping());
    n.put("rejected", s.rejected());
    n.put("shadow_rejected", s.shadowRejected());
    n.put("transitions", s.transitions());
    return n;
  }

  /** {@code POST} ({@code on}) or {@code DELETE /admin/incident}; one JSON log line each. */
  private FullHttpResponse incident(boolean on) {
    IncidentMode.Change c = proxy.incident(on);
    ObjectNode body = incidentJson(c.active());
    body.put("changed", c.changed());
    body.put("breakers_rebuilt", c.breakersRebuilt());
    body.put("breakers_kept_tripped", c.breakersKeptTripped());
    ObjectNode line = JSON.createObjectNode();
    line.put("event", on ? "incident_declared" : "incident_ended");
    line.setAll(body);
    org.slf4j.LoggerFactory.getLogger("parapet.incident").warn("{}", line);
    return json(HttpResponseStatus.OK, body);
  }

  private ObjectNode incidentJson(boolean active) {
    ObjectNode n = JSON.createObjectNode();
    n.put("active", active);
    Instant since = proxy.incident().since();
    if (since != null) {
      n.put("since", since.toString());
    } else {
      n.putNull("since");
    }
    n.put("prefer_stale", proxy.incident().preferStale());
    if (active) {
      n.put("failure_rate", IncidentMode.FAILURE_RATE);
    } else {
      n.putNull("failure_rate");
    }
    return n;
  }

  private ArrayNode origins() {
    ArrayNode list = JSON.createArrayNode();
    long now = ticker.read();
    for (OriginPool p : proxy.origins().values()) {
      ObjectNode o = list.addObject();
      o.put("name", p.name());
      o.put("balancer", p.balancerName());
      o.put("inflight", p.inFlight());
      o.put("ejected_hosts", p.ejectedHosts());
      o.put("panic_picks", p.panicPicks());
      o.put("health_checks_sent", p.healthChecksSent());
      FleetLimiter fleet = p.settings().fleetLimit();
      if (fleet != null) {
        FleetLimiter.Stats st = fleet.stats();
        ObjectNode f = o.putObject("fleet_limit");
        f.put("mode", fleet.mode().name().toLowerCase(java.util.Locale.ROOT));
        f.put("rate", fleet.settings().ratePerSecond());
        f.put("instances", fleet.settings().instances());
        f.put("granted_shared", st.grantedShared());
        f.put("granted_local", st.grantedLocal());
        f.put("refused", st.refused());
        f.put("redis_errors", st.sourceErrors());
        f.put("redis_timeouts", st.sourceTimeouts());
      }
      ArrayNode hosts = o.putArray("hosts");
      for (OriginPool.HostStatus h : p.status(now)) {
        ObjectNode hn = hosts.addObject();
        hn.put("id", h.id());
        hn.put("address", h.address());
        hn.put("healthy", h.healthy());
        hn.put("ejected", h.ejected());
        hn.put("ejected_remaining_ms", h.ejectedRemainingNanos() / 1_000_000);
        hn.put("ejections", h.ejections());
        hn.put("ejection_multiplier", h.ejectionMultiplier());
        hn.put("weight", h.weight());
        hn.put("slow_start", h.slowStarting());
        hn.put("inflight", h.inflight());
        hn.put("latency_ms", h.latencyNanos() < 0 ? -1.0 : h.latencyNanos() / 1e6);
        hn.put("open_connections", h.openConnections());
        hn.put("pending", h.pending());
      }
    }
    return list;
  }

  private static ObjectNode error(String message) {
    return JSON.createObjectNode().put("error", message);
  }

  private static FullHttpResponse json(HttpResponseStatus status, Object body) {
    try {
      return text(
          status,
          JSON.writerWithDefaultPrettyPrinter().writeValueAsString(body) + "\n",
          "application/json");
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      return text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "{}\n", "application/json");
    }
  }

  private static FullHttpResponse text(HttpResponseStatus status, String body, String type) {
    return bytes(status, body.getBytes(StandardCharsets.UTF_8), type);
  }

  private static FullHttpResponse bytes(HttpResponseStatus status, byte[] bytes, String type) {
    FullHttpResponse r =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
    r.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, type)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store");
    return r;
  }
}
