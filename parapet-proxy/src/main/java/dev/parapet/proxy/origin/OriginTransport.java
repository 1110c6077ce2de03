package dev.parapet.proxy.origin;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;

/**
 * The socket transport of the origin: epoll when its native library loads, else NIO (the data
 * plane's {@code ProxyServer} chooses the same way).
 *
 * @param name {@code epoll} or {@code nio}
 * @param ioHandlers the event loops' I/O handler factory
 * @param serverChannel the server socket channel class
 */
record OriginTransport(
    String name, IoHandlerFactory ioHandlers, Class<? extends ServerChannel> serverChannel) {

  /** epoll if available, else NIO. */
  static OriginTransport best() {
    return Epoll.isAvailable()
        ? new OriginTransport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class)
        : nio();
  }

  /** NIO, available on every platform. */
  static OriginTransport nio() {
    return new OriginTransport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
  }
}
