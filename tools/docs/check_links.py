#!/usr/bin/env python3
"""Checks the links of the user guide as mdBook built it (docs/book) against what exists.

- A link within the book must name a page the build wrote, and its #fragment an id on that page.
- A link that leaves the book (`../../packaging/…`: a file of the repository, as the guide's source
  links to them) must name a file or folder of the repository, resolved from the page's source in
  docs/src/.
- http(s) and mailto links are not fetched (CI has no network to them); they are listed with -v.

Usage: python3 tools/docs/check_links.py [docs/book] [-v]; exit 1 with one line per broken link.
"""

import html.parser
import os
import sys
import urllib.parse


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def parse(path):
    p = Links()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv[1:]
    book = os.path.abspath(args[0] if args else "docs/book")
    src = os.path.join(os.path.dirname(book), "src")
    if not os.path.isfile(os.path.join(book, "index.html")):
        print(f"check_links: error: {book} holds no built book; run `mdbook build docs` first", file=sys.stderr)
        return 2
    pages = {}
    for root, _, files in os.walk(book):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(root, name)
                pages[os.path.relpath(path, book)] = parse(path)
    broken, external, checked = [], set(), 0
    for page, links in sorted(pages.items()):
        if page in ("print.html", "404.html", "toc.html"):
            continue  # the print page repeats every page; 404 and toc are mdBook's own
        for href in links.hrefs:
            url = urllib.parse.urlparse(href)
            if url.scheme in ("http", "https", "mailto"):
                external.add(href)
                continue
            if url.scheme or href.startswith("javascript:"):
                continue
            checked += 1
            target = urllib.parse.unquote(url.path)
            here = os.path.dirname(page)
            if not target:
                ids = links.ids
                if url.fragment and url.fragment not in ids:
                    broken.append(f"{page}: #{url.fragment} is no id on the page")
                continue
            inside = os.path.normpath(os.path.join(here, target))
            if not inside.startswith(".."):
                if inside.endswith("/") or os.path.isdir(os.path.join(book, inside)):
                    inside = os.path.join(inside, "index.html")
                if inside not in pages and not os.path.exists(os.path.join(book, inside)):
                    broken.append(f"{page}: {href} names no page of the book")
                elif url.fragment and inside in pages and url.fragment not in pages[inside].ids:
                    broken.append(f"{page}: {href}: no id {url.fragment} on {inside}")
                continue
            # Out of the book: a repository file, from the page's source folder.
            repo_path = os.path.normpath(os.path.join(src, here, target))
            if repo_path.endswith(".html") and not os.path.exists(repo_path):
                repo_path = repo_path[: -len(".html")] + ".md"  # mdBook rewrote the source's .md link
            if not os.path.exists(repo_path):
                broken.append(f"{page}: {href} names no file of the repository ({os.path.relpath(repo_path)})")
    if verbose:
        for href in sorted(external):
            print(f"not fetched: {href}")
    for line in broken:
        print(f"check_links: broken: {line}", file=sys.stderr)
    print(f"check_links: {checked} links in {len(pages)} pages checked, {len(broken)} broken, {len(external)} external not fetched")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
