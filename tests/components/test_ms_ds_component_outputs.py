"""ModelServing and DisaggregatedSet with Pulumi Output inputs (issue 18), under the mock engine.

The same (a)/(b)/(c) as test_component_outputs.py (LeaderWorkerSet), through each API's upstream
manifest with nested Outputs in it: every container's image from an image build and env values
from a Secret resource and secret stack config, the namespace from a Namespace, replicas from a
StackReference (ModelServing ``spec.replicas``; DisaggregatedSet ``spec.roles[0].spec.replicas``).
"""

from __future__ import annotations

import copy
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pulumi
import pytest
import yaml
from outputs_stack import (
    ALL_UNKNOWN,
    API_KEY,
    IMAGE,
    NAMESPACE,
    REPLICAS,
    TOKEN,
    OtherResources,
    children_of,
    component_manifests,
    env,
    provider,
    recorded_logs,
    stack_config,
)
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
APIS = {
    "ModelServing": (
        "lws:index:ModelServing",
        yaml.safe_load((ROOT / "examples" / "modelserving-pd" / "ms.yaml").read_text()),
    ),
    "DisaggregatedSet": (
        "lws:index:DisaggregatedSet",
        yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text()),
    ),
}
REPLICAS_PATH = {"ModelServing": "replicas", "DisaggregatedSet": "manifest.spec.roles[0].spec.replicas"}


def containers(doc: dict) -> Iterator[dict]:
    if doc["kind"] == "ModelServing":
        for role in doc["spec"]["template"]["roles"]:
            for key in ("entryTemplate", "workerTemplate"):
                yield from role[key]["spec"]["containers"]
    else:
        for role in doc["spec"]["roles"]:
            yield from role["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]


def args_for(kind: str, *, image: Any, token: Any, api_key: Any, namespace: Any, replicas: Any) -> dict:
    doc = copy.deepcopy(APIS[kind][1])
    for c in containers(doc):
        c["image"] = image
        c["env"] = env(token, api_key)
    args: dict[str, Any] = {"manifest": doc, "namespace": namespace}
    if kind == "ModelServing":
        args["replicas"] = replicas
    else:
        doc["spec"]["roles"][0]["spec"]["replicas"] = replicas
    return args


def program(kind: str, *, from_outputs: bool, namespace: Any = None, image: Any = None):
    def body():
        import pulumi_lws

        src = OtherResources.declare()
        if from_outputs:
            args = args_for(
                kind,
                image=image or src.image,
                token=src.token,
                api_key=src.api_key,
                namespace=namespace or src.namespace,
                replicas=src.replicas,
            )
        else:
            args = args_for(
                kind,
                image=image or IMAGE,
                token=TOKEN,
                api_key=API_KEY,
                namespace=namespace or NAMESPACE,
                replicas=REPLICAS,
            )
        component = getattr(pulumi_lws, kind)("pd", args)
        for key in ("stage", "blocker", "actions", "status", "revision"):
            pulumi.export(key, getattr(component, key))

    return body


def run(prog, observer=None, *, preview=False, unknown=frozenset()):
    observer = observer or EmptyObserver()
    with stack_config():
        return run_program(
            prog,
            observer,
            observer if observer.__class__ is not EmptyObserver else FakeActuator(),
            preview=preview,
            resource_outputs=provider(preview=preview, unknown=unknown),
        )


@pytest.mark.parametrize("kind", sorted(APIS))
def test_a_outputs_give_the_same_children_and_stage_as_plain_values_with_dependencies(kind):
    outputs, plain = run(program(kind, from_outputs=True)), run(program(kind, from_outputs=False))
    assert component_manifests(outputs, NAMESPACE) == component_manifests(plain, NAMESPACE)
    assert outputs.stages == plain.stages and outputs.outputs["stage"] == plain.outputs["stage"]
    images = {
        c["image"]
        for m in component_manifests(outputs, NAMESPACE)
        if m["kind"] == "StatefulSet"
        for c in m["spec"]["template"]["spec"]["containers"]
    }
    assert images == {IMAGE}
    sources = {
        u
        for u, r in outputs.registrations.items()
        if (r.type, r.name)
        in {
            ("kubernetes:core/v1:Namespace", "serving"),
            ("test:index:Image", "vllm-image"),
            ("kubernetes:core/v1:Secret", "hf"),
        }
    }
    sources.add("urn:pulumi:sim::lws::pulumi:pulumi:StackReference::org/infra/prod")
    children = children_of(outputs, APIS[kind][0])
    assert children and all(sources <= set(r.dependencies) for r in children.values())


@pytest.mark.parametrize("kind", sorted(APIS))
def test_b_preview_with_unknown_inputs_on_a_fresh_stack(kind):
    result = run(program(kind, from_outputs=True), preview=True, unknown=ALL_UNKNOWN)
    notes = result.outputs["stage"]["assumptions"]
    assert (
        "namespace is unknown until Namespace 'serving' is created; this preview assumes nothing of this "
        "workload exists there yet (every object is created)"
    ) in notes
    # a DisaggregatedSet rejects one role at 0 while the others are not: the next candidate, 1
    worst = (
        "0, the most disruptive value (every group removed)"
        if kind == "ModelServing"
        else "1, the most disruptive value (the fewest groups the spec accepts)"
    )
    assert (
        f"{REPLICAS_PATH[kind]} is unknown until stack org/infra/prod exports it; this preview assumes {worst}" in notes
    )
    images = [n for n in notes if ".image is unknown until Image 'vllm-image' is created" in n]
    assert len(images) == sum(1 for _ in containers(APIS[kind][1]))  # one note per unknown leaf
    assert all(
        n.endswith("passed through to the children (it cannot change this stage: every object is created)")
        for n in images
    )
    assert len(notes) == len(images) + 2
    assert children_of(result, APIS[kind][0])  # children visible in the preview
    assert "pulumi-unknown-" not in json.dumps(result.manifests, default=repr)


def converged(kind: str):
    doc = copy.deepcopy(APIS[kind][1])
    doc["metadata"]["namespace"] = "serving"
    for c in containers(doc):
        c["env"] = env(TOKEN, API_KEY)
    runner = Runner(Scenario(name="pd", engine="pure", manifest=doc, start="converged"), "pure")
    runner.warm_up()
    return runner.cluster


@pytest.mark.parametrize("kind", sorted(APIS))
def test_b_preview_when_groups_run_assumes_the_template_changes(kind):
    cluster = converged(kind)
    base = APIS[kind][1]
    replicas = base["spec"]["replicas"] if kind == "ModelServing" else base["spec"]["roles"][0]["spec"]["replicas"]

    def prog(image_from_build: bool):
        def body():
            import pulumi_lws

            src = OtherResources.declare()
            args = args_for(
                kind,
                image=src.image if image_from_build else "registry.example/vllm:next",
                token=TOKEN,
                api_key=API_KEY,
                namespace="serving",
                replicas=replicas,
            )
            pulumi.export("stage", getattr(pulumi_lws, kind)("pd", args).stage)

        return body

    with recorded_logs() as logs:
        unknown = run(prog(True), cluster, preview=True, unknown=frozenset({"image"}))
    changed = run(prog(False), cluster, preview=True)
    stage = dict(unknown.outputs["stage"])
    notes = stage.pop("assumptions")
    assert notes and all(n.endswith("this preview assumes the template changes") for n in notes)
    assert stage == changed.outputs["stage"] and stage["complete"] is False
    assert any("assumes: manifest.spec" in line for line in logs)


@pytest.mark.parametrize("kind", sorted(APIS))
def test_c_secrets_stay_secret(kind):
    for preview in (False, True):
        with recorded_logs() as logs:
            result = run(program(kind, from_outputs=True), preview=preview)
        carriers = [
            r for r in children_of(result, APIS[kind][0]).values() if r.type == "kubernetes:apps/v1:StatefulSet"
        ]
        assert carriers and all(any("env" in p and p.endswith(".value") for p in r.secret_paths) for r in carriers)
        published = json.dumps(result.outputs) + "\n".join(logs)
        assert TOKEN not in published and API_KEY not in published and logs


@pytest.mark.parametrize("kind", sorted(APIS))
def test_d_the_preview_logs_the_stage_s_demand(kind):
    """Issue 24 item 5: the preview names what the stage's declared pods request (every API,
    from its rendered manifests: core.capacity)."""
    with recorded_logs() as logs:
        run(program(kind, from_outputs=False), preview=True)
    lines = [line for line in logs if line.startswith("info: demand of this stage (pod requests x pods declared): ")]
    assert len(lines) == 1, logs
