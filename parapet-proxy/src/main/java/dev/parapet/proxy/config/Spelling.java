package dev.parapet.proxy.config;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * "Did you mean" for configuration names: the closest known name by edit distance (Levenshtein,
 * after folding case and {@code -} to {@code _}), if it is close enough to be a typo — at most one
 * edit for short words, two for longer ones — so {@code breakr} suggests {@code breaker} but {@code
 * color} suggests nothing.
 */
final class Spelling {
  private Spelling() {}

  static Optional<String> closest(String word, Collection<String> known) {
    String w = fold(word);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(w, fold(k));
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    int allowed = w.length() <= 4 ? 1 : 2;
    return best != null && bestDistance <= allowed ? Optional.of(best) : Optional.empty();
  }

  private static String fold(String s) {
    return s.toLowerCase(Locale.ROOT).replace('-', '_');
  }

  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        current[j] =
            Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
      }
      int[] t = previous;
      previous = current;
      current = t;
    }
    return previous[b.length()];
  }
}
