#!/usr/bin/env bash
# One command for the whole stack on a fresh machine: makes .venv (first time only),
# installs the project with the embedded MongoDB-compatible server, and starts
# MongoDB (unless MONGODB_URI is set), the runner and the webserver.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-venv.sh "embedded" "runner, grpc, secantus"
exec .venv/bin/python scripts/start.py "$@"
