"""ModelServingRevision / CalRoleTemplateHash keys, ControllerRevision data and the catalog."""

from __future__ import annotations

import copy
import json
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent / "render"))
from ms_render_fixtures import two_role, two_role_wire, with_role

from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.revision import (
    build_catalog,
    controller_revision,
    key_of_roles,
    modelserving_revision,
    revision_data,
    role_template_hash,
)


def _reordered(value):
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def test_key_shape_and_data_roundtrip():
    ms = two_role()
    key = modelserving_revision(ms)
    assert 1 <= len(key) <= 10 and key.isalnum()
    assert key_of_roles(revision_data(ms)["data"]) == key
    assert role_template_hash(ms.roles[0]) != role_template_hash(ms.roles[1])


def test_same_key_for_reordered_dict_keys_and_float_ints():
    wire = two_role_wire()
    reordered = _reordered(copy.deepcopy(wire))
    reordered["spec"]["template"]["roles"][0]["workerReplicas"] = 2.0  # Pulumi delivers floats
    a, b = ModelServing.from_manifest(wire), ModelServing.from_manifest(reordered)
    assert modelserving_revision(a) == modelserving_revision(b)
    assert [role_template_hash(r) for r in a.roles] == [role_template_hash(r) for r in b.roles]


def test_null_fields_hash_like_absent_ones():
    wire = two_role_wire()
    nulled = copy.deepcopy(wire)
    nulled["spec"]["template"]["roles"][1]["entryTemplate"]["spec"]["containers"][0]["command"] = None
    assert modelserving_revision(ModelServing.from_manifest(wire)) == modelserving_revision(
        ModelServing.from_manifest(nulled)
    )


def test_key_is_stable_across_processes():
    here = str(pathlib.Path(__file__).parent / "render")
    code = (
        f"import sys; sys.path.insert(0, {here!r}); from ms_render_fixtures import two_role; "
        "from pulumi_lws.modelserving.revision import modelserving_revision; print(modelserving_revision(two_role()))"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert keys == {modelserving_revision(two_role())}


@pytest.mark.parametrize("fields", [{"replicas": 1}, {"maxUnavailable": 2}, {"maxSurge": 1}, {"partition": 1}])
def test_replicas_and_budgets_do_not_change_keys(fields):
    base = two_role_wire()
    changed = with_role(base, "prefill", **fields)
    a, b = ModelServing.parse(base), ModelServing.parse(changed)
    assert modelserving_revision(a) == modelserving_revision(b)
    assert role_template_hash(a.roles[0]) == role_template_hash(b.roles[0])


def test_scheduling_fields_do_not_change_the_key():
    """Upstream semantics: schedulerName, gangPolicy, networkTopology are outside the revision."""
    base = two_role_wire()
    changed = copy.deepcopy(base)
    changed["spec"]["schedulerName"] = "default-scheduler"
    changed["spec"]["template"]["networkTopology"] = {"groupPolicy": {"mode": "soft"}}
    changed["spec"]["replicas"] = 5
    assert modelserving_revision(ModelServing.parse(base)) == modelserving_revision(ModelServing.parse(changed))


def test_template_changes_change_the_key_and_only_that_roles_hash():
    a, b = two_role("vllm:1"), two_role("vllm:2")
    assert modelserving_revision(a) != modelserving_revision(b)
    wire = with_role(
        two_role_wire(),
        "decode",
        workerReplicas=1,
        workerTemplate={"spec": {"containers": [{"name": "w", "image": "x"}]}},
    )
    c = ModelServing.parse(wire)
    assert role_template_hash(c.roles[0]) == role_template_hash(a.roles[0])
    assert role_template_hash(c.roles[1]) != role_template_hash(a.roles[1])


def test_reordering_roles_is_a_new_revision():
    wire = two_role_wire()
    swapped = copy.deepcopy(wire)
    swapped["spec"]["template"]["roles"].reverse()
    assert modelserving_revision(ModelServing.parse(wire)) != modelserving_revision(ModelServing.parse(swapped))


def test_controller_revision_object_and_catalog_roundtrip():
    old = two_role("vllm:1")
    new = ModelServing.parse(with_role(two_role_wire(), "prefill", workerReplicas=1))  # decode unchanged
    old_key = modelserving_revision(old)
    cr = controller_revision("llm", "serving", old_key, revision_data(old)["data"])
    assert cr["metadata"]["name"] == f"llm-{old_key}"
    assert cr["metadata"]["labels"]["modelserving.volcano.sh/revision"] == old_key
    assert cr["revision"] == 1 and "replicas" not in json.dumps(cr["data"])
    cat = build_catalog(new, [json.loads(json.dumps(cr))])
    assert cat.target == modelserving_revision(new) and set(cat.keys()) == {old_key, cat.target}
    assert cat.role(old_key, "prefill").entry_template["spec"]["containers"][0]["image"] == "vllm:1"
    h = role_template_hash(old.roles[0])
    assert cat.role_hash(old_key, "prefill") == h
    assert cat.revision_with_role_hash("prefill", h) == old_key
    assert cat.revision_with_role_hash("decode", role_template_hash(old.roles[1])) == cat.target  # unchanged role
    assert cat.revision_with_role_hash("prefill", "nope") is None
    with pytest.raises(KeyError):
        cat.roles_of("unknown")


def test_catalog_reads_upstream_and_legacy_data_and_skips_garbage():
    ms = two_role()
    roles = [r.to_wire() for r in ms.roles]  # upstream stores full roles (replicas included)
    objs = [
        {
            "kind": "ControllerRevision",
            "metadata": {
                "name": "llm-up",
                "labels": {"modelserving.volcano.sh/name": "llm", "modelserving.volcano.sh/revision": "up"},
            },
            "data": {"data": roles},
        },
        {
            "kind": "ControllerRevision",
            "metadata": {
                "name": "llm-legacy",
                "labels": {"modelserving.volcano.sh/name": "llm", "modelserving.volcano.sh/revision": "legacy"},
            },
            "data": roles,
        },
        {
            "kind": "ControllerRevision",
            "metadata": {
                "name": "llm-bad",
                "labels": {"modelserving.volcano.sh/name": "llm", "modelserving.volcano.sh/revision": "bad"},
            },
            "data": {"spec": {}},
        },
        {
            "kind": "ControllerRevision",
            "metadata": {
                "name": "other-x",
                "labels": {"modelserving.volcano.sh/name": "other", "modelserving.volcano.sh/revision": "x"},
            },
            "data": {"data": roles},
        },
    ]
    cat = build_catalog(ms, objs)
    assert set(cat.keys()) == {"up", "legacy", cat.target}
    assert cat.unreadable == ("llm-bad",)
    assert cat.role_hash("up", "prefill") == role_template_hash(ms.roles[0])


def test_a_statefulsets_own_history_is_not_a_modelserving_revision():
    """A role replica's StatefulSet keeps revisions of its pod template, whose labels include the
    ModelServing's ``{name, revision}``: the catalog skips them (neither a revision nor unreadable),
    even one whose data would read as roles."""
    ms = two_role()
    roles = [r.to_wire() for r in ms.roles]
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "llm-0-prefill-0", "uid": "u", "controller": True}
    labels = {"modelserving.volcano.sh/name": "llm", "modelserving.volcano.sh/revision": "up"}
    kept = {**labels, "controller.kubernetes.io/hash": "7d9f"}  # what the StatefulSet controller adds
    daemonset = {**labels, "controller-revision-hash": "7d9f"}  # what the DaemonSet controller adds
    history = [
        {
            "kind": "ControllerRevision",
            "metadata": {"name": "llm-0-prefill-0-7d9f", "labels": kept, "ownerReferences": [owner]},
            "data": {"spec": {"template": {"metadata": {"labels": labels}}}},
        },
        {
            "kind": "ControllerRevision",
            "metadata": {"name": "llm-0-prefill-0-x", "labels": kept, "ownerReferences": [owner]},
            "data": {"data": roles},
        },
        {
            "kind": "ControllerRevision",
            "metadata": {"name": "llm-agent-7d9f", "labels": daemonset},
            "data": {"spec": {"template": {"metadata": {"labels": labels}}}},
        },
    ]
    cat = build_catalog(ms, history)
    assert set(cat.keys()) == {cat.target}
    assert cat.unreadable == ()
    # the same object without the StatefulSet controller's label: a ModelServing revision
    mine = {**history[1], "metadata": {"name": "llm-up", "labels": labels}}
    assert "up" in build_catalog(ms, [mine]).keys()
