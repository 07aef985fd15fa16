# Two commands do all the set-up on a fresh machine:
#   make demo   - create .venv, install stablejit, run the examples on the host CPU
#   make test   - create .venv, install stablejit with its test extra, run ruff and pytest
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

# setup.py builds the native extensions (frontend/_native): a changed source rebuilds them
$(VENV)/.installed: pyproject.toml setup.py frontend/_native/fastcall.c frontend/_native/recorder.c frontend/_native/slots.h frontend/_native/memo.h frontend/_native/treedef.h
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

.PHONY: install demo test bench lint conformance fuzz scipy-tests docs
install: $(VENV)/.installed

$(VENV)/.docs-installed: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[docs]'
	touch $@

# The site, into docs/_build/html: warnings are errors, and nothing is fetched.
docs: $(VENV)/.docs-installed
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	$(PY) docs/_ext/check_site.py docs/_build/html

demo: install
	$(PY) examples/digits_mlp.py
	$(PY) examples/fusion.py
	$(PY) examples/matmul_backends.py
	$(PY) examples/per_example_gradients.py

lint: install
	$(VENV)/bin/ruff check .

test: install lint
	$(PY) -m pytest tests -n 2

bench: install
	$(PY) benchmarks/run.py
	$(PY) benchmarks/train_step.py
	$(PY) benchmarks/vmap.py
	$(PY) benchmarks/lazy.py
	$(PY) benchmarks/lazy_early_start.py
	$(PY) benchmarks/wait.py
	$(PY) -m benchmarks.indexing_sort
	$(PY) benchmarks/linalg_fft_conv.py
	$(PY) benchmarks/startup.py
	$(PY) benchmarks/cache.py
	$(PY) benchmarks/memory.py

# The array API standard's conformance suite (../shared/array-api-tests, ~25 min on 2
# cores); conformance/xfails.txt lists the tests expected to fail, one reason each.
conformance: install
	$(PY) -m pip install -q 'hypothesis>=6.151' ndindex pytest-json-report
	PYTHON=$(abspath $(PY)) XFAILS=$(abspath conformance/xfails.txt) MAX_EXAMPLES=20 \
	  ../shared/array-api-tests/run.sh stablejit.numpy -n 2 --derandomize

# SciPy's own array-API test suites with stablejit.numpy as a backend (a pytest plugin,
# conformance/scipy_plugin.py; no SciPy file is edited), each subpackage time-boxed to
# 6 minutes; prints the table docs/scipy_consumers.md keeps. XP=jax.numpy compares.
XP ?= stablejit.numpy
scipy-tests: install
	$(PY) conformance/scipy_tests.py --xp $(XP) --time-box 360

# The differential fuzzer at full size: 10,000 programs per family (CI runs a sample).
fuzz: install
	FUZZ_EXAMPLES=10000 $(PY) -m pytest tests/host/test_fuzz.py -n 2 -p no:cacheprovider -o addopts=""
