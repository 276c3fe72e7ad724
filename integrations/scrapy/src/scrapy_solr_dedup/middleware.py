"""A downloader middleware that asks ``solr-dedup serve`` whether a request's URL duplicates a page
already in the index, and drops the request when it does.

The questions go in batches: requests that arrive within ``SOLR_DEDUP_BATCH_DELAY`` seconds of each
other (or ``SOLR_DEDUP_BATCH_SIZE`` of them) share one ``POST /api/urls/predict``. The middleware
fails open: when the server does not answer, requests go through, a warning is logged once per outage,
``solr_dedup/server_errors`` counts it, and the server is asked again after
``SOLR_DEDUP_RETRY_AFTER`` seconds.

Settings (MaybeDont's names work as fallbacks where the meaning is the same):

``SOLR_DEDUP_URL``
    The server, e.g. ``http://127.0.0.1:8987``. Required (also read from the environment); without
    it the middleware is disabled.
``SOLR_DEDUP_TOKEN``
    The bearer token, when serve has one (also read from the environment).
``SOLR_DEDUP_THRESHOLD`` (``AVOID_DUP_CONTENT_THRESHOLD``), default 0.98
    The lowest predicted probability at which a request is dropped.
``SOLR_DEDUP_EXPLORATION`` (``AVOID_DUP_CONTENT_EXPLORATION``), default 0.05
    The share of requests that would be dropped and are made anyway, so that the crawl keeps
    checking the rules against what the site serves.
``SOLR_DEDUP_META_ONLY``, default False
    Ask only for requests with ``avoid_dup_content`` in ``request.meta`` (MaybeDont's behaviour).
    Otherwise every http(s) request is asked about, except those with ``request.meta["solr_dedup"]
    = False``.
``SOLR_DEDUP_BATCH_SIZE`` (default 100, at most 10,000), ``SOLR_DEDUP_BATCH_DELAY`` (default 0.05 s),
``SOLR_DEDUP_TIMEOUT`` (default 5 s), ``SOLR_DEDUP_RETRY_AFTER`` (default 30 s), ``SOLR_DEDUP_SEED``
    (seeds the exploration draw, for reproducible crawls).

A request that goes through carries the server's answer in ``request.meta["solr_dedup_prediction"]``.
A URL that is itself the indexed page is never dropped: whether to re-crawl a page is the crawler's
decision, not a duplicate.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
import urllib.error
import urllib.request
from typing import Any, Optional

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from twisted.internet import defer, threads

try:  # Scrapy >= 2.6: awaiting a Deferred works under the asyncio reactor too.
    from scrapy.utils.defer import maybe_deferred_to_future
except ImportError:  # pragma: no cover - older Scrapy, Twisted reactor only

    def maybe_deferred_to_future(d):  # type: ignore[no-redef]
        return d


logger = logging.getLogger(__name__)

#: The most URLs serve takes in one request.
MAX_BATCH = 10_000


class PredictionError(Exception):
    """The server did not give predictions (unreachable, refused, or an answer that is not one)."""


class PredictionClient:
    """A blocking client of ``POST /api/urls/predict``."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 5.0):
        self.endpoint = url.rstrip("/") + "/api/urls/predict"
        self.token = token
        self.timeout = timeout

    def predict(self, urls: list[str]) -> list[dict[str, Any]]:
        """One answer per URL, in order (see ``solr-dedup urls predict``)."""
        body = json.dumps({"urls": urls}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.load(response)
        except urllib.error.HTTPError as e:
            raise PredictionError(f"{self.endpoint} answered {e.code}: {_error_text(e)}") from e
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise PredictionError(f"{self.endpoint} did not answer: {reason}") from e
        answers = answer.get("answers") if isinstance(answer, dict) else None
        if not isinstance(answers, list) or len(answers) != len(urls):
            raise PredictionError(f"{self.endpoint} gave an answer that is not one per URL")
        return answers


def _error_text(e: urllib.error.HTTPError) -> str:
    try:
        return json.loads(e.read()).get("error", e.reason)
    except Exception:  # noqa: BLE001 - any body that is not the server's JSON error
        return str(e.reason)


def _setting(settings, name: str, fallback: Optional[str], default: float) -> float:
    if settings.get(name) is not None:
        return settings.getfloat(name)
    if fallback and settings.get(fallback) is not None:
        return settings.getfloat(fallback)
    return default


class SolrDedupMiddleware:
    """Drops requests that ``solr-dedup serve`` predicts to duplicate an indexed page."""

    def __init__(
        self,
        crawler,
        client: PredictionClient,
        threshold: float = 0.98,
        exploration: float = 0.05,
        meta_only: bool = False,
        batch_size: int = 100,
        batch_delay: float = 0.05,
        retry_after: float = 30.0,
        seed: Optional[int] = None,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        self.client = client
        self.threshold = threshold
        self.exploration = exploration
        self.meta_only = meta_only
        self.batch_size = max(1, min(batch_size, MAX_BATCH))
        self.batch_delay = max(0.0, batch_delay)
        self.retry_after = retry_after
        self.random = random.Random(seed)
        self._pending: list[tuple[str, defer.Deferred]] = []
        self._timer = None
        self._down_until = 0.0

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        if not s.getbool("SOLR_DEDUP_ENABLED", True):
            raise NotConfigured("SOLR_DEDUP_ENABLED is false")
        url = s.get("SOLR_DEDUP_URL") or os.environ.get("SOLR_DEDUP_URL")
        if not url:
            raise NotConfigured("SOLR_DEDUP_URL is not set (e.g. http://127.0.0.1:8987)")
        token = s.get("SOLR_DEDUP_TOKEN") or os.environ.get("SOLR_DEDUP_TOKEN")
        seed = s.get("SOLR_DEDUP_SEED")
        mw = cls(
            crawler,
            PredictionClient(url, token, s.getfloat("SOLR_DEDUP_TIMEOUT", 5.0)),
            threshold=_setting(s, "SOLR_DEDUP_THRESHOLD", "AVOID_DUP_CONTENT_THRESHOLD", 0.98),
            exploration=_setting(s, "SOLR_DEDUP_EXPLORATION", "AVOID_DUP_CONTENT_EXPLORATION", 0.05),
            meta_only=s.getbool("SOLR_DEDUP_META_ONLY", False),
            batch_size=s.getint("SOLR_DEDUP_BATCH_SIZE", 100),
            batch_delay=s.getfloat("SOLR_DEDUP_BATCH_DELAY", 0.05),
            retry_after=s.getfloat("SOLR_DEDUP_RETRY_AFTER", 30.0),
            seed=None if seed is None else int(seed),
        )
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        logger.info(
            "solr-dedup: asking %s, dropping at probability >= %s, exploring %s",
            mw.client.endpoint,
            mw.threshold,
            mw.exploration,
        )
        return mw

    def _applies(self, request) -> bool:
        if not request.url.startswith(("http://", "https://")):
            return False
        if request.meta.get("solr_dedup") is False:
            return False
        if self.meta_only:
            return bool(request.meta.get("avoid_dup_content"))
        return True

    async def process_request(self, request, spider=None):
        if not self._applies(request):
            return None
        if time.monotonic() < self._down_until:
            self.stats.inc_value("solr_dedup/unasked_server_down")
            return None
        self.stats.inc_value("solr_dedup/asked")
        answer = await maybe_deferred_to_future(self._ask(request.url))
        if answer is None:
            self.stats.inc_value("solr_dedup/unasked_server_down")
            return None
        request.meta["solr_dedup_prediction"] = answer
        if "error" in answer:
            self.stats.inc_value("solr_dedup/url_errors")
            return None
        original = answer.get("duplicate_of")
        if not original:
            self.stats.inc_value("solr_dedup/new")
            return None
        # `matched` is the indexed page the canonical form met when the index hides it as a double
        # (`duplicate_of` is then the copy search shows): either being this URL means it is indexed.
        matched = answer.get("matched") or original
        if request.url in (original.get("url"), matched.get("url")):
            self.stats.inc_value("solr_dedup/indexed")
            return None
        probability = float(answer.get("probability", 0.0))
        if probability < self.threshold:
            self.stats.inc_value("solr_dedup/below_threshold")
            return None
        if self.exploration > 0 and self.random.random() < self.exploration:
            self.stats.inc_value("solr_dedup/explored")
            return None
        self.stats.inc_value("solr_dedup/dropped")
        logger.debug(
            "solr-dedup: dropped %s, a duplicate of %s (p=%.3f)",
            request.url,
            original.get("url"),
            probability,
        )
        raise IgnoreRequest(
            f"solr-dedup: {request.url} duplicates {original.get('url')} (p={probability:.3f})"
        )

    def _ask(self, url: str) -> defer.Deferred:
        d: defer.Deferred = defer.Deferred()
        self._pending.append((url, d))
        if len(self._pending) >= self.batch_size:
            self._flush()
        elif self._timer is None:
            from twisted.internet import reactor

            self._timer = reactor.callLater(self.batch_delay, self._flush)
        return d

    def _flush(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        batch, self._pending = self._pending, []
        if not batch:
            return
        urls = [u for u, _ in batch]
        self.stats.inc_value("solr_dedup/batches")

        def answered(answers):
            self._down_until = 0.0
            for (_, d), a in zip(batch, answers):
                d.callback(a)

        def failed(failure):
            self.stats.inc_value("solr_dedup/server_errors")
            if self._down_until == 0.0:
                logger.warning(
                    "solr-dedup: %s; letting requests through (fail open) and asking again in %s s",
                    failure.getErrorMessage(),
                    self.retry_after,
                )
            self._down_until = time.monotonic() + self.retry_after
            for _, d in batch:
                d.callback(None)

        threads.deferToThread(self.client.predict, urls).addCallbacks(answered, failed)

    def spider_closed(self, spider=None):
        self._flush()
        stats = self.stats.get_stats()
        logger.info(
            "solr-dedup: asked about %d URLs, dropped %d, explored %d, %d server errors",
            stats.get("solr_dedup/asked", 0),
            stats.get("solr_dedup/dropped", 0),
            stats.get("solr_dedup/explored", 0),
            stats.get("solr_dedup/server_errors", 0),
        )
