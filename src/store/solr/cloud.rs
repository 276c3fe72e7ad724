//! A SolrCloud collection read shard by shard: its layout from the cluster state
//! ([`crate::solr_client::cloud`]), a [`ShardReader`] over the cores of its shards, and the shard leaders
//! that writes of a `compositeId` collection go to ([`Leaders`]).
//!
//! Where the cluster state cannot be used (not answered, a shard without a readable replica, a
//! replica's address the worker cannot reach, as behind a proxy that publishes only the collection
//! URL), one line says so and the store reads through the collection URL as before.

use tracing::info;

use super::leaders::Leaders;
use super::shards::{log_fallback, ShardReader, Source};
use super::SolrStore;
use crate::solr_client::cloud::{cluster_status, Cluster};
use crate::solr_client::Client;

impl SolrStore {
    /// Reads the SolrCloud collection this store's URL names shard by shard: each shard from one
    /// replica's core (the leader first), all at once. Keeps the store as it is (reads through the
    /// collection URL), with one line saying why, when the cluster state cannot be used.
    pub async fn with_cloud(mut self) -> Self {
        match self.cloud_sources().await {
            Ok((cluster, sources)) => {
                info!(
                    collection = %cluster.collection,
                    shards = sources.len(),
                    router = %cluster.router,
                    "SolrCloud: reading shard by shard"
                );
                self.shards = Some(ShardReader::new(
                    sources,
                    true,
                    &self.id_field,
                    self.export_fields.clone(),
                ));
                match Leaders::of(&cluster, &self.client) {
                    Ok(leaders) => {
                        info!(
                            shards = leaders.len(),
                            "SolrCloud: writing each update to its shard's leader"
                        );
                        self.leaders = Some(leaders);
                    }
                    Err(why) => info!("SolrCloud: {why}; writing through the collection URL"),
                }
            }
            Err(why) => {
                log_fallback(&why);
                // `/export` through the collection answers one shard: never use it there.
                self.shards = None;
                self.export_fields = None;
            }
        }
        self
    }

    /// The cluster's layout and a source per shard whose first replica answers.
    async fn cloud_sources(&self) -> Result<(Cluster, Vec<Source>), String> {
        let cluster = match cluster_status(&self.client).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(e.to_string()),
            Err(e) => return Err(format!("no cluster state ({e})")),
        };
        let mut sources = Vec::new();
        for shard in &cluster.shards {
            let mut replicas: Vec<Client> = Vec::new();
            for r in &shard.replicas {
                let c = self
                    .client
                    .for_core(&r.core_url, 1)
                    .map_err(|e| format!("replica {}: {e}", r.core_url))?;
                replicas.push(c);
            }
            // The first replica must answer: addresses a proxy hides are not reachable here.
            let probe = vec![
                ("q".to_owned(), "*:*".to_owned()),
                ("rows".to_owned(), "0".to_owned()),
                ("distrib".to_owned(), "false".to_owned()),
            ];
            if let Err(e) = replicas[0].select(probe).await {
                return Err(format!(
                    "shard {}'s replica {} does not answer ({e})",
                    shard.name, shard.replicas[0].core_url
                ));
            }
            sources.push(Source {
                name: shard.name.clone(),
                replicas,
            });
        }
        Ok((cluster, sources))
    }
}
