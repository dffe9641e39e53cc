#!/usr/bin/env python3
"""Every relative link in the README, the guide and the other Markdown documents names a
file that exists, and every `#anchor` a heading of its file (GitHub's anchor rule).
Usage: scripts/check-links.py  (from anywhere; exits 1 naming each broken link)."""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "CHANGELOG.md",
        *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "capi").rglob("README.md")), ROOT / "python" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```", re.S)


def anchors(path: pathlib.Path) -> set:
    text = CODE.sub("", path.read_text())
    out = set()
    for heading in re.findall(r"(?m)^#+ (.*)$", text):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


broken = []
for doc in DOCS:
    text = CODE.sub("", doc.read_text())
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(f"{doc.relative_to(ROOT)}: {target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{doc.relative_to(ROOT)}: {target}: no heading with that anchor")

for b in broken:
    print(b)
print(f"links: {len(DOCS)} documents checked, {len(broken)} broken")
sys.exit(1 if broken else 0)
