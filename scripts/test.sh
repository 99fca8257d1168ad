#!/usr/bin/env bash
# Runs every test: makes .venv (first time only) with the dev and embedded extras,
# checks the generated protobuf code, lint and types, then pytest (which starts its own
# embedded MongoDB-compatible server unless MONGODB_URI is set) and the node fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import runner, grpc, secantus, pytest, mypy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e ".[embedded,dev]"
fi
.venv/bin/python scripts/gen_protos.py --check
.venv/bin/ruff check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
