"""The simulated web of the soak (tools/soak/soak.py): several sites served on loopback, with URL
variants, site chrome, mirrors, near-duplicate bodies, pages that change and URLs that go away, and
the ground truth the invariants are checked against.

Every site `siteN.example` has pages `/p/K`. A page serves one body (words drawn from a small
vocabulary) inside the site's chrome (a header and a footer shared by all its pages); its title and
description come from the body. The same page answers at URL variants: `http:` and `https:`, with
and without `www.`, and with a tracking (`utm_source`, `ref`) or a session (`sid`) parameter. A
mirror page (`/archive/K`) serves a copy of another page's body as it was when the mirror appeared;
a near page serves another page's body with a few words changed. Over time (`tick`), pages change
(a new body: the old content is gone), pages disappear (every variant answers 404), single URLs go
away (410: a session URL expired, a moved address), and new pages appear, linked from the home page.

The crawler fetches `http://127.0.0.1:PORT/fetch?url=URL`. `content(url)` is the truth: the key of
the body a URL serves now (equal keys, equal text on the same site), or None when it answers 404 or
410.

Standard library only; everything depends on the seed and on the calls to `tick`.
"""
import html
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

WORDS = None


def vocab():
    global WORDS
    if WORDS is None:
        rng = random.Random('soak-vocab')
        cons = 'b c d f g h k l m n p r s t v w z br cr dr fl gr pl st tr ch sh th'.split()
        vows = 'a e i o u ai ea ou io'.split()
        seen = set()
        while len(seen) < 4000:
            seen.add(''.join(rng.choice(cons) + rng.choice(vows)
                             for _ in range(rng.choice((2, 3, 3, 4)))))
        WORDS = sorted(seen)
    return WORDS


class Bag:
    """A list with O(1) add and remove (the last element takes the removed one's place), so that
    the web's per-site sets of live pages cost nothing to keep as the web grows; its order depends
    only on the calls, so sampling from it stays deterministic."""

    def __init__(self):
        self.items, self.pos = [], {}

    def add(self, x):
        if x not in self.pos:
            self.pos[x] = len(self.items)
            self.items.append(x)

    def remove(self, x):
        i = self.pos.pop(x, None)
        if i is None:
            return
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.pos[last] = i

    def __len__(self):
        return len(self.items)


class Page:
    """A page of a site: its body key (what it serves) and whether it still exists."""

    def __init__(self, site, path, body):
        self.site = site
        self.path = path
        self.body = body          # a key into Web.bodies
        self.alive = True
        self.sids = []            # session ids handed out in links to this page


class Web:
    """The sites, their pages and the truth. Thread-safe: the server, the crawler and `tick` share it."""

    def __init__(self, seed, sites=4, pages=60, body_words=120):
        self.rng = random.Random('soak-web|%s' % seed)
        self.lock = threading.Lock()
        self.body_words = body_words
        self.bodies = {}          # body key -> list of words
        self.next_body = 0
        self.sites = ['site%d.example' % i for i in range(sites)]
        self.chrome = {s: self._words(12) for s in self.sites}
        self.pages = {}           # (site, path) -> Page
        self.live = {s: Bag() for s in self.sites}     # site -> its live pages
        self.live_p = {s: Bag() for s in self.sites}   # site -> its live /p/ pages (mirror sources)
        self.dead = set()         # single URLs that answer 410
        self.next_page = {s: 0 for s in self.sites}
        self.changes = {'changed': 0, 'removed': 0, 'urls_gone': 0, 'added': 0, 'mirrors': 0,
                        'near': 0}
        for s in self.sites:
            for _ in range(pages):
                self._add_page(s)

    # ------------------------------------------------------------------ content

    def _words(self, n):
        return [self.rng.choice(vocab()) for _ in range(n)]

    def _new_body(self, words):
        key = self.next_body
        self.next_body += 1
        self.bodies[key] = words
        return key

    def _add_page(self, site):
        k = self.next_page[site]
        self.next_page[site] += 1
        roll = self.rng.random()
        others = self.live_p[site].items
        if roll < 0.08 and others:
            # A mirror: another page's body, as it is now.
            page = Page(site, '/archive/%d' % k, self.rng.choice(others).body)
            self.changes['mirrors'] += 1
        elif roll < 0.16 and others:
            # A near page: another page's body with a few words changed.
            words = list(self.bodies[self.rng.choice(others).body])
            for i in self.rng.sample(range(len(words)), 3):
                words[i] = self.rng.choice(vocab())
            page = Page(site, '/p/%d' % k, self._new_body(words))
            self.changes['near'] += 1
        else:
            page = Page(site, '/p/%d' % k, self._new_body(self._words(self.body_words)))
        page.sids = ['%08x' % self.rng.getrandbits(32) for _ in range(2)]
        self.pages[(site, page.path)] = page
        self.live[site].add(page)
        if page.path.startswith('/p/'):
            self.live_p[site].add(page)
        return page

    def tick(self, changed=0.01, removed=0.005, urls_gone=0.005, added=0.01):
        """One step of the web's life: shares of the live pages change, go, lose one URL variant;
        new pages appear."""
        with self.lock:
            live = [p for p in self.pages.values() if p.alive]
            for p in live:
                r = self.rng.random()
                if r < changed:
                    words = list(self.bodies[p.body])
                    for i in self.rng.sample(range(len(words)), len(words) // 3):
                        words[i] = self.rng.choice(vocab())
                    p.body = self._new_body(words)
                    self.changes['changed'] += 1
                elif r < changed + removed:
                    p.alive = False
                    self.live[p.site].remove(p)
                    self.live_p[p.site].remove(p)
                    self.changes['removed'] += 1
                elif r < changed + removed + urls_gone:
                    # Half the time the canonical URL (the page moved; its variants still answer):
                    # the URL a representative and the predictions most often point at.
                    v = self.variants(p)
                    self.dead.add(v[0] if self.rng.random() < 0.5 else self.rng.choice(v[1:]))
                    self.changes['urls_gone'] += 1
            for s in self.sites:
                n = len(self.live[s])
                for _ in range(max(0, round(n * added + self.rng.random() - 0.5))):
                    self._add_page(s)
                    self.changes['added'] += 1

    # ------------------------------------------------------------------ URLs

    def variants(self, page):
        """Every URL a page answers at (the canonical first)."""
        path = page.path
        out = []
        for scheme in ('https', 'http'):
            for host in ('www.' + page.site, page.site):
                out.append('%s://%s%s' % (scheme, host, path))
        base = 'https://www.%s%s' % (page.site, path)
        out += [base + '?utm_source=mail', base + '?ref=rss',
                'http://%s%s?utm_source=feed' % (page.site, path)]
        out += [base + '?sid=' + s for s in page.sids]
        return out

    def link(self, page, rng):
        """A URL for a link to `page`: mostly the canonical one, else a variant."""
        v = self.variants(page)
        return v[0] if rng.random() < 0.5 else rng.choice(v[1:])

    def resolve(self, url):
        """The page a URL names, whether it exists or not (None: no such page)."""
        u = urlsplit(url)
        host = (u.hostname or '').lower()
        site = host[4:] if host.startswith('www.') else host
        page = self.pages.get((site, u.path))
        if page is None or u.scheme not in ('http', 'https'):
            return None
        q = parse_qs(u.query)
        if set(q) - {'utm_source', 'ref', 'sid'}:
            return None
        if 'sid' in q and q['sid'][0] not in page.sids:
            return None
        return page

    def content(self, url):
        """The truth: (site, body key) the URL serves now, or None (404 or 410)."""
        with self.lock:
            if url in self.dead:
                return None
            u = urlsplit(url)
            if u.path == '/' and not u.query and (u.hostname or '').startswith('www.'):
                site = u.hostname[4:]
                return (site, 'home') if site in self.chrome else None
            page = self.resolve(url)
            if page is None or not page.alive:
                return None
            return (page.site, page.body)

    def homes(self):
        return ['https://www.%s/' % s for s in self.sites]

    # ------------------------------------------------------------------ pages

    def render(self, url):
        """(status, html) for a URL."""
        with self.lock:
            u = urlsplit(url)
            host = (u.hostname or '').lower()
            site = host[4:] if host.startswith('www.') else host
            if u.path == '/' and site in self.chrome:
                rng = random.Random('home|%s|%d' % (site, self.next_page[site]))
                links = [self.link(p, rng) for p in self.live[site].items]
                return 200, self._html(site, 'Home of ' + site, 'The home page', ['welcome'], links)
            if url in self.dead:
                return 410, 'gone'
            page = self.resolve(url)
            if page is None or not page.alive:
                return 404, 'not found'
            words = self.bodies[page.body]
            rng = random.Random('links|%s|%s|%d' % (site, page.path, page.body))
            others = self.live[site].items
            links = [self.link(p, rng) for p in rng.sample(others, min(6, len(others)))]
            title = ' '.join(words[:5])
            return 200, self._html(site, title, ' '.join(words[5:14]), words, links)

    def _html(self, site, title, description, words, links):
        head, foot = self.chrome[site][:6], self.chrome[site][6:]
        hrefs = ''.join('<a href="%s"></a>' % html.escape(l) for l in links)
        return ('<html><head><title>%s</title><meta name="description" content="%s"></head>'
                '<body><div class="chrome">%s</div><div class="body">%s</div>'
                '<div class="chrome">%s</div>%s</body></html>'
                % (html.escape(title), html.escape(description), ' '.join(head), ' '.join(words),
                   ' '.join(foot), hrefs))


def serve(web):
    """Serves `web` on 127.0.0.1 (a free port) on a daemon thread; the server."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            q = parse_qs(urlsplit(self.path).query)
            status, body = web.render(q.get('url', [''])[0])
            data = body.encode()
            self.send_response(status)
            self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
