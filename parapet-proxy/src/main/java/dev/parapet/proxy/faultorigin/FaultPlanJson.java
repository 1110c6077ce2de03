package dev.parapet.proxy.faultorigin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The control API's JSON form of a {@link FaultPlan}, and partial updates to it.
 *
 * <pre>{@code
 * {"status": 200, "body_size": 1024, "cache_control": null, "etag": null,
 *  "latency": "lognormal:120ms,4s", "error_rate": "30%", "error_status": 503,
 *  "reset_rate": "0%", "mid_body_reset_rate": "0%", "hang_rate": "0%", "garbage_rate": "0%",
 *  "refuse": false, "health": "follow", "paths": {"/slow/": {...same fields...}}}
 * }</pre>
 *
 * An update names only the fields it changes; the others keep their current value. Rates are
 * strings such as {@code "30%"} or fractions in {@code [0, 1]}. {@code paths}, when present,
 * replaces all overrides: each override names only the fields that differ from the top level of the
 * updated plan, and is stored (and shown by {@code GET /plan}) in full.
 */
public final class FaultPlanJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(SerializationFeature.INDENT_OUTPUT);

  private static final String BEHAVIOUR_FIELDS =
      "status, body_size, cache_control, etag, latency, error_rate, error_status, reset_rate,"
          + " mid_body_reset_rate, hang_rate, garbage_rate";
  private static final String PLAN_FIELDS = BEHAVIOUR_FIELDS + ", refuse, health, paths";

  private FaultPlanJson() {}

  /** The plan as indented JSON text. */
  public static String write(FaultPlan plan) {
    try {
      return MAPPER.writeValueAsString(toTree(plan)) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("plan : cannot be written as JSON (" + e + ")", e);
    }
  }

  /** The plan as a JSON tree. */
  public static ObjectNode toTree(FaultPlan plan) {
    ObjectNode node = MAPPER.createObjectNode();
    writeBehaviour(node, plan.behaviour());
    node.put("refuse", plan.refuse());
    node.put("health", plan.health().text());
    ObjectNode paths = node.putObject("paths");
    for (Map.Entry<String, Behaviour> e : plan.paths().entrySet()) {
      writeBehaviour(paths.putObject(e.getKey()), e.getValue());
    }
    return node;
  }

  /**
   * Applies the JSON object {@code text} to {@code current}; throws {@link PlanException} naming
   * the first bad field, or the body itself when it is not a JSON object.
   */
  public static FaultPlan update(FaultPlan current, String text) {
    JsonNode node;
    try {
      node = MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      String where =
          e.getLocation() == null
              ? ""
              : " at line "
                  + e.getLocation().getLineNr()
                  + " column "
                  + e.getLocation().getColumnNr();
      throw new PlanException(
          "request body", "a JSON object", "invalid JSON" + where + ": " + e.getOriginalMessage());
    }
    if (node == null || node.isMissingNode()) {
      throw new PlanException("request body", "a JSON object", "an empty body");
    }
    return update(current, node);
  }

  /** Applies a parsed JSON object to {@code current}. */
  public static FaultPlan update(FaultPlan current, JsonNode node) {
    if (!node.isObject()) {
      throw new PlanException("request body", "a JSON object", describe(node));
    }
    Behaviour.Builder top = current.behaviour().toBuilder();
    boolean refuse = current.refuse();
    Health health = current.health();
    @Nullable JsonNode paths = null;
    for (Map.Entry<String, JsonNode> field : node.properties()) {
      String name = field.getKey();
      JsonNode value = field.getValue();
      switch (name) {
        case "refuse" -> {
          if (!value.isBoolean()) {
            throw new PlanException("refuse", "true or false", describe(value));
          }
          refuse = value.booleanValue();
        }
        case "health" -> health = Health.parse("health", text("health", value));
        case "paths" -> paths = value;
        default -> {
          if (!applyBehaviourField(top, name, value)) {
            throw new PlanException(
                PlanException.quoted(name), "one of " + PLAN_FIELDS, "an unknown field");
          }
        }
      }
    }
    Behaviour behaviour = top.build();
    TreeMap<String, Behaviour> overrides = new TreeMap<>(current.paths());
    if (paths != null) {
      overrides.clear();
      if (!paths.isNull()) {
        if (!paths.isObject()) {
          throw new PlanException("paths", "an object of path prefix to fields", describe(paths));
        }
        for (Map.Entry<String, JsonNode> e : paths.properties()) {
          overrides.put(e.getKey(), override(behaviour, e.getKey(), e.getValue()));
        }
      }
    }
    return new FaultPlan(behaviour, overrides, refuse, health);
  }

  private static Behaviour override(Behaviour base, String prefix, JsonNode node) {
    String where = "paths." + prefix + ".";
    if (!node.isObject()) {
      throw new PlanException("paths." + prefix, "an object of fields", describe(node));
    }
    Behaviour.Builder b = base.toBuilder();
    try {
      for (Map.Entry<String, JsonNode> field : node.properties()) {
        if (!applyBehaviourField(b, field.getKey(), field.getValue())) {
          throw new PlanException(
              PlanException.quoted(field.getKey()),
              "one of " + BEHAVIOUR_FIELDS,
              "an unknown field");
        }
      }
      return b.build();
    } catch (PlanException e) {
      throw e.under(where);
    }
  }

  private static boolean applyBehaviourField(Behaviour.Builder b, String name, JsonNode value) {
    switch (name) {
      case "status" -> b.status(integer(name, value));
      case "body_size" -> b.bodySize(integer(name, value));
      case "cache_control" -> b.cacheControl(nullableText(name, value));
      case "etag" -> b.etag(nullableText(name, value));
      case "latency" -> b.latency(Latency.parse(name, text(name, value)));
      case "error_rate" -> b.errorRate(rate(name, value));
      case "error_status" -> b.errorStatus(integer(name, value));
      case "reset_rate" -> b.resetRate(rate(name, value));
      case "mid_body_reset_rate" -> b.midBodyResetRate(rate(name, value));
      case "hang_rate" -> b.hangRate(rate(name, value));
      case "garbage_rate" -> b.garbageRate(rate(name, value));
      default -> {
        return false;
      }
    }
    return true;
  }

  private static void writeBehaviour(ObjectNode node, Behaviour b) {
    node.put("status", b.status());
    node.put("body_size", b.bodySize());
    node.put("cache_control", b.cacheControl());
    node.put("etag", b.etag());
    node.put("latency", b.latency().text());
    node.put("error_rate", Behaviour.formatRate(b.errorRate()));
    node.put("error_status", b.errorStatus());
    node.put("reset_rate", Behaviour.formatRate(b.resetRate()));
    node.put("mid_body_reset_rate", Behaviour.formatRate(b.midBodyResetRate()));
    node.put("hang_rate", Behaviour.formatRate(b.hangRate()));
    node.put("garbage_rate", Behaviour.formatRate(b.garbageRate()));
  }

  private static int integer(String name, JsonNode value) {
    if (!value.isIntegralNumber() || !value.canConvertToInt()) {
      throw new PlanException(name, "an integer", describe(value));
    }
    return value.intValue();
  }

  private static String text(String name, JsonNode value) {
    if (!value.isTextual()) {
      throw new PlanException(name, "a string", describe(value));
    }
    return value.textValue();
  }

  private static @Nullable String nullableText(String name, JsonNode value) {
    return value.isNull() ? null : text(name, value);
  }

  private static double rate(String name, JsonNode value) {
    if (value.isNumber()) {
      return Behaviour.requireRate(
          name, value.doubleValue(), value.asText() + " (a fraction in [0, 1])");
    }
    if (value.isTextual()) {
      return Behaviour.parseRate(name, value.textValue());
    }
    throw new PlanException(name, "a percentage such as \"30%\"", describe(value));
  }

  private static String describe(JsonNode value) {
    JsonNodeType type = value.getNodeType();
    return switch (type) {
      case STRING -> "the string " + PlanException.quoted(value.textValue());
      case OBJECT -> "an object";
      case ARRAY -> "an array";
      case NULL -> "null";
      default -> type.name().toLowerCase(java.util.Locale.ROOT) + " " + value;
    };
  }
}
