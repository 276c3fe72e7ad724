package org.solrdedup;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The text profile behind {@code fuzzy_signature_l} (signatures.md, section 3): YaCy's and Solr's
 * {@code TextProfileSignature}, tokenised by Java 17's tables.
 *
 * <p>Ties keep the order of a {@code java.util.HashMap} filled with {@code put} as YaCy and Solr
 * fill theirs: buckets in ascending order of {@code (h ^ (h >>> 16)) & (size - 1)}, where {@code h}
 * is {@code String.hashCode()} and {@code size} the smallest {@code 16·2^k} with the distinct tokens
 * at most {@code 12·2^k}, and the first seen first inside a bucket; the sort is stable. That is
 * what the worker computes too (its {@code java_hashmap} module), without a map of strings: tokens
 * are counted in one table over a character buffer, and strings are made for the kept ones only.
 */
final class TextProfile {
  /** The hashed profile string. */
  final String profile;
  /** {@code fuzzy_signature_text_t}: entries {@code (token-cnt-qcnt)} (YaCy's scheme). */
  final String textT;
  /** How many tokens the profile kept. */
  final int words;
  /** {@code fuzzy_signature_l}. */
  final long signature;

  private TextProfile(String profile, String textT, int words, long signature) {
    this.profile = profile;
    this.textT = textT;
    this.words = words;
    this.signature = signature;
  }

  /** Counts distinct tokens; one per thread, reused. */
  private static final class Counter {
    char[] chars = new char[1024];
    /** The end of the distinct tokens' characters in {@code chars}. */
    int used;
    int[] start = new int[64];
    int[] length = new int[64];
    int[] hash = new int[64];
    int[] count = new int[64];
    int entries;
    /** Open addressing: entry index + 1, 0 for empty. */
    int[] slots = new int[128];

    void reset(int textLength) {
      if (chars.length < textLength) {
        chars = new char[Math.max(textLength, 2 * chars.length)];
      }
      used = 0;
      entries = 0;
      Arrays.fill(slots, 0);
    }

    /** The token {@code chars[at, at + len)} with String hash {@code h} was seen once more. */
    void add(int at, int len, int h) {
      int mask = slots.length - 1;
      int slot = mix(h) & mask;
      while (true) {
        int e = slots[slot] - 1;
        if (e < 0) {
          break;
        }
        if (hash[e] == h && length[e] == len
            && Arrays.equals(chars, start[e], start[e] + len, chars, at, at + len)) {
          count[e]++;
          return;
        }
        slot = (slot + 1) & mask;
      }
      if (entries == start.length) {
        int n = 2 * entries;
        start = Arrays.copyOf(start, n);
        length = Arrays.copyOf(length, n);
        hash = Arrays.copyOf(hash, n);
        count = Arrays.copyOf(count, n);
      }
      // The token stays where it is: the next one is written after it.
      start[entries] = at;
      length[entries] = len;
      hash[entries] = h;
      count[entries] = 1;
      entries++;
      used = at + len;
      slots[slot] = entries;
      if (2 * entries > slots.length) {
        grow();
      }
    }

    private void grow() {
      slots = new int[2 * slots.length];
      int mask = slots.length - 1;
      for (int e = 0; e < entries; e++) {
        int slot = mix(hash[e]) & mask;
        while (slots[slot] != 0) {
          slot = (slot + 1) & mask;
        }
        slots[slot] = e + 1;
      }
    }

    private static int mix(int h) {
      h *= 0x9E3779B1;
      return h ^ (h >>> 15);
    }
  }

  private static final ThreadLocal<Counter> COUNTER = ThreadLocal.withInitial(Counter::new);

  static TextProfile of(String text, boolean md5, int minTokenLen, float quantRate) {
    Tables t = Tables.get();
    Counter c = COUNTER.get();
    c.reset(text.length());
    char[] chars = c.chars;
    int len = 0;
    int h = 0;
    for (int i = 0, n = text.length(); i <= n; i++) {
      if (i < n) {
        char ch = text.charAt(i);
        if (t.isLetterOrDigit(ch)) {
          char lower = t.toLowerCase(ch);
          chars[c.used + len++] = lower;
          h = 31 * h + lower;
          continue;
        }
      }
      if (len > minTokenLen) {
        c.add(c.used, len, h);
      }
      len = 0;
      h = 0;
    }
    int maxFreq = 0;
    for (int e = 0; e < c.entries; e++) {
      maxFreq = Math.max(maxFreq, c.count[e]);
    }
    int quant = Math.round(maxFreq * quantRate);
    if (quant < 2) {
      quant = maxFreq > 1 ? 2 : 1;
    }
    // The table size java.util.HashMap ends with after as many puts.
    int size = 16;
    while (c.entries > size / 4 * 3) {
      size *= 2;
    }
    // The kept tokens by descending sort key (the count, or for md5 the quantised count), then in
    // the map's order: bucket, first seen.
    int[] qcount = new int[c.entries];
    int[] key = new int[c.entries];
    int[] bucket = new int[c.entries];
    Integer[] kept = new Integer[c.entries];
    int k = 0;
    for (int e = 0; e < c.entries; e++) {
      qcount[e] = c.count[e] / quant * quant;
      if (qcount[e] >= quant) {
        key[e] = md5 ? qcount[e] : c.count[e];
        bucket[e] = (c.hash[e] ^ (c.hash[e] >>> 16)) & (size - 1);
        kept[k++] = e;
      }
    }
    Arrays.sort(kept, 0, k, (a, b) -> key[a] != key[b] ? Integer.compare(key[b], key[a])
        : bucket[a] != bucket[b] ? Integer.compare(bucket[a], bucket[b]) : Integer.compare(a, b));
    StringBuilder profile = new StringBuilder();
    StringBuilder textT = new StringBuilder();
    for (int i = 0; i < k; i++) {
      int e = kept[i];
      if (md5) {
        if (i > 0) {
          profile.append('\n');
        }
        profile.append(chars, c.start[e], c.length[e]).append(' ').append(qcount[e]);
      } else {
        if (i > 0) {
          profile.append(' ');
          textT.append(' ');
        }
        profile.append('(').append(chars, c.start[e], c.length[e]).append('-').append(qcount[e]).append(')');
        textT.append('(').append(chars, c.start[e], c.length[e]).append('-').append(c.count[e]).append('-')
            .append(qcount[e]).append(')');
      }
    }
    String p = profile.toString();
    long signature = md5 ? Signer.md5Long(p.getBytes(StandardCharsets.UTF_8)) : Signer.lookup3(p, 0);
    return new TextProfile(p, textT.toString(), k, signature);
  }

  static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no MD5", e);
    }
  }
}
