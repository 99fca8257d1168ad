"""Wiring: store, catalog, host API, runtime, background loops and the gRPC server."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import grpc

from ._proto import workflow_pb2_grpc as pb_grpc
from .background import Background
from .builtins import seed_builtins
from .hostapi import HostApi
from .nodes import NodeCatalog
from .notify import ApprovalNotifier
from .polling import CursorCommitter, WatchStarter
from .runtime import Runtime, now_ms
from .sandbox import SandboxPool
from .service import RunnerService
from .settings import Settings
from .store.cursors import CursorStore
from .store.executions import Retention
from .store.mongo import Store
from .store.nodedata import NodeDataStore
from .watch import DirectoryWatcher, NodeScriptWatcher
from .workflows import Workflows

log = logging.getLogger(__name__)


async def serve(settings: Settings, pool: SandboxPool) -> None:
    if not settings.mongodb_uri:
        raise SystemExit("runner: MONGODB_URI is not set; scripts/start.py starts the embedded server and sets it")
    for root in settings.fs_roots:
        if root != "*":
            Path(root).mkdir(parents=True, exist_ok=True)
    store = Store.connect(
        settings.mongodb_uri,
        settings.database,
        Retention(finished_days=settings.execution_ttl_days, pause_grace_days=settings.pause_grace_days),
    )
    await store.ensure_indexes()
    node_data = NodeDataStore(store.db)
    await node_data.ensure_indexes()
    catalog = NodeCatalog(settings.nodes_dir)
    cursors = CursorStore(store.db)
    api = HostApi(settings, node_data, cursors=cursors)
    runtime = Runtime(settings, store, catalog, pool, api)
    runtime.after_finish.append(ApprovalNotifier(settings.public_url))
    runtime.before_finish.append(CursorCommitter(cursors))
    workflows = Workflows(store.workflows, catalog)
    if settings.seed_examples:
        seeded = await seed_builtins(store.workflows, workflows.validate, now_ms())
        if seeded:
            log.info("seeded built-in workflows: %s", ", ".join(seeded))
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
        ]
    )
    pb_grpc.add_RunnerServiceServicer_to_server(RunnerService(runtime, workflows), server)
    server.add_insecure_port(settings.grpc_addr)
    background = Background(runtime)
    scripts = NodeScriptWatcher(catalog)
    watch_starter = WatchStarter(runtime, DirectoryWatcher)
    await server.start()
    background.start()
    scripts.start()
    watch_task = asyncio.create_task(watch_starter.run())
    log.info("runner %s serving gRPC on %s (database %s)", settings.runner_id, settings.grpc_addr, settings.database)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        log.info("runner %s stopping", settings.runner_id)
    finally:
        watch_task.cancel()
        scripts.stop()
        await background.stop()
        await server.stop(grace=2)
        await runtime.shutdown()
        await api.close()
        await pool.close()
        await store.close()
        await asyncio.sleep(0)
