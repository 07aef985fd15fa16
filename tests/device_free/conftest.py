"""The device-free tier runs without a PJRT client: the compiler's passes, IR, emitter
and interpreter, and the structure of the source. A test here that creates a client
(directly, or by running an eager op or a jitted call) fails, naming what it did."""

from __future__ import annotations

import pytest
from stablejit.runtime import client


@pytest.fixture(autouse=True)
def no_pjrt_client(monkeypatch):
    def refuse(platform: str):
        raise AssertionError(
            f"a device-free test created (or probed for) a PJRT client for {platform!r}: "
            f"it runs on a device, so it belongs in tests/host/ (or it should use the "
            f"reference backend or the interpreter)")
    monkeypatch.setattr(client, "_create", refuse)
