package dev.parapet.sim.replay;

import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.FlappingEvent;
import dev.parapet.core.breaker.State;
import dev.parapet.core.breaker.TransitionEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What one policy would have done on one route, and whether the route was really in trouble then.
 *
 * <p>Trouble is judged from the log alone, the same for every policy: the route's requests are cut
 * into bins of {@code troubleBinNanos} (by start); a bin with at least {@code troubleMinRequests}
 * requests of which a share of at least {@code troubleRate} failed or were slow is trouble, any
 * other bin is healthy. Consecutive trouble bins are one episode. A would-be rejection or an
 * opening is counted in the bin it happened in; an opening while an episode runs (or in its first
 * bin) is that episode's detection, and time to open is measured from the episode's first bin.
 */
public final class RouteResult implements BreakerListener {
  static final int MAX_TRANSITIONS_SHOWN = 50;
  static final int MAX_STATE_CHANGES = 10_000;

  /** A breaker transition, for the timeline (nanoseconds from the first record). */
  public record StateChange(long nanos, State to) {}

  public final String route;
  public long requests;
  public long failures;
  public long slow;
  public long wouldReject;
  public long opens;
  public long reopens;
  public long flappingAlerts;
  public long firstOpenNanos = -1;
  public final List<String> transitions = new ArrayList<>();
  public final List<StateChange> states = new ArrayList<>();
  public final Bins rejects = new Bins();

  // trouble bookkeeping
  public long troubleRequests;
  public long troubleNanos;
  public long rejectedInTrouble;
  public long rejectedHealthy;
  public long falseOpens;
  public long episodes;
  public long detected;
  public long timeToOpenSumNanos;
  public long timeToOpenMaxNanos;

  private final long troubleBinNanos;
  private final double troubleRate;
  private final int troubleMinRequests;
  private long bin = -1;
  private int binRequests;
  private int binBad;
  private int binRejects;
  private int binOpens;
  private long binFirstOpen = -1;
  private boolean inEpisode;
  private boolean episodeOpened;
  private long episodeStart;

  RouteResult(String route, long troubleBinNanos, double troubleRate, int troubleMinRequests) {
    this.route = route;
    this.troubleBinNanos = troubleBinNanos;
    this.troubleRate = troubleRate;
    this.troubleMinRequests = troubleMinRequests;
  }

  /** A request started at {@code now}: counted in its trouble bin. */
  void request(long now, boolean bad, boolean rejected) {
    roll(now);
    binRequests++;
    if (bad) {
      binBad++;
    }
    if (rejected) {
      binRejects++;
      rejects.add(now, 1);
    }
  }

  @Override
  public void onTransition(TransitionEvent e) {
    long now = e.nowNanos();
    if (e.to() == State.OPEN) {
      opens++;
      if (e.from() == State.HALF_OPEN || e.from() == State.RAMPING) {
        reopens++;
      }
      if (firstOpenNanos < 0) {
        firstOpenNanos = now;
      }
      roll(now);
      if (inEpisode) {
        if (!episodeOpened) {
          detect(now);
        }
      } else {
        binOpens++;
        if (binFirstOpen < 0) {
          binFirstOpen = now;
        }
      }
    }
    if (states.size() < MAX_STATE_CHANGES) {
      states.add(new StateChange(now, e.to()));
    }
    if (transitions.size() < MAX_TRANSITIONS_SHOWN) {
      transitions.add(
          String.format(
              Locale.ROOT,
              "%.3fs %s -> %s (%s, %d calls, failure rate %.1f%%, slow rate %.1f%%)",
              now / 1e9,
              e.from(),
              e.to(),
              e.reason(),
              e.observations(),
              e.failureRate() * 100,
              e.slowRate() * 100));
    }
  }

  @Override
  public void onFlapping(FlappingEvent event) {
    flappingAlerts++;
  }

  private void detect(long now) {
    episodeOpened = true;
    detected++;
    long tto = Math.max(0, now - episodeStart);
    timeToOpenSumNanos += tto;
    timeToOpenMaxNanos = Math.max(timeToOpenMaxNanos, tto);
  }

  private void roll(long now) {
    long b = now / troubleBinNanos;
    if (b <= bin) {
      return;
    }
    if (bin >= 0) {
      close();
      if (b > bin + 1) {
        inEpisode = false; // a bin without requests is no trouble
      }
    }
    bin = b;
    binRequests = 0;
    binBad = 0;
    binRejects = 0;
    binOpens = 0;
    binFirstOpen = -1;
  }

  private void close() {
    boolean trouble = binRequests >= troubleMinRequests && binBad >= troubleRate * binRequests;
    if (trouble) {
      if (!inEpisode) {
        inEpisode = true;
        episodeOpened = false;
        episodeStart = bin * troubleBinNanos;
        episodes++;
        if (binFirstOpen >= 0) {
          detect(binFirstOpen);
        }
      }
      troubleRequests += binRequests;
      troubleNanos += troubleBinNanos;
      rejectedInTrouble += binRejects;
    } else {
      inEpisode = false;
      rejectedHealthy += binRejects;
      falseOpens += binOpens;
    }
  }

  /** Closes the last bin. */
  void finish() {
    if (bin >= 0) {
      close();
      bin = Long.MAX_VALUE;
    }
  }

  public double rejectShare() {
    return requests == 0 ? 0 : (double) wouldReject / requests;
  }

  long binNanosForTesting() {
    return troubleBinNanos;
  }
}
