package org.solrdedup;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.common.util.Utils;

/**
 * The deciding settings the chain signs under: the core's settings record when it has one (the
 * worker's, a user property of the core's configuration named {@code
 * solr-dedup.settings.<collection>.<md5 of the empty filter>}), else the processor's own
 * arguments. Solr reloads the core when the record changes, so the chain follows it.
 */
final class Settings {
  /** {@code yacy} or {@code md5}. */
  String scheme = "yacy";
  int minTokenLen = -1;
  float quantRate = Float.NaN;
  static final List<String> ALL_DIMENSIONS = List.of("exact", "fuzzy", "title", "description", "www", "http", "near");
  List<String> dimensions = new ArrayList<>(ALL_DIMENSIONS);
  int[] near = {2, 14, 6, 2};
  /** {@code global} or {@code host}. */
  String scope = "global";
  /** {@code yacy}, {@code in-place} or {@code auto} (the in-place fields where the schema has them). */
  String profile = "auto";
  /** A chrome model's source, when near is decided under one (the plugin does not sign then). */
  String chrome;
  /** Where the settings came from, for the log. */
  String source = "the processor's arguments";

  /** The record's user property for a core or collection. */
  static String recordName(String collection) {
    String empty = hex(TextProfile.md5().digest("".getBytes(StandardCharsets.UTF_8)));
    return "solr-dedup.settings." + collection + "." + empty;
  }

  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(String.format(Locale.ROOT, "%02x", b & 0xff));
    }
    return out.toString();
  }

  /** The processor's arguments ({@code scheme}, {@code minTokenLen}, ...). */
  static Settings fromArgs(NamedList<?> args) {
    Settings s = new Settings();
    Object v;
    if ((v = args.get("scheme")) != null) {
      s.scheme = v.toString();
    }
    if ((v = args.get("minTokenLen")) != null) {
      s.minTokenLen = Integer.parseInt(v.toString());
    }
    if ((v = args.get("quantRate")) != null) {
      s.quantRate = Float.parseFloat(v.toString());
    }
    if ((v = args.get("dimensions")) != null) {
      s.dimensions = new ArrayList<>();
      // A comma-separated string, or an <arr> of them.
      for (Object item : v instanceof Collection ? (Collection<?>) v : List.of(v)) {
        for (String d : item.toString().split(",")) {
          if (!d.isBlank()) {
            s.dimensions.add(d.trim());
          }
        }
      }
      for (String d : s.dimensions) {
        if (!ALL_DIMENSIONS.contains(d)) {
          throw bad("unknown dimension " + d + " (known: " + ALL_DIMENSIONS + ")");
        }
      }
    }
    String[] near = {"nearShingle", "nearHashes", "nearTrials", "nearAgree"};
    for (int i = 0; i < near.length; i++) {
      if ((v = args.get(near[i])) != null) {
        s.near[i] = Integer.parseInt(v.toString());
      }
    }
    if ((v = args.get("scope")) != null) {
      s.scope = v.toString();
    }
    if ((v = args.get("profile")) != null) {
      s.profile = v.toString();
    }
    return s.checked();
  }

  /** A settings record's JSON, as the worker writes it. */
  @SuppressWarnings("unchecked")
  static Settings fromRecord(String json) {
    Map<String, Object> r = (Map<String, Object>) Utils.fromJSONString(json);
    Object format = r.get("format");
    if (!(format instanceof Number) || ((Number) format).intValue() != 1) {
      throw bad("the core's settings record is of format " + format + "; this plugin reads format 1 (upgrade it with the worker)");
    }
    Settings s = new Settings();
    s.source = "the core's settings record";
    s.scheme = String.valueOf(r.get("scheme"));
    s.minTokenLen = ((Number) r.get("min_token_len")).intValue();
    s.quantRate = ((Number) r.get("quant_rate")).floatValue();
    s.dimensions = new ArrayList<>();
    for (Object d : (List<Object>) r.get("dimensions")) {
      s.dimensions.add(d.toString());
    }
    List<Object> near = (List<Object>) r.get("near");
    for (int i = 0; i < 4; i++) {
      s.near[i] = ((Number) near.get(i)).intValue();
    }
    s.scope = String.valueOf(r.get("scope"));
    Object chrome = r.get("chrome");
    s.chrome = chrome == null ? null : chrome.toString();
    Object profile = r.get("profile");
    s.profile = profile == null ? "yacy" : profile.toString();
    // The record names the profile the worker resolved: it overrides the argument.
    return s.checked();
  }

  private Settings checked() {
    if (!scheme.equals("yacy") && !scheme.equals("md5")) {
      throw bad("scheme must be yacy or md5, got " + scheme);
    }
    boolean md5 = scheme.equals("md5");
    if (minTokenLen < 0) {
      minTokenLen = md5 ? 2 : 3;
    }
    if (Float.isNaN(quantRate)) {
      quantRate = md5 ? 0.01f : 0.5f;
    }
    if (!profile.equals("yacy") && !profile.equals("in-place") && !profile.equals("auto")) {
      throw bad("profile must be yacy, in-place or auto, got " + profile);
    }
    if (!scope.equals("global") && !scope.equals("host")) {
      throw bad("scope must be global or host, got " + scope);
    }
    // A record made without near holds zeros for its parameters: checked only where near is signed.
    if (on("near")) {
      try {
        new Near(near[0], near[1], near[2], near[3]);
      } catch (IllegalArgumentException e) {
        throw bad("near: " + e.getMessage());
      }
    }
    return this;
  }

  private static SolrException bad(String why) {
    return new SolrException(SolrException.ErrorCode.SERVER_ERROR, "solr-dedup: " + why);
  }

  boolean on(String dimension) {
    return dimensions.contains(dimension);
  }

  @Override
  public String toString() {
    return "scheme " + scheme + " (min token length " + minTokenLen + ", quant rate " + quantRate
        + "), dimensions " + dimensions + ", near " + Arrays.toString(near) + ", scope " + scope
        + ", profile " + profile + (chrome == null ? "" : ", chrome model " + chrome) + ", from " + source;
  }
}
