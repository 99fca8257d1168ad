"""Run node fixtures against a live stack (DESIGN §11); the fixture format is in tests/nodes/README.md.

Usage:
    .venv/bin/python scripts/verify-node.py                      # every fixture, on a stack it starts and stops
    .venv/bin/python scripts/verify-node.py core/set.basic.json  # by file, folder or fixture name
    .venv/bin/python scripts/verify-node.py --url http://127.0.0.1:8080 --grpc 127.0.0.1:50051 \\
        --mongodb-uri mongodb://127.0.0.1:27017 --database smartbotic --fs-root .data/files

Prints ``PASS name`` or ``FAIL name: <why>`` per fixture, then ``N passed, N failed``;
the exit status is 1 when any fixture failed, 2 when none could run.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/ is not a package: this makes verifynode importable

from verifynode.cli import main

if __name__ == "__main__":
    sys.exit(main())
