//! The Solr store: the seam's operations as Solr requests, through [`crate::solr::Client`].
//!
//! | operation     | request                                                                    |
//! |---------------|----------------------------------------------------------------------------|
//! | `read_page`   | `/select` `q=*:*`, `fq`, `fl`, `sort=<id> asc`, `rows`, `cursorMark`        |
//! | `facet`       | `/select` `rows=0`, `json.facet` terms (typed values, unlike `facet.field`) |
//! | `bucket_stats`| the same with `min()`/`max()` per bucket                                    |
//! | `get`         | real-time `/get` with repeated `id`                                         |
//! | `update`      | `/update?versions=true`, a JSON array of atomic updates with `_version_`    |
//! | `refresh`     | `/update?softCommit=true`: a new searcher, so a later round reads its writes |
//! | `commit`      | `/update?commit=true` or `softCommit=true`; `commitWithin` rides on updates |
//!
//! Reading overlaps the engine's work: once a page arrives, the next one (whose cursor mark is now
//! known) is requested in the background while the engine signs and writes the current one.
//!
//! A batch Solr refuses with 409 stops at the conflicting document: those before it are applied,
//! those after it are not (see `../shared/solr-transcripts`, surprise 6). The store reports the named
//! document as a conflict and sends the rest again; the applied ones are reported without a new
//! version, so the engine's later update of them fails its guard and the next round reads them anew.

use std::sync::Mutex;

use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tracing::debug;

use super::{
    AtomicUpdate, Bucket, CommitMode, Doc, FacetQuery, Filter, Page, ReadQuery, StatsBucket,
    StatsQuery, Store, StoreError, UpdateOutcome,
};
use crate::solr::error::conflict_id;
use crate::solr::{Client, SolrError};

impl From<SolrError> for StoreError {
    fn from(e: SolrError) -> Self {
        if e.is_unreachable() {
            StoreError::Unreachable(e.to_string())
        } else {
            StoreError::Refused(e.to_string())
        }
    }
}

/// A Solr core behind the [`Store`] seam.
pub struct SolrStore {
    client: Client,
    id_field: String,
    version_field: String,
    /// `--commit within:MS`: sent with every update instead of a commit at the end.
    commit_within: Option<u64>,
    /// Read the next page while the current one is being worked on.
    read_ahead: bool,
    prefetch: Mutex<Option<Prefetch>>,
}

struct Prefetch {
    query: ReadQuery,
    mark: String,
    handle: JoinHandle<Result<Page, StoreError>>,
}

impl SolrStore {
    /// A store over `client`'s core. `read_ahead` needs a multi-threaded tokio runtime to pay off.
    pub fn new(
        client: Client,
        id_field: &str,
        version_field: &str,
        commit: CommitMode,
        read_ahead: bool,
    ) -> Self {
        SolrStore {
            client,
            id_field: id_field.to_owned(),
            version_field: version_field.to_owned(),
            commit_within: match commit {
                CommitMode::Within(ms) => Some(ms),
                _ => None,
            },
            read_ahead,
            prefetch: Mutex::new(None),
        }
    }

    fn update_params(&self) -> Vec<(String, String)> {
        let mut p = vec![("versions".to_owned(), "true".to_owned())];
        if let Some(ms) = self.commit_within {
            p.push(("commitWithin".to_owned(), ms.to_string()));
        }
        p
    }

    /// Sends one batch and reads the new versions from `adds`.
    async fn send_batch(&self, batch: &[AtomicUpdate]) -> Result<Vec<(String, i64)>, SolrError> {
        let mut body = Vec::with_capacity(batch.len() * 128);
        body.push(b'[');
        for (i, u) in batch.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend(u.json_bytes(&self.id_field, &self.version_field));
        }
        body.push(b']');
        let answer = self.client.update(self.update_params(), body).await?;
        let mut versions = Vec::new();
        if let Some(adds) = answer.get("adds").and_then(Value::as_array) {
            for pair in adds.chunks(2) {
                if let [id, v] = pair {
                    let id = match id {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if let Some(v) = v.as_i64() {
                        versions.push((id, v));
                    }
                }
            }
        }
        Ok(versions)
    }
}

fn select_params(id_field: &str, query: &ReadQuery, mark: &str) -> Vec<(String, String)> {
    let mut fields = query.fields.clone();
    if !fields.iter().any(|f| f == id_field || f == "*") {
        fields.insert(0, id_field.to_owned());
    }
    let mut p = vec![
        ("q".to_owned(), "*:*".to_owned()),
        ("fl".to_owned(), fields.join(",")),
        ("sort".to_owned(), format!("{id_field} asc")),
        ("rows".to_owned(), query.rows.max(1).to_string()),
        ("cursorMark".to_owned(), mark.to_owned()),
    ];
    for fq in query.filter.to_solr_fqs() {
        p.push(("fq".to_owned(), fq));
    }
    p
}

async fn fetch_page(
    client: Client,
    id_field: String,
    query: ReadQuery,
    mark: String,
) -> Result<Page, StoreError> {
    let answer = client
        .select(select_params(&id_field, &query, &mark))
        .await?;
    let bad = |what: &str| {
        StoreError::Refused(format!(
            "{}/select answered without {what}",
            client.core_url()
        ))
    };
    let docs: Vec<Doc> = answer
        .pointer("/response/docs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("response.docs"))?
        .iter()
        .filter_map(|d| d.as_object().cloned())
        .collect();
    let next_mark = answer
        .get("nextCursorMark")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("nextCursorMark"))?;
    // The end: the mark repeats. A short page is the end too, which saves the extra empty request
    // Solr would need to repeat the mark.
    let done = next_mark == mark || docs.len() < query.rows.max(1);
    Ok(Page {
        docs,
        next: (!done).then(|| next_mark.to_owned()),
    })
}

impl Store for SolrStore {
    fn max_lookup_values(&self) -> usize {
        // Well under Solr's default maxBooleanClauses of 1024, leaving room for the user's filter.
        500
    }

    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        let mark = cursor.unwrap_or("*").to_owned();
        let ready = {
            let mut slot = self.prefetch.lock().expect("prefetch lock");
            match slot.take() {
                Some(p) if p.query == *query && p.mark == mark => Some(p.handle),
                Some(p) => {
                    p.handle.abort();
                    None
                }
                None => None,
            }
        };
        let prefetched = match ready {
            Some(handle) => handle
                .await
                .map_err(|e| debug!(error = %e, "read-ahead task ended early; reading again"))
                .ok(),
            None => None,
        };
        let page = match prefetched {
            Some(page) => page?,
            None => self.fetch(query, mark).await?,
        };
        if self.read_ahead {
            if let Some(next) = &page.next {
                let handle = tokio::spawn(self.fetch(query, next.clone()));
                *self.prefetch.lock().expect("prefetch lock") = Some(Prefetch {
                    query: query.clone(),
                    mark: next.clone(),
                    handle,
                });
            }
        }
        Ok(page)
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        let facet = json!({"f": {
            "type": "terms", "field": query.field, "limit": -1, "mincount": query.mincount.max(1),
        }});
        let answer = self.json_facet(&query.filter, facet).await?;
        Ok(buckets(&answer).iter().filter_map(bucket).collect())
    }

    async fn bucket_stats(&self, query: &StatsQuery) -> Result<Vec<StatsBucket>, StoreError> {
        let facet = json!({"f": {
            "type": "terms", "field": query.field, "limit": -1, "mincount": query.mincount.max(1),
            "facet": {
                "lo": format!("min({})", query.stat_field),
                "hi": format!("max({})", query.stat_field),
            },
        }});
        let answer = self.json_facet(&query.filter, facet).await?;
        Ok(buckets(&answer)
            .iter()
            .filter_map(|b| {
                Some(StatsBucket {
                    bucket: bucket(b)?,
                    min: b.get("lo").and_then(Value::as_i64),
                    max: b.get("hi").and_then(Value::as_i64),
                })
            })
            .collect())
    }

    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut fl = fields.to_vec();
        if !fl.iter().any(|f| *f == self.id_field || f == "*") {
            fl.insert(0, self.id_field.clone());
        }
        let mut params: Vec<(String, String)> =
            ids.iter().map(|id| ("id".to_owned(), id.clone())).collect();
        params.push(("fl".to_owned(), fl.join(",")));
        let answer = self.client.realtime_get(params).await?;
        // One `id` gives `{"doc":…}`, several give `{"response":{"docs":[…]}}`.
        let docs = if let Some(list) = answer.pointer("/response/docs").and_then(Value::as_array) {
            list.iter().filter_map(|d| d.as_object().cloned()).collect()
        } else {
            answer
                .get("doc")
                .and_then(Value::as_object)
                .cloned()
                .into_iter()
                .collect()
        };
        Ok(docs)
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        let mut outcome = UpdateOutcome::default();
        let mut rest = batch;
        while !rest.is_empty() {
            match self.send_batch(rest).await {
                Ok(versions) => {
                    outcome.applied += rest.len();
                    outcome.versions.extend(versions);
                    break;
                }
                Err(e) => {
                    let Some(message) = e.conflict_message() else {
                        return Err(e.into());
                    };
                    let at =
                        conflict_id(message).and_then(|id| rest.iter().position(|u| u.id == id));
                    match at {
                        Some(k) => {
                            debug!(id = %rest[k].id, applied_before = k, "version conflict");
                            // Applied, but their new versions are unknown.
                            outcome.applied += k;
                            outcome.conflicts.push(rest[k].id.clone());
                            rest = &rest[k + 1..];
                        }
                        None if rest.len() > 1 => {
                            // A message that names no document of the batch: one at a time, so each
                            // conflict is known.
                            for u in rest {
                                let one = Box::pin(self.update(std::slice::from_ref(u))).await?;
                                outcome.applied += one.applied;
                                outcome.conflicts.extend(one.conflicts);
                                outcome.versions.extend(one.versions);
                            }
                            break;
                        }
                        None => {
                            outcome.conflicts.push(rest[0].id.clone());
                            break;
                        }
                    }
                }
            }
        }
        Ok(outcome)
    }

    async fn refresh(&self) -> Result<(), StoreError> {
        let params = vec![("softCommit".to_owned(), "true".to_owned())];
        self.client.update(params, b"[]".to_vec()).await?;
        Ok(())
    }

    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        let param = match mode {
            CommitMode::Hard => "commit",
            CommitMode::Soft => "softCommit",
            CommitMode::Within(_) | CommitMode::None => return Ok(()),
        };
        self.client
            .update(vec![(param.to_owned(), "true".to_owned())], b"[]".to_vec())
            .await?;
        Ok(())
    }

    fn describe(&self) -> String {
        format!("solr {}", self.client.core_url())
    }
}

impl SolrStore {
    /// The read of one page, as a future that owns what it needs (it may run as a spawned task).
    fn fetch(
        &self,
        query: &ReadQuery,
        mark: String,
    ) -> impl std::future::Future<Output = Result<Page, StoreError>> + Send + 'static {
        fetch_page(
            self.client.clone(),
            self.id_field.clone(),
            query.clone(),
            mark,
        )
    }

    async fn json_facet(&self, filter: &Filter, facet: Value) -> Result<Value, StoreError> {
        let mut params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("rows".to_owned(), "0".to_owned()),
            ("json.facet".to_owned(), facet.to_string()),
        ];
        for fq in filter.to_solr_fqs() {
            params.push(("fq".to_owned(), fq));
        }
        Ok(self.client.select(params).await?)
    }
}

/// A `json.facet` bucket's value and count.
fn bucket(b: &Value) -> Option<Bucket> {
    Some(Bucket {
        value: b.get("val")?.clone(),
        count: b.get("count")?.as_u64()?,
    })
}

/// The buckets of facet `f`; none when no document matched (Solr then sends only `{"count":0}`).
fn buckets(answer: &Value) -> Vec<Value> {
    answer
        .pointer("/facets/f/buckets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_asks_for_the_id_sorted_by_it() {
        let q = ReadQuery {
            filter: Filter::Term {
                field: "exact_signature_l".into(),
                value: "-2401053093171183889".into(),
            },
            fields: vec!["sku".into(), "_version_".into()],
            rows: 500,
        };
        let p = select_params("id", &q, "*");
        let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("fl"), Some("id,sku,_version_"));
        assert_eq!(get("sort"), Some("id asc"));
        assert_eq!(get("cursorMark"), Some("*"));
        assert_eq!(get("rows"), Some("500"));
        // Negative numbers are quoted, as Solr requires.
        assert_eq!(
            get("fq"),
            Some("exact_signature_l:\"-2401053093171183889\"")
        );
        let all = select_params(
            "id",
            &ReadQuery {
                filter: Filter::All,
                ..q
            },
            "AoE",
        );
        assert!(all.iter().all(|(n, _)| n != "fq"));
    }
}
