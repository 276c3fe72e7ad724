"""Fixtures: a small forum served on loopback, the index of its pages as a file of Solr documents,
rules learned from it by the real ``solr-dedup urls learn``, and a real ``solr-dedup serve``."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

REPO = Path(__file__).resolve().parents[3]

#: Topics in the index, each also indexed under a `sid` variant: the evidence that `sid` changes
#: nothing.
INDEXED = range(0, 40)
#: Topics the crawl finds that the index does not have.
NEW = range(40, 50)


def binary() -> str:
    """The solr-dedup binary: `SOLR_DEDUP`, else the workspace's release or debug build."""
    named = os.environ.get("SOLR_DEDUP")
    if named:
        return named
    for profile in ("release", "debug"):
        candidate = REPO / "target" / profile / "solr-dedup"
        if candidate.exists():
            return str(candidate)
    pytest.fail("no solr-dedup binary: run `cargo build` in the repository, or set SOLR_DEDUP")


def topic_text(n: int) -> str:
    words = random.Random(n).choices(
        ["forum", "thread", "reply", "posted", "question", "answer", "kernel", "driver", "boot",
         "disk", "network", "update", "package", "error", "log", "config", "screen", "sound"],
        k=300,
    )
    return f"Topic {n}. " + " ".join(words)


class Site:
    """A forum on loopback: `/` links to every topic under its plain URL and under session ids."""

    def __init__(self):
        self.fetched: list[str] = []
        self.lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                with site.lock:
                    site.fetched.append(self.path)
                url = urlparse(self.path)
                if url.path == "/":
                    links = [f"/topic?id={n}&sid=crawl{n}" for n in INDEXED]
                    links += [f"/topic?id={n}" for n in NEW]
                    links.append("/topic?id=3")
                    body = "".join(f'<a href="{h}">{h}</a>\n' for h in links)
                elif url.path == "/topic":
                    n = int(parse_qs(url.query)["id"][0])
                    body = f"<p>{topic_text(n)}</p>"
                else:
                    self.send_error(404)
                    return
                data = f"<html><body>{body}</body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


@pytest.fixture
def index(site, tmp_path):
    """The index as serve reads it (a file of Solr documents), and the rules learned from it."""
    docs = tmp_path / "docs.jsonl"
    with docs.open("w") as f:
        for n in INDEXED:
            for i, url in enumerate([f"{site.base}/topic?id={n}", f"{site.base}/topic?id={n}&sid=s{n}"]):
                f.write(json.dumps({"id": f"t{n}-{i}", "sku": url, "text_t": topic_text(n)}) + "\n")
    rules = tmp_path / "rules.json"
    subprocess.run(
        [binary(), "urls", "learn", "--input", str(docs), "--out", str(rules)],
        check=True,
        capture_output=True,
    )
    return docs, rules


class Serve:
    """A running `solr-dedup serve`, stopped at the end of the test."""

    def __init__(self, docs: Path, rules: Path, token: str | None):
        env = {k: v for k, v in os.environ.items() if k != "SOLR_DEDUP_TOKEN"}
        if token:
            env["SOLR_DEDUP_TOKEN"] = token
        self.state = tempfile.TemporaryDirectory()
        self.process = subprocess.Popen(
            [binary(), "serve", "--input", str(docs), "--rules", str(rules),
             "--listen", "127.0.0.1:0", "--state-dir", self.state.name],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
        )
        said = []
        for line in self.process.stderr:
            said.append(line)
            m = re.match(r"serving on (\S+)", line.strip())
            if m:
                self.base = m.group(1).rstrip("/")
                break
        else:
            raise RuntimeError("serve ended before listening: " + "".join(said))
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.state.cleanup()


@pytest.fixture
def serve(index):
    started = []

    def start(token: str | None = None) -> Serve:
        s = Serve(*index, token)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


SPIDER = '''
import json, scrapy

class Forum(scrapy.Spider):
    name = "forum"

    def __init__(self, start, out, **kw):
        super().__init__(**kw)
        self.start_urls = [start]
        self.out = out

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.topic)

    def topic(self, response):
        yield {"url": response.url}

    def closed(self, reason):
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
        with open(self.out, "w") as f:
            json.dump(stats, f)
'''


def crawl(tmp_path: Path, start: str, settings: dict) -> tuple[dict, str]:
    """Runs a real Scrapy crawl from `start` in a process of its own; its stats and its log."""
    spider = tmp_path / "forum_spider.py"
    spider.write_text(SPIDER)
    out = tmp_path / "stats.json"
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider),
               "-a", f"start={start}", "-a", f"out={out}",
               "-s", "DOWNLOADER_MIDDLEWARES=" + json.dumps({"scrapy_solr_dedup.SolrDedupMiddleware": 200}),
               "-s", "ROBOTSTXT_OBEY=False", "-s", "TELNETCONSOLE_ENABLED=False",
               "-s", "LOG_LEVEL=INFO"]
    for k, v in settings.items():
        command += ["-s", f"{k}={v}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOLR_DEDUP_")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stderr
