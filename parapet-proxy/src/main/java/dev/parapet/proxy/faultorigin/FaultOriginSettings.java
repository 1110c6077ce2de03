package dev.parapet.proxy.faultorigin;

import java.net.InetAddress;
import org.jspecify.annotations.Nullable;

/**
 * Where and how a {@link FaultOrigin} runs (the {@link FaultPlan} says what it does).
 *
 * @param bind address of the origin listener
 * @param port origin port, 0 for an ephemeral one
 * @param controlPort control endpoint port on 127.0.0.1, 0 for an ephemeral one, or {@link
 *     #NO_CONTROL}
 * @param seed seed of the random draws (outcomes, latency samples), or null for unseeded
 * @param ioThreads event-loop threads, 0 for Netty's default (twice the cores)
 * @param workers requests worked on at once across all connections, the rest waiting in order; 0
 *     for no limit (see {@link WorkerPool})
 */
public record FaultOriginSettings(
    InetAddress bind, int port, int controlPort, @Nullable Long seed, int ioThreads, int workers) {

  /** {@link #controlPort} value for an origin without a control endpoint. */
  public static final int NO_CONTROL = -1;

  public FaultOriginSettings {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port : " + port + " (expected: in [0, 65535])");
    }
    if (controlPort < NO_CONTROL || controlPort > 65535) {
      throw new IllegalArgumentException(
          "controlPort : " + controlPort + " (expected: in [0, 65535], or -1 for none)");
    }
    if (ioThreads < 0) {
      throw new IllegalArgumentException("ioThreads : " + ioThreads + " (expected: >= 0)");
    }
    if (workers < 0) {
      throw new IllegalArgumentException("workers : " + workers + " (expected: >= 0)");
    }
  }

  /** Settings without a worker limit. */
  public FaultOriginSettings(
      InetAddress bind, int port, int controlPort, @Nullable Long seed, int ioThreads) {
    this(bind, port, controlPort, seed, ioThreads, 0);
  }

  /** 127.0.0.1, ephemeral port, no control endpoint, unseeded, one event-loop thread: for tests. */
  public static FaultOriginSettings loopback() {
    return new FaultOriginSettings(InetAddress.getLoopbackAddress(), 0, NO_CONTROL, null, 1);
  }

  public FaultOriginSettings withBind(InetAddress bind) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }

  public FaultOriginSettings withPort(int port) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }

  public FaultOriginSettings withControlPort(int controlPort) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }

  public FaultOriginSettings withSeed(@Nullable Long seed) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }

  public FaultOriginSettings withIoThreads(int ioThreads) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }

  public FaultOriginSettings withWorkers(int workers) {
    return new FaultOriginSettings(bind, port, controlPort, seed, ioThreads, workers);
  }
}
