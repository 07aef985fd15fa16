"""Sphinx configuration of stablejit's site (built by `make docs`).

Versions (pinned in pyproject.toml's `docs` extra): Sphinx 9.0.4, the newest release
that runs on Python 3.11 (9.1 needs 3.12, 9.2 needs 3.13; the project supports 3.10+
and CI runs 3.11); myst-parser 5.2.0, which supports Sphinx 8-9 and lets the guides be
Markdown (the README's language); furo 2025.12.19, a theme with search and navigation
that works without JavaScript from a CDN. The build must work offline and with -W:
no intersphinx, no remote images, no notebook execution.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "stablejit"
author = "the stablejit authors"
copyright = "the stablejit authors"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "stablejit_docs",  # the API pages, the environment table, the pipeline's dumps
]

source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "examples", "_generated", ".gitignore"]  # _generated: included
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autosummary_generate = False  # api_pages.py writes the pages; autosummary draws tables
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
add_module_names = False

html_theme = "furo"
html_title = "stablejit"
html_static_path = []
