package dev.parapet.proxy.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ParapetCliTest {

  @Test
  void versionAndHelpExitZeroAndUnknownCommandsDoNot() {
    assertThat(ParapetCli.execute("--version")).isZero();
    assertThat(ParapetCli.execute("--help")).isZero();
    assertThat(ParapetCli.execute("no-such-command")).isNotZero();
  }
}
