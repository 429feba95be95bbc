#!/usr/bin/env bash
# One-command GPU check (issues 17, 29): on a machine with a CUDA GPU and no network, proves
# the GPU path and leaves the figures and every failing test id in OUTDIR, within 7 minutes
# of wall time (install included), so a 15-minute GPU window holds a run, a fix and a rerun.
#
#     bash scripts/gpu_check.sh [--rehearse] [OUTDIR]        (default OUTDIR: gpu_report)
#
# Steps (each logged to OUTDIR/NAME.log; a failing step does not stop the others; the
# script exits non-zero at the end if any failed):
#   install     wheels from $GPUKNN_WHEELS or .whl (made by scripts/gpu_wheels.sh) into
#               /tmp/gpuknn-site, the checkout first on PYTHONPATH; without wheels the
#               checkout alone (the env step then names what the image lacks)
#   env         nvidia-smi, Python / torch / CuPy versions, cupy.is_available()
#   bench       scripts/bench_gpu.py FIRST: it compiles CuPy's kernels for the full study's
#               shapes (a cold cache costs seconds per kernel), so the tests after it and
#               its own timed runs find them compiled -> gpu_report.json, gpu_report.md
#   gpu-tests   the suite's GPU backends (ids with "cupy" or "torch-cuda"), in parallel
#               (pytest-xdist, $GPUKNN_CHECK_WORKERS workers, 4 at most: they share one GPU,
#               each with a GPUKNN_WORKING_MEMORY share of it), collection errors reported
#               and the rest still run
#   other-tests the rest of the suite in the time left (stopped at the budget: reported as
#               incomplete, not as a failure)
# summary.txt starts with every failing test id, grouped by module; the console gets it last.
#
# --rehearse: the same script end to end on a machine WITHOUT a GPU (CI runs it): torch on
# the CPU stands in for the GPU backends (GPUKNN_REHEARSE_GPU=1: the "torch-cuda" ids run on
# the CPU, so the same selection runs), wheels made by gpu_wheels.sh for this Python are
# installed the same way, the benchmark runs as --dry-run, the budgets are scaled down and a
# step stopped at its budget counts as incomplete. It proves the orchestration, the install,
# the report and the budgets before any GPU is lent.
set -uo pipefail # no -e: every step runs; failures are counted
cd "$(dirname "$0")/.."

REHEARSE=0
if [ "${1:-}" = --rehearse ]; then
  REHEARSE=1
  shift
fi
OUTDIR=${1:-gpu_report}
SITE=/tmp/gpuknn-site
GRACE=15 # seconds between a budget's SIGINT and a KILL

# Budgets in seconds. A real check: 7 minutes in all, install included -- two runs and a
# machine start each fit a 15-minute GPU window. A rehearsal: about 4 minutes on 2 cores.
if [ $REHEARSE = 1 ]; then
  TOTAL_BUDGET=${GPUKNN_CHECK_TOTAL:-230}
  BENCH_BUDGET=${GPUKNN_CHECK_BENCH:-60}
  SUITE_BUDGET=${GPUKNN_CHECK_SUITE:-70}
  WORKERS=${GPUKNN_CHECK_WORKERS:-2}
  OTHER_WORKERS=$WORKERS
else
  TOTAL_BUDGET=${GPUKNN_CHECK_TOTAL:-400}
  BENCH_BUDGET=${GPUKNN_CHECK_BENCH:-150}
  SUITE_BUDGET=${GPUKNN_CHECK_SUITE:-150}
  WORKERS=${GPUKNN_CHECK_WORKERS:-4}
  OTHER_WORKERS=${GPUKNN_CHECK_OTHER_WORKERS:-8} # host-only tests: the machine's cores
fi
if [ "$WORKERS" -gt 4 ]; then
  WORKERS=4 # every worker holds a CUDA context and a share of the one GPU's memory
fi
MIN_OTHER=${GPUKNN_CHECK_MIN_OTHER:-30} # the other tests run only with this much left
# A rerun after a fix needs less: GPUKNN_CHECK_TESTS names the test files of the GPU step
# (default: all of tests/), GPUKNN_CHECK_BENCH_PARTS the benchmark's parts (default: all).
read -r -a TEST_PATHS <<<"${GPUKNN_CHECK_TESTS:-tests}"
BENCH_PARTS=()
if [ -n "${GPUKNN_CHECK_BENCH_PARTS:-}" ]; then
  BENCH_PARTS=(--parts "$GPUKNN_CHECK_BENCH_PARTS")
fi

# The GPU tests are the backend fixture's "cupy" and "torch-cuda" ids (tests/conftest.py).
GPU_TESTS='cupy or torch-cuda'

# Agg: no display there. PIP_ROOT_USER_ACTION: such machines run commands as root, and pip's
# warning about it would bury the install log's own lines.
export MPLBACKEND=Agg PYTHONUNBUFFERED=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
if [ $REHEARSE = 1 ]; then
  export GPUKNN_REHEARSE_GPU=1
fi
mkdir -p "$OUTDIR"
START=$SECONDS
STEPS="$OUTDIR/.steps" # one line per step, read back into summary.txt at the end
: >"$STEPS"
FAILED=0

remaining() {
  echo $((TOTAL_BUDGET - (SECONDS - START)))
}

# run_step NAME COMMAND...: the command's output goes to OUTDIR/NAME.log (it runs in this
# shell, so an `export` inside it stays); its tail is shown on the console.
run_step() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name ($(remaining) s left of ${TOTAL_BUDGET} s)"
  "$@" >"$OUTDIR/$name.log" 2>&1
  STEP_RC=$?
  tail -n 6 "$OUTDIR/$name.log" | cut -c1-200 | sed 's/^/   /'
  STEP_SECONDS=$((SECONDS - t0))
}

record() { # record NAME STATUS [DETAIL]: the step's line in the summary; FAIL counts
  printf '%-12s %-11s %4d s  %s\n' "$1" "$2" "$STEP_SECONDS" "${3:-}" >>"$STEPS"
  [ "$2" = FAIL ] && FAILED=$((FAILED + 1))
  return 0
}

python_version() {
  python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")'
}

install() {
  local wheeldir=${GPUKNN_WHEELS:-.whl}
  if [ $REHEARSE = 1 ] && [ -z "${GPUKNN_WHEELS:-}" ]; then
    # The same wheel set the GPU machine gets, made the same way, for this Python.
    wheeldir=/tmp/gpuknn-rehearse-wheels
    rm -rf "$wheeldir"
    bash scripts/gpu_wheels.sh "$wheeldir" "$(python_version)" || return
  fi
  if compgen -G "$wheeldir/*.whl" >/dev/null; then
    echo "installing the wheels of $wheeldir into $SITE (no network, no dependencies):"
    ls "$wheeldir"/*.whl
    rm -rf "$SITE"
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$wheeldir"/*.whl || return
    # The checkout comes first: its code is what is under test (the suite's doctests import
    # gpuknn/ from it) even when the gpuknn wheel is older; the wheels supply the rest.
    export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"
  else
    echo "no wheels in $wheeldir: using the checkout alone on PYTHONPATH; what the image lacks"
    echo "shows in the env step (make the wheels with scripts/gpu_wheels.sh, see docs/gpu.md)"
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  fi
  echo "PYTHONPATH=$PYTHONPATH"
}

environment() {
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
  else
    echo "nvidia-smi: not found"
  fi
  python3 - "$REHEARSE" <<'EOF'
import importlib, platform, sys

rehearse = sys.argv[1] == "1"
print(f"python {platform.python_version()} ({sys.executable})")
missing = []
for name in ("numpy", "scipy", "array_api_compat", "array_api_strict", "threadpoolctl", "tqdm",
             "matplotlib", "sklearn", "imblearn", "pytest", "xdist", "gpuknn"):
    try:
        mod = importlib.import_module(name)
        print(f"{name} {getattr(mod, '__version__', '?')} ({getattr(mod, '__file__', '?')})")
    except Exception as exc:
        print(f"{name}: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
        missing.append(name)
torch_ok = cupy_ok = False
try:
    import torch
    torch_ok = torch.cuda.is_available()
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuda.is_available() = {torch_ok}"
          + (f", {torch.cuda.get_device_name()}" if torch_ok else ""))
    torch_ok = torch_ok or rehearse  # a rehearsal runs torch on the CPU instead
except Exception as exc:
    print(f"torch: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
try:
    import cupy
    cupy_ok = bool(cupy.is_available())
    print(f"cupy {cupy.__version__}, cupy.is_available() = {cupy_ok}")
    if cupy_ok:
        rt = cupy.cuda.runtime
        name = rt.getDeviceProperties(cupy.cuda.Device().id)["name"]
        print(f"  device {name.decode() if isinstance(name, bytes) else name}, CUDA runtime "
              f"{rt.runtimeGetVersion()}, driver API {rt.driverGetVersion()}")
except Exception as exc:
    print(f"cupy: NOT IMPORTABLE ({type(exc).__name__}: {exc})")
if missing:
    print("missing:", ", ".join(missing))
if rehearse:
    print("rehearsal: torch on the CPU stands in for the GPU backends; CuPy's tests skip")
# The step proves what the rest needs: the package, its dependencies, and the GPU backends.
sys.exit(0 if torch_ok and (cupy_ok or rehearse) and not missing else 1)
EOF
}

# The GPU's memory in bytes, shared by the test workers (0 when unknown).
gpu_memory_bytes() {
  nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null |
    head -n 1 | awk '{ printf "%d", $1 * 1048576 }'
}

# pytest under a time limit: SIGINT first, so pytest (and xdist) still prints its summary
# of what ran; -rfE lists every failure and error id, which the summary collects.
# -p no:benchmark: pytest-benchmark (on the GPU image, unused here) warns that xdist
# disables it, and filterwarnings = error turns that into an INTERNALERROR before any test.
timed_pytest() {
  local budget=$1
  shift
  timeout --signal=INT --kill-after="$GRACE" "$budget" \
    python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -p no:benchmark --continue-on-collection-errors "$@"
}

pytest_tally() { # the last "N passed, M failed ..." line of a pytest log
  grep -E '(passed|failed|error|skipped|deselected|no tests ran)' "$1" | grep -E ' in [0-9.]+s' |
    tail -n 1 | sed 's/^=* *//; s/ *=*$//'
}

# status of a pytest step: ok, FAIL (a test failed or errored), incomplete (stopped at its
# budget, nothing failed), or FAIL when nothing ran where something must
pytest_status() {
  local log=$1 rc=$2 tally
  tally=$(pytest_tally "$log")
  if grep -Eq '^(FAILED|ERROR) |^INTERNALERROR' "$log"; then
    echo FAIL
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo incomplete
  elif [ "$rc" = 0 ] && echo "$tally" | grep -q passed; then
    echo ok
  else
    echo FAIL
  fi
}

note_header() {
  local mode="GPU check"
  [ $REHEARSE = 1 ] && mode="rehearsal (no GPU: torch CPU stands in)"
  echo "gpu_check: $mode, $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname); budgets: total" \
    "${TOTAL_BUDGET} s, benchmark ${BENCH_BUDGET} s, GPU tests ${SUITE_BUDGET} s, $WORKERS workers"
}
echo "$(note_header)"

run_step install install
record install "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)"

run_step env environment
record env "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)"

# The benchmark starts no part after 3/4 of its budget and writes its reports after every
# part, so the outer timeout only catches a part that hangs.
if [ $REHEARSE = 1 ]; then
  BENCH_ARGS=(--dry-run --device cpu)
else
  BENCH_ARGS=(--device gpu)
fi
run_step bench timeout --kill-after="$GRACE" "$BENCH_BUDGET" \
  python3 scripts/bench_gpu.py --out "$OUTDIR" "${BENCH_ARGS[@]}" "${BENCH_PARTS[@]}" --budget $((BENCH_BUDGET * 3 / 4))
record bench "$([ $STEP_RC = 0 ] && echo ok || echo FAIL)" "(gpu_report.md)"

# Each worker gets an equal share of a third of the GPU's memory as its working memory
# (the default, half of what is free, taken by four processes at once, runs out).
mem=$(gpu_memory_bytes)
if [ -z "${GPUKNN_WORKING_MEMORY:-}" ] && [ "${mem:-0}" -gt 0 ]; then
  export GPUKNN_WORKING_MEMORY=$((mem / 3 / WORKERS / 1048576))  # MiB
fi
budget=$SUITE_BUDGET
left=$(($(remaining) - GRACE))
[ "$left" -lt "$budget" ] && budget=$left
if [ "$budget" -gt 0 ]; then
  run_step gpu-tests timed_pytest "$budget" -n "$WORKERS" -k "$GPU_TESTS" "${TEST_PATHS[@]}"
  status=$(pytest_status "$OUTDIR/gpu-tests.log" "$STEP_RC")
  tally=$(pytest_tally "$OUTDIR/gpu-tests.log")
  if [ $REHEARSE = 0 ] && [ "$status" != FAIL ] && ! grep -Eq '[0-9]+ passed' "$OUTDIR/gpu-tests.log"; then
    status=FAIL # green is not enough: without a GPU every backend test skips
    tally="no GPU test passed (${tally:-no tally}): is the GPU visible?"
  fi
  if [ $REHEARSE = 0 ] && [ "$status" = incomplete ]; then
    status=FAIL # on a GPU, the GPU tests must finish: a slow test is a finding
    tally="stopped at $budget s: $tally"
  fi
  record gpu-tests "$status" "$tally"
else
  STEP_SECONDS=0
  record gpu-tests FAIL "no time left"
fi

left=$(($(remaining) - GRACE))
if [ "$left" -ge "$MIN_OTHER" ]; then
  run_step other-tests timed_pytest "$left" -n "$OTHER_WORKERS" -k "not ($GPU_TESTS)"
  record other-tests "$(pytest_status "$OUTDIR/other-tests.log" "$STEP_RC")" "$(pytest_tally "$OUTDIR/other-tests.log")"
else
  STEP_SECONDS=0
  echo "== other-tests: skipped, ${left} s left (needs ${MIN_OTHER} s)" >"$OUTDIR/other-tests.log"
  record other-tests skipped "${left} s left"
fi

# summary.txt: the failing test ids first, grouped by module, then the steps.
{
  note_header
  echo "total $((SECONDS - START)) s; failed steps: $FAILED"
  echo
  python3 - "$OUTDIR" <<'EOF'
import re, sys
from collections import defaultdict
from pathlib import Path

out = Path(sys.argv[1])
by_module = defaultdict(list)
for step in ("gpu-tests", "other-tests"):
    log = out / f"{step}.log"
    if not log.exists():
        continue
    for line in log.read_text(errors="replace").splitlines():
        m = re.match(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", line)
        if m:
            kind, test, why = m.groups()
            by_module[test.split("::")[0]].append(f"{kind} {test}" + (f"  ({why[:150]})" if why else ""))
    if "INTERNALERROR>" in log.read_text(errors="replace"):
        by_module[f"pytest ({step})"].append(f"INTERNALERROR: pytest itself failed, see {step}.log")
n = sum(map(len, by_module.values()))
print(f"failing tests: {n}" + ("" if n else " (none)"))
for module in sorted(by_module):
    print(f"  {module}: {len(by_module[module])}")
    for entry in dict.fromkeys(by_module[module]):
        print(f"    {entry}")
EOF
  echo
  echo "steps (logs in $OUTDIR/NAME.log):"
  cat "$STEPS"
  if [ -f "$OUTDIR/gpu_report.md" ]; then
    echo
    echo "benchmark targets (gpu_report.md):"
    sed -n '/^## Targets/,/^## /p' "$OUTDIR/gpu_report.md" | grep '^|' || true
  fi
} >"$OUTDIR/summary.txt"
rm -f "$STEPS"
echo
cat "$OUTDIR/summary.txt"
[ "$FAILED" = 0 ]
