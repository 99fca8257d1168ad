#!/usr/bin/env bash
# Makes .venv with the given extras the first time (or when an import is missing).
# Usage: source scripts/ensure-venv.sh "embedded,dev" "runner, grpc, secantus, pytest"
extras="$1"
imports="$2"
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import $imports" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e ".[$extras]"
fi
