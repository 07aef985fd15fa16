"""Check a built site without a browser: every page's internal links reach a page that
exists and, with a #fragment, an element with that id; the search page and its index are
there; the front page reaches every guide and every API page. `make docs` runs it after
the build: python docs/_ext/check_site.py docs/_build/html"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])


def check(root: Path) -> list[str]:
    pages = {}
    for path in root.rglob("*.html"):
        if "_sources" in path.parts:
            continue
        page = _Page()
        page.feed(path.read_text(errors="replace"))
        pages[path.resolve()] = page
    problems = []
    for need in ("index.html", "search.html", "searchindex.js", "genindex.html"):
        if not (root / need).exists():
            problems.append(f"{need} is missing")
    for path, page in pages.items():
        for href in page.links:
            if href.startswith(("http:", "https:", "mailto:", "javascript:")):
                continue
            target, frag = urldefrag(href)
            dest = (path.parent / unquote(target)).resolve() if target else path
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                problems.append(f"{path.relative_to(root.resolve())}: {href} -> no such file")
            elif frag and dest.suffix == ".html" and unquote(frag) not in pages[dest].ids:
                problems.append(f"{path.relative_to(root.resolve())}: {href} -> no #{frag}")
    # what the front page's navigation reaches, following links between pages
    seen, todo = set(), [(root / "index.html").resolve()]
    while todo:
        p = todo.pop()
        if p in seen or p not in pages:
            continue
        seen.add(p)
        for href in pages[p].links:
            target = urldefrag(href)[0]
            if target and not target.startswith(("http:", "https:")):
                todo.append((p.parent / unquote(target)).resolve())
    if 'action="search.html"' not in (root / "index.html").read_text():
        problems.append("the front page has no search box")
    special = {"search.html", "genindex.html"}  # reached by the search box / the index
    unreached = [str(p.relative_to(root.resolve())) for p in pages
                 if p not in seen and p.name not in special]
    if unreached:
        problems.append(f"pages the front page does not reach: {sorted(unreached)}")
    return problems


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html")
    found = check(root)
    for p in found:
        print(p)
    print(f"checked {len(list(root.rglob('*.html')))} pages under {root}: "
          f"{len(found)} problems")
    sys.exit(1 if found else 0)
