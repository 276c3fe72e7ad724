package org.solrdedup;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The character tables the worker tokenises by, read from the files it reads too ({@code unicode/}
 * in the repository, {@code solr-dedup/} in the jar): no signature calls the JVM's {@code
 * Character} methods, so a Java upgrade never changes one.
 *
 * <ul>
 *   <li>{@code java17.txt}: the text profile's classes, {@code Character.isLetterOrDigit(char)}
 *       and {@code Character.toLowerCase(char)} of Java 17 (Unicode 13), per UTF-16 unit.
 *   <li>{@code near-v1.txt}: near-duplicate tokens (definition version 1): word characters, their
 *       full lower-case images, the final-sigma rule's classes, white space.
 * </ul>
 */
final class Tables {
  /** Java 17's {@code isLetterOrDigit}, per UTF-16 unit. */
  private final boolean[] letterOrDigit = new boolean[65536];
  /** Java 17's {@code toLowerCase}, per UTF-16 unit. */
  private final char[] lower = new char[65536];

  private final int[] nearWord;
  private final int[] nearIgnorable;
  private final int[] nearCased;
  private final int[] nearSpace;
  private final Map<Integer, String> nearLower = new HashMap<>();

  private static final Tables INSTANCE = new Tables();

  static Tables get() {
    return INSTANCE;
  }

  private Tables() {
    for (int c = 0; c < 65536; c++) {
      lower[c] = (char) c;
    }
    Map<String, List<int[]>> java = read("java17.txt");
    for (int[] r : java.get("letter-or-digit")) {
      for (int c = r[0]; c <= r[1]; c++) {
        letterOrDigit[c] = true;
      }
    }
    for (int[] r : java.get("lower")) {
      lower[r[0]] = (char) r[1];
    }
    Map<String, List<int[]>> near = read("near-v1.txt");
    nearWord = flatten(near.get("word"));
    nearIgnorable = flatten(near.get("ignorable"));
    nearCased = flatten(near.get("cased"));
    nearSpace = flatten(near.get("space"));
    for (int[] r : near.get("lower")) {
      StringBuilder image = new StringBuilder();
      for (int i = 1; i < r.length; i++) {
        image.appendCodePoint(r[i]);
      }
      nearLower.put(r[0], image.toString());
    }
  }

  /** The sections of a table file: each line's hex numbers. */
  private static Map<String, List<int[]>> read(String name) {
    String path = "/solr-dedup/" + name;
    Map<String, List<int[]>> sections = new HashMap<>();
    try (InputStream in = Tables.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("the plugin's jar lacks " + path + "; build it with mvn package");
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      List<int[]> current = null;
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (line.isEmpty() || line.startsWith("#")) {
          continue;
        }
        if (line.startsWith("[")) {
          current = new ArrayList<>();
          sections.put(line.substring(1, line.length() - 1), current);
          continue;
        }
        String[] fields = line.split(" ");
        int[] values = new int[fields.length];
        for (int i = 0; i < fields.length; i++) {
          values[i] = Integer.parseInt(fields[i], 16);
        }
        current.add(values);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sections;
  }

  private static int[] flatten(List<int[]> ranges) {
    int[] out = new int[2 * ranges.size()];
    for (int i = 0; i < ranges.size(); i++) {
      out[2 * i] = ranges.get(i)[0];
      out[2 * i + 1] = ranges.get(i)[1];
    }
    return out;
  }

  /** Whether {@code cp} lies in one of the inclusive ranges {@code [lo0, hi0, lo1, hi1, ...]}. */
  private static boolean within(int[] ranges, int cp) {
    int lo = 0;
    int hi = ranges.length / 2 - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (ranges[2 * mid + 1] < cp) {
        lo = mid + 1;
      } else if (ranges[2 * mid] > cp) {
        hi = mid - 1;
      } else {
        return true;
      }
    }
    return false;
  }

  /** Java 17's {@code Character.isLetterOrDigit(char)}. */
  boolean isLetterOrDigit(char c) {
    return letterOrDigit[c];
  }

  /** Java 17's {@code Character.toLowerCase(char)}. */
  char toLowerCase(char c) {
    return lower[c];
  }

  /** Whether a code point makes near-duplicate words (general category L* or Nd). */
  boolean isNearWord(int cp) {
    if (cp < 0x80) {
      return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    }
    return within(nearWord, cp);
  }

  /** Whether a text is blank: empty or white space only. */
  boolean isBlank(String text) {
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      if (!within(nearSpace, cp)) {
        return false;
      }
      i += Character.charCount(cp);
    }
    return true;
  }

  /**
   * A token of word characters lower-cased as the worker does (Rust's {@code str::to_lowercase}:
   * the full mappings, final sigma included), by code point.
   */
  String nearLowercase(String token) {
    StringBuilder out = new StringBuilder(token.length());
    for (int i = 0; i < token.length(); ) {
      int cp = token.codePointAt(i);
      int next = i + Character.charCount(cp);
      if (cp == 0x03A3) {
        boolean before = casedBefore(token, i);
        boolean after = casedAfter(token, next);
        out.append(before && !after ? '\u03C2' : '\u03C3');
      } else {
        String image = nearLower.get(cp);
        if (image != null) {
          out.append(image);
        } else {
          out.appendCodePoint(cp);
        }
      }
      i = next;
    }
    return out.toString();
  }

  /** Whether the first code point before {@code end} that is not case-ignorable is cased. */
  private boolean casedBefore(String s, int end) {
    for (int i = end; i > 0; ) {
      int cp = s.codePointBefore(i);
      i -= Character.charCount(cp);
      if (!within(nearIgnorable, cp)) {
        return within(nearCased, cp);
      }
    }
    return false;
  }

  /** Whether the first code point from {@code start} on that is not case-ignorable is cased. */
  private boolean casedAfter(String s, int start) {
    for (int i = start; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (!within(nearIgnorable, cp)) {
        return within(nearCased, cp);
      }
    }
    return false;
  }
}
