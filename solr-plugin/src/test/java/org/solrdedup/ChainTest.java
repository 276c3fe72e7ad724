package org.solrdedup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.solr.SolrTestCaseJ4;
import org.apache.solr.common.util.Utils;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The processor in a real core made from the plugin's configset ({@code conf/}), on the Solr
 * version the build compiles against (9.10.1, or 9.3.0 with {@code -Dsolr.version=9.3.0}): pages
 * indexed through the default chain carry the worker's values, and a partial update that sets the
 * text takes the text's signatures away.
 */
public class ChainTest extends SolrTestCaseJ4 {
  @BeforeClass
  public static void core() throws Exception {
    Path home = createTempDir("solr-dedup-home");
    Path conf = home.resolve("collection1/conf");
    Files.createDirectories(conf);
    try (Stream<Path> files = Files.list(Paths.get("conf"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, conf.resolve(f.getFileName().toString()));
      }
    }
    // The configset's native lock on a directory on disk, as a deployed core has it.
    System.setProperty("solr.directoryFactory", "solr.NRTCachingDirectoryFactory");
    initCore("solrconfig.xml", "managed-schema.xml", home.toString());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> stored(String id) throws Exception {
    String json = h.query(req("q", "id:" + id, "fl", "*", "wt", "json"));
    Map<String, Object> answer = (Map<String, Object>) Utils.fromJSONString(json);
    List<Map<String, Object>> docs = (List<Map<String, Object>>) ((Map<String, Object>) answer.get("response")).get("docs");
    assertEquals(id, 1, docs.size());
    return docs.get(0);
  }

  private static long value(Map<String, Object> doc, String field) {
    return ((Number) doc.get(field)).longValue();
  }

  @SuppressWarnings("unchecked")
  private static long[] longs(Object v) {
    List<Object> list = (List<Object>) v;
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ((Number) list.get(i)).longValue();
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  @Test
  public void pagesCarryTheWorkersValues() throws Exception {
    int checked = 0;
    int n = 0;
    for (Map<String, Object> v : WorkerVectorsTest.vectors()) {
      if (!v.containsKey("text") || n >= 120) {
        continue;
      }
      String id = "page-" + n++;
      String text = (String) v.get("text");
      List<String> titles = (List<String>) v.get("titles");
      List<String> descriptions = (List<String>) v.get("descriptions");
      StringBuilder xml = new StringBuilder("<add><doc>");
      xml.append(field("id", id)).append(field("text_t", text));
      for (String t : titles) {
        xml.append(field("title", t));
      }
      for (String d : descriptions) {
        xml.append(field("description_txt", d));
      }
      assertU(xml.append("</doc></add>").toString());
      assertU(commit());
      Map<String, Object> doc = stored(id);
      assertEquals(id, value(v, "exact_yacy"), value(doc, "exact_signature_l"));
      assertEquals(id, value(v, "fuzzy_yacy"), value(doc, "fuzzy_signature_l"));
      assertEquals(id, value(v, "words_yacy"), value(doc, "fuzzy_signature_words_i"));
      String textT = (String) v.get("text_t");
      assertEquals(id, textT.isEmpty() ? null : textT, doc.get("fuzzy_signature_text_t"));
      if (v.get("title_yacy") != null && !titles.get(0).isEmpty()) {
        assertEquals(id, value(v, "title_yacy"), value(doc, "title_exact_signature_l"));
      }
      boolean anyDescription = descriptions.stream().anyMatch(d -> !d.isEmpty());
      if (anyDescription) {
        assertEquals(id, value(v, "description_yacy"), value(doc, "description_exact_signature_l"));
      } else {
        assertNull(id, doc.get("description_exact_signature_l"));
      }
      Map<String, Object> near = (Map<String, Object>) v.get("near");
      if (near == null) {
        assertNull(id, doc.get("near_keys_ls"));
        assertTrue(id, ((String) doc.get("near_version_s")).startsWith("near1-n2-h14-t6-a2 no-words"));
      } else {
        assertArrayEquals(id, longs(near.get("trials")), longs(doc.get("near_trials_ls")));
        assertArrayEquals(id, longs(near.get("keys")), longs(doc.get("near_keys_ls")));
        assertEquals(id, "near1-n2-h14-t6-a2", doc.get("near_version_s"));
      }
      checked++;
    }
    assertEquals(120, checked);
  }

  @Test
  public void aPartialUpdateOfTheTextTakesItsSignaturesAway() throws Exception {
    assertU(adoc("id", "partial", "text_t", "Some words to sign, then replaced.", "title", "A title"));
    assertU(commit());
    Map<String, Object> before = stored("partial");
    assertNotNull(before.get("exact_signature_l"));
    assertNotNull(before.get("near_keys_ls"));
    String update = "[{\"id\":\"partial\",\"text_t\":{\"set\":\"Other words.\"}}]";
    updateJ(update, null);
    assertU(commit());
    Map<String, Object> after = stored("partial");
    assertNull(after.get("exact_signature_l"));
    assertNull(after.get("fuzzy_signature_l"));
    assertNull(after.get("near_keys_ls"));
    // The title did not change: its signature stays.
    assertEquals(before.get("title_exact_signature_l"), after.get("title_exact_signature_l"));
    // A partial update of another field passes untouched.
    updateJ("[{\"id\":\"partial\",\"title\":{\"set\":\"A title\"},\"test_s\":{\"set\":\"x\"}}]", null);
    assertU(commit());
    assertNull(stored("partial").get("title_exact_signature_l"));
  }

  private static String field(String name, String value) {
    return "<field name=\"" + name + "\">" + escape(value) + "</field>";
  }

  private static String escape(String s) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<': out.append("&lt;"); break;
        case '>': out.append("&gt;"); break;
        case '&': out.append("&amp;"); break;
        case '"': out.append("&quot;"); break;
        default:
          // XML 1.0 has no place for most control characters.
          if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            out.append(' ');
          } else {
            out.append(c);
          }
      }
    }
    return out.toString();
  }
}
