package dev.parapet.proxy.cli;

import dev.parapet.proxy.config.ConfigLoader;
import dev.parapet.proxy.config.ConfigProblem;
import dev.parapet.proxy.config.InvalidConfigException;
import dev.parapet.proxy.config.LoadedConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code parapet validate -c FILE}: checks a configuration without starting anything. Exit 0 and
 * {@code FILE: ok (N routes, M origins)} on standard output plus any warnings on standard error;
 * exit 1 and every error on standard error, one per line as {@code FILE:LINE:COLUMN: path:
 * message}; exit 2 when the file cannot be read.
 */
@Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    description = {
      "Checks a configuration file and prints every error with its YAML path.",
      "Exit status: 0 valid (warnings may be printed), 1 invalid, 2 file not readable or bad usage."
    })
public final class ValidateCommand implements Callable<Integer> {
  /** The configuration is valid. */
  public static final int VALID = 0;

  /** The configuration has errors. */
  public static final int INVALID = 1;

  /** The file could not be read. */
  public static final int UNREADABLE = 2;

  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "The YAML configuration file.")
  @Nullable Path config;

  @CommandLine.Spec CommandLine.Model.@Nullable CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine.Model.CommandSpec s = spec;
    Path file = config;
    if (s == null || file == null) {
      throw new IllegalStateException("validate : not initialised by picocli (expected: -c FILE)");
    }
    PrintWriter out = s.commandLine().getOut();
    PrintWriter err = s.commandLine().getErr();
    Checked checked = check(file, err);
    LoadedConfig loaded = checked.loaded();
    if (loaded == null) {
      return checked.exitCode();
    }
    int routes = loaded.config().routes().size();
    int origins = loaded.config().origins().size();
    out.println(
        file
            + ": ok ("
            + routes
            + (routes == 1 ? " route, " : " routes, ")
            + origins
            + (origins == 1 ? " origin)" : " origins)"));
    out.flush();
    return VALID;
  }

  /** A loaded configuration, or the exit code that says why there is none. */
  record Checked(@Nullable LoadedConfig loaded, int exitCode) {}

  /**
   * Loads {@code file} and reports on {@code err} as {@code validate} does: every error and
   * warning, one per line, then a summary line when invalid. Shared with {@code run}.
   */
  static Checked check(Path file, PrintWriter err) {
    try {
      if (Files.isDirectory(file)) {
        err.println(file + ": cannot read: is a directory, expected a YAML file");
        return new Checked(null, UNREADABLE);
      }
      LoadedConfig loaded = ConfigLoader.load(file);
      for (ConfigProblem w : loaded.warnings()) {
        err.println(w.format(file.toString()));
      }
      return new Checked(loaded, VALID);
    } catch (CharacterCodingException e) {
      err.println(file + ": cannot read: not UTF-8 text");
      return new Checked(null, UNREADABLE);
    } catch (NoSuchFileException e) {
      err.println(file + ": cannot read: no such file");
      return new Checked(null, UNREADABLE);
    } catch (IOException e) {
      err.println(file + ": cannot read: " + e.getMessage());
      return new Checked(null, UNREADABLE);
    } catch (InvalidConfigException e) {
      for (ConfigProblem p : e.errors()) {
        err.println(p.format(file.toString()));
      }
      for (ConfigProblem w : e.warnings()) {
        err.println(w.format(file.toString()));
      }
      int n = e.errors().size();
      err.println(file + ": invalid (" + n + (n == 1 ? " error)" : " errors)"));
      return new Checked(null, INVALID);
    } finally {
      err.flush();
    }
  }
}
