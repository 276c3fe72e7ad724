//! The update chain `/update` runs, against what the worker's atomic updates keep.

use std::collections::HashSet;

use serde_json::Value;
use tracing::info;

use super::{needs, EngineConfig};
use crate::solr_client::config::UpdateChain;

/// Processors that replace, cut or drop the values of the fields they select (by `fieldName`):
/// on the worker's fields they would change what its atomic updates write.
const REWRITING: [&str; 15] = [
    "IgnoreFieldUpdateProcessorFactory",
    "RegexReplaceProcessorFactory",
    "TruncateFieldUpdateProcessorFactory",
    "HTMLStripFieldUpdateProcessorFactory",
    "TrimFieldUpdateProcessorFactory",
    "RemoveBlankFieldUpdateProcessorFactory",
    "FieldLengthUpdateProcessorFactory",
    "CountFieldValuesUpdateProcessorFactory",
    "ConcatFieldUpdateProcessorFactory",
    "FirstFieldValueUpdateProcessorFactory",
    "LastFieldValueUpdateProcessorFactory",
    "MaxFieldValueUpdateProcessorFactory",
    "MinFieldValueUpdateProcessorFactory",
    "UniqFieldsUpdateProcessorFactory",
    "FieldNameMutatingUpdateProcessorFactory",
];

/// What in the update chain `/update` runs would change what the worker's atomic updates keep,
/// one line each with what to do (empty: nothing). Solr's `SignatureUpdateProcessorFactory`
/// refuses an atomic update when it signs all fields or one the update sets, and otherwise sets
/// its signature field from the fields the partial document holds; a processor that rewrites or
/// drops fields (`REWRITING`) on a field the worker writes changes what lands. A selector by
/// pattern or type is not judged (logged at info, so that `-v` shows it).
pub fn chain_problems(chain: &UpdateChain, cfg: &EngineConfig) -> Vec<String> {
    let written: HashSet<String> = needs(cfg)
        .into_iter()
        .filter(|n| n.written)
        .map(|n| n.name)
        .collect();
    let name = chain.name.as_deref().map_or_else(
        || "the unnamed update chain".to_owned(),
        |n| format!("the update chain '{n}'"),
    );
    let fix = "give /update a chain without it (move the processor to a chain the crawler names with update.chain)";
    let mut out = Vec::new();
    for p in &chain.processors {
        let simple = p.simple_name();
        if simple == "SignatureUpdateProcessorFactory" {
            // Off as Solr's getBool reads it: false, or a string "false" in any case.
            let off = match p.params.get("enabled") {
                Some(Value::Bool(b)) => !b,
                Some(Value::String(s)) => s.eq_ignore_ascii_case("false"),
                _ => false,
            };
            if off {
                continue;
            }
            let fields = p.strings("fields");
            let target = p
                .params
                .get("signatureField")
                .and_then(Value::as_str)
                .unwrap_or("signatureField");
            let what = if fields.is_empty() {
                "over all fields, so Solr refuses every atomic update".to_owned()
            } else if let Some(f) = fields.iter().find(|f| written.contains(*f)) {
                format!("over {f}, which the worker writes, so Solr refuses those atomic updates")
            } else {
                format!(
                    "over {}, and sets {target} from the fields each atomic update holds",
                    fields.join(",")
                )
            };
            out.push(format!(
                "{name}, which /update runs, has {} {what}: {fix}",
                p.class
            ));
            continue;
        }
        if REWRITING.contains(&simple) {
            let mut selected = p.strings("fieldName");
            selected.retain(|f| written.contains(f));
            if let Some(f) = selected.first() {
                out.push(format!(
                    "{name}, which /update runs, has {} on {f}, which the worker writes: {fix}",
                    p.class
                ));
            } else if p.params.contains_key("fieldRegex") || p.params.contains_key("typeClass") {
                info!(processor = %p.class, "the update chain selects fields by pattern or type; check that none the worker writes is among them");
            }
        }
        if simple == "CloneFieldUpdateProcessorFactory" {
            if let Some(f) = p.strings("dest").iter().find(|f| written.contains(*f)) {
                out.push(format!(
                    "{name}, which /update runs, has {} writing into {f}, which the worker writes: {fix}",
                    p.class
                ));
            }
        }
    }
    out
}
