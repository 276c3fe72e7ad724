//! Writes to a SolrCloud collection, each update sent to its shard's leader core.
//!
//! On a collection with the `compositeId` router (and no `router.field`) the shard of a document
//! is known from its id ([`crate::solr_client::route`]) and the hash ranges of the cluster state. A batch
//! is cut into one part per shard, and every part goes to that shard's leader core as a normal
//! (distributed) update, two requests in flight per shard, all shards at once:
//!
//! ```text
//!   batch ──route by id──► shard1 part ─► leader core of shard1  (up to 2 requests)
//!                      ├─► shard2 part ─► leader core of shard2  (up to 2 requests)
//!                      └─► …
//! ```
//!
//! A leader applies its own documents and answers their versions (`adds`), so no real-time get is
//! needed to learn an outcome. When the layout changed (a new leader, a split) the core that
//! receives an update forwards what is not its own, as Solr does for any client: a routing mistake
//! costs one hop and is then learnt as through the collection URL, never a document on the wrong
//! shard. A 409 is handled as on one core (see [`super`]).
//!
//! When a leader's address cannot be reached (a proxy in front of Solr publishes only the
//! collection URL, or the node went away), one warning says so and the rest of the run writes
//! through the collection URL; the part that could not be sent is sent there.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use tracing::warn;

use crate::solr_client::cloud::Cluster;
use crate::solr_client::error::TransportKind;
use crate::solr_client::route::{composite_id_hash, shard_of};
use crate::solr_client::{Client, SolrError};
use crate::store::{AtomicUpdate, StoreError};

/// The leader core of every shard of a `compositeId` collection, by hash range.
pub(super) struct Leaders {
    ranges: Vec<(i32, i32)>,
    clients: Vec<Client>,
    /// Set once a leader could not be reached: every later write goes through the collection URL.
    off: AtomicBool,
}

impl Leaders {
    /// The leaders of `cluster`'s shards, or why writes cannot be routed.
    pub(super) fn of(cluster: &Cluster, base: &Client) -> Result<Leaders, String> {
        if cluster.router != "compositeId" {
            return Err(format!("the collection's router is {}", cluster.router));
        }
        if let Some(field) = &cluster.router_field {
            return Err(format!("the collection routes by the field {field}"));
        }
        let mut ranges = Vec::new();
        let mut clients = Vec::new();
        for shard in &cluster.shards {
            let range = shard
                .range
                .ok_or_else(|| format!("shard {} has no hash range", shard.name))?;
            let leader = shard
                .replicas
                .iter()
                .find(|r| r.leader)
                .ok_or_else(|| format!("shard {} has no leader", shard.name))?;
            let client = base
                .for_core(&leader.core_url, 1)
                .map_err(|e| format!("leader {}: {e}", leader.core_url))?;
            ranges.push(range);
            clients.push(client);
        }
        Ok(Leaders {
            ranges,
            clients,
            off: AtomicBool::new(false),
        })
    }

    /// Each shard's leader core, unless routing was given up (a leader could not be reached).
    pub(super) fn cores(&self) -> Option<&[Client]> {
        (!self.off.load(Ordering::Relaxed)).then_some(self.clients.as_slice())
    }

    /// How many shards.
    pub(super) fn len(&self) -> usize {
        self.clients.len()
    }

    /// `batch` cut into one part per shard, with the leader to send it to; `None` once routing
    /// was given up. An id no range holds (a layout being changed) goes through `collection`.
    pub(super) fn route<'u>(
        &self,
        batch: &'u [AtomicUpdate],
        collection: &Client,
    ) -> Option<Vec<(Client, Vec<&'u AtomicUpdate>)>> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let mut parts: Vec<Vec<&AtomicUpdate>> = vec![Vec::new(); self.clients.len() + 1];
        for u in batch {
            let at = shard_of(composite_id_hash(&u.id), &self.ranges).unwrap_or(self.clients.len());
            parts[at].push(u);
        }
        let out = parts
            .into_iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .map(|(i, p)| {
                let client = self.clients.get(i).unwrap_or(collection).clone();
                (client, p)
            })
            .collect();
        Some(out)
    }

    /// Gives up routing for the rest of the run after `e`, when `e` says a leader cannot be
    /// reached; whether it did (the part is then to be sent through the collection URL).
    pub(super) fn give_up_after(&self, leader: &Client, e: &StoreError) -> bool {
        if !e.downcast_ref::<SolrError>().is_some_and(is_connect) {
            return false;
        }
        if !self.off.swap(true, Ordering::Relaxed) {
            warn!(
                leader = %leader.core_url(),
                error = %e,
                "SolrCloud: a shard leader cannot be reached; writing through the collection URL for the rest of the run"
            );
        }
        true
    }
}

/// Whether `e` is a connection that could not be made (nothing was sent, so sending elsewhere is
/// safe), alone or the last of the retries.
fn is_connect(e: &SolrError) -> bool {
    match e {
        SolrError::Exhausted { last, .. } => is_connect(last),
        SolrError::Transport { kind, .. } => *kind == TransportKind::Connect,
        _ => false,
    }
}

/// Runs `futures` at once on the current task and gives their outputs in their order.
pub(super) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future ended"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::solr_client::ClientConfig;

    fn cluster(router: serde_json::Value) -> Cluster {
        let replica = |port: u16, core: &str| {
            json!({"core": core, "node_name": format!("127.0.0.1:{port}_solr"), "type": "NRT",
                   "state": "active", "leader": "true",
                   "base_url": format!("http://127.0.0.1:{port}/solr")})
        };
        let answer = json!({"cluster": {
            "live_nodes": ["127.0.0.1:1_solr", "127.0.0.1:2_solr"],
            "collections": {"c": {"router": router, "shards": {
                "shard1": {"range": "80000000-ffffffff", "state": "active",
                           "replicas": {"n1": replica(1, "c_shard1_replica_n1")}},
                "shard2": {"range": "0-7fffffff", "state": "active",
                           "replicas": {"n2": replica(2, "c_shard2_replica_n2")}}}}}}});
        Cluster::parse(&answer, "c").unwrap()
    }

    fn client() -> Client {
        crate::solr_client::install_crypto_provider();
        Client::new(&ClientConfig::new("http://127.0.0.1:3/solr/c").unwrap()).unwrap()
    }

    fn update(id: &str) -> AtomicUpdate {
        AtomicUpdate {
            id: id.to_owned(),
            set: vec![("x_b".to_owned(), json!(true))],
            version: None,
        }
    }

    #[test]
    fn a_batch_is_cut_by_the_shard_of_each_id() {
        let base = client();
        let leaders = Leaders::of(&cluster(json!({"name": "compositeId"})), &base).unwrap();
        // Hashes printed by Solr (see crate::solr_client::route): "a" 1009084850 (shard2), "abc"
        // -1277324294 (shard1), "user!uniqueid" -1785445026 (shard1).
        let batch = [update("a"), update("abc"), update("user!uniqueid")];
        let parts = leaders.route(&batch, &base).unwrap();
        let got: Vec<(String, Vec<&str>)> = parts
            .iter()
            .map(|(c, p)| {
                (
                    c.core_url().to_owned(),
                    p.iter().map(|u| u.id.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "http://127.0.0.1:1/solr/c_shard1_replica_n1".to_owned(),
                    vec!["abc", "user!uniqueid"]
                ),
                (
                    "http://127.0.0.1:2/solr/c_shard2_replica_n2".to_owned(),
                    vec!["a"]
                ),
            ]
        );
    }

    #[test]
    fn other_routers_go_through_the_collection_and_a_lost_leader_ends_routing() {
        let base = client();
        assert!(Leaders::of(&cluster(json!({"name": "implicit"})), &base).is_err());
        assert!(Leaders::of(
            &cluster(json!({"name": "compositeId", "field": "site_s"})),
            &base
        )
        .is_err());
        let leaders = Leaders::of(&cluster(json!({"name": "compositeId"})), &base).unwrap();
        let refused = StoreError::from(SolrError::Exhausted {
            attempts: 2,
            last: Box::new(SolrError::Transport {
                url: "http://127.0.0.1:1/solr/c_shard1_replica_n1/update".into(),
                reason: "connection refused".into(),
                kind: TransportKind::Connect,
            }),
        });
        let timeout = StoreError::from(SolrError::Transport {
            url: "u".into(),
            reason: "r".into(),
            kind: TransportKind::Timeout,
        });
        assert!(!leaders.give_up_after(&base, &timeout));
        assert!(leaders.route(&[update("a")], &base).is_some());
        assert!(leaders.give_up_after(&base, &refused));
        assert!(leaders.route(&[update("a")], &base).is_none());
    }
}
