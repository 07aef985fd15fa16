"""The digits MLP (examples/digits_mlp.py) trained data-parallel over several devices.

Each step, the batch is split over the devices of a 1-d mesh ("data") and the
parameters are replicated; inside `stablejit.shard_map` every device computes the
gradient of its part of the batch, `lax.pmean` all-reduces the gradients, and every
device applies the same Adam update. With equal parts the averaged gradient is the
full batch's, so training matches one device.

    python examples/data_parallel.py                 # 8 host CPU devices, one process
    python examples/data_parallel.py --devices 1     # the same training on one device

Over two processes on one machine (4 host devices each; the same command on two
machines, with the first one's address, spans them):

    python examples/data_parallel.py --processes 2 --process-id 0 --coordinator 127.0.0.1:12345 &
    python examples/data_parallel.py --processes 2 --process-id 1 --coordinator 127.0.0.1:12345
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time


def _host_devices(n: int) -> None:
    """Ask XLA for n host CPU devices (read once, when the host client starts)."""
    flag = "--xla_force_host_platform_device_count"
    if flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}={n}".strip()


def main(devices: int = 8, epochs: int = 30, hidden=(128,), batch_size: int = 32,
         learning_rate: float = 2e-3, seed: int = 0, verbose: bool = True) -> float:
    """Train over the first `devices` devices (of all processes); returns the test
    accuracy."""
    import numpy as np
    import stablejit
    from stablejit import lax, nn
    from stablejit.sharding import NamedSharding, P, make_mesh

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import digits_mlp as digits

    t0 = time.perf_counter()
    mesh = make_mesh((devices,), ("data",))
    batch_sharding = NamedSharding(mesh, P("data"))
    replicated = NamedSharding(mesh, P())
    x_train, y_train, x_test, y_test = digits.load(seed)
    rng = np.random.default_rng(seed)
    optimizer = nn.adam(learning_rate)
    params = digits.init_params(rng, (x_train.shape[1], *hidden, 10))
    params = stablejit.device_put(params, replicated)
    opt_state = stablejit.device_put(optimizer.init(params), replicated)

    def per_device(params, opt_state, x, y):
        loss, grads = stablejit.value_and_grad(digits.loss_fn)(params, x, y)
        grads = lax.pmean(grads, "data")  # the all-reduce: every device gets the mean
        params, opt_state = optimizer.update(grads, opt_state, params)
        return params, opt_state, lax.pmean(loss, "data")

    train_step = stablejit.jit(stablejit.shard_map(
        per_device, mesh=mesh, in_specs=(P(), P(), P("data"), P("data")),
        out_specs=(P(), P(), P())))

    # this process feeds the rows of each batch that go to its devices
    rows = batch_size // stablejit.process_count()
    mine = slice(stablejit.process_index() * rows, (stablejit.process_index() + 1) * rows)
    n_batches = len(x_train) // batch_size
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        losses = []
        for i in range(n_batches):
            idx = order[i * batch_size:(i + 1) * batch_size][mine]
            x = stablejit.make_array_from_process_local_data(batch_sharding, x_train[idx])
            y = stablejit.make_array_from_process_local_data(batch_sharding, y_train[idx])
            params, opt_state, loss = train_step(params, opt_state, x, y)
            losses.append(loss)
        if verbose:
            total = float(np.mean([float(v) for v in losses]))
            print(f"epoch {epoch + 1:3d}  loss {total:.4f}")
    host_params = stablejit.tree_map(np.asarray, params)  # replicated: every process has it
    with stablejit.default_backend(stablejit.local_devices()[0]):
        predictions = np.asarray(digits.predict(host_params, x_test))
    accuracy = float(np.mean(predictions == y_test))
    if verbose:
        print(f"test accuracy {accuracy:.4f} ({len(y_test)} images) on {devices} device(s) "
              f"in {stablejit.process_count()} process(es), {time.perf_counter() - t0:.1f} s")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, default=8, help="devices in all (default 8)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--coordinator", default="127.0.0.1:12345")
    args = parser.parse_args()
    if args.processes > 1:
        import stablejit

        stablejit.distributed.initialize(args.coordinator, args.processes, args.process_id,
                                         local_device_count=args.devices // args.processes)
    else:
        _host_devices(args.devices)
    main(devices=args.devices, epochs=args.epochs)
