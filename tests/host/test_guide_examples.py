"""The code on the site's guide pages and in the README runs, and shows what it prints:

- ```pycon blocks of docs/*.md are doctests (each page one session, as a reader types
  them), run with `np`, `stablejit` and `snp` imported;
- ```python blocks are run as they are, in the page's session;
- the README's first example runs as a file, and the values its comments show are the
  ones it prints.

A ```pycon block right after the MyST comment line `% on N host devices` runs in a
subprocess with N forced host devices (XLA_FLAGS, as tests/host/conftest.py does), with
`np` and `stablejit` imported. No block is left unrun: a ```{code-block} python with
the caption "(not run)" fails the test.
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

from tests.host.conftest import device_env

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))
_BLOCK = re.compile(r"^(?:% on (\d+) host devices.*\n)?```(pycon|python)\n(.*?)^```", re.M | re.S)
_NOT_RUN = re.compile(r"^```\{code-block\}[^\n]*\n:caption:[^\n]*not run", re.M)


def blocks(path: Path) -> list[tuple[str, str]]:
    """The blocks the page's session runs, in order (not those on several devices)."""
    return [(kind, code) for n, kind, code in _BLOCK.findall(path.read_text()) if not n]


def device_blocks() -> list[tuple[str, int, str]]:
    return [(f"{p.name}:{i}", int(n), code) for p in PAGES
            for i, (n, kind, code) in enumerate(_BLOCK.findall(p.read_text()))
            if n and kind == "pycon"]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
@pytest.mark.host_default
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
    assert device_blocks()
    unrun = [p.name for p in PAGES for _ in _NOT_RUN.findall(p.read_text())]
    assert not unrun, f"blocks marked (not run) in {unrun}: write them as ```pycon blocks"


_DEVICE_SESSION = """
import doctest, sys
import numpy as np, stablejit
test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {"np": np, "stablejit": stablejit},
                                           "block", "block", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
sys.exit(runner.run(test).failed)
"""


@pytest.mark.parametrize("name, devices, code", device_blocks(),
                         ids=[b[0] for b in device_blocks()])
@pytest.mark.host_default
def test_guide_block_on_host_devices(name, devices, code, tmp_path):
    out = subprocess.run([sys.executable, "-c", _DEVICE_SESSION], input=code, text=True,
                         capture_output=True, cwd=tmp_path, env=device_env(devices),
                         timeout=300)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


@pytest.mark.host_default
def test_readme_example_prints_what_it_says(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = _BLOCK.search(text).group(3)
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
