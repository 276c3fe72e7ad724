#!/usr/bin/env python3
"""Run MaybeDont 0.1.1 (PyPI `MaybeDont`) on a simulated crawl, as its Scrapy middleware would.

    VENV/bin/python maybedont_run.py DIR [--queue-limit 300] [--w3lib] [--per-host] [--out FILE]

maybedont.scrapy_middleware.AvoidDupContentMiddleware keeps ONE DupePredictor for the whole crawl
(all domains together): it queues the first AVOID_DUP_CONTENT_INITIAL_QUEUE_LIMIT (300) responses,
builds DupePredictor(texts_sample=[their texts]) (defaults: jaccard_threshold 0.9, num_perm 128),
replays update_model(url, text) for the queued pages, then calls update_model for every later page.
This script does the same with DIR/crawl.jsonl in crawl order, then calls get_dupe_prob(url) for
every query of DIR/queries.jsonl, and writes DIR/maybedont.jsonl and DIR/maybedont-times.json.

--w3lib: maybedont.utils canonicalises stored URLs with scrapy.utils.url.canonicalize_url when that
import works; Scrapy no longer exports it (2.x today), so with or without Scrapy installed the
package uses the identity. --w3lib restores what it did with the Scrapy of its time (w3lib's
canonicalize_url, keep_fragments=True): sorted query, lower-case host.
--per-host: one predictor per host (lower case, without www.), each with its own first-300 sample;
not what the middleware does, a variant to see what a per-site setup would give.

Python 3.11 shim: DupePredictor._nodup_filter calls random.sample(set, k), which Python 3.11
refuses; maybedont.predict's `random` is replaced by a proxy whose sample() sorts a set first (which
also makes the sample independent of the string hash seed). The installed package is not edited.
"""
import argparse
import json
import os
import platform
import random
import sys
import time
import types
from urllib.parse import urlsplit


def install_shim():
    import maybedont.predict as mp
    real = random.Random(0)  # seeded: runs are repeatable

    def sample(population, k, *a, **kw):
        if isinstance(population, (set, frozenset)):
            population = sorted(population)
        return real.sample(population, k, *a, **kw)

    proxy = types.SimpleNamespace(**{n: getattr(random, n) for n in dir(random) if not n.startswith('__')})
    proxy.sample = sample
    mp.random = proxy


def host_key(url):
    h = (urlsplit(url).hostname or '').lower()
    return h[4:] if h.startswith('www.') else h


class Middleware:
    """The learning half of AvoidDupContentMiddleware.process_response, timed."""

    def __init__(self, DupePredictor, queue_limit):
        self.DupePredictor = DupePredictor
        self.queue_limit = queue_limit
        self.predictor = None
        self.queue = []
        self.build_s = 0.0
        self.update_s = []  # seconds per update_model call

    def process(self, url, text):
        if self.predictor is not None:
            t0 = time.perf_counter()
            self.predictor.update_model(url, text)
            self.update_s.append(time.perf_counter() - t0)
            return
        self.queue.append((url, text))
        if len(self.queue) >= self.queue_limit:
            self.build()

    def build(self):
        t0 = time.perf_counter()
        self.predictor = self.DupePredictor(texts_sample=[t for _, t in self.queue])
        self.build_s = time.perf_counter() - t0
        for url, text in self.queue:
            t0 = time.perf_counter()
            self.predictor.update_model(url, text)
            self.update_s.append(time.perf_counter() - t0)
        self.queue = None

    def finish(self):
        """End of the crawl: with fewer pages than the queue limit the middleware never builds a
        predictor (it would predict nothing); build one from what was queued so there is a model."""
        if self.predictor is None and self.queue:
            self.build()
            return True
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('--queue-limit', type=int, default=300,
                    help='AVOID_DUP_CONTENT_INITIAL_QUEUE_LIMIT (default 300, as the middleware)')
    ap.add_argument('--w3lib', action='store_true', help='canonicalise stored URLs as with old Scrapy')
    ap.add_argument('--per-host', action='store_true', help='one predictor per host (not the middleware)')
    ap.add_argument('--out', help='predictions file (default DIR/maybedont.jsonl)')
    a = ap.parse_args()

    import maybedont
    import maybedont.predict as mp
    from maybedont import DupePredictor
    install_shim()
    if a.w3lib:
        from w3lib.url import canonicalize_url as w3c
        mp.canonicalize_url = lambda url: w3c(url, keep_fragments=True)
        canon = 'w3lib.url.canonicalize_url (keep_fragments=True)'
    else:
        import maybedont.utils as mu
        canon = ('identity (scrapy.utils.url.canonicalize_url not importable)'
                 if mu.canonicalize_url(' X') == ' X' else 'scrapy.utils.url.canonicalize_url')

    out = a.out or os.path.join(a.dir, 'maybedont.jsonl')
    stem = os.path.splitext(out)[0]
    mws = {}
    t_all = time.perf_counter()
    n_pages = 0
    with open(os.path.join(a.dir, 'crawl.jsonl')) as f:
        for line in f:
            d = json.loads(line)
            key = host_key(d['sku']) if a.per_host else ''
            mw = mws.get(key)
            if mw is None:
                mw = mws[key] = Middleware(DupePredictor, a.queue_limit)
            mw.process(d['sku'], d['text_t'])
            n_pages += 1
    forced = [k for k, mw in mws.items() if mw.finish()]
    t_learn = time.perf_counter() - t_all

    queries = [json.loads(l) for l in open(os.path.join(a.dir, 'queries.jsonl')) if l.strip()]
    predict_s = []
    with open(out, 'w') as f:
        for q in queries:
            mw = mws.get(host_key(q['url']) if a.per_host else '')
            try:
                t0 = time.perf_counter()
                p = mw.predictor.get_dupe_prob(q['url']) if mw and mw.predictor else 0.0
                predict_s.append(time.perf_counter() - t0)
                f.write(json.dumps({'url': q['url'], 'probability': float(p)}) + '\n')
            except Exception as e:  # noqa: BLE001 - reported per line, scored as 0
                f.write(json.dumps({'url': q['url'], 'error': '%s: %s' % (type(e).__name__, e)}) + '\n')

    update_s = [s for mw in mws.values() for s in mw.update_s]
    upd_sorted, pred_sorted = sorted(update_s), sorted(predict_s)

    def pct(xs, p):
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None
    try:
        from importlib.metadata import version
        versions = {n: version(n) for n in ('MaybeDont', 'datasketch', 'numpy')}
    except Exception:  # noqa: BLE001
        versions = {}
    times = {
        'mode': 'per-host' if a.per_host else 'global (as the middleware)',
        'predictors': len(mws), 'queue_limit': a.queue_limit,
        'built_at_end_of_crawl': forced,
        'canonicalize_url': canon, 'python': platform.python_version(), 'versions': versions,
        'pages': n_pages, 'queries': len(queries),
        'build_s': sum(mw.build_s for mw in mws.values()),
        'update_total_s': sum(update_s), 'update_calls': len(update_s),
        'update_mean_ms': 1000 * sum(update_s) / len(update_s) if update_s else None,
        'update_median_ms': 1000 * pct(upd_sorted, 0.5) if update_s else None,
        'update_p99_ms': 1000 * pct(upd_sorted, 0.99) if update_s else None,
        'update_max_ms': 1000 * upd_sorted[-1] if update_s else None,
        'learn_wall_s': t_learn,
        'predict_total_s': sum(predict_s), 'predict_calls': len(predict_s),
        'predict_mean_ms': 1000 * sum(predict_s) / len(predict_s) if predict_s else None,
        'predict_median_ms': 1000 * pct(pred_sorted, 0.5) if predict_s else None,
        'predict_p99_ms': 1000 * pct(pred_sorted, 0.99) if predict_s else None,
    }
    with open(stem + '-times.json', 'w') as f:
        json.dump(times, f, indent=1)
    print('maybedont: %s, %d predictor(s), canonicalize_url %s' % (times['mode'], len(mws), canon))
    print('maybedont: DupePredictor built (chrome sample) in %.2f s' % times['build_s'])
    print('maybedont: update_model %d pages in %.1f s: %.2f ms per page (median %.2f, p99 %.2f, max %.1f)'
          % (len(update_s), times['update_total_s'], times['update_mean_ms'] or 0, times['update_median_ms'] or 0,
             times['update_p99_ms'] or 0, times['update_max_ms'] or 0))
    print('maybedont: get_dupe_prob %d URLs in %.3f s: %.3f ms per URL (median %.3f, p99 %.3f)'
          % (len(predict_s), times['predict_total_s'], times['predict_mean_ms'] or 0,
             times['predict_median_ms'] or 0, times['predict_p99_ms'] or 0))
    print('maybedont: wrote %s and %s' % (out, stem + '-times.json'))


if __name__ == '__main__':
    sys.exit(main())
