"""Two processes on the loopback address, two host CPU devices each, as one program
(stablejit.distributed on PJRT's distributed runtime, gloo collectives): a global
psum, and one data-parallel step compared with the same step in one process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

WORKER = textwrap.dedent('''
    import json, sys
    import numpy as np
    import stablejit, stablejit.numpy as snp
    from stablejit import lax
    from stablejit.sharding import NamedSharding, P, make_mesh

    address, pid = sys.argv[1], int(sys.argv[2])
    stablejit.distributed.initialize(address, num_processes=2, process_id=pid,
                                     local_device_count=2)
    mesh = make_mesh((4,), ("data",))
    report = {"process_index": stablejit.process_index(),
              "process_count": stablejit.process_count(),
              "devices": len(stablejit.devices()),
              "local_devices": len(stablejit.local_devices())}

    # a global psum: every device adds its position + 1 (1 + 2 + 3 + 4 = 10)
    total = stablejit.jit(stablejit.shard_map(
        lambda: lax.psum(lax.axis_index("data") + 1, "data")[None], mesh=mesh, in_specs=(),
        out_specs=P("data")))()
    report["psum"] = [np.asarray(s.data).tolist() for s in total.addressable_shards]

    # one data-parallel step: the batch split over the processes' devices, the weights
    # replicated; XLA all-reduces the gradient
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8,)).astype(np.float32)
    w = np.array([0.5, -1.0, 2.0], np.float32)
    batch = NamedSharding(mesh, P("data"))
    xs = stablejit.make_array_from_process_local_data(batch, x[4 * pid:4 * pid + 4])
    ys = stablejit.make_array_from_process_local_data(batch, y[4 * pid:4 * pid + 4])

    def loss(w, x, y):
        return snp.mean((snp.tanh(x @ w) - y) ** 2)

    step = stablejit.jit(lambda w, x, y: w - 0.1 * stablejit.grad(loss)(w, x, y),
                         out_shardings=NamedSharding(mesh, P()))
    new_w = step(stablejit.device_put(w, NamedSharding(mesh, P())), xs, ys)
    report["xs_shape"] = list(xs.shape)
    report["w"] = np.asarray(new_w).tolist()
    print("REPORT " + json.dumps(report), flush=True)
    stablejit.distributed.shutdown()
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.host_default
def test_two_processes_psum_and_a_data_parallel_step():
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "1"}
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, address, str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-4000:]
        line = next(ln for ln in out.splitlines() if ln.startswith("REPORT "))
        reports.append(json.loads(line[len("REPORT "):]))
    for i, r in enumerate(reports):
        assert r["process_index"] == i and r["process_count"] == 2
        assert r["devices"] == 4 and r["local_devices"] == 2
        assert r["psum"] == [[10], [10]]
        assert r["xs_shape"] == [8, 3]

    # the same step in one process (jax as the oracle)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8,)).astype(np.float32)
    w = np.array([0.5, -1.0, 2.0], np.float32)
    want = w - 0.1 * jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
    for r in reports:
        np.testing.assert_allclose(r["w"], np.asarray(want), rtol=1e-5, atol=1e-6)
