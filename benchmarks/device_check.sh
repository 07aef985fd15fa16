#!/usr/bin/env bash
# The checks run on a lent NVIDIA GPU (the device tool; docs/devices.md, "Measured on a
# GPU"), in one call, each step time-boxed so that the call ends inside its limit:
#   1. install stablejit there (its C extensions built for that Python) and a smoke test;
#   2. benchmarks/run.py and benchmarks/lazy.py on cuda (native, then the fallback);
#   3. the test suite with cuda as the default platform (STABLEJIT_PLATFORM=cuda);
#   4. the test files that failed on cuda, again on the host, to tell a GPU difference
#      from a jax-version one (the GPU image's jax is newer than CI's).
# Logs go to $OUT. Pure-Python test needs missing there travel as wheels in .whl/.
#   Usage: bash benchmarks/device_check.sh [pytest selection, default: tests]
#   STEPS="tests bench" (the default "bench tests host") picks the steps and their order;
#   FALLBACK=0 skips the fallback's lazy benchmark; BENCHES="lazy" picks the benchmarks.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=1
export STABLEJIT_PREALLOCATE=0 XLA_PYTHON_CLIENT_PREALLOCATE=false  # many test processes
PY=python3
SELECTION=${*:-tests}
TEST_BOX=${TEST_BOX:-240}

if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
nvidia-smi -L
$PY -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -3
$PY - <<'EOF' 2>&1 | tee "$OUT/smoke.txt"
import jax, numpy, stablejit, stablejit.numpy as snp
from stablejit import fastcall, recorder_native
print("jax", jax.__version__, jax.devices(), "numpy", numpy.__version__)
print("native call:", fastcall.unavailable or "built", "| recorder:",
      recorder_native.unavailable or "built")
print("cuda devices:", stablejit.devices("cuda"))
x = snp.arange(10.0, device=stablejit.devices("cuda")[0])
print(x.device, stablejit.jit(lambda a: (a * a).sum())(x), float(snp.tanh(x)[3]))
EOF

bench() {
echo "== benchmarks on cuda"
for b in ${BENCHES:-run lazy}; do
  STABLEJIT_PLATFORM=cuda timeout 90 $PY benchmarks/$b.py 2>&1 | tee "$OUT/bench_$b.txt" | tail -25
done
[ "${FALLBACK:-1}" = 0 ] || STABLEJIT_PLATFORM=cuda STABLEJIT_NATIVE=0 timeout 60 $PY benchmarks/lazy.py \
  > "$OUT/bench_lazy_fallback.txt" 2>&1
}

tests() {
echo "== tests on cuda ($SELECTION, time box $TEST_BOX s)"
# failures.txt gets each failure's id and error as it happens (benchmarks/failure_log.py):
# the time box may end the run before pytest's own summary
FAILURE_LOG="$OUT/failures.txt" STABLEJIT_PLATFORM=cuda timeout -k 5 "$TEST_BOX" \
  $PY -m pytest $SELECTION -n 15 -p benchmarks.failure_log \
  -p no:cacheprovider -o addopts="" -v --timeout 120 --tb=short -rfE \
  > "$OUT/tests_cuda.log" 2>&1
echo "rc=$? $(grep -c ' PASSED ' "$OUT/tests_cuda.log") passed," \
  "$(grep -c ' FAILED ' "$OUT/tests_cuda.log") failed, $(grep -c ' ERROR ' "$OUT/tests_cuda.log") errors"
tail -3 "$OUT/tests_cuda.log"
}

host() {
echo "== files that failed on cuda, on the host"
FILES=$(grep -oE '(FAILED|ERROR) tests/[^:]+\.py' "$OUT/tests_cuda.log" | awk '{print $2}' | sort -u)
if [ -n "$FILES" ] && [ "${HOST_BOX:-60}" != 0 ]; then
  timeout -k 5 "${HOST_BOX:-60}" $PY -m pytest $FILES -n 14 -p no:cacheprovider -o addopts="" \
    -q --timeout 120 --tb=line -rf > "$OUT/tests_host.log" 2>&1
  echo "rc=$?"; tail -3 "$OUT/tests_host.log"
fi
}

for step in ${STEPS:-bench tests host}; do $step; done
