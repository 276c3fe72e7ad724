use super::*;
use crate::solr_client::schema::fixtures::{field, yacy_like};
use crate::solr_client::schema::FieldInfo;

/// The six dimensions YaCy's schema has fields for.
fn six() -> EngineConfig {
    EngineConfig {
        dimensions: Dimension::ALL[..6].to_vec(),
        ..EngineConfig::default()
    }
}

#[test]
fn a_core_without_a_title_field_misses_it() {
    let s = yacy_like();
    let report = inspect(&s, &six());
    let missing: Vec<&str> = report.missing.iter().map(|n| n.name.as_str()).collect();
    // description_txt is covered by the *_txt rule.
    assert_eq!(missing, ["title"]);
    assert!(report.wrong_type.is_empty());
    assert!(report.lossy.is_empty(), "{:?}", report.lossy);
    assert!(report.has_fuzzy_text);
    // The crawler's own fields are not the worker's to add.
    let cmds = add_commands(&s, &report.missing_required());
    assert_eq!(cmds["add-field"], json!([]));
}

#[test]
fn the_word_count_field_is_needed_only_with_a_minimum() {
    // A core with the six dimensions' fields but nothing that holds fuzzy_signature_words_i.
    let mut s = yacy_like();
    s.dynamic.retain(|d| d.name != "*_i");
    s.fields.push(field("title", "text_general", true, false));
    for count in ["exact_signature_copycount_i", "fuzzy_signature_copycount_i"] {
        s.fields.push(field(count, "pint", true, true));
    }
    // The default minimum (4) needs it: the run stops, saying how to add it or do without.
    let mut cfg = six();
    assert_eq!(cfg.fuzzy_min_words, 4);
    let report = inspect(&s, &cfg);
    assert!(!report.has_fuzzy_words);
    let problems = report.problems("http://solr/core", false);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("missing output field fuzzy_signature_words_i")
            && problems[0].contains("schema apply --solr http://solr/core")
            && problems[0].contains("--fuzzy-min-words 0 (or --compat yacy)"),
        "{problems:?}"
    );
    let err = prepare(&s, &mut cfg, true, false, false, "http://solr/core").unwrap_err();
    assert!(
        format!("{err:?}").contains("--fuzzy-min-words 0"),
        "{err:?}"
    );
    // `schema apply` adds it, as a pint with docValues (the light scan reads it).
    let cmds = add_commands(&s, &report.missing_required());
    assert_eq!(
        cmds["add-field"],
        json!([{"name": "fuzzy_signature_words_i", "type": "pint", "indexed": true,
                "stored": true, "multiValued": false, "docValues": true}])
    );
    // Without a minimum (YaCy's semantics) the run goes on and leaves the field out.
    let mut cfg = EngineConfig {
        fuzzy_min_words: 0,
        ..six()
    };
    assert!(inspect(&s, &cfg)
        .problems("http://solr/core", false)
        .is_empty());
    prepare(&s, &mut cfg, true, false, false, "http://solr/core").unwrap();
    assert!(!cfg.write_fuzzy_words);
    // Where the core has it, it is written either way.
    let mut cfg = EngineConfig {
        fuzzy_min_words: 0,
        ..six()
    };
    prepare(&yacy_like_with_title(), &mut cfg, true, false, false, "u").unwrap();
    assert!(cfg.write_fuzzy_words);
}

fn yacy_like_with_title() -> SchemaInfo {
    let mut s = yacy_like();
    s.fields.push(field("title", "text_general", true, false));
    s
}

#[test]
fn missing_output_fields_are_added_with_the_right_types() {
    let mut s = yacy_like();
    s.dynamic.retain(|d| d.name != "*_b" && d.name != "*_l");
    let report = inspect(&s, &six());
    let cmds = add_commands(&s, &report.missing_required());
    let added: Vec<(&str, &str)> = cmds["add-field"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        added,
        [
            ("fuzzy_signature_l", "plong"),
            ("title_exact_signature_l", "plong"),
            ("description_exact_signature_l", "plong"),
            ("exact_signature_unique_b", "boolean"),
            ("fuzzy_signature_unique_b", "boolean"),
            ("title_unique_b", "boolean"),
            ("description_unique_b", "boolean"),
            ("www_unique_b", "boolean"),
            ("http_unique_b", "boolean"),
        ]
    );
    assert!(cmds["add-field"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["docValues"] == true && f["stored"] == true));
}

#[test]
fn the_near_fields_are_added_multi_valued_where_they_hold_several_longs() {
    let mut s = yacy_like();
    s.dynamic
        .retain(|d| !["*_b", "*_ls", "*_s", "*_i"].contains(&d.name.as_str()));
    s.fields.push(field("title", "text_general", true, false));
    let report = inspect(&s, &EngineConfig::default());
    let cmds = add_commands(&s, &report.missing_required());
    let near: Vec<(&str, bool)> = cmds["add-field"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"].as_str().unwrap().starts_with("near_"))
        .map(|f| {
            (
                f["name"].as_str().unwrap(),
                f["multiValued"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        near,
        [
            ("near_trials_ls", true),
            ("near_keys_ls", true),
            ("near_version_s", false),
            ("near_group_s", false),
            ("near_unique_b", false),
            ("near_copycount_i", false),
        ]
    );
}

#[test]
fn a_flag_with_the_wrong_type_is_reported() {
    let mut s = yacy_like();
    s.fields.push(field("www_unique_b", "pint", true, true));
    let report = inspect(&s, &EngineConfig::default());
    assert_eq!(report.wrong_type.len(), 1);
    assert_eq!(report.wrong_type[0].0.name, "www_unique_b");
}

#[test]
fn types_follow_the_schema_when_names_differ() {
    let mut s = yacy_like();
    s.types.remove("plong");
    s.types.insert("long".into(), "solr.TrieLongField".into());
    assert_eq!(type_for(&s, FieldKind::Long), "long");
    assert_eq!(type_for(&s, FieldKind::Bool), "boolean");
}

/// A field as the in-place profile adds it.
fn dv_only(name: &str, type_name: &str) -> FieldInfo {
    FieldInfo {
        indexed: false,
        ..field(name, type_name, false, true)
    }
}

#[test]
fn in_place_fields_are_added_docvalues_only_and_their_blockers_named() {
    let mut cfg = six();
    cfg.fields.set_profile(Profile::InPlace);
    let mut s = yacy_like();
    let report = inspect(&s, &cfg);
    let missing: Vec<&Need> = report.missing_required();
    let flag = missing
        .iter()
        .find(|n| n.name == "exact_signature_unique_i")
        .expect("a missing flag");
    assert!(flag.in_place && flag.kind == FieldKind::Int);
    let commands = add_commands(&s, &missing);
    let added = commands["add-field"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "exact_signature_copies_i")
        .unwrap()
        .clone();
    assert_eq!(
        added,
        json!({"name": "exact_signature_copies_i", "type": "pint", "indexed": false,
               "stored": false, "docValues": true, "useDocValuesAsStored": true,
               "multiValued": false})
    );
    // The signatures stay indexed and stored: only the profile's own fields are in place.
    for f in commands["add-field"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let own = crate::model::IN_PLACE_NAMES.iter().any(|(_, n)| *n == name);
        assert_eq!(f["indexed"] == json!(false), own, "{f}");
    }

    // Every condition, one line each; the version field's too.
    s.fields.push(dv_only("_version_", "plong"));
    s.fields.push(dv_only("exact_signature_unique_i", "pint"));
    s.fields.push(FieldInfo {
        multi_valued: true,
        ..dv_only("fuzzy_signature_unique_i", "pint")
    });
    s.fields.push(field("title_unique_i", "pint", true, true));
    s.fields.push(dv_only("www_unique_i", "string"));
    s.types.insert("string".into(), "solr.StrField".into());
    s.fields.push(dv_only("http_unique_i", "pint"));
    s.fields.push(field("copy_i", "pint", true, true));
    s.copy_fields
        .push(("http_unique_i".into(), "copy_i".into()));
    let report = inspect(&s, &cfg);
    let lines = report.not_in_place.join("\n");
    assert!(!lines.contains("exact_signature_unique_i"), "{lines}");
    assert!(!lines.contains("_version_"), "{lines}");
    assert!(
        lines.contains("fuzzy_signature_unique_i is multi-valued"),
        "{lines}"
    );
    assert!(
        lines.contains("title_unique_i is indexed") && lines.contains("title_unique_i is stored"),
        "{lines}"
    );
    assert!(lines.contains("www_unique_i has type string"), "{lines}");
    assert!(
        lines.contains("http_unique_i is copied to copy_i"),
        "{lines}"
    );
    // An indexed version field stops every in-place update.
    let mut v = s.clone();
    v.fields.retain(|f| f.name != "_version_");
    v.fields.push(field("_version_", "plong", true, true));
    let report = inspect(&v, &cfg);
    assert!(
        report
            .not_in_place
            .iter()
            .any(|l| l.starts_with("_version_ (Solr's version field) is indexed")),
        "{:?}",
        report.not_in_place
    );
}

#[test]
fn the_profile_is_found_from_fields_of_their_own() {
    let cfg = six();
    let mut s = yacy_like();
    // The dynamic *_i rule covers the names, but is no profile.
    assert_eq!(detect_profile(&s, &cfg), Profile::Yacy);
    for (_, name) in crate::model::IN_PLACE_NAMES {
        s.fields.push(dv_only(name, "pint"));
    }
    assert_eq!(detect_profile(&s, &cfg), Profile::InPlace);
    // A renamed flag says nothing; one missing in-place flag keeps YaCy's profile; near does
    // not count (it is optional).
    let mut renamed = six();
    renamed.fields.rename("exact_signature_unique_b", "dedup_b");
    assert_eq!(detect_profile(&s, &renamed), Profile::InPlace);
    let only = EngineConfig {
        dimensions: vec![Dimension::Exact],
        ..renamed.clone()
    };
    assert_eq!(detect_profile(&s, &only), Profile::Yacy);
    let mut no_near = s.clone();
    no_near.fields.retain(|f| f.name != "near_unique_i");
    let all = EngineConfig::default();
    assert_eq!(detect_profile(&no_near, &all), Profile::InPlace);
    let mut no_www = s.clone();
    no_www.fields.retain(|f| f.name != "www_unique_i");
    assert_eq!(detect_profile(&no_www, &all), Profile::Yacy);
    // prepare() switches an automatic profile, and leaves a chosen one.
    let mut auto = six();
    let _ = prepare(&s, &mut auto, false, true, true, "http://core");
    assert_eq!(auto.fields.profile, Profile::InPlace);
    assert_eq!(auto.fields.unique(Dimension::Www), "www_unique_i");
    let mut chosen = EngineConfig {
        profile_auto: false,
        ..six()
    };
    let _ = prepare(&s, &mut chosen, false, true, true, "http://core");
    assert_eq!(chosen.fields.profile, Profile::Yacy);
}
