package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The fleet-ceiling scenario keeps the ceiling in every phase and says where tokens came from. */
class FleetCeilingTest {
  @Test
  void theFleetKeepsTheCeilingSharedAndFallsBackToLocalSharesWhenTheBucketIsSlowOrDown() {
    FleetCeiling.Result r = FleetCeiling.run(1, 300);
    System.out.print(r.summary());
    FleetCeiling.PhaseResult healthy = r.phases().get(0);
    FleetCeiling.PhaseResult slow = r.phases().get(1);
    FleetCeiling.PhaseResult down = r.phases().get(2);
    FleetCeiling.PhaseResult back = r.phases().get(3);
    double ceiling = FleetCeiling.CEILING;

    // Shared: the ceiling, never more than it plus the burst over the phase.
    assertThat(healthy.granted())
        .isLessThanOrEqualTo((long) (ceiling * healthy.seconds()) + FleetCeiling.BURST);
    assertThat(healthy.grantedPerSecond()).isGreaterThan(0.97 * ceiling);
    assertThat(healthy.maxLocal())
        .as("no PoP falls back while the bucket answers in time")
        .isZero();

    // Slow and down: every PoP on its local share; skewed demand leaves some shares unused.
    for (FleetCeiling.PhaseResult p : new FleetCeiling.PhaseResult[] {slow, down}) {
      assertThat(p.maxLocal()).as(p.name()).isEqualTo(300);
      assertThat(p.grantedPerSecond()).as(p.name()).isLessThanOrEqualTo(ceiling * 1.01);
      assertThat(p.grantedPerSecond()).as(p.name()).isGreaterThan(0.75 * ceiling);
    }
    assertThat(down.leaseErrors()).isPositive();

    // Back: shared again by the end of the phase, at the ceiling. The full bucket's burst, and PoPs
    // still on their local share until their next probe (100 ms) beside those already shared.
    assertThat(back.endLocal()).isZero();
    assertThat(back.grantedPerSecond()).isGreaterThan(0.95 * ceiling);
    assertThat(back.granted())
        .isLessThanOrEqualTo(
            (long) (ceiling * back.seconds() + ceiling * 0.1) + FleetCeiling.BURST);
  }

  @Test
  void theSameSeedGivesTheSameRun() {
    assertThat(FleetCeiling.run(7, 30).csv()).isEqualTo(FleetCeiling.run(7, 30).csv());
  }
}
