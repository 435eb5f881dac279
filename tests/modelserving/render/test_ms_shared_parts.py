"""render/shared.py: the parts a ModelServing render shares between its objects change no rendered
byte (compared with a render that memoises nothing), are shared across groups, and never sit at two
places of one manifest (a YAML document never needs an alias). Each render here starts with the
replica memo empty (render/replica_memo.py, tested on its own), so every object is built by it."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from ms_render_fixtures import two_role_wire

from pulumi_lws.core.k8s.yamlio import dump_documents
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.render import declare_all, render_modelserving, replica_memo
from pulumi_lws.modelserving.render.shared import SharedParts
from pulumi_lws.modelserving.revision import build_catalog


def fleet(scheduler: str = "volcano") -> list[dict[str, Any]]:
    wire = two_role_wire()
    wire["spec"]["replicas"] = 4
    wire["spec"]["schedulerName"] = scheduler
    ms = ModelServing.from_manifest(wire)
    catalog = build_catalog(ms)
    replica_memo.clear()
    return render_modelserving(ms, declare_all(ms, catalog), catalog)


def containers(value: Any, seen: dict[int, int]) -> None:
    if isinstance(value, (dict, list)):
        seen[id(value)] = seen.get(id(value), 0) + 1
        for v in value.values() if isinstance(value, dict) else value:
            containers(v, seen)


@pytest.mark.parametrize("scheduler", ["volcano", "default-scheduler"])
def test_sharing_changes_no_byte(scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = fleet(scheduler)
    monkeypatch.setattr(SharedParts, "part", lambda self, key, make: make())
    monkeypatch.setattr(SharedParts, "latest", lambda self, slot, key, make: make())
    fresh = fleet(scheduler)
    assert shared == fresh
    assert dump_documents(shared) == dump_documents(copy.deepcopy(fresh))


def test_no_part_sits_twice_in_one_manifest_and_no_document_needs_an_alias() -> None:
    for m in fleet():
        seen: dict[int, int] = {}
        containers(m, seen)
        assert max(seen.values()) == 1, m["metadata"]["name"]
        assert "&id" not in dump_documents([m])


def test_constant_parts_are_one_object_across_groups() -> None:
    out = fleet()
    podgroups = [m for m in out if m["kind"] == "PodGroup"]
    workers = [m for m in out if m["kind"] == "StatefulSet" and m["metadata"]["name"].endswith("-w")]
    assert len(podgroups) == 4 and len(workers) > 4
    assert len({id(p["spec"]) for p in podgroups}) == 1
    assert len({id(w["spec"]["updateStrategy"]) for w in workers}) == 1
    assert len({id(w["spec"]["selector"]["matchExpressions"]) for w in workers}) == 1
    pods = [w["spec"]["template"]["spec"] for w in workers]
    first_env = {id(((p.get("initContainers") or []) + p["containers"])[0]["env"][0]) for p in pods}
    assert len(first_env) == 1  # GROUP_SIZE, the same in every group


@pytest.mark.parametrize("scheduler", ["volcano", "default-scheduler"])
def test_a_multi_group_stream_dumps_without_anchors_or_aliases(scheduler: str) -> None:
    """The whole fleet in one stream (as ``render`` writes it, pulumi_lws/cli/render.py): parts
    shared across documents never become an anchor (``&id001``) or an alias (``*id001``)."""
    out = fleet(scheduler)
    text = dump_documents(out)
    assert re.search(r"[&*]id\d", text) is None
    assert text == dump_documents(copy.deepcopy(out))
