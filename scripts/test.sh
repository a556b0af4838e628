#!/usr/bin/env bash
# The whole test suite: lint, types, unit + integration tests, doctests and notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/ruff check lift_metrics tests benchmarks
.venv/bin/ruff format --check lift_metrics tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
