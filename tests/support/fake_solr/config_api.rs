//! The Config API's reads the worker makes (`/config/updateRequestProcessorChain`,
//! `/config/requestHandler?componentName=/update`, `/config/initParams`), answered as Solr 9 does
//! for a configset whose `/update` is the plain `solr.UpdateRequestHandler` (recorded from the test
//! framework's core, tests/solr): no chain (`null`) unless a test sets some
//! ([`super::FakeSolr::set_update_chains`]), in Solr's shape (a chain's processors under `""`).

use serde_json::{json, Value};

use super::{not_found, search, Req, Resp};

/// Answers a `/config/...` read; 404 for what the fake does not know, as Solr for an unknown
/// component.
pub(super) fn config(chains: &Value, props: &serde_json::Map<String, Value>, r: &Req) -> Resp {
    let body = match r.path.as_str() {
        // Solr 9.10's answer, without and with user properties (znodeVersion -1 before any edit).
        "/config/overlay" if props.is_empty() => json!({"znodeVersion": -1}),
        "/config/overlay" => json!({"znodeVersion": 0, "userProps": props}),
        "/config/updateRequestProcessorChain" => json!({"updateRequestProcessorChain": chains}),
        "/config/requestHandler" if r.param("componentName") == Some("/update") => {
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
    // The overlay answers under its own key, the rest under `config`.
    let key = if r.path == "/config/overlay" {
        "overlay"
    } else {
        "config"
    };
    search::json_resp(
        200,
        &json!({"responseHeader": {"status": 0, "QTime": 0}, key: body}),
    )
}

/// `POST /config` with `set-user-property` / `unset-user-property` commands, as Solr 9 answers
/// them (an experimental-format warning beside the header); anything else is refused with 400.
pub(super) fn post(props: &mut serde_json::Map<String, Value>, r: &Req) -> Resp {
    let Ok(Value::Object(commands)) = serde_json::from_slice::<Value>(&r.body) else {
        return search::json_resp(
            500,
            &json!({"responseHeader": {"status": 500, "QTime": 0},
                    "error": {"msg": "Expected a JSON object of commands", "code": 500}}),
        );
    };
    for (command, arg) in commands {
        match (command.as_str(), arg) {
            ("set-user-property", Value::Object(set)) => {
                for (k, v) in set {
                    let text = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    props.insert(k, Value::String(text));
                }
            }
            ("unset-user-property", Value::String(k)) => {
                props.remove(&k);
            }
            (other, _) => {
                return search::json_resp(
                    400,
                    &json!({"responseHeader": {"status": 400, "QTime": 0},
                            "error": {"msg": format!("Unknown operation '{other}' "), "code": 400}}),
                );
            }
        }
    }
    search::json_resp(
        200,
        &json!({"responseHeader": {"status": 0, "QTime": 0},
                "WARNING": "This response format is experimental.  It is likely to change in the future."}),
    )
}
