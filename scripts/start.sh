#!/usr/bin/env bash
# One command for the whole stack on a fresh machine: makes .venv (first time only),
# installs the project with the embedded MongoDB-compatible server, and starts
# MongoDB (unless MONGODB_URI is set), the runner and the webserver.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import runner, grpc, secantus" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e ".[embedded]"
fi
exec .venv/bin/python scripts/start.py "$@"
