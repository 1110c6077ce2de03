package dev.parapet.proxy.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code admin:} block: where the admin API listens, the file holding its token (resolved
 * against the configuration file's directory, and read here so that {@code validate} refuses an
 * empty one as {@code run} does), the extra names {@code Host} may carry, and whether reads need
 * the token. Whether a token is needed at all, and whether the admin listener collides with the
 * data listener, are {@link CrossBlockChecks}.
 */
final class AdminConfigReader {
  static final Set<String> KEYS = MappingReader.keys("listen", "token_file", "hosts", "read_token");

  private AdminConfigReader() {}

  static AdminConfig read(MappingReader r, Path baseDir) {
    AdminConfig d = AdminConfig.DEFAULTS;
    HostPort listen = r.hostPort("listen", d.listen());
    Path tokenFile = tokenFile(r, baseDir);
    List<String> hosts = hosts(r);
    AdminConfig.ReadToken readToken =
        r.choice("read_token", d.readToken(), AdminConfig.ReadToken.values());
    return new AdminConfig(listen, tokenFile, hosts, readToken);
  }

  private static @Nullable Path tokenFile(MappingReader r, Path baseDir) {
    if (!r.has("token_file")) {
      return null;
    }
    String t = r.string("token_file", "");
    if (r.failed("token_file")) {
      return null;
    }
    Path tokenFile;
    try {
      tokenFile = baseDir.resolve(t).normalize();
    } catch (InvalidPathException e) {
      r.error("token_file", "must be a file path, was '" + t + "'");
      return null;
    }
    if (!Files.isRegularFile(tokenFile) || !Files.isReadable(tokenFile)) {
      r.error(
          "token_file",
          "must be a readable file, was '"
              + t
              + "' ("
              + tokenFile
              + (Files.exists(tokenFile) ? " is not a readable file)" : " not found)"));
      return tokenFile;
    }
    try {
      if (Files.readString(tokenFile, StandardCharsets.UTF_8).isBlank()) {
        r.error(
            "token_file",
            "must hold the bearer token, was '" + t + "' (" + tokenFile + " is empty)");
      }
    } catch (IOException e) {
      r.error(
          "token_file",
          "must be a readable UTF-8 file, was '"
              + t
              + "' ("
              + tokenFile
              + ": "
              + e.getClass().getSimpleName()
              + ")");
    }
    return tokenFile;
  }

  private static List<String> hosts(MappingReader r) {
    List<String> hosts = new ArrayList<>();
    List<YamlNode> items = r.list("hosts", "host names like admin.internal");
    for (int i = 0; i < items.size(); i++) {
      String path = r.path("hosts") + "[" + i + "]";
      YamlNode item = items.get(i);
      String host = item instanceof YamlNode.Scalar s ? host(s.text()) : null;
      if (host == null) {
        r.problems()
            .add(
                ConfigProblem.error(
                    path,
                    "must be a host name or IP address without a port, like admin.internal or"
                        + " 10.0.0.5 (any port is accepted), was "
                        + item.describe(),
                    item.location()));
      } else {
        hosts.add(host);
      }
    }
    return hosts;
  }

  /** {@code text} lower case, an IPv6 address without brackets; null when it is not a host. */
  private static @Nullable String host(String text) {
    String h = text.trim().toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      String inner = h.substring(1, h.length() - 1);
      return inner.indexOf(':') >= 0 && IpLiteral.parse(inner) != null ? inner : null;
    }
    if (IpLiteral.parse(h) != null || HostPort.isHostName(h)) {
      return h;
    }
    return null;
  }
}
