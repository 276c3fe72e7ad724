"""Scrapy integration of solr-dedup: skip requests for URLs that ``solr-dedup serve`` predicts to
duplicate a page already in the index (``POST /api/urls/predict``)."""

from .middleware import SolrDedupMiddleware, PredictionClient

__all__ = ["SolrDedupMiddleware", "PredictionClient"]
