package dev.parapet.proxy.cli;

import dev.parapet.proxy.demo.DemoCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code parapet}: the one command-line entry point ({@code bin/parapet} finds a JDK and runs
 * this). Each subcommand is its own class, registered in {@code subcommands}.
 */
@Command(
    name = "parapet",
    mixinStandardHelpOptions = true,
    versionProvider = BuildVersion.class,
    description =
        "HTTP edge proxy for CDN tiers: a slow or failing origin never takes the edge down.",
    subcommands = {
      CommandLine.HelpCommand.class,
      RunCommand.class,
      ValidateCommand.class,
      OriginCommand.class,
      DemoCommand.class
    })
public final class ParapetCli implements Runnable {

  @CommandLine.Spec CommandLine.Model.@org.jspecify.annotations.Nullable CommandSpec spec;

  @Override
  public void run() {
    CommandLine.Model.CommandSpec s = spec;
    if (s != null) {
      s.commandLine().usage(System.out);
    }
  }

  /** Runs the command line and returns its exit code (tests call this; main exits with it). */
  public static int execute(String... args) {
    return new CommandLine(new ParapetCli()).execute(args);
  }

  public static void main(String[] args) {
    // Netty's buffer leak detector samples one buffer in 128 and records a stack trace for it: on
    // the proxy's path that was ~3 % of the bytes allocated and a few percent of the event loop.
    // The test suite runs it PARANOID (every buffer, every test), so the default here is off;
    // -Dio.netty.leakDetection.level=simple (or any level) on the command line turns it back on.
    if (System.getProperty("io.netty.leakDetection.level") == null
        && System.getProperty("io.netty.leakDetectionLevel") == null) {
      System.setProperty("io.netty.leakDetection.level", "disabled");
    }
    System.exit(execute(args));
  }
}
