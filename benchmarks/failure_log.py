"""A pytest plugin for time-boxed runs (benchmarks/device_check.sh): each failure's test
id and the last lines of its error are appended to $FAILURE_LOG as the report arrives, so
a run killed by its time box still says what failed and why (pytest prints its summary
only at the end). With xdist the reports arrive in the controller, which writes them.

    FAILURE_LOG=/tmp/failures.txt python -m pytest -p benchmarks.failure_log ...
"""

from __future__ import annotations

import os

_worker = False  # an xdist worker: its reports reach the controller, which writes them


def pytest_configure(config):
    global _worker
    _worker = hasattr(config, "workerinput")


def pytest_runtest_logreport(report):
    path = os.environ.get("FAILURE_LOG")
    if not path or not report.failed or _worker:
        return
    text = report.longreprtext or ""
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")] or text.splitlines()
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{report.nodeid} ({report.when})\n")
        for ln in lines[:6]:
            f.write(f"    {ln[:300]}\n")
