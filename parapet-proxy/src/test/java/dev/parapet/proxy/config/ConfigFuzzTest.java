package dev.parapet.proxy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes the configuration reader behind {@code parapet validate} ({@link ConfigLoader#parse}): any
 * text gives either a configuration or {@link InvalidConfigException} with at least one error, each
 * an error with a message and a place (a YAML path, or a line for what has none), never another
 * exception. Seeds: {@code ConfigFuzzTestInputs/config/} (the examples' shapes, broken ones,
 * aliases and deep nesting).
 */
class ConfigFuzzTest {
  /** Where relative paths (token_file, access_log) resolve: an empty directory. */
  @TempDir static Path base;

  @FuzzTest
  void config(byte[] data) {
    check(new String(data, StandardCharsets.UTF_8));
  }

  private static void check(String yaml) {
    try {
      LoadedConfig loaded = ConfigLoader.parse(yaml, "fuzz.yaml", base);
      assertThat(loaded.config()).isNotNull();
      for (ConfigProblem w : loaded.warnings()) {
        assertThat(w.severity()).isEqualTo(ConfigProblem.Severity.WARNING);
        located(w);
      }
    } catch (InvalidConfigException e) {
      assertThat(e.errors()).as("a refusal without an error").isNotEmpty();
      for (ConfigProblem p : e.errors()) {
        assertThat(p.severity()).isEqualTo(ConfigProblem.Severity.ERROR);
        located(p);
      }
    }
  }

  private static void located(ConfigProblem p) {
    assertThat(p.message()).as("a problem's message").isNotBlank();
    assertThat(!p.path().isEmpty() || p.line() > 0).as("a problem with no place: %s", p).isTrue();
    assertThat(p.line()).isNotNegative();
    assertThat(p.column()).isNotNegative();
    assertThat(p.format("fuzz.yaml")).startsWith("fuzz.yaml");
  }

  /** A billion laughs: aliases are refused where they are written, not expanded. */
  @Test
  void aliasBombIsRefusedAtTheAliases() {
    StringBuilder y = new StringBuilder("name: &a [x, x, x, x, x, x, x, x, x, x]\n");
    char prev = 'a';
    for (char c = 'b'; c <= 'j'; c++) {
      y.append("k").append(c).append(": &").append(c).append(" [");
      for (int i = 0; i < 10; i++) {
        y.append(i == 0 ? "" : ", ").append('*').append(prev);
      }
      y.append("]\n");
      prev = c;
    }
    InvalidConfigException e =
        catchThrowableOfType(
            InvalidConfigException.class,
            () -> ConfigLoader.parse(y.toString(), "bomb.yaml", base));
    assertThat(e.errors())
        .anySatisfy(p -> assertThat(p.message()).contains("YAML aliases are not supported"));
    check(y.toString());
  }

  /**
   * Nesting deeper than any configuration is refused as malformed at the line where the parser gave
   * up (Jackson's limit of 1000 levels), not with a stack overflow or without a place.
   */
  @Test
  void deepNestingIsRefusedWithItsLine() {
    for (String deep :
        new String[] {"name:\n  " + "[".repeat(100_000), "a: " + "{b: ".repeat(100_000)}) {
      InvalidConfigException e =
          catchThrowableOfType(
              InvalidConfigException.class, () -> ConfigLoader.parse(deep, "deep.yaml", base));
      assertThat(e.errors()).hasSize(1);
      ConfigProblem p = e.errors().get(0);
      assertThat(p.message()).startsWith("malformed YAML at line").contains("nesting depth");
      assertThat(p.line()).as("%s", p).isPositive();
    }
  }
}
