//! The seam between the engine and where documents live.
//!
//! The operations are the ones Solr does well, so that the Solr store stays a thin translation and the
//! file store an honest emulation of it:
//!
//! | operation            | Solr                                             | file store                         |
//! |----------------------|--------------------------------------------------|------------------------------------|
//! | [`Store::read_page`] | `/select` with `fq`, `fl`, `sort=id asc`, `cursorMark` | one streaming pass, offset cursor |
//! | [`Store::hint_rereads`] | nothing (docValues are the schema's choice)   | a light copy of the fields read again |
//! | [`Store::facet`]     | `facet.field` with `facet.mincount`              | a counting pass                    |
//! | [`Store::get`]       | real-time `/get?ids=`                            | seek through an id-hash index      |
//! | [`Store::update`]    | atomic updates to `/update`, each with `_version_` | buffered into a temporary file   |
//! | [`Store::refresh`]   | `softCommit` between rounds                      | nothing                            |
//! | [`Store::commit`]    | `commit`, `softCommit` or `commitWithin`         | the output file appears atomically |
//!
//! The engine never depends on the order of a read (Solr sorts by id, the file store by line), only on
//! the set of documents.

pub mod changes;
pub(crate) mod codec;
pub mod file;
pub mod filter;
pub mod open;
mod served;
pub mod solr;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use filter::{Filter, FilterError};
pub use open::{
    connect, open_light, Connection, CredentialsError, LightIndex, Location, OpenError, SolrConfig,
    Target,
};
pub use served::{Served, ServedDoc};

/// A Solr document as JSON: field name to value.
pub type Doc = Map<String, Value>;

/// One page of a streaming read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery {
    /// Which documents.
    pub filter: Filter,
    /// Which fields to return (`fl`); the unique key is always among them.
    pub fields: Vec<String>,
    /// Page size (`rows`).
    pub rows: usize,
}

/// A page of documents and the cursor for the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The documents, with only the requested fields.
    pub docs: Vec<Doc>,
    /// `None` when the read is complete.
    pub next: Option<String>,
    /// How the store read it (what it cost the store).
    pub via: Via,
    /// Beside each document, what the reader derived from it in an earlier run and gave back with
    /// [`Store::keep_derived`], when the store kept it and the document did not change since (see
    /// [`Store::serve_derived`]); empty when none has any.
    pub derived: Served,
}

/// How a store read a page: Solr's costs per document differ by an order of magnitude between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Via {
    /// A `/select` page with `cursorMark`: Solr loads each document's stored fields.
    #[default]
    Cursor,
    /// `/export`: Solr streams docValues, sorted, without loading stored documents.
    Export,
    /// A file read line by line (the file store).
    File,
    /// The change state of an earlier run ([`changes`]): no work for the store. Its reads go on
    /// only as they began (light), like `/export`'s.
    State,
}

/// A `facet.field` request: value counts of one field over the filtered documents.
#[derive(Debug, Clone, PartialEq)]
pub struct FacetQuery {
    /// The field to count.
    pub field: String,
    /// Which documents count.
    pub filter: Filter,
    /// Values seen fewer times are left out.
    pub mincount: u64,
    /// Only the values held by the most documents, this many (count descending, then the field's
    /// order), when given; every value otherwise.
    pub limit: Option<usize>,
}

/// A value and how many documents hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// The value as Solr's `json.facet` gives it (a JSON number, boolean or string).
    pub value: Value,
    /// How many documents hold it.
    pub count: u64,
}

/// An atomic update: `set` operations on some fields of one document, guarded by a version.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomicUpdate {
    /// The unique key.
    pub id: String,
    /// The `_version_` the decision was based on; Solr rejects the update with 409 if the stored
    /// document has another one (re-indexed or deleted meanwhile).
    pub version: Option<i64>,
    /// Fields to set; `Value::Null` removes the field.
    pub set: Vec<(String, Value)>,
}

impl AtomicUpdate {
    /// The update as Solr's JSON update syntax: `{"id":…, "f":{"set":…}, "_version_":…}`.
    pub fn to_json(&self, id_field: &str, version_field: &str) -> Value {
        let mut obj = Map::new();
        obj.insert(id_field.to_owned(), Value::String(self.id.clone()));
        for (field, value) in &self.set {
            let mut op = Map::new();
            op.insert("set".to_owned(), value.clone());
            obj.insert(field.clone(), Value::Object(op));
        }
        if let Some(v) = self.version {
            obj.insert(version_field.to_owned(), Value::from(v));
        }
        Value::Object(obj)
    }

    /// The same JSON as [`AtomicUpdate::to_json`], byte for byte, without building it first: a
    /// first run writes one or two updates per document.
    pub fn json_bytes(&self, id_field: &str, version_field: &str) -> Vec<u8> {
        enum Op<'a> {
            Id(&'a str),
            Set(&'a Value),
            Version(i64),
        }
        // Insert in `to_json`'s order (a later insert of a name replaces the earlier one), then sort
        // as its map does.
        let mut ops: Vec<(&str, Op<'_>)> = Vec::with_capacity(self.set.len() + 2);
        let mut insert = |name, op| match ops.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = op,
            None => ops.push((name, op)),
        };
        insert(id_field, Op::Id(&self.id));
        for (field, value) in &self.set {
            insert(field, Op::Set(value));
        }
        if let Some(v) = self.version {
            insert(version_field, Op::Version(v));
        }
        ops.sort_by(|a, b| a.0.cmp(b.0));
        struct Ops<'a>(Vec<(&'a str, Op<'a>)>);
        struct SetOp<'a>(&'a Value);
        impl serde::Serialize for SetOp<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map([("set", self.0)])
            }
        }
        impl serde::Serialize for Ops<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (name, op) in &self.0 {
                    match op {
                        Op::Id(id) => m.serialize_entry(name, id)?,
                        Op::Set(v) => m.serialize_entry(name, &SetOp(v))?,
                        Op::Version(v) => m.serialize_entry(name, v)?,
                    }
                }
                m.end()
            }
        }
        serde_json::to_vec(&Ops(ops)).expect("an update serialises")
    }
}

/// What became of a batch of updates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateOutcome {
    /// Updates that were applied.
    pub applied: usize,
    /// Ids whose version no longer matched (HTTP 409): changed or deleted since they were read.
    pub conflicts: Vec<String>,
    /// The new `_version_` of updated documents, where the store reports it (Solr's `versions=true`).
    pub versions: Vec<(String, i64)>,
}

/// How to make the updates visible at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommitMode {
    /// `commit=true`: durable and visible.
    #[default]
    Hard,
    /// `softCommit=true`: visible, durable at the next hard commit.
    Soft,
    /// `commitWithin=ms`: Solr commits within that time.
    Within(u64),
    /// No commit: the core's own autoCommit decides.
    None,
}

/// What kind of failure a [`StoreError`] is: what a caller decides on (an exit code, whether to
/// try again), whatever the backend. The message and the backend's own error travel as the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The store's server could not be reached, or kept failing after retries: nothing is lost, and
    /// the same run may succeed later (exit code 3).
    Unreachable,
    /// The time for a request ran out (after retries): as [`StoreErrorKind::Unreachable`].
    Timeout,
    /// An answer larger than the store accepts: the server was reached, sending the request again
    /// would get the same answer, and nothing is lost (exit code 3, with the setting to change).
    TooLarge,
    /// The store refused the request as it is: a wrong address or credentials, a query it rejects.
    Rejected,
    /// An optimistic-concurrency conflict: the document changed since it was read.
    Conflict,
    /// Bad input data: a file line, or a server answer, that cannot be used.
    Input,
    /// A request the store cannot serve (for instance a filter the file store does not understand).
    Unsupported,
    /// A local I/O failure: a file that cannot be read or written.
    Io,
}

/// Errors of any store: a [`StoreErrorKind`] to decide on, and a source that says what went wrong and
/// what to do. The message printed is the context when there is one (the source then follows in the
/// error chain), else the source's own, whose chain it continues: a backend's error keeps its whole
/// message.
pub struct StoreError {
    kind: StoreErrorKind,
    context: Option<String>,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl StoreError {
    /// An error of `kind` whose message is `source`'s (a backend's error, or a `String`).
    pub fn new(
        kind: StoreErrorKind,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        StoreError {
            kind,
            context: None,
            source: source.into(),
        }
    }

    /// An I/O error with context; the I/O error follows in the chain.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StoreError {
            kind: StoreErrorKind::Io,
            context: Some(context.into()),
            source: Box::new(source),
        }
    }

    /// Bad input data at `location` (`file:line`, or a URL).
    pub fn input(location: impl std::fmt::Display, message: impl std::fmt::Display) -> Self {
        StoreError::new(StoreErrorKind::Input, format!("{location}: {message}"))
    }

    /// A request the store cannot serve.
    pub fn unsupported(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::Unsupported, message.into())
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// Whether nothing is lost and the same run may succeed later, or with the setting the message
    /// names (exit code 3): the server could not be reached, kept failing, ran out of time, or sent an
    /// answer too large.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.kind,
            StoreErrorKind::Unreachable | StoreErrorKind::Timeout | StoreErrorKind::TooLarge
        )
    }

    /// The backend's error, when it is one of type `E` (tests and logs; decisions use the kind).
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.source.downcast_ref()
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.context {
            Some(context) => f.write_str(context),
            None => self.source.fmt(f),
        }
    }
}

impl std::fmt::Debug for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreError")
            .field("kind", &self.kind)
            .field("context", &self.context)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.context {
            Some(_) => Some(&*self.source),
            // The source's message is this error's: its chain goes on from the source's source.
            None => self.source.source(),
        }
    }
}

/// What a store's work costs it, per unit, in ms of the store's own time: the engine multiplies its
/// counts of work (the report's `work.*`) by these for `work.modelled_solr_ms`. The Solr store gives
/// costs measured on a real Solr ([`solr::SOLR_COSTS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Per document handed out with its text (a `cursorMark` page, or a real-time `/get`).
    pub text_ms: f64,
    /// Per atomic update.
    pub update_ms: f64,
    /// Per atomic update Solr applies in place (docValues only, the in-place profile).
    pub in_place_ms: f64,
    /// Per document streamed light by `/export`.
    pub export_ms: f64,
    /// Per document of a light `cursorMark` page.
    pub cursor_light_ms: f64,
    /// Per document found by a targeted lookup.
    pub lookup_ms: f64,
    /// Per request.
    pub request_ms: f64,
}

/// Solr's index fingerprint ([`Store::fingerprint`]): of the documents with a version at or below
/// the one asked for, how many there are and the sum (wrapping) of [`Fingerprint::hash_of`] of their
/// versions; and the highest version of all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// `numVersions`.
    pub versions: u64,
    /// `versionsHash`.
    pub hash: i64,
    /// `maxVersionEncountered`: the highest version in the index, above the one asked for too.
    pub max_seen: i64,
}

impl Fingerprint {
    /// What one version adds to `hash`: MurmurHash3's 64-bit finaliser (Solr's `Hash.fmix64`).
    pub fn hash_of(version: i64) -> i64 {
        let mut k = version as u64;
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^= k >> 33;
        k as i64
    }

    /// The fingerprint of a set of versions, as Solr computes it up to `i64::MAX`.
    pub fn of(versions: impl IntoIterator<Item = i64>) -> Self {
        versions.into_iter().fold(
            Fingerprint {
                versions: 0,
                hash: 0,
                max_seen: 0,
            },
            |f, v| Fingerprint {
                versions: f.versions + 1,
                hash: f.hash.wrapping_add(Self::hash_of(v)),
                max_seen: f.max_seen.max(v),
            },
        )
    }
}

/// Where documents live. One engine runs against any implementation.
///
/// The trait is dyn-compatible (its futures are boxed by `async_trait`, and `Send`), so that a command
/// can open "a store" as a `Box<dyn Store>` or `Arc<dyn Store>` without knowing which one, and `serve`
/// can keep one. The engine takes any `S: Store`, those included (see the impls for `Box` and `Arc`);
/// it awaits one store call per page or batch, so the boxing costs nothing measurable.
#[async_trait]
pub trait Store: Send + Sync {
    /// One page of the documents matching `query`, starting at `cursor` (`None` for the first page).
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError>;

    /// The first page of `query` and nothing more: a sample (the engine's scheme guard reads one).
    /// Unlike [`Store::read_page`], no next page is read ahead.
    async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
        Ok(self.read_page(query, None).await?.docs)
    }

    /// A hint that `query` is about to be read in full several times. A store may prepare for it (the
    /// file store keeps a light copy of those fields, as Solr keeps docValues); results never depend on
    /// it. By default it does nothing.
    fn hint_rereads(&self, _query: &ReadQuery) {}

    /// Whether a read of everything with `query`'s fields is served without Solr (the change
    /// state's view of the index, issue 46): the engine then reads the documents of big groups to
    /// decide from it instead of looking them up, so a change costs Solr the same in a group of ten
    /// and a group of ten thousand. By default nothing is.
    fn serves_locally(&self, _query: &ReadQuery) -> bool {
        false
    }

    /// Documents deleted since the state the store serves from ([`Store::serves_locally`]): their
    /// groups are decided again, so they count as changes when the engine weighs lookups against a
    /// read of its copy. 0 by default.
    fn deleted_since(&self) -> u64 {
        0
    }

    /// Asks that the pages of the run's light read (every document's light fields) come with what the reader
    /// derived from their documents under `tag` in an earlier run ([`Page::derived`]), each such
    /// document with its id and the text of `field` ([`ServedDoc`]) and an empty map in [`Page::docs`]: a
    /// store that keeps its own copy of the index between runs (the change state) then neither
    /// decodes nor hands over what the reader would only derive the same again from. By default
    /// nothing is kept, and nothing comes.
    fn serve_derived(&self, _tag: u64, _field: &str) {}

    /// What the reader derived under `tag` from documents of the light read it was just given
    /// (`(id, version, bytes)`, in the read's order): a store that keeps its copy of the index
    /// for the next run may keep it beside each document that stays as it was read, and serve it
    /// back ([`Store::serve_derived`]). `tag` names everything the bytes depend on besides the
    /// document, so a document served with bytes under the `tag` asked for keeps them without
    /// being given them again. By default it is dropped.
    fn keep_derived(&self, _tag: u64, _derived: Vec<(String, i64, Vec<u8>)>) {}

    /// How many values one read's [`Filter::AnyOf`] lookups may hold in all: Solr counts each as a
    /// boolean clause against `maxBooleanClauses` (1024 by default). The engine splits longer lookups
    /// into several reads. 0 (the default) means lookups cost no less than reading everything, as
    /// in the file store, which has no index and evaluates a filter on every record.
    fn max_lookup_values(&self) -> usize {
        0
    }

    /// How many documents `filter` selects, when the store knows it without reading them (the Solr
    /// store: the `numFound` of the `rows=0` probe it was opened with). The engine shows it as the
    /// scan's total; only a hint for progress, since the index may change before the scan reads it.
    /// `None` (the default): not known.
    fn known_count(&self, _filter: &Filter) -> Option<u64> {
        None
    }

    /// Value counts of a field, leaving out values with fewer than `mincount` documents. Not called
    /// by the engine yet: the near-duplicate dimension (issue 12, `neardup.md`) finds the documents
    /// sharing a band key with it (`mincount=2`).
    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError>;

    /// Real-time read of documents by id; missing ids are skipped, order follows `ids`.
    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError>;

    /// Applies a batch of atomic updates in order.
    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError>;

    /// Makes the updates so far visible to later reads, for a run that reads everything again (a
    /// second round). Solr opens a new searcher; stores whose reads never see updates do nothing.
    async fn refresh(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Makes the updates visible.
    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError>;

    /// Makes what a commit left to do visible, once the caller has recorded the run: the file
    /// store opened with a deferred output puts it in place (so that a report that cannot be
    /// written leaves the old output). By default nothing: a commit is visible at once.
    async fn publish(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// A short description for logs and reports (never credentials).
    fn describe(&self) -> String;

    /// A mark that changes whenever the documents of `filter` change (an add, an update, a delete),
    /// as far as reads can see them: `serve --after-quiet` polls it to tell when a crawl has gone
    /// quiet. Solr: the number of documents and the highest `_version_` (one `rows=0` request);
    /// the file store: the input's size and modification time. By default: unsupported.
    async fn change_mark(&self, _filter: &Filter) -> Result<String, StoreError> {
        Err(StoreError::unsupported(format!(
            "{} cannot tell when its documents change",
            self.describe()
        )))
    }

    /// Requests sent to a server so far, retries included (0 for stores without one).
    fn requests(&self) -> u64 {
        0
    }

    /// Whether others change the documents while a run goes on, so that an update must carry the
    /// version its decision was read at (Solr: a crawler indexes beside the worker). A document
    /// read without a version is then not written: an update guarded only by "it exists" could
    /// put a signature computed from an old text on a page re-indexed meanwhile. By default no
    /// (a file changes only between runs).
    fn needs_versions(&self) -> bool {
        false
    }

    /// Whether the store answers now, asked once and quickly (serve's health probe); the error says
    /// why not in one line. By default: it does.
    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// How many documents of `filter` there are now, asked of the store (unlike
    /// [`Store::known_count`], the count when it was opened); `None` when it cannot tell with one
    /// cheap request (the default).
    async fn count(&self, _filter: &Filter) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }

    /// The highest `version_field` among the documents of `filter` now, asked of the store with one
    /// request; `None` when there is no document or the store cannot tell (the default). Solr: a
    /// `rows=1` page sorted by the version, descending (exact: a long, not a facet's double).
    async fn max_version(
        &self,
        _filter: &Filter,
        _version_field: &str,
    ) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }

    /// Whether [`Store::fingerprint`] can answer (a standalone Solr core, or a SolrCloud
    /// collection whose shard leaders are known); false by default.
    fn fingerprints(&self) -> bool {
        false
    }

    /// Solr's index fingerprint up to `max_version` (`/get?getFingerprint=`, what Solr's replicas
    /// compare to tell they hold the same documents): over every document of the index (not a
    /// filter), what is indexed and not yet committed included; one request (a SolrCloud
    /// collection: one per shard leader, summed). `None` when the store cannot give it (the
    /// default; see [`Store::fingerprints`]).
    async fn fingerprint(&self, _max_version: i64) -> Result<Option<Fingerprint>, StoreError> {
        Ok(None)
    }

    /// How many documents of `filter` hold a `field` value in each inclusive range, in one request;
    /// `None` when the store cannot count ranges (the default). Solr: one `json.facet` of query
    /// facets.
    async fn count_ranges(
        &self,
        _filter: &Filter,
        _field: &str,
        _ranges: &[(i64, i64)],
    ) -> Result<Option<Vec<u64>>, StoreError> {
        Ok(None)
    }

    /// Documents in which a field holding one value held several, of which the first was taken
    /// (the file store; Solr refuses such a document when it is indexed). By default 0.
    fn multi_valued_first_taken(&self) -> u64 {
        0
    }

    /// The bytes the store's own structures wrote to temporary files past their share of
    /// `--memory` (the file store's id index and pending updates). By default 0.
    fn spilled_bytes(&self) -> u64 {
        0
    }

    /// What this store's work costs, for the report's `work.modelled_solr_ms`. Every store says:
    /// a wrapper forwards its inner store's.
    fn cost_model(&self) -> CostModel;
}

/// A boxed or shared store is a store: the engine's `S: Store` takes `Box<dyn Store>` and
/// `Arc<dyn Store>`. Every method forwards, defaults included, so the inner store's own are used.
macro_rules! forward_store {
    ($ptr:ident) => {
        #[async_trait]
        impl<S: Store + ?Sized> Store for $ptr<S> {
            async fn read_page(
                &self,
                query: &ReadQuery,
                cursor: Option<&str>,
            ) -> Result<Page, StoreError> {
                (**self).read_page(query, cursor).await
            }
            async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
                (**self).sample(query).await
            }
            fn hint_rereads(&self, query: &ReadQuery) {
                (**self).hint_rereads(query)
            }
            fn serves_locally(&self, query: &ReadQuery) -> bool {
                (**self).serves_locally(query)
            }
            fn deleted_since(&self) -> u64 {
                (**self).deleted_since()
            }
            fn serve_derived(&self, tag: u64, field: &str) {
                (**self).serve_derived(tag, field)
            }
            fn keep_derived(&self, tag: u64, derived: Vec<(String, i64, Vec<u8>)>) {
                (**self).keep_derived(tag, derived)
            }
            fn max_lookup_values(&self) -> usize {
                (**self).max_lookup_values()
            }
            fn known_count(&self, filter: &Filter) -> Option<u64> {
                (**self).known_count(filter)
            }
            async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
                (**self).facet(query).await
            }
            async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
                (**self).get(ids, fields).await
            }
            async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
                (**self).update(batch).await
            }
            async fn refresh(&self) -> Result<(), StoreError> {
                (**self).refresh().await
            }
            async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
                (**self).commit(mode).await
            }
            async fn publish(&self) -> Result<(), StoreError> {
                (**self).publish().await
            }
            fn describe(&self) -> String {
                (**self).describe()
            }
            async fn change_mark(&self, filter: &Filter) -> Result<String, StoreError> {
                (**self).change_mark(filter).await
            }
            fn requests(&self) -> u64 {
                (**self).requests()
            }
            fn needs_versions(&self) -> bool {
                (**self).needs_versions()
            }
            async fn ping(&self) -> Result<(), StoreError> {
                (**self).ping().await
            }
            async fn count(&self, filter: &Filter) -> Result<Option<u64>, StoreError> {
                (**self).count(filter).await
            }
            async fn max_version(
                &self,
                filter: &Filter,
                version_field: &str,
            ) -> Result<Option<i64>, StoreError> {
                (**self).max_version(filter, version_field).await
            }
            fn fingerprints(&self) -> bool {
                (**self).fingerprints()
            }
            async fn fingerprint(
                &self,
                max_version: i64,
            ) -> Result<Option<Fingerprint>, StoreError> {
                (**self).fingerprint(max_version).await
            }
            async fn count_ranges(
                &self,
                filter: &Filter,
                field: &str,
                ranges: &[(i64, i64)],
            ) -> Result<Option<Vec<u64>>, StoreError> {
                (**self).count_ranges(filter, field, ranges).await
            }
            fn multi_valued_first_taken(&self) -> u64 {
                (**self).multi_valued_first_taken()
            }
            fn spilled_bytes(&self) -> u64 {
                (**self).spilled_bytes()
            }
            fn cost_model(&self) -> CostModel {
                (**self).cost_model()
            }
        }
    };
}

forward_store!(Box);
forward_store!(Arc);

/// An error and its sources in one line (`context: cause: cause`), as `run` prints a failure: for
/// logs, the server's answers and records, wherever an error becomes text without anyhow.
pub fn error_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        line.push_str(": ");
        line.push_str(&s.to_string());
        source = s.source();
    }
    line
}

/// A stable 64-bit hash of a document's id (FNV-1a), by which the engine's records and the file
/// store's index key documents. Persisted in one place: the in-place profile's `near_group_l` is
/// this hash of the near cluster representative's id (as an `i64`), so it must never change (the
/// standard FNV-1a vectors pin it, below). Not seeded: ids chosen to collide could give two
/// clusters one `near_group_l` (a grouping by it would join them; the flags and counts, decided
/// from the engine's own grouping, would not).
pub fn id_hash(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Solr's fingerprint of a set of versions: MurmurHash3's `fmix64` of each, summed with
    /// wrapping (values from a Python transcription of `Hash.fmix64`, which gave a real Solr
    /// 9.10.1 core's `versionsHash` for its 99,000 versions).
    #[test]
    fn the_fingerprint_is_solrs() {
        let versions = [1_883_159_236_774_461_447, 1_883_159_266_775_269_378, 1];
        assert_eq!(
            versions.map(super::Fingerprint::hash_of),
            [
                -8_012_452_668_141_115_676,
                1_658_714_306_172_547_664,
                -5_451_962_507_482_445_012
            ]
        );
        assert_eq!(
            super::Fingerprint::of(versions),
            super::Fingerprint {
                versions: 3,
                hash: 6_641_043_204_258_538_592,
                max_seen: 1_883_159_266_775_269_378,
            }
        );
    }

    /// The standard FNV-1a 64 vectors: `near_group_l` holds these values in indexes.
    #[test]
    fn the_id_hash_is_fnv_1a() {
        assert_eq!(super::id_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::id_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::id_hash("foobar"), 0x8594_4171_f739_67e8);
    }

    use super::*;

    #[test]
    fn json_bytes_equal_to_json() {
        let updates = [
            AtomicUpdate {
                id: "doc \"1\"".into(),
                version: Some(1_800_000_000_000_000_000),
                set: vec![
                    ("www_unique_b".into(), json!(true)),
                    ("exact_signature_l".into(), json!(-5)),
                    ("a_s".into(), Value::Null),
                    ("Z_txt".into(), json!(["x", {"y": 1.5}])),
                    ("www_unique_b".into(), json!(false)),
                ],
            },
            AtomicUpdate {
                id: "x".into(),
                version: None,
                set: vec![("id".into(), json!(3)), ("_version_".into(), json!(4))],
            },
            AtomicUpdate {
                id: "y".into(),
                version: Some(7),
                set: vec![("_version_".into(), json!(4))],
            },
        ];
        for u in &updates {
            assert_eq!(
                String::from_utf8(u.json_bytes("id", "_version_")).unwrap(),
                serde_json::to_string(&u.to_json("id", "_version_")).unwrap()
            );
        }
    }
}
