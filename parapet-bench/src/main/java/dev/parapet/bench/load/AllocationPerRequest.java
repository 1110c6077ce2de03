package dev.parapet.bench.load;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Bytes a JVM allocated per request during a recording: the growth of every thread's {@code
 * jdk.ThreadAllocationStatistics} counter (emitted at the recording's start and end) divided by the
 * number of requests served meanwhile.
 *
 * <pre>
 *   java -cp benchmarks.jar dev.parapet.bench.load.AllocationPerRequest RECORDING.jfr REQUESTS
 * </pre>
 */
public final class AllocationPerRequest {
  private AllocationPerRequest() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: AllocationPerRequest RECORDING.jfr REQUESTS");
      System.exit(2);
    }
    long requests = Long.parseLong(args[1]);
    Map<Long, long[]> byThread = new HashMap<>(); // thread id -> {min, max}
    for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(args[0]))) {
      if (!e.getEventType().getName().equals("jdk.ThreadAllocationStatistics")) {
        continue;
      }
      RecordedThread t = e.getThread("thread");
      if (t == null) {
        continue;
      }
      long allocated = e.getLong("allocated");
      long[] range =
          byThread.computeIfAbsent(t.getId(), id -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
      range[0] = Math.min(range[0], allocated);
      range[1] = Math.max(range[1], allocated);
    }
    long total = 0;
    for (long[] range : byThread.values()) {
      total += range[1] - range[0];
    }
    System.out.printf(Locale.ROOT, "%.0f%n", (double) total / Math.max(1, requests));
  }
}
