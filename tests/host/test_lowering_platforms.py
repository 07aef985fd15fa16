"""Lowering for a platform this machine may not have: jit(f).lower(*args, platform=...)
emits StableHLO for host, cuda, rocm or tpu without creating that platform's client."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.numpy as snp
from stablejit.runtime import client

from tests.mlir_check import parse_and_verify

ACCELERATORS = ("cuda", "rocm", "tpu")


@pytest.mark.parametrize("platform", ACCELERATORS)
def test_lower_for_a_platform_creates_no_client(platform):
    x = np.eye(3, dtype=np.float32) * 2
    lowered = stablejit.jit(lambda a: snp.linalg.cholesky(a) + 1).lower(x, platform=platform)
    assert lowered.platform == platform
    text = lowered.as_text()
    parse_and_verify(text)
    assert "lapack_" not in text  # the host's LAPACK calls are not emitted for accelerators
    assert platform not in client._clients
    host = stablejit.jit(lambda a: snp.linalg.cholesky(a) + 1).lower(x)
    assert host.platform == "host" and "lapack_spotrf_ffi" in host.as_text()


def test_lower_names_an_unknown_platform():
    with pytest.raises(ValueError, match="platform='gpu'.*host, cuda, rocm, tpu"):
        stablejit.jit(lambda a: a).lower(np.ones(2), platform="gpu")
