package dev.parapet.core.balance;

/**
 * What a balancer needs to know about the health of the hosts of one {@link HostSet}, by index.
 * Implemented by the outlier detector and by active health checking; reads must be cheap and
 * allocation-free because every {@code pick} makes them.
 */
public interface HostHealth {

  /** Every host always available, never returned from an ejection: no slow start. */
  HostHealth ALL_HEALTHY =
      new HostHealth() {
        @Override
        public boolean isEjected(int host) {
          return false;
        }

        @Override
        public boolean hasReturned(int host) {
          return false;
        }

        @Override
        public long returnedAtNanos(int host) {
          return 0L;
        }

        @Override
        public long generation() {
          return 0L;
        }
      };

  /** Whether the host at {@code host} must not receive traffic now. */
  boolean isEjected(int host);

  /**
   * Whether the host came back into service after an ejection at some point; hosts that have been
   * healthy from the start answer false and get no slow start.
   */
  boolean hasReturned(int host);

  /**
   * When the host last came back into service (monotonic nanos); meaningful only when {@link
   * #hasReturned(int)} is true.
   */
  long returnedAtNanos(int host);

  /**
   * A number that changes whenever any host is ejected or returns, so balancers can cache
   * structures built for one health state and rebuild them only when it changes. Never decreases.
   */
  long generation();

  /**
   * Both views over the same host list, for example the outlier detector and active health checks:
   * a host is ejected when either ejects it, and slow-starts from its latest return in either.
   */
  static HostHealth both(HostHealth first, HostHealth second) {
    return new HostHealth() {
      @Override
      public boolean isEjected(int host) {
        return first.isEjected(host) || second.isEjected(host);
      }

      @Override
      public boolean hasReturned(int host) {
        return first.hasReturned(host) || second.hasReturned(host);
      }

      @Override
      public long returnedAtNanos(int host) {
        if (!first.hasReturned(host)) {
          return second.returnedAtNanos(host);
        }
        if (!second.hasReturned(host)) {
          return first.returnedAtNanos(host);
        }
        long a = first.returnedAtNanos(host);
        long b = second.returnedAtNanos(host);
        return b - a > 0 ? b : a;
      }

      @Override
      public long generation() {
        // Both only grow, so the sum changes whenever either does.
        return first.generation() + second.generation();
      }
    };
  }
}
