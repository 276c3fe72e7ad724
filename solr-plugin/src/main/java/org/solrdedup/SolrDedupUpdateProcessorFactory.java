package org.solrdedup;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.core.SolrCore;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.schema.IndexSchema;
import org.apache.solr.update.AddUpdateCommand;
import org.apache.solr.update.processor.AtomicUpdateDocumentMerger;
import org.apache.solr.update.processor.UpdateRequestProcessor;
import org.apache.solr.update.processor.UpdateRequestProcessorFactory;
import org.apache.solr.util.plugin.SolrCoreAware;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Signs every page as it is indexed, exactly as the solr-dedup worker would: the exact, fuzzy,
 * title and description signatures, the fuzzy profile's word count and text, and the near-duplicate
 * trials, keys and version. Pages signed here are new to the worker, not decided: it finds them as
 * any change and decides their groups without reading their text.
 *
 * <p>Place it before {@code DistributedUpdateProcessorFactory} (Solr then runs it once, on the node
 * that receives the page, and replicas receive the signed page). Settings: the core's settings
 * record when there is one (see {@link Settings}), else the arguments {@code scheme}, {@code
 * minTokenLen}, {@code quantRate}, {@code dimensions}, {@code nearShingle}, {@code nearHashes},
 * {@code nearTrials}, {@code nearAgree}, {@code scope} and {@code profile}; field names are
 * YaCy's, each renamed by an argument {@code field.<YaCy's name>}.
 *
 * <p>A partial (atomic) document passes untouched unless it sets a signed source field (text,
 * title or description): then the signatures that field decides are removed with it, so that no
 * signature outlives its text, and the worker signs the page again.
 */
public class SolrDedupUpdateProcessorFactory extends UpdateRequestProcessorFactory implements SolrCoreAware {
  private static final Logger log = LoggerFactory.getLogger(MethodHandles.lookup().lookupClass());

  /** The in-place profile's fields by YaCy's names (the worker's IN_PLACE_NAMES). */
  static final String[][] IN_PLACE_NAMES = {
    {"exact_signature_unique_b", "exact_signature_unique_i"},
    {"fuzzy_signature_unique_b", "fuzzy_signature_unique_i"},
    {"title_unique_b", "title_unique_i"},
    {"description_unique_b", "description_unique_i"},
    {"www_unique_b", "www_unique_i"},
    {"http_unique_b", "http_unique_i"},
    {"near_unique_b", "near_unique_i"},
    {"exact_signature_copycount_i", "exact_signature_copies_i"},
    {"fuzzy_signature_copycount_i", "fuzzy_signature_copies_i"},
    {"near_copycount_i", "near_copies_i"},
    {"near_group_s", "near_group_l"},
  };

  /** The fields the text decides, by YaCy's names. */
  static final List<String> TEXT_SIGNED = List.of("exact_signature_l", "fuzzy_signature_l",
      "fuzzy_signature_words_i", "fuzzy_signature_text_t", "near_trials_ls", "near_keys_ls", "near_version_s");

  private NamedList<?> args = new NamedList<>();
  private final Map<String, String> renamed = new HashMap<>();
  private volatile Signing signing;

  @Override
  public void init(NamedList<?> args) {
    this.args = args;
    for (Map.Entry<String, ?> e : args) {
      if (e.getKey().startsWith("field.")) {
        renamed.put(e.getKey().substring("field.".length()), e.getValue().toString());
      }
    }
    // Fails the core's load on bad arguments, with the reason.
    Settings.fromArgs(args);
  }

  @Override
  public void inform(SolrCore core) {
    Settings settings = Settings.fromArgs(args);
    String collection = core.getCoreDescriptor().getCollectionName();
    if (collection == null) {
      collection = core.getName();
    }
    Object record = core.getSolrConfig().getOverlay().getUserProps().get(Settings.recordName(collection));
    if (record != null) {
      settings = Settings.fromRecord(record.toString());
    }
    signing = new Signing(settings, core.getLatestSchema(), this::field);
    log.info("solr-dedup signs pages of {} under {}", collection, settings);
    if (settings.chrome != null && settings.on("near")) {
      log.warn("solr-dedup: near-duplicates are decided under a chrome model ({}), which the plugin does not apply: it leaves the near values to the worker", settings.chrome);
    }
  }

  /** A field's name, by YaCy's name. */
  String field(String yacyName) {
    return renamed.getOrDefault(yacyName, yacyName);
  }

  /** What the chain signs under (for tests). */
  Signing signing() {
    return signing;
  }

  @Override
  public UpdateRequestProcessor getInstance(SolrQueryRequest req, SolrQueryResponse rsp, UpdateRequestProcessor next) {
    Signing s = signing;
    return new UpdateRequestProcessor(next) {
      @Override
      public void processAdd(AddUpdateCommand cmd) throws IOException {
        if (AtomicUpdateDocumentMerger.isAtomicUpdate(cmd)) {
          s.unsignPartial(cmd.getSolrInputDocument());
        } else {
          s.sign(cmd.getSolrInputDocument());
        }
        super.processAdd(cmd);
      }
    };
  }

  /** Signing under fixed settings and a schema. */
  static final class Signing {
    final Settings settings;
    private final Signer signer;
    private final Near near;
    private final IndexSchema schema;
    private final java.util.function.Function<String, String> names;
    private final boolean inPlace;
    /** A copyField fills the text field, after the chain has run. */
    private final boolean textCopied;

    Signing(Settings settings, IndexSchema schema, java.util.function.Function<String, String> names) {
      this.settings = settings;
      this.schema = schema;
      this.names = names;
      this.signer = new Signer(settings.scheme.equals("md5"), settings.minTokenLen, settings.quantRate);
      this.near = settings.on("near")
          ? new Near(settings.near[0], settings.near[1], settings.near[2], settings.near[3])
          : null;
      boolean inPlace = settings.profile.equals("in-place");
      if (settings.profile.equals("auto")) {
        inPlace = schema != null && schema.getFieldOrNull(inPlaceName(IN_PLACE_NAMES[0])) != null;
      }
      this.inPlace = inPlace;
      this.textCopied = schema != null && !schema.getCopySources(f("text_t")).isEmpty();
    }

    private String f(String yacyName) {
      return names.apply(yacyName);
    }

    /**
     * An in-place field's name: the in-place profile's, unless its role was renamed (by YaCy's
     * name, as the worker's --field renames it; a renamed role keeps its name in every profile).
     */
    private String inPlaceName(String[] pair) {
      String renamed = names.apply(pair[0]);
      return renamed.equals(pair[0]) ? pair[1] : renamed;
    }

    /** Whether the schema has the field (by YaCy's name), explicitly or by a dynamic rule. */
    private boolean has(String yacyName) {
      return schema != null && schema.getFieldOrNull(f(yacyName)) != null;
    }

    private void put(SolrInputDocument doc, String yacyName, Object value) {
      if (has(yacyName)) {
        doc.setField(f(yacyName), value);
      }
    }

    private static String first(SolrInputDocument doc, String field) {
      Object v = doc.getFieldValue(field);
      return v == null ? null : v.toString();
    }

    private static List<String> all(SolrInputDocument doc, String field) {
      List<String> out = new ArrayList<>();
      Collection<Object> values = doc.getFieldValues(field);
      if (values != null) {
        for (Object v : values) {
          out.add(v.toString());
        }
      }
      return out;
    }

    /** Signs a whole document, replacing whatever signatures it carries. */
    void sign(SolrInputDocument doc) {
      String text = first(doc, f("text_t"));
      if (text == null && !textCopied) {
        // No text: signed as the worker signs it, as an empty one.
        text = "";
      }
      if (text == null) {
        // A copyField fills the text after the chain: what the text decides is left to the
        // worker, which signs the page from the text the index holds.
        for (String name : TEXT_SIGNED) {
          doc.removeField(f(name));
        }
      }
      if (text != null && (settings.on("exact") || settings.on("fuzzy"))) {
        put(doc, "exact_signature_l", signer.exact(text));
        TextProfile profile = signer.profile(text);
        put(doc, "fuzzy_signature_l", profile.signature);
        put(doc, "fuzzy_signature_words_i", profile.words);
        doc.removeField(f("fuzzy_signature_text_t"));
        if (!signer.md5 && !profile.textT.isEmpty()) {
          put(doc, "fuzzy_signature_text_t", profile.textT);
        }
      }
      if (settings.on("title")) {
        doc.removeField(f("title_exact_signature_l"));
        List<String> titles = all(doc, f("title"));
        if (!titles.isEmpty() && !titles.get(0).isEmpty()) {
          put(doc, "title_exact_signature_l", signer.exact(titles.get(0)));
        }
      }
      if (settings.on("description")) {
        doc.removeField(f("description_exact_signature_l"));
        List<String> values = all(doc, f("description_txt"));
        if (values.stream().anyMatch(v -> !v.isEmpty())) {
          put(doc, "description_exact_signature_l", signer.description(values));
        }
      }
      if (text != null && near != null && settings.chrome == null) {
        signNear(doc, text);
      }
      if (inPlace) {
        // The in-place fields' first values, which say "not decided yet" to the worker (a flag
        // of -1, a count of 0, no near group): its first write of them is then in place, since
        // Solr updates a docValues field in place only where the index already has it.
        for (String[] pair : IN_PLACE_NAMES) {
          String field = inPlaceName(pair);
          if (schema.getFieldOrNull(field) != null) {
            doc.setField(field, pair[1].endsWith("_unique_i") ? -1 : pair[1].endsWith("_copies_i") ? 0 : 0L);
          }
        }
      }
    }

    private void signNear(SolrInputDocument doc, String text) {
      Near.Signature sig = near.sign(text);
      StringBuilder version = new StringBuilder(near.version());
      if (settings.scope.equals("host")) {
        version.append(" host");
      }
      doc.removeField(f("near_trials_ls"));
      doc.removeField(f("near_keys_ls"));
      if (sig == null) {
        version.append(" no-words");
        if (Tables.get().isBlank(text)) {
          version.append(" blank");
        }
      } else {
        put(doc, "near_trials_ls", longs(sig.trials));
        put(doc, "near_keys_ls", longs(sig.keys));
      }
      put(doc, "near_version_s", version.toString());
    }

    private static List<Long> longs(long[] values) {
      List<Long> out = new ArrayList<>(values.length);
      for (long v : values) {
        out.add(v);
      }
      return out;
    }

    /**
     * A partial document that sets a signed source field loses the signatures that field decides
     * (set to null with it), so that none outlives its text.
     */
    void unsignPartial(SolrInputDocument doc) {
      List<String> stale = new ArrayList<>();
      if (doc.containsKey(f("text_t"))) {
        stale.addAll(TEXT_SIGNED);
      }
      if (doc.containsKey(f("title"))) {
        stale.add("title_exact_signature_l");
      }
      if (doc.containsKey(f("description_txt"))) {
        stale.add("description_exact_signature_l");
      }
      for (String name : stale) {
        if (has(name) && !doc.containsKey(f(name))) {
          Map<String, Object> unset = new HashMap<>();
          unset.put("set", null);
          doc.addField(f(name), unset);
        }
      }
    }
  }
}
