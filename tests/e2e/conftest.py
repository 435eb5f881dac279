"""Fixtures of the e2e tier (docs/e2e.md): the running cluster of ``make e2e-up`` and a fresh
namespace and stack per test, destroyed afterwards."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable, Iterator

import pytest
from e2e_harness import DESTROY, Cluster, Stack, load_env


@pytest.fixture(scope="session")
def cluster() -> Cluster:
    return Cluster(load_env())


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    name = "e2e-" + re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower().removeprefix("test_"))[:50].strip("-")
    yield cluster.fresh_namespace(name)
    cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")


@pytest.fixture
def make_stack(cluster: Cluster, namespace: str, tmp_path: pathlib.Path) -> Iterator[Callable[[str, str], Stack]]:
    made: list[Stack] = []

    def make(example: str, manifest_file: str) -> Stack:
        stack = Stack.create(cluster, example, manifest_file, namespace, tmp_path)
        made.append(stack)
        return stack

    yield make
    for stack in made:  # a failed test leaves nothing behind for the next one
        cluster.run(
            ["pulumi", *DESTROY, "--stack", namespace, "--non-interactive"],
            cwd=stack.workdir,
            check=False,
        )
        cluster.run(
            ["pulumi", "stack", "rm", namespace, "--yes", "--force", "--non-interactive"],
            cwd=stack.workdir,
            check=False,
        )
