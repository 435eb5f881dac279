"""LeaderWorkerSet with every input a Pulumi Output (issue 18), under the mock engine.

(a) update: namespace from a Namespace, image from an image build, replicas from a StackReference,
    env values from a Secret resource and from secret stack config — the same children and stage
    as the plain program, every child ``depends_on`` the resources the inputs came from;
(b) preview with those Outputs unknown: the documented stage with its "assumes" notes, children
    registered (visible in the preview) with the unknowns passed through, never a placeholder;
(c) secrets: marked secret on every child that carries one, never in outputs, logs or the stage
    table, never in a validation error.
"""
from __future__ import annotations

import copy
import json

import pulumi
import pytest
from fakes_component import FakeActuator
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
from pulumi.output import Unknown

from pulumi_lws.components.inputs import resolve_inputs
from pulumi_lws.core.errors import SpecError
from pulumi_lws.core.ports import EmptyObserver
from pulumi_lws.sim.pulumi_engine import run_program
from pulumi_lws.sim.runner import Runner
from pulumi_lws.sim.scenario import Scenario

TYPE = "lws:index:LeaderWorkerSet"
OLD_IMAGE = "nginxinc/nginx-unprivileged:1.27"


def worker(image, token, api_key) -> dict:
    return {"spec": {"containers": [{"name": "vllm", "image": image, "env": env(token, api_key)}]}}


def program(*, from_outputs: bool, namespace=None, image=None):
    """The LeaderWorkerSet with its inputs from the other resources, or the same values written out."""
    def run():
        from pulumi_lws import LeaderWorkerSet

        src = OtherResources.declare()
        if from_outputs:
            args = {"namespace": namespace or src.namespace, "replicas": src.replicas, "size": 2,
                    "worker_template": worker(image or src.image, src.token, src.api_key)}
        else:
            args = {"namespace": namespace or NAMESPACE, "replicas": REPLICAS, "size": 2,
                    "worker_template": worker(image or IMAGE, TOKEN, API_KEY)}
        lws = LeaderWorkerSet("llm", args)
        for key in ("stage", "blocker", "actions", "status", "revision", "selector"):
            pulumi.export(key, getattr(lws, key))
    return run


def run(prog, observer=None, *, preview=False, unknown=frozenset()):
    observer = observer or EmptyObserver()
    with stack_config():
        return run_program(prog, observer, FakeActuator() if observer.__class__ is EmptyObserver else observer,
                           preview=preview, resource_outputs=provider(preview=preview, unknown=unknown))


def source_urns(result) -> set[str]:
    wanted = {("kubernetes:core/v1:Namespace", "serving"), ("test:index:Image", "vllm-image"),
              ("kubernetes:core/v1:Secret", "hf"), ("pulumi:pulumi:StackReference", "org/infra/prod")}
    registered = {u for u, r in result.registrations.items() if (r.type, r.name) in wanted}
    # a StackReference is read (ReadResource), not registered: its URN is the engine's
    return registered | {"urn:pulumi:sim::lws::pulumi:pulumi:StackReference::org/infra/prod"}


def test_a_outputs_give_the_same_children_and_stage_as_plain_values_with_dependencies():
    outputs, plain = run(program(from_outputs=True)), run(program(from_outputs=False))
    assert component_manifests(outputs, NAMESPACE) == component_manifests(plain, NAMESPACE)
    assert len(component_manifests(outputs, NAMESPACE)) >= 5
    assert outputs.stages == plain.stages and outputs.stages[0].replicas == REPLICAS
    sts = next(m for m in component_manifests(outputs, NAMESPACE) if m["kind"] == "StatefulSet")
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    sources = source_urns(outputs)
    assert len(sources) == 4
    children = children_of(outputs, TYPE)
    assert children and all(sources <= set(r.dependencies) for r in children.values())
    component = next(r for r in outputs.registrations.values() if r.type == TYPE)
    assert sources <= set(component.dependencies)  # a Namespace is created before, deleted after, the workload
    assert outputs.outputs["stage"] == plain.outputs["stage"] and "assumptions" not in outputs.outputs["stage"]


def test_b_preview_with_unknown_inputs_on_a_fresh_stack_plans_creation_and_says_what_it_assumed():
    result = run(program(from_outputs=True), preview=True, unknown=ALL_UNKNOWN)
    stage = result.outputs["stage"]
    assert stage["replicas"] == 0 and stage["groups"] == ""
    assert stage["assumptions"] == [
        ("namespace is unknown until Namespace 'serving' is created; this preview assumes nothing of this "
         "workload exists there yet (every object is created)"),
        ("replicas is unknown until stack org/infra/prod exports it; this preview assumes 0, the most "
         "disruptive value (every group removed)"),
        ("worker_template.spec.containers[0].image is unknown until Image 'vllm-image' is created; passed "
         "through to the children (it cannot change this stage: every object is created)"),
    ]
    children = children_of(result, TYPE)
    kinds = sorted(r.type.split(":")[-1] for r in children.values())
    assert "StatefulSet" in kinds and "Service" in kinds and "ControllerRevision" in kinds  # visible in preview
    text = json.dumps(result.manifests, default=repr)
    assert "pulumi-unknown-" not in text  # a placeholder never reaches a child: the unknown does
    sts = next(m for m in result.manifests if m["kind"] == "StatefulSet")
    assert isinstance(sts["metadata"]["namespace"], Unknown)  # unknown on the wire, as in `pulumi preview`
    assert isinstance(sts["spec"]["template"]["spec"]["containers"][0]["image"], Unknown)
    assert {"name": "HF_TOKEN", "value": TOKEN} in sts["spec"]["template"]["spec"]["containers"][0]["env"]


def test_b_preview_when_groups_run_assumes_the_template_changes():
    manifest_doc = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": "llm", "namespace": "serving"},
                    "spec": {"replicas": REPLICAS, "leaderWorkerTemplate": {"size": 2, "workerTemplate": worker(OLD_IMAGE, TOKEN, API_KEY)}}}
    runner = Runner(Scenario(name="llm", engine="pure", manifest=copy.deepcopy(manifest_doc), start="converged"), "pure")
    runner.warm_up()
    cluster = runner.cluster

    def prog(image_from_build: bool):
        def body():
            from pulumi_lws import LeaderWorkerSet

            src = OtherResources.declare()
            image = src.image if image_from_build else "registry.example/vllm:next"
            lws = LeaderWorkerSet("llm", {"namespace": "serving", "replicas": REPLICAS, "size": 2,
                                          "worker_template": worker(image, TOKEN, API_KEY)})
            pulumi.export("stage", lws.stage)
        return body

    with recorded_logs() as logs:
        unknown = run(prog(True), cluster, preview=True, unknown=frozenset({"image"}))
    changed = run(prog(False), cluster, preview=True)
    stage = dict(unknown.outputs["stage"])
    assert stage.pop("assumptions") == [("worker_template.spec.containers[0].image is unknown until Image "
                                         "'vllm-image' is created; this preview assumes the template changes")]
    assert stage == changed.outputs["stage"] and stage["complete"] is False  # the rollout stage of a new image
    table = next(line for line in logs if "assumes: worker_template" in line)
    assert "Partition" in table  # the note is part of the logged stage table
    same = run(prog(False), cluster, preview=True)
    assert same.outputs["stage"]["case"] == changed.outputs["stage"]["case"]


def test_c_secrets_stay_secret_in_children_outputs_logs_and_stage_table():
    for preview in (False, True):
        with recorded_logs() as logs:
            result = run(program(from_outputs=True), preview=preview)
        carriers = {r.name: r.secret_paths for r in children_of(result, TYPE).values() if r.secret_paths}
        sts = {n: p for n, p in carriers.items() if "statefulset" in n}
        assert sts and all(any(p.endswith(".value") and "env" in p for p in paths) for paths in sts.values())
        assert any("controllerrevision" in n for n in carriers)  # the revision's template copy too
        published = json.dumps(result.outputs) + "\n".join(logs)
        assert TOKEN not in published and API_KEY not in published
        assert logs  # the stage summary (update) / stage table (preview) was logged


def test_c_a_validation_error_never_prints_a_secret():
    def prog():
        from pulumi_lws import LeaderWorkerSet

        LeaderWorkerSet("llm", {"namespace": pulumi.Output.secret("Not_A_Namespace_s3cr3t"), "replicas": 1, "size": 1,
                                "worker_template": worker(OLD_IMAGE, "x", "y")})

    with pytest.raises(SpecError) as err:
        run(prog)
    assert "Not_A_Namespace_s3cr3t" not in str(err.value) and "[secret]" in str(err.value)
    assert "metadata.namespace" in str(err.value)


def test_plain_inputs_are_returned_as_they_are():
    args = {"replicas": 2, "worker_template": {"spec": {}}}
    resolved = resolve_inputs(args)
    assert resolved.args is args and not resolved.unknowns and not resolved.secrets and not resolved.resources
    assert resolved.pass_through({"a": "b"}) == {"a": "b"} and resolved.redact("text") == "text"


def test_whole_manifest_as_an_output_and_a_nested_output_in_it():
    manifest_doc = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": "llm", "namespace": NAMESPACE},
                    "spec": {"replicas": REPLICAS, "leaderWorkerTemplate": {"size": 2, "workerTemplate": worker(IMAGE, TOKEN, API_KEY)}}}

    def prog(as_output: bool):
        def body():
            from pulumi_lws import LeaderWorkerSet

            src = OtherResources.declare()
            doc = copy.deepcopy(manifest_doc)
            if as_output:
                doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = src.image
                LeaderWorkerSet("llm", {"manifest": pulumi.Output.from_input(doc)})
            else:
                LeaderWorkerSet("llm", {"manifest": doc})
        return body

    a, b = run(prog(True)), run(prog(False))
    assert component_manifests(a, NAMESPACE) == component_manifests(b, NAMESPACE) and a.stages == b.stages
    image_urn = next(u for u, r in a.registrations.items() if r.type == "test:index:Image")
    assert all(image_urn in r.dependencies for r in children_of(a, TYPE).values())
