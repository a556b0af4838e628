#!/usr/bin/env bash
# The whole test suite: lint, types, then pytest (unit + integration tests, doctests and
# notebooks) in two lanes: the fast lane (-m "not slow", spread over the cores by pytest-xdist,
# about a minute on 2 cores) first, then the slow lane (-m slow: real models, real sandboxes,
# optimizer runs; five workers whatever the cores, since its tests mostly wait on the processes
# they start; --dist loadfile keeps a file's tests, and its shared sandboxes, on one worker;
# --no-loadscope-reorder keeps the order of tests/testkit.LONGEST_FIRST, the longest files
# first; about seven and a half minutes on 2 cores). Each lane
# records how many tests it collected and selected (--lane-record, tests/conftest.py) and
# the two must add up to the whole suite (tests/testkit.py checks), so no test falls between.
# Arguments go to both pytest runs (e.g. `bash scripts/test.sh -x`; `--full` also runs the
# whole-dataset checks, marker full, about 20 minutes more on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
# cached bytecode and rewritten test modules are shared by every pytest process (the sandbox's
# own interpreter runs with -B whatever this says)
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff check lift_metrics tests benchmarks
.venv/bin/ruff format --check lift_metrics tests benchmarks
.venv/bin/mypy
lanes="$(mktemp -t lift-metrics-lanes.XXXXXX)"
trap 'rm -f "$lanes"' EXIT
.venv/bin/python -m pytest -m "not slow" --numprocesses=auto --maxprocesses=4 \
    --lane-record="$lanes" "$@"
.venv/bin/python -m pytest -m slow --numprocesses=5 --dist=loadfile --no-loadscope-reorder \
    --lane-record="$lanes" "$@"
.venv/bin/python tests/testkit.py "$lanes"
