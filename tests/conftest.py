"""Shared fixtures: conformance vectors, Pulumi mocks, manifest validation."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

# Hypothesis profiles: "ci" is derandomized (the same examples on every run, so CI never fails on
# a lucky draw and never passes by luck) with no deadline (shared CI boxes are slow); "dev" is
# hypothesis' default (random, so local runs keep exploring; failures replay from .hypothesis/).
# CI=true selects "ci"; HYPOTHESIS_PROFILE overrides; pytest's --hypothesis-profile wins over both.
# Both derive from hypothesis' own "default" profile, not from whatever it auto-loaded for $CI.
_DEFAULT = hypothesis_settings.get_profile("default")
hypothesis_settings.register_profile("ci", _DEFAULT, derandomize=True, deadline=None, print_blob=True)
# No per-example deadline in either: speed is measured by bench/, and a 200 ms deadline fails
# examples at random on a loaded 2-core box (CI may not set CI=true).
hypothesis_settings.register_profile("dev", _DEFAULT, deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev")
)

TESTS_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = ROOT = TESTS_DIR.parent
#: The vendored conformance vectors (byte-identical copies of the shared folder's conformance/; see its README).
CONFORMANCE_DIR = pathlib.Path(os.environ.get("LWS_CONFORMANCE_DIR", TESTS_DIR / "conformance"))
#: The steering repository's shared folder, when a checkout has it beside it (CI does; a clone
#: of this repository alone does not). Only the drift checks in tests/conformance read it.
SHARED_DIR = REPO_ROOT.parent / "shared"
K8S_VERSION = "1.35"


def load_conformance(name: str) -> Any:
    path = CONFORMANCE_DIR / name
    if not path.exists():
        pytest.fail(f"conformance file {path} is missing (vendored under tests/conformance)")
    return json.loads(path.read_text())


def ints_back(value: Any) -> Any:
    """Pulumi mocks deliver every number as a float; turn integral floats back into ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: ints_back(v) for k, v in value.items()}
    if isinstance(value, list):
        return [ints_back(v) for v in value]
    return value


def validate_manifest(obj: Mapping[str, Any]) -> None:
    """Strict kubernetes-validate against Kubernetes 1.35; CRD kinds are skipped (no schema)."""
    import kubernetes_validate
    from kubernetes_validate.utils import SchemaNotFoundError

    try:
        kubernetes_validate.validate(dict(obj), K8S_VERSION, strict=True)
    except SchemaNotFoundError:
        pass


@pytest.fixture
def mocks():
    """Fresh Pulumi mock engine per test (pattern from shared/reference/pulumi-notes.md §2.1)."""
    import pulumi

    class CapturingMocks(pulumi.runtime.Mocks):
        def __init__(self) -> None:
            self.registered: list[pulumi.runtime.MockResourceArgs] = []

        def new_resource(self, args: pulumi.runtime.MockResourceArgs):
            self.registered.append(args)
            outputs = dict(args.inputs)
            return f"{args.name}-id", outputs

        def call(self, args: pulumi.runtime.MockCallArgs):
            return {}

        def manifests(self) -> list[dict]:
            return [ints_back(dict(a.inputs)) for a in self.registered if a.custom and a.typ.startswith("kubernetes:")]

    m = CapturingMocks()
    fresh_mock_runtime(m)
    return m


def _close_previous_loop() -> None:
    """Cancel the tasks of the loop the previous test left current: a program that raised leaves its
    registrations in flight there, and a loop dropped with pending tasks prints "Task was destroyed
    but it is pending!" for each when the collector reaches it (at interpreter exit at the latest)."""
    previous = getattr(getattr(asyncio.get_event_loop_policy(), "_local", None), "_loop", None)
    if previous is None or previous.is_running() or previous.is_closed():
        return
    pending = [t for t in asyncio.all_tasks(previous) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        previous.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def fresh_mock_runtime(mocks, *, preview: bool = False) -> None:
    """A new event loop, a new root stack and ``set_mocks`` (pulumi-notes §2.1, plus one fix).

    ``set_mocks`` only creates a root Stack when none exists, so without resetting it a test would
    parent its resources to the previous test's Stack, whose futures belong to the previous event
    loop: "Future attached to a different loop" whenever one of them is still pending (a flake).
    """
    import pulumi
    from pulumi.runtime import settings

    _close_previous_loop()
    asyncio.set_event_loop(asyncio.new_event_loop())
    settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project="lws", stack="test", preview=preview)


@pytest.fixture
def kmock_options(kmock_options: dict[str, Any]) -> dict[str, Any]:
    """Every kmock server is at least a :class:`support.kmock_helpers.ClusterEmulator`: it serves
    the kinds every Kubernetes cluster serves (the live backend reads a 404 on their LIST as a
    cluster fault, not as "not installed"); a test's ``pytest.mark.kmock(cls=...)`` still wins."""
    from kmock import KubernetesEmulator
    from support.kmock_helpers import ClusterEmulator

    if kmock_options.get("cls") in (None, KubernetesEmulator):
        return {**kmock_options, "cls": ClusterEmulator}
    return kmock_options
