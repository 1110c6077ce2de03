package dev.parapet.proxy.faultorigin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BehaviourTest {

  @Test
  void oneDrawPicksOutcomesInTheirCumulativeOrder() {
    Behaviour b =
        Behaviour.builder()
            .resetRate(0.1)
            .midBodyResetRate(0.1)
            .hangRate(0.1)
            .garbageRate(0.1)
            .errorRate(0.1)
            .build();

    assertThat(b.pick(0.05)).isEqualTo(FaultOutcome.RESET);
    assertThat(b.pick(0.15)).isEqualTo(FaultOutcome.MID_BODY_RESET);
    assertThat(b.pick(0.25)).isEqualTo(FaultOutcome.HANG);
    assertThat(b.pick(0.35)).isEqualTo(FaultOutcome.GARBAGE);
    assertThat(b.pick(0.45)).isEqualTo(FaultOutcome.ERROR);
    assertThat(b.pick(0.55)).isEqualTo(FaultOutcome.OK);
    assertThat(Behaviour.DEFAULT.pick(0.0)).isEqualTo(FaultOutcome.OK);
    assertThat(Behaviour.builder().errorRate(1.0).build().pick(0.9999))
        .isEqualTo(FaultOutcome.ERROR);
  }

  @Test
  void invalidValuesAreRefusedWithWhatExpectedAndFound() {
    assertThatThrownBy(() -> Behaviour.builder().status(600).build())
        .hasMessage("status: expected an HTTP status in [200, 599], found 600");
    assertThatThrownBy(() -> Behaviour.builder().errorStatus(100).build())
        .hasMessage("error_status: expected an HTTP status in [200, 599], found 100");
    assertThatThrownBy(() -> Behaviour.builder().hangRate(1.5).build())
        .hasMessage("hang_rate: expected a percentage in [0%, 100%], found 150%");
    assertThatThrownBy(() -> Behaviour.builder().cacheControl("a\r\nb").build())
        .hasMessageStartingWith("cache_control: expected a header value of printable ASCII");
    assertThatThrownBy(() -> Behaviour.builder().errorRate(0.7).resetRate(0.4).build())
        .hasMessage(
            "error_rate + reset_rate + mid_body_reset_rate + hang_rate + garbage_rate:"
                + " expected a sum <= 100%, found 110%");
  }

  @Test
  void percentagesReadAndWriteAsPeopleWriteThem() {
    assertThat(Behaviour.parseRate("rate", "30%")).isEqualTo(0.3);
    assertThat(Behaviour.parseRate("rate", " 0.5 % ")).isEqualTo(0.005);
    assertThat(Behaviour.parseRate("rate", "-0%")).isEqualTo(0.0);
    assertThat(Behaviour.formatRate(0.07)).isEqualTo("7%");
    assertThat(Behaviour.formatRate(0.125)).isEqualTo("12.5%");
    assertThat(Behaviour.formatRate(1.0 / 3)).isEqualTo("33.3333%");
    assertThatThrownBy(() -> Behaviour.parseRate("--error-rate", "30"))
        .hasMessage("--error-rate: expected a percentage such as 30%, found '30'");
    assertThatThrownBy(() -> Behaviour.parseRate("--error-rate", "-1%"))
        .hasMessage("--error-rate: expected a percentage in [0%, 100%], found '-1%'");
    assertThatThrownBy(() -> Behaviour.parseRate("--error-rate", "100.5%"))
        .hasMessage("--error-rate: expected a percentage in [0%, 100%], found '100.5%'");
  }

  @Test
  void pathsOfOriginAndAbsoluteFormTargets() {
    assertThat(FaultHandler.pathOf("/a/b?c=d")).isEqualTo("/a/b");
    assertThat(FaultHandler.pathOf("http://example.com/x/y?z")).isEqualTo("/x/y");
    assertThat(FaultHandler.pathOf("http://example.com")).isEqualTo("/");
  }
}
