package dev.parapet.core.time;

/** {@link Ticker} backed by {@link System#nanoTime()}; the only clock read in parapet-core. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long read() {
    return System.nanoTime();
  }
}
