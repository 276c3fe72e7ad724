package org.solrdedup;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.util.Utils;
import org.apache.solr.update.processor.Lookup3Signature;
import org.apache.solr.update.processor.TextProfileSignature;
import org.junit.Test;

/**
 * The plugin against the worker (the reference), value by value: XXH3 for every length from 0 to
 * 1,100 bytes under five seeds, and for 940 texts every signature under both schemes and the near
 * values under two parameter sets ({@code src/test/resources/worker-vectors.jsonl}, written by the
 * worker's {@code examples/plugin_vectors.rs}); and against Solr's own classes.
 */
public class WorkerVectorsTest {
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> lines(Path path) throws IOException {
    List<Map<String, Object>> out = new ArrayList<>();
    for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
      out.add((Map<String, Object>) Utils.fromJSONString(line));
    }
    return out;
  }

  static List<Map<String, Object>> vectors() throws IOException {
    return lines(Paths.get("src/test/resources/worker-vectors.jsonl"));
  }

  static long l(Object v) {
    return ((Number) v).longValue();
  }

  @SuppressWarnings("unchecked")
  static List<String> strings(Object v) {
    return (List<String>) v;
  }

  static long[] longs(Object v) {
    @SuppressWarnings("unchecked")
    List<Object> list = (List<Object>) v;
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = l(list.get(i));
    }
    return out;
  }

  @Test
  public void xxh3IsTheWorkers() throws IOException {
    byte[] input = new byte[1100];
    for (int i = 0; i < input.length; i++) {
      input[i] = (byte) ((i * 131 + 7) % 251);
    }
    int checked = 0;
    for (Map<String, Object> v : vectors()) {
      if (v.containsKey("xxh3")) {
        int len = (int) l(v.get("xxh3"));
        assertEquals("length " + len + " seed " + v.get("seed"), l(v.get("value")), Xxh3.hash(input, len, l(v.get("seed"))));
        checked++;
      }
    }
    assertEquals(5 * 1101, checked);
  }

  @Test
  public void signaturesAreTheWorkers() throws IOException {
    Signer yacy = new Signer(false, 3, 0.5f);
    Signer md5 = new Signer(true, 2, 0.01f);
    int checked = 0;
    for (Map<String, Object> v : vectors()) {
      if (!v.containsKey("text")) {
        continue;
      }
      String text = (String) v.get("text");
      String at = "text " + checked + ": " + text.substring(0, Math.min(60, text.length()));
      assertEquals(at, l(v.get("exact_yacy")), yacy.exact(text));
      assertEquals(at, l(v.get("exact_md5")), md5.exact(text));
      TextProfile py = yacy.profile(text);
      assertEquals(at, l(v.get("fuzzy_yacy")), py.signature);
      assertEquals(at, v.get("text_t"), py.textT);
      assertEquals(at, l(v.get("words_yacy")), py.words);
      TextProfile pm = md5.profile(text);
      assertEquals(at, l(v.get("fuzzy_md5")), pm.signature);
      assertEquals(at, l(v.get("words_md5")), pm.words);
      List<String> titles = strings(v.get("titles"));
      if (titles.isEmpty()) {
        assertNull(v.get("title_yacy"));
      } else {
        assertEquals(at, l(v.get("title_yacy")), yacy.exact(titles.get(0)));
        assertEquals(at, l(v.get("title_md5")), md5.exact(titles.get(0)));
      }
      List<String> descriptions = strings(v.get("descriptions"));
      if (descriptions.isEmpty()) {
        assertNull(v.get("description_yacy"));
      } else {
        assertEquals(at, l(v.get("description_yacy")), yacy.description(descriptions));
        assertEquals(at, l(v.get("description_md5")), md5.description(descriptions));
      }
      checked++;
    }
    assertEquals(940, checked);
  }

  @SuppressWarnings("unchecked")
  @Test
  public void nearValuesAreTheWorkers() throws IOException {
    Near standard = new Near(2, 14, 6, 2);
    Near other = new Near(3, 10, 5, 3);
    assertEquals("near1-n2-h14-t6-a2", standard.version());
    int checked = 0;
    for (Map<String, Object> v : vectors()) {
      if (!v.containsKey("text")) {
        continue;
      }
      String text = (String) v.get("text");
      String at = "text " + checked + ": " + text.substring(0, Math.min(60, text.length()));
      if (v.get("tokens") != null) {
        assertEquals(at, v.get("tokens"), Near.tokens(text));
      }
      assertEquals(at, v.get("blank"), Tables.get().isBlank(text));
      Object[][] cases = {{standard, v.get("near")}, {other, v.get("near_other")}};
      for (Object[] c : cases) {
        Near.Signature sig = ((Near) c[0]).sign(text);
        Map<String, Object> want = (Map<String, Object>) c[1];
        if (want == null) {
          assertNull(at, sig);
        } else {
          assertArrayEquals(at, longs(want.get("trials")), sig.trials);
          assertArrayEquals(at, longs(want.get("keys")), sig.keys);
        }
      }
      checked++;
    }
    assertEquals(940, checked);
  }

  /** Whether Java's own classes of this JVM agree with the tables on every unit of a text. */
  static boolean jvmAgrees(String text) {
    Tables t = Tables.get();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isLetterOrDigit(c) != t.isLetterOrDigit(c) || Character.toLowerCase(c) != t.toLowerCase(c)) {
        return false;
      }
    }
    return true;
  }

  static long head(byte[] bytes) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (bytes[i] & 0xff);
    }
    return v;
  }

  /**
   * Solr's {@code TextProfileSignature} (the md5 scheme's profile) and {@code Lookup3Signature}
   * (the yacy scheme's exact value) give the plugin's values. Those classes tokenise with the
   * running JVM's {@code Character}, so a text with a character this JVM classes otherwise than
   * Java 17 is left out (none on Java 17).
   */
  @Test
  public void solrsOwnClassesAgree() throws IOException {
    Signer yacy = new Signer(false, 3, 0.5f);
    Signer md5 = new Signer(true, 2, 0.01f);
    int checked = 0;
    int skipped = 0;
    for (Map<String, Object> v : vectors()) {
      if (!v.containsKey("text")) {
        continue;
      }
      String text = (String) v.get("text");
      if (!jvmAgrees(text)) {
        skipped++;
        continue;
      }
      TextProfileSignature profile = new TextProfileSignature();
      ModifiableSolrParams params = new ModifiableSolrParams();
      params.set("minTokenLen", 2);
      params.set("quantRate", "0.01");
      profile.init(params);
      profile.add(text);
      assertEquals(text, head(profile.getSignature()), md5.profile(text).signature);
      Lookup3Signature lookup3 = new Lookup3Signature();
      lookup3.add(text);
      assertEquals(text, head(lookup3.getSignature()), yacy.exact(text));
      checked++;
    }
    if (Runtime.version().feature() == 17) {
      assertEquals("Java 17 is the tables' version: no text is left out", 0, skipped);
    }
    assertTrue(checked > 800);
  }

  /** On Java 17, the checked-in tables are its {@code Character} methods, unit by unit. */
  @Test
  public void javaTablesAreJava17s() {
    if (Runtime.version().feature() != 17) {
      return;
    }
    Tables t = Tables.get();
    for (int c = 0; c < 65536; c++) {
      assertEquals(Integer.toHexString(c), Character.isLetterOrDigit((char) c), t.isLetterOrDigit((char) c));
      assertEquals(Integer.toHexString(c), Character.toLowerCase((char) c), t.toLowerCase((char) c));
    }
  }

  /** The vectors of signatures.md, by hand. */
  @Test
  public void specVectors() {
    Signer yacy = new Signer(false, 3, 0.5f);
    assertEquals(-2401053093171183889L, yacy.exact(""));
    assertEquals(-6533976092579615214L, yacy.exact("hello world"));
    assertEquals(4742056712392629552L, yacy.exact("Grüße aus Köln"));
    assertEquals(1388799410959769494L, yacy.exact("😀 emoji"));
    assertEquals(-6252947182592522076L, yacy.description(List.of("first description", "second description")));
    TextProfile lorem = yacy.profile("Lorem ipsum dolor sit amet, lorem ipsum dolor sit amet. Lorem ipsum! Dolor dolor dolor, amet amet.");
    assertEquals("(dolor-3) (amet-3) (lorem-3) (ipsum-3)", lorem.profile);
    assertEquals(895551812756359877L, lorem.signature);
    assertEquals("(dolor-5-3) (amet-4-3) (lorem-3-3) (ipsum-3-3)", lorem.textT);
    TextProfile apple = yacy.profile("Apple banana apple cherry banana apple. APPLE Banana cherry! date date date date elderberry");
    assertEquals("(date-4) (apple-4) (banana-2) (cherry-2)", apple.profile);
    Signer md5 = new Signer(true, 2, 0.01f);
    TextProfile cat = md5.profile("The cat sat on the mat. The cat ate the rat. The dog chased the cat; the cat ran away from the dog.");
    assertEquals("the 8\ncat 4\ndog 2", cat.profile);
    assertEquals(0x9f84dda4092864e7L, cat.signature);
  }

  /** The final-sigma rule and the expanding lower case, by hand. */
  @Test
  public void nearLowercase() {
    Tables t = Tables.get();
    assertEquals("οδος", t.nearLowercase("ΟΔΟΣ"));
    assertEquals("σα", t.nearLowercase("ΣΑ"));
    assertEquals("σ", t.nearLowercase("Σ"));
    assertEquals("i\u0307", t.nearLowercase("İ"));
    assertEquals(List.of("hello", "world", "42x", "straße", "i\u0307日本"), Near.tokens("Hello, WORLD! 42x ½ Ⅻ straße İ日本"));
  }
}
