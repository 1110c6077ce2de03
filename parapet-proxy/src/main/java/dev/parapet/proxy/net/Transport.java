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
 * The socket transport of a set of event loops: Linux's epoll or io_uring, or Java's NIO, all three
 * Netty's own. {@code auto} takes the first of them that works here, in that order.
 *
 * <p>Why epoll first, io_uring a flag away: below saturation, where an edge spends its days, epoll
 * answered sooner. Three targets interleaved in one open-loop run (nginx, Parapet on io_uring,
 * Parapet on epoll; 12 rounds at 1,000 and 2,000 req/s each, docs/benchmarks.md) put epoll's p99
 * below io_uring's in 11 and its p50 in all 12, a median 1.02x and 1.08x nginx's against 1.10x and
 * 1.17x. At saturation io_uring is ahead: it submits a turn's reads and writes together instead of
 * one system call each, and in alternating wrk rounds (28 pairs) spent a median 0.9 us less kernel
 * time per request and served 10 % more requests; its p99 was 1.02x nginx's against epoll's 1.19x
 * (the 22 pairs on an undisturbed host). {@code --transport io_uring} is for an edge that runs hot;
 * Netty probes the kernel first (a kernel without it, or a container whose seccomp profile refuses
 * it, says so at start-up).
 *
 * @param name {@code epoll}, {@code io_uring} or {@code nio}
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
  public static final List<String> NAMES = List.of("auto", "epoll", "io_uring", "nio");

  /** The JVM property that sets the transport of servers built without one (default auto). */
  public static final String PROPERTY = "parapet.transport";

  // Class literals and method references load Netty's transport classes without initializing
  // them, so the three exist on every platform; Netty's availability checks (which load the
  // native library) run only in unavailability().
  private static final List<Transport> ALL =
      List.of(
          new Transport(
              "epoll",
              EpollServerSocketChannel.class,
              EpollSocketChannel.class,
              EpollIoHandler::newFactory),
          new Transport(
              "io_uring",
              IoUringServerSocketChannel.class,
              IoUringSocketChannel.class,
              IoUringIoHandler::newFactory),
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
   * The transport called {@code name}, or for {@code auto} the first of epoll, io_uring and NIO
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
