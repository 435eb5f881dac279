"""render/replica_memo.py: the role replica objects reused from the previous render of the same
ModelServing equal, element for element and byte for byte, those built afresh, through a sequence
of renders whose inputs change one at a time (groups moving revision, role replicas on another
template revision, scheduler, namespace, worker replicas, templates, a role-template-hash
collision); a repeated render hands back the very objects; memory is bounded."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from ms_render_fixtures import two_role_wire, with_role

import pulumi_lws.modelserving.render as render
from pulumi_lws.core.k8s.yamlio import dump_documents
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.render import (
    DeclaredGroup,
    DeclaredRole,
    declare_all,
    modelserving_dependencies,
    render_modelserving,
    replica_memo,
)
from pulumi_lws.modelserving.revision import build_catalog, controller_revision, modelserving_revision, revision_data

Inputs = tuple[ModelServing, list[DeclaredGroup], Any, str | None]


def fleet(wire: dict[str, Any], old: ModelServing | None = None) -> tuple[ModelServing, Any]:
    ms = ModelServing.from_manifest(wire)
    observed = (
        []
        if old is None
        else [controller_revision("llm", "serving", modelserving_revision(old), revision_data(old)["data"])]
    )
    return ms, build_catalog(ms, observed)


def steps() -> Iterator[Inputs]:
    """One input changed at a time (then back), as a rollout and its edits render them."""
    base = two_role_wire("vllm:1")
    base["spec"]["replicas"] = 4
    ms, cat = fleet(base)
    yield ms, declare_all(ms, cat), cat, None
    yield ms, declare_all(ms, cat), cat, None  # the same again: everything reused
    yield ms, declare_all(ms, cat), cat, "other"  # another namespace
    old = ms
    new_wire = copy.deepcopy(base)
    for role in new_wire["spec"]["template"]["roles"]:
        for c in role["entryTemplate"]["spec"]["containers"]:
            c["image"] = "vllm:2"
    new, cat2 = fleet(new_wire, old)
    old_rev, new_rev = modelserving_revision(old), cat2.target
    for moved in range(5):  # a ServingGroupRollingUpdate: groups move one by one
        yield new, [DeclaredGroup(g, new_rev if g < moved else old_rev) for g in range(4)], cat2, None
    # RoleRollingUpdate: role replicas on their own template revisions, then surge replicas
    roles = (
        DeclaredRole("prefill", 0, old_rev),
        DeclaredRole("prefill", 1, new_rev),
        DeclaredRole("decode", 0, old_rev),
    )
    yield new, [DeclaredGroup(0, new_rev, roles), DeclaredGroup(1, old_rev)], cat2, None
    yield (
        new,
        [DeclaredGroup(0, new_rev, (*roles, DeclaredRole("prefill", 2, new_rev))), DeclaredGroup(1, old_rev)],
        cat2,
        None,
    )
    yield new, [DeclaredGroup(0, old_rev, roles), DeclaredGroup(1, old_rev)], cat2, None  # the group's revision only
    for scheduler in ("default-scheduler", "volcano"):
        wire = copy.deepcopy(new_wire)
        wire["spec"]["schedulerName"] = scheduler
        ms2, cat3 = fleet(wire, old)
        yield ms2, declare_all(ms2, cat3), cat3, None
    more = with_role(new_wire, "prefill", workerReplicas=3)
    ms3, cat4 = fleet(more, old)
    yield ms3, declare_all(ms3, cat4), cat4, None
    fewer = with_role(new_wire, "prefill", workerReplicas=0, workerTemplate=None)
    ms4, cat5 = fleet(fewer, old)
    yield ms4, declare_all(ms4, cat5), cat5, None
    yield new, declare_all(new, cat2), cat2, None


def fresh(ms: ModelServing, declared: list[DeclaredGroup], catalog: Any, namespace: str | None) -> list[dict[str, Any]]:
    """The render without the memo (every replica built, nothing remembered)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(replica_memo, "ReplicaMemo", NoMemo)
        return render_modelserving(ms, declared, catalog, namespace)


class NoMemo:
    def __init__(self, namespace: str, ms: str) -> None:
        pass

    def objects(self, ctx: Any, g: int, group_revision: str, r: int, template_revision: str, build: Any) -> Any:
        return build()

    def close(self) -> None:
        pass


def test_memoised_renders_equal_fresh_ones() -> None:
    replica_memo.clear()
    handed_out: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    reused = 0
    for n, (ms, declared, catalog, namespace) in enumerate(steps()):
        memo = render_modelserving(ms, declared, catalog, namespace)
        want = fresh(ms, declared, catalog, namespace)
        assert memo == want, f"step {n}"
        assert [list(m) for m in memo] == [list(m) for m in want]  # key order too
        assert dump_documents(memo) == dump_documents(want), f"step {n}"
        assert modelserving_dependencies(memo, check_order=True) == modelserving_dependencies(want, check_order=True)
        handed_out.append((memo, copy.deepcopy(memo)))
        if handed_out[:-1]:
            before = {id(m) for m in handed_out[-2][0]}
            reused += sum(id(m) in before for m in memo)
    assert reused > 100  # the memo was used, not only asked
    for memo, snapshot in handed_out:
        assert memo == snapshot  # nothing handed out was changed in place since


def test_a_role_template_hash_collision_is_no_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key is the role's content: the same revision key holding another template, under the
    same (forged) role-template-hash, renders apart."""
    replica_memo.clear()
    monkeypatch.setattr(render, "role_template_hash", lambda role: "same")
    ms = ModelServing.from_manifest(two_role_wire("vllm:1"))
    renders = []
    for image in ("vllm:1", "vllm:2"):
        stored = ModelServing.from_manifest(two_role_wire(image))
        catalog = build_catalog(ms, [controller_revision("llm", "serving", "k", revision_data(stored)["data"])])
        declared = [DeclaredGroup(0, "k")]
        got = render_modelserving(ms, declared, catalog)
        assert got == fresh(ms, declared, catalog, None)
        renders.append(got)
    images = [
        {c["image"] for m in got if m["kind"] == "StatefulSet" for c in m["spec"]["template"]["spec"]["containers"]}
        for got in renders
    ]
    assert images == [{"vllm:1"}, {"vllm:2"}]


def test_a_repeated_render_reuses_the_objects_and_memory_is_bounded() -> None:
    replica_memo.clear()
    ms, cat = fleet(two_role_wire())
    first = render_modelserving(ms, declare_all(ms, cat), cat)
    second = render_modelserving(ms, declare_all(ms, cat), cat)
    kinds = {"StatefulSet", "Service"}
    pairs = [(a, b) for a, b in zip(first, second) if a["kind"] in kinds]
    assert len(pairs) == len([m for m in first if m["kind"] in kinds]) > 0
    assert all(a is b for a, b in pairs)
    # only what the last render returned is kept: a group no longer declared is dropped
    render_modelserving(ms, [DeclaredGroup(0, cat.target)], cat)
    assert {key[1] for key in replica_memo._last[("serving", "llm")]} == {0}
    for i in range(replica_memo.LIMIT + 5):
        wire = two_role_wire()
        wire["metadata"]["name"] = f"m{i}"
        other = ModelServing.from_manifest(wire)
        render_modelserving(other, declare_all(other, cat), cat)
    assert len(replica_memo._last) == replica_memo.LIMIT
    assert ("serving", "llm") not in replica_memo._last  # the least recently rendered went first
