"""Regenerate the gRPC/protobuf code in runner/_proto from proto/workflow.proto.

Run: python scripts/gen_protos.py          (writes the files)
     python scripts/gen_protos.py --check  (exit 1 when the committed code is stale)
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "runner" / "_proto"
FILES = ("workflow_pb2.py", "workflow_pb2.pyi", "workflow_pb2_grpc.py")


def generate(into: Path) -> None:
    args = [
        "grpc_tools.protoc",
        f"-I{ROOT / 'proto'}",
        f"--python_out={into}",
        f"--pyi_out={into}",
        f"--grpc_python_out={into}",
        str(ROOT / "proto" / "workflow.proto"),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # Generated code imports its sibling as a top-level module; make it relative.
    grpc_file = into / "workflow_pb2_grpc.py"
    text = grpc_file.read_text()
    text = re.sub(r"^import workflow_pb2 as", "from . import workflow_pb2 as", text, flags=re.M)
    grpc_file.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed code is stale")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        if opts.check:
            stale = [
                f for f in FILES if not (OUT / f).exists() or not filecmp.cmp(Path(tmp) / f, OUT / f, shallow=False)
            ]
            if stale:
                print(f"generated protobuf code is stale: {', '.join(stale)}; run python scripts/gen_protos.py")
                return 1
            print("generated protobuf code is up to date")
            return 0
        OUT.mkdir(parents=True, exist_ok=True)
        for f in FILES:
            shutil.copy(Path(tmp) / f, OUT / f)
        (OUT / "__init__.py").write_text(
            '"""Generated from proto/workflow.proto by scripts/gen_protos.py. Do not edit."""\n'
        )
    print(f"wrote {', '.join(FILES)} to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
