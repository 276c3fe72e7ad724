#!/usr/bin/env python3
"""The soak of the crawl loop (issue 30): a real Solr, a simulated web (web.py), a crawler that asks
`solr-dedup serve` for predictions before it fetches, `serve --after-quiet --rules` with the rules
learnt again now and then, and faults on a schedule (with --cloud, a Solr node stopped and started
among them); at rest, the invariants. Run through run.sh.

    soak.py --minutes N [--cloud] [--seed S] [--pages P] [--quiet SECONDS] [--node-down SECONDS]

Exit 0 only when every invariant holds; the last line is a one-line summary.

Every process it starts is its child: stopped when it ends, however it ends (a signal, an error,
SIGKILL of this process: serve gets SIGTERM through PR_SET_PDEATHSIG, Solr's launcher stops when its
standard input closes).
"""
import argparse
import collections
import ctypes
import json
import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer as _ThreadingHTTPServer
from urllib.parse import quote, urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import web as webmod  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CHILDREN = []
TEMP = []


class ThreadingHTTPServer(_ThreadingHTTPServer):
    """The standard server, without a traceback on stderr when a client hangs up mid-request (the
    crawler, serve and the faults do that all the time; it is not an error of the soak)."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def log(*args):
    line = '[soak %s] %s' % (time.strftime('%H:%M:%S'), ' '.join(str(a) for a in args))
    print(line, file=sys.stderr, flush=True)


def die_with_parent():
    """In a child, before exec: SIGTERM when the soak dies."""
    try:
        ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM)
    except OSError:
        pass


def spawn(args, **kw):
    p = subprocess.Popen(args, preexec_fn=die_with_parent, **kw)
    CHILDREN.append(p)
    return p


def stop_children():
    for p in CHILDREN:
        if p.poll() is None:
            try:
                if p.stdin:
                    p.stdin.close()
                p.terminate()
            except OSError:
                pass
    deadline = time.time() + 30
    for p in CHILDREN:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()


# ---------------------------------------------------------------------------------------- HTTP

def http(method, url, body=None, headers=None, timeout=60):
    """(status, bytes)."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs.setdefault('Content-Type', 'application/json')
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def jget(url, timeout=60):
    status, data = http('GET', url, timeout=timeout)
    if status != 200:
        raise RuntimeError('GET %s: %s %s' % (url, status, data[:300]))
    return json.loads(data)


def refused(e):
    """Whether `e` is a connection refused: nothing was sent, another node can be asked."""
    return isinstance(e, urllib.error.URLError) and not isinstance(e, urllib.error.HTTPError) \
        and isinstance(e.reason, ConnectionRefusedError)


class Solr:
    """The collection, asked on its first node that takes the connection (the others are tried only
    when one refuses it, as a client that knows the cluster would): with a node stopped, what fails
    is what its shard holds, in Solr's answer. `core` (the first node's) is what the binary gets."""

    def __init__(self, core, nodes=None):
        self.core = core
        path = '/' + core.split('/solr/', 1)[1]
        self.cores = [core] + [n + path for n in (nodes or []) if n + path != core]

    def http(self, method, path, body=None, headers=None):
        for i, core in enumerate(self.cores):
            try:
                return http(method, core + path, body, headers)
            except urllib.error.URLError as e:
                if not refused(e) or i == len(self.cores) - 1:
                    raise
        raise AssertionError('unreachable')

    def select(self, **params):
        params.setdefault('wt', 'json')
        path = '/select?' + urlencode(params, doseq=True)
        status, data = self.http('GET', path)
        if status != 200:
            raise RuntimeError('GET %s: %s %s' % (path, status, data[:300]))
        return json.loads(data)

    def count(self, q='*:*', fq=None):
        p = {'q': q, 'rows': 0}
        if fq:
            p['fq'] = fq
        return self.select(**p)['response']['numFound']

    def update(self, body, **params):
        params.setdefault('commitWithin', '1000')
        status, data = self.http('POST', '/update?' + urlencode(params), body)
        if status != 200:
            raise RuntimeError('update: %s %s' % (status, data[:300]))

    def commit(self):
        self.update([], commit='true', commitWithin='0')

    def get(self, ids, fl):
        if not ids:
            return []
        # `ids` (not `id`): the answer is a list also for one id. No URL of the web has a comma.
        p = [('ids', ','.join(ids)), ('fl', fl), ('wt', 'json')]
        status, data = self.http('POST', '/get', urlencode(p).encode(),
                                 {'Content-Type': 'application/x-www-form-urlencoded'})
        if status != 200:
            raise RuntimeError('get: %s' % status)
        return json.loads(data)['response']['docs']

    def all_docs(self, fl):
        out, mark = [], '*'
        while True:
            r = self.select(q='*:*', fl=fl, rows=1000, sort='id asc', cursorMark=mark)
            out += r['response']['docs']
            if r['nextCursorMark'] == mark:
                return out
            mark = r['nextCursorMark']


# ---------------------------------------------------------------------------------------- Solr

def start_solr(cloud):
    """(collection URL, node base URLs, the launcher); its stdout's later lines are left to
    Cluster."""
    target = os.path.join(REPO, 'tests/solr/target')
    with open(os.path.join(target, 'classpath.txt')) as f:
        cp = os.path.join(target, 'classes') + ':' + f.read().strip()
    java = os.path.join(os.environ['JAVA_HOME'], 'bin/java') if os.environ.get('JAVA_HOME') \
        else 'java'
    which = 'cloud' if cloud else 'standalone'
    logf = open(os.path.join(WORK, 'solr.log'), 'w')
    p = spawn([java, '-Xmx1g', '-XX:+UseSerialGC', '-Djava.net.preferIPv4Stack=true', '-cp', cp,
               'SolrLauncher', os.path.join(REPO, 'schema'), which],
              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logf)
    line = p.stdout.readline().decode()
    if not line.strip():
        raise RuntimeError('the Solr launcher printed nothing; see %s/solr.log' % WORK)
    urls = json.loads(line)
    return urls[which], urls.get('nodes', []), p


class Cluster:
    """The SolrCloud's nodes, stopped and started through the launcher's standard input (`stop N`,
    answered `stopped N` once it is down; `start N`, answered `started N` once every replica of the
    collection is active again)."""

    def __init__(self, launcher, nodes):
        self.launcher, self.nodes = launcher, nodes
        self.answers = queue.Queue()
        self.down = None      # the node stopped on purpose, if any
        self.back_at = 0.0    # when the last stopped node was whole again (its replicas active)
        self.turn = 0

        def read():
            for line in iter(launcher.stdout.readline, b''):
                self.answers.put(line.decode().strip())
            self.answers.put(None)
        threading.Thread(target=read, daemon=True).start()

    def command(self, line, want, timeout=300):
        self.launcher.stdin.write((line + '\n').encode())
        self.launcher.stdin.flush()
        try:
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            answer = 'no answer within %d s' % timeout
        if answer != want:
            raise RuntimeError('%s: the launcher answered %r; see %s/solr.log' % (line, answer, WORK))

    def next_node(self):
        """Not the first node first (its shard goes, the entry point stays), then in turn."""
        n = (self.turn + 1) % len(self.nodes)
        self.turn += 1
        return n

    def stop(self, n):
        self.down = n
        self.command('stop %d' % n, 'stopped %d' % n)

    def start(self, n):
        self.command('start %d' % n, 'started %d' % n)
        self.down = None
        self.back_at = time.time()


class Proxy:
    """Forwards to Solr; answers 503 while `down`. serve reaches Solr only through it."""

    def __init__(self, upstream, nodes=None):
        # Each node's root (`http://127.0.0.1:P`), the upstream's first: a node that refuses the
        # connection (stopped) passes the request to the next one, as a load balancer would.
        first = upstream.split('/solr/')[0]
        self.upstreams = [first] + [n.rsplit('/solr', 1)[0] for n in (nodes or [])
                                    if n.rsplit('/solr', 1)[0] != first]
        self.down = False
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def forward(self):
                n = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(n) if n else None
                if proxy.down:
                    status, data, ctype = 503, b'{"error":"soak: Solr is down"}', 'application/json'
                else:
                    hdrs = {k: v for k, v in self.headers.items()
                            if k.lower() in ('content-type', 'authorization', 'accept')}
                    for upstream in proxy.upstreams:
                        req = urllib.request.Request(upstream + self.path, data=body,
                                                     method=self.command, headers=hdrs)
                        try:
                            with urllib.request.urlopen(req, timeout=300) as r:
                                status, data, ctype = (r.status, r.read(),
                                                       r.headers.get('Content-Type'))
                        except urllib.error.HTTPError as e:
                            status, data, ctype = e.code, e.read(), e.headers.get('Content-Type')
                        except OSError as e:
                            status, data, ctype = 502, str(e).encode(), 'text/plain'
                            if refused(e):
                                continue
                        break
                try:
                    self.send_response(status)
                    self.send_header('Content-Type', ctype or 'application/octet-stream')
                    self.send_header('Content-Length', str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # serve was killed while it waited (a fault)

            do_GET = do_POST = forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.core = 'http://127.0.0.1:%d/solr/%s' % (self.server.server_port,
                                                      upstream.split('/solr/')[1])


# ---------------------------------------------------------------------------------------- serve

class Serve:
    def __init__(self, binary, core, rules, quiet):
        self.binary, self.core, self.rules, self.quiet = binary, core, rules, quiet
        self.state = os.path.join(WORK, 'serve-state')
        self.proc = None
        self.base = None
        self.starts = 0
        self.log = open(os.path.join(WORK, 'serve.log'), 'a')

    def deciding_args(self):
        """The options of serve's runs that decide which member of a group stays: the at-rest checks
        (`check`, `run --full --dry-run`) run with the same, or they judge serve's flags by another
        order. Without `--rules` every home page (one description, "The home page", on every site)
        ties and the first site's wins, while serve's rules put the site with the most pages first:
        `check` exited 1 and `--full --dry-run` would flip two description flags (issue 41)."""
        return ['--rules', self.rules, '--fuzzy-min-words', str(FUZZY_MIN_WORDS)]

    def start(self):
        self.proc = spawn([self.binary, 'serve', '--solr', self.core, '--listen', '127.0.0.1:0',
                           '--after-quiet', '%gs' % self.quiet] + self.deciding_args()
                          + ['--state-dir', self.state, '--retries', '2'],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE,
                          env={k: v for k, v in os.environ.items() if k != 'SOLR_DEDUP_TOKEN'})
        self.starts += 1
        while True:
            line = self.proc.stderr.readline().decode()
            if not line:
                raise RuntimeError('serve ended before listening; see %s/serve.log' % WORK)
            self.log.write(line)
            self.log.flush()
            m = re.search(r'serving on (\S+)', line)
            if m:
                self.base = m.group(1).rstrip('/')
                if not self.base.startswith('http'):
                    self.base = 'http://' + self.base
                break
        proc, out = self.proc, self.log

        def drain():
            for l in iter(proc.stderr.readline, b''):
                out.write(l.decode(errors='replace'))
                out.flush()
        threading.Thread(target=drain, daemon=True).start()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(60)
        self.base = None

    def api(self, method, path, body=None, timeout=30):
        if not self.base:
            return None, None
        try:
            status, data = http(method, self.base + path, body, timeout=timeout)
            return status, json.loads(data) if data else None
        except (OSError, ValueError):
            return None, None

    def predict(self, urls):
        """{url: answer} or None when serve cannot answer (the crawler fails open then)."""
        out = {}
        for i in range(0, len(urls), 1000):
            status, answer = self.api('POST', '/api/urls/predict', {'urls': urls[i:i + 1000]})
            if status != 200:
                return None
            for a in answer['answers']:
                out[a['url']] = a
        return out


# ---------------------------------------------------------------------------------------- crawler

LINK = re.compile(r'<a href="([^"]*)">')
TITLE = re.compile(r'<title>(.*?)</title>')
DESC = re.compile(r'<meta name="description" content="([^"]*)">')
TAGS = re.compile(r'<[^>]+>')


class Crawler:
    """Fetches from the simulated web, indexes into Solr (directly: the crawler is not behind the
    proxy), re-indexes what changed, deletes what went, and skips what serve predicts to be a
    duplicate, as the Scrapy middleware would."""

    def __init__(self, web_port, solr, serve, stats, threshold):
        self.web_port, self.solr, self.serve, self.stats = web_port, solr, serve, stats
        self.threshold = threshold
        self.known = {}        # url -> 'new' | 'indexed' | 'skipped' | 'gone'
        self.text_of = {}      # url -> the text indexed
        self.skipped = {}      # url -> the URL it was predicted to duplicate
        self.pointing = {}     # indexed url -> urls whose last prediction pointed at it
        self.visited = {}      # url -> when last fetched or asked
        self.deleted_at = {}   # url -> when it was deleted from the index
        self.events = []       # (deleted url, exact signature, time): deleted representatives
        self.stale = []        # (deleted url, time, urls that pointed at it)
        self.last_write = 0.0  # when the crawler last changed the index
        self.deleting = {}     # url -> (its stored fields, first try) while Solr refuses its delete
        self.lock = threading.Lock()
        # What `pick` takes from, so that a step costs the same with a million URLs known: the new
        # URLs in the order found, and every visit in the order made (an entry is stale once the
        # URL was visited again or went).
        self.new_q = collections.deque()
        self.revisit_q = collections.deque()   # (when visited, url)

    def fetch(self, url):
        status, data = http('GET', 'http://127.0.0.1:%d/fetch?url=%s' % (self.web_port, quote(url)))
        return status, data.decode()

    def discover(self, html_text):
        for href in LINK.findall(html_text):
            url = unescape(href)
            if url not in self.known:
                self.mark_new(url)

    def mark_new(self, url):
        self.known[url] = 'new'
        self.new_q.append(url)

    def pick(self, n):
        """Half new URLs (in the order found), half the least recently visited (indexed, skipped,
        or new ones whose write Solr refused); either half fills up from the other."""
        def take(q, k, ok):
            out = []
            while q and len(out) < k:
                u = ok(q.popleft())
                if u is not None and u not in out:
                    out.append(u)
            return out

        def fresh(u):
            return u if self.known.get(u) == 'new' else None

        def due(entry):
            t, u = entry
            if self.visited.get(u) != t or self.known.get(u) not in ('new', 'indexed', 'skipped'):
                return None
            return u

        new = take(self.new_q, n // 2, fresh)
        rest = take(self.revisit_q, n - len(new), due)
        new += take(self.new_q, n - len(new) - len(rest), fresh)
        return new + [u for u in rest if u not in new]

    def step(self, urls):
        """Visits `urls`; how many index changes it made."""
        ask = [u for u in urls if self.known.get(u) in ('new', 'skipped')]
        answers = self.serve.predict(ask) if ask else {}
        if answers is None:
            self.stats['predict_unanswered'] += len(ask)
            answers = {}
        adds, deletes = [], []
        for url in urls:
            now = time.time()
            self.visited[url] = now
            self.revisit_q.append((now, url))
            a = answers.get(url)
            dup = a and a.get('duplicate_of')
            # `matched` (when given) is the indexed page met, `duplicate_of` the copy search shows:
            # either being this URL means it is indexed itself.
            met = (a and a.get('matched')) or dup
            if dup and a['probability'] >= self.threshold and url not in (dup['url'], met['url']):
                self.known[url] = 'skipped'
                self.skipped[url] = dup['url']
                self.pointing.setdefault(dup['url'], set()).add(url)
                self.stats['skipped_on_prediction'] += 1
                continue
            if self.known.get(url) == 'skipped':
                self.stats['unskipped'] += 1
            self.skipped.pop(url, None)
            status, page = self.fetch(url)
            self.stats['fetched'] += 1
            if status != 200:
                if url in self.text_of:
                    deletes.append(url)
                else:
                    self.known[url] = 'gone'
                continue
            self.discover(page)
            text = ' '.join(TAGS.sub(' ', page.split('<body>')[1]).split())
            title = unescape(TITLE.search(page).group(1))
            desc = unescape(DESC.search(page).group(1))
            if self.text_of.get(url) != text:
                adds.append({'id': url, 'sku': url, 'text_t': text, 'title': [title],
                             'description_txt': [desc]})
            else:
                self.known[url] = 'indexed'
        if adds:
            # What Solr refused stays as it was: the next visit tries again (a page not counted as
            # indexed, a gone page still to delete). A node stopped in SolrCloud refuses the batch
            # although the other shard's pages went in: sending them again changes nothing.
            try:
                self.solr.update(adds)
            except Exception:
                self.stats['writes_refused'] += 1
                raise
            self.last_write = time.time()
            for d in adds:
                self.deleting.pop(d['id'], None)
                self.stats['reindexed' if d['id'] in self.text_of else 'indexed'] += 1
                self.text_of[d['id']] = d['text_t']
                self.known[d['id']] = 'indexed'
        if deletes:
            self.delete(deletes)
        return len(adds) + len(deletes)

    def delete(self, urls):
        # Was it a representative with copies? Then its content is hidden until a run repairs it.
        # A delete Solr refused may have gone through in part (a shard down): what was stored, and
        # when it was first tried, are kept from the first try (the hidden time counts from it,
        # the longer reading).
        now = time.time()
        try:
            got = self.solr.get(urls, 'id,exact_signature_l,exact_signature_unique_b')
            for d in got:
                self.deleting.setdefault(d['id'], (d, now))
            self.solr.update({'delete': urls})
        except Exception:
            self.stats['writes_refused'] += 1
            raise
        self.last_write = time.time()
        with self.lock:
            for u in urls:
                d, first = self.deleting.pop(u, ({}, now))
                del self.text_of[u]
                self.known[u] = 'gone'
                self.deleted_at[u] = first
                self.stats['deleted'] += 1
                if d.get('exact_signature_unique_b') is True and 'exact_signature_l' in d:
                    self.events.append((u, d['exact_signature_l'], first))
                if self.pointing.get(u):
                    self.stale.append((u, first, sorted(self.pointing.pop(u))))

    def believe_the_index(self, urls):
        """Takes what the index holds for `urls` as what was indexed: a write Solr answered may not
        be what it holds (in SolrCloud, a forward retried after a node stopped can land an older
        text after a newer one), and a crawler that compares with its own memory would never mend
        it. How many URLs the index held otherwise than the crawler believed."""
        held = {d['id']: d.get('text_t') for d in self.solr.get(urls, 'id,text_t')}
        differed = 0
        for u in urls:
            text = held.get(u)
            if isinstance(text, list):
                text = text[0] if text else None
            if self.text_of.get(u) == text:
                continue
            differed += 1
            log('rest: the index holds %s otherwise than the crawler indexed it (%s)'
                % (u, 'absent' if text is None else 'another text'))
            if text is None:
                self.text_of.pop(u, None)
                if self.known.get(u) == 'indexed':
                    self.mark_new(u)
            else:
                self.text_of[u] = text
                if self.known.get(u) in ('gone', None):
                    self.known[u] = 'indexed'  # visited below: deleted again if it is gone
        self.stats['index_differed'] += differed
        return differed

    def rest_pass(self, first):
        """A pass of the rest phase; index changes made. The first visits every URL it knows and
        every URL the index holds, comparing each page with what the index holds for it. The web no
        longer changes then, so a later pass visits only what may still change: URLs found since
        (new), URLs skipped on a prediction (asked again: the runs since may have changed it), and
        URLs the index holds otherwise than the crawler wrote them."""
        changes = 0
        for d in self.solr.all_docs('id'):
            if self.known.get(d['id']) in (None, 'gone'):
                self.known[d['id']] = 'indexed'
        urls = [u for u, s in self.known.items() if s != 'gone']
        for i in range(0, len(urls), 200):
            batch = urls[i:i + 200]
            if self.believe_the_index(batch) == 0 and not first:
                batch = [u for u in batch if self.known.get(u) in ('new', 'skipped')]
            if batch:
                changes += self.step(batch)
        return changes


# ---------------------------------------------------------------------------------------- monitor

class Monitor:
    """Measures, while the soak runs, how long a content stays hidden after its representative is
    deleted (until one of its copies is `exact_signature_unique_b:true` again) and how long serve's
    predictions point at a deleted page."""

    def __init__(self, crawler, solr, cluster=None):
        self.crawler, self.solr, self.cluster = crawler, solr, cluster
        self.hidden, self.staleness = [], []
        # The same, counted from when the index went quiet (the crawler's last write before the
        # copy was shown again, or the delete), or, later, from when a node stopped by the soak was
        # whole again (no run can finish while a shard is down): what the schedule's bound, the
        # quiet period plus one run, is about.
        self.hidden_quiet, self.staleness_quiet = [], []
        self.unresolved_hidden, self.unresolved_stale = [], []
        self.stop = threading.Event()
        self.pending_h, self.pending_s = [], []

    def loop(self):
        while not self.stop.wait(1.0):
            try:
                self.once()
            except Exception as e:  # Solr answering 503 for the crawler too, say
                log('monitor:', e)

    def quiet_since(self, t):
        back = self.cluster.back_at if self.cluster else 0.0
        return max(t, self.crawler.last_write, back)

    def once(self):
        with self.crawler.lock:
            self.pending_h += self.crawler.events
            self.crawler.events = []
            self.pending_s += self.crawler.stale
            self.crawler.stale = []
        if self.cluster and self.cluster.down is not None:
            return  # a shard is down: Solr answers nothing about the collection
        now = time.time()
        keep = []
        for i, (url, sig, t) in enumerate(self.pending_h):
            try:
                if self.solr.count('{!term f=id}' + url) > 0:
                    keep.append((url, sig, t))  # the delete is not visible yet
                    continue
                q = 'exact_signature_l:"%d"' % sig
                if self.solr.count(q, 'exact_signature_unique_b:true') > 0:
                    self.hidden.append(now - t)
                    self.hidden_quiet.append(now - self.quiet_since(t))
                elif self.solr.count(q) > 0:
                    keep.append((url, sig, t))
            except Exception as e:  # each case is measured once: the rest wait for the next poll
                log('monitor:', e)
                keep += self.pending_h[i:]
                break
        self.pending_h = keep
        keep = []
        for (url, t, urls) in self.pending_s:
            answers = self.crawler.serve.predict(urls)
            if answers is None:
                keep.append((url, t, urls))
                continue
            if any(url in ((answers[u].get('duplicate_of') or {}).get('url'),
                           (answers[u].get('matched') or {}).get('url')) for u in urls):
                keep.append((url, t, urls))
            else:
                self.staleness.append(now - t)
                self.staleness_quiet.append(now - self.quiet_since(t))
        self.pending_s = keep

    def finish(self):
        self.stop.set()
        now = time.time()
        self.unresolved_hidden = [now - t for (_, _, t) in self.pending_h]
        self.unresolved_stale = [now - t for (_, t, _) in self.pending_s]


# ---------------------------------------------------------------------------------------- faults

class Faults:
    """One fault at a time, in turn, every `every` seconds: a run cancelled (serve's API), a run
    killed with serve (SIGKILL, then serve started again), serve restarted (SIGTERM), Solr answering
    503 through the proxy for a while; on SolrCloud also a node stopped for `node_down` seconds and
    started again (the two nodes in turn)."""

    KINDS = ['solr_503', 'cancel_run', 'kill_serve_in_run', 'restart_serve']
    # Second, so that the one-minute soak of .ci/run stops a node too.
    CLOUD_KINDS = ['solr_503', 'stop_node', 'cancel_run', 'kill_serve_in_run', 'restart_serve']

    def __init__(self, serve, proxy, every, stats, cluster=None, node_down=15.0):
        self.serve, self.proxy, self.every, self.stats = serve, proxy, every, stats
        self.cluster, self.node_down = cluster, node_down
        # --node-down 0: no node is stopped (the other faults as on a standalone core).
        self.kinds = self.CLOUD_KINDS if cluster and node_down > 0 else self.KINDS
        self.stop = threading.Event()
        self.lock = threading.Lock()  # held while serve or a Solr node is down on purpose

    def running_run(self, wait):
        deadline = time.time() + wait
        while time.time() < deadline and not self.stop.is_set():
            status, r = self.serve.api('GET', '/api/runs/current')
            if status == 200 and r and r.get('run'):
                return r['run']['id']
            time.sleep(0.1)
        return None

    def loop(self):
        i = 0
        while not self.stop.wait(self.every):
            kind = self.kinds[i % len(self.kinds)]
            i += 1
            try:
                done = getattr(self, kind)()
            except Exception as e:
                log('fault %s: %s' % (kind, e))
                done = False
            if done:
                self.stats['fault_' + kind] += 1
                log('fault:', kind)
        # PR_SET_PDEATHSIG fires when the thread that started a child ends, not the process: this
        # thread may have started serve, so it lives as long as the soak (a daemon thread).
        threading.Event().wait()

    def cancel_run(self):
        run = self.running_run(self.every)
        if run is None:
            return False
        status, _ = self.serve.api('POST', '/api/runs/%d/cancel' % run)
        return status in (200, 202)

    def kill_serve_in_run(self):
        if self.running_run(self.every) is None:
            return False
        with self.lock:
            self.serve.stop(signal.SIGKILL)
            time.sleep(1)
            self.serve.start()
        return True

    def restart_serve(self):
        with self.lock:
            self.serve.stop(signal.SIGTERM)
            self.serve.start()
        return True

    def solr_503(self):
        self.proxy.down = True
        self.stop.wait(min(10, self.every / 2))
        self.proxy.down = False
        return True

    def stop_node(self):
        # With one replica a shard, the node's shard is gone meanwhile: the crawler's writes and
        # serve's runs fail. The rest phase waits (the lock) until it is back, cut short; once the
        # crawl has stopped (`stop`, set before the rest phase takes the lock) no node is stopped.
        with self.lock:
            if self.stop.is_set():
                return False
            n = self.cluster.next_node()
            self.cluster.stop(n)
            log('fault: node %d stopped for %gs' % (n, self.node_down))
            self.stop.wait(self.node_down)
            self.cluster.start(n)
        return True


# ---------------------------------------------------------------------------------------- rest

def settle(serve, quiet):
    """Waits until serve runs nothing and has started nothing for two quiet periods (the schedule
    starts a run within one quiet period and a poll of a change), and the prediction index was
    rebuilt after the last run; the last run's record."""
    last, calm_since = None, time.time()
    deadline = time.time() + 900
    while True:
        if time.time() > deadline:
            raise RuntimeError('serve did not settle within 15 minutes; see %s/serve.log' % WORK)
        if serve.proc.poll() is not None:
            log('serve is not running (exit %s): starting it' % serve.proc.returncode)
            serve.start()
        status, runs = serve.api('GET', '/api/runs?limit=5')
        if status != 200:
            time.sleep(1)
            continue
        runs = runs['runs']
        busy = any(r['state'] == 'running' for r in runs)
        newest = runs[0] if runs else None
        if busy or (newest and newest['id'] != (last or {}).get('id')):
            last = newest
            calm_since = time.time()
        elif time.time() - calm_since > 2 * quiet + 1:
            # A change starts a run within the quiet period and one poll (a fifth of it).
            break
        time.sleep(0.5)
    if last and last.get('ended'):
        while True:
            if time.time() > deadline:
                raise RuntimeError('the prediction index was not rebuilt after the last run')
            status, s = serve.api('GET', '/api/status')
            p = (s or {}).get('prediction_index') or {}
            if status == 200 and p.get('loaded_at', 0) >= last['ended'] and not p.get('reloading'):
                break
            time.sleep(0.5)
    return last


# serve's --fuzzy-min-words (the default): a page whose text profile has fewer words takes no part in
# the fuzzy dimension, so it is a group of its own there (unique, count 1).
FUZZY_MIN_WORDS = 4


def fuzzy_key(d):
    words = d.get('fuzzy_signature_words_i')
    if words is None or d.get('fuzzy_signature_l') is None:
        return None
    if words < FUZZY_MIN_WORDS:
        return ('weak profile', d['id'])
    return d['fuzzy_signature_l']


def dimension_groups(docs):
    """Per dimension, the groups of the index as the stored values and URLs make them."""
    def no_www(u):
        return re.sub(r'^(https?://)www\.', r'\1', u)

    def no_scheme(u):
        return re.sub(r'^https?:', '', u)
    keys = {
        'exact_signature_unique_b': lambda d: d.get('exact_signature_l'),
        'fuzzy_signature_unique_b': fuzzy_key,
        'title_unique_b': lambda d: d.get('title_exact_signature_l'),
        'description_unique_b': lambda d: d.get('description_exact_signature_l'),
        'near_unique_b': lambda d: d.get('near_group_s'),
        'www_unique_b': lambda d: no_www(d['sku']),
        'http_unique_b': lambda d: no_scheme(d['sku']),
    }
    out = {}
    for flag, key in keys.items():
        groups = {}
        for d in docs:
            groups.setdefault(key(d), []).append(d)
        out[flag] = groups
    return out


def flips(report):
    """The flags a report says a run would turn over, per dimension, with examples."""
    try:
        dims = json.load(open(report)).get('dimensions', {})
    except (OSError, ValueError):
        return ''
    return ''.join('; %s: %d flips, e.g. %s' % (name, d['flips'], ', '.join(d.get('flip_examples', [])))
                   for name, d in sorted(dims.items()) if d.get('flips'))


def invariants(args, solr, web, crawler, serve, binary):
    """[(name, ok, detail)]."""
    out = []
    fl = ('id,sku,exact_signature_l,fuzzy_signature_l,fuzzy_signature_words_i,title_exact_signature_l,'
          'description_exact_signature_l,near_group_s,exact_signature_unique_b,'
          'fuzzy_signature_unique_b,title_unique_b,description_unique_b,near_unique_b,'
          'www_unique_b,http_unique_b')
    docs = solr.all_docs(fl)
    ids = {d['id'] for d in docs}

    # 1. Exactly one representative per content (the web's truth), and per group of every other
    # dimension; the near representative is the page its group is named after.
    bad = []
    by_content = {}
    for d in docs:
        by_content.setdefault(web.content(d['sku']), []).append(d)
    for content, members in by_content.items():
        if content is None:
            bad.append('exact: %s is indexed but no longer served' % members[0]['id'])
            continue
        trues = [m['id'] for m in members if m.get('exact_signature_unique_b') is True]
        if len(trues) != 1:
            bad.append('exact: content %s has %d representatives among %d pages (%s)'
                       % (content, len(trues), len(members), members[0]['id']))
        if len({m.get('exact_signature_l') for m in members}) != 1:
            bad.append('exact: content %s has several signatures' % (content,))
    for flag, groups in dimension_groups(docs).items():
        for key, members in groups.items():
            if key is None:
                bad.append('%s: %d pages without the value grouped on' % (flag, len(members)))
                continue
            trues = [m['id'] for m in members if m.get(flag) is True]
            if len(trues) != 1:
                bad.append('%s: %d representatives among %d pages (%s)'
                           % (flag, len(trues), len(members), members[0]['id']))
            if flag == 'near_unique_b' and (key not in ids or trues != [key]):
                bad.append('near: group %s is not named after its representative' % key)
    out.append(('one_representative_per_content_and_group', not bad,
                '%d pages, %d contents; %s' % (len(docs), len(by_content), '; '.join(bad[:5]))))

    # 2. `check` exits 0; `run --full --dry-run` would write nothing. Both under the order serve
    # decides by (its rules, its fuzzy minimum), and with a state folder of their own that keeps no
    # order, so that `check` decides every group whose best rank is shared again.
    decide = serve.deciding_args() + ['--state-dir', os.path.join(WORK, 'check-state')]
    report = os.path.join(WORK, 'check.json')
    c = subprocess.run([binary, 'check', '--solr', solr.core, '--quiet', '--report', report]
                       + decide, capture_output=True)
    out.append(('check_exits_0', c.returncode == 0,
                'exit %s %s%s' % (c.returncode, c.stderr.decode()[-300:].strip(),
                                  flips(report) if c.returncode == 1 else '')))
    report = os.path.join(WORK, 'full-dry-run.json')
    c = subprocess.run([binary, 'run', '--solr', solr.core, '--full', '--dry-run', '--quiet',
                        '--report', report] + decide, capture_output=True)
    written = json.load(open(report))['documents']['written'] if c.returncode == 0 else None
    out.append(('full_dry_run_writes_nothing', written == 0,
                'exit %s, would write %s%s' % (c.returncode, written, flips(report) if written else '')))

    # 3. No content the web still serves is missing because a prediction skipped its URL.
    indexed_contents = {web.content(d['sku']) for d in docs}
    missing = [u for u in crawler.skipped
               if web.content(u) is not None and web.content(u) not in indexed_contents]
    out.append(('no_served_content_lost_to_a_prediction', not missing,
                '%d URLs skipped at rest; missing: %s' % (len(crawler.skipped), missing[:5])))

    # 4. Every prediction points at a page that exists.
    urls = sorted(crawler.known)
    answers = serve.predict(urls) or {}
    dangling = [(u, a['duplicate_of']['id']) for u, a in answers.items()
                if a.get('duplicate_of') and a['duplicate_of']['id'] not in ids]
    out.append(('every_prediction_points_at_an_existing_page',
                len(answers) == len(urls) and not dangling,
                '%d of %d URLs answered, %d predicted duplicates; dangling: %s'
                % (len(answers), len(urls),
                   sum(1 for a in answers.values() if a.get('duplicate_of')), dangling[:5])))
    return out


# ---------------------------------------------------------------------------------------- main

def binary_path():
    for b in (os.environ.get('SOLR_DEDUP'), os.path.join(REPO, 'target/release/solr-dedup'),
              os.path.join(REPO, 'target/debug/solr-dedup')):
        if b and os.access(b, os.X_OK):
            return b
    raise RuntimeError('no solr-dedup binary: set SOLR_DEDUP or build one (cargo build)')


def fmt(xs):
    if not xs:
        return 'n=0'
    return 'n=%d worst=%.1fs median=%.1fs' % (len(xs), max(xs), statistics.median(xs))


def main():
    global WORK
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--minutes', type=float, required=True)
    ap.add_argument('--cloud', action='store_true')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--sites', type=int, default=4)
    ap.add_argument('--pages', type=int, default=60, help='pages per site at the start')
    ap.add_argument('--quiet', type=float, default=3.0, help="serve's --after-quiet, seconds")
    ap.add_argument('--rate', type=float, default=40.0, help='URLs visited a second')
    ap.add_argument('--burst', type=float, default=20.0, help='seconds of crawling between pauses')
    ap.add_argument('--threshold', type=float, default=0.9,
                    help="skip a URL predicted a duplicate at this probability (the middleware's "
                         "SOLR_DEDUP_THRESHOLD)")
    ap.add_argument('--churn', type=float, default=0.02,
                    help='share of pages that change (and lose a URL, and half as many go) a pause')
    ap.add_argument('--fault-every', type=float, default=25.0)
    ap.add_argument('--node-down', type=float, default=15.0,
                    help='--cloud: seconds a stopped Solr node stays down before it is started '
                         'again (the start, until its replicas are active, comes on top); 0: no '
                         'node is stopped')
    ap.add_argument('--learn-every', type=float, default=60.0)
    ap.add_argument('--break-at-rest', action='store_true',
                    help='test of the checks: at rest stop serve and delete a representative with '
                         'copies; the soak must then FAIL')
    ap.add_argument('--work', help='folder for logs and state (default: a temporary one)')
    args = ap.parse_args()
    WORK = args.work or tempfile.mkdtemp(prefix='solr-dedup-soak-')
    if not args.work:
        TEMP.append(WORK)
    os.makedirs(WORK, exist_ok=True)
    binary = binary_path()
    mode = 'cloud' if args.cloud else 'standalone'
    stats = {k: 0 for k in ('fetched', 'indexed', 'reindexed', 'deleted', 'skipped_on_prediction',
                            'unskipped', 'predict_unanswered', 'writes_refused', 'learned',
                            'index_differed',
                            'fault_cancel_run', 'fault_kill_serve_in_run', 'fault_restart_serve',
                            'fault_solr_503')}
    if args.cloud:
        stats['fault_stop_node'] = 0
    started = time.time()
    log('work folder', WORK, '; binary', binary, '; mode', mode)
    core, nodes, launcher = start_solr(args.cloud)
    log('solr', core, 'nodes', nodes)
    cluster = Cluster(launcher, nodes) if args.cloud else None
    solr = Solr(core, nodes)
    proxy = Proxy(core, nodes)
    web = webmod.Web(args.seed, args.sites, args.pages)
    web_server = webmod.serve(web)
    rules = os.path.join(WORK, 'rules.json')
    serve = Serve(binary, proxy.core, rules, args.quiet)
    serve.start()
    started = time.time()  # the crawl's minutes start now, Solr up
    crawler = Crawler(web_server.server_port, solr, serve, stats, args.threshold)
    for h in web.homes():
        crawler.mark_new(h)
    monitor = Monitor(crawler, solr, cluster)
    faults = Faults(serve, proxy, args.fault_every, stats, cluster, args.node_down)
    threads = [threading.Thread(target=monitor.loop, daemon=True),
               threading.Thread(target=faults.loop, daemon=True)]
    for t in threads:
        t.start()

    def learn():
        c = subprocess.run([binary, 'urls', 'learn', '--solr', core, '--out', rules, '--quiet'],
                           capture_output=True)
        if c.returncode == 0:
            stats['learned'] += 1
        else:
            log('urls learn failed:', c.stderr.decode()[-300:])

    # The crawl: bursts of crawling with pauses longer than the quiet period, the web changing.
    end = started + args.minutes * 60
    last_learn = time.time()
    burst_start = time.time()
    while time.time() < end:
        if time.time() - burst_start > args.burst:
            web.tick(changed=args.churn, removed=args.churn / 2, urls_gone=args.churn,
                     added=args.churn)
            time.sleep(args.quiet * 2.5)
            burst_start = time.time()
        if time.time() - last_learn > args.learn_every or (stats['learned'] == 0 and
                                                           stats['indexed'] > 200):
            learn()
            last_learn = time.time()
        t0 = time.time()
        urls = crawler.pick(20)
        if not urls:
            time.sleep(0.5)
            continue
        try:
            crawler.step(urls)
        except Exception as e:  # Solr refused the crawler's update: it tries again later
            log('crawler:', e)
        time.sleep(max(0, len(urls) / args.rate - (time.time() - t0)))
    crawl_end = time.time()
    log('crawl stopped:', json.dumps(stats))

    # At rest: no more faults; serve up; passes over every known URL until one changes nothing.
    faults.stop.set()
    with faults.lock:
        proxy.down = False
        if cluster and cluster.down is not None:
            raise RuntimeError('Solr node %d, stopped by the soak, did not start again; see %s/solr.log'
                               % (cluster.down, WORK))
        if serve.proc is None or serve.proc.poll() is not None:
            serve.start()
    solr.commit()
    learn()
    passes = 0
    settle(serve, args.quiet)
    while passes < 6:
        passes += 1
        t0, fetched = time.time(), stats['fetched']
        changes = crawler.rest_pass(passes == 1)
        solr.commit()
        log('rest pass %d: %d index changes, %d fetches, %.0f s'
            % (passes, changes, stats['fetched'] - fetched, time.time() - t0))
        settle(serve, args.quiet)
        if changes == 0:
            break
    monitor.once()
    monitor.finish()
    if args.break_at_rest:
        # The checks' own test: serve stopped, a representative with copies deleted, so that the
        # invariants must fail (exit 1).
        serve.stop()
        rep = solr.select(q='exact_signature_copycount_i:[2 TO *]', fq='exact_signature_unique_b:true',
                          fl='id', rows=1)['response']['docs']
        if rep:
            solr.update({'delete': [rep[0]['id']]}, commit='true', commitWithin='0')
            log('--break-at-rest: serve stopped, representative %s deleted' % rep[0]['id'])
    results = invariants(args, solr, web, crawler, serve, binary)
    status, runs = serve.api('GET', '/api/runs?limit=1000')
    by_state, durations = {}, []
    for r in (runs or {}).get('runs', []):
        by_state[r['state']] = by_state.get(r['state'], 0) + 1
        if r['state'] == 'succeeded' and r.get('ended'):
            durations.append(r['ended'] - r['started'])
    ok = all(r[1] for r in results) and not monitor.unresolved_hidden
    for name, good, detail in results:
        log('%-46s %s  %s' % (name, 'ok' if good else 'BROKEN', detail))
    if monitor.unresolved_hidden:
        log('hidden at rest: %d contents' % len(monitor.unresolved_hidden))
    faults_n = sum(v for k, v in stats.items() if k.startswith('fault_'))
    print('soak %s: %s, %.1f min (crawl %.1f, rest %d passes), %d docs at rest; fetched %d, indexed %d, '
          're-indexed %d, deleted %d, skipped on prediction %d, writes refused %d (tried again), '
          'held by the index otherwise than written %d (mended at rest); '
          'runs %s; faults %d (%s); '
          'longest run %.1fs; hidden after a representative was deleted: %s, from the index quiet: %s '
          '(unresolved %d); predictions to a deleted page: %s, from the index quiet: %s '
          '(unresolved %d); invariants %d/%d%s; work %s'
          % ('PASS' if ok else 'FAIL', mode, (time.time() - started) / 60,
             (crawl_end - started) / 60, passes, solr.count(), stats['fetched'], stats['indexed'],
             stats['reindexed'], stats['deleted'], stats['skipped_on_prediction'],
             stats['writes_refused'], stats['index_differed'], json.dumps(by_state, sort_keys=True), faults_n,
             ', '.join('%s %d' % (k[6:], v) for k, v in stats.items() if k.startswith('fault_')),
             max(durations, default=0), fmt(monitor.hidden), fmt(monitor.hidden_quiet),
             len(monitor.unresolved_hidden), fmt(monitor.staleness), fmt(monitor.staleness_quiet),
             len(monitor.unresolved_stale), sum(1 for r in results if r[1]), len(results),
             '' if ok else ' (' + ', '.join(r[0] for r in results if not r[1]) + ')', WORK),
          flush=True)
    if ok:
        # A passing soak leaves nothing behind; a failing one keeps its logs in the work folder.
        for folder in TEMP:
            shutil.rmtree(folder, ignore_errors=True)
    return 0 if ok else 1


def on_signal(sig, _frame):
    raise SystemExit(128 + sig)


if __name__ == '__main__':
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    code = 1
    try:
        code = main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except Exception as e:
        log('error:', repr(e))
        import traceback
        traceback.print_exc()
        print('soak FAIL: %s' % e, flush=True)
        code = 1
    finally:
        stop_children()
    sys.exit(code)
