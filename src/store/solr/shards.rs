//! Full reads and SolrCloud lookups shard by shard: every shard of a SolrCloud collection (or a
//! standalone core, one "shard") is read at once, each from one of its replicas' cores with
//! `distrib=false`, and the streams are merged by id into the one stream of pages the engine
//! consumes. A lookup on SolrCloud costs each shard one phase instead of the collection's two
//! (find the ids, then fetch their fields); passes B and C keep two lookups going at once.
//!
//! ```text
//!  shard1 leader core ─ /export (or cursorMark) sort=id asc, distrib=false ─▶ task ─▶ channel ─┐
//!  shard2 leader core ─ …                                                 ─▶ task ─▶ channel ─┼▶ merge by id ─▶ pages
//!  shardN …                                                                                   ─┘
//! ```
//!
//! - Light reads whose fields all have docValues stream through each core's `/export`; other reads
//!   (the texts, or a field without docValues) page through each core's `cursorMark`. Either way
//!   the shards are read in parallel, each a page or two ahead of the engine.
//! - Pages come out in id order across all shards, as a `cursorMark` read through the collection
//!   gives them, so the engine sees the same order in every pass. The cursor handed to the engine
//!   is the last id given out (`after:s:ID`), and a read that starts at one asks each shard for the
//!   ids after it (`fq=id:{"ID" TO *]`): any read can go on from any cursor, whatever fields the
//!   engine asks for next.
//! - A shard's read that breaks (the node went away, the connection dropped, a 5xx) goes on from
//!   the last id that shard handed out, on the shard's next replica (a standalone core: the same
//!   core again), a few times before the run fails. Nothing is read twice or skipped: the ids
//!   of a shard come sorted, and the resume asks for those after the last one.
//! - Versions come from the replica read; the engine's updates are still guarded by them at the
//!   leader, so a replica that lags costs a conflict, never a lost write.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{info, warn};

use super::{cursor_page, filter, select_params};
use crate::solr_client::error::TransportKind;
use crate::solr_client::export::{ExportError, Splitter};
use crate::solr_client::{Client, SolrError};
use crate::store::{Doc, Page, ReadQuery, StoreError, StoreErrorKind, Via};

/// One shard: the clients of its readable replicas, the leader first.
#[derive(Clone)]
pub(super) struct Source {
    /// The shard's name, for logs.
    pub(super) name: String,
    /// Its replicas' cores.
    pub(super) replicas: Vec<Client>,
}

/// How many times one shard's read may break and go on before the run fails.
const MAX_RESUMES: usize = 4;

/// Reads shard by shard. See the module documentation.
pub(super) struct ShardReader {
    sources: Vec<Source>,
    /// Send `distrib=false` (SolrCloud replicas; a standalone core needs none).
    cloud: bool,
    id_field: String,
    /// Fields `/export` can stream; `None`: cursorMark pages only.
    export_fields: Option<HashSet<String>>,
    /// The reads in progress, the newest last: at most [`ShardReader::READS`] (passes B and C keep
    /// two lookups in flight); each is taken out while its page is read.
    reads: std::sync::Mutex<Vec<Merge>>,
}

/// One message of a shard's task: a page of documents in id order, or the end.
type Msg = Result<Option<Vec<(IdKey, Doc)>>, StoreError>;

/// A read in progress.
struct Merge {
    query: ReadQuery,
    /// The cursor of the next page (the last id handed out).
    cursor: Option<String>,
    via: Via,
    shards: Vec<Stream>,
}

struct Stream {
    rx: mpsc::Receiver<Msg>,
    buf: VecDeque<(IdKey, Doc)>,
    done: bool,
    task: JoinHandle<()>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An id as Solr sorts it: a string by its UTF-8 bytes (as `str` compares), a number by value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum IdKey {
    /// A numeric id.
    Num(i64),
    /// A string id.
    Str(String),
}

impl IdKey {
    fn of(doc: &Doc, id_field: &str) -> Option<IdKey> {
        match doc.get(id_field)? {
            Value::String(s) => Some(IdKey::Str(s.clone())),
            Value::Number(n) => n.as_i64().map(IdKey::Num),
            _ => None,
        }
    }

    /// The cursor after this id.
    fn cursor(&self) -> String {
        match self {
            IdKey::Num(n) => format!("after:n:{n}"),
            IdKey::Str(s) => format!("after:s:{s}"),
        }
    }

    fn from_cursor(c: &str) -> Option<IdKey> {
        let rest = c.strip_prefix("after:")?;
        if let Some(s) = rest.strip_prefix("s:") {
            return Some(IdKey::Str(s.to_owned()));
        }
        rest.strip_prefix("n:")?.parse().ok().map(IdKey::Num)
    }

    /// The filter for the ids after this one, as an `fq`.
    fn after_fq(&self, id_field: &str) -> String {
        let v = match self {
            IdKey::Num(n) => n.to_string(),
            IdKey::Str(s) => s.clone(),
        };
        format!("{id_field}:{{{} TO *]", filter::quote(&v))
    }
}

impl ShardReader {
    /// A reader of `sources`; `cloud`: they are SolrCloud replicas (read with `distrib=false`).
    pub(super) fn new(
        sources: Vec<Source>,
        cloud: bool,
        id_field: &str,
        export_fields: Option<HashSet<String>>,
    ) -> Self {
        ShardReader {
            sources,
            cloud,
            id_field: id_field.to_owned(),
            export_fields,
            reads: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// How this reader reads `query`: `None` when it does not. A lookup on SolrCloud is read from
    /// each shard's core by `cursorMark` (one phase each, all shards at once, instead of the
    /// collection's two-phase search); on a standalone core it goes through the core's search. A
    /// standalone core reads here only what `/export` can stream.
    pub(super) fn takes(&self, query: &ReadQuery) -> Option<Via> {
        if query.filter.has_lookup() {
            return self.cloud.then_some(Via::Cursor);
        }
        let export = self.export_fields.as_ref().is_some_and(|ok| {
            query.fields.iter().all(|f| ok.contains(f)) && ok.contains(&self.id_field)
        });
        match (export, self.cloud) {
            (true, _) => Some(Via::Export),
            (false, true) => Some(Via::Cursor),
            (false, false) => None,
        }
    }

    /// The page of `query` at `cursor`; `via` is what [`ShardReader::takes`] said.
    pub(super) async fn read_page(
        &self,
        query: &ReadQuery,
        cursor: Option<&str>,
        via: Via,
    ) -> Result<Page, StoreError> {
        let going = cursor.and_then(|c| {
            let mut reads = self.reads.lock().expect("reads");
            let at = reads
                .iter()
                .position(|m| m.query == *query && m.cursor.as_deref() == Some(c))?;
            Some(reads.remove(at))
        });
        let mut merge = match going {
            Some(merge) => merge,
            None => {
                let after = match cursor {
                    None => None,
                    Some(c) => Some(IdKey::from_cursor(c).ok_or_else(|| {
                        StoreError::unsupported(format!("a shard read cannot resume at {c:?}"))
                    })?),
                };
                self.start(query, after, via)
            }
        };
        let page = merge.next_page(query.rows.max(1)).await;
        if let Ok(Page {
            next: Some(next), ..
        }) = &page
        {
            merge.cursor = Some(next.clone());
            let mut reads = self.reads.lock().expect("reads");
            reads.push(merge);
            // The oldest read given up (its tasks stop): the pages held stay bounded.
            while reads.len() > Self::READS {
                reads.remove(0);
            }
        }
        page
    }

    /// The most reads kept going at once.
    const READS: usize = 2;

    fn start(&self, query: &ReadQuery, after: Option<IdKey>, via: Via) -> Merge {
        let shards = self
            .sources
            .iter()
            .map(|src| {
                // Two pages ahead at most: the stream waits for the engine, memory stays bounded.
                let (tx, rx) = mpsc::channel(2);
                let job = ShardJob {
                    src: src.clone(),
                    cloud: self.cloud,
                    id_field: self.id_field.clone(),
                    query: query.clone(),
                    export: via == Via::Export,
                };
                let after = after.clone();
                let task = tokio::spawn(async move { job.run(after, tx).await });
                Stream {
                    rx,
                    buf: VecDeque::new(),
                    done: false,
                    task,
                }
            })
            .collect();
        Merge {
            query: query.clone(),
            cursor: None,
            via,
            shards,
        }
    }
}

impl Merge {
    /// Fills every stream's buffer that is empty and not finished.
    async fn fill(&mut self) -> Result<(), StoreError> {
        for s in &mut self.shards {
            while s.buf.is_empty() && !s.done {
                match s.rx.recv().await {
                    Some(Ok(Some(docs))) => s.buf.extend(docs),
                    Some(Ok(None)) => s.done = true,
                    Some(Err(e)) => return Err(e),
                    None => {
                        return Err(StoreError::new(
                            StoreErrorKind::Unreachable,
                            "a shard's read ended before its last document",
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Up to `rows` documents in id order; the page says whether more follow.
    async fn next_page(&mut self, rows: usize) -> Result<Page, StoreError> {
        let mut docs = Vec::with_capacity(rows);
        let mut last = None;
        while docs.len() < rows {
            self.fill().await?;
            let Some(at) = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.buf.front().map(|(k, _)| (i, k)))
                .min_by(|a, b| a.1.cmp(b.1))
                .map(|(i, _)| i)
            else {
                break;
            };
            let (key, doc) = self.shards[at].buf.pop_front().expect("a head");
            docs.push(doc);
            last = Some(key);
        }
        // The last page once every stream is empty and finished.
        self.fill().await?;
        let more = self.shards.iter().any(|s| !s.buf.is_empty());
        Ok(Page {
            docs,
            next: last.filter(|_| more).map(|k| k.cursor()),
            via: self.via,
            derived: crate::store::Served::default(),
        })
    }
}

/// One shard's read, as its task runs it.
struct ShardJob {
    src: Source,
    cloud: bool,
    id_field: String,
    query: ReadQuery,
    export: bool,
}

/// Why a shard's read stopped before its end.
enum Stop {
    /// The merge is gone (the read was dropped): nothing to report.
    Gone,
    /// A failure.
    Failed(StoreError),
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Failed(e)
    }
}

impl From<SolrError> for Stop {
    fn from(e: SolrError) -> Self {
        Stop::Failed(e.into())
    }
}

/// Whether a broken read may go on elsewhere: the node, the connection or the server failed, not
/// the request.
fn resumable(e: &StoreError) -> bool {
    matches!(
        e.kind(),
        StoreErrorKind::Unreachable | StoreErrorKind::Timeout
    ) || e
        .downcast_ref::<SolrError>()
        .is_some_and(|s| matches!(s, SolrError::NotFound { .. }))
}

impl ShardJob {
    async fn run(self, mut after: Option<IdKey>, tx: mpsc::Sender<Msg>) {
        let replicas = self.src.replicas.len().max(1);
        let mut resumes = 0;
        let mut at = 0;
        loop {
            let client = &self.src.replicas[at % replicas];
            let read = if self.export {
                self.export(client, &mut after, &tx).await
            } else {
                self.cursor(client, &mut after, &tx).await
            };
            match read {
                Ok(()) => {
                    let _ = tx.send(Ok(None)).await;
                    return;
                }
                Err(Stop::Gone) => return,
                Err(Stop::Failed(e)) if resumable(&e) && resumes < MAX_RESUMES => {
                    resumes += 1;
                    at += 1;
                    let next = self.src.replicas[at % replicas].core_url();
                    warn!(shard = %self.src.name, error = %e, resume_at = %next,
                        after = ?after, "a shard's read broke; going on after the last id it gave");
                    tokio::time::sleep(Duration::from_millis(250 * resumes as u64)).await;
                }
                Err(Stop::Failed(e)) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
    }

    /// The query's filter, and the ids after `after`.
    fn fqs(&self, after: &Option<IdKey>) -> Vec<(String, String)> {
        let mut p = Vec::new();
        if self.cloud {
            p.push(("distrib".to_owned(), "false".to_owned()));
        }
        if let Some(k) = after {
            p.push(("fq".to_owned(), k.after_fq(&self.id_field)));
        }
        p
    }

    /// Sends `docs` on, remembering the last id.
    async fn hand_out(
        &self,
        docs: Vec<Doc>,
        after: &mut Option<IdKey>,
        tx: &mpsc::Sender<Msg>,
    ) -> Result<(), Stop> {
        let mut keyed = Vec::with_capacity(docs.len());
        for doc in docs {
            let key = IdKey::of(&doc, &self.id_field).ok_or_else(|| {
                StoreError::new(
                    StoreErrorKind::Input,
                    format!("a document without a usable {}", self.id_field),
                )
            })?;
            keyed.push((key, doc));
        }
        let Some(last) = keyed.last().map(|(k, _)| k.clone()) else {
            return Ok(());
        };
        tx.send(Ok(Some(keyed))).await.map_err(|_| Stop::Gone)?;
        *after = Some(last);
        Ok(())
    }

    /// cursorMark pages from one core, from after `after` on.
    async fn cursor(
        &self,
        client: &Client,
        after: &mut Option<IdKey>,
        tx: &mpsc::Sender<Msg>,
    ) -> Result<(), Stop> {
        let rows = self.query.rows.max(1);
        let mut mark = "*".to_owned();
        let extra = self.fqs(after);
        loop {
            let mut params = select_params(&self.id_field, &self.query, &mark);
            params.extend(extra.iter().cloned());
            let answer = client.select(params).await?;
            let (docs, next) = cursor_page(&answer, client)?;
            let done = next == mark || docs.len() < rows;
            self.hand_out(docs, after, tx).await?;
            if done {
                return Ok(());
            }
            mark = next;
        }
    }

    /// One core's `/export`, from after `after` on.
    async fn export(
        &self,
        client: &Client,
        after: &mut Option<IdKey>,
        tx: &mpsc::Sender<Msg>,
    ) -> Result<(), Stop> {
        let rows = self.query.rows.max(1);
        let mut fields = self.query.fields.clone();
        if !fields.contains(&self.id_field) {
            fields.insert(0, self.id_field.clone());
        }
        let mut params = vec![
            ("q".to_owned(), "*:*".to_owned()),
            ("fl".to_owned(), fields.join(",")),
            ("sort".to_owned(), format!("{} asc", self.id_field)),
        ];
        for fq in filter::fqs(&self.query.filter) {
            params.push(("fq".to_owned(), fq));
        }
        params.extend(self.fqs(after));
        let (url, mut resp) = client.export(params).await?;
        let broken = |reason: String| SolrError::Transport {
            url: url.clone(),
            kind: TransportKind::Broken,
            reason,
        };
        let mut splitter = Splitter::with_limit(client.max_response_bytes());
        let mut page: Vec<Doc> = Vec::with_capacity(rows);
        while let Some(chunk) = resp.chunk().await.map_err(|e| broken(e.to_string()))? {
            let docs = splitter.feed(&chunk).map_err(|e| match e {
                ExportError::TooLarge(limit) => SolrError::TooLarge {
                    url: url.clone(),
                    limit,
                },
                e => SolrError::BadResponse {
                    url: url.clone(),
                    reason: e.to_string(),
                },
            })?;
            for doc in docs {
                page.push(doc);
                if page.len() == rows {
                    let full = std::mem::replace(&mut page, Vec::with_capacity(rows));
                    self.hand_out(full, after, tx).await?;
                }
            }
        }
        if !splitter.finished() {
            return Err(broken("the /export answer ended early".to_owned()).into());
        }
        self.hand_out(page, after, tx).await
    }
}

/// Logs, once, that a shard-by-shard read is not possible and why.
pub(super) fn log_fallback(why: &str) {
    info!("SolrCloud: {why}; reading through the collection URL instead");
}

/// The sort order of ids the merge relies on, for tests.
#[cfg(test)]
fn order(a: &IdKey, b: &IdKey) -> std::cmp::Ordering {
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;
    use crate::store::Filter;

    #[test]
    fn cursors_round_trip_and_strings_sort_by_their_bytes() {
        for k in [
            IdKey::Str("http://a/b!c".into()),
            IdKey::Str(String::new()),
            IdKey::Num(-5),
        ] {
            assert_eq!(IdKey::from_cursor(&k.cursor()), Some(k.clone()));
        }
        assert_eq!(IdKey::from_cursor("export:3"), None);
        // UTF-8 byte order, as Solr sorts a string field: 'Z' < 'a' < 'é'.
        let z = IdKey::Str("Z".into());
        let a = IdKey::Str("a".into());
        let e = IdKey::Str("é".into());
        assert_eq!(order(&z, &a), Ordering::Less);
        assert_eq!(order(&a, &e), Ordering::Less);
        assert_eq!(
            IdKey::Str("a\"b\\".into()).after_fq("id"),
            r#"id:{"a\"b\\" TO *]"#
        );
    }

    /// A lookup is read shard by shard on SolrCloud (by `cursorMark`, even where `/export` could
    /// stream its fields), and through the core's search on a standalone core.
    #[test]
    fn a_lookup_is_read_shard_by_shard_on_solrcloud_only() {
        let r = ShardReader::new(Vec::new(), true, "id", None);
        let q = |filter| ReadQuery {
            filter,
            fields: vec!["id".into()],
            rows: 10,
        };
        let lookup = || Filter::any_of("u", vec!["x".into()]);
        assert_eq!(r.takes(&q(Filter::All)), Some(Via::Cursor));
        assert_eq!(r.takes(&q(lookup())), Some(Via::Cursor));
        let cloud_export = ShardReader::new(Vec::new(), true, "id", Some(["id".to_owned()].into()));
        assert_eq!(cloud_export.takes(&q(Filter::All)), Some(Via::Export));
        assert_eq!(cloud_export.takes(&q(lookup())), Some(Via::Cursor));
        let standalone = ShardReader::new(Vec::new(), false, "id", None);
        assert_eq!(standalone.takes(&q(Filter::All)), None);
        assert_eq!(standalone.takes(&q(lookup())), None);
        let export = ShardReader::new(Vec::new(), false, "id", Some(["id".to_owned()].into()));
        assert_eq!(export.takes(&q(Filter::All)), Some(Via::Export));
        assert_eq!(export.takes(&q(lookup())), None);
    }

    fn doc(id: &str) -> (IdKey, Doc) {
        let mut d = Doc::new();
        d.insert("id".into(), Value::String(id.into()));
        (IdKey::Str(id.into()), d)
    }

    /// A stream that hands out `pages` and then the end (or, with `fail`, an error instead).
    fn stream(pages: Vec<Vec<&str>>, fail: bool) -> Stream {
        let (tx, rx) = mpsc::channel(1);
        let pages: Vec<Vec<(IdKey, Doc)>> = pages
            .into_iter()
            .map(|p| p.into_iter().map(doc).collect())
            .collect();
        let task = tokio::spawn(async move {
            for p in pages {
                if tx.send(Ok(Some(p))).await.is_err() {
                    return;
                }
            }
            let end = if fail {
                Err(StoreError::new(StoreErrorKind::Unreachable, "gone"))
            } else {
                Ok(None)
            };
            let _ = tx.send(end).await;
        });
        Stream {
            rx,
            buf: VecDeque::new(),
            done: false,
            task,
        }
    }

    fn merge(shards: Vec<Stream>) -> Merge {
        Merge {
            query: ReadQuery {
                filter: Filter::All,
                fields: vec!["id".into()],
                rows: 3,
            },
            cursor: None,
            via: Via::Export,
            shards,
        }
    }

    fn ids(p: &Page) -> Vec<&str> {
        p.docs.iter().map(|d| d["id"].as_str().unwrap()).collect()
    }

    #[tokio::test]
    async fn shards_merge_by_id_into_full_pages_and_the_last_one_says_so() {
        let mut m = merge(vec![
            stream(vec![vec!["a", "d"], vec![], vec!["e", "h"]], false),
            stream(vec![vec!["b"], vec!["c", "g"]], false),
            stream(vec![], false),
        ]);
        let p1 = m.next_page(3).await.unwrap();
        assert_eq!(ids(&p1), ["a", "b", "c"]);
        assert_eq!(p1.next.as_deref(), Some("after:s:c"));
        assert_eq!(p1.via, Via::Export);
        let p2 = m.next_page(3).await.unwrap();
        assert_eq!(ids(&p2), ["d", "e", "g"]);
        assert_eq!(p2.next.as_deref(), Some("after:s:g"));
        let p3 = m.next_page(3).await.unwrap();
        assert_eq!(ids(&p3), ["h"]);
        assert_eq!(p3.next, None);
        // A read that ends on a full page says so on that page, with no empty page after it.
        let mut m = merge(vec![stream(vec![vec!["a", "b", "c"]], false)]);
        let p = m.next_page(3).await.unwrap();
        assert_eq!(ids(&p), ["a", "b", "c"]);
        assert_eq!(p.next, None);
    }

    #[tokio::test]
    async fn a_shard_that_fails_or_vanishes_fails_the_page() {
        let mut m = merge(vec![
            stream(vec![vec!["a"]], false),
            stream(vec![vec!["b"]], true),
        ]);
        let e = m.next_page(3).await.unwrap_err();
        assert_eq!(e.kind(), StoreErrorKind::Unreachable);
        // A task that ends without saying the read is complete is not taken for the end.
        let (tx, rx) = mpsc::channel::<Msg>(1);
        drop(tx);
        let mut m = merge(vec![Stream {
            rx,
            buf: VecDeque::new(),
            done: false,
            task: tokio::spawn(async {}),
        }]);
        assert!(m.next_page(3).await.is_err());
    }
}
