package org.solrdedup;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Near-duplicate signatures, definition version 1, as the worker's {@code signature::near} module
 * defines them (its documentation is the definition): tokens by the shared tables, shingles of
 * {@code n} tokens folded with SplitMix64's finaliser, {@code H·T} 32-bit MurmurHash3-finalised
 * hash functions keyed from SplitMix64, trial values and combination keys by XXH3.
 */
final class Near {
  /** The seed every hash of version 1 derives from. */
  static final long SEED = 0x5eed0001d0c51a7eL;
  /** The definition's version. */
  static final int VERSION = 1;

  final int shingle;
  final int hashes;
  final int trials;
  final int agree;
  private final int[] keys;
  /** {@code keys[j] ^ (keys[j] >>> 16)}: fmix32's first step, done once per function. */
  private final int[] premixed;
  private final int[][] subsets;

  /** The values of one text: one per trial, one key per {@code agree}-subset of the trials. */
  static final class Signature {
    final long[] trials;
    final long[] keys;

    Signature(long[] trials, long[] keys) {
      this.trials = trials;
      this.keys = keys;
    }
  }

  Near(int shingle, int hashes, int trials, int agree) {
    check("shingle", shingle, 1, 8);
    check("hashes", hashes, 1, 64);
    check("trials", trials, 1, 16);
    check("agree", agree, 1, trials);
    this.shingle = shingle;
    this.hashes = hashes;
    this.trials = trials;
    this.agree = agree;
    keys = new int[hashes * trials];
    long state = SEED;
    for (int j = 0; j < keys.length; j++) {
      state += 0x9e3779b97f4a7c15L;
      keys[j] = (int) fmix64(state);
    }
    premixed = new int[keys.length];
    for (int j = 0; j < keys.length; j++) {
      premixed[j] = keys[j] ^ (keys[j] >>> 16);
    }
    List<int[]> out = new ArrayList<>();
    combinations(0, trials, agree, new int[agree], 0, out);
    subsets = out.toArray(new int[0][]);
  }

  private static void check(String name, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + value);
    }
  }

  private static void combinations(int start, int n, int k, int[] current, int depth, List<int[]> out) {
    if (depth == k) {
      out.add(current.clone());
      return;
    }
    for (int i = start; i < n; i++) {
      current[depth] = i;
      combinations(i + 1, n, k, current, depth + 1, out);
    }
  }

  /** The name of the definition and parameters, stored with a document's values. */
  String version() {
    return "near" + VERSION + "-n" + shingle + "-h" + hashes + "-t" + trials + "-a" + agree;
  }

  static long fmix64(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** fmix32 after its first step, its top bit flipped (for a signed minimum). */
  private static int rest(int h) {
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return (h ^ (h >>> 16)) ^ Integer.MIN_VALUE;
  }

  static int fmix32(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  /** The tokens of a text (step 1): runs of word characters, each lower-cased. */
  static List<String> tokens(String text) {
    Tables t = Tables.get();
    List<String> out = new ArrayList<>();
    int start = -1;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      boolean word = t.isNearWord(cp);
      if (word && start < 0) {
        start = i;
      } else if (!word && start >= 0) {
        out.add(t.nearLowercase(text.substring(start, i)));
        start = -1;
      }
      i += Character.charCount(cp);
    }
    if (start >= 0) {
      out.add(t.nearLowercase(text.substring(start)));
    }
    return out;
  }

  /** Per thread: a lower-cased ASCII token's bytes, and the token hashes of the text. */
  private static final class Scratch {
    byte[] ascii = new byte[64];
    long[] words = new long[256];
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  /**
   * The token hashes of a text (steps 1 and 2) into {@code s.words}; returns how many. A token of
   * ASCII letters and digits (nearly all) is lower-cased into bytes and hashed without a string;
   * one with another character goes through the tables' lower case and UTF-8.
   */
  private static int tokenHashes(String text, Scratch s) {
    Tables t = Tables.get();
    int count = 0;
    int start = -1;
    boolean ascii = true;
    int n = text.length();
    for (int i = 0; i <= n; ) {
      int cp = i < n ? text.codePointAt(i) : ' ';
      boolean word = i < n && t.isNearWord(cp);
      if (word) {
        if (start < 0) {
          start = i;
          ascii = true;
        }
        ascii &= cp < 0x80;
      } else if (start >= 0) {
        long h;
        if (ascii) {
          int len = i - start;
          if (s.ascii.length < len) {
            s.ascii = new byte[Math.max(len, 2 * s.ascii.length)];
          }
          for (int j = 0; j < len; j++) {
            char c = text.charAt(start + j);
            s.ascii[j] = (byte) (c >= 'A' && c <= 'Z' ? c + 32 : c);
          }
          h = Xxh3.hash(s.ascii, len, SEED);
        } else {
          h = Xxh3.hash(t.nearLowercase(text.substring(start, i)).getBytes(StandardCharsets.UTF_8), SEED);
        }
        if (count == s.words.length) {
          s.words = Arrays.copyOf(s.words, 2 * count);
        }
        s.words[count++] = h;
        start = -1;
      }
      i += i < n ? Character.charCount(cp) : 1;
    }
    return count;
  }

  /** The hashes of a text's shingles (steps 1 to 3), repeats included. */
  long[] shingleHashes(String text) {
    Scratch s = SCRATCH.get();
    int count = tokenHashes(text, s);
    long[] words = s.words;
    if (count == 0) {
      return new long[0];
    }
    if (count < shingle) {
      return new long[] {fold(words, 0, count)};
    }
    long[] out = new long[count - shingle + 1];
    for (int i = 0; i < out.length; i++) {
      out[i] = fold(words, i, shingle);
    }
    return out;
  }

  private static long fold(long[] words, int from, int count) {
    long x = SEED;
    for (int i = from; i < from + count; i++) {
      x = fmix64(x ^ words[i]);
    }
    return x;
  }

  /** The signature of a text, or {@code null} when it has no token. */
  Signature sign(String text) {
    long[] shingles = shingleHashes(text);
    if (shingles.length == 0) {
      return null;
    }
    // fmix32(y ^ k) as premix(y) ^ premix(k), then the rest (premix is linear over XOR), and the
    // unsigned minimum as a signed one of the values with the top bit flipped; four shingles at a
    // time, so that each function's minimum is loaded and stored once per four.
    int[] ys = new int[(shingles.length + 3) & ~3];
    for (int i = 0; i < shingles.length; i++) {
      long x = shingles[i];
      int y = (int) (x ^ (x >>> 32));
      ys[i] = y ^ (y >>> 16);
    }
    // Padding repeats the first shingle: a minimum does not see repeats.
    for (int i = shingles.length; i < ys.length; i++) {
      ys[i] = ys[0];
    }
    int[] minima = new int[keys.length];
    Arrays.fill(minima, Integer.MAX_VALUE);
    for (int i = 0; i < ys.length; i += 4) {
      int y0 = ys[i];
      int y1 = ys[i + 1];
      int y2 = ys[i + 2];
      int y3 = ys[i + 3];
      for (int j = 0; j < premixed.length; j++) {
        int k = premixed[j];
        int m = Math.min(Math.min(rest(y0 ^ k), rest(y1 ^ k)), Math.min(rest(y2 ^ k), rest(y3 ^ k)));
        minima[j] = Math.min(minima[j], m);
      }
    }
    for (int j = 0; j < minima.length; j++) {
      minima[j] ^= Integer.MIN_VALUE;
    }
    long[] values = new long[trials];
    byte[] bytes = new byte[4 * hashes];
    for (int t = 0; t < trials; t++) {
      for (int j = 0; j < hashes; j++) {
        int m = minima[t * hashes + j];
        for (int b = 0; b < 4; b++) {
          bytes[4 * j + b] = (byte) (m >>> (8 * b));
        }
      }
      values[t] = Xxh3.hash(bytes, SEED ^ t);
    }
    long[] combos = new long[subsets.length];
    for (int k = 0; k < subsets.length; k++) {
      int[] subset = subsets[k];
      int a = subset.length;
      byte[] key = new byte[9 * a];
      for (int i = 0; i < a; i++) {
        key[i] = (byte) subset[i];
        long v = values[subset[i]];
        for (int b = 0; b < 8; b++) {
          key[a + 8 * i + b] = (byte) (v >>> (8 * b));
        }
      }
      combos[k] = Xxh3.hash(key, SEED ^ 0xC0);
    }
    return new Signature(values, combos);
  }
}
