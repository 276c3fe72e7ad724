//! One store wrapper for tests that need to see or bend what the engine asks of a store: [`Hooked`]
//! forwards every operation of [`Store`] to an inner store, records each call, and lets a test
//! override the answers that tell the engine what the store can do (`max_lookup_values`,
//! `known_count`) or run a hook just before an update reaches the inner store (to change the core
//! between the engine's read and its write).
//!
//! Every method is forwarded, the ones with a default too: a wrapper that let one fall back to the
//! trait's default would run the engine against another store than the inner one.
//! [`tests::hooked_forwards_every_operation`] holds it to that.

use std::sync::Mutex;

use solr_dedup::store::{
    AtomicUpdate, Bucket, CommitMode, CostModel, Doc, FacetQuery, Filter, Page, ReadQuery, Store,
    StoreError, UpdateOutcome,
};

/// A hook on the updates a run sends.
type Hook<'t> = Box<dyn FnOnce(&[AtomicUpdate]) + Send + 't>;
/// Which batch of updates the hook runs before.
type When<'t> = Box<dyn Fn(&[AtomicUpdate]) -> bool + Send + Sync + 't>;

/// A store that forwards to `inner`, records the calls, and applies the test's overrides and hook.
pub struct Hooked<'t, S> {
    inner: S,
    calls: Mutex<Vec<&'static str>>,
    max_lookup_values: Option<usize>,
    needs_versions: Option<bool>,
    known_count: Option<(Filter, u64)>,
    before_update: Option<When<'t>>,
    hook: Mutex<Option<Hook<'t>>>,
}

impl<'t, S: Store> Hooked<'t, S> {
    /// `inner`, unchanged.
    pub fn new(inner: S) -> Self {
        Hooked {
            inner,
            calls: Mutex::new(Vec::new()),
            max_lookup_values: None,
            needs_versions: None,
            known_count: None,
            before_update: None,
            hook: Mutex::new(None),
        }
    }

    /// Answers `max_lookup_values` with `n`: a store with an index (the Solr store's limit is 2000),
    /// so that the engine looks documents up instead of reading everything.
    pub fn with_max_lookup_values(mut self, n: usize) -> Self {
        self.max_lookup_values = Some(n);
        self
    }

    /// Answers `needs_versions` with `needs`: a store others write to (as Solr), so that the engine
    /// refuses to write documents read without a version.
    pub fn with_needs_versions(mut self, needs: bool) -> Self {
        self.needs_versions = Some(needs);
        self
    }

    /// Knows that `filter` selects `documents` (as the Solr store learns `numFound` from the probe it
    /// is opened with); other filters are asked of the inner store.
    pub fn with_known_count(mut self, filter: Filter, documents: u64) -> Self {
        self.known_count = Some((filter, documents));
        self
    }

    /// Runs `hook` once, just before the first batch of updates for which `when` holds reaches the
    /// inner store.
    pub fn before_first_update(
        mut self,
        when: impl Fn(&[AtomicUpdate]) -> bool + Send + Sync + 't,
        hook: impl FnOnce(&[AtomicUpdate]) + Send + 't,
    ) -> Self {
        self.before_update = Some(Box::new(when));
        self.hook = Mutex::new(Some(Box::new(hook)));
        self
    }

    /// The inner store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The operations called so far, in order.
    pub fn calls(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().clone()
    }

    /// How many times `op` was called.
    pub fn calls_of(&self, op: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| **c == op)
            .count()
    }

    fn saw(&self, op: &'static str) {
        self.calls.lock().unwrap().push(op);
    }
}

#[async_trait::async_trait]
impl<S: Store> Store for Hooked<'_, S> {
    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        self.saw("read_page");
        self.inner.read_page(query, cursor).await
    }
    async fn sample(&self, query: &ReadQuery) -> Result<Vec<Doc>, StoreError> {
        self.saw("sample");
        self.inner.sample(query).await
    }
    fn hint_rereads(&self, query: &ReadQuery) {
        self.saw("hint_rereads");
        self.inner.hint_rereads(query)
    }
    fn max_lookup_values(&self) -> usize {
        self.saw("max_lookup_values");
        let inner = self.inner.max_lookup_values();
        self.max_lookup_values.unwrap_or(inner)
    }
    fn known_count(&self, filter: &Filter) -> Option<u64> {
        self.saw("known_count");
        match &self.known_count {
            Some((f, n)) if f == filter => Some(*n),
            _ => self.inner.known_count(filter),
        }
    }
    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        self.saw("facet");
        self.inner.facet(query).await
    }
    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        self.saw("get");
        self.inner.get(ids, fields).await
    }
    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        self.saw("update");
        let hook = match &self.before_update {
            Some(when) if when(batch) => self.hook.lock().unwrap().take(),
            _ => None,
        };
        if let Some(hook) = hook {
            hook(batch);
        }
        self.inner.update(batch).await
    }
    async fn refresh(&self) -> Result<(), StoreError> {
        self.saw("refresh");
        self.inner.refresh().await
    }
    async fn commit(&self, mode: CommitMode) -> Result<(), StoreError> {
        self.saw("commit");
        self.inner.commit(mode).await
    }
    async fn publish(&self) -> Result<(), StoreError> {
        self.saw("publish");
        self.inner.publish().await
    }
    fn describe(&self) -> String {
        self.saw("describe");
        self.inner.describe()
    }
    async fn change_mark(&self, filter: &Filter) -> Result<String, StoreError> {
        self.saw("change_mark");
        self.inner.change_mark(filter).await
    }
    fn requests(&self) -> u64 {
        self.saw("requests");
        self.inner.requests()
    }
    fn needs_versions(&self) -> bool {
        self.saw("needs_versions");
        let inner = self.inner.needs_versions();
        self.needs_versions.unwrap_or(inner)
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.saw("ping");
        self.inner.ping().await
    }
    async fn count(&self, filter: &Filter) -> Result<Option<u64>, StoreError> {
        self.saw("count");
        self.inner.count(filter).await
    }
    fn multi_valued_first_taken(&self) -> u64 {
        self.saw("multi_valued_first_taken");
        self.inner.multi_valued_first_taken()
    }
    fn spilled_bytes(&self) -> u64 {
        self.saw("spilled_bytes");
        self.inner.spilled_bytes()
    }
    fn cost_model(&self) -> CostModel {
        self.saw("cost_model");
        self.inner.cost_model()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use solr_dedup::store::file::{FileStore, Output, OutputFormat};

    use super::*;

    /// Every operation of [`Store`] called through a [`Hooked`] reaches the inner store, in order:
    /// the inner store is a [`Hooked`] too, whose record shows each call that arrived (a method
    /// left to the trait's default would be missing from it). The overrides and the hook answer as
    /// told, and the hook runs once, before the update it was meant for.
    #[test]
    fn hooked_forwards_every_operation() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, "{\"id\":\"a\",\"_version_\":5}\n").unwrap();
        let file = FileStore::open(
            &input,
            Output::File(dir.path().join("out.jsonl")),
            OutputFormat::Updates,
            "id",
            "_version_",
        )
        .unwrap();
        let hooked_batches = Mutex::new(Vec::new());
        let inner = Hooked::new(file)
            .with_max_lookup_values(7)
            .with_known_count(Filter::All, 9);
        let outer = Hooked::new(inner).before_first_update(
            |batch| !batch.is_empty(),
            |batch| hooked_batches.lock().unwrap().push(batch.len()),
        );
        let query = ReadQuery {
            filter: Filter::All,
            fields: vec!["id".into()],
            rows: 1,
        };
        let facet = FacetQuery {
            field: "id".into(),
            filter: Filter::All,
            mincount: 1,
            limit: None,
        };
        let update = AtomicUpdate {
            id: "a".into(),
            version: Some(5),
            set: vec![("f_b".into(), json!(true))],
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            outer.read_page(&query, None).await.unwrap();
            outer.sample(&query).await.unwrap();
            outer.hint_rereads(&query);
            assert_eq!(outer.max_lookup_values(), 7);
            assert_eq!(outer.known_count(&Filter::All), Some(9));
            assert_eq!(outer.known_count(&Filter::Present("x".into())), None);
            outer.facet(&facet).await.unwrap();
            outer.get(&["a".into()], &[]).await.unwrap();
            outer.update(&[]).await.unwrap();
            outer.update(std::slice::from_ref(&update)).await.unwrap();
            outer.update(std::slice::from_ref(&update)).await.unwrap();
            outer.refresh().await.unwrap();
            outer.commit(CommitMode::Hard).await.unwrap();
            outer.publish().await.unwrap();
            assert!(outer.describe().starts_with("file "));
            outer.change_mark(&Filter::All).await.unwrap();
            assert_eq!(outer.requests(), 0);
            assert!(!outer.needs_versions());
            outer.ping().await.unwrap();
            assert_eq!(outer.count(&Filter::All).await.unwrap(), None);
            assert_eq!(outer.multi_valued_first_taken(), 0);
            assert_eq!(outer.spilled_bytes(), 0);
            assert_eq!(outer.cost_model(), solr_dedup::store::solr::SOLR_COSTS);
        });
        let all = [
            "read_page",
            "sample",
            "hint_rereads",
            "max_lookup_values",
            "known_count",
            "known_count",
            "facet",
            "get",
            "update",
            "update",
            "update",
            "refresh",
            "commit",
            "publish",
            "describe",
            "change_mark",
            "requests",
            "needs_versions",
            "ping",
            "count",
            "multi_valued_first_taken",
            "spilled_bytes",
            "cost_model",
        ];
        assert_eq!(outer.inner().calls(), all);
        assert_eq!(outer.calls(), all);
        assert_eq!(outer.calls_of("update"), 3);
        assert_eq!(
            *hooked_batches.lock().unwrap(),
            [1],
            "once, not for the empty batch"
        );
    }
}
