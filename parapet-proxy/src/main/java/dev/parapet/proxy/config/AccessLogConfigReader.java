package dev.parapet.proxy.config;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code access_log:} block, {@code {path: FILE}}: the file is relative to the
 * configuration file and its directory must exist; no block means no access log.
 */
final class AccessLogConfigReader {
  static final Set<String> KEYS = MappingReader.keys("path");

  private AccessLogConfigReader() {}

  /** The access log file, or null when it is off (or its path was reported). */
  static @Nullable Path read(MappingReader r, Path baseDir) {
    if (!r.has("path")) {
      return null;
    }
    String p = r.string("path", "");
    if (r.failed("path")) {
      return null;
    }
    try {
      Path file = baseDir.resolve(p).normalize();
      Path parent = file.toAbsolutePath().getParent();
      if (p.isBlank()
          || Files.isDirectory(file)
          || (parent != null && !Files.isDirectory(parent))) {
        r.error("path", "must be a file in an existing directory, was '" + p + "'");
        return null;
      }
      return file;
    } catch (InvalidPathException e) {
      r.error("path", "must be a file path, was '" + p + "'");
      return null;
    }
  }
}
