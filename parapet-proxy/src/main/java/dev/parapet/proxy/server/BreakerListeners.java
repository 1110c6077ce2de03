package dev.parapet.proxy.server;

import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.FlappingEvent;
import dev.parapet.core.breaker.TransitionEvent;
import java.util.List;
import java.util.function.Consumer;

/**
 * Tells several listeners in order. One that throws does not keep the others from hearing; the
 * first exception is rethrown afterwards, so the breaker still counts it.
 */
final class BreakerListeners implements BreakerListener {
  private final List<BreakerListener> listeners;

  BreakerListeners(BreakerListener... listeners) {
    this.listeners = List.of(listeners);
  }

  @Override
  public void onTransition(TransitionEvent event) {
    each(l -> l.onTransition(event));
  }

  @Override
  public void onFlapping(FlappingEvent event) {
    each(l -> l.onFlapping(event));
  }

  private void each(Consumer<BreakerListener> call) {
    RuntimeException first = null;
    for (BreakerListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
