//! Page walkers: the cursor handling and progress of every pass, and the record finder.

use super::progress::Progress;
use super::spill::SortedPairs;
use super::{EngineError, Recs, Report};
use crate::store::{Filter, Page, ReadQuery, Store};

/// Walks a read page by page: the cursor handling and progress of every pass.
pub(crate) struct Pages<'p> {
    pub(super) cursor: Option<String>,
    pub(super) done: bool,
    pub(super) progress: &'p dyn Progress,
}

impl<'p> Pages<'p> {
    pub(crate) fn new(progress: &'p dyn Progress) -> Self {
        Pages {
            cursor: None,
            done: false,
            progress,
        }
    }

    /// The next page of `query` (which may change between pages, over the same documents), or
    /// `None` once the store said the read is complete. When the progress says the run is
    /// cancelled, nothing is read: [`EngineError::Cancelled`] with an empty report, which
    /// [`super::execute`] fills in with the run's.
    pub(crate) async fn next<S: Store>(
        &mut self,
        store: &S,
        query: &ReadQuery,
    ) -> Result<Option<Page>, EngineError> {
        if self.done {
            return Ok(None);
        }
        if self.progress.cancelled() {
            return Err(EngineError::Cancelled(Box::default()));
        }
        let page = store.read_page(query, self.cursor.as_deref()).await?;
        Ok(Some(self.take(page)))
    }

    /// Takes `page` as the walk's next: its progress and its cursor.
    fn take(&mut self, page: Page) -> Page {
        self.progress.advance(page.docs.len() as u64);
        match &page.next {
            Some(next) => self.cursor = Some(next.clone()),
            None => self.done = true,
        }
        page
    }

    /// Whether no page of the read has been asked for yet.
    fn fresh(&self) -> bool {
        self.cursor.is_none() && !self.done
    }
}

/// Walks the reads of passes B and C one after the other (the user's filter alone, or its lookups),
/// counting the documents read again.
///
/// Lookups are asked for two at a time: the first page of the next lookup goes out with the
/// current one's, so that Solr answers one while the worker takes the other in (a lookup is
/// mostly Solr's time: reading the stored fields of the documents it finds).
pub(super) struct Rereads<'p> {
    pub(super) queries: Vec<ReadQuery>,
    pub(super) at: usize,
    pub(super) pages: Pages<'p>,
    /// The reads are lookups, not the user's filter alone.
    pub(super) lookups: bool,
    /// The first page of the read after `at`, asked for with `at`'s.
    ahead: Option<Page>,
}

impl<'p> Rereads<'p> {
    /// Whether `reads` are lookups rather than the user's filter (`base`) alone.
    pub(super) fn are_lookups(base: &Filter, reads: &[Filter]) -> bool {
        reads.len() != 1 || reads[0] != *base
    }

    pub(super) fn new(base: ReadQuery, reads: &[Filter], progress: &'p dyn Progress) -> Self {
        let lookups = Self::are_lookups(&base.filter, reads);
        let queries = reads
            .iter()
            .map(|filter| ReadQuery {
                filter: filter.clone(),
                ..base.clone()
            })
            .collect();
        Rereads {
            queries,
            at: 0,
            pages: Pages::new(progress),
            lookups,
            ahead: None,
        }
    }

    pub(super) async fn next<S: Store>(
        &mut self,
        store: &S,
        report: &mut Report,
    ) -> Result<Option<Page>, EngineError> {
        while let Some(query) = self.queries.get(self.at) {
            let fresh = self.pages.fresh();
            // `ahead` waits while the current read has pages to go.
            let ahead = if fresh { self.ahead.take() } else { None };
            let page = match (ahead, self.queries.get(self.at + 1)) {
                (Some(page), _) => Some(self.pages.take(page)),
                (None, Some(after)) if self.lookups && fresh => {
                    if self.pages.progress.cancelled() {
                        return Err(EngineError::Cancelled(Box::default()));
                    }
                    let (page, ahead) =
                        tokio::join!(store.read_page(query, None), store.read_page(after, None));
                    let (page, ahead) = (page?, ahead?);
                    self.ahead = Some(ahead);
                    Some(self.pages.take(page))
                }
                _ => self.pages.next(store, query).await?,
            };
            if let Some(page) = page {
                report.documents.reread += page.docs.len() as u64;
                if self.lookups {
                    report.work.lookup(page.via, page.docs.len());
                } else {
                    report.work.light(page.via, page.docs.len());
                }
                return Ok(Some(page));
            }
            self.at += 1;
            self.pages = Pages::new(self.pages.progress);
            // `ahead`, when there is one, is the first page of the new `at`.
        }
        Ok(None)
    }
}

/// Finds a document's record by id hash. A store normally returns the documents in the same order
/// in every pass, so the record after the last one found is tried first; any other order falls back to
/// a binary search and gives the same answers.
pub(super) struct Finder<'r> {
    pub(super) recs: &'r Recs,
    pub(super) by_hash: &'r SortedPairs,
    pub(super) next: usize,
}

impl<'r> Finder<'r> {
    pub(super) fn new(recs: &'r Recs, by_hash: &'r SortedPairs) -> Self {
        Finder {
            recs,
            by_hash,
            next: 0,
        }
    }

    pub(super) fn index(&mut self, h: u64) -> Option<usize> {
        let next = (self.next < self.recs.len()).then(|| self.recs.get(self.next));
        let idx = match next {
            // Id hashes are unique (checked after pass A), so an equal hash is the record.
            Some(r) if r.id_hash == h => self.next,
            // A read of the index that fails is kept with the records' own (`Recs::check`).
            _ => match self.by_hash.find(h) {
                Ok(i) => i? as usize,
                Err(e) => {
                    self.recs.fail(e);
                    return None;
                }
            },
        };
        self.next = idx + 1;
        Some(idx)
    }
}
