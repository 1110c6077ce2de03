package dev.parapet.proxy.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parapet.core.breaker.BreakerListener;
import dev.parapet.core.breaker.FlappingEvent;
import dev.parapet.core.breaker.TransitionEvent;
import dev.parapet.core.time.Ticker;
import dev.parapet.proxy.flow.RequestIds;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JSON log line per breaker transition (and per flapping alarm) with every event field, at
 * logger {@code parapet.breaker} (whose appender writes the message alone, so each line is pure
 * JSON). Monotonic event times are mapped to wall-clock time for humans.
 */
final class BreakerEventLog implements BreakerListener {
  private static final Logger LOG = LoggerFactory.getLogger("parapet.breaker");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String proxyName;
  private final Ticker ticker;
  private final RequestIds requestIds;

  BreakerEventLog(String proxyName, Ticker ticker, RequestIds requestIds) {
    this.proxyName = proxyName;
    this.ticker = ticker;
    this.requestIds = requestIds;
  }

  @Override
  public void onTransition(TransitionEvent e) {
    ObjectNode n = JSON.createObjectNode();
    n.put("event", "breaker_transition");
    n.put("proxy", proxyName);
    n.put("time", wallClock(e.nowNanos()));
    n.put("breaker", e.key().toString());
    n.put("scope", e.scope().name().toLowerCase(java.util.Locale.ROOT));
    n.put("from", e.from().name());
    n.put("to", e.to().name());
    n.put("reason", e.reason().name());
    n.put("observations", e.observations());
    n.put("failure_rate", e.failureRate());
    n.put("slow_rate", e.slowRate());
    n.put("probes", e.probes());
    if (e.openNanos() > 0) {
      n.put("open_ms", e.openNanos() / 1_000_000);
    }
    String requestId = requestIds.name(e.requestId());
    if (requestId != null) {
      n.put("request_id", requestId); // the X-Request-Id of the request whose outcome moved it
    }
    write(n);
  }

  @Override
  public void onFlapping(FlappingEvent e) {
    ObjectNode n = JSON.createObjectNode();
    n.put("event", "breaker_flapping");
    n.put("proxy", proxyName);
    n.put("time", wallClock(e.nowNanos()));
    n.put("breaker", e.key().toString());
    n.put("opens", e.opens());
    n.put("span_s", e.spanNanos() / 1_000_000_000L);
    write(n);
  }

  private String wallClock(long eventNanos) {
    long agoMillis = (ticker.read() - eventNanos) / 1_000_000L;
    return Instant.ofEpochMilli(System.currentTimeMillis() - agoMillis).toString();
  }

  private static void write(ObjectNode n) {
    try {
      LOG.info(JSON.writeValueAsString(n));
    } catch (JsonProcessingException ex) {
      LOG.info("{}", n);
    }
  }
}
