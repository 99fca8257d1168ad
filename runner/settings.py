"""Settings read once from the environment (DESIGN §2).

Every variable has the ``SMARTBOTIC_`` prefix except ``MONGODB_URI``. A bad
value stops start-up with a :class:`SettingsError` naming the variable.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class SettingsError(ValueError):
    """A configuration variable holds a value the runner cannot use."""


def _parse_bool(raw: str) -> bool:
    low = raw.strip().lower()
    if low in {"1", "true", "yes", "on"}:
        return True
    if low in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError("expected 1/0, true/false, yes/no or on/off")


def _parse_host_port(raw: str) -> str:
    host, sep, port = raw.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("expected host:port, e.g. 127.0.0.1:50051")
    return raw


def _parse_url(raw: str) -> str:
    if not raw.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return raw


def _parse_port(raw: str) -> int:
    port = int(raw)
    if not 0 <= port < 65536:
        raise ValueError("expected a port number between 0 and 65535")
    return port


def _parse_api_keys(raw: str) -> dict[str, str]:
    """``name:key,name:key`` → {key: name}."""
    keys: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, key = item.partition(":")
        if not sep or not name or not key:
            raise ValueError(f"entry {item.split(':')[0]!r} must be name:key")
        if len(key) < 8:
            raise ValueError(f"the key of {name!r} is shorter than 8 characters")
        keys[key] = name
    return keys


def _positive(parse: Callable[[str], T]) -> Callable[[str], T]:
    def parse_positive(raw: str) -> T:
        value = parse(raw)
        if value <= 0:  # type: ignore[operator]
            raise ValueError("must be greater than 0")
        return value

    return parse_positive


def _read(env: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise SettingsError(f"{name}={raw!r} is not valid: {exc}") from None


@dataclass(frozen=True)
class Settings:
    """Runner and webserver configuration."""

    mongodb_uri: str | None = None
    """``MONGODB_URI``; unset means the start script runs the embedded server."""
    database: str = "smartbotic"
    """``SMARTBOTIC_DATABASE``: the database holding workflows and executions."""
    data_dir: Path = Path(".data")
    """``SMARTBOTIC_DATA_DIR``: embedded database files, the default fs root."""
    grpc_addr: str = "127.0.0.1:50051"
    """``SMARTBOTIC_GRPC_ADDR``: where the runner's gRPC server listens."""
    http_host: str = "127.0.0.1"
    """``SMARTBOTIC_HTTP_HOST``: the webserver's bind address."""
    http_port: int = 8080
    """``SMARTBOTIC_HTTP_PORT``."""
    runner_target: str = "127.0.0.1:50051"
    """``SMARTBOTIC_RUNNER_TARGET``: the runner the webserver talks to."""
    nodes_dir: Path = Path("nodes")
    """``SMARTBOTIC_NODES_DIR``: node scripts."""
    fs_roots: tuple[str, ...] = ()
    """``SMARTBOTIC_FS_ROOTS``: os.pathsep- or comma-separated roots for the fs API; ``*`` lifts confinement."""
    allow_exec: bool = False
    """``SMARTBOTIC_ALLOW_EXEC``: enables ``smartbotic.process.exec``."""
    max_output_bytes: int = 1024 * 1024
    """``SMARTBOTIC_MAX_OUTPUT_BYTES``: a node output above this fails the node."""
    max_body_bytes: int = 10 * 1024 * 1024
    """``SMARTBOTIC_MAX_BODY_BYTES``: webhook and API request bodies above this get 413."""
    webhook_timeout_seconds: float = 35.0
    """``SMARTBOTIC_WEBHOOK_TIMEOUT_SECONDS``: how long a webhook caller waits."""
    execution_ttl_days: float = 7.0
    """``SMARTBOTIC_EXECUTION_TTL_DAYS``: finished executions are deleted this long after they end."""
    pause_grace_days: float = 7.0
    """``SMARTBOTIC_PAUSE_GRACE_DAYS``: a waiting execution is kept this long after its pause expires."""
    api_keys: dict[str, str] = field(default_factory=dict)
    """``SMARTBOTIC_API_KEYS``: ``name:key,...``; when set, /api/v1 needs a bearer key."""
    workers: int = 4
    """``SMARTBOTIC_WORKERS``: sandbox worker processes."""
    node_timeout_seconds: float = 30.0
    """``SMARTBOTIC_NODE_TIMEOUT_SECONDS``: default wall-clock budget of one node run."""
    node_memory_mb: int = 512
    """``SMARTBOTIC_NODE_MEMORY_MB``: address-space limit of a worker process."""
    lease_seconds: float = 15.0
    """``SMARTBOTIC_LEASE_SECONDS``: a running execution's lease; another runner takes over once it lapses."""
    poll_interval_seconds: float = 0.5
    """``SMARTBOTIC_POLL_INTERVAL_SECONDS``: how often the runner looks for queued work, due waits and expiries."""
    runner_id: str = ""
    """``SMARTBOTIC_RUNNER_ID``: this runner's name in leases; default host-pid."""
    public_url: str = "http://127.0.0.1:8080"
    """``SMARTBOTIC_PUBLIC_URL``: the webserver's address as approvers reach it (used in resumeUrl)."""
    scheduler_clock_file: Path | None = None
    """``SMARTBOTIC_SCHEDULER_CLOCK_FILE`` (tests only): the scheduler's time is the ISO instant in this file."""
    seed_examples: bool = True
    """``SMARTBOTIC_SEED_EXAMPLES``: store the built-in example workflows at start-up."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        d = cls()
        data_dir = Path(_read(env, "SMARTBOTIC_DATA_DIR", str, str(d.data_dir))).resolve()
        roots_raw = _read(env, "SMARTBOTIC_FS_ROOTS", str, "")
        if roots_raw.strip() == "*":
            roots: tuple[str, ...] = ("*",)
        elif roots_raw:
            parts = roots_raw.replace(",", os.pathsep).split(os.pathsep)
            roots = tuple(str(Path(p.strip()).resolve()) for p in parts if p.strip())
        else:
            roots = (str(data_dir / "files"),)
        runner_id = _read(env, "SMARTBOTIC_RUNNER_ID", str, "") or f"{os.uname().nodename}-{os.getpid()}"
        return cls(
            mongodb_uri=env.get("MONGODB_URI") or None,
            database=_read(env, "SMARTBOTIC_DATABASE", str, d.database),
            data_dir=data_dir,
            grpc_addr=_read(env, "SMARTBOTIC_GRPC_ADDR", _parse_host_port, d.grpc_addr),
            http_host=_read(env, "SMARTBOTIC_HTTP_HOST", str, d.http_host),
            http_port=_read(env, "SMARTBOTIC_HTTP_PORT", _parse_port, d.http_port),
            runner_target=_read(env, "SMARTBOTIC_RUNNER_TARGET", _parse_host_port, d.runner_target),
            nodes_dir=Path(
                _read(env, "SMARTBOTIC_NODES_DIR", str, str(Path(__file__).resolve().parent.parent / "nodes"))
            ),
            fs_roots=roots,
            allow_exec=_read(env, "SMARTBOTIC_ALLOW_EXEC", _parse_bool, d.allow_exec),
            max_output_bytes=_read(env, "SMARTBOTIC_MAX_OUTPUT_BYTES", _positive(int), d.max_output_bytes),
            max_body_bytes=_read(env, "SMARTBOTIC_MAX_BODY_BYTES", _positive(int), d.max_body_bytes),
            webhook_timeout_seconds=_read(
                env, "SMARTBOTIC_WEBHOOK_TIMEOUT_SECONDS", _positive(float), d.webhook_timeout_seconds
            ),
            execution_ttl_days=_read(env, "SMARTBOTIC_EXECUTION_TTL_DAYS", _positive(float), d.execution_ttl_days),
            pause_grace_days=_read(env, "SMARTBOTIC_PAUSE_GRACE_DAYS", _positive(float), d.pause_grace_days),
            api_keys=_read(env, "SMARTBOTIC_API_KEYS", _parse_api_keys, {}),
            workers=_read(env, "SMARTBOTIC_WORKERS", _positive(int), d.workers),
            node_timeout_seconds=_read(
                env, "SMARTBOTIC_NODE_TIMEOUT_SECONDS", _positive(float), d.node_timeout_seconds
            ),
            node_memory_mb=_read(env, "SMARTBOTIC_NODE_MEMORY_MB", _positive(int), d.node_memory_mb),
            lease_seconds=_read(env, "SMARTBOTIC_LEASE_SECONDS", _positive(float), d.lease_seconds),
            poll_interval_seconds=_read(
                env, "SMARTBOTIC_POLL_INTERVAL_SECONDS", _positive(float), d.poll_interval_seconds
            ),
            runner_id=runner_id,
            public_url=_read(env, "SMARTBOTIC_PUBLIC_URL", _parse_url, d.public_url).rstrip("/"),
            scheduler_clock_file=Path(env["SMARTBOTIC_SCHEDULER_CLOCK_FILE"])
            if env.get("SMARTBOTIC_SCHEDULER_CLOCK_FILE")
            else None,
            seed_examples=_read(env, "SMARTBOTIC_SEED_EXAMPLES", _parse_bool, d.seed_examples),
        )
