//! The Solr store: the seam's operations as Solr requests, through [`crate::solr_client::Client`].
//!
//! | operation     | request                                                                    |
//! |---------------|----------------------------------------------------------------------------|
//! | `read_page`   | `/select` `q=*:*`, `fq`, `fl`, `sort=<id> asc`, `rows`, `cursorMark`        |
//! | (full reads)  | shard by shard (`shards`): each core's `/export` or `cursorMark`, merged by id |
//! | `facet`       | `/select` `rows=0`, `json.facet` terms (typed values, unlike `facet.field`) |
//! | `get`         | real-time `/get` with repeated `id`                                         |
//! | `update`      | `/update?versions=true`, a JSON array of atomic updates with `_version_`    |
//! | (on SolrCloud) | the same, cut by shard, to each shard's leader core (`leaders`)            |
//! | `refresh`     | `/update?softCommit=true`: a new searcher, so a later round reads its writes |
//! | `commit`      | `/update?commit=true` or `softCommit=true`; `commitWithin` rides on updates |
//!
//! Submodules: [`filter`] renders a [`Filter`] as `fq` parameters, [`cost`] prices the store's work
//! (measured on a real Solr), `shards` reads every shard of a collection at once (a standalone
//! core's `/export` too), `cloud` finds a SolrCloud collection's shards and replicas, and
//! `leaders` sends each update of a `compositeId` collection to its shard's leader core, and
//! `update` sends the updates and learns their versions and conflicts. A [`SolrError`] becomes a
//! [`StoreError`] of the kind it is (see [`kind_of`]), with the whole error kept as its source, so
//! its message is printed unchanged.
//!
//! Reading overlaps the engine's work: once a page arrives, the next one (whose cursor mark is now
//! known) is requested in the background while the engine signs and writes the current one.
//!
//! Updates, their versions and their conflicts: see the `update` submodule.

mod cloud;
pub mod cost;
pub mod filter;
mod health;
mod leaders;
mod shards;
mod update;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tracing::debug;

use super::{
    AtomicUpdate, Bucket, CommitMode, CostModel, Doc, FacetQuery, Filter, Fingerprint, Page,
    ReadQuery, Store, StoreError, StoreErrorKind, UpdateOutcome, Via,
};
use crate::solr_client::error::TransportKind;
use crate::solr_client::{Client, SolrError};

use update::MIN_HALF;

pub use cost::SOLR_COSTS;

/// What kind of store failure a Solr error is.
///
/// | Solr error                                              | kind          |
/// |---------------------------------------------------------|---------------|
/// | an answer over `--max-response-bytes`                   | `TooLarge`    |
/// | a timeout (alone, or the last of the retries)           | `Timeout`     |
/// | no answer, a 5xx, retries run out                       | `Unreachable` |
/// | 409                                                     | `Conflict`    |
/// | an answer that is not Solr's                            | `Input`       |
/// | 401/403, 404, another 4xx, a 5xx that says "cannot parse" | `Rejected`  |
pub fn kind_of(e: &SolrError) -> StoreErrorKind {
    let last = match e {
        SolrError::Exhausted { last, .. } => last,
        e => e,
    };
    match last {
        SolrError::TooLarge { .. } => StoreErrorKind::TooLarge,
        SolrError::Transport {
            kind: TransportKind::Timeout,
            ..
        } => StoreErrorKind::Timeout,
        _ if e.is_unreachable() => StoreErrorKind::Unreachable,
        SolrError::Conflict { .. } => StoreErrorKind::Conflict,
        SolrError::BadResponse { .. } => StoreErrorKind::Input,
        _ => StoreErrorKind::Rejected,
    }
}

/// The whole Solr error becomes the source: its message (URL, status, what to do) is the store
/// error's.
impl From<SolrError> for StoreError {
    fn from(e: SolrError) -> Self {
        StoreError::new(kind_of(&e), e)
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
    /// Fields `/export` can stream (they have docValues); `None`: never use `/export`.
    export_fields: Option<HashSet<String>>,
    /// Full reads shard by shard (`shards`): a standalone core's `/export`, or every shard of a
    /// SolrCloud collection at once.
    shards: Option<shards::ShardReader>,
    /// Writes to each shard's leader core (a SolrCloud collection with the `compositeId` router);
    /// `None`: through the core or collection URL.
    leaders: Option<leaders::Leaders>,
    /// Its probe showed a standalone core ([`SolrStore::with_standalone`]), whose index
    /// fingerprint is the index's. Not known: no fingerprint; a SolrCloud collection: the sum of
    /// its shard leaders' (with `leaders`).
    standalone: bool,
    /// A filter and how many documents it selected when the store was opened (`numFound`).
    count: Option<(Filter, u64)>,
    /// The health probe's client (tried once, with a short time limit) and that limit.
    quick: Option<(Client, Duration)>,
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
            export_fields: None,
            shards: None,
            leaders: None,
            standalone: false,
            count: None,
            quick: None,
        }
    }

    /// Tells the store that its probe's answer was a standalone core's (no SolrCloud header), so
    /// that it gives Solr's index fingerprint ([`Store::fingerprint`]).
    pub fn with_standalone(mut self) -> Self {
        self.standalone = true;
        self
    }

    /// Sends [`Store::ping`]'s probe through `quick` (a client that tries once, within `timeout`),
    /// so that a health probe waits seconds, not the retries' minutes.
    pub fn with_ping(mut self, quick: Client, timeout: Duration) -> Self {
        self.quick = Some((quick, timeout));
        self
    }

    /// Lets light reads go through `/export` when every field they ask for is one of `fields` (fields
    /// with docValues) and they hold no lookup. On a SolrCloud collection, whose `/export` answers
    /// the receiving shard's documents alone, call [`SolrStore::with_cloud`] after this: it reads
    /// each shard's core instead, or turns `/export` off.
    pub fn with_export(mut self, fields: impl IntoIterator<Item = String>) -> Self {
        let fields: HashSet<String> = fields.into_iter().collect();
        let core = shards::Source {
            name: "core".to_owned(),
            replicas: vec![self.client.clone()],
        };
        self.shards = Some(shards::ShardReader::new(
            vec![core],
            false,
            &self.id_field,
            Some(fields.clone()),
        ));
        self.export_fields = Some(fields);
        self
    }

    /// Tells the store that `filter` selected `documents` when it was opened (the `numFound` of a
    /// `rows=0` probe), for [`Store::known_count`].
    pub fn with_count(mut self, filter: Filter, documents: u64) -> Self {
        self.count = Some((filter, documents));
        self
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
    for fq in filter::fqs(&query.filter) {
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
    let (docs, next_mark) = cursor_page(&answer, &client)?;
    // The end: the mark repeats. A short page is the end too, which saves the extra empty request
    // Solr would need to repeat the mark.
    let done = next_mark == mark || docs.len() < query.rows.max(1);
    Ok(Page {
        docs,
        next: (!done).then_some(next_mark),
        via: Via::Cursor,
        derived: crate::store::Served::default(),
    })
}

/// The documents of a `cursorMark` page and its `nextCursorMark`.
fn cursor_page(answer: &Value, client: &Client) -> Result<(Vec<Doc>, String), SolrError> {
    let bad = |what: &str| SolrError::BadResponse {
        url: format!("{}/select", client.core_url()),
        reason: format!("no {what} in the answer"),
    };
    let docs = answer
        .pointer("/response/docs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("response.docs"))?
        .iter()
        .filter_map(|d| d.as_object().cloned())
        .collect();
    let next = answer
        .get("nextCursorMark")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("nextCursorMark"))?
        .to_owned();
    Ok((docs, next))
}

#[async_trait]
impl Store for SolrStore {
    fn max_lookup_values(&self) -> usize {
        // A lookup is one `{!terms}` term-set query, which `maxBooleanClauses` does not limit; the
        // bound keeps a request's form well under Solr's 2 MB `formdataUploadLimitInKB` (URLs of a
        // few hundred bytes at most).
        2000
    }

    async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
        Ok(self.fetch(query, "*".to_owned()).await?.docs)
    }

    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        if let Some(reader) = &self.shards {
            if let Some(via) = reader.takes(query) {
                return reader.read_page(query, cursor, via).await;
            }
        }
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
        let facet = match query.limit {
            None => json!({"f": {
                "type": "terms", "field": query.field, "limit": -1, "mincount": query.mincount.max(1),
            }}),
            // The top values: on SolrCloud `refine` makes their counts exact.
            Some(n) => json!({"f": {
                "type": "terms", "field": query.field, "limit": n, "mincount": query.mincount.max(1),
                "sort": "count desc", "refine": true,
            }}),
        };
        let answer = self.json_facet(&query.filter, facet).await?;
        Ok(buckets(&answer).iter().filter_map(bucket).collect())
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
        let mut docs: Vec<Doc> =
            if let Some(list) = answer.pointer("/response/docs").and_then(Value::as_array) {
                list.iter().filter_map(|d| d.as_object().cloned()).collect()
            } else {
                answer
                    .get("doc")
                    .and_then(Value::as_object)
                    .cloned()
                    .into_iter()
                    .collect()
            };
        // A SolrCloud collection answers shard by shard: put the documents in the order asked.
        if docs.len() > 1 {
            let at: HashMap<&str, usize> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| (id.as_str(), i))
                .collect();
            let id_field = &self.id_field;
            docs.sort_by_key(|d| {
                let id = d.get(id_field).and_then(Value::as_str).unwrap_or("");
                at.get(id).copied().unwrap_or(usize::MAX)
            });
        }
        Ok(docs)
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        if let Some(parts) = self
            .leaders
            .as_ref()
            .and_then(|l| l.route(batch, &self.client))
        {
            return self.update_routed(parts).await;
        }
        if batch.len() < 2 * MIN_HALF {
            return self.update_one(batch).await;
        }
        // Two requests in flight: Solr applies atomic updates faster over two connections than one
        // (0.60 against 0.69 ms a document, measured). The halves hold different documents, so
        // their order does not matter; each learns its own outcome.
        let (a, b) = batch.split_at(batch.len() / 2);
        let (a, b) = tokio::join!(self.update_one(a), self.update_one(b));
        let (mut a, b) = (a?, b?);
        a.applied += b.applied;
        a.conflicts.extend(b.conflicts);
        a.versions.extend(b.versions);
        Ok(a)
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

    fn fingerprints(&self) -> bool {
        self.standalone || self.leaders.as_ref().is_some_and(|l| l.cores().is_some())
    }

    /// A standalone core's own; a SolrCloud collection's is the sum of its shards' (each leader
    /// core's, which has every update of its shard applied): the counts and the wrapping sums of
    /// the versions' hashes add up, as the shards hold different documents.
    async fn fingerprint(&self, max_version: i64) -> Result<Option<Fingerprint>, StoreError> {
        let cores: Vec<&Client> = match (&self.leaders, self.standalone) {
            (_, true) => vec![&self.client],
            (Some(leaders), false) => match leaders.cores() {
                Some(cores) => cores.iter().collect(),
                None => return Ok(None),
            },
            (None, false) => return Ok(None),
        };
        let asks = cores.into_iter().map(|c| c.fingerprint(max_version));
        let mut sum = Fingerprint {
            versions: 0,
            hash: 0,
            // Solr's for an empty core, as `Fingerprint::of` no versions.
            max_seen: 0,
        };
        for got in leaders::join_all(asks.collect()).await {
            let Some((versions, hash, max_seen)) = got? else {
                return Ok(None);
            };
            sum.versions += versions;
            sum.hash = sum.hash.wrapping_add(hash);
            sum.max_seen = sum.max_seen.max(max_seen);
        }
        Ok(Some(sum))
    }

    async fn change_mark(&self, filter: &Filter) -> Result<String, StoreError> {
        let facet = json!({ "v": format!("max({})", self.version_field) });
        let answer = self.json_facet(filter, facet).await?;
        let count = answer.pointer("/response/numFound").cloned();
        let max = answer.pointer("/facets/v").cloned();
        Ok(format!(
            "{}/{}",
            count.unwrap_or(Value::Null),
            max.unwrap_or(Value::Null)
        ))
    }

    fn describe(&self) -> String {
        format!("solr {}", self.client.core_url())
    }

    fn known_count(&self, filter: &Filter) -> Option<u64> {
        self.count
            .as_ref()
            .filter(|(f, _)| f == filter)
            .map(|&(_, n)| n)
    }

    fn requests(&self) -> u64 {
        self.client.requests_sent()
    }

    fn needs_versions(&self) -> bool {
        true
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let (client, timeout) = match &self.quick {
            Some((client, timeout)) => (client, *timeout),
            None => (&self.client, Duration::ZERO),
        };
        let params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("rows".to_owned(), "0".to_owned()),
        ];
        client
            .select(params)
            .await
            .map(|_| ())
            .map_err(|e| health::health_error(client.core_url(), timeout, &e))
    }

    async fn count(&self, filter: &Filter) -> Result<Option<u64>, StoreError> {
        let mut params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("rows".to_owned(), "0".to_owned()),
        ];
        for fq in filter::fqs(filter) {
            params.push(("fq".to_owned(), fq));
        }
        let answer = self.client.select(params).await?;
        Ok(answer.pointer("/response/numFound").and_then(Value::as_u64))
    }

    async fn max_version(
        &self,
        filter: &Filter,
        version_field: &str,
    ) -> Result<Option<i64>, StoreError> {
        let mut params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("rows".to_owned(), "1".to_owned()),
            ("fl".to_owned(), version_field.to_owned()),
            ("sort".to_owned(), format!("{version_field} desc")),
        ];
        for fq in filter::fqs(filter) {
            params.push(("fq".to_owned(), fq));
        }
        let answer = self.client.select(params).await?;
        Ok(answer
            .pointer("/response/docs/0")
            .and_then(|d| d.get(version_field))
            .and_then(Value::as_i64))
    }

    async fn count_ranges(
        &self,
        filter: &Filter,
        field: &str,
        ranges: &[(i64, i64)],
    ) -> Result<Option<Vec<u64>>, StoreError> {
        // One range facet: one pass over the field's docValues, whatever the number of ranges
        // (query facets would scan once per range, or depend on the filter cache).
        let list: Vec<Value> = ranges
            .iter()
            .map(|&(lo, hi)| json!({"from": lo, "to": hi, "inclusive_to": true}))
            .collect();
        let facet = json!({ "v": { "type": "range", "field": field, "ranges": list } });
        let answer = self.json_facet(filter, facet).await?;
        let buckets = answer
            .pointer("/facets/v/buckets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if answer.pointer("/response/numFound").and_then(Value::as_u64) == Some(0) {
            return Ok(Some(vec![0; ranges.len()]));
        }
        if buckets.len() != ranges.len() {
            return Err(StoreError::input(
                "Solr's range facet",
                format!("{} buckets for {} ranges", buckets.len(), ranges.len()),
            ));
        }
        Ok(Some(
            buckets
                .iter()
                .map(|b| b.get("count").and_then(Value::as_u64).unwrap_or(0))
                .collect(),
        ))
    }

    fn cost_model(&self) -> CostModel {
        SOLR_COSTS
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
        for fq in filter::fqs(filter) {
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
    fn solr_errors_keep_their_kind_and_message() {
        use reqwest::StatusCode;
        let url = || "http://127.0.0.1:8983/solr/c/select".to_owned();
        let transport = |kind| SolrError::Transport {
            url: url(),
            reason: "r".into(),
            kind,
        };
        let server = |message: &str| SolrError::Server {
            url: url(),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        };
        let gave_up = |last| SolrError::Exhausted {
            attempts: 3,
            last: Box::new(last),
        };
        let table = [
            (
                transport(TransportKind::Connect),
                StoreErrorKind::Unreachable,
            ),
            (transport(TransportKind::Timeout), StoreErrorKind::Timeout),
            (
                gave_up(transport(TransportKind::Timeout)),
                StoreErrorKind::Timeout,
            ),
            (gave_up(server("boom")), StoreErrorKind::Unreachable),
            (
                server("org.apache.solr.search.SyntaxError: Cannot parse 'a:('"),
                StoreErrorKind::Rejected,
            ),
            (
                SolrError::TooLarge {
                    url: url(),
                    limit: 10,
                },
                StoreErrorKind::TooLarge,
            ),
            (SolrError::NotFound { url: url() }, StoreErrorKind::Rejected),
            (
                SolrError::Auth {
                    url: url(),
                    status: StatusCode::UNAUTHORIZED,
                },
                StoreErrorKind::Rejected,
            ),
            (
                SolrError::Conflict {
                    url: url(),
                    message: "version conflict".into(),
                    document: None,
                    adds: Vec::new(),
                },
                StoreErrorKind::Conflict,
            ),
            (
                SolrError::BadResponse {
                    url: url(),
                    reason: "x".into(),
                },
                StoreErrorKind::Input,
            ),
        ];
        for (solr, kind) in table {
            let message = solr.to_string();
            let unreachable = solr.is_unreachable();
            let e = StoreError::from(solr);
            assert_eq!(e.kind(), kind, "{message}");
            assert_eq!(e.to_string(), message);
            assert_eq!(e.is_unreachable(), unreachable, "{message}");
            assert!(std::error::Error::source(&e).is_none());
            assert!(e.downcast_ref::<SolrError>().is_some());
        }
    }

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
