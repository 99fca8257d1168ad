#!/usr/bin/env bash
# Runs every test: makes .venv (first time only) with the dev and embedded extras,
# checks the generated protobuf code, lint and types, runs the node fixtures (scripts/verify-node.py),
# then pytest, which starts its own embedded MongoDB-compatible server unless MONGODB_URI is set.
# Arguments go to pytest (and skip the fixture run), e.g. scripts/test.sh tests/unit -q
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-venv.sh "embedded,dev" "runner, grpc, secantus, pytest, mypy"
.venv/bin/python scripts/gen_protos.py --check
.venv/bin/ruff check .
.venv/bin/mypy
if [ $# -eq 0 ]; then
  .venv/bin/python scripts/verify-node.py   # every node fixture against a stack it starts
fi
exec .venv/bin/python -m pytest "$@"
