//! The Config API's reads the worker makes (`/config/updateRequestProcessorChain`,
//! `/config/requestHandler?componentName=/update`, `/config/initParams`), answered as Solr 9 does
//! for a configset whose `/update` is the plain `solr.UpdateRequestHandler` (recorded from the test
//! framework's core, tests/solr): no chain (`null`) unless a test sets some
//! ([`super::FakeSolr::set_update_chains`]), in Solr's shape (a chain's processors under `""`).

use serde_json::{json, Value};

use super::{not_found, search, Req, Resp};

/// Answers a `/config/...` read; 404 for what the fake does not know, as Solr for an unknown
/// component.
pub(super) fn config(chains: &Value, r: &Req) -> Resp {
    let body = match r.path.as_str() {
        "/config/updateRequestProcessorChain" => json!({"updateRequestProcessorChain": chains}),
        "/config/requestHandler" if component(r) == Some("/update") => {
            json!({"requestHandler": {"/update": {
                "useParams": "_UPDATE",
                "class": "solr.UpdateRequestHandler",
                "name": "/update"
            }}})
        }
        "/config/initParams" => json!({"initParams": null}),
        "/config/updateProcessor" => json!({"updateProcessor": null}),
        _ => return not_found(),
    };
    search::json_resp(
        200,
        &json!({"responseHeader": {"status": 0, "QTime": 0}, "config": body}),
    )
}

/// The `componentName` parameter.
fn component(r: &Req) -> Option<&str> {
    r.params
        .iter()
        .find(|(k, _)| k == "componentName")
        .map(|(_, v)| v.as_str())
}
