"""modelserving_dependencies (one pass, shared refs, order check folded in) against the reference it
replaced: the per-StatefulSet rules merged by core.dependencies.merge_dependencies, then
check_dependency_order — on random subsets and orders of rendered fleets (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_render_fixtures import two_role_wire

from pulumi_lws.core.contract.dependencies import (
    check_dependency_order,
    merge_dependencies,
    ref_of,
)
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.render import (
    DeclaredGroup,
    modelserving_dependencies,
    render_modelserving,
)
from pulumi_lws.modelserving.revision import build_catalog, controller_revision


def reference(manifests: list[dict[str, Any]]) -> dict:
    rules = {}
    for m in manifests:
        if m.get("kind") != "StatefulSet":
            continue
        meta = m["metadata"]
        ms = meta["labels"][L.NAME]
        revisions = dict.fromkeys(
            [meta["labels"].get(L.REVISION), m["spec"]["template"]["metadata"]["labels"].get(L.REVISION)]
        )
        deps = [("ControllerRevision", names.controller_revision(ms, rev)) for rev in revisions if rev]
        deps += [("Service", m["spec"]["serviceName"]), ("PodGroup", meta["labels"][L.GROUP_NAME])]
        rules[ref_of(m)] = deps
    return merge_dependencies(manifests, rules)


def fleet() -> list[dict[str, Any]]:
    """Two revisions (groups 0-1 on the old one, 2 on the new): every dependency kind, shared and not."""
    old, new = ModelServing.from_manifest(two_role_wire("vllm:1")), ModelServing.from_manifest(two_role_wire("vllm:2"))
    new.spec.replicas = 3
    old_catalog = build_catalog(old)
    observed = [controller_revision(old.name, old.namespace, old_catalog.target, old_catalog.roles[old_catalog.target])]
    catalog = build_catalog(new, observed)
    declared = [
        DeclaredGroup(0, old_catalog.target),
        DeclaredGroup(1, old_catalog.target),
        DeclaredGroup(2, catalog.target),
    ]
    return render_modelserving(new, declared, catalog, keep_revisions=[old_catalog.target])


FLEET = fleet()


def outcome(fn, *args):
    try:
        return fn(*args)
    except ValueError as e:
        return ("ValueError", str(e))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, len(FLEET) - 1), unique=True), st.randoms(use_true_random=False))
def test_dependencies_match_the_merged_rules_on_any_subset_and_order(picks: list[int], rnd) -> None:
    subset = [FLEET[i] for i in picks]
    rnd.shuffle(subset)
    expected = reference(subset)
    assert modelserving_dependencies(subset) == expected
    assert list(modelserving_dependencies(subset)) == list(expected)  # same (manifest) order

    def checked(ms):
        deps = reference(ms)
        check_dependency_order(ms, deps)
        return deps

    assert outcome(lambda m: modelserving_dependencies(m, check_order=True), subset) == outcome(checked, subset)


def test_a_statefulset_before_its_service_is_refused_with_the_reference_message() -> None:
    sts = next(m for m in FLEET if m["kind"] == "StatefulSet" and m["spec"]["serviceName"])
    svc = next(m for m in FLEET if m["kind"] == "Service" and m["metadata"]["name"] == sts["spec"]["serviceName"])
    with pytest.raises(ValueError, match="is declared before its dependencies") as got:
        modelserving_dependencies([sts, svc], check_order=True)
    with pytest.raises(ValueError) as want:
        check_dependency_order([sts, svc], reference([sts, svc]))
    assert str(got.value) == str(want.value)


def test_the_rendered_fleet_shares_one_tuple_per_dependency() -> None:
    deps = modelserving_dependencies(FLEET)
    assert len({id(d) for ds in deps.values() for d in ds}) == len({d for ds in deps.values() for d in ds})
