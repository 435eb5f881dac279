"""``pulumi-lws rollout``'s readiness poll on a real stack: the components name their pods
(``stage.pods``: namespace and label selector, all three APIs, under Pulumi's mock engine), and
:class:`~pulumi_lws.cli.rollout.AutomationStack` polls them with the cluster of the stack's
``kubernetes:kubeconfig`` / ``kubernetes:context`` config, one LIST per workload in its own
namespace (kmock's in-memory API server over HTTP; the Automation API stack is a fake)."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

import pulumi
import pytest
import yaml
from support.capacity_helpers import CASES
from support.fakes_component import FakeActuator

from pulumi_lws.cli.progress import workloads_in
from pulumi_lws.cli.rollout import AutomationStack, pod_targets, readiness_fingerprint
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.sim.driver.pulumi_engine import run_program

#: each API's label on every pod of the workload (its reconcile's Pod selector)
POD_LABEL = {
    "LeaderWorkerSet": "leaderworkerset.sigs.k8s.io/name",
    "ModelServing": "modelserving.volcano.sh/name",
    "DisaggregatedSet": "disaggregatedset.x-k8s.io/name",
}


@pytest.mark.parametrize("api", sorted(CASES))
def test_every_component_names_its_pods_namespace_and_selector_in_its_stage_output(api) -> None:
    manifest = CASES[api][0]("img:1")
    name = manifest["metadata"]["name"]

    def program() -> None:
        import pulumi_lws

        res = getattr(pulumi_lws, api)(name, {"manifest": copy.deepcopy(manifest), "namespace": "inference"})
        pulumi.export("web", {"stage": res.stage, "blocker": res.blocker})

    outputs = run_program(program, EmptyObserver(), FakeActuator()).outputs
    assert outputs["web"]["stage"]["pods"] == {"namespace": "inference", "selector": {POD_LABEL[api]: name}}
    assert pod_targets(workloads_in(outputs)) == [("inference", {POD_LABEL[api]: name})]


def pod(namespace: str, name: str, labels: dict[str, str], ready: str = "False") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]},
    }


def kubeconfig(kmock_url: str) -> str:
    """Two contexts: the current one points at nothing (a port nobody listens on); ``stack`` at kmock."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "elsewhere",
            "clusters": [
                {"name": "kmock", "cluster": {"server": kmock_url}},
                {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}},
            ],
            "users": [{"name": "test", "user": {"token": "t"}}],
            "contexts": [
                {"name": "stack", "context": {"cluster": "kmock", "user": "test"}},
                {"name": "elsewhere", "context": {"cluster": "nowhere", "user": "test"}},
            ],
        }
    )


@dataclass
class Value:  # the Automation API's OutputValue / ConfigValue: a ``value``
    value: Any
    secret: bool = False


class FakeAutomationStack:
    """The Automation API ``Stack``: ``up`` returns the workloads' outputs, ``get_all_config`` the
    stack config (``pulumi config --show-secrets --json``: a secret kubeconfig arrives decrypted)."""

    def __init__(self, outputs: dict[str, Any], config: dict[str, Value]) -> None:
        self.outputs, self.config, self.ups = outputs, config, 0

    def up(self, on_output=None):
        self.ups += 1
        return type("UpResult", (), {"outputs": {k: Value(v) for k, v in self.outputs.items()}})()

    def get_all_config(self) -> dict[str, Value]:
        return self.config


def workload(namespace: str, name: str) -> dict[str, Any]:
    pods = {"namespace": namespace, "selector": {POD_LABEL["LeaderWorkerSet"]: name}}
    return {"stage": {"complete": False, "groups": "uu", "pods": pods}, "blocker": None}


@pytest.mark.asyncio
async def test_the_poll_reads_the_stacks_cluster_in_the_workloads_namespaces_only(kmock, tmp_path, monkeypatch) -> None:
    """Was: ``lightkube.Client()`` defaults (the current context of KUBECONFIG, ignoring the stack's
    config) and a LIST of pods in every namespace (cluster-wide RBAC)."""
    label = POD_LABEL["LeaderWorkerSet"]
    kmock.objects[("v1/pods", "inference", "web-0")] = pod("inference", "web-0", {label: "web"})
    kmock.objects[("v1/pods", "batch", "train-0")] = pod("batch", "train-0", {label: "train"})
    kmock.objects[("v1/pods", "other", "web-0")] = pod("other", "web-0", {label: "web"})  # same name, not ours
    kmock.objects[("v1/pods", "inference", "cache-0")] = pod("inference", "cache-0", {"app": "cache"})
    elsewhere = tmp_path / "kubeconfig"
    elsewhere.write_text(kubeconfig(str(kmock.url)))
    monkeypatch.setenv("KUBECONFIG", str(elsewhere))  # its current context is not the stack's
    config = {
        "kubernetes:kubeconfig": Value(kubeconfig(str(kmock.url)), secret=True),
        "kubernetes:context": Value("stack"),
    }
    stack = AutomationStack(
        "dev",
        ".",
        stack=FakeAutomationStack({"web": workload("inference", "web"), "train": workload("batch", "train")}, config),
    )

    assert stack.poll() is None  # before the first up: nothing names its pods
    await asyncio.to_thread(stack.up)
    first = await asyncio.to_thread(stack.poll)
    assert first == (
        ("batch", "train-0", "batch-train-0", "Running", "False"),
        ("inference", "web-0", "inference-web-0", "Running", "False"),
    )
    kmock.objects[("v1/pods", "inference", "web-0")] = pod("inference", "web-0", {label: "web"}, ready="True")
    assert await asyncio.to_thread(stack.poll) != first
    lists = [r for r in kmock if r.resource is not None and r.resource.plural == "pods"]
    assert {r.url.path for r in lists} == {"/api/v1/namespaces/inference/pods", "/api/v1/namespaces/batch/pods"}
    assert {r.params.get("labelSelector") for r in lists} == {f"{label}=web", f"{label}=train"}


def test_a_poll_that_cannot_reach_the_cluster_is_none_never_an_error(tmp_path) -> None:
    config = {"kubernetes:kubeconfig": Value(str(tmp_path / "absent"))}
    stack = AutomationStack("dev", ".", stack=FakeAutomationStack({"web": workload("inference", "web")}, config))
    stack.up()
    assert stack.poll() is None


def test_the_fingerprint_lists_each_target_in_its_namespace() -> None:
    class Client:
        def __init__(self) -> None:
            self.calls: list[tuple[str, dict]] = []

        def list(self, res, *, namespace, labels):
            self.calls.append((namespace, labels))
            return []

    client = Client()
    assert readiness_fingerprint(client, [("a", {"x": "1"}), ("b", {"y": "2"})]) == ()
    assert client.calls == [("a", {"x": "1"}), ("b", {"y": "2"})]
