//! `/admin/ping`, shaped like Solr 9's answer: the one admin request the client sends.

use serde_json::json;

use super::index::now_ms;
use super::search::{echo, json_resp};
use super::{Req, Resp};

pub fn ping(core_name: &str, req: &Req, request_id: u64) -> Resp {
    let mut params: Vec<(String, String)> = vec![
        ("q".into(), "{!lucene}*:*".into()),
        ("distrib".into(), "false".into()),
        ("df".into(), "text_t".into()),
        ("echoParams".into(), "all".into()),
        ("rows".into(), "10".into()),
    ];
    params.extend(req.params.iter().cloned());
    params.push((
        "rid".into(),
        format!("{core_name}-{}-{request_id}", now_ms()),
    ));
    json_resp(
        200,
        &json!({
            "responseHeader": {"zkConnected": null, "status": 0, "QTime": 0, "params": echo(&params)},
            "status": "OK"
        }),
    )
}
