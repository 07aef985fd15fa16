"""The code on the site's guide pages and in the README runs, and shows what it prints:

- ```pycon blocks of docs/*.md are doctests (each page one session, as a reader types
  them), run with `np`, `stablejit` and `snp` imported;
- ```python blocks are run as they are, in the page's session;
- the README's first example runs as a file, and the values its comments show are the
  ones it prints.

Blocks that summarise calls without their data are ```{code-block} python with the
caption "(not run)"; this test counts them so that no runnable page loses its examples.
"""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))
_BLOCK = re.compile(r"^```(pycon|python)\n(.*?)^```", re.M | re.S)


def blocks(path: Path) -> list[tuple[str, str]]:
    return _BLOCK.findall(path.read_text())


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_guide_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what a page writes (model.sjx ...) stays out of the tree
    globs = {"np": np, "stablejit": stablejit, "snp": snp}
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for kind, code in blocks(page):
        if kind == "python":
            exec(compile(code, str(page), "exec"), globs)
            continue
        test = parser.get_doctest(code, globs, page.name, str(page), 0)
        out = []
        runner.run(test, out=out.append, clear_globs=False)
        assert runner.failures == 0, "".join(out)
        globs = test.globs  # DocTest copies its globals: the next block goes on from here


def test_the_guides_have_runnable_examples():
    assert blocks(ROOT / "docs/getting_started.md")


def test_readme_example_prints_what_it_says(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = _BLOCK.search(text).group(2)
    script = tmp_path / "quickstart.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    shown = re.findall(r"print\(.*?\)\s+# (.+)", code)
    assert shown, "the README's example shows no output"
    for claim in shown:
        for piece in re.findall(r"`([^`]+)`", claim) or [claim]:
            assert piece.replace('".../', f'"{tmp_path}/') in out.stdout, \
                (piece, out.stdout[-2000:])
