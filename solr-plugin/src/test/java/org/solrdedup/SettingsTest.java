package org.solrdedup;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.List;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.util.NamedList;
import org.junit.Test;

/** What the processor signs under: the worker's settings records, and its own arguments. */
public class SettingsTest {
  /** A record as the worker writes it (commands/common/settings.rs, `Deciding`), near not decided. */
  private static final String WITHOUT_NEAR =
      "{\"format\":1,\"scheme\":\"md5\",\"min_token_len\":2,\"quant_rate\":0.01,"
          + "\"dimensions\":[\"exact\",\"fuzzy\",\"title\"],\"scope\":\"global\",\"prefer\":\"yacy\","
          + "\"prefer_https\":true,\"prefer_www\":true,\"fuzzy_min_words\":3,\"near\":[0,0,0,0],"
          + "\"rules\":null,\"chrome\":null,\"fields\":\"0123456789abcdef0123456789abcdef\"}";

  @Test
  public void aRecordWithoutNearLoads() {
    Settings s = Settings.fromRecord(WITHOUT_NEAR);
    assertEquals("md5", s.scheme);
    assertEquals(2, s.minTokenLen);
    assertEquals(0.01f, s.quantRate, 0f);
    assertFalse(s.on("near"));
    assertTrue(s.on("title"));
    // No profile in a record made before profiles: YaCy's.
    assertEquals("yacy", s.profile);
  }

  @Test
  public void aRecordWithNearAndTheInPlaceProfile() {
    Settings s = Settings.fromRecord(WITHOUT_NEAR
        .replace("\"near\":[0,0,0,0]", "\"near\":[3,10,5,3]")
        .replace("\"title\"]", "\"title\",\"near\"]")
        .replace("\"fields\"", "\"profile\":\"in-place\",\"fields\""));
    assertTrue(s.on("near"));
    assertArrayEquals(new int[] {3, 10, 5, 3}, s.near);
    assertEquals("in-place", s.profile);
  }

  @Test
  public void aRecordOfAnotherFormatIsRefused() {
    try {
      Settings.fromRecord(WITHOUT_NEAR.replace("\"format\":1", "\"format\":2"));
      fail("format 2 read");
    } catch (SolrException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("format 2"));
    }
  }

  @Test
  public void argumentsTakeTheSchemesDefaultsAndListsOfDimensions() {
    NamedList<Object> args = new NamedList<>();
    args.add("scheme", "md5");
    args.add("dimensions", List.of("exact, fuzzy", "near"));
    Settings s = Settings.fromArgs(args);
    assertEquals(2, s.minTokenLen);
    assertEquals(0.01f, s.quantRate, 0f);
    assertEquals(List.of("exact", "fuzzy", "near"), s.dimensions);
    NamedList<Object> bad = new NamedList<>();
    bad.add("dimensions", "exact,nearr");
    try {
      Settings.fromArgs(bad);
      fail("an unknown dimension taken");
    } catch (SolrException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("unknown dimension nearr"));
    }
  }

  @Test
  public void theRecordIsNamedAsTheWorkerNamesIt() {
    // md5 of the empty filter.
    assertEquals("solr-dedup.settings.collection1.d41d8cd98f00b204e9800998ecf8427e",
        Settings.recordName("collection1"));
  }
}
