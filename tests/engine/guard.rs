//! The scheme guard (an index signed another way stops the run before it writes) and the memory budget.

use super::*;

/// `n` generated pages signed as a crawler would have signed them, with `signer`.
fn signed_with(n: u64, signer: &solr_dedup::signature::Signer) -> Vec<Value> {
    crate::truth::generated(n, 61, 1.0)
        .into_iter()
        .map(|mut d| {
            let text = d["text_t"].as_str().unwrap_or("").to_owned();
            d["exact_signature_l"] = json!(signer.exact(&text));
            d["fuzzy_signature_l"] = json!(signer.profile(&text).signature());
            d
        })
        .collect()
}

/// Runs (or checks) on `docs` and returns the engine's answer and what was written.
fn guarded(
    docs: &[Value],
    cfg: &EngineConfig,
    check: bool,
) -> (Result<Report, engine::EngineError>, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    write_jsonl(&input, docs);
    let output = input.with_extension("out.jsonl");
    let store = FileStore::open(
        &input,
        Output::File(output.clone()),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap();
    let result = block_on(async {
        if check {
            engine::check(&store, cfg).await
        } else {
            engine::run(&store, cfg).await
        }
    });
    (result, std::fs::read_to_string(&output).unwrap_or_default())
}

fn md5_signer(min_token_len: usize, quant_rate: f32) -> solr_dedup::signature::Signer {
    solr_dedup::signature::Signer {
        scheme: solr_dedup::signature::Scheme::Md5,
        params: solr_dedup::signature::ProfileParams {
            min_token_len,
            quant_rate,
        },
    }
}

#[test]
fn an_index_signed_with_another_scheme_stops_the_run_before_it_writes() {
    // Signed by Solr's own TextProfileSignature defaults (md5, 2, 0.01); this run is yacy's.
    let docs = signed_with(40, &md5_signer(2, 0.01));
    let (result, written) = guarded(&docs, &EngineConfig::default(), false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("the guard let the run go on: {result:?}");
    };
    assert_eq!((m.sampled, m.agreeing), (40, 0));
    let text = m.to_string();
    assert!(
        text.contains("signed with --scheme md5 --min-token-len 2 --quant-rate 0.01"),
        "{text}"
    );
    assert!(text.contains("--full"), "{text}");
    assert_eq!(written, "", "nothing is written before the guard");
    // check says the same.
    let (result, _) = guarded(&docs, &EngineConfig::default(), true);
    assert!(
        matches!(result, Err(engine::EngineError::SchemeMismatch(_))),
        "{result:?}"
    );
}

#[test]
fn the_guard_names_uncommon_profile_parameters() {
    let docs = signed_with(30, &md5_signer(1, 0.05));
    let cfg = EngineConfig {
        signer: md5_signer(2, 0.01),
        ..EngineConfig::default()
    };
    let (result, _) = guarded(&docs, &cfg, false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("{result:?}");
    };
    // Short pages give the same profile under neighbouring quantisation rates, so the guard may name
    // another rate than the crawler's; what it names must sign every sampled page as it is signed.
    let found = m.index.expect("the settings are found");
    assert_eq!(
        (found.scheme, found.params.min_token_len),
        (solr_dedup::signature::Scheme::Md5, 1),
        "{m}"
    );
    let signer = solr_dedup::signature::Signer {
        scheme: found.scheme,
        params: found.params,
    };
    for d in &docs {
        let text = d["text_t"].as_str().unwrap_or("");
        assert_eq!(
            d["fuzzy_signature_l"],
            json!(signer.profile(text).signature()),
            "{m}"
        );
    }
    assert!(
        m.to_string().contains(&format!("signed with {found}")),
        "{m}"
    );
}

#[test]
fn full_signs_everything_again_whatever_the_index_was_signed_with() {
    let docs = signed_with(40, &md5_signer(2, 0.01));
    let cfg = EngineConfig {
        full: true,
        ..EngineConfig::default()
    };
    let (result, written) = guarded(&docs, &cfg, false);
    let report = result.expect("--full skips the guard");
    assert_eq!(report.documents.signed, 40);
    assert_eq!(written.lines().count(), 40);
}

#[test]
fn texts_changed_after_signing_do_not_trip_the_guard() {
    // Signed with this run's scheme, then a quarter of the texts changed without new signatures.
    let mut docs = signed_with(
        40,
        &solr_dedup::signature::Signer::new(solr_dedup::signature::Scheme::Yacy),
    );
    for d in docs.iter_mut().step_by(4) {
        d["text_t"] = json!("An edited text that no signature was computed for.");
    }
    let (result, _) = guarded(&docs, &EngineConfig::default(), false);
    result.expect("a few stale signatures are no other scheme");
}

#[test]
fn a_sample_mostly_out_of_date_stops_the_run() {
    // More than half of the sample disagrees with every scheme: the guard stops, naming none.
    let mut docs = signed_with(
        20,
        &solr_dedup::signature::Signer::new(solr_dedup::signature::Scheme::Yacy),
    );
    for (i, d) in docs.iter_mut().enumerate().filter(|(i, _)| i % 4 != 0) {
        d["text_t"] = json!(format!("Edited text number {i}, never signed."));
    }
    let (result, _) = guarded(&docs, &EngineConfig::default(), false);
    let Err(engine::EngineError::SchemeMismatch(m)) = result else {
        panic!("{result:?}");
    };
    assert_eq!((m.sampled, m.agreeing, m.index), (20, 5, None));
    assert!(m.to_string().contains("no usual scheme fits"), "{m}");
}

/// A budget of a few kilobytes sends the signatures waiting for pass C and the near-duplicate keys
/// to temporary files from the first page on: the run writes exactly what the same run in memory
/// writes, says what it spilled, and leaves nothing in its temporary folder.
#[test]
fn a_tiny_memory_budget_spills_and_writes_what_a_run_in_memory_writes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let mut corpus = Vec::new();
    crate::truth::gen_corpus::generate(1500, 3, 1.0, &mut corpus, None::<&mut Vec<u8>>).unwrap();
    std::fs::write(&input, corpus).unwrap();
    let spill_dir = tempfile::tempdir().unwrap();
    let in_memory = EngineConfig::default();
    let tiny = EngineConfig {
        memory: 4 << 10,
        temp_dir: Some(spill_dir.path().to_owned()),
        ..EngineConfig::default()
    };
    for format in [OutputFormat::Updates, OutputFormat::Docs] {
        let (want_report, want) = run_file(&input, &in_memory, format, false);
        let (report, got) = run_file(&input, &tiny, format, false);
        assert!(want.len() > 1000, "the corpus has doubles to write");
        assert_eq!(got, want, "the same updates, in the same order");
        assert_eq!(report.dimensions, want_report.dimensions);
        assert_eq!(report.documents, want_report.documents);
        assert_eq!(want_report.memory.budget_bytes, 256 << 20);
        assert_eq!(want_report.memory.spilled_bytes, 0, "1,500 pages fit");
        assert_eq!(report.memory.budget_bytes, 4096);
        // Every page's signatures, and every near key (12 bytes a pair), at least.
        assert!(
            report.memory.spilled_bytes > 1500 * 12,
            "{:?}",
            report.memory
        );
        assert_eq!(std::fs::read_dir(spill_dir.path()).unwrap().count(), 0);
    }
}

/// A temporary folder that cannot be written stops a run that must spill with one line naming the
/// folder, before anything is written.
#[test]
fn a_temp_dir_that_cannot_be_written_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let docs: Vec<Value> = (0..50)
        .map(|i| {
            page(
                &format!("d{i}"),
                &format!("https://h.example/{i}"),
                "same text",
            )
        })
        .collect();
    write_jsonl(&input, &docs);
    let output = input.with_extension("out.jsonl");
    let store = FileStore::open(
        &input,
        Output::File(output.clone()),
        OutputFormat::Updates,
        "id",
        "_version_",
    )
    .unwrap();
    let missing = dir.path().join("no-such-folder");
    let cfg = EngineConfig {
        memory: 64,
        temp_dir: Some(missing.clone()),
        ..EngineConfig::default()
    };
    let err = block_on(engine::run(&store, &cfg)).unwrap_err();
    let line = format!("{:#}", anyhow::Error::from(err));
    assert!(line.contains(&*missing.to_string_lossy()), "{line}");
    assert!(line.contains("--temp-dir"), "{line}");
    assert!(!output.exists(), "nothing written");
}

/// A store others write to (Solr) refuses to write a document read without a version: an update
/// guarded only by "it exists" could leave a signature of an old text on a page re-indexed
/// meanwhile. The report counts them; documents with a version are written as usual.
#[test]
fn documents_without_a_version_are_not_written_where_others_write() {
    use crate::support::hooked::Hooked;
    use solr_dedup::store::file::{FileStore, Output, OutputFormat};

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let docs = [
        json!({"id": "a", "sku": "http://x.org/a", "text_t": "same words here", "_version_": 11}),
        json!({"id": "b", "sku": "http://x.org/b", "text_t": "same words here"}),
        json!({"id": "c", "sku": "http://x.org/c", "text_t": "other words", "_version_": 13}),
    ];
    super::write_jsonl(&input, &docs);
    let run = |needs: bool| {
        let output = dir.path().join(format!("out-{needs}.jsonl"));
        let store = Hooked::new(
            FileStore::open(
                &input,
                Output::File(output.clone()),
                OutputFormat::Updates,
                "id",
                "_version_",
            )
            .unwrap(),
        )
        .with_needs_versions(needs);
        let report = super::block_on(engine::run(&store, &EngineConfig::default())).unwrap();
        let ids: Vec<String> = super::read_jsonl(&output)
            .iter()
            .map(|u| u["id"].as_str().unwrap().to_owned())
            .collect();
        (report, ids)
    };
    // A file: written with Solr's "it exists" guard, as before.
    let (report, ids) = run(false);
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(report.documents.unversioned, 0);
    // A store others write to: b is refused and counted, a and c are written.
    let (report, ids) = run(true);
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(report.documents.unversioned, 1);
    assert!(report
        .summary()
        .contains("1 documents not written: Solr gave them without _version_"));
}
