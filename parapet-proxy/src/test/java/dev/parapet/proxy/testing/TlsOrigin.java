package dev.parapet.proxy.testing;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * An HTTPS origin on 127.0.0.1 (the JDK's HTTPS server) presenting a given certificate: answers
 * every request 200 with a short body and counts the requests that got through the handshake.
 */
public final class TlsOrigin implements AutoCloseable {
  public final AtomicInteger calls = new AtomicInteger();
  private final HttpsServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  public TlsOrigin(TestCertificates.Issued identity) throws IOException {
    server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setHttpsConfigurator(new HttpsConfigurator(context(identity)));
    server.setExecutor(threads);
    server.createContext(
        "/",
        ex -> {
          calls.incrementAndGet();
          ex.getRequestBody().readAllBytes();
          String proto = ex.getRequestHeaders().getFirst("X-Forwarded-Proto");
          byte[] body = ("tls origin; proto=" + proto).getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, body.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
  }

  private static SSLContext context(TestCertificates.Issued identity) {
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry(
          "origin", identity.key(), new char[0], identity.chain().toArray(new X509Certificate[0]));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, new char[0]);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(kmf.getKeyManagers(), null, null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
