package dev.parapet.proxy.config;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code admin:} block: where the admin API listens and the file holding its token,
 * resolved against the configuration file's directory. Whether a token is needed, and whether the
 * admin listener collides with the data listener, are {@link CrossBlockChecks}.
 */
final class AdminConfigReader {
  static final Set<String> KEYS = MappingReader.keys("listen", "token_file");

  private AdminConfigReader() {}

  static AdminConfig read(MappingReader r, Path baseDir) {
    HostPort listen = r.hostPort("listen", AdminConfig.DEFAULTS.listen());
    return new AdminConfig(listen, tokenFile(r, baseDir));
  }

  private static @Nullable Path tokenFile(MappingReader r, Path baseDir) {
    if (!r.has("token_file")) {
      return null;
    }
    String t = r.string("token_file", "");
    if (r.failed("token_file")) {
      return null;
    }
    try {
      Path tokenFile = baseDir.resolve(t).normalize();
      if (!Files.isReadable(tokenFile)) {
        r.error(
            "token_file", "must be a readable file, was '" + t + "' (" + tokenFile + " not found)");
      }
      return tokenFile;
    } catch (InvalidPathException e) {
      r.error("token_file", "must be a file path, was '" + t + "'");
      return null;
    }
  }
}
