//! The [`Store`] operations of the file store.

use super::*;

#[async_trait::async_trait]
impl Store for FileStore {
    fn multi_valued_first_taken(&self) -> u64 {
        FileStore::multi_valued_first_taken(self)
    }

    fn spilled_bytes(&self) -> u64 {
        FileStore::spilled_bytes(self)
    }

    async fn publish(&self) -> Result<(), StoreError> {
        self.publish_output()
    }

    async fn read_page(&self, query: &ReadQuery, cursor: Option<&str>) -> Result<Page, StoreError> {
        evaluable(&query.filter)?;
        let start = parse_cursor(cursor)?;
        let rows = query.rows.max(1);
        let mut docs = Vec::with_capacity(rows.min(4096));
        let mut keep = query.fields.clone();
        query.filter.fields(&mut keep);
        let keep = (!query.fields.iter().any(|f| f == "*")).then_some(keep);
        let (end, done) = self.scan(start, keep.as_deref(), rows, |doc, id| {
            if query.filter.matches(&doc) {
                let mut doc = project(doc, &query.fields, &self.id_field);
                self.as_solr_stores(&mut doc, id);
                docs.push(doc);
            }
            rows - docs.len()
        })?;
        Ok(Page {
            docs,
            next: (!done).then(|| format!("{}:{}", end.0, end.1)),
            via: Via::File,
            derived: crate::store::Served::default(),
        })
    }

    fn hint_rereads(&self, query: &ReadQuery) {
        if query.fields.iter().any(|f| f == "*") {
            return;
        }
        let mut fields = query.fields.clone();
        query.filter.fields(&mut fields);
        fields.push(self.id_field.clone());
        fields.sort_unstable();
        fields.dedup();
        let mut state = self.state.lock().expect("file store lock");
        if state.light.wanted.as_ref() != Some(&fields) {
            state.light.wanted = Some(fields);
            state.light.building = None;
        }
    }

    async fn facet(&self, query: &FacetQuery) -> Result<Vec<Bucket>, StoreError> {
        evaluable(&query.filter)?;
        let mut counts: HashMap<String, (Value, u64)> = HashMap::new();
        let mut keep = vec![query.field.clone()];
        query.filter.fields(&mut keep);
        self.scan_all(Some(&keep), |doc, _| {
            if !query.filter.matches(&doc) {
                return;
            }
            let vals: Vec<Value> = match doc.get(&query.field) {
                Some(Value::Array(a)) => a.clone(),
                Some(Value::Null) | None => Vec::new(),
                Some(v) => vec![v.clone()],
            };
            for v in vals {
                counts.entry(v.to_string()).or_insert((v, 0)).1 += 1;
            }
        })?;
        let mut out: Vec<Bucket> = counts
            .into_values()
            .filter(|(_, c)| *c >= query.mincount.max(1))
            .map(|(value, count)| Bucket { value, count })
            .collect();
        // Solr's order: count descending, then index order (numeric for numbers).
        out.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| value_order(&a.value, &b.value))
        });
        if let Some(n) = query.limit {
            out.truncate(n);
        }
        Ok(out)
    }

    async fn get(&self, ids: &[String], fields: &[String]) -> Result<Vec<Doc>, StoreError> {
        let keep = (!fields.iter().any(|f| f == "*")).then_some(fields);
        let mut file = File::open(&self.lines)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let find = || {
                let state = self.state.lock().expect("file store lock");
                let found = state.index.get(id_hash(id)).map_err(index_error)?;
                Ok::<_, StoreError>((found, state.index.complete()))
            };
            let mut offset = find()?;
            if let (None, false) = offset {
                // Not read yet (a get before the first full read): index the whole file once.
                self.scan_all(Some(&[]), |_, _| {})?;
                offset = find()?;
            }
            if let (Some(off), _) = offset {
                if let Some((doc, found)) = self.read_at(&mut file, off, keep)? {
                    if &found == id {
                        let mut doc = project(doc, fields, &self.id_field);
                        self.as_solr_stores(&mut doc, id);
                        out.push(doc);
                    }
                }
            }
        }
        Ok(out)
    }

    async fn update(&self, batch: &[AtomicUpdate]) -> Result<UpdateOutcome, StoreError> {
        if !self.state.lock().expect("file store lock").index.complete() {
            // An update before any read went through the file: index it once.
            self.scan_all(Some(&[]), |_, _| {})?;
        }
        let mut guard = self.state.lock().expect("file store lock");
        let state = &mut *guard;
        if state.pending.is_none() {
            let path = self.temp_path("pending");
            let f = File::create(&path)
                .map_err(|e| StoreError::io("cannot write pending updates", e))?;
            state.pending = Some((TempFile::new(path), BufWriter::with_capacity(1 << 20, f)));
        }
        if state.pending_docs.is_none() {
            let share = self.spill.share(PENDING_SHARE);
            state.pending_docs = Some(Column::new(self.spill.clone(), share));
        }
        let pending_error = |e| StoreError::io("cannot write pending updates", e);
        for u in batch {
            let Some(doc_offset) = state.index.get(id_hash(&u.id)).map_err(index_error)? else {
                // Real Solr answers 409 to a versioned update of a document that does not exist.
                return Err(StoreError::unsupported(format!(
                    "update of unknown document '{}'",
                    u.id
                )));
            };
            let mut line = u.json_bytes(&self.id_field, &self.version_field);
            line.push(b'\n');
            let docs = state.pending_docs.as_mut().expect("made above");
            let count = docs.len();
            if state.pending_last.is_none_or(|last| doc_offset < last) {
                state.pending_runs.push((count, state.pending_bytes));
            }
            docs.push(doc_offset).map_err(pending_error)?;
            state.pending_last = Some(doc_offset);
            state.pending_bytes += line.len() as u64;
            let (_, w) = state.pending.as_mut().expect("just created");
            w.write_all(&line)
                .map_err(|e| StoreError::io("cannot write pending updates", e))?;
        }
        Ok(UpdateOutcome {
            applied: batch.len(),
            ..UpdateOutcome::default()
        })
    }

    async fn commit(&self, _mode: CommitMode) -> Result<(), StoreError> {
        let (pending, docs, runs) = {
            let mut state = self.state.lock().expect("file store lock");
            let mut docs = state
                .pending_docs
                .take()
                .unwrap_or_else(|| Column::new(self.spill.clone(), 1));
            docs.flush()
                .map_err(|e| StoreError::io("cannot write pending updates", e))?;
            let runs = std::mem::take(&mut state.pending_runs);
            state.pending_bytes = 0;
            state.pending_last = None;
            match state.pending.take() {
                Some((tmp, mut w)) => {
                    w.flush()
                        .map_err(|e| StoreError::io("cannot write pending updates", e))?;
                    (Some(tmp), docs, runs)
                }
                None => (None, docs, runs),
            }
        };
        let merged = Merged::new(pending.as_ref().map(|t| t.0.as_path()), docs, runs)?;
        self.write_output(merged)
    }

    async fn change_mark(&self, _filter: &Filter) -> Result<String, StoreError> {
        let meta = std::fs::metadata(&self.input)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.input.display()), e))?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(format!("{}/{modified}", meta.len()))
    }

    fn describe(&self) -> String {
        format!("file {}", self.input.display())
    }

    /// The Solr store's model: a file run's report says what the same run would cost a Solr core
    /// (its file reads, `work.file_docs`, are not in the model and cost nothing), as it did before
    /// stores priced their own work.
    fn cost_model(&self) -> CostModel {
        crate::store::solr::SOLR_COSTS
    }
}

/// Of the memory budget, the part the pending updates' input offsets keep in memory.
const PENDING_SHARE: u64 = 64;

/// The file store evaluates filters itself; a raw Solr `fq` would match nothing, silently.
pub(super) fn evaluable(filter: &Filter) -> Result<(), StoreError> {
    if filter.is_solr_only() {
        return Err(StoreError::unsupported(format!(
            "the file store cannot evaluate the Solr query {:?}; write the filter in the subset file mode understands (see --help)",
            // The query as Solr would read it: the user wrote Solr's syntax.
            crate::store::solr::filter::fq(filter)
        )));
    }
    Ok(())
}

pub(super) fn value_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(std::cmp::Ordering::Equal),
        },
        _ => a.to_string().cmp(&b.to_string()),
    }
}
