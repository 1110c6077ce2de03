package dev.parapet.sim.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LineReaderTest {
  /** Seeded random texts: the lines read are exactly those of String.split, CR dropped. */
  @Test
  void readsTheLinesOfAnyTextWhateverTheBufferSize() throws Exception {
    for (long seed = 1; seed <= 300; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      StringBuilder text = new StringBuilder();
      List<String> expected = new ArrayList<>();
      int lines = rnd.nextInt(1, 60);
      for (int i = 0; i < lines; i++) {
        StringBuilder line = new StringBuilder();
        int len = rnd.nextInt(0, 40);
        for (int j = 0; j < len; j++) {
          line.append((char) ('a' + rnd.nextInt(26)));
        }
        expected.add(line.toString());
        text.append(line).append(rnd.nextInt(5) == 0 ? "\r\n" : "\n");
      }
      boolean lastWithoutBreak = rnd.nextBoolean();
      if (lastWithoutBreak) {
        text.setLength(text.length() - 1);
        if (text.length() > 0 && text.charAt(text.length() - 1) == '\r') {
          text.setLength(text.length() - 1);
        }
      }
      int buffer = 1 << rnd.nextInt(3, 8);
      LineReader in =
          new LineReader(
              new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.US_ASCII)),
              buffer);
      List<String> read = new ArrayList<>();
      while (in.next()) {
        read.add(Scan.text(in.buf(), in.start(), in.end()));
        assertThat(in.lineNo()).isEqualTo(read.size());
      }
      if (lastWithoutBreak && expected.get(expected.size() - 1).isEmpty()) {
        expected.remove(expected.size() - 1); // nothing after the last break
      }
      assertThat(read).as("seed %d buffer %d", seed, buffer).isEqualTo(expected);
      assertThat(in.capacity()).isLessThanOrEqualTo(Math.max(buffer, 64));
    }
  }

  @Test
  void newlineIsFoundAtEveryOffset() {
    for (int len = 0; len < 40; len++) {
      for (int at = 0; at < len; at++) {
        byte[] b = new byte[len];
        java.util.Arrays.fill(b, (byte) 'x');
        b[at] = '\n';
        assertThat(LineReader.newline(b, 0, len)).isEqualTo(at);
        assertThat(LineReader.newline(b, at + 1, len)).isEqualTo(-1);
      }
    }
  }
}
