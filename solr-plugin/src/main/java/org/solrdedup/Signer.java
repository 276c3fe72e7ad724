package org.solrdedup;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import org.apache.solr.common.util.Hash;

/**
 * The content signatures of signatures.md under one scheme: lookup3ycs64 (Solr's own {@code
 * Hash.lookup3ycs64}, which YaCy's index holds) or MD5 folded to a long.
 */
final class Signer {
  final boolean md5;
  final int minTokenLen;
  final float quantRate;

  Signer(boolean md5, int minTokenLen, float quantRate) {
    this.md5 = md5;
    this.minTokenLen = minTokenLen;
    this.quantRate = quantRate;
  }

  /** lookup3ycs64 of a string with an initial value. */
  static long lookup3(String s, long initval) {
    return Hash.lookup3ycs64(s, 0, s.length(), initval);
  }

  /** The first 8 bytes of MD5(bytes), big-endian, signed. */
  static long md5Long(byte[] bytes) {
    return head(TextProfile.md5().digest(bytes));
  }

  private static long head(byte[] digest) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (digest[i] & 0xff);
    }
    return v;
  }

  /** {@code exact_signature_l}. */
  long exact(String text) {
    return md5 ? md5Long(text.getBytes(StandardCharsets.UTF_8)) : lookup3(text, 0);
  }

  TextProfile profile(String text) {
    return TextProfile.of(text, md5, minTokenLen, quantRate);
  }

  /** {@code description_exact_signature_l} over all values, in order. */
  long description(List<String> values) {
    if (md5) {
      MessageDigest digest = TextProfile.md5();
      for (String v : values) {
        digest.update(v.getBytes(StandardCharsets.UTF_8));
      }
      return head(digest.digest());
    }
    long h = 0;
    for (String v : values) {
      h = lookup3(v, h);
    }
    return h;
  }
}
