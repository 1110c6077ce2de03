package dev.parapet.proxy.net;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The socket transport of a set of event loops: Linux's io_uring, epoll, or Java's NIO, all three
 * Netty's own. {@code auto} takes the first of them that works here, in that order.
 *
 * <p>Why io_uring first: reads and writes go to the ring and are submitted together, once per
 * event-loop turn, instead of one system call each. Measured at saturation beside epoll (two JVMs
 * of one build in alternating wrk rounds, 28 pairs, docs/benchmarks.md) it spent a median 0.9 us
 * less kernel time per proxied request (less in 27 of the 28) and served a median 10 % more
 * requests; in the 22 pairs on an undisturbed host its p99 was a median 1.02x nginx's, epoll's
 * 1.19x. Netty probes the kernel before it says io_uring is available (a kernel without it, or a
 * container whose seccomp profile refuses it, falls back to epoll), and {@code --transport epoll}
 * keeps epoll anywhere.
 *
 * @param name {@code io_uring}, {@code epoll} or {@code nio}
 * @param serverChannel the listening socket's channel class
 * @param socketChannel the connecting socket's channel class (the origin pools')
 * @param factories makes the I/O handler factory of an event loop group
 */
public record Transport(
    String name,
    Class<? extends ServerChannel> serverChannel,
    Class<? extends SocketChannel> socketChannel,
    Supplier<IoHandlerFactory> factories) {

  /** The names {@link #named} takes. */
  public static final List<String> NAMES = List.of("auto", "io_uring", "epoll", "nio");

  /** The JVM property that sets the transport of servers built without one (default auto). */
  public static final String PROPERTY = "parapet.transport";

  // Class literals and method references load Netty's transport classes without initializing
  // them, so the three exist on every platform; Netty's availability checks (which load the
  // native library) run only in unavailability().
  private static final List<Transport> ALL =
      List.of(
          new Transport(
              "io_uring",
              IoUringServerSocketChannel.class,
              IoUringSocketChannel.class,
              IoUringIoHandler::newFactory),
          new Transport(
              "epoll",
              EpollServerSocketChannel.class,
              EpollSocketChannel.class,
              EpollIoHandler::newFactory),
          new Transport(
              "nio",
              NioServerSocketChannel.class,
              NioSocketChannel.class,
              NioIoHandler::newFactory));

  /** A new I/O handler factory for an event loop group. */
  public IoHandlerFactory ioHandlers() {
    return factories.get();
  }

  /**
   * The transport called {@code name}, or for {@code auto} the first of io_uring, epoll and NIO
   * available here.
   *
   * @throws IllegalArgumentException for an unknown name, or a transport this machine lacks (with
   *     Netty's reason)
   */
  public static Transport named(String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    if (n.equals("auto")) {
      return available().get(0);
    }
    for (Transport t : ALL) {
      if (t.name.equals(n)) {
        Throwable why = unavailability(t);
        if (why != null) {
          throw new IllegalArgumentException(
              "transport "
                  + n
                  + " is not available here: "
                  + why.getMessage()
                  + " (try --transport auto)");
        }
        return t;
      }
    }
    throw new IllegalArgumentException(
        "unknown transport '" + name + "' (expected one of " + NAMES + ")");
  }

  /** {@link #named} of the {@value #PROPERTY} JVM property, {@code auto} when it is not set. */
  public static Transport preferred() {
    return named(System.getProperty(PROPERTY, "auto"));
  }

  /** The transports that work here, in {@code auto}'s order of preference (NIO always last). */
  public static List<Transport> available() {
    return ALL.stream().filter(t -> unavailability(t) == null).toList();
  }

  /**
   * Netty's reason {@code t} cannot run here, or null when it can (Netty's {@code isAvailable()} is
   * exactly "no unavailability cause").
   */
  private static @Nullable Throwable unavailability(Transport t) {
    return switch (t.name) {
      case "io_uring" -> IoUring.unavailabilityCause();
      case "epoll" -> Epoll.unavailabilityCause();
      default -> null;
    };
  }

  @Override
  public String toString() {
    return name;
  }
}
