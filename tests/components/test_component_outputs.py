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
from hypothesis import given
from hypothesis import strategies as st
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
from support.fakes_component import FakeActuator

from pulumi_lws.components.inputs import resolve_inputs
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario

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
            args = {
                "namespace": namespace or src.namespace,
                "replicas": src.replicas,
                "size": 2,
                "worker_template": worker(image or src.image, src.token, src.api_key),
            }
        else:
            args = {
                "namespace": namespace or NAMESPACE,
                "replicas": REPLICAS,
                "size": 2,
                "worker_template": worker(image or IMAGE, TOKEN, API_KEY),
            }
        lws = LeaderWorkerSet("llm", args)
        for key in ("stage", "blocker", "actions", "status", "revision", "selector"):
            pulumi.export(key, getattr(lws, key))

    return run


def run(prog, observer=None, *, preview=False, unknown=frozenset()):
    observer = observer or EmptyObserver()
    with stack_config():
        return run_program(
            prog,
            observer,
            FakeActuator() if observer.__class__ is EmptyObserver else observer,
            preview=preview,
            resource_outputs=provider(preview=preview, unknown=unknown),
        )


def source_urns(result) -> set[str]:
    wanted = {
        ("kubernetes:core/v1:Namespace", "serving"),
        ("test:index:Image", "vllm-image"),
        ("kubernetes:core/v1:Secret", "hf"),
        ("pulumi:pulumi:StackReference", "org/infra/prod"),
    }
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
        (
            "namespace is unknown until Namespace 'serving' is created; this preview assumes nothing of this "
            "workload exists there yet (every object is created)"
        ),
        (
            "replicas is unknown until stack org/infra/prod exports it; this preview assumes 0, the most "
            "disruptive value (every group removed)"
        ),
        (
            "worker_template.spec.containers[0].image is unknown until Image 'vllm-image' is created; passed "
            "through to the children (it cannot change this stage: every object is created)"
        ),
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
    manifest_doc = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "serving"},
        "spec": {
            "replicas": REPLICAS,
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": worker(OLD_IMAGE, TOKEN, API_KEY)},
        },
    }
    runner = Runner(
        Scenario(name="llm", engine="pure", manifest=copy.deepcopy(manifest_doc), start="converged"), "pure"
    )
    runner.warm_up()
    cluster = runner.cluster

    def prog(image_from_build: bool):
        def body():
            from pulumi_lws import LeaderWorkerSet

            src = OtherResources.declare()
            image = src.image if image_from_build else "registry.example/vllm:next"
            lws = LeaderWorkerSet(
                "llm",
                {
                    "namespace": "serving",
                    "replicas": REPLICAS,
                    "size": 2,
                    "worker_template": worker(image, TOKEN, API_KEY),
                },
            )
            pulumi.export("stage", lws.stage)

        return body

    with recorded_logs() as logs:
        unknown = run(prog(True), cluster, preview=True, unknown=frozenset({"image"}))
    changed = run(prog(False), cluster, preview=True)
    stage = dict(unknown.outputs["stage"])
    assert stage.pop("assumptions") == [
        (
            "worker_template.spec.containers[0].image is unknown until Image "
            "'vllm-image' is created; this preview assumes the template changes"
        )
    ]
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

        LeaderWorkerSet(
            "llm",
            {
                "namespace": pulumi.Output.secret("Not_A_Namespace_s3cr3t"),
                "replicas": 1,
                "size": 1,
                "worker_template": worker(OLD_IMAGE, "x", "y"),
            },
        )

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
    manifest_doc = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": NAMESPACE},
        "spec": {
            "replicas": REPLICAS,
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": worker(IMAGE, TOKEN, API_KEY)},
        },
    }

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


def test_an_unknown_number_in_a_template_is_planned_with_1_and_says_so():
    def prog():
        from pulumi_lws import LeaderWorkerSet

        src = OtherResources.declare()
        port = src.image.apply(lambda _: 8080)  # unknown whenever the image is
        template = {"spec": {"containers": [{"name": "vllm", "image": OLD_IMAGE, "ports": [{"containerPort": port}]}]}}
        pulumi.export("stage", LeaderWorkerSet("llm", {"replicas": 1, "size": 1, "worker_template": template}).stage)

    result = run(prog, preview=True, unknown=frozenset({"image"}))
    assert result.outputs["stage"]["assumptions"] == [
        (
            "worker_template.spec.containers[0].ports[0].containerPort is unknown until Image 'vllm-image' is created; "
            "planned with 1 in its place (it cannot change this stage: every object is created)"
        )
    ]
    update = run(prog)
    sts = next(m for m in update.manifests if m["kind"] == "StatefulSet")
    assert sts["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] == 8080


@pytest.mark.parametrize(
    ("path", "role"),
    [
        (("namespace",), "identity"),
        (("manifest", "metadata", "name"), "identity"),
        (("worker_template", "spec", "containers", 0, "name"), "template"),
        (("manifest", "spec", "template", "roles", 0, "entryTemplate", "spec", "containers", 0, "image"), "template"),
        (("replicas",), "decision"),
        (("rollout", "max_unavailable"), "decision"),
        (("manifest", "spec", "roles", 1, "spec", "replicas"), "decision"),
        (("startup_policy",), "other"),
        (("manifest", "spec", "roles", 0, "name"), "other"),
    ],
)
def test_each_unknown_field_gets_the_stand_in_of_its_role(path, role):
    from pulumi_lws.components.inputs import MOST_DISRUPTIVE, Unknown

    unknown = Unknown(path, (), pulumi.Output.from_input(None))
    assert unknown.role == role
    if role == "decision":
        key = {"max_unavailable": "maxUnavailable"}.get(path[-1], path[-1])
        assert unknown.stand_in == MOST_DISRUPTIVE[key][0][0]
    else:
        assert unknown.stand_in.startswith("pulumi-unknown-") and len(unknown.stand_in) == len("pulumi-unknown-") + 8


_SECRET = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=4, max_size=24)


@given(secret=_SECRET, before=st.text(max_size=20), after=st.text(max_size=20))
def test_redact_never_leaks_a_secret(secret, before, after):
    from pulumi_lws.components.inputs import REDACTED, ResolvedInputs

    inputs = ResolvedInputs(args=None, secrets=[secret])
    text = before + secret + after
    redacted = inputs.redact({"line": text, "nested": [text, 3]})
    for line in (redacted["line"], redacted["nested"][0]):  # what is printed around the markers
        assert REDACTED in line and all(secret not in piece for piece in line.split(REDACTED))
    assert redacted["nested"][1] == 3
    assert inputs._carries_secret(text)


def test_a_stage_in_lanes_lists_its_roles_for_the_component_and_status_alike():
    """``stage_summary`` is what the components publish as ``stage`` and what ``pulumi-lws status``
    prints: a stage drawn in lanes carries ``roles`` in both (the e2e tier compares the two on a
    real cluster; DisaggregatedSet's once differed)."""
    from dataclasses import replace as _replace

    from pulumi_lws.components.outputs import stage_summary
    from pulumi_lws.core.contract.stage import Lane, Stage

    base = Stage(policy="disaggregatedset", target_revision="r", replicas=8, partition=None, group_revisions={})
    assert "roles" not in stage_summary(base)
    laned = _replace(base, lanes=(Lane("prefill", 2, 4, 2, 3), Lane("decode", 1, 1, 1, 0)))
    assert stage_summary(laned)["roles"] == [
        {"name": "prefill", "old": 2, "new": 4, "oldReady": 2, "newReady": 3},
        {"name": "decode", "old": 1, "new": 1, "oldReady": 1, "newReady": 0},
    ]
