package dev.parapet.sim.replay;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * One log to read: a file, standard input ({@code -}) or bytes. Compression is recognised from the
 * first bytes, not the name: gzip (the JDK's inflater, concatenated members included) and zstd
 * (zstd-jni, the reference C library).
 */
public abstract class LogSource {
  private static final int BUFFER = 1 << 16;

  /** The name errors and the report use. */
  public abstract String name();

  abstract InputStream openRaw() throws IOException;

  /** Whether it can be opened twice (to peek at its first time). */
  boolean reopenable() {
    return true;
  }

  /** The decompressed bytes. */
  final InputStream open() throws IOException {
    BufferedInputStream in = new BufferedInputStream(openRaw(), BUFFER);
    in.mark(4);
    int b0 = in.read();
    int b1 = in.read();
    int b2 = in.read();
    int b3 = in.read();
    in.reset();
    if (b0 == 0x1f && b1 == 0x8b) {
      return new GZIPInputStream(in, BUFFER);
    }
    if (b0 == 0x28 && b1 == 0xb5 && b2 == 0x2f && b3 == 0xfd) {
      return new ZstdInputStreamNoFinalizer(in);
    }
    return in;
  }

  public static LogSource file(Path p) {
    return new LogSource() {
      @Override
      public String name() {
        return p.toString();
      }

      @Override
      InputStream openRaw() throws IOException {
        return Files.newInputStream(p);
      }
    };
  }

  public static LogSource stdin() {
    return new LogSource() {
      @Override
      public String name() {
        return "-";
      }

      @Override
      InputStream openRaw() {
        return new FilterInputStream(System.in) {
          @Override
          public void close() {} // standard input stays open
        };
      }

      @Override
      boolean reopenable() {
        return false;
      }
    };
  }

  public static LogSource bytes(String name, byte[] content) {
    return new LogSource() {
      @Override
      public String name() {
        return name;
      }

      @Override
      InputStream openRaw() {
        return new ByteArrayInputStream(content);
      }
    };
  }

  /**
   * The sources named on a command line: {@code -} for standard input, a path, or a glob in its
   * last segment ({@code /var/log/parapet/access-*.log.zst}).
   *
   * @throws IllegalArgumentException naming an argument that matches nothing
   */
  public static List<LogSource> expand(List<String> args) throws IOException {
    List<LogSource> out = new ArrayList<>();
    for (String a : args) {
      if (a.equals("-")) {
        out.add(stdin());
        continue;
      }
      Path p = Path.of(a);
      Path fileName = p.getFileName();
      String last = fileName == null ? "" : fileName.toString();
      if (last.indexOf('*') < 0 && last.indexOf('?') < 0 && last.indexOf('[') < 0) {
        if (!Files.isRegularFile(p)) {
          throw new IllegalArgumentException("log : " + a + " (expected: a readable file)");
        }
        out.add(file(p));
        continue;
      }
      Path parent = p.toAbsolutePath().getParent();
      Path dir = parent == null ? Path.of(".") : parent;
      PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + last);
      List<Path> matched = new ArrayList<>();
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
        for (Path f : ds) {
          Path n = f.getFileName();
          if (n != null && m.matches(n) && Files.isRegularFile(f)) {
            matched.add(f);
          }
        }
      }
      if (matched.isEmpty()) {
        throw new IllegalArgumentException("log : " + a + " matches no file (expected: a glob)");
      }
      matched.sort(null);
      for (Path f : matched) {
        out.add(file(f));
      }
    }
    return out;
  }
}
