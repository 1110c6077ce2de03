package dev.parapet.proxy.origin;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;

/**
 * The socket transport of the origin: epoll when its native library loads, else NIO.
 *
 * <p>The epoll classes are looked up by name because parapet-proxy's pom has {@code
 * netty-transport-native-epoll} at runtime scope only (the netty BOM's choice), so they are on the
 * class path when the origin runs but not when it compiles. A compile-scope {@code
 * netty-transport-classes-epoll} would let this become plain code.
 *
 * @param name {@code epoll} or {@code nio}
 * @param ioHandlers the event loops' I/O handler factory
 * @param serverChannel the server socket channel class
 */
record OriginTransport(
    String name, IoHandlerFactory ioHandlers, Class<? extends ServerChannel> serverChannel) {

  /** epoll if available, else NIO. */
  static OriginTransport best() {
    try {
      boolean available =
          (Boolean)
              Class.forName("io.netty.channel.epoll.Epoll").getMethod("isAvailable").invoke(null);
      if (available) {
        IoHandlerFactory factory =
            (IoHandlerFactory)
                Class.forName("io.netty.channel.epoll.EpollIoHandler")
                    .getMethod("newFactory")
                    .invoke(null);
        Class<? extends ServerChannel> channel =
            Class.forName("io.netty.channel.epoll.EpollServerSocketChannel")
                .asSubclass(ServerChannel.class);
        return new OriginTransport("epoll", factory, channel);
      }
    } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
      // Not Linux, or no native library: NIO below works everywhere.
    }
    return nio();
  }

  /** NIO, available on every platform. */
  static OriginTransport nio() {
    return new OriginTransport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
  }
}
