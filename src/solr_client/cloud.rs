//! A SolrCloud collection's layout, from the Collections API's `CLUSTERSTATUS`: its shards, their
//! hash ranges, and the replicas of each with the core URL to read them through.
//!
//! ```text
//! GET <node>/solr/admin/collections?action=CLUSTERSTATUS&collection=NAME
//! {"cluster":{"live_nodes":["127.0.0.1:42367_solr",…],
//!   "collections":{"NAME":{"router":{"name":"compositeId"},
//!     "shards":{"shard1":{"range":"80000000-ffffffff","state":"active",
//!       "replicas":{"core_node4":{"core":"NAME_shard1_replica_n2","base_url":"http://127.0.0.1:42367/solr",
//!                                 "node_name":"127.0.0.1:42367_solr","state":"active","leader":"true","type":"NRT"}}}}}}}}
//! ```
//!
//! A replica can be read when its state is `active` and its node is live; the leader comes first,
//! then the other NRT and TLOG replicas, then PULL replicas (which may lag). A shard that is not
//! `active` (a parent being split, a sub-shard under construction) holds no documents of its own
//! that an active shard does not, and is left out.

use serde_json::Value;

use super::{Client, SolrError};

/// One replica of a shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    /// The core URL (`base_url` + `/` + `core`).
    pub core_url: String,
    /// The shard's leader.
    pub leader: bool,
}

/// One active shard and its readable replicas, the leader first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The shard's name (`shard1`).
    pub name: String,
    /// Its hash range, `(min, max)` inclusive, as the compositeId router assigns ids; `None` for
    /// other routers.
    pub range: Option<(i32, i32)>,
    /// Readable replicas: active, on a live node; the leader first.
    pub replicas: Vec<Replica>,
}

/// A collection's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The collection's name as the cluster state has it.
    pub collection: String,
    /// The router's name (`compositeId`, `implicit`).
    pub router: String,
    /// The `router.field`, when the router routes by a field other than the id.
    pub router_field: Option<String>,
    /// The active shards, by name.
    pub shards: Vec<Shard>,
}

/// What is wrong with a `CLUSTERSTATUS` answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The answer does not hold what is looked for.
    #[error("CLUSTERSTATUS: {0}")]
    Malformed(String),
    /// An active shard has no replica that can be read.
    #[error("shard {0} has no active replica on a live node")]
    NoReplica(String),
}

/// Parses a hash range such as `80000000-ffffffff` into signed bounds, as Solr's `DocRouter.Range`
/// keeps them.
pub fn parse_range(text: &str) -> Option<(i32, i32)> {
    let (lo, hi) = text.split_once('-')?;
    let lo = u32::from_str_radix(lo, 16).ok()? as i32;
    let hi = u32::from_str_radix(hi, 16).ok()? as i32;
    Some((lo, hi))
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    }
}

impl Cluster {
    /// The layout of `collection` in a `CLUSTERSTATUS` answer; when the answer holds one collection
    /// only (`collection` was an alias), that one.
    pub fn parse(answer: &Value, collection: &str) -> Result<Cluster, ClusterError> {
        let bad = |what: &str| ClusterError::Malformed(what.to_owned());
        let cluster = answer.get("cluster").ok_or_else(|| bad("no cluster"))?;
        let live: Vec<&str> = cluster
            .get("live_nodes")
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let collections = cluster
            .get("collections")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no collections"))?;
        let (name, coll) = match collections.get_key_value(collection) {
            Some(found) => found,
            None if collections.len() == 1 => collections.iter().next().expect("one"),
            None => return Err(bad(&format!("no collection {collection}"))),
        };
        let router = coll.pointer("/router/name").and_then(Value::as_str);
        let router_field = coll
            .pointer("/router/field")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let shards = coll
            .get("shards")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no shards"))?;
        let mut out = Vec::new();
        for (shard_name, shard) in shards {
            if shard.get("state").and_then(Value::as_str) != Some("active") {
                continue;
            }
            let mut replicas: Vec<(u8, Replica)> = Vec::new();
            if let Some(rs) = shard.get("replicas").and_then(Value::as_object) {
                for r in rs.values() {
                    let active = r.get("state").and_then(Value::as_str) == Some("active");
                    let on_live = r
                        .get("node_name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| live.contains(&n));
                    let (Some(base), Some(core)) = (
                        r.get("base_url").and_then(Value::as_str),
                        r.get("core").and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    if !active || !on_live {
                        continue;
                    }
                    let leader = truthy(r.get("leader"));
                    let rank = match (leader, r.get("type").and_then(Value::as_str)) {
                        (true, _) => 0,
                        (false, Some("PULL")) => 2,
                        (false, _) => 1,
                    };
                    replicas.push((
                        rank,
                        Replica {
                            core_url: format!("{}/{core}", base.trim_end_matches('/')),
                            leader,
                        },
                    ));
                }
            }
            replicas.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.core_url.cmp(&b.1.core_url)));
            if replicas.is_empty() {
                return Err(ClusterError::NoReplica(shard_name.clone()));
            }
            out.push(Shard {
                name: shard_name.clone(),
                range: shard
                    .get("range")
                    .and_then(Value::as_str)
                    .and_then(parse_range),
                replicas: replicas.into_iter().map(|(_, r)| r).collect(),
            });
        }
        if out.is_empty() {
            return Err(bad("no active shard"));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Cluster {
            collection: name.clone(),
            router: router.unwrap_or("compositeId").to_owned(),
            router_field,
            shards: out,
        })
    }
}

/// The collection a client's URL names (its last path segment) and a client of its node's `/solr`
/// base, for the admin API.
fn node_of(client: &Client) -> Result<(String, Client), SolrError> {
    let url = client.core_url();
    let (base, collection) = url.rsplit_once('/').unwrap_or((url, ""));
    let node = client
        .for_core(base, 1)
        .map_err(|e| SolrError::BadResponse {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
    Ok((collection.to_owned(), node))
}

/// Asks the node behind `client` (a collection URL) for the collection's layout: the inner error
/// when the answer holds no usable layout, the outer one when there is no answer.
pub async fn cluster_status(client: &Client) -> Result<Result<Cluster, ClusterError>, SolrError> {
    let (collection, node) = node_of(client)?;
    let answer = node
        .get(
            "admin/collections",
            vec![
                ("action".to_owned(), "CLUSTERSTATUS".to_owned()),
                ("collection".to_owned(), collection.clone()),
            ],
        )
        .await?;
    Ok(Cluster::parse(&answer, &collection))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the launcher's two-node cloud answered (Solr 9.3), one replica made a follower and a
    /// third shard inactive to show the ordering and the filtering.
    fn answer() -> Value {
        json!({"responseHeader":{"status":0,"QTime":8},
        "cluster":{"live_nodes":["127.0.0.1:40623_solr","127.0.0.1:42367_solr"],
        "collections":{"collection1":{"pullReplicas":"0","configName":"solr-dedup","replicationFactor":1,
          "router":{"name":"compositeId"},"nrtReplicas":1,"tlogReplicas":"0",
          "shards":{
            "shard1":{"range":"80000000-ffffffff","state":"active","replicas":{
              "core_node5":{"core":"collection1_shard1_replica_p9","node_name":"127.0.0.1:40623_solr",
                "type":"PULL","state":"active","base_url":"http://127.0.0.1:40623/solr"},
              "core_node6":{"core":"collection1_shard1_replica_n7","node_name":"127.0.0.1:9_solr",
                "type":"NRT","state":"active","base_url":"http://127.0.0.1:9/solr"},
              "core_node7":{"core":"collection1_shard1_replica_n8","node_name":"127.0.0.1:40623_solr",
                "type":"NRT","state":"recovering","base_url":"http://127.0.0.1:40623/solr"},
              "core_node4":{"core":"collection1_shard1_replica_n2","node_name":"127.0.0.1:42367_solr",
                "type":"NRT","state":"active","leader":"true","force_set_state":"false",
                "base_url":"http://127.0.0.1:42367/solr"},
              "core_node8":{"core":"collection1_shard1_replica_t3","node_name":"127.0.0.1:40623_solr",
                "type":"TLOG","state":"active","base_url":"http://127.0.0.1:40623/solr/"}},
              "health":"GREEN"},
            "shard2":{"range":"0-7fffffff","state":"active","replicas":{
              "core_node3":{"core":"collection1_shard2_replica_n1","node_name":"127.0.0.1:40623_solr",
                "type":"NRT","state":"active","leader":"true","force_set_state":"false",
                "base_url":"http://127.0.0.1:40623/solr"}},"health":"GREEN"},
            "shard3":{"range":"0-7fffffff","state":"inactive","replicas":{}}},
          "health":"GREEN","znodeVersion":5,"creationTimeMillis":1795627710831u64}},
        "properties":{},"roles":{}}})
    }

    #[test]
    fn active_shards_with_readable_replicas_leader_first() {
        let c = Cluster::parse(&answer(), "collection1").unwrap();
        assert_eq!(c.router, "compositeId");
        assert_eq!(c.router_field, None);
        let names: Vec<&str> = c.shards.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["shard1", "shard2"]);
        let s1: Vec<&str> = c.shards[0]
            .replicas
            .iter()
            .map(|r| r.core_url.as_str())
            .collect();
        // Leader, then TLOG/NRT, then PULL; the recovering one and the dead node's are left out.
        assert_eq!(
            s1,
            [
                "http://127.0.0.1:42367/solr/collection1_shard1_replica_n2",
                "http://127.0.0.1:40623/solr/collection1_shard1_replica_t3",
                "http://127.0.0.1:40623/solr/collection1_shard1_replica_p9",
            ]
        );
        assert!(c.shards[0].replicas[0].leader);
        assert_eq!(c.shards[0].range, Some((i32::MIN, -1)));
        assert_eq!(c.shards[1].range, Some((0, i32::MAX)));
    }

    #[test]
    fn an_alias_names_the_one_collection_and_a_shard_without_replica_is_an_error() {
        let c = Cluster::parse(&answer(), "alias").unwrap();
        assert_eq!(c.collection, "collection1");
        let mut a = answer();
        a["cluster"]["live_nodes"] = json!(["127.0.0.1:42367_solr"]);
        assert_eq!(
            Cluster::parse(&a, "collection1"),
            Err(ClusterError::NoReplica("shard2".into()))
        );
        assert!(matches!(
            Cluster::parse(&json!({"x":1}), "c"),
            Err(ClusterError::Malformed(_))
        ));
    }
}
