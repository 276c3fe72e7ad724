#!/usr/bin/env python3
"""A deterministic simulated crawl of several kinds of sites, with ground truth, for the URL-rules
evaluation (README.md in this directory).

    python3 simulate.py --seed 1 --out DIR [--scale 1.0]

Writes DIR/crawl.jsonl (Solr documents in crawl order: id, sku = URL, text_t), DIR/queries.jsonl
(URLs not in the crawl, labelled by routing), DIR/query-urls.txt and DIR/meta.json.

With --truth-urls (the representative evaluation, tools/repr-eval) every site also answers on an
alias host (a second host name serving the same site, a variant kind `alias-host`), and
DIR/truth-urls.jsonl gets one line per crawled document: its content id, whether its URL is the
content's primary (canonical) URL, and the variant kinds applied to make it. Without the flag the
output is exactly what it was before the flag existed.

Every site has a routing function, URL -> content id (None for a 404), which is the ground truth: a
query is a duplicate when its content id is the content id of some crawled URL. Pages with the same
content id serve the same text, except print views, which serve the body without the site chrome.

Standard library only; the output depends only on --seed and --scale.
"""
import argparse
import json
import math
import os
import random
import re
import sys
import time
from urllib.parse import parse_qsl, urlsplit, urlunsplit

TRACKING = frozenset(['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content',
                      'fbclid', 'ref'])

# Order in which a combined variant applies its parts (index.html before ;jsessionid, host last).
KIND_ORDER = ['index-html', 'jsessionid', 'print', 'default-value', 'sid', 'tracking',
              'param-order', 'www', 'scheme', 'host-case']
POSITIVE_PATTERNS = KIND_ORDER + ['combined']
NEGATIVE_PATTERNS = ['matters-sort-desc', 'matters-param', 'new-page', 'unfetched-base']

# --truth-urls only: a second host name each site also answers on (same pages, same routing).
ALIAS_HOSTS = {
    'forum.example.org': 'community.example.org', 'board.example.net': 'board-example.com',
    'news.example.com': 'news-example.net', 'herald.example.net': 'theherald.example.com',
    'shop.example.com': 'shop.example.net', 'store.example.net': 'mystore.example.com',
    'docs.example.org': 'documentation.example.org', 'manual.example.com': 'manual.example.org',
    'wiki.example.org': 'wiki.example.com', 'wiki.example.net': 'encyclopedia.example.net',
}
ALIAS_WEIGHT = 0.6


def kind_rank(kind):
    """Order in which a combined variant applies its parts; an alias host comes before www, scheme
    and host case (which then act on the alias)."""
    if kind == 'alias-host':
        return KIND_ORDER.index('www') - 0.5
    return KIND_ORDER.index(kind)


# Weights of the variant kinds a crawler meets through links (sites may override).
BASE_VARIANT_WEIGHTS = {
    'www': 1.0, 'scheme': 1.0, 'host-case': 0.3, 'tracking': 1.0, 'sid': 3.0, 'jsessionid': 3.0,
    'default-value': 2.0, 'param-order': 1.0, 'index-html': 1.5, 'print': 1.2, 'combined': 0.6,
}


# ---------------------------------------------------------------------------------------------
# words and text

def make_vocab(seed, n=6000):
    rng = random.Random('%s|vocab' % seed)
    cons = 'b c d f g h k l m n p r s t v w z br cr dr fl gr pl st tr ch sh th'.split()
    vows = 'a e i o u ai ea ou io'.split()
    words, seen = [], set()
    while len(words) < n:
        w = ''.join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.choice((2, 2, 3, 3, 4))))
        if rng.random() < 0.3:
            w += rng.choice('nrstlm')
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Words:
    def __init__(self, seed):
        self.vocab = make_vocab(seed)

    def words(self, rng, n):
        return rng.choices(self.vocab, k=n)

    def lines(self, rng, n_words, per_line=(25, 60)):
        out, left = [], n_words
        while left > 0:
            k = min(left, rng.randint(*per_line))
            if left - k < 8:  # no stub line at the end
                k = left
            out.append(' '.join(self.words(rng, k)))
            left -= k
        return out

    def title(self, rng, lo=4, hi=8):
        return ' '.join(w.capitalize() for w in self.words(rng, rng.randint(lo, hi)))

    def slug(self, rng, lo=3, hi=5):
        return '-'.join(self.words(rng, rng.randint(lo, hi)))


def shingles4(text):
    """Word 4-shingles that never span a line (as MaybeDont), for the self-checks."""
    out = set()
    for line in text.split('\n'):
        w = line.split()
        if not w:
            continue
        for i in range(max(1, len(w) - 3)):
            out.add(' '.join(w[i:i + 4]))
    return out


def jaccard(a, b):
    return len(a & b) / len(a | b) if a or b else 1.0


# ---------------------------------------------------------------------------------------------
# URL helpers

def split_url(url):
    p = urlsplit(url)
    return p.scheme, p.netloc, p.path, parse_qsl(p.query, keep_blank_values=True)


def join_url(scheme, netloc, path, query):
    return urlunsplit((scheme, netloc, path, '&'.join('%s=%s' % kv for kv in query), ''))


def hexid(rng, n=32, upper=False):
    s = '%0*x' % (n, rng.getrandbits(4 * n))
    return s.upper() if upper else s


def as_int(s):
    return int(s) if s is not None and s.isdigit() and len(s) < 10 else None


# ---------------------------------------------------------------------------------------------
# sites

class Site:
    """One web site: its contents (content ids), canonical URLs, routing and page texts."""
    kind = None
    host = None          # registered host, lower case, without www.
    www = False          # canonical URLs use www.
    scheme = 'https'     # canonical scheme; both schemes serve the same pages
    java = False         # accepts ;jsessionid= path parameters
    session_param = None  # query session id the site accepts (and ignores)
    print_param = ('print', '1')
    index_html = False   # /dir/ and /dir/index.html are the same page
    variant_weights = {}
    p_variant = 0.3       # share of crawled contents also fetched under variants
    alias_host = None     # --truth-urls: a second host name serving the same site

    def __init__(self, seed, scale, words):
        self.seed = seed
        self.scale = scale
        self.W = words
        self.rng = random.Random('%s|site|%s' % (seed, self.host))
        # cid -> dict(depth, primary, parent, printable)
        self.contents = {}
        self._body = {}
        crng = random.Random('%s|%s|chrome' % (seed, self.host))
        brand = self.host.split('.')[0].capitalize()
        self.header = ' '.join([brand] + words.words(crng, 8))
        self.footer = ' '.join(['copyright', '2024', brand] + words.words(crng, 6))
        self.build()

    # -- to be provided by each site
    def build(self):
        raise NotImplementedError

    def path_query(self, cid):
        """Canonical (path, [(k, v)]) of a content id."""
        raise NotImplementedError

    def resolve(self, path, params):
        """Content id of a normalised path and its relevant parameters, or None (404)."""
        raise NotImplementedError

    def body(self, cid, rng):
        raise NotImplementedError

    def default_for(self, cid):
        """A (param, value) whose value is the default for this content's URL, or None."""
        return None

    # -- common
    def n(self, base, minimum=3):
        return max(minimum, int(round(base * self.scale)))

    def add(self, cid, depth, parent=None, printable=False, secondary_kind=None):
        self.contents[cid] = dict(depth=depth, primary=parent is None, parent=parent,
                                  printable=printable, secondary=secondary_kind)

    def base_url(self, scheme=None, www=None):
        scheme = scheme or self.scheme
        www = self.www if www is None else www
        return '%s://%s%s' % (scheme, 'www.' if www else '', self.host)

    def canonical(self, cid):
        path, query = self.path_query(cid)
        return join_url(self.scheme, ('www.' if self.www else '') + self.host, path, query)

    def route(self, url):
        try:
            p = urlsplit(url)
            port = p.port
        except ValueError:
            return None
        if p.scheme not in ('http', 'https') or port is not None or p.fragment:
            return None
        host = (p.hostname or '').lower()
        if host.startswith('www.'):
            host = host[4:]
        if host != self.host and (self.alias_host is None or host != self.alias_host):
            return None
        path = p.path or '/'
        if ';' in path:
            path, _, pp = path.partition(';')
            if not self.java or not pp.lower().startswith('jsessionid=') or ';' in pp:
                return None
        if self.index_html and path.endswith('/index.html'):
            path = path[:-len('index.html')]
        params = {}
        for k, v in parse_qsl(p.query, keep_blank_values=True):
            if k in TRACKING or k == self.session_param or k == self.print_param[0]:
                continue
            if k in params:
                return None
            params[k] = v
        return self.resolve(path, params)

    def is_print(self, url):
        q = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
        return q.get(self.print_param[0]) == self.print_param[1]

    def body_lines(self, cid):
        b = self._body.get(cid)
        if b is None:
            rng = random.Random('%s|%s|body|%r' % (self.seed, self.host, cid))
            b = self._body[cid] = self.body(cid, rng)
        return b

    def text(self, url):
        cid = self.route(url)
        assert cid is not None, url
        lines = self.body_lines(cid)
        if self.is_print(url) and self.contents[cid]['printable']:
            return '\n'.join(lines)
        return '\n'.join([self.header] + lines + [self.footer])

    def kinds_for(self, cid):
        """Variant kinds that apply to a content's canonical URL."""
        info = self.contents[cid]
        path, query = self.path_query(cid)
        kinds = ['www', 'scheme', 'host-case', 'tracking']
        if self.session_param:
            kinds.append('sid')
        if self.java:
            kinds.append('jsessionid')
        d = self.default_for(cid)
        if d and d[0] not in dict(query):
            kinds.append('default-value')
        if len(query) >= 2:
            kinds.append('param-order')
        if self.index_html and path.endswith('/'):
            kinds.append('index-html')
        if info['printable']:
            kinds.append('print')
        if self.alias_host is not None:
            kinds.append('alias-host')
        kinds.append('combined')
        return kinds

    def weight(self, kind):
        if kind == 'alias-host':
            return ALIAS_WEIGHT
        return self.variant_weights.get(kind, BASE_VARIANT_WEIGHTS[kind])


class ForumPhpbb(Site):
    kind, host, www, scheme = 'forum', 'forum.example.org', False, 'https'
    session_param = 'sid'
    variant_weights = {'sid': 6.0, 'default-value': 2.5, 'param-order': 1.5}
    p_variant = 0.35
    TOPICS_PER_PAGE, POSTS_PER_PAGE = 25, 15

    def build(self):
        r = self.rng
        self.n_forums, n_topics = self.n(40), self.n(1100, 10)
        self.forum_of, self.topic_pages, self.forum_topics = {}, {}, {}
        for t in range(1, n_topics + 1):
            f = r.randint(1, self.n_forums)
            self.forum_of[t] = f
            self.topic_pages[t] = r.choices((1, 2, 3, 4), (60, 25, 10, 5))[0]
            self.forum_topics.setdefault(f, []).append(t)
        self.add(('home',), 0)
        for f in range(1, self.n_forums + 1):
            pages = max(1, math.ceil(len(self.forum_topics.get(f, [])) / self.TOPICS_PER_PAGE))
            for p in range(pages):
                self.add(('forum', f, p), 1 + p, None if p == 0 else ('forum', f, 0),
                         secondary_kind=None if p == 0 else 'page')
        for t in range(1, n_topics + 1):
            for p in range(self.topic_pages[t]):
                self.add(('topic', t, p), 2 + p, None if p == 0 else ('topic', t, 0),
                         printable=True, secondary_kind=None if p == 0 else 'page')

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'forum':
            q = [('f', cid[1])]
            if cid[2]:
                q.append(('start', cid[2] * self.TOPICS_PER_PAGE))
            return '/viewforum.php', q
        q = [('f', self.forum_of[cid[1]]), ('t', cid[1])]
        if cid[2]:
            q.append(('start', cid[2] * self.POSTS_PER_PAGE))
        return '/viewtopic.php', q

    def resolve(self, path, params):
        if path in ('/', '/index.php'):
            return ('home',)
        start = as_int(params.get('start', '0'))
        if start is None:
            return None
        if path == '/viewforum.php':
            f = as_int(params.get('f'))
            cid = ('forum', f, start // self.TOPICS_PER_PAGE)
            ok = start % self.TOPICS_PER_PAGE == 0
        elif path == '/viewtopic.php':  # f is ignored: the topic id decides
            t = as_int(params.get('t'))
            cid = ('topic', t, start // self.POSTS_PER_PAGE)
            ok = start % self.POSTS_PER_PAGE == 0
        else:
            return None
        return cid if ok and cid in self.contents else None

    def default_for(self, cid):
        return ('start', '0') if cid[0] != 'home' and cid[2] == 0 else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return ['Forum %d %s' % (f, W.title(random.Random('%s|%s|ft|%d' % (self.seed, self.host, f)), 2, 4))
                    for f in range(1, self.n_forums + 1)]
        if cid[0] == 'forum':
            ts = self.forum_topics.get(cid[1], [])
            ts = ts[cid[2] * self.TOPICS_PER_PAGE:(cid[2] + 1) * self.TOPICS_PER_PAGE]
            return ['%s replies %d views %d' % (self.topic_title(t), rng.randint(0, 80), rng.randint(10, 9000))
                    for t in ts] or ['no topics yet']
        lines = [self.topic_title(cid[1]) + ' page %d' % (cid[2] + 1)]
        for _ in range(rng.randint(5, 10)):
            lines.append('posted by %s %s' % (W.words(rng, 1)[0], ' '.join(W.words(rng, rng.randint(30, 70)))))
        return lines

    def topic_title(self, t):
        return self.W.title(random.Random('%s|%s|tt|%d' % (self.seed, self.host, t)))


class ForumSmf(Site):
    kind, host, www, scheme = 'forum', 'board.example.net', True, 'https'
    session_param = 'PHPSESSID'
    variant_weights = {'sid': 5.0, 'default-value': 2.0}
    p_variant = 0.3
    TOPICS_PER_PAGE, POSTS_PER_PAGE = 20, 15

    def build(self):
        r = self.rng
        self.n_boards, n_topics = self.n(30), self.n(1000, 10)
        self.board_topics, self.topic_pages = {}, {}
        for t in range(1, n_topics + 1):
            self.board_topics.setdefault(r.randint(1, self.n_boards), []).append(t)
            self.topic_pages[t] = r.choices((1, 2, 3, 5), (55, 25, 15, 5))[0]
        self.add(('home',), 0)
        for b in range(1, self.n_boards + 1):
            pages = max(1, math.ceil(len(self.board_topics.get(b, [])) / self.TOPICS_PER_PAGE))
            for p in range(pages):
                self.add(('board', b, p), 1 + p, None if p == 0 else ('board', b, 0),
                         secondary_kind=None if p == 0 else 'page')
        for t in range(1, n_topics + 1):
            for p in range(self.topic_pages[t]):
                self.add(('topic', t, p), 2 + p, None if p == 0 else ('topic', t, 0),
                         printable=True, secondary_kind=None if p == 0 else 'page')

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/index.php', []
        per = self.TOPICS_PER_PAGE if cid[0] == 'board' else self.POSTS_PER_PAGE
        q = [(cid[0], cid[1])]
        if cid[2]:
            q.append(('start', cid[2] * per))
        return '/index.php', q

    def resolve(self, path, params):
        if path not in ('/', '/index.php'):
            return None
        start = as_int(params.get('start', '0'))
        if start is None:
            return None
        for name, per in (('topic', self.POSTS_PER_PAGE), ('board', self.TOPICS_PER_PAGE)):
            if name in params:
                cid = (name, as_int(params[name]), start // per)
                return cid if start % per == 0 and cid in self.contents else None
        return ('home',) if 'start' not in params else None

    def default_for(self, cid):
        return ('start', '0') if cid[0] != 'home' and cid[2] == 0 else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return ['Board %d %s' % (b, W.title(random.Random('%s|%s|bt|%d' % (self.seed, self.host, b)), 2, 4))
                    for b in range(1, self.n_boards + 1)]
        if cid[0] == 'board':
            ts = self.board_topics.get(cid[1], [])
            ts = ts[cid[2] * self.TOPICS_PER_PAGE:(cid[2] + 1) * self.TOPICS_PER_PAGE]
            return ['%s started by %s replies %d' % (self.topic_title(t), W.words(rng, 1)[0], rng.randint(0, 99))
                    for t in ts] or ['no topics yet']
        lines = ['%s page %d' % (self.topic_title(cid[1]), cid[2] + 1)]
        for _ in range(rng.randint(5, 10)):
            lines.append('%s wrote %s' % (W.words(rng, 1)[0], ' '.join(W.words(rng, rng.randint(30, 70)))))
        return lines

    def topic_title(self, t):
        return self.W.title(random.Random('%s|%s|tt|%d' % (self.seed, self.host, t)))


SECTIONS = ['world', 'politics', 'business', 'tech', 'science', 'sport', 'culture', 'travel']


class NewsPath(Site):
    """Article ids in the path; sections with ?page=N (page=1 is the default); index.html."""
    kind, host, www, scheme = 'news', 'news.example.com', True, 'https'
    index_html = True
    variant_weights = {'tracking': 4.0, 'print': 1.5, 'default-value': 1.0}
    p_variant = 0.3
    PER_PAGE = 30

    def build(self):
        r = self.rng
        n_articles = self.n(1200, 10)
        self.articles = {}
        self.section_articles = {s: [] for s in SECTIONS}
        for a in range(1001, 1001 + n_articles):
            s = r.choice(SECTIONS)
            self.articles[a] = (s, r.randint(2019, 2024), r.randint(1, 12), self.W.slug(r))
            self.section_articles[s].append(a)
        self.add(('home',), 0)
        for s in SECTIONS:
            pages = max(1, math.ceil(len(self.section_articles[s]) / self.PER_PAGE))
            for p in range(pages):
                self.add(('section', s, p), 1 + p, None if p == 0 else ('section', s, 0),
                         secondary_kind=None if p == 0 else 'page')
        for a in self.articles:
            self.add(('article', a), 2, printable=True)

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'section':
            return '/%s/' % cid[1], ([('page', cid[2] + 1)] if cid[2] else [])
        s, y, m, slug = self.articles[cid[1]]
        return '/%s/%d/%02d/%s-%d.html' % (s, y, m, slug, cid[1]), []

    ARTICLE = re.compile(r'^/([a-z]+)/(\d{4})/(\d{2})/[a-z-]+-(\d+)\.html$')

    def resolve(self, path, params):
        if path == '/':
            return ('home',)
        m = re.match(r'^/([a-z]+)/$', path)
        if m:
            p = as_int(params.get('page', '1'))
            cid = ('section', m.group(1), (p or 0) - 1)
            return cid if cid in self.contents else None
        m = self.ARTICLE.match(path)
        if m:
            a = int(m.group(4))
            if a in self.articles and self.articles[a][0] == m.group(1):
                return ('article', a)  # the slug and the date do not matter
        return None

    def default_for(self, cid):
        return ('page', '1') if cid[0] == 'section' and cid[2] == 0 else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            lines = []
            for s in SECTIONS:
                lines += [self.headline(a) for a in self.section_articles[s][-4:]]
            return lines
        if cid[0] == 'section':
            arts = self.section_articles[cid[1]][cid[2] * self.PER_PAGE:(cid[2] + 1) * self.PER_PAGE]
            return ['%s %s' % (self.headline(a), ' '.join(W.words(random.Random('%s|%s|teaser|%d' % (self.seed, self.host, a)), 8)))
                    for a in arts]
        return [self.headline(cid[1]), 'by ' + ' '.join(W.words(rng, 2))] + W.lines(rng, rng.randint(300, 600))

    def headline(self, a):
        return self.W.title(random.Random('%s|%s|hl|%d' % (self.seed, self.host, a)), 5, 10)


class NewsQuery(Site):
    """story.php?id=N, lang=en default and lang=de translations, section.php?name=S&page=N."""
    kind, host, www, scheme = 'news', 'herald.example.net', False, 'http'
    session_param = 'PHPSESSID'
    variant_weights = {'tracking': 3.0, 'sid': 2.0, 'default-value': 2.0}
    p_variant = 0.3
    PER_PAGE = 25
    SECTIONS = ['local', 'region', 'economy', 'opinion', 'sports', 'arts']

    def build(self):
        r = self.rng
        n = self.n(1100, 10)
        self.stories, self.section_stories = {}, {s: [] for s in self.SECTIONS}
        for i in range(1, n + 1):
            sid = 40000 + i * 7
            s = r.choice(self.SECTIONS)
            self.stories[sid] = (s, r.random() < 0.3)
            self.section_stories[s].append(sid)
        self.add(('home',), 0)
        for s in self.SECTIONS:
            pages = max(1, math.ceil(len(self.section_stories[s]) / self.PER_PAGE))
            for p in range(pages):
                self.add(('section', s, p), 1 + p, None if p == 0 else ('section', s, 0),
                         secondary_kind=None if p == 0 else 'page')
        for sid, (s, de) in self.stories.items():
            self.add(('story', sid, 'en'), 2, printable=True)
            if de:
                self.add(('story', sid, 'de'), 3, ('story', sid, 'en'), printable=True,
                         secondary_kind='lang')

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'section':
            return '/section.php', [('name', cid[1])] + ([('page', cid[2] + 1)] if cid[2] else [])
        return '/story.php', [('id', cid[1])] + ([('lang', 'de')] if cid[2] == 'de' else [])

    def resolve(self, path, params):
        lang = params.get('lang', 'en')
        if path in ('/', '/index.php'):
            return ('home',) if lang == 'en' else None
        if path == '/section.php':
            p = as_int(params.get('page', '1'))
            cid = ('section', params.get('name'), (p or 0) - 1)
            return cid if lang == 'en' and cid in self.contents else None
        if path == '/story.php':
            cid = ('story', as_int(params.get('id')), lang)
            return cid if cid in self.contents else None
        return None

    def default_for(self, cid):
        if cid[0] == 'story' and cid[2] == 'en':
            return ('lang', 'en')
        if cid[0] == 'section' and cid[2] == 0:
            return ('page', '1')
        return None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return [self.headline(s) for sec in self.SECTIONS for s in self.section_stories[sec][:5]]
        if cid[0] == 'section':
            ss = self.section_stories[cid[1]][cid[2] * self.PER_PAGE:(cid[2] + 1) * self.PER_PAGE]
            return ['%s %s' % (self.headline(s), ' '.join(W.words(random.Random('%s|%s|tz|%d' % (self.seed, self.host, s)), 8)))
                    for s in ss]
        return [self.headline(cid[1]) + (' deutsch' if cid[2] == 'de' else '')] + W.lines(rng, rng.randint(300, 550))

    def headline(self, s):
        return self.W.title(random.Random('%s|%s|hl|%d' % (self.seed, self.host, s)), 5, 10)


COLORS = ['red', 'blue', 'green', 'black', 'white', 'grey', 'navy', 'beige', 'olive', 'pink']


def category_sizes(rng, n, per_page):
    """Item counts whose last page is neither nearly empty nor nearly full, so that a sort=desc
    page never shares most of its items with a sort=asc page."""
    out = []
    for _ in range(n):
        k = rng.randint(1, 6)
        out.append(k * per_page + rng.randint(5, 15))
    return out


class ShopJava(Site):
    """/product/N(?color=c), /category/K(?page=P)(&sort=desc); Java: ;jsessionid=."""
    kind, host, www, scheme = 'shop', 'shop.example.com', False, 'https'
    java = True
    variant_weights = {'jsessionid': 5.0, 'default-value': 2.5, 'tracking': 1.5, 'host-case': 0.6}
    p_variant = 0.3
    PER_PAGE = 20

    def build(self):
        r = self.rng
        n_products, n_cats = self.n(750, 20), self.n(90)
        self.colors = {}
        for pid in range(1, n_products + 1):
            self.colors[pid] = r.sample(COLORS, r.choices((1, 2, 3, 4), (40, 30, 20, 10))[0])
        self.cat_items = {}
        for k, size in enumerate(category_sizes(r, n_cats, self.PER_PAGE), 1):
            self.cat_items[k] = r.sample(range(1, n_products + 1), min(size, n_products))
        self.add(('home',), 0)
        for k, items in self.cat_items.items():
            pages = math.ceil(len(items) / self.PER_PAGE)
            for p in range(pages):
                self.add(('cat', k, 'asc', p), 1 + p, None if p == 0 else ('cat', k, 'asc', 0),
                         secondary_kind=None if p == 0 else 'page')
                self.add(('cat', k, 'desc', p), 2 + p, ('cat', k, 'asc', p), secondary_kind='sort-desc')
        for pid, cols in self.colors.items():
            self.add(('product', pid, cols[0]), 2)
            for c in cols[1:]:
                self.add(('product', pid, c), 3, ('product', pid, cols[0]), secondary_kind='color')

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'cat':
            q = [('page', cid[3] + 1)] if cid[3] else []
            if cid[2] == 'desc':
                q.append(('sort', 'desc'))
            return '/category/%d' % cid[1], q
        pid = cid[1]
        return '/product/%d' % pid, ([('color', cid[2])] if cid[2] != self.colors[pid][0] else [])

    def resolve(self, path, params):
        if path == '/':
            return ('home',)
        m = re.match(r'^/(category|product)/(\d+)$', path)
        if not m:
            return None
        n = int(m.group(2))
        if m.group(1) == 'category':
            p = as_int(params.get('page', '1'))
            cid = ('cat', n, params.get('sort', 'asc'), (p or 0) - 1)
        else:
            if n not in self.colors:
                return None
            cid = ('product', n, params.get('color', self.colors[n][0]))
        return cid if cid in self.contents else None

    def default_for(self, cid):
        return ('sort', 'asc') if cid[0] == 'cat' and cid[2] == 'asc' else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return ['Category %d %s' % (k, W.title(random.Random('%s|%s|ct|%d' % (self.seed, self.host, k)), 1, 3))
                    for k in self.cat_items]
        if cid[0] == 'cat':
            items = self.cat_items[cid[1]]
            if cid[2] == 'desc':
                items = items[::-1]
            return [self.item_line(pid) for pid in items[cid[3] * self.PER_PAGE:(cid[3] + 1) * self.PER_PAGE]]
        return (['%s in %s' % (self.product_name(cid[1]), cid[2]), 'price %d.%02d' % (rng.randint(5, 500), rng.randint(0, 99))]
                + self.W.lines(rng, rng.randint(250, 450)))

    def product_name(self, pid):
        return self.W.title(random.Random('%s|%s|pn|%d' % (self.seed, self.host, pid)), 2, 4)

    def item_line(self, pid):
        r = random.Random('%s|%s|il|%d' % (self.seed, self.host, pid))
        return '%s %s price %d' % (self.product_name(pid), ' '.join(self.W.words(r, 12)), r.randint(5, 500))


class ShopQuery(Site):
    """/item.php?id=N(&color=c), /list.php?cat=K(&page=P)(&sort=desc); sort=asc default; sid."""
    kind, host, www, scheme = 'shop', 'store.example.net', True, 'https'
    session_param = 'sid'
    variant_weights = {'sid': 3.0, 'tracking': 2.5, 'default-value': 2.5, 'param-order': 1.5}
    p_variant = 0.3
    PER_PAGE = 24

    def build(self):
        r = self.rng
        n_items, n_cats = self.n(700, 20), self.n(80)
        self.colors = {}
        for i in range(1, n_items + 1):
            self.colors[500 + i] = r.sample(COLORS, r.choices((1, 2, 3), (45, 35, 20))[0])
        ids = sorted(self.colors)
        self.cat_items = {}
        for k, size in enumerate(category_sizes(r, n_cats, self.PER_PAGE), 1):
            self.cat_items[k] = r.sample(ids, min(size, len(ids)))
        self.add(('home',), 0)
        for k, items in self.cat_items.items():
            for p in range(math.ceil(len(items) / self.PER_PAGE)):
                self.add(('list', k, 'asc', p), 1 + p, None if p == 0 else ('list', k, 'asc', 0),
                         secondary_kind=None if p == 0 else 'page')
                self.add(('list', k, 'desc', p), 2 + p, ('list', k, 'asc', p), secondary_kind='sort-desc')
        for i, cols in self.colors.items():
            self.add(('item', i, cols[0]), 2)
            for c in cols[1:]:
                self.add(('item', i, c), 3, ('item', i, cols[0]), secondary_kind='color')

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'list':
            q = [('cat', cid[1])]
            if cid[3]:
                q.append(('page', cid[3] + 1))
            if cid[2] == 'desc':
                q.append(('sort', 'desc'))
            return '/list.php', q
        i = cid[1]
        return '/item.php', [('id', i)] + ([('color', cid[2])] if cid[2] != self.colors[i][0] else [])

    def resolve(self, path, params):
        if path in ('/', '/index.php'):
            return ('home',)
        if path == '/list.php':
            p = as_int(params.get('page', '1'))
            cid = ('list', as_int(params.get('cat')), params.get('sort', 'asc'), (p or 0) - 1)
        elif path == '/item.php':
            i = as_int(params.get('id'))
            if i not in self.colors:
                return None
            cid = ('item', i, params.get('color', self.colors[i][0]))
        else:
            return None
        return cid if cid in self.contents else None

    def default_for(self, cid):
        return ('sort', 'asc') if cid[0] == 'list' and cid[2] == 'asc' else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return ['%s %s' % (W.title(random.Random('%s|%s|ct|%d' % (self.seed, self.host, k)), 1, 3), k)
                    for k in self.cat_items]
        if cid[0] == 'list':
            items = self.cat_items[cid[1]]
            if cid[2] == 'desc':
                items = items[::-1]
            return [self.item_line(i) for i in items[cid[3] * self.PER_PAGE:(cid[3] + 1) * self.PER_PAGE]]
        return (['%s colour %s' % (self.item_name(cid[1]), cid[2]), 'only %d left' % rng.randint(1, 40)]
                + W.lines(rng, rng.randint(250, 450)))

    def item_name(self, i):
        return self.W.title(random.Random('%s|%s|in|%d' % (self.seed, self.host, i)), 2, 4)

    def item_line(self, i):
        r = random.Random('%s|%s|il|%d' % (self.seed, self.host, i))
        return '%s %s from %d' % (self.item_name(i), ' '.join(self.W.words(r, 12)), r.randint(5, 500))


class DocsJava(Site):
    """/guide/<topic>/ (index.html), /api/<module>.html; lang=en default, lang=de translations."""
    kind, host, www, scheme = 'docs', 'docs.example.org', False, 'https'
    java = True
    index_html = True
    variant_weights = {'jsessionid': 4.0, 'index-html': 2.5, 'default-value': 2.0, 'print': 1.5}
    p_variant = 0.3

    def build(self):
        r = self.rng
        self.guides, self.modules = [], []
        seen = set()
        while len(self.guides) < self.n(150, 5):
            g = self.W.slug(r, 1, 3)
            if g not in seen:
                seen.add(g)
                self.guides.append(g)
        while len(self.modules) < self.n(650, 5):
            m = '.'.join(self.W.words(r, r.randint(1, 3)))
            if m not in seen:
                seen.add(m)
                self.modules.append(m)
        self.add(('home', 'en'), 0, printable=True)
        for g in self.guides:
            self.add(('guide', g, 'en'), 1, printable=True)
        for m in self.modules:
            self.add(('api', m, 'en'), 2, printable=True)
        for cid in list(self.contents):
            if cid[0] != 'home' and r.random() < 0.4:
                self.add(cid[:2] + ('de',), self.contents[cid]['depth'] + 1, cid, printable=True,
                         secondary_kind='lang')

    def path_query(self, cid):
        q = [('lang', 'de')] if cid[-1] == 'de' else []
        if cid[0] == 'home':
            return '/', q
        if cid[0] == 'guide':
            return '/guide/%s/' % cid[1], q
        return '/api/%s.html' % cid[1], q

    def resolve(self, path, params):
        lang = params.get('lang', 'en')
        if path == '/':
            cid = ('home', lang)
        else:
            m = re.match(r'^/guide/([a-z-]+)/$', path)
            if m:
                cid = ('guide', m.group(1), lang)
            else:
                m = re.match(r'^/api/([a-z.]+)\.html$', path)
                if not m:
                    return None
                cid = ('api', m.group(1), lang)
        return cid if cid in self.contents else None

    def default_for(self, cid):
        return ('lang', 'en') if cid[-1] == 'en' else None

    def body(self, cid, rng):
        W = self.W
        if cid[0] == 'home':
            return ['Guide ' + g.replace('-', ' ') for g in self.guides]
        lines = [('%s %s' % (cid[0], cid[1])) + (' deutsch' if cid[2] == 'de' else '')]
        lines += W.lines(rng, rng.randint(250, 550), (15, 45))
        return lines


class DocsStatic(Site):
    """A static manual: /chapter-N/ and /chapter-N/section-M/ (index.html); nothing in the query."""
    kind, host, www, scheme = 'docs', 'manual.example.com', True, 'http'
    index_html = True
    variant_weights = {'index-html': 4.0, 'www': 2.0, 'scheme': 2.0, 'print': 1.0}
    p_variant = 0.25

    def build(self):
        r = self.rng
        self.sections = {}
        for c in range(1, self.n(55) + 1):
            self.sections[c] = r.randint(3, 14)
        self.add(('home',), 0)
        for c, ns in self.sections.items():
            self.add(('chapter', c), 1, printable=True)
            for s in range(1, ns + 1):
                self.add(('section', c, s), 2, printable=True)

    def path_query(self, cid):
        if cid[0] == 'home':
            return '/', []
        if cid[0] == 'chapter':
            return '/chapter-%d/' % cid[1], []
        return '/chapter-%d/section-%d/' % cid[1:], []

    def resolve(self, path, params):
        if path == '/':
            return ('home',)
        m = re.match(r'^/chapter-(\d+)/(?:section-(\d+)/)?$', path)
        if not m:
            return None
        c = int(m.group(1))
        cid = ('chapter', c) if m.group(2) is None else ('section', c, int(m.group(2)))
        return cid if cid in self.contents else None

    def body(self, cid, rng):
        if cid[0] == 'home':
            return ['Chapter %d %s' % (c, self.W.title(random.Random('%s|%s|ch|%d' % (self.seed, self.host, c)), 2, 5))
                    for c in self.sections]
        return ['%s %s' % cid[:2]] + self.W.lines(rng, rng.randint(250, 600), (20, 50))


class WikiQuery(Site):
    """/index.php?title=T; action=view default; oldid=N old revisions; printable=yes."""
    kind, host, www, scheme = 'wiki', 'wiki.example.org', False, 'https'
    print_param = ('printable', 'yes')
    variant_weights = {'default-value': 3.0, 'print': 2.0, 'param-order': 2.0}
    p_variant = 0.3

    def build(self):
        r = self.rng
        self.titles, seen = [], set()
        while len(self.titles) < self.n(1000, 10):
            t = '_'.join(w.capitalize() for w in self.W.words(r, r.randint(1, 3)))
            if t not in seen:
                seen.add(t)
                self.titles.append(t)
        self.revs, self.rev_title = {}, {}
        next_rev = 100000
        for t in self.titles:
            self.add(('page', t), 1 if t != self.titles[0] else 0, printable=True)
            for _ in range(r.choices((0, 1, 2, 3), (40, 30, 20, 10))[0]):
                next_rev += r.randint(1, 50)
                self.rev_title[next_rev] = t
                self.add(('rev', next_rev), 2, ('page', t), printable=True, secondary_kind='oldid')

    def path_query(self, cid):
        if cid[0] == 'page':
            return '/index.php', [('title', cid[1])]
        return '/index.php', [('title', self.rev_title[cid[1]]), ('oldid', cid[1])]

    def resolve(self, path, params):
        if path != '/index.php' or params.get('action', 'view') != 'view':
            return None
        t = params.get('title')
        if 'oldid' in params:
            o = as_int(params['oldid'])
            return ('rev', o) if self.rev_title.get(o) == t else None
        return ('page', t) if ('page', t) in self.contents else None

    def default_for(self, cid):
        return ('action', 'view')

    def body(self, cid, rng):
        t = cid[1] if cid[0] == 'page' else self.rev_title[cid[1]]
        return [t.replace('_', ' ') + (' revision %d' % cid[1] if cid[0] == 'rev' else '')] + self.W.lines(rng, rng.randint(250, 600))


class WikiPath(Site):
    """/wiki/T(?oldid=N); lang=en default; printable=yes."""
    kind, host, www, scheme = 'wiki', 'wiki.example.net', False, 'http'
    print_param = ('printable', 'yes')
    variant_weights = {'default-value': 2.0, 'print': 2.0, 'tracking': 1.5}
    p_variant = 0.3

    def build(self):
        r = self.rng
        self.titles, seen = [], set()
        while len(self.titles) < self.n(900, 10):
            t = '_'.join(w.capitalize() for w in self.W.words(r, r.randint(1, 3)))
            if t not in seen:
                seen.add(t)
                self.titles.append(t)
        self.rev_title = {}
        rev = 5000
        for t in self.titles:
            self.add(('page', t), 1 if t != self.titles[0] else 0, printable=True)
            for _ in range(r.choices((0, 1, 2), (50, 30, 20))[0]):
                rev += r.randint(1, 30)
                self.rev_title[rev] = t
                self.add(('rev', rev), 2, ('page', t), printable=True, secondary_kind='oldid')

    def path_query(self, cid):
        if cid[0] == 'page':
            return '/wiki/%s' % cid[1], []
        return '/wiki/%s' % self.rev_title[cid[1]], [('oldid', cid[1])]

    def resolve(self, path, params):
        m = re.match(r'^/wiki/([A-Za-z_]+)$', path)
        if not m or params.get('lang', 'en') != 'en':
            return None
        t = m.group(1)
        if 'oldid' in params:
            o = as_int(params['oldid'])
            return ('rev', o) if self.rev_title.get(o) == t else None
        return ('page', t) if ('page', t) in self.contents else None

    def default_for(self, cid):
        return ('lang', 'en')

    def body(self, cid, rng):
        t = cid[1] if cid[0] == 'page' else self.rev_title[cid[1]]
        return [t.replace('_', ' ') + (' oldid %d' % cid[1] if cid[0] == 'rev' else '')] + self.W.lines(rng, rng.randint(250, 600))


SITE_CLASSES = [ForumPhpbb, ForumSmf, NewsPath, NewsQuery, ShopJava, ShopQuery, DocsJava,
                DocsStatic, WikiQuery, WikiPath]


# ---------------------------------------------------------------------------------------------
# variants

UTM_SOURCES = ['twitter', 'facebook', 'newsletter', 'google', 'reddit', 'linkedin', 'rss', 'mastodon']
UTM_MEDIUMS = ['social', 'email', 'cpc', 'referral', 'feed']
REFS = ['homepage', 'sidebar', 'related', 'footer', 'hn', 'twitter', 'search', 'digest']


class Variants:
    """Rewrites a URL by one kind of variation. `fresh` values (queries) never repeat; crawl values
    come from small pools, as a crawler meets the same session ids and campaigns again and again."""

    def __init__(self, rng, fresh):
        self.rng = rng
        self.fresh = fresh
        self.sessions = {}
        self.applied = []  # the kinds the last successful apply() applied (for truth-urls.jsonl)

    def session_value(self, site, upper=False):
        if self.fresh:
            return hexid(self.rng, 32, upper)
        pool = self.sessions.setdefault((site.host, upper), [hexid(self.rng, 32, upper) for _ in range(40)])
        return self.rng.choice(pool)

    def apply(self, site, cid, url, kind):
        out = self._apply(site, cid, url, kind)
        if kind != 'combined':
            self.applied = [kind] if out is not None else []
        return out

    def _apply(self, site, cid, url, kind):
        r = self.rng
        scheme, netloc, path, q = split_url(url)
        q = list(q)
        if kind == 'www':
            netloc = netloc[4:] if netloc.lower().startswith('www.') else 'www.' + netloc
        elif kind == 'scheme':
            scheme = 'http' if scheme == 'https' else 'https'
        elif kind == 'alias-host':
            if site.alias_host is None:
                return None
            netloc = ('www.' if netloc.lower().startswith('www.') else '') + site.alias_host
        elif kind == 'host-case':
            labels = netloc.split('.')
            style = r.randrange(4)
            if style == 0:    # Shop.Example.COM
                labels = [l.capitalize() for l in labels[:-1]] + [labels[-1].upper()]
            elif style == 1:  # Shop.Example.Com
                labels = [l.capitalize() for l in labels]
            elif style == 2:  # SHOP.EXAMPLE.COM
                labels = [l.upper() for l in labels]
            else:             # random letters
                labels = [''.join(c.upper() if r.random() < 0.4 else c for c in l) for l in labels]
            new = '.'.join(labels)
            if new == netloc:
                new = netloc.upper()
            if new == netloc:
                return None
            netloc = new
        elif kind == 'jsessionid':
            if not site.java or ';' in path:
                return None
            path += ';jsessionid=' + self.session_value(site, upper=True)
        elif kind == 'sid':
            if not site.session_param or site.session_param in dict(q):
                return None
            pos = len(q) if r.random() < 0.7 else r.randint(0, len(q))
            q.insert(pos, (site.session_param, self.session_value(site)))
        elif kind == 'tracking':
            if any(k in TRACKING for k, _ in q):
                return None
            style = r.choices(('utm3', 'utm2', 'fbclid', 'ref'), (40, 15, 25, 20))[0]
            if style.startswith('utm'):
                camp = ('%s_%d' % (r.choice(['spring', 'launch', 'weekly', 'promo', 'digest']), r.randint(1, 60))
                        if not self.fresh else '%s_%d' % (r.choice(['summer', 'intro', 'daily', 'offer']), r.randint(1, 10 ** 6)))
                add = [('utm_source', r.choice(UTM_SOURCES)), ('utm_medium', r.choice(UTM_MEDIUMS))]
                if style == 'utm3':
                    add.append(('utm_campaign', camp))
            elif style == 'fbclid':
                add = [('fbclid', 'IwAR' + ''.join(r.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-') for _ in range(40)))]
            else:
                add = [('ref', r.choice(REFS) if not self.fresh else '%s%d' % (r.choice(REFS), r.randint(1, 10 ** 6)))]
            q += add
        elif kind == 'default-value':
            d = site.default_for(cid)
            if not d or d[0] in dict(q):
                return None
            pos = len(q) if r.random() < 0.6 else r.randint(0, len(q))
            q.insert(pos, d)
        elif kind == 'param-order':
            if len(q) < 2:
                return None
            old = list(q)
            for _ in range(10):
                r.shuffle(q)
                if q != old:
                    break
            if q == old:
                return None
        elif kind == 'index-html':
            if not site.index_html or not path.endswith('/'):
                return None
            path += 'index.html'
        elif kind == 'print':
            if not site.contents[cid]['printable'] or site.print_param[0] in dict(q):
                return None
            q.append(site.print_param)
        elif kind == 'combined':
            kinds = [k for k in site.kinds_for(cid) if k != 'combined']
            chosen = r.sample(kinds, min(len(kinds), r.choice((2, 2, 3))))
            out, applied, kinds_done = url, 0, []
            for k in sorted(chosen, key=kind_rank):
                nxt = self.apply(site, cid, out, k)
                if nxt is not None:
                    out, applied = nxt, applied + 1
                    kinds_done.append(k)
            self.applied = kinds_done if applied >= 2 else []
            return out if applied >= 2 else None
        else:
            raise ValueError(kind)
        return join_url(scheme, netloc, path, q)


# ---------------------------------------------------------------------------------------------
# crawl and queries

def weighted_kind(rng, site, kinds):
    ws = [site.weight(k) for k in kinds]
    return rng.choices(kinds, ws)[0]


def simulate(seed, scale, alias_hosts=False):
    W = Words(seed)
    sites = [cls(seed, scale, W) for cls in SITE_CLASSES]
    if alias_hosts:
        for site in sites:
            site.alias_host = ALIAS_HOSTS[site.host]
    url_kinds = {}  # url -> variant kinds applied to the content's canonical URL ([] for it)
    rng = random.Random('%s|crawl' % seed)
    crawl_vars = Variants(random.Random('%s|crawl-variants' % seed), fresh=False)

    events = []  # (time, site index, seq, url)
    crawled = {}  # (site index, cid) -> [urls]
    seen_urls = set()
    seq = 0
    variant_kinds = {}
    for si, site in enumerate(sites):
        cids = sorted(site.contents, key=repr)
        fetched = set()
        # primaries first, so that secondaries know whether their parent was fetched
        for cid in sorted(cids, key=lambda c: site.contents[c]['depth']):
            info = site.contents[cid]
            if info['primary']:
                p = 1.0 if info['depth'] == 0 else 0.8
            elif info['secondary'] == 'sort-desc':
                p = 0.2 if info['parent'] in fetched else 0.03
            else:
                p = 0.45 if info['parent'] in fetched else 0.08
            if rng.random() < p:
                fetched.add(cid)
        for cid in cids:
            if cid not in fetched:
                continue
            info = site.contents[cid]
            t0 = info['depth'] + rng.uniform(0, 3)
            canon = site.canonical(cid)
            kinds = [k for k in site.kinds_for(cid)]
            urls = []
            n_var = 0
            if rng.random() < site.p_variant:
                n_var = 1
                while n_var < 4 and rng.random() < 0.35:
                    n_var += 1
            skip_base = n_var > 0 and info['depth'] > 0 and rng.random() < 0.08
            if not skip_base:
                urls.append((t0, canon))
            tries = 0
            while len(urls) < n_var + (0 if skip_base else 1) and tries < 20:
                tries += 1
                kind = weighted_kind(rng, site, kinds)
                u = crawl_vars.apply(site, cid, canon, kind)
                if u is None or u in seen_urls or any(u == x for _, x in urls):
                    continue
                urls.append((t0 + rng.uniform(-1.0, 2.0), u))
                variant_kinds[kind] = variant_kinds.get(kind, 0) + 1
                url_kinds[u] = list(crawl_vars.applied)
            if not urls:
                urls.append((t0, canon))
            for t, u in urls:
                assert site.route(u) == cid, (u, cid, site.route(u))
                seen_urls.add(u)
                events.append((t, si, seq, u))
                seq += 1
                crawled.setdefault((si, cid), []).append(u)
    events.sort()

    docs = []
    ids_by_content = {}
    for n, (t, si, _, u) in enumerate(events):
        did = 'c%06d' % n
        docs.append({'id': did, 'sku': u, 'text_t': sites[si].text(u)})
        ids_by_content.setdefault((si, sites[si].route(u)), []).append(did)

    queries = make_queries(seed, scale, sites, crawled, seen_urls, ids_by_content)
    truth = []
    for d in docs:
        si = next(i for i, s in enumerate(sites) if s.route(d['sku']) is not None)
        site = sites[si]
        cid = site.route(d['sku'])
        primary = d['sku'] == site.canonical(cid)
        truth.append({'id': d['id'], 'url': d['sku'], 'site': site.host,
                      'content': '%s|%r' % (site.host, cid), 'primary': primary,
                      'variant_kinds': [] if primary else url_kinds[d['sku']]})
    return sites, docs, queries, crawled, dict(sorted(variant_kinds.items())), truth


def make_queries(seed, scale, sites, crawled, seen_urls, ids_by_content):
    rng = random.Random('%s|queries' % seed)
    qv = Variants(random.Random('%s|query-variants' % seed), fresh=True)
    pos_target = max(10, int(round(180 * scale)))
    neg_target = {'matters-sort-desc': max(10, int(round(300 * scale))),
                  'matters-param': max(10, int(round(550 * scale))),
                  'new-page': max(10, int(round(500 * scale))),
                  'unfetched-base': max(10, int(round(650 * scale)))}
    out, used = [], set(seen_urls)

    def emit(si, cid, url, pattern, expect):
        site = sites[si]
        if url is None or url in used:
            return False
        got = site.route(url)
        dup = (si, got) in crawled if got is not None else False
        if dup != expect:
            raise AssertionError('%s: %s routes to %r, duplicate=%s' % (pattern, url, got, dup))
        used.add(url)
        out.append({'url': url, 'duplicate': dup, 'pattern': pattern, 'site_kind': site.kind,
                    'site': site.host, 'same_content_ids': ids_by_content.get((si, got), [])})
        return True

    crawled_by_site = [sorted((cid for (s, cid) in crawled if s == si), key=repr) for si in range(len(sites))]
    uncrawled_by_site = [sorted((cid for cid in site.contents if (si, cid) not in crawled), key=repr)
                         for si, site in enumerate(sites)]

    # positives: a variant of a crawled content
    for pattern in POSITIVE_PATTERNS:
        cands = [(si, cid) for si, site in enumerate(sites) for cid in crawled_by_site[si]
                 if pattern in site.kinds_for(cid)]
        by_site = {}
        for si, cid in cands:
            by_site.setdefault(si, []).append(cid)
        n, tries = 0, 0
        while n < pos_target and by_site and tries < pos_target * 50:
            tries += 1
            si = rng.choice(sorted(by_site))
            cid = rng.choice(by_site[si])
            if emit(si, cid, qv.apply(sites[si], cid, sites[si].canonical(cid), pattern), pattern, True):
                n += 1

    def fill(pattern, cands, make):
        by_site = {}
        for si, cid in cands:
            by_site.setdefault(si, []).append(cid)
        n, tries, target = 0, 0, neg_target[pattern]
        while n < target and by_site and tries < target * 50:
            tries += 1
            si = rng.choice(sorted(by_site))
            cid = rng.choice(by_site[si])
            if emit(si, cid, make(si, cid), pattern, False):
                n += 1

    # sort=desc of a page whose default order was crawled
    fill('matters-sort-desc',
         [(si, cid) for si, site in enumerate(sites) for cid in uncrawled_by_site[si]
          if site.contents[cid]['secondary'] == 'sort-desc' and (si, site.contents[cid]['parent']) in crawled],
         lambda si, cid: sites[si].canonical(cid))
    # another value of a parameter that matters (page, start, color, lang=de, oldid), base crawled
    fill('matters-param',
         [(si, cid) for si, site in enumerate(sites) for cid in uncrawled_by_site[si]
          if site.contents[cid]['secondary'] not in (None, 'sort-desc')
          and (si, site.contents[cid]['parent']) in crawled],
         lambda si, cid: sites[si].canonical(cid))
    # a page never crawled, at its canonical URL
    fill('new-page',
         [(si, cid) for si, site in enumerate(sites) for cid in uncrawled_by_site[si]
          if site.contents[cid]['primary']],
         lambda si, cid: sites[si].canonical(cid))

    # a variant (session id, tracking, default value, www, ...) of a page never crawled
    def unfetched(si, cid):
        site = sites[si]
        kinds = [k for k in site.kinds_for(cid)]
        return qv.apply(site, cid, site.canonical(cid), weighted_kind(rng, site, kinds))
    fill('unfetched-base',
         [(si, cid) for si, site in enumerate(sites) for cid in uncrawled_by_site[si]],
         unfetched)

    rng.shuffle(out)
    return out


def self_checks(sites, docs, crawled, queries):
    """Print views are near-duplicates (Jaccard >= 0.9 of word 4-shingles) of the full page, and
    different contents of one page family (page 2, sort=desc, colour, translation, old revision)
    are far apart."""
    by_site = {s.host: s for s in sites}
    by_site.update({s.alias_host: s for s in sites if s.alias_host is not None})
    full_text = {}
    prints = []
    for d in docs:
        site = by_site[urlsplit(d['sku']).hostname.lower().removeprefix('www.')]
        cid = site.route(d['sku'])
        if site.is_print(d['sku']) and site.contents[cid]['printable']:
            prints.append((site, cid, d['text_t']))
        else:
            full_text[(site.host, cid)] = d['text_t']
    pj = []
    for site, cid, t in prints:
        full = full_text.get((site.host, cid)) or site.text(site.canonical(cid))
        pj.append(jaccard(shingles4(t), shingles4(full)))
    fam = []
    for si, site in enumerate(sites):
        for cid, info in site.contents.items():
            if info['parent'] is not None and (si, cid) in crawled and (si, info['parent']) in crawled:
                a = site.text(site.canonical(cid))
                b = site.text(site.canonical(info['parent']))
                fam.append(jaccard(shingles4(a), shingles4(b)))
    chrome = []
    for site in sites:
        cids = [c for c in sorted(site.contents, key=repr)][:200]
        tot = sum(len(site.text(site.canonical(c)).split()) for c in cids)
        chrome.append(len(site.header.split() + site.footer.split()) * len(cids) / tot)
    return {
        'print_views': len(pj),
        'print_jaccard_min': round(min(pj), 4) if pj else None,
        'print_jaccard_mean': round(sum(pj) / len(pj), 4) if pj else None,
        'family_pairs': len(fam),
        'family_jaccard_max': round(max(fam), 4) if fam else None,
        'chrome_word_share_mean': round(sum(chrome) / len(chrome), 4),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--out', required=True)
    ap.add_argument('--scale', type=float, default=1.0)
    ap.add_argument('--no-checks', action='store_true', help='skip the Jaccard self-checks')
    ap.add_argument('--truth-urls', action='store_true',
                    help='alias hosts in the crawl, and DIR/truth-urls.jsonl (content id, primary, '
                         'variant kinds per crawled document) for tools/repr-eval')
    a = ap.parse_args()
    t0 = time.time()
    sites, docs, queries, crawled, variant_kinds, truth = simulate(a.seed, a.scale, a.truth_urls)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'crawl.jsonl'), 'w') as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'queries.jsonl'), 'w') as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + '\n')
    with open(os.path.join(a.out, 'query-urls.txt'), 'w') as f:
        for q in queries:
            f.write(q['url'] + '\n')
    if a.truth_urls:
        with open(os.path.join(a.out, 'truth-urls.jsonl'), 'w') as f:
            for t in truth:
                f.write(json.dumps(t, ensure_ascii=False) + '\n')

    pages_by_site, contents_by_site, variant_by_site = {}, {}, {}
    for (si, cid), urls in crawled.items():
        h = sites[si].host
        pages_by_site[h] = pages_by_site.get(h, 0) + len(urls)
        contents_by_site[h] = contents_by_site.get(h, 0) + 1
        variant_by_site[h] = variant_by_site.get(h, 0) + (len(urls) > 1)
    patterns = {}
    for q in queries:
        p = patterns.setdefault(q['pattern'], {'count': 0, 'duplicate': 0})
        p['count'] += 1
        p['duplicate'] += q['duplicate']
    meta = {
        'seed': a.seed, 'scale': a.scale,
        'pages': len(docs), 'contents_crawled': len(crawled),
        'contents_total': sum(len(s.contents) for s in sites),
        'share_contents_under_several_urls': round(sum(len(u) > 1 for u in crawled.values()) / len(crawled), 4),
        'crawl_variant_urls_by_kind': variant_kinds,
        'crawl_sort_desc_pages': sum(1 for (si, cid) in crawled
                                     if sites[si].contents[cid]['secondary'] == 'sort-desc'),
        'queries': len(queries), 'queries_duplicate': sum(q['duplicate'] for q in queries),
        'patterns': dict(sorted(patterns.items())),
        'sites': [{'host': s.host, 'kind': s.kind, 'canonical': s.base_url(), 'java': s.java,
                   'session_param': s.session_param, 'index_html': s.index_html,
                   'print_param': '='.join(s.print_param),
                   'contents': len(s.contents), 'contents_crawled': contents_by_site.get(s.host, 0),
                   'pages': pages_by_site.get(s.host, 0),
                   'contents_under_several_urls': variant_by_site.get(s.host, 0)} for s in sites],
    }
    if a.truth_urls:
        meta['alias_hosts'] = {s.host: s.alias_host for s in sites}
        meta['truth_urls'] = {'primary': sum(t['primary'] for t in truth), 'documents': len(truth)}
    if not a.no_checks:
        meta['checks'] = self_checks(sites, docs, crawled, queries)
    with open(os.path.join(a.out, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
    print('simulate: %d pages (%d contents, %.0f %% under several URLs), %d queries (%d duplicates) in %s, %.1f s'
          % (len(docs), len(crawled), 100 * meta['share_contents_under_several_urls'], len(queries),
             meta['queries_duplicate'], a.out, time.time() - t0))
    if 'checks' in meta:
        print('simulate: checks %s' % json.dumps(meta['checks']))
        c = meta['checks']
        if c['print_jaccard_min'] is not None and c['print_jaccard_min'] < 0.9:
            sys.exit('simulate: a print view is not a near-duplicate (Jaccard < 0.9)')
        if c['family_jaccard_max'] is not None and c['family_jaccard_max'] >= 0.9:
            sys.exit('simulate: two different contents are near-duplicates (Jaccard >= 0.9)')


if __name__ == '__main__':
    main()
