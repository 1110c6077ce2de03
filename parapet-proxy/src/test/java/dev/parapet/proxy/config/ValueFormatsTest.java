package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ValueFormatsTest {

  @ParameterizedTest
  @CsvSource({
    "250ms, PT0.25S",
    "3s, PT3S",
    "5m, PT5M",
    "1h, PT1H",
    "0s, PT0S",
    "1m30s, PT1M30S",
    "' 300s ', PT5M",
    "2500ms, PT2.5S"
  })
  void durationsInHumanForm(String text, String iso) {
    assertThat(HumanDuration.parse(text)).isEqualTo(Duration.parse(iso));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "3", "1.5s", "-1s", "3 sec", "s", "10d", "5mm", "1s2", "ms"})
  void badDurationsSayWhatIsExpected(String text) {
    assertThatThrownBy(() -> HumanDuration.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("must be a duration like 250ms, 3s, 5m or 1h, was '" + text + "'");
  }

  @Test
  void durationsFormatInTheirShortestExactForm() {
    assertThat(HumanDuration.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(HumanDuration.format(Duration.ofSeconds(300))).isEqualTo("5m");
    assertThat(HumanDuration.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
    assertThat(HumanDuration.format(Duration.ofHours(1))).isEqualTo("1h");
    assertThat(HumanDuration.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(HumanDuration.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
  }

  @ParameterizedTest
  @CsvSource({"20%, 0.2", "100%, 1.0", "0%, 0.0", "12.5%, 0.125", "150%, 1.5", "' 35 %', 0.35"})
  void percentages(String text, double fraction) {
    assertThat(Percent.parse(text, false)).isEqualTo(fraction);
  }

  @Test
  void fractionsOnlyWhereAllowed() {
    assertThat(Percent.parse("0.85", true)).isEqualTo(0.85);
    assertThatThrownBy(() -> Percent.parse("0.85", false))
        .hasMessage("must be a percentage like 20%, was '0.85'");
    assertThatThrownBy(() -> Percent.parse("half", true))
        .hasMessage("must be a percentage like 20% or a fraction like 0.2, was 'half'");
    assertThatThrownBy(() -> Percent.parse("-5%", false))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Percent.format(0.125)).isEqualTo("12.5%");
    assertThat(Percent.format(1.5)).isEqualTo("150%");
    assertThat(Percent.format(0.2)).isEqualTo("20%");
  }

  @Test
  void computedSharesFormatWithoutBinaryNoise() {
    assertThat(Percent.format(0.7 + 0.4, 4)).isEqualTo("110%");
    assertThat(Percent.format(1.0 / 3, 4)).isEqualTo("33.3333%");
    assertThat(Percent.format(0.125, 4)).isEqualTo("12.5%");
  }

  @ParameterizedTest
  @CsvSource({
    "256MiB, 268435456",
    "1GiB, 1073741824",
    "512KiB, 524288",
    "100, 100",
    "100B, 100",
    "2TiB, 2199023255552"
  })
  void sizesInBinaryUnits(String text, long bytes) {
    assertThat(DataSize.parse(text).bytes()).isEqualTo(bytes);
  }

  @Test
  void badSizesAndDecimalUnitsAreRefusedWithASuggestion() {
    assertThatThrownBy(() -> DataSize.parse("256MB"))
        .hasMessage(
            "must be a size like 512KiB, 256MiB or 1GiB, was '256MB' (did you mean 256MiB?)");
    assertThatThrownBy(() -> DataSize.parse("1g"))
        .hasMessage("must be a size like 512KiB, 256MiB or 1GiB, was '1g' (did you mean 1GiB?)");
    assertThatThrownBy(() -> DataSize.parse("lots"))
        .hasMessage("must be a size like 512KiB, 256MiB or 1GiB, was 'lots'");
    assertThatThrownBy(() -> DataSize.parse("99999999999TiB")).hasMessageContaining("at most");
    assertThat(DataSize.parse("256MiB")).hasToString("256MiB");
    assertThat(new DataSize(1536 * 1024)).hasToString("1536KiB");
  }

  @Test
  void hostPortsInEveryForm() {
    assertThat(HostPort.parse("127.0.0.1:8080")).isEqualTo(new HostPort("127.0.0.1", 8080));
    assertThat(HostPort.parse("[::1]:8080")).isEqualTo(new HostPort("::1", 8080));
    assertThat(HostPort.parse("[::1]:8080")).hasToString("[::1]:8080");
    assertThat(HostPort.parse("Origin.Example.com:443"))
        .isEqualTo(new HostPort("origin.example.com", 443));
    assertThat(HostPort.parse("localhost:0").port()).isZero();
    assertThat(HostPort.parse("127.0.0.1:1").isLoopback()).isTrue();
    assertThat(HostPort.parse("127.9.9.9:1").isLoopback()).isTrue();
    assertThat(HostPort.parse("[::1]:1").isLoopback()).isTrue();
    assertThat(HostPort.parse("localhost:1").isLoopback()).isTrue();
    assertThat(HostPort.parse("0.0.0.0:1").isLoopback()).isFalse();
    assertThat(HostPort.parse("[::]:1").isLoopback()).isFalse();
    assertThat(HostPort.parse("10.1.2.3:1").isLoopback()).isFalse();
    assertThat(HostPort.parse("example.com:1").isLoopback()).isFalse();
  }

  @Test
  void badHostPortsNameTheBadPart() {
    assertThatThrownBy(() -> HostPort.parse("127.0.0.1"))
        .hasMessage(
            "must be host:port like 127.0.0.1:8080, [::1]:8080 or name:443, was '127.0.0.1'");
    assertThatThrownBy(() -> HostPort.parse("127.0.0.1:"))
        .hasMessageStartingWith("must be host:port");
    assertThatThrownBy(() -> HostPort.parse("127.0.0.1:http"))
        .hasMessage("must end in a port number, was 'http' in '127.0.0.1:http'");
    assertThatThrownBy(() -> HostPort.parse("127.0.0.1:70000"))
        .hasMessage("must have a port in [0, 65535], was 70000");
    assertThatThrownBy(() -> HostPort.parse("300.0.0.1:80"))
        .hasMessage("must have a valid IPv4 address, was '300.0.0.1' in '300.0.0.1:80'");
    assertThatThrownBy(() -> HostPort.parse("::1:80"))
        .hasMessage("must put an IPv6 address in brackets like [::1]:8080, was '::1:80'");
    assertThatThrownBy(() -> HostPort.parse("[::zz]:80"))
        .hasMessage("must have a valid IPv6 address in brackets, was '[::zz]:80'");
    assertThatThrownBy(() -> HostPort.parse("bad_host!:80"))
        .hasMessage("must have an IP address or a host name, was 'bad_host!' in 'bad_host!:80'");
  }

  @Test
  void cidrs() throws Exception {
    Cidr ten = Cidr.parse("10.0.0.0/8");
    assertThat(ten.prefixLength()).isEqualTo(8);
    assertThat(ten.contains(InetAddress.getByName("10.200.3.4"))).isTrue();
    assertThat(ten.contains(InetAddress.getByName("11.0.0.1"))).isFalse();
    assertThat(ten.contains(InetAddress.getByName("::1"))).isFalse();
    assertThat(Cidr.parse("127.0.0.1")).isEqualTo(Cidr.parse("127.0.0.1/32"));
    Cidr v6 = Cidr.parse("fd00::/8");
    assertThat(v6.contains(InetAddress.getByName("fd12::1"))).isTrue();
    assertThat(v6.contains(InetAddress.getByName("fe80::1"))).isFalse();
    assertThat(Cidr.parse("0.0.0.0/0").contains(InetAddress.getByName("8.8.8.8"))).isTrue();
    assertThat(Cidr.parse("10.0.0.0/8")).hasToString("10.0.0.0/8");
  }

  @Test
  void badCidrs() {
    assertThatThrownBy(() -> Cidr.parse("10.0.0.1/8"))
        .hasMessage("must have zero host bits, was '10.0.0.1/8' (did you mean 10.0.0.0/8?)");
    assertThatThrownBy(() -> Cidr.parse("10.0.0.0/33"))
        .hasMessage("must have a prefix length in [0, 32], was '10.0.0.0/33'");
    assertThatThrownBy(() -> Cidr.parse("10.0.0.0/x"))
        .hasMessage("must have a prefix length in [0, 32], was '10.0.0.0/x'");
    assertThatThrownBy(() -> Cidr.parse("example.com/24"))
        .hasMessage("must be a CIDR like 10.0.0.0/8 or fd00::/8, was 'example.com/24'");
    assertThatThrownBy(() -> Cidr.parse("::1/129"))
        .hasMessage("must have a prefix length in [0, 128], was '::1/129'");
  }

  @Test
  void spellingSuggestsOnlyCloseNames() {
    var keys = java.util.List.of("breaker", "timeout", "stale_if_error", "hosts");
    assertThat(Spelling.closest("breakr", keys)).contains("breaker");
    assertThat(Spelling.closest("timout", keys)).contains("timeout");
    assertThat(Spelling.closest("stale-if-error", keys)).contains("stale_if_error");
    assertThat(Spelling.closest("host", keys)).contains("hosts");
    assertThat(Spelling.closest("colour", keys)).isEmpty();
  }
}
