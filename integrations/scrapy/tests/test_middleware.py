"""The middleware in a real Scrapy crawl against a real `solr-dedup serve`."""

from conftest import INDEXED, NEW, crawl


def topics_fetched(site):
    return sorted(p for p in site.fetched if p.startswith("/topic"))


def test_drops_predicted_duplicates_and_fetches_the_rest(site, serve, tmp_path):
    server = serve()
    stats, log = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_THRESHOLD": "0.8", "SOLR_DEDUP_EXPLORATION": "0",
    })
    fetched = topics_fetched(site)
    # The session-id variants of indexed topics are never fetched...
    assert not [p for p in fetched if "sid=" in p], fetched
    # ...the new topics and the indexed page itself are, once each.
    assert fetched == sorted([f"/topic?id={n}" for n in NEW] + ["/topic?id=3"])
    assert stats["solr_dedup/dropped"] == len(INDEXED)
    assert stats["solr_dedup/new"] == len(NEW) + 1  # and the start page
    assert stats["solr_dedup/indexed"] == 1
    assert stats["solr_dedup/asked"] == len(INDEXED) + len(NEW) + 2
    # Asked in batches, not one request per URL.
    assert stats["solr_dedup/batches"] < stats["solr_dedup/asked"] / 4
    assert "solr_dedup/server_errors" not in stats
    assert stats["downloader/exception_type_count/scrapy.exceptions.IgnoreRequest"] == len(INDEXED)


def test_the_default_threshold_drops_the_variants_of_a_small_site(site, serve, tmp_path):
    # One small site: 40 topics, each indexed with and without a session id; its sid rule has 40
    # consistent pairs, and the calibrated probability reaches the default threshold (0.98,
    # MaybeDont's).
    server = serve()
    stats, _ = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_EXPLORATION": "0",
    })
    fetched = topics_fetched(site)
    assert not [p for p in fetched if "sid=" in p], fetched
    assert stats["solr_dedup/dropped"] == len(INDEXED)
    assert "solr_dedup/below_threshold" not in stats


def test_threshold_above_the_rule_probability_drops_nothing(site, serve, tmp_path):
    # A rule's probability is never certainty (even 40 of 40 pairs leave room for noise): at 1 the
    # middleware drops nothing.
    server = serve()
    stats, _ = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_THRESHOLD": "1", "SOLR_DEDUP_EXPLORATION": "0",
    })
    assert len(topics_fetched(site)) == len(INDEXED) + len(NEW) + 1
    assert stats["solr_dedup/below_threshold"] == len(INDEXED)
    assert "solr_dedup/dropped" not in stats


def test_exploration_lets_some_through(site, serve, tmp_path):
    server = serve()
    stats, _ = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_THRESHOLD": "0.8",
        "SOLR_DEDUP_EXPLORATION": "0.5", "SOLR_DEDUP_SEED": "7",
    })
    explored = stats.get("solr_dedup/explored", 0)
    assert 0 < explored < len(INDEXED)
    assert explored + stats["solr_dedup/dropped"] == len(INDEXED)
    assert len([p for p in topics_fetched(site) if "sid=" in p]) == explored


def test_fails_open_when_the_server_is_down(site, tmp_path):
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stats, log = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": f"http://127.0.0.1:{port}", "SOLR_DEDUP_THRESHOLD": "0.8",
    })
    assert len(topics_fetched(site)) == len(INDEXED) + len(NEW) + 1
    assert stats["solr_dedup/server_errors"] >= 1
    assert "solr_dedup/dropped" not in stats
    assert "fail open" in log and "did not answer" in log


def test_sends_the_token(site, serve, tmp_path):
    token = "a-token-of-24-characters"
    server = serve(token=token)
    stats, _ = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_TOKEN": token,
        "SOLR_DEDUP_THRESHOLD": "0.8", "SOLR_DEDUP_EXPLORATION": "0",
    })
    assert stats["solr_dedup/dropped"] == len(INDEXED)


def test_a_wrong_token_fails_open_and_says_why(site, serve, tmp_path):
    server = serve(token="a-token-of-24-characters")
    stats, log = crawl(tmp_path, site.base + "/", {
        "SOLR_DEDUP_URL": server.base, "SOLR_DEDUP_TOKEN": "not-the-right-token!",
        "SOLR_DEDUP_THRESHOLD": "0.8",
    })
    assert "solr_dedup/dropped" not in stats
    assert stats["solr_dedup/server_errors"] >= 1
    assert "answered 401" in log


def test_without_a_url_the_middleware_is_off(site, tmp_path):
    stats, _ = crawl(tmp_path, site.base + "/", {})
    assert not [k for k in stats if k.startswith("solr_dedup/")]
    assert len(topics_fetched(site)) == len(INDEXED) + len(NEW) + 1
