#!/usr/bin/env bash
# One-command GPU check (issue 17): on a machine with a CUDA GPU, no network needed, proves
# the GPU path in one run of under 10 minutes and leaves the figures in OUTDIR.
#
#     bash scripts/gpu_check.sh [OUTDIR]        (default gpu_report)
#
# Steps (each logged to OUTDIR/NN-name.log; a failing step does not stop the others, and the
# script exits non-zero at the end if any failed):
#   1 install  wheels from $GPUKNN_WHEELS or .whl (made by scripts/gpu_wheels.sh) into
#              /tmp/gpuknn-site; without wheels `pip install -e .[test]` when there is a
#              network, else the checkout itself on PYTHONPATH
#   2 env      nvidia-smi, Python / torch / CuPy versions, cupy.is_available()
#   3 gpu-tests the test suite's GPU backends (ids with "cupy" or "torch-cuda")
#   4 bench    scripts/bench_gpu.py: floors, kneighbors, torch, the full study
#              -> OUTDIR/gpu_report.json and OUTDIR/gpu_report.md
#   5 full-tests the rest of the suite, in whatever time is left (stopped at the budget:
#              reported as incomplete, not as a failure)
# OUTDIR ends with at most 8 files (the device tool of this workplace brings back 8).
set -uo pipefail  # no -e: every step runs; failures are counted
cd "$(dirname "$0")/.."

OUTDIR=${1:-gpu_report}
WHEELDIR=${GPUKNN_WHEELS:-.whl}
SITE=/tmp/gpuknn-site

# Time budgets in seconds. The whole check must end inside the 10 minutes a GPU machine is
# lent for one command, with room for the machine's own start-up.
TOTAL_BUDGET=${GPUKNN_CHECK_TOTAL:-540}   # everything
SUITE_BUDGET=${GPUKNN_CHECK_SUITE:-240}   # step 3, the GPU backends' tests
BENCH_BUDGET=${GPUKNN_CHECK_BENCH:-240}   # step 4, the benchmark
MIN_FULL=${GPUKNN_CHECK_MIN_FULL:-60}     # step 5 runs only with at least this much left
GRACE=20                                  # seconds between the budget's SIGINT and a KILL

# The GPU tests are the backend fixture's "cupy" and "torch-cuda" ids (tests/conftest.py).
GPU_TESTS='cupy or torch-cuda'

# Agg: no display there. PIP_ROOT_USER_ACTION: such machines run commands as root, and pip's
# warning about it would bury the install log's own lines.
export MPLBACKEND=Agg PYTHONUNBUFFERED=1 PIP_ROOT_USER_ACTION=ignore
mkdir -p "$OUTDIR"
START=$SECONDS
SUMMARY="$OUTDIR/summary.txt"
: >"$SUMMARY"
FAILED=0

note() {  # one line to the console and the summary
  echo "$*" | tee -a "$SUMMARY"
}

# run_step NN-name COMMAND...: the command's output goes to OUTDIR/NN-name.log (it runs in
# this shell, so an `export` inside it stays); its tail is shown on the console.
run_step() {
  local name=$1 t0=$SECONDS rc
  shift
  echo "== $name"
  "$@" >"$OUTDIR/$name.log" 2>&1
  rc=$?
  tail -n 15 "$OUTDIR/$name.log" | sed 's/^/   /'
  STEP_RC=$rc
  STEP_SECONDS=$((SECONDS - t0))
}

record() {  # record NAME STATUS: the step's line in the summary; FAIL counts
  note "$(printf '%-12s %-10s %4d s  (%s)' "$1" "$2" "$STEP_SECONDS" "$OUTDIR/$1.log")"
  [ "$2" = FAIL ] && FAILED=$((FAILED + 1))
  return 0
}

have_network() {
  python3 - <<'EOF' 2>/dev/null
import socket
socket.create_connection(("pypi.org", 443), timeout=3).close()
EOF
}

install() {
  if compgen -G "$WHEELDIR/*.whl" >/dev/null; then
    echo "installing the wheels of $WHEELDIR into $SITE (no network, no dependencies):"
    ls "$WHEELDIR"/*.whl
    rm -rf "$SITE"
    python3 -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile \
      --target "$SITE" "$WHEELDIR"/*.whl || return
    # The checkout comes first: the suite's doctests import gpuknn/ from it, and its code is
    # what is under test even when the gpuknn wheel is older; the wheels supply the rest.
    export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"
  elif have_network; then
    echo "no wheels in $WHEELDIR; network found: pip install -e .[test]"
    python3 -m pip install -q --disable-pip-version-check -e ".[test]" || return
  else
    echo "no wheels in $WHEELDIR and no network: using the checkout itself on PYTHONPATH"
    echo "(missing dependencies show in the next step; make wheels with scripts/gpu_wheels.sh)"
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  fi
  echo "PYTHONPATH=${PYTHONPATH:-}"
}

environment() {
  local rc=0
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi || rc=1
  else
    echo "nvidia-smi: not found"
    rc=1
  fi
  python3 - <<'EOF' || rc=1
import importlib, platform, sys

print(f"python {platform.python_version()} ({sys.executable})")
missing = []
for name in ("numpy", "scipy", "array_api_compat", "array_api_strict", "threadpoolctl", "tqdm",
             "matplotlib", "sklearn", "imblearn", "pytest", "gpuknn"):
    try:
        mod = importlib.import_module(name)
        print(f"{name} {getattr(mod, '__version__', '?')} ({getattr(mod, '__file__', '?')})")
    except Exception as exc:
        print(f"{name}: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
        missing.append(name)
try:
    import torch
    cuda = torch.cuda.is_available()
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuda.is_available() = {cuda}"
          + (f", {torch.cuda.get_device_name()}" if cuda else ""))
except Exception as exc:
    print(f"torch: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
ok = False
try:
    import cupy
    ok = bool(cupy.is_available())
    print(f"cupy {cupy.__version__}, cupy.is_available() = {ok}")
    if ok:
        rt = cupy.cuda.runtime
        name = rt.getDeviceProperties(cupy.cuda.Device().id)["name"]
        print(f"  device {name.decode() if isinstance(name, bytes) else name}, CUDA runtime "
              f"{rt.runtimeGetVersion()}, driver API {rt.driverGetVersion()}")
except Exception as exc:
    print(f"cupy: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
if missing:
    print("missing:", ", ".join(missing))
# The step proves what the rest needs: the package, its dependencies, and CuPy on a GPU.
sys.exit(0 if ok and not missing else 1)
EOF
  return $rc
}

# pytest under a time limit: SIGINT first, so pytest still prints its summary of what ran.
timed_pytest() {
  local budget=$1
  shift
  timeout --signal=INT --kill-after="$GRACE" "$budget" \
    python3 -m pytest -q -p no:cacheprovider "$@"
}

remaining() {
  echo $((TOTAL_BUDGET - (SECONDS - START)))
}

note "gpu_check: $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname); budgets: total ${TOTAL_BUDGET} s," \
  "GPU tests ${SUITE_BUDGET} s, benchmark ${BENCH_BUDGET} s"

run_step 01-install install
record 01-install "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)"

run_step 02-env environment
record 02-env "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)"

run_step 03-gpu-tests timed_pytest "$SUITE_BUDGET" -k "$GPU_TESTS" tests
# Green is not enough: without a GPU every backend test skips and pytest still says 0.
if grep -q 'no CUDA device' "$OUTDIR/03-gpu-tests.log"; then
  echo "   GPU backend tests were skipped for want of a CUDA device"
  record 03-gpu-tests FAIL
elif [ $STEP_RC = 0 ] && grep -Eq '[0-9]+ passed' "$OUTDIR/03-gpu-tests.log"; then
  record 03-gpu-tests ok
elif [ $STEP_RC = 0 ]; then
  echo "   no GPU test ran"
  record 03-gpu-tests FAIL
elif [ $STEP_RC = 124 ] || [ $STEP_RC = 137 ]; then
  echo "   stopped at its budget of $SUITE_BUDGET s"
  record 03-gpu-tests FAIL
else
  record 03-gpu-tests FAIL
fi

# The benchmark starts no part after its own budget and writes its reports after every part,
# so the outer timeout only catches a part that hangs.
run_step 04-bench timeout --kill-after="$GRACE" "$BENCH_BUDGET" \
  python3 scripts/bench_gpu.py --out "$OUTDIR" --device gpu --budget $((BENCH_BUDGET * 3 / 4))
record 04-bench "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)"

left=$(( $(remaining) - GRACE ))
if [ "$left" -ge "$MIN_FULL" ]; then
  run_step 05-full-tests timed_pytest "$left" -k "not ($GPU_TESTS)"
  if [ $STEP_RC = 0 ]; then
    record 05-full-tests ok
  elif [ $STEP_RC = 124 ] || [ $STEP_RC = 137 ]; then
    record 05-full-tests incomplete  # out of time: what ran is in the log
  else
    record 05-full-tests FAIL
  fi
else
  STEP_SECONDS=0
  echo "== 05-full-tests: skipped, ${left} s left (needs ${MIN_FULL} s)" \
    >"$OUTDIR/05-full-tests.log"
  cat "$OUTDIR/05-full-tests.log"
  record 05-full-tests skipped
fi

note "total $((SECONDS - START)) s; failed steps: $FAILED; report: $OUTDIR/gpu_report.md"
[ "$FAILED" = 0 ]
