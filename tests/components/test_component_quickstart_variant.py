"""examples/quickstart/from-other-resources: the quickstart with its namespace from a Namespace and
its image from a ConfigMap (Pulumi Outputs), under the mock engine — update and preview."""

from __future__ import annotations

import copy

import yaml
from conftest import REPO_ROOT, validate_manifest
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.sim.driver.pulumi_engine import run_program

VARIANT = REPO_ROOT / "examples" / "quickstart" / "from-other-resources" / "__main__.py"
QUICKSTART = REPO_ROOT / "examples" / "quickstart" / "lws.yaml"
TYPE = "lws:index:LeaderWorkerSet"


def _children(result):
    component = next(u for u, r in result.registrations.items() if r.type == TYPE)
    return {u: r for u, r in result.registrations.items() if r.parent == component}


def test_update_gives_the_quickstart_children_in_the_namespace_after_their_sources():
    from pulumi_lws import workloads  # noqa: F401  (registers the APIs)
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.core.contract.workload import workload_for

    result = run_program(VARIANT, EmptyObserver(), FakeActuator())
    mine = sorted(
        (m for m in result.manifests if m["kind"] not in ("Namespace", "ConfigMap")),
        key=lambda m: (m["kind"], m["metadata"]["name"]),
    )
    doc = copy.deepcopy(yaml.safe_load(QUICKSTART.read_text()))
    doc["metadata"]["namespace"] = "inference"
    lws = workload_for("LeaderWorkerSet")
    expected = lws.reconcile(lws.parse(doc), EMPTY)
    assert [(m["kind"], m["metadata"]["name"]) for m in mine] == sorted(
        (m["kind"], m["metadata"]["name"]) for m in expected.manifests
    )
    assert all(m["metadata"]["namespace"] == "inference" for m in mine)
    for m in result.manifests:
        validate_manifest(m)
    sources = {
        u
        for u, r in result.registrations.items()
        if r.type in ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:ConfigMap")
    }
    assert len(sources) == 2 and all(sources <= set(r.dependencies) for r in _children(result).values())
    assert (
        result.outputs["revision"] == lws.target_revision(lws.parse(doc))
        and "assumptions" not in result.outputs["stage"]
    )


def test_preview_on_a_fresh_stack_passes_the_unknowns_through_and_says_so():
    def provider(args):  # the Namespace's name and the ConfigMap's data are unknown until they exist
        inputs = dict(args.inputs)
        if args.typ == "kubernetes:core/v1:Namespace":
            return {k: v for k, v in inputs.items() if k != "metadata"}
        if args.typ == "kubernetes:core/v1:ConfigMap":
            return {k: v for k, v in inputs.items() if k != "data"}
        return None

    result = run_program(VARIANT, EmptyObserver(), FakeActuator(), preview=True, resource_outputs=provider)
    image, namespace = result.outputs["stage"]["assumptions"]  # in the order the arguments are read
    assert namespace == (
        "namespace is unknown until Namespace 'inference' is created; this preview assumes nothing "
        "of this workload exists there yet (every object is created)"
    )
    assert image.startswith(
        "manifest.spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image is unknown "
        "until ConfigMap 'release' is created; passed through"
    )
    assert {r.type for r in _children(result).values()} >= {
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:core/v1:Service",
    }
