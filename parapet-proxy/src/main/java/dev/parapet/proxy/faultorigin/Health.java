package dev.parapet.proxy.faultorigin;

import java.util.Locale;

/** How {@code GET /healthz} answers. */
public enum Health {
  /**
   * Like any other request of the plan (latency, errors, resets, hangs, garbage, refusal), but with
   * a short {@code ok} body, and 200 unless the plan's status is a 5xx: health checks see the same
   * outage the traffic sees.
   */
  FOLLOW,
  /** Always 200 at once: the health check that lies while real traffic fails. */
  UP,
  /** Always 503 at once: the origin is drained or declared down. */
  DOWN;

  /** The JSON and command-line name: {@code follow}. */
  public String text() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads {@code follow}, {@code up} or {@code down}; errors name {@code field}. */
  public static Health parse(String field, String text) {
    for (Health h : values()) {
      if (h.text().equals(text.strip().toLowerCase(Locale.ROOT))) {
        return h;
      }
    }
    throw new PlanException(field, "one of follow, up, down", PlanException.quoted(text));
  }
}
