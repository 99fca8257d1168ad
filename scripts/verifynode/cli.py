"""``scripts/verify-node.py``: run node fixtures against a live stack, one line per fixture, then a tally."""

from __future__ import annotations

import argparse
import secrets
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from verifynode.fixture import Fixture, discover, load, select
from verifynode.match import FixtureError
from verifynode.run import Outcome, run_fixture
from verifynode.stack import ROOT, Endpoints, OwnStack, StackError, check_reachable

FIXTURES = ROOT / "tests" / "nodes"
DEFAULT_JOBS = 4


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="verify-node.py",
        description="Run node fixtures (tests/nodes/**/*.json) against a live stack; see tests/nodes/README.md.",
    )
    parser.add_argument("fixtures", nargs="*", help="fixture files, folders or names (default: all under tests/nodes)")
    parser.add_argument("--url", help="a running webserver, e.g. http://127.0.0.1:8080 (default: start a stack)")
    parser.add_argument("--grpc", help="that stack's runner gRPC address, e.g. 127.0.0.1:50051")
    parser.add_argument("--mongodb-uri", help="that stack's MongoDB (for db steps)")
    parser.add_argument("--database", default="smartbotic", help="that stack's SMARTBOTIC_DATABASE (for db steps)")
    parser.add_argument("--fs-root", type=Path, help="a root of that stack's fs API (for fs steps, {{fixtureDir}})")
    parser.add_argument(
        "--scheduler-clock-file",
        type=Path,
        help="that runner's SMARTBOTIC_SCHEDULER_CLOCK_FILE, if set (clock steps move it instead of waiting)",
    )
    parser.add_argument("--fixtures-dir", type=Path, default=FIXTURES, help="where fixture names are looked up")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help="fixtures run at the same time (default 4)")
    parser.add_argument("--keep-logs", action="store_true", help="keep the started stack's folder and logs")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.url is None and (args.grpc or args.mongodb_uri or args.fs_root or args.scheduler_clock_file):
        parser.error("--grpc, --mongodb-uri, --fs-root and --scheduler-clock-file describe a stack given with --url")
    return args


def load_all(paths: list[Path]) -> tuple[list[Fixture], list[Outcome]]:
    """Fixtures that load, and a FAIL outcome for each that does not (so one bad file hides nothing else)."""
    fixtures: list[Fixture] = []
    broken: list[Outcome] = []
    names: dict[str, Path] = {}
    for path in paths:
        try:
            fixture = load(path)
        except FixtureError as exc:
            broken.append(Outcome(path.stem, False, f"fixture error in {path}: {exc}"))
            continue
        if fixture.name in names:
            clash = f"fixture error in {path}: name also used by {names[fixture.name]}"
            broken.append(Outcome(fixture.name, False, clash))
            continue
        names[fixture.name] = path
        fixtures.append(fixture)
    return fixtures, broken


def expected_seconds(fixture: Fixture) -> float:
    """Rough length of a fixture, so the slow ones (schedules, polling) start first."""
    total = 0.0
    for step in fixture.steps:
        if step["step"] == "clock":
            total += 30.0  # half a minute on average with a real clock
        elif step["step"] == "latest":
            total += float(step.get("timeout", 0))
        elif step["step"] == "wait":
            total += float(step.get("seconds", 0))
    return total


@contextmanager
def stack_for(args: argparse.Namespace) -> Iterator[Endpoints]:
    if args.url:
        check_reachable(args.url.rstrip("/"))
        yield Endpoints(
            args.url.rstrip("/"), args.grpc, args.mongodb_uri, args.database, args.fs_root, args.scheduler_clock_file
        )
        return
    own = OwnStack()
    try:
        endpoints = own.start()
        print(f"verify-node: started a stack at {endpoints.http_url} in {own.tmp}", file=sys.stderr, flush=True)
        yield endpoints
    finally:
        own.stop(keep_dir=args.keep_logs)
        if args.keep_logs:
            print(f"verify-node: stack logs kept in {own.tmp}", file=sys.stderr)


def _node_database(endpoints: Endpoints) -> Any:
    if not endpoints.mongodb_uri:
        return None
    from pymongo import MongoClient

    client: MongoClient[dict[str, Any]] = MongoClient(endpoints.mongodb_uri, serverSelectionTimeoutMS=5000)
    return client[endpoints.database + "_data"]


def run_all(fixtures: list[Fixture], endpoints: Endpoints, jobs: int) -> list[Outcome]:
    run_id = secrets.token_hex(3)
    node_db = _node_database(endpoints)
    lock = threading.Lock()
    clock_lock = threading.Lock()
    outcomes: list[Outcome] = []
    order = sorted(fixtures, key=expected_seconds, reverse=True)

    def run_one(fixture: Fixture) -> Outcome:
        if not fixture.moves_clock:
            return run_fixture(fixture, endpoints, run_id, node_db)
        with clock_lock:  # while one moves the scheduler's clock, no other fixture's schedule may fire
            return run_fixture(fixture, endpoints, run_id, node_db)

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="fixture")
    try:
        futures = [pool.submit(run_one, f) for f in order]
        for future in as_completed(futures):
            outcome = future.result()
            with lock:
                outcomes.append(outcome)
                print(outcome.line(), flush=True)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # on Ctrl-C or SIGTERM: start nothing more
        if node_db is not None:
            node_db.client.close()
    return outcomes


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        paths = select(args.fixtures_dir, args.fixtures) if args.fixtures else discover(args.fixtures_dir)
    except FixtureError as exc:
        print(f"verify-node: {exc}", file=sys.stderr)
        return 2
    if not paths:
        print(f"verify-node: no fixtures found under {args.fixtures_dir}", file=sys.stderr)
        return 2
    fixtures, outcomes = load_all(paths)
    for outcome in outcomes:
        print(outcome.line(), flush=True)
    signal.signal(signal.SIGTERM, _terminate)
    if fixtures:
        try:
            with stack_for(args) as endpoints:
                outcomes += run_all(fixtures, endpoints, args.jobs)
        except StackError as exc:
            print(f"verify-node: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("verify-node: interrupted; the stack it started is stopped", file=sys.stderr)
            return 130
    failed = sum(not o.passed for o in outcomes)
    print(f"{len(outcomes) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0
