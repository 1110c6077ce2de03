package dev.parapet.proxy.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TransportTest {

  @Test
  void autoTakesTheFirstAvailableOfEpollIoUringAndNio() {
    List<Transport> available = Transport.available();
    assertThat(available).isNotEmpty();
    assertThat(available.get(available.size() - 1).name()).isEqualTo("nio");
    List<String> names = available.stream().map(Transport::name).toList();
    assertThat(names).isSubsetOf("epoll", "io_uring", "nio").doesNotHaveDuplicates();
    // In auto's order of preference: epoll first (lower latency below saturation), then io_uring.
    assertThat(List.of("epoll", "io_uring", "nio")).containsSubsequence(names);
    assertThat(Transport.named("auto").name()).isEqualTo(available.get(0).name());
  }

  @Test
  void everyAvailableTransportCanBeNamedInAnyCase() {
    for (Transport t : Transport.available()) {
      Transport named = Transport.named(" " + t.name().toUpperCase(java.util.Locale.ROOT));
      assertThat(named.name()).isEqualTo(t.name());
      assertThat(named.serverChannel()).isEqualTo(t.serverChannel());
      assertThat(named.socketChannel()).isEqualTo(t.socketChannel());
      assertThat(named.ioHandlers()).isNotNull();
    }
  }

  @Test
  void anUnknownNameIsRefusedWithTheChoices() {
    assertThatThrownBy(() -> Transport.named("kqueue"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown transport 'kqueue' (expected one of [auto, epoll, io_uring, nio])");
  }

  @Test
  void theJvmPropertySetsTheTransportOfServersBuiltWithoutOne() {
    String before = System.getProperty(Transport.PROPERTY);
    try {
      System.setProperty(Transport.PROPERTY, "nio");
      assertThat(Transport.preferred().name()).isEqualTo("nio");
      System.clearProperty(Transport.PROPERTY);
      assertThat(Transport.preferred().name()).isEqualTo(Transport.named("auto").name());
      System.setProperty(Transport.PROPERTY, "bogus");
      assertThatThrownBy(Transport::preferred).hasMessageContaining("unknown transport 'bogus'");
    } finally {
      if (before == null) {
        System.clearProperty(Transport.PROPERTY);
      } else {
        System.setProperty(Transport.PROPERTY, before);
      }
    }
  }
}
