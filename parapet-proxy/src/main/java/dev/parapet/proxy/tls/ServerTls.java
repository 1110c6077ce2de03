package dev.parapet.proxy.tls;

import dev.parapet.proxy.config.HostPort;
import dev.parapet.proxy.config.PemFiles;
import dev.parapet.proxy.config.TlsConfig;
import dev.parapet.proxy.metrics.ProxyMetrics;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.util.DomainWildcardMappingBuilder;
import io.netty.util.Mapping;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * The HTTPS listener's certificates: one {@link SslContext} per configured certificate, and the SNI
 * mapping from host names to them.
 *
 * <p>How a certificate is picked: {@link SniHandler} reads the ClientHello's server name before
 * anything else and asks {@link #select}; the name is looked up among every certificate's names
 * ({@link CertificateNames}: DNS SANs, else the CN; {@code *.example.com} matches one label). A
 * name listed by two certificates goes to the first. No server name, or one no certificate lists,
 * gets the first certificate (the default): a client that sent the wrong name then fails its own
 * name check, which is what it would do at any other server.
 *
 * <p>Reload: {@link #prepare} builds a complete new set of contexts from the files (so a bad file
 * changes nothing) and {@link #swap} installs it with one volatile write. A handshake that starts
 * afterwards gets the new certificates; connections already open keep the engine they were made
 * with and are not disturbed.
 *
 * <p>Session resumption: each context keeps a session cache ({@value #SESSION_CACHE_SIZE} sessions,
 * {@value #SESSION_TIMEOUT_SECONDS} s) and issues session tickets, both with OpenSSL and the JDK's
 * provider.
 */
public final class ServerTls {
  static final long SESSION_CACHE_SIZE = 20_480;
  static final long SESSION_TIMEOUT_SECONDS = 300;

  /** How long the ClientHello may take before the connection is closed. */
  private static final long CLIENT_HELLO_TIMEOUT_MILLIS = 10_000;

  /** The gauge of each certificate's {@code notAfter}, labelled by its first name. */
  public static final String EXPIRY_GAUGE = "parapet.tls.certificate.expiry.timestamp.seconds";

  private final HostPort listen;
  private final boolean http2;
  private final ProxyMetrics metrics;
  private volatile Contexts contexts;

  /** The contexts of one configuration: what {@link #swap} installs. */
  public static final class Contexts {
    private final Mapping<String, SslContext> byName;
    private final SslProvider provider;
    private final List<String> names;
    private final Map<String, Long> notAfter;

    private Contexts(
        Mapping<String, SslContext> byName,
        SslProvider provider,
        List<String> names,
        Map<String, Long> notAfter) {
      this.byName = byName;
      this.provider = provider;
      this.names = names;
      this.notAfter = notAfter;
    }
  }

  /**
   * The listener's TLS for {@code config}.
   *
   * @param http2 whether to advertise {@code h2} in ALPN (only when the listener can serve it)
   * @throws IllegalArgumentException when a file cannot be used or the provider cannot load
   */
  public ServerTls(TlsConfig config, boolean http2, ProxyMetrics metrics) {
    this.listen = config.listen();
    this.http2 = http2;
    this.metrics = metrics;
    this.contexts = prepare(config);
    exportExpiry();
  }

  /** Where the HTTPS listener binds (a change needs a restart). */
  public HostPort listen() {
    return listen;
  }

  /** The TLS implementation in use. */
  public SslProvider provider() {
    return contexts.provider;
  }

  /** Every name some certificate answers for, in configuration order (for the start-up line). */
  public List<String> names() {
    return contexts.names;
  }

  /**
   * Builds the contexts for {@code config} from its files, without installing them.
   *
   * @throws IllegalArgumentException when {@code config} changes {@code listen}, a file cannot be
   *     used, or the provider cannot load
   */
  public Contexts prepare(TlsConfig config) {
    if (!config.listen().equals(listen)) {
      throw new IllegalArgumentException(
          "tls.listen : "
              + config.listen()
              + " (expected: unchanged "
              + listen
              + "; changing it needs a restart)");
    }
    return build(config, http2);
  }

  /** Installs {@code next}: handshakes from now on use it. */
  public void swap(Contexts next) {
    this.contexts = next;
    exportExpiry();
  }

  /**
   * Each certificate's {@code notAfter} as a Unix time, by its first name ({@code
   * parapet_tls_certificate_expiry_timestamp_seconds{certificate}}, what the alert rules watch). A
   * certificate a reload removed reads NaN.
   */
  private void exportExpiry() {
    for (String label : contexts.notAfter.keySet()) {
      metrics.gauge(
          EXPIRY_GAUGE,
          "certificate",
          label,
          () -> {
            Long seconds = contexts.notAfter.get(label);
            return seconds == null ? Double.NaN : seconds;
          });
    }
  }

  /** A new connection's first handler: reads the server name, then puts the SslHandler there. */
  public SniHandler sniHandler() {
    return new SniHandler(this::select, 0, CLIENT_HELLO_TIMEOUT_MILLIS);
  }

  /** The context for {@code serverName} (null: none sent), from the contexts in force now. */
  SslContext select(@Nullable String serverName) {
    return contexts.byName.map(serverName);
  }

  private static Contexts build(TlsConfig config, boolean http2) {
    SslProvider provider = TlsProviders.choose(config.provider());
    List<String> alpn =
        http2
            ? List.of(ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1)
            : List.of(ApplicationProtocolNames.HTTP_1_1);
    ApplicationProtocolConfig protocols =
        new ApplicationProtocolConfig(
            ApplicationProtocolConfig.Protocol.ALPN,
            // What both providers support: a client that offers none of ours gets no ALPN
            // answer and speaks HTTP/1.1, which is what AlpnDispatch falls back to.
            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
            alpn);
    DomainWildcardMappingBuilder<SslContext> mapping = null;
    Set<String> names = new LinkedHashSet<>();
    Map<String, Long> notAfter = new LinkedHashMap<>();
    for (int i = 0; i < config.certificates().size(); i++) {
      TlsConfig.Certificate c = config.certificates().get(i);
      String at = "tls.certificates[" + i + "]";
      SslContext ctx;
      List<X509Certificate> chain;
      try {
        chain = PemFiles.certificates(c.certFile());
        PrivateKey key = PemFiles.privateKey(c.keyFile());
        ctx =
            SslContextBuilder.forServer(key, chain)
                .sslProvider(provider)
                .protocols(config.protocols())
                .applicationProtocolConfig(protocols)
                // RFC 9113 §9.2.2: no TLS 1.2 suite on HTTP/2's block list (TLS 1.3's are fine).
                .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .sessionCacheSize(SESSION_CACHE_SIZE)
                .sessionTimeout(SESSION_TIMEOUT_SECONDS)
                .build();
      } catch (SSLException | IllegalArgumentException e) {
        throw new IllegalArgumentException(
            at + " : " + e.getMessage() + " (expected: a certificate chain and its key)", e);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            at + " : cannot be read: " + e.getMessage() + " (expected: readable PEM files)",
            new UncheckedIOException(e));
      }
      if (mapping == null) {
        mapping = new DomainWildcardMappingBuilder<>(ctx);
      }
      List<String> own = CertificateNames.of(chain.get(0));
      for (String name : own) {
        if (names.add(name)) {
          mapping.add(name, ctx);
        }
      }
      notAfter.put(
          own.isEmpty() ? at : own.get(0), chain.get(0).getNotAfter().toInstant().getEpochSecond());
    }
    if (mapping == null) {
      throw new IllegalArgumentException(
          "tls.certificates : none (expected: at least one {cert_file, key_file})");
    }
    return new Contexts(mapping.build(), provider, new ArrayList<>(names), notAfter);
  }
}
