package dev.parapet.bench.limit;

import dev.parapet.core.admission.AdmissionController;
import dev.parapet.core.admission.AdmissionListener;
import dev.parapet.core.admission.AdmissionTicket;
import dev.parapet.core.admission.Decision;
import dev.parapet.core.admission.RejectReason;
import dev.parapet.core.admission.RequestKind;
import dev.parapet.core.time.Ticker;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The admission fast path: offer (queue empty, slot free) plus a successful completion that finds
 * nothing queued, with the default controller (Gradient2 200/20..2000, queue 250, CoDel 20 ms / 100
 * ms), at one and two threads.
 *
 * <pre>
 * java -jar parapet-bench/target/benchmarks.jar 'dev.parapet.bench.limit.AdmissionBench' -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class AdmissionBench {
  private static final AdmissionListener IGNORED =
      new AdmissionListener() {
        @Override
        public void onAdmitted(AdmissionTicket ticket, long nowNanos) {
          ticket.permit().onIgnore(nowNanos);
        }

        @Override
        public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {}
      };

  private final AdmissionController controller = AdmissionController.withDefaults();
  private final Ticker ticker = Ticker.system();

  /** Each thread owns its ticket, as each request context would. */
  @State(Scope.Thread)
  public static class Request {
    final AdmissionTicket ticket = new AdmissionTicket(IGNORED);
  }

  private boolean offerAndRelease(Request request) {
    AdmissionTicket ticket = request.ticket;
    long now = ticker.read();
    if (controller.offer(ticket, 2, RequestKind.ORDINARY, now) != Decision.ADMITTED) {
      return false;
    }
    return ticket.permit().onSuccess(ticker.read());
  }

  @Benchmark
  @Threads(1)
  public boolean offerRelease1Thread(Request request) {
    return offerAndRelease(request);
  }

  @Benchmark
  @Threads(2)
  public boolean offerRelease2Threads(Request request) {
    return offerAndRelease(request);
  }
}
