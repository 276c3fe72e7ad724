//! `/admin/ping`, `/admin/luke` and the node's CoreAdmin `STATUS`, shaped like Solr 9's answers.
//! The index summary is that of a freshly merged index: one segment when there are documents,
//! no deleted documents (a real index keeps deleted documents until segments merge).

use serde_json::{json, Map, Value};

use super::index::{now_ms, Core};
use super::schema::PROP_NAMES;
use super::search::{echo, json_resp, Params};
use super::{Req, Resp};

/// ISO-8601 in UTC with milliseconds, as Solr prints dates.
pub fn iso_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn index_summary(core: &Core, core_name: &str) -> Map<String, Value> {
    let num = core.committed().len();
    let commit = core.last_commit();
    let mut m = Map::new();
    m.insert("numDocs".into(), json!(num));
    m.insert("maxDoc".into(), json!(num));
    m.insert("deletedDocs".into(), json!(0));
    m.insert(
        "version".into(),
        json!(commit.map(|c| c.version & 0xffff).unwrap_or(0)),
    );
    m.insert("segmentCount".into(), json!(if num > 0 { 1 } else { 0 }));
    m.insert("current".into(), json!(true));
    m.insert("hasDeletions".into(), json!(false));
    m.insert(
        "directory".into(),
        json!(format!(
            "org.apache.lucene.store.NRTCachingDirectory:NRTCachingDirectory(MMapDirectory@/var/fake-solr/{core_name}/data/index lockFactory=org.apache.lucene.store.NativeFSLockFactory@5f1c2e3a; maxCacheMB=48.0 maxMergeSizeMB=4.0)"
        )),
    );
    m.insert("segmentsFile".into(), json!("segments_2"));
    m.insert("segmentsFileSizeInBytes".into(), json!(154));
    let mut user = Map::new();
    if let Some(c) = commit {
        user.insert("commitTimeMSec".into(), json!(c.time_ms.to_string()));
        user.insert("commitCommandVer".into(), json!(c.version.to_string()));
    }
    m.insert("userData".into(), Value::Object(user));
    m.insert(
        "lastModified".into(),
        json!(iso_time(
            commit.map(|c| c.time_ms).unwrap_or_else(|| core.start_ms())
        )),
    );
    m
}

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

fn flags(props: u32) -> String {
    // Luke's key: I T S D U M V o p y O F P H L B f l.
    let order = [
        ("indexed", 'I'),
        ("tokenized", 'T'),
        ("stored", 'S'),
        ("docValues", 'D'),
        ("uninvertible", 'U'),
        ("multiValued", 'M'),
        ("termVectors", 'V'),
        ("termOffsets", 'o'),
        ("termPositions", 'p'),
        ("termPayloads", 'y'),
        ("omitNorms", 'O'),
        ("omitTermFreqAndPositions", 'F'),
        ("omitPositions", 'P'),
        ("storeOffsetsWithPositions", 'H'),
        ("large", 'L'),
        ("binary", 'B'),
        ("sortMissingFirst", 'f'),
        ("sortMissingLast", 'l'),
    ];
    order
        .iter()
        .map(|(name, c)| {
            let i = PROP_NAMES.iter().position(|p| p == name).expect("known");
            if props & (1 << i) != 0 {
                *c
            } else {
                '-'
            }
        })
        .collect()
}

pub fn luke(core: &Core, core_name: &str, req: &Req) -> Resp {
    let p = Params(req.params.clone());
    let mut body = Map::new();
    body.insert("responseHeader".into(), json!({"status": 0, "QTime": 0}));
    body.insert(
        "index".into(),
        Value::Object(index_summary(core, core_name)),
    );
    if p.get("show") == Some("index") {
        return json_resp(200, &Value::Object(body));
    }
    let names: Vec<String> = match p.get("fl") {
        Some(fl) => fl
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        None => {
            let mut v: Vec<String> = core
                .schema()
                .fields
                .iter()
                .map(|f| f.name.clone())
                .collect();
            v.sort();
            v
        }
    };
    let mut fields = Map::new();
    for n in names {
        if let Some(f) = core.schema().field(&n) {
            let mut m = Map::new();
            m.insert("type".into(), json!(f.type_name));
            m.insert("schema".into(), json!(flags(f.props)));
            if let Some(base) = &f.dynamic_base {
                m.insert("dynamicBase".into(), json!(base));
            }
            fields.insert(n, Value::Object(m));
        }
    }
    body.insert("fields".into(), Value::Object(fields));
    let key: Map<String, Value> = [
        ("I", "Indexed"),
        ("T", "Tokenized"),
        ("S", "Stored"),
        ("D", "DocValues"),
        ("U", "UnInvertible"),
        ("M", "Multivalued"),
        ("V", "TermVector Stored"),
        ("o", "Store Offset With TermVector"),
        ("p", "Store Position With TermVector"),
        ("y", "Store Payloads With TermVector"),
        ("O", "Omit Norms"),
        ("F", "Omit Term Frequencies & Positions"),
        ("P", "Omit Positions"),
        ("H", "Store Offsets with Positions"),
        ("L", "Lazy"),
        ("B", "Binary"),
        ("f", "Sort Missing First"),
        ("l", "Sort Missing Last"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), json!(v)))
    .collect();
    body.insert(
        "info".into(),
        json!({"key": key, "NOTE": "Document Frequency (df) is not updated when a document is marked for deletion.  df values include deleted documents."}),
    );
    json_resp(200, &Value::Object(body))
}

/// `GET /solr/admin/cores?action=STATUS[&core=NAME]`.
pub fn cores(core: &Core, core_name: &str, req: &Req) -> Resp {
    let p = Params(req.params.clone());
    let action = p.get("action").unwrap_or("STATUS").to_ascii_uppercase();
    if action != "STATUS" {
        let e = super::error::SolrError::bad_request(format!(
            "fake solr: CoreAdmin action {action} is not supported"
        ));
        return super::search::error_resp(&e, None, Map::new());
    }
    let mut status = Map::new();
    let wanted = p.get("core");
    if wanted.is_none_or(|w| w == core_name) {
        let mut index = index_summary(core, core_name);
        index.insert("sizeInBytes".into(), json!(4096));
        index.insert("size".into(), json!("4 KB"));
        status.insert(
            core_name.to_string(),
            json!({
                "name": core_name,
                "instanceDir": format!("/var/fake-solr/{core_name}"),
                "dataDir": format!("/var/fake-solr/{core_name}/data/"),
                "config": "solrconfig.xml",
                "schema": "managed-schema.xml",
                "startTime": iso_time(core.start_ms()),
                "uptime": now_ms() - core.start_ms(),
                "index": index
            }),
        );
    }
    if let Some(w) = wanted {
        if w != core_name {
            status.insert(w.to_string(), json!({}));
        }
    }
    json_resp(
        200,
        &json!({"responseHeader": {"status": 0, "QTime": 0}, "initFailures": {}, "status": status}),
    )
}
