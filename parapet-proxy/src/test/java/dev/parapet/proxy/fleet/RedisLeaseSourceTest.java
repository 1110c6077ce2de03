package dev.parapet.proxy.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parapet.core.fleet.Lease;
import dev.parapet.proxy.testing.RedisServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lease script against a real redis-server: counts, never timing. */
class RedisLeaseSourceTest {
  @TempDir Path dir;
  private RedisServer redis;
  private RedisLeaseSource source;

  @BeforeEach
  void start() throws Exception {
    redis = RedisServer.start(dir);
    // 1 token per second refills nothing noticeable during the test: the burst is what there is.
    source = new RedisLeaseSource(URI.create(redis.uri()), "t:api", 1, 25, "test-lease");
  }

  @AfterEach
  void stop() throws Exception {
    source.close();
    redis.close();
  }

  private Lease lease(int n) throws Exception {
    return source.lease(n).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void leasesTakeFromOneBucketUntilItIsEmptyThenSayHowLongToWait() throws Exception {
    assertThat(lease(10).granted()).isEqualTo(10);
    assertThat(lease(10).granted()).isEqualTo(10);
    Lease partial = lease(10);
    assertThat(partial.granted()).as("what is left of the burst").isEqualTo(5);
    assertThat(partial.waitNanos())
        .as("5 more tokens at 1/s")
        .isBetween(4_000_000_000L, 5_100_000_000L);
    Lease none = lease(10);
    assertThat(none.granted()).isZero();
    assertThat(none.waitNanos()).isPositive();
  }

  @Test
  void theBucketKeyExpiresWhenIdle() throws Exception {
    lease(1);
    long ttl = Long.parseLong(redis.command("PTTL t:api").substring(1));
    // burst 25 at 1/s fills in 25 s: the key lives twice that since the last lease
    assertThat(ttl).isBetween(40_000L, 50_000L);
  }

  @Test
  void aRedisThatForgotTheScriptGetsItAgain() throws Exception {
    assertThat(lease(3).granted()).isEqualTo(3);
    assertThat(redis.command("SCRIPT FLUSH")).isEqualTo("+OK");
    assertThat(lease(3).granted()).as("NOSCRIPT, then EVAL").isEqualTo(3);
    assertThat(lease(30).granted()).as("the same bucket").isEqualTo(19);
  }

  @Test
  void aStoppedRedisFailsTheLeaseAndARestartedOneServesAgain() throws Exception {
    assertThat(lease(1).granted()).isEqualTo(1);
    redis.stop();
    assertThatThrownBy(() -> lease(1)).isInstanceOf(ExecutionException.class);
    redis.startAgain();
    assertThat(lease(2).granted()).as("a fresh Redis: a full bucket").isEqualTo(2);
  }
}
