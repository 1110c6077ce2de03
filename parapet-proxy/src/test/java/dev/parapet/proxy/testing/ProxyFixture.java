package dev.parapet.proxy.testing;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.time.RandomSource;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.admin.AdminServer;
import dev.parapet.proxy.cache.EdgeCache;
import dev.parapet.proxy.config.Cidr;
import dev.parapet.proxy.faultorigin.FaultOrigin;
import dev.parapet.proxy.faultorigin.FaultOriginSettings;
import dev.parapet.proxy.faultorigin.FaultPlan;
import dev.parapet.proxy.flow.ProxySettings;
import dev.parapet.proxy.net.Transport;
import dev.parapet.proxy.overload.OverloadMonitor;
import dev.parapet.proxy.route.Route;
import dev.parapet.proxy.server.ProxyServer;
import dev.parapet.proxy.upstream.OriginSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What an end-to-end test of the proxy starts — origins, proxies, admin listeners, HTTP clients —
 * started in one call each and closed after the test, newest first (an admin listener before its
 * proxy, a proxy before its origins), whether the test passed or not.
 *
 * <pre>{@code
 * @RegisterExtension final ProxyFixture fx = new ProxyFixture();
 *
 * @Test
 * void forwards() throws Exception {
 *   TestOrigin o = fx.testOrigin();
 *   ProxyServer p =
 *       fx.proxy().routes(route("api", "/", "api")).origins(pool("api", o.address()).build()).start();
 *   assertThat(fx.get(p.port(), "/x").statusCode()).isEqualTo(200);
 * }
 * }</pre>
 *
 * <p>Why this shape:
 *
 * <ul>
 *   <li><b>A field extension</b> ({@code @RegisterExtension}), not a base class and not an
 *       {@code @AfterEach} per class: a test class keeps its own hierarchy, names the fixture it
 *       uses, and has no cleanup code of its own. JUnit makes a new test instance, and so a new
 *       fixture, per test method. Outside JUnit's lifecycle (a {@code try} block) it is an {@link
 *       AutoCloseable}.
 *   <li><b>Starters return what is ready and already owned</b> ({@link #testOrigin()}, {@link
 *       #proxy()}{@code ...start()}, {@link #admin}), so a test reads as origin, proxy, request,
 *       assertion. {@link #closeLater} takes anything else a test opens.
 *   <li><b>The suite's defaults, stated once</b>: a proxy named {@value #NAME} (the name tests find
 *       in {@code Via}, {@code Proxy-Status} and {@code Cache-Status}) on 127.0.0.1, an ephemeral
 *       port, the system ticker, {@code RandomSource.seeded(1)} and two event loop threads; a pool
 *       ({@link #pool}) without retries and with a 500 ms connect timeout. A test states only where
 *       it differs ({@code .threads(1)}, {@code .seed(7)}, {@code .ticker(t)}, {@code
 *       .timeout(d)}), so the difference is what stands out.
 *   <li><b>One HTTP/1.1 client</b> with a 5 s connect timeout; every request has a 30 s timeout: a
 *       hang fails the test instead of stalling the build, and nothing bounds how fast the proxy
 *       must be. {@link #raw} speaks bytes on a socket for what a client library would correct.
 * </ul>
 */
public final class ProxyFixture implements AfterEachCallback, AutoCloseable {
  /** The proxy's name unless a test gives another. */
  public static final String NAME = "edge-test";

  /** The bearer token of {@link #admin} listeners. */
  public static final String ADMIN_TOKEN = "s3cret";

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration RAW_SILENCE = Duration.ofSeconds(10);

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final HttpClient http = newClient();

  // ---- lifetime --------------------------------------------------------------------------------

  /** Closes {@code resource} after the test, before everything registered earlier. */
  public <T extends AutoCloseable> T closeLater(T resource) {
    closeables.add(resource);
    return resource;
  }

  /**
   * Closes {@code resource} now, mid-test, and forgets it: not everything closes twice ({@link
   * ProxyServer#close()} throws the second time).
   */
  public void closeNow(AutoCloseable resource) throws Exception {
    closeables.removeIf(c -> c == resource);
    resource.close();
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    close();
  }

  /** Closes everything, newest first; the first failure is thrown, later ones suppressed in it. */
  @Override
  public void close() throws Exception {
    Exception failure = null;
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    closeables.clear();
    if (failure != null) {
      throw failure;
    }
  }

  // ---- origins ---------------------------------------------------------------------------------

  public TestOrigin testOrigin() throws IOException {
    return closeLater(new TestOrigin());
  }

  public CacheOrigin cacheOrigin() throws IOException {
    return closeLater(new CacheOrigin());
  }

  public PathOrigin pathOrigin(String name) throws IOException {
    return closeLater(new PathOrigin(name));
  }

  /** {@code parapet origin} on loopback, playing {@code plan}. */
  public FaultOrigin faultOrigin(FaultPlan plan) {
    return closeLater(FaultOrigin.start(FaultOriginSettings.loopback(), plan));
  }

  /**
   * A pool as the end-to-end tests build it, by {@link OriginSettings}' short constructor: no
   * retries, no hedging, no fallback, the default host selection; a 500 ms connect timeout, and
   * {@link OriginSettings#defaults}' timeout, limits and breaker until told otherwise.
   */
  public static PoolSpec pool(String name, InetSocketAddress... hosts) {
    return pool(name, List.of(hosts));
  }

  public static PoolSpec pool(String name, List<InetSocketAddress> hosts) {
    return new PoolSpec(name, hosts);
  }

  /** A route on any host with an 8 s timeout. */
  /**
   * An edge cache of 1 MiB for route {@code routeId}: stale-if-error 300 s, no
   * stale-while-revalidate, no default TTL, its work on the calling thread, the system wall clock.
   */
  public static EdgeCache edgeCache(String routeId) {
    return new EdgeCache(
        NAME,
        new EdgeCache.Settings(1 << 20, Duration.ofSeconds(300), Duration.ZERO),
        Map.of(routeId, Duration.ZERO),
        Runnable::run,
        System::currentTimeMillis);
  }

  public static Route route(String id, String prefix, String origin) {
    return new Route(id, null, prefix, origin, Duration.ofSeconds(8));
  }

  // ---- the proxy and its admin listener -------------------------------------------------------

  /** A proxy with the suite's defaults, to adjust and {@link ProxySpec#start() start}. */
  public ProxySpec proxy() {
    return new ProxySpec();
  }

  /** The admin listener of {@code proxy} on loopback, with {@link #ADMIN_TOKEN}, started. */
  public AdminServer admin(ProxyServer proxy) throws InterruptedException {
    return admin(proxy, Ticker.system());
  }

  public AdminServer admin(ProxyServer proxy, Ticker ticker) throws InterruptedException {
    return closeLater(new AdminServer(loopback(), ADMIN_TOKEN, proxy, ticker).start());
  }

  // ---- requests --------------------------------------------------------------------------------

  /** An HTTP/1.1 client, shut down after the test. */
  private HttpClient newClient() {
    HttpClient c =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    closeables.add(c::shutdownNow);
    return c;
  }

  /** A GET of {@code path} on 127.0.0.1:{@code port}, with header fields as name, value, … */
  public static HttpRequest.Builder request(int port, String path, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(REQUEST_TIMEOUT);
    if (headers.length > 0) {
      b.headers(headers);
    }
    return b;
  }

  public HttpResponse<String> send(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  public HttpResponse<String> get(int port, String path, String... headers)
      throws IOException, InterruptedException {
    return send(request(port, path, headers));
  }

  /** {@code method} without a body. */
  public HttpResponse<String> send(int port, String method, String path, String... headers)
      throws IOException, InterruptedException {
    return send(request(port, path, headers).method(method, HttpRequest.BodyPublishers.noBody()));
  }

  public CompletableFuture<HttpResponse<String>> sendAsync(
      int port, String path, String... headers) {
    return http.sendAsync(
        request(port, path, headers).build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * On a client of its own, so on a connection of its own: never one the other requests of the test
   * use before or after.
   */
  public CompletableFuture<HttpResponse<String>> sendAsyncOnNewConnection(
      HttpRequest.Builder request) {
    return newClient().sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** {@code method path} on an admin listener, as {@code Bearer token} unless it is null. */
  public HttpResponse<String> call(
      AdminServer admin, String method, String path, @Nullable String token)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        request(admin.port(), path).method(method, HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return send(b);
  }

  /**
   * Writes {@code request} as ISO-8859-1 bytes on a new connection and returns every byte the peer
   * answers until it closes the connection. A reset ends the answer too: a server that refuses
   * input it has not read closes with a reset, which is TCP's doing, not the server's choice. Ten
   * seconds of silence fail the test: the peer should have closed.
   */
  public static String raw(int port, String request) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout((int) RAW_SILENCE.toMillis());
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[8192];
      try {
        int n;
        while ((n = in.read(buf)) >= 0) {
          got.write(buf, 0, n);
        }
      } catch (SocketTimeoutException silence) {
        throw new AssertionError(
            "connection to 127.0.0.1:"
                + port
                + " : open after "
                + RAW_SILENCE.toSeconds()
                + " s of silence (expected: closed after the answer); got:\n"
                + got.toString(StandardCharsets.ISO_8859_1),
            silence);
      } catch (SocketException reset) {
        // the answer ends here
      }
      return got.toString(StandardCharsets.ISO_8859_1);
    }
  }

  private static InetSocketAddress loopback() {
    return new InetSocketAddress("127.0.0.1", 0);
  }

  // ---- specifications --------------------------------------------------------------------------

  /** A proxy to start: {@link ProxyServer.Builder} with the suite's defaults. */
  public final class ProxySpec {
    private String name = NAME;
    private UnaryOperator<ProxySettings> settings = UnaryOperator.identity();
    private List<Route> routes = List.of();
    private List<OriginSettings> origins = List.of();
    private Ticker ticker = Ticker.system();
    private long seed = 1;
    private int threads = 2;
    private @Nullable EdgeCache cache;
    private @Nullable OverloadMonitor overload;
    private @Nullable Transport transport;
    private @Nullable Path accessLog;
    private dev.parapet.proxy.config.@Nullable Http2Config http2;
    private dev.parapet.proxy.config.@Nullable TlsConfig tls;

    private ProxySpec() {}

    private dev.parapet.proxy.flow.@Nullable Tracing tracing;

    public ProxySpec name(String name) {
      this.name = name;
      return this;
    }

    /** Changes {@link ProxySettings#defaults} for the name and an ephemeral loopback port. */
    public ProxySpec settings(UnaryOperator<ProxySettings> change) {
      this.settings = change;
      return this;
    }

    /**
     * Trusts the internal signals (deadline, priority, forwarding headers) of loopback peers, as a
     * tier behind another one does: the suite's clients play that other tier.
     */
    public ProxySpec trustingLoopback() {
      UnaryOperator<ProxySettings> before = settings;
      this.settings = s -> before.apply(s).withTrustedProxies(List.of(Cidr.parse("127.0.0.1/32")));
      return this;
    }

    public ProxySpec routes(Route... routes) {
      this.routes = List.of(routes);
      return this;
    }

    public ProxySpec origins(OriginSettings... origins) {
      this.origins = List.of(origins);
      return this;
    }

    public ProxySpec ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /** The seed of the proxy's {@link RandomSource} (jitter, hedging, balancing). */
    public ProxySpec seed(long seed) {
      this.seed = seed;
      return this;
    }

    public ProxySpec threads(int threads) {
      this.threads = threads;
      return this;
    }

    public ProxySpec cache(EdgeCache cache) {
      this.cache = cache;
      return this;
    }

    public ProxySpec overload(OverloadMonitor overload) {
      this.overload = overload;
      return this;
    }

    public ProxySpec transport(Transport transport) {
      this.transport = transport;
      return this;
    }

    public ProxySpec tracing(dev.parapet.proxy.flow.Tracing tracing) {
      this.tracing = tracing;
      return this;
    }

    public ProxySpec http2(dev.parapet.proxy.config.Http2Config http2) {
      this.http2 = http2;
      return this;
    }

    /** An HTTPS listener beside the plain one. */
    public ProxySpec tls(dev.parapet.proxy.config.TlsConfig tls) {
      this.tls = tls;
      return this;
    }

    public ProxySpec accessLog(Path file) {
      this.accessLog = file;
      return this;
    }

    /** Builds, starts and owns the proxy. */
    public ProxyServer start() throws InterruptedException {
      ProxyServer.Builder b =
          ProxyServer.builder(settings.apply(ProxySettings.defaults(name, loopback())))
              .routes(routes)
              .origins(origins)
              .clock(ticker, RandomSource.seeded(seed))
              .threads(threads);
      if (cache != null) {
        b.cache(cache);
      }
      if (overload != null) {
        b.overload(overload);
      }
      if (transport != null) {
        b.transport(transport);
      }
      if (accessLog != null) {
        b.accessLog(accessLog);
      }
      if (tracing != null) {
        b.tracing(tracing);
      }
      if (http2 != null) {
        b.http2(http2);
      }
      if (tls != null) {
        b.tls(tls);
      }
      ProxyServer p = b.build();
      closeLater(p);
      return p.start();
    }
  }

  /** An origin pool to build; see {@link ProxyFixture#pool}. */
  public static final class PoolSpec {
    private final OriginSettings defaults;
    private Duration timeout;
    private int maxRequests;
    private BreakerPolicy breaker;
    private Scope scope = Scope.ROUTE;

    private PoolSpec(String name, List<InetSocketAddress> hosts) {
      this.defaults = OriginSettings.defaults(name, hosts);
      this.timeout = defaults.timeout();
      this.maxRequests = defaults.maxRequests();
      this.breaker = defaults.breaker();
    }

    /** How long one attempt may take. */
    public PoolSpec timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    public PoolSpec maxRequests(int maxRequests) {
      this.maxRequests = maxRequests;
      return this;
    }

    public PoolSpec breaker(BreakerPolicy breaker) {
      this.breaker = breaker;
      return this;
    }

    public PoolSpec scope(Scope scope) {
      this.scope = scope;
      return this;
    }

    public OriginSettings build() {
      return defaults.toBuilder()
          .connectTimeout(Duration.ofMillis(500))
          .timeout(timeout)
          .limits(defaults.maxConnections(), defaults.maxPending(), maxRequests)
          .breaker(breaker, scope)
          .retry(OriginSettings.NO_RETRY)
          .build();
    }
  }
}
