"""The opt-in capacity check at the live backend's HTTP boundary, against kmock (issue 24 item 5).

With ``scope.capacity`` the LiveCluster LISTs Nodes and the pods of every namespace (one request
each, ``/api/v1/nodes`` and ``/api/v1/pods``) into ``Snapshot.capacity``; the driver then holds a
stage whose new pods do not fit, for every API. A foreign pod in another namespace takes its GPUs
from the free count. Without the opt-in neither LIST is sent. A 403 on Nodes is a cluster error
naming the missing permission; ``pulumi-lws status --check-capacity`` exits 4 with it in one line.
"""

from __future__ import annotations

import asyncio
import copy
import pathlib

import pytest
import yaml

pytest.importorskip("kmock")

from support.capacity_helpers import CASES, GPU
from support.kmock_helpers import Fault, FaultyEmulator, kmock_client

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import UNREACHABLE
from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.contract.ports import ObserveError
from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.core.k8s.yamlio import dump_documents
from pulumi_lws.workloads import workload_for

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)


def seed_nodes(kmock, count: int, gpus: int = 8) -> None:
    for i in range(count):
        name = f"gpu-{i}"
        kmock.objects[("v1/nodes", None, name)] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {
                "allocatable": {"cpu": "64", "memory": "512Gi", GPU: str(gpus)},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }


def seed_foreign_pod(kmock, node: str, gpus: int) -> None:
    """A pod of another team, in another namespace, bound to ``node``."""
    kmock.objects[("v1/pods", "other-team", "hog")] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hog", "namespace": "other-team"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x", "resources": {"limits": {GPU: gpus}}}]},
        "status": {"phase": "Running"},
    }


def first_stage(api: str, kmock, *, check: bool | None):
    workload = workload_for(api)
    spec = workload.parse(CASES[api][0]("img:1"))
    live = LiveCluster(kmock_client(str(kmock.url)))
    return cycle(workload, spec, workload.options(), live, check_capacity=check)


API = pytest.mark.parametrize("api", sorted(CASES))


@pytest.mark.asyncio
@API
async def test_nodes_and_every_namespaces_pods_are_read_and_the_blocker_appears(kmock, api):
    # every API's first fleet needs 32 GPUs (LWS/MS: 2 groups of 2 pods; DS: 2 roles of 1 group of 2 pods)
    seed_nodes(kmock, 4)
    seed_foreign_pod(kmock, "gpu-0", 8)
    done = await asyncio.to_thread(first_stage, api, kmock, check=True)
    assert done.snapshot.capacity is not None
    assert [p["metadata"]["name"] for p in done.snapshot.capacity.pods] == ["hog"]
    assert done.snapshot.get("Node", "gpu-0") is None  # the Nodes do not join the planner's objects
    blocker = done.stage.blocker
    assert blocker is not None and blocker.code == INSUFFICIENT_CAPACITY
    assert blocker.message == f"the new pods need 32 {GPU}; 24 are free on nodes matching their selector"
    assert done.reconciled.manifests == ()  # nothing observed, nothing created
    paths = [r.url.path for r in kmock if r.resource is not None]
    assert paths.count("/api/v1/nodes") == 1 and paths.count("/api/v1/pods") == 1
    (pods,) = [r for r in kmock if r.url.path == "/api/v1/pods"]
    # selected server-side as kube-scheduler does: bound, not terminal
    assert pods.url.query.get("fieldSelector") == "status.phase!=Failed,status.phase!=Succeeded,spec.nodeName!="


@pytest.mark.asyncio
@API
async def test_the_first_stage_proceeds_when_it_fits(kmock, api):
    seed_nodes(kmock, 5)
    seed_foreign_pod(kmock, "gpu-0", 8)
    done = await asyncio.to_thread(first_stage, api, kmock, check=True)
    assert done.stage.blocker is None or done.stage.blocker.code != INSUFFICIENT_CAPACITY
    assert done.reconciled.manifests


@pytest.mark.asyncio
async def test_without_the_opt_in_neither_nodes_nor_all_pods_are_listed(kmock):
    seed_nodes(kmock, 1)
    done = await asyncio.to_thread(first_stage, "LeaderWorkerSet", kmock, check=None)
    assert done.snapshot.capacity is None
    paths = [r.url.path for r in kmock if r.resource is not None]
    assert "/api/v1/nodes" not in paths and "/api/v1/pods" not in paths


@pytest.mark.asyncio
async def test_a_403_on_nodes_names_the_missing_permission(kmock):
    seed_nodes(kmock, 4)
    kmock.inject(
        Fault("GET", "/api/v1/nodes", 403, "Forbidden", 'nodes is forbidden: User "t" cannot list', times=None)
    )
    with pytest.raises(ObserveError) as caught:
        await asyncio.to_thread(first_stage, "LeaderWorkerSet", kmock, check=True)
    text = str(caught.value)
    assert "LIST Node" in text and "HTTP 403" in text
    assert "missing permission: list nodes cluster-wide" in text and "--check-capacity" in text


def kubeconfig_file(kmock, tmp_path: pathlib.Path) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "kmock",
                "clusters": [{"name": "kmock", "cluster": {"server": str(kmock.url).rstrip("/")}}],
                "users": [{"name": "test", "user": {"token": "t"}}],
                "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
            }
        )
    )
    return str(path)


@pytest.mark.asyncio
async def test_status_check_capacity_shows_the_blocker_and_a_403_exits_4(kmock, tmp_path, capsys):
    seed_nodes(kmock, 4)
    seed_foreign_pod(kmock, "gpu-0", 8)
    manifest = tmp_path / "lws.yaml"
    manifest.write_text(dump_documents([copy.deepcopy(CASES["LeaderWorkerSet"][0]("img:1"))]))
    args = ["status", "--kubeconfig", kubeconfig_file(kmock, tmp_path), "--attempts", "1", str(manifest)]
    code = await asyncio.to_thread(main, [*args, "--check-capacity"])
    out, _ = capsys.readouterr()
    assert code == 1 and f"blocker: {INSUFFICIENT_CAPACITY}: the new pods need 32 {GPU}; 24 are free" in out
    assert "remedy: add nodes with free nvidia.com/gpu" in out
    code = await asyncio.to_thread(main, args)  # without the flag: no capacity read, no such blocker
    out, _ = capsys.readouterr()
    assert INSUFFICIENT_CAPACITY not in out

    kmock.inject(Fault("GET", "/api/v1/nodes", 403, "Forbidden", "nodes is forbidden", times=None))
    code = await asyncio.to_thread(main, [*args, "--check-capacity"])
    _, err = capsys.readouterr()
    assert code == UNREACHABLE
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
    assert "missing permission: list nodes cluster-wide" in lines[0]
