package dev.parapet.proxy.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the top-level {@code tls:} block (the HTTPS listener) and an origin pool's {@code tls:}
 * block. The files are opened here, not only at start: {@code parapet validate} says which file is
 * unreadable, which key does not belong to its certificate and which certificate is expired or not
 * yet valid, each at its YAML path ({@code tls.certificates[0].cert_file}), all at once.
 */
final class TlsConfigReader {
  static final Set<String> KEYS =
      MappingReader.keys("listen", "certificates", "protocols", "provider");
  static final Set<String> ORIGIN_KEYS =
      MappingReader.keys("sni", "verify", "ca_file", "cert_file", "key_file");
  private static final Set<String> CERTIFICATE = MappingReader.keys("cert_file", "key_file");
  private static final Pattern SERVER_NAME =
      Pattern.compile(
          "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");

  /** Where the HTTPS listener binds when {@code tls.listen} is not written. */
  static final HostPort DEFAULT_LISTEN = new HostPort("127.0.0.1", 8443);

  private final List<ConfigProblem> problems;
  private final Path baseDir;
  private final Instant now;

  TlsConfigReader(List<ConfigProblem> problems, Path baseDir, Instant now) {
    this.problems = problems;
    this.baseDir = baseDir;
    this.now = now;
  }

  /** The root's {@code tls:} block, or null when there is none (no HTTPS listener). */
  @Nullable TlsConfig listener(MappingReader root) {
    if (!root.has("tls") || root.isOff("tls")) {
      return null;
    }
    MappingReader r = root.mapping("tls", KEYS);
    HostPort listen = r.hostPort("listen", DEFAULT_LISTEN);
    List<TlsConfig.Certificate> certificates = new ArrayList<>();
    if (r.missing("certificates")) {
      r.error("certificates", "required: at least one {cert_file, key_file}");
    }
    List<YamlNode> items = r.list("certificates", "{cert_file, key_file} mappings");
    if (items.isEmpty() && r.has("certificates") && !r.failed("certificates")) {
      r.error("certificates", "must have at least one {cert_file, key_file}");
    }
    for (int i = 0; i < items.size(); i++) {
      YamlNode item = items.get(i);
      MappingReader c =
          MappingReader.of(
              item, r.path("certificates") + "[" + i + "]", item.location(), problems, CERTIFICATE);
      TlsConfig.Certificate cert = pair(c, true);
      if (cert != null) {
        certificates.add(cert);
      }
    }
    List<String> protocols = protocols(r);
    TlsConfig.Provider provider =
        r.choice("provider", TlsConfig.Provider.AUTO, TlsConfig.Provider.values());
    return new TlsConfig(listen, certificates, protocols, provider);
  }

  /** An origin pool's {@code tls:} block, or null when its connections are plain. */
  @Nullable OriginTlsConfig origin(MappingReader o) {
    if (!o.has("tls") || o.isOff("tls")) {
      return null;
    }
    MappingReader r = o.switchedOn("tls", ORIGIN_KEYS);
    String sni = null;
    if (r.has("sni")) {
      String s = r.string("sni", "");
      if (!r.failed("sni") && !SERVER_NAME.matcher(s).matches()) {
        r.error("sni", "must be a DNS name like api.example.com, was '" + s + "'");
      } else if (!r.failed("sni")) {
        sni = s.toLowerCase(Locale.ROOT);
      }
    }
    boolean verify =
        r.parsed(
            "verify",
            true,
            "true or false",
            v ->
                switch (v.trim().toLowerCase(Locale.ROOT)) {
                  case "true", "on" -> true;
                  case "false", "off" -> false;
                  default ->
                      throw new IllegalArgumentException("must be true or false, was '" + v + "'");
                });
    Path caFile = null;
    if (r.has("ca_file")) {
      caFile = file(r, "ca_file");
      if (caFile != null) {
        try {
          PemFiles.certificates(caFile);
        } catch (IOException | IllegalArgumentException e) {
          r.error("ca_file", "'" + caFile + "' " + message(e));
          caFile = null;
        }
      }
    }
    Path certFile = null;
    Path keyFile = null;
    if (r.has("cert_file") || r.has("key_file")) {
      TlsConfig.Certificate pair = pair(r, false);
      if (pair != null) {
        certFile = pair.certFile();
        keyFile = pair.keyFile();
      }
    }
    return new OriginTlsConfig(sni, verify, caFile, certFile, keyFile);
  }

  /**
   * {@code cert_file} and {@code key_file} of one block, both required, both readable, the key
   * belonging to the certificate, the certificate valid now; null when anything is wrong (reported
   * at the key it concerns).
   */
  private TlsConfig.@Nullable Certificate pair(MappingReader r, boolean inList) {
    for (String key : List.of("cert_file", "key_file")) {
      if (r.missing(key)) {
        r.error(
            key,
            "required"
                + (inList
                    ? ": each certificate is {cert_file: PEM, key_file: PEM}"
                    : " with " + (key.equals("cert_file") ? "key_file" : "cert_file")));
      }
    }
    Path certFile = r.has("cert_file") ? file(r, "cert_file") : null;
    Path keyFile = r.has("key_file") ? file(r, "key_file") : null;
    X509Certificate leaf = null;
    if (certFile != null) {
      try {
        leaf = PemFiles.certificates(certFile).get(0);
      } catch (IOException | IllegalArgumentException e) {
        r.error("cert_file", "'" + certFile + "' " + message(e));
      }
    }
    if (leaf != null) {
      Instant notAfter = leaf.getNotAfter().toInstant();
      Instant notBefore = leaf.getNotBefore().toInstant();
      if (now.isAfter(notAfter)) {
        r.error(
            "cert_file",
            "'"
                + certFile
                + "' expired at "
                + notAfter
                + " (expected: a certificate valid now, "
                + now
                + ")");
      } else if (now.isBefore(notBefore)) {
        r.error(
            "cert_file",
            "'"
                + certFile
                + "' is not valid before "
                + notBefore
                + " (expected: a certificate valid now, "
                + now
                + ")");
      }
    }
    PrivateKey key = null;
    if (keyFile != null) {
      try {
        key = PemFiles.privateKey(keyFile);
      } catch (IOException | IllegalArgumentException e) {
        r.error("key_file", "'" + keyFile + "' " + message(e));
      }
    }
    if (key != null && leaf != null && !PemFiles.matches(key, leaf)) {
      r.error(
          "key_file",
          "'"
              + keyFile
              + "' does not match the certificate in '"
              + certFile
              + "' (expected: the private key of that certificate's public key)");
      return null;
    }
    if (key == null
        || leaf == null
        || certFile == null
        || keyFile == null
        || r.failed("cert_file", "key_file")) {
      return null;
    }
    return new TlsConfig.Certificate(certFile, keyFile);
  }

  /** {@code protocols}, each a name in {@link TlsConfig#KNOWN_PROTOCOLS}, no duplicates. */
  private List<String> protocols(MappingReader r) {
    if (!r.has("protocols")) {
      return TlsConfig.DEFAULT_PROTOCOLS;
    }
    List<String> out = new ArrayList<>();
    List<YamlNode> items = r.list("protocols", "protocol names like TLSv1.3");
    for (int i = 0; i < items.size(); i++) {
      YamlNode item = items.get(i);
      String at = r.path("protocols") + "[" + i + "]";
      String name = item instanceof YamlNode.Scalar s ? s.text().trim() : item.describe();
      String known = null;
      for (String k : TlsConfig.KNOWN_PROTOCOLS) {
        if (k.equalsIgnoreCase(name)) {
          known = k;
        }
      }
      if (known == null) {
        problems.add(
            ConfigProblem.error(
                at,
                "must be one of "
                    + String.join(", ", TlsConfig.KNOWN_PROTOCOLS)
                    + ", was '"
                    + name
                    + "'",
                item.location()));
      } else if (out.contains(known)) {
        problems.add(ConfigProblem.error(at, "'" + known + "' is listed twice", item.location()));
      } else {
        out.add(known);
      }
    }
    if (items.isEmpty() && !r.failed("protocols")) {
      r.error("protocols", "must name at least one of " + TlsConfig.KNOWN_PROTOCOLS);
    }
    return out.isEmpty() ? TlsConfig.DEFAULT_PROTOCOLS : out;
  }

  /** A file relative to the configuration's directory that exists and is readable, else null. */
  private @Nullable Path file(MappingReader r, String key) {
    String p = r.string(key, "");
    if (r.failed(key)) {
      return null;
    }
    Path file;
    try {
      file = baseDir.resolve(p).normalize();
    } catch (InvalidPathException e) {
      r.error(key, "must be a file path, was '" + p + "'");
      return null;
    }
    if (!Files.isRegularFile(file)) {
      r.error(key, "'" + file + "' cannot be read: no such file (expected: a readable PEM file)");
      return null;
    }
    if (!Files.isReadable(file)) {
      r.error(
          key, "'" + file + "' cannot be read: permission denied (expected: a readable PEM file)");
      return null;
    }
    return file;
  }

  private static String message(Exception e) {
    if (e instanceof NoSuchFileException) {
      return "cannot be read: no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "cannot be read: permission denied";
    }
    if (e instanceof IOException) {
      return "cannot be read: " + e.getMessage();
    }
    return String.valueOf(e.getMessage());
  }
}
