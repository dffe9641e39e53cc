#!/usr/bin/env python3
"""The built guide has no broken link: every relative href and src in the HTML mdBook
wrote (target/book/) names a file of the book, and every #anchor an id in that file.
A chapter linking outside docs/ (a source file, the README) breaks on the published
book, so it fails here even though the repository has the file.
Usage: mdbook build docs && scripts/check-book.py [BOOK_DIR]"""

import html.parser
import pathlib
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Resolved: target/ may be a symbolic link (a shared build folder).
BOOK = (pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "book").resolve()


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value and tag in ("a", "img"):
                self.links.append(value)


def parse(path, cache={}):
    if path not in cache:
        p = Links()
        p.feed(path.read_text(errors="replace"))
        cache[path] = p
    return cache[path]


if not (BOOK / "index.html").exists():
    sys.exit(f"no book at {BOOK}: run `mdbook build docs` first")
broken, pages = [], sorted(BOOK.rglob("*.html"))
for page in pages:
    for link in parse(page).links:
        parts = urllib.parse.urlsplit(link)
        if parts.scheme or link.startswith("//") or link.startswith("mailto:"):
            continue
        target = (page.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else page.resolve()
        if target.is_dir():
            target = target / "index.html"
        if BOOK not in target.parents and target != BOOK:
            broken.append(f"{page.relative_to(BOOK)}: {link}: outside the book")
        elif not target.exists():
            broken.append(f"{page.relative_to(BOOK)}: {link}: no such file")
        elif parts.fragment and target.suffix == ".html" and parts.fragment not in parse(target).ids:
            broken.append(f"{page.relative_to(BOOK)}: {link}: no element with that id")

for b in broken:
    print(b)
print(f"book: {len(pages)} pages checked, {len(broken)} broken links")
sys.exit(1 if broken else 0)
