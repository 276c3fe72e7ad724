package org.solrdedup;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The text profile behind {@code fuzzy_signature_l} (signatures.md, section 3): YaCy's and Solr's
 * {@code TextProfileSignature}, tokenised by Java 17's tables, ties broken by a real {@code
 * java.util.HashMap}'s iteration order as theirs are.
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

  private static final class Token {
    final String value;
    int count;
    int qcount;

    Token(String value) {
      this.value = value;
    }
  }

  static TextProfile of(String text, boolean md5, int minTokenLen, float quantRate) {
    Tables t = Tables.get();
    Map<String, Token> tokens = new HashMap<>();
    StringBuilder current = new StringBuilder();
    int maxFreq = 0;
    for (int i = 0; i <= text.length(); i++) {
      char c = i < text.length() ? text.charAt(i) : ' ';
      if (i < text.length() && t.isLetterOrDigit(c)) {
        current.append(t.toLowerCase(c));
        continue;
      }
      if (current.length() > minTokenLen) {
        String value = current.toString();
        // get and put, as YaCy and Solr do: computeIfAbsent would grow the table one insertion
        // later, and the table's size decides the order of ties.
        Token token = tokens.get(value);
        if (token == null) {
          token = new Token(value);
          tokens.put(value, token);
        }
        token.count++;
        maxFreq = Math.max(maxFreq, token.count);
      }
      current.setLength(0);
    }
    int quant = Math.round(maxFreq * quantRate);
    if (quant < 2) {
      quant = maxFreq > 1 ? 2 : 1;
    }
    List<Token> kept = new ArrayList<>();
    for (Token token : tokens.values()) {
      token.qcount = (token.count / quant) * quant;
      if (token.qcount >= quant) {
        kept.add(token);
      }
    }
    // Stable (List.sort is a merge sort): ties keep the HashMap's order.
    if (md5) {
      kept.sort((a, b) -> Integer.compare(b.qcount, a.qcount));
    } else {
      kept.sort((a, b) -> Integer.compare(b.count, a.count));
    }
    StringBuilder profile = new StringBuilder();
    StringBuilder textT = new StringBuilder();
    for (Token token : kept) {
      if (md5) {
        if (profile.length() > 0) {
          profile.append('\n');
        }
        profile.append(token.value).append(' ').append(token.qcount);
      } else {
        if (profile.length() > 0) {
          profile.append(' ');
          textT.append(' ');
        }
        profile.append('(').append(token.value).append('-').append(token.qcount).append(')');
        textT.append('(').append(token.value).append('-').append(token.count).append('-').append(token.qcount).append(')');
      }
    }
    String p = profile.toString();
    long signature = md5 ? Signer.md5Long(p.getBytes(StandardCharsets.UTF_8)) : Signer.lookup3(p, 0);
    return new TextProfile(p, textT.toString(), kept.size(), signature);
  }

  static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no MD5", e);
    }
  }
}
