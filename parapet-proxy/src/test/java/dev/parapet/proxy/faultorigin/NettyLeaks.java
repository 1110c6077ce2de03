package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Turns Netty's leak reports (logged, not thrown) into test failures. Tests run with leak detection
 * paranoid; a leaked buffer is reported when the garbage collector has taken it and a later buffer
 * is tracked, so {@link #assertNone()} collects garbage and allocates before it looks.
 */
final class NettyLeaks {
  private static final ListAppender<ILoggingEvent> REPORTS = new ListAppender<>();

  static {
    Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
    REPORTS.start();
    logger.addAppender(REPORTS);
  }

  private NettyLeaks() {}

  /** Starts watching (idempotent): call before the test's Netty code runs. */
  static void watch() {
    // The static initialiser did the work.
  }

  /** Fails when Netty has reported a leak since the watch began. */
  static void assertNone() {
    for (int round = 0; round < 2; round++) {
      System.gc();
      ByteBuf probe = PooledByteBufAllocator.DEFAULT.buffer(64);
      probe.release();
    }
    List<String> leaks;
    synchronized (REPORTS) {
      leaks =
          REPORTS.list.stream()
              .map(ILoggingEvent::getFormattedMessage)
              .filter(m -> m.contains("LEAK"))
              .toList();
    }
    assertThat(leaks).as("Netty leak reports").isEmpty();
  }
}
