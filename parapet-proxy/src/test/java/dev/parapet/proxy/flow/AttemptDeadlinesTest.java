package dev.parapet.proxy.flow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerKey;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.core.breaker.CircuitBreaker;
import dev.parapet.core.breaker.Scope;
import dev.parapet.core.exchange.Attempt;
import dev.parapet.core.exchange.AttemptPolicy;
import dev.parapet.core.outcome.Outcome;
import dev.parapet.core.retry.ExtraLoadBudget;
import dev.parapet.core.retry.RetryPolicy;
import dev.parapet.core.time.ManualTicker;
import dev.parapet.core.time.RandomSource;
import dev.parapet.proxy.upstream.OriginPool;
import dev.parapet.proxy.upstream.OriginSettings;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The loop's attempt timeouts on an {@link EmbeddedChannel}'s event loop with its time frozen, the
 * proxy's ticker moved in step: attempts time out in deadline order whatever order they came in,
 * each once, never after they were removed, with one scheduled check re-armed as it goes.
 */
class AttemptDeadlinesTest {
  private static final long MS = 1_000_000L;
  private final EmbeddedChannel ch = new EmbeddedChannel();
  private final EventLoop loop = ch.eventLoop();
  private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 500 * MS); // wraps
  private final List<String> timedOut = new ArrayList<>();
  private final OriginPool pool =
      new OriginPool(
          OriginSettings.defaults("o", List.of(new InetSocketAddress("127.0.0.1", 9))),
          NioSocketChannel.class);
  private final AttemptPolicy policy =
      AttemptPolicy.builder(
              Duration.ofSeconds(1),
              RetryPolicy.withDefaults(RandomSource.seeded(1), ExtraLoadBudget.sharedDefaults()))
          .build();
  private final CircuitBreaker breaker =
      new CircuitBreaker(
          BreakerKey.of(Scope.ORIGIN, "o"),
          BreakerPolicy.defaults(),
          RandomSource.seeded(1),
          BreakerListener.NONE,
          0);

  AttemptDeadlinesTest() {
    ch.freezeTime();
  }

  @AfterEach
  void close() {
    ch.finishAndReleaseAll();
  }

  /** An attempt that only notes when it times out (and may add another then). */
  private final class Waiting extends UpstreamAttempt {
    final String name;
    @Nullable Runnable then;

    Waiting(String name) {
      super(Attempt.Kind.FIRST, breaker, policy, pool, pool.hosts().get(0), IGNORE);
      this.name = name;
    }

    @Override
    void timedOut() {
      timedOut.add(name);
      Runnable r = then;
      if (r != null) {
        r.run();
      }
    }
  }

  private void advance(long millis) {
    ticker.advanceMillis(millis);
    ch.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
  }

  @Test
  void attemptsTimeOutInDeadlineOrderEachOnce() {
    AttemptDeadlines d = AttemptDeadlines.of(loop, ticker);
    long now = ticker.read();
    d.add(new Waiting("c"), now + 300 * MS);
    d.add(new Waiting("a"), now + 100 * MS);
    d.add(new Waiting("d"), now + 300 * MS);
    d.add(new Waiting("b"), now + 200 * MS);

    advance(99);
    assertThat(timedOut).isEmpty();
    advance(1);
    assertThat(timedOut).containsExactly("a");
    advance(150);
    assertThat(timedOut).containsExactly("a", "b");
    advance(1_000);
    assertThat(timedOut).containsExactly("a", "b", "c", "d");
  }

  @Test
  void anAttemptRemovedInTimeNeverTimesOut() {
    AttemptDeadlines d = AttemptDeadlines.of(loop, ticker);
    long now = ticker.read();
    Waiting first = new Waiting("first");
    d.add(first, now + 100 * MS);
    d.add(new Waiting("second"), now + 200 * MS);
    d.remove(first);
    d.remove(first); // twice: nothing

    advance(150);
    assertThat(timedOut).isEmpty(); // the check armed for "first" found it gone and re-armed
    advance(100);
    assertThat(timedOut).containsExactly("second");
  }

  @Test
  void anEarlierDeadlineMovesTheCheckForward() {
    AttemptDeadlines d = AttemptDeadlines.of(loop, ticker);
    long now = ticker.read();
    d.add(new Waiting("late"), now + 1_000 * MS);
    d.add(new Waiting("early"), now + 10 * MS);

    advance(10);
    assertThat(timedOut).containsExactly("early");
  }

  @Test
  void anAttemptAddedWhileTimingOutIsTimedOutInItsTurn() {
    AttemptDeadlines d = AttemptDeadlines.of(loop, ticker);
    Waiting first = new Waiting("first");
    first.then = () -> d.add(new Waiting("retry"), ticker.read() + 50 * MS);
    d.add(first, ticker.read() + 100 * MS);

    advance(100);
    assertThat(timedOut).containsExactly("first");
    advance(50);
    assertThat(timedOut).containsExactly("first", "retry");
  }

  @Test
  void manyInterleavedAddsAndRemovesKeepTheOrder() {
    AttemptDeadlines d = AttemptDeadlines.of(loop, ticker);
    SplittableRandom rnd = new SplittableRandom(11);
    List<Waiting> live = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    long start = ticker.read();
    for (int i = 0; i < 500; i++) {
      if (!live.isEmpty() && rnd.nextInt(3) == 0) {
        d.remove(live.remove(rnd.nextInt(live.size())));
      } else {
        Waiting w = new Waiting(Integer.toString(i));
        w.dueAt = start + (1 + rnd.nextInt(1_000)) * MS; // the deadline it is added with
        d.add(w, w.dueAt);
        live.add(w);
      }
    }
    live.sort((x, y) -> Long.compare(x.dueAt - start, y.dueAt - start));
    for (Waiting w : live) {
      expected.add(w.name);
    }

    advance(2_000);

    // Ties keep no particular order: compare deadlines, and names as a set.
    assertThat(timedOut).containsExactlyInAnyOrderElementsOf(expected);
    List<Long> due = new ArrayList<>();
    for (String name : timedOut) {
      due.add(live.stream().filter(w -> w.name.equals(name)).findFirst().orElseThrow().dueAt);
    }
    for (int i = 1; i < due.size(); i++) {
      assertThat(due.get(i) - due.get(i - 1)).isGreaterThanOrEqualTo(0);
    }
  }

  private static final AttemptListener IGNORE =
      new AttemptListener() {
        @Override
        public void onInterim(UpstreamAttempt attempt, HttpResponse interim) {}

        @Override
        public void onConnected(UpstreamAttempt attempt, Channel origin) {}

        @Override
        public void onResponseHead(UpstreamAttempt attempt, HttpResponse head) {}

        @Override
        public void onResponseContent(UpstreamAttempt attempt, HttpContent content) {}

        @Override
        public void onAttemptFailed(UpstreamAttempt attempt, @Nullable Outcome evidence) {}

        @Override
        public void onOriginWritable(UpstreamAttempt attempt, boolean writable) {}
      };
}
