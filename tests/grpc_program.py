"""Run a Python Pulumi program the way the Python language host runs it, against :class:`TestEngine`.

``pulumi preview``/``up`` start ``pulumi-language-python``, which runs the program through its
``pulumi-language-python-exec`` script: config from ``PULUMI_CONFIG`` /
``PULUMI_CONFIG_SECRET_KEYS`` (``pulumi.runtime.set_all_config``), then
``pulumi.runtime.configure(Settings(monitor=, engine=, project=, stack=, parallel=, dry_run=,
organization=, root_directory=))``, ``chdir`` to the project directory and
``pulumi.runtime.run_in_stack(lambda: runpy.run_path(program, run_name="__main__"))`` on a fresh
event loop. :func:`run_like_language_host` does the same in this process (no ``set_mocks``: every
registration is a real gRPC call to the engine), with a cluster backend installed
(:func:`pulumi_lws.backend.use_backend`), so the program plans against the embedded cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pathlib
import runpy
import sys
import traceback
from collections.abc import Iterator
from typing import Any

import pulumi
from grpc_engine import TestEngine
from pulumi.runtime import settings as _settings

from pulumi_lws.backend import use_backend

#: what the CLI passes as --parallel by default (pulumi up -p defaults to 16 x CPUs; any positive works)
PARALLEL = 32


@contextlib.contextmanager
def _program_directory(path: pathlib.Path) -> Iterator[None]:
    old_cwd, old_path, old_argv = os.getcwd(), list(sys.path), list(sys.argv)
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path)]
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        sys.argv = old_argv


def run_like_language_host(
    program: str | os.PathLike, engine: TestEngine, observer: Any, actuator: Any, *, secret_keys: tuple[str, ...] = ()
) -> None:
    """Run ``program`` (a project directory or its ``__main__.py``) once against ``engine``
    (its ``dry_run``, ``project``, ``stack`` and ``config``), with ``observer``/``actuator``
    installed as the cluster (``observer=None``: none, the live backend's configuration applies).
    Raises what the program raised."""
    path = pathlib.Path(program).resolve()
    if path.is_dir():
        path = path / "__main__.py"
    pulumi.runtime.set_all_config(dict(engine.config), list(secret_keys))
    _settings.ROOT.set(None)
    pulumi.runtime.configure(
        pulumi.runtime.Settings(
            monitor=engine.address,
            engine=engine.address,
            project=engine.project,
            stack=engine.stack,
            parallel=PARALLEL,
            dry_run=engine.dry_run,
            organization=engine.organization,
            root_directory=str(path.parent),
        )
    )
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # as the exec script does
    try:
        backend = use_backend(observer, actuator) if observer is not None else contextlib.nullcontext()
        with _program_directory(path), backend:
            loop.run_until_complete(pulumi.runtime.run_in_stack(lambda: runpy.run_path(str(path), run_name="__main__")))
    finally:
        loop.close()
        asyncio.set_event_loop(asyncio.new_event_loop())
        _settings.ROOT.set(None)
        pulumi.runtime.configure(pulumi.runtime.Settings(project="project", stack="stack"))
        pulumi.runtime.set_all_config({}, [])


def exit_code_like_language_host(program: str | os.PathLike, engine: TestEngine, observer: Any, actuator: Any) -> int:
    """:func:`run_like_language_host`, with the exec script's error handling: a ``pulumi.RunError``
    is logged (``pulumi.log.error``) as its message alone, any other exception with its Python
    traceback; the exit code is 0 on success, else 1. The log lines reach ``engine.logs``."""
    try:
        run_like_language_host(program, engine, observer, actuator)
        return 0
    except pulumi.RunError as exc:
        _log_error(engine, str(exc))
    except Exception:
        _log_error(engine, traceback.format_exc())
    return 1


def _log_error(engine: TestEngine, message: str) -> None:
    """``pulumi.log.error`` as the exec script calls it after the program failed (settings still
    pointing at the engine)."""
    import grpc
    from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

    with grpc.insecure_channel(engine.address) as channel:
        engine_pb2_grpc.EngineStub(channel).Log(engine_pb2.LogRequest(severity=engine_pb2.ERROR, message=message))
