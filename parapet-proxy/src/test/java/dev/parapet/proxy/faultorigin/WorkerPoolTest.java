package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.util.concurrent.ImmediateEventExecutor;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerPoolTest {

  @Test
  void atMostNWorkAtOnceAndTheRestStartInArrivalOrder() {
    WorkerPool pool = new WorkerPool(2);
    List<String> started = new ArrayList<>();
    for (String name : List.of("a", "b", "c", "d")) {
      pool.acquire(ImmediateEventExecutor.INSTANCE, () -> started.add(name));
    }
    assertThat(started).containsExactly("a", "b");
    assertThat(pool.busy()).isEqualTo(2);
    assertThat(pool.queued()).isEqualTo(2);
    pool.release();
    assertThat(started).containsExactly("a", "b", "c");
    pool.release();
    pool.release();
    assertThat(started).containsExactly("a", "b", "c", "d");
    assertThat(pool.busy()).isEqualTo(1);
    pool.release();
    assertThat(pool.busy()).isZero();
  }

  @Test
  void zeroWorkersIsNoLimit() {
    WorkerPool pool = new WorkerPool(0);
    List<Integer> started = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      int n = i;
      pool.acquire(ImmediateEventExecutor.INSTANCE, () -> started.add(n));
    }
    assertThat(started).hasSize(100);
    assertThat(pool.queued()).isZero();
  }

  @Test
  void oneWorkerServesConcurrentRequestsOneAfterTheOther() throws Exception {
    Behaviour fixed =
        Behaviour.builder().latency(Latency.parse("--latency", "fixed:300ms")).build();
    try (FaultOrigin origin =
        FaultOrigin.start(
            FaultOriginSettings.loopback().withSeed(1L).withWorkers(1), FaultPlan.of(fixed))) {
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          Socket s = new Socket("127.0.0.1", origin.port());
          s.setSoTimeout(20_000);
          s.getOutputStream()
              .write("GET /x HTTP/1.1\r\nHost: o\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          sockets.add(s);
        }
        // Three requests on three connections, one worker: two of them wait for it.
        await().untilAsserted(() -> assertThat(origin.workers().queued()).isEqualTo(2));
        for (Socket s : sockets) {
          BufferedReader in =
              new BufferedReader(
                  new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
          assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
        }
        await().untilAsserted(() -> assertThat(origin.workers().busy()).isZero());
        assertThat(origin.workers().queued()).isZero();
      } finally {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }
}
