"""Revision keys: exactly the covered fields, stable across processes, catalog numbering."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import REPO_ROOT

from pulumi_lws.core.k8s.hashing import canonical_json, fnv32a, safe_encode
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import apply_revision, build_catalog, key_of_data, revision_data, revision_key

ROOT = REPO_ROOT
BASE: dict[str, Any] = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {
        "replicas": 3,
        "leaderWorkerTemplate": {
            "size": 4,
            "leaderTemplate": {
                "metadata": {"labels": {"role": "leader"}},
                "spec": {"containers": [{"name": "l", "image": "img:1"}]},
            },
            "workerTemplate": {
                "spec": {"containers": [{"name": "w", "image": "img:1", "ports": [{"containerPort": 8080}]}]}
            },
        },
    },
}
#: Pinned: changing how the key is computed rolls every group of every user. Only change on purpose.
GOLDEN_KEY = "554455b444"


def make(mutate=None) -> LeaderWorkerSet:
    data = copy.deepcopy(BASE)
    if mutate:
        mutate(data)
    return LeaderWorkerSet.parse(data)


def lwt(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["leaderWorkerTemplate"]


def test_golden_key() -> None:
    assert revision_key(make()) == GOLDEN_KEY
    assert len(GOLDEN_KEY) <= 10 and set(GOLDEN_KEY) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_key_primitives() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C  # FNV-1a 32 test vector
    assert safe_encode("0123") == "4567"  # bytes 48..51 mod 27 -> alphabet[21..24]
    assert canonical_json({"b": 1, "a": [1.0, True]}) == '{"a":[1,true],"b":1}'


COVERED = {
    "image": lambda d: lwt(d)["workerTemplate"]["spec"]["containers"][0].update(image="img:2"),
    "leader-image": lambda d: lwt(d)["leaderTemplate"]["spec"]["containers"][0].update(image="img:2"),
    "size": lambda d: lwt(d).update(size=5),
    "restartPolicy": lambda d: lwt(d).update(restartPolicy="None"),
    "subGroupPolicy": lambda d: lwt(d).update(subGroupPolicy={"subGroupSize": 2}),
    "volumeClaimTemplates": lambda d: lwt(d).update(volumeClaimTemplates=[{"metadata": {"name": "data"}}]),
    "pvcRetention": lambda d: lwt(d).update(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"}),
    "maxGroupRestarts": lambda d: lwt(d).update(maxGroupRestarts=3),
    "subdomainPolicy": lambda d: d["spec"].update(networkConfig={"subdomainPolicy": "UniquePerReplica"}),
}
NOT_COVERED = {
    "replicas": lambda d: d["spec"].update(replicas=7),
    "rolloutStrategy": lambda d: d["spec"].update(
        rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": 2, "partition": 1}}
    ),
    "startupPolicy": lambda d: d["spec"].update(startupPolicy="LeaderReady"),
    "groupIdentity": lambda d: d["spec"].update(groupIdentity="Hash"),
    "groupReplacementPolicy": lambda d: d["spec"].update(groupReplacementPolicy="Immediate"),
    "podTerminationPolicy": lambda d: d["spec"].update(podTerminationPolicy="Parallel"),
    "scheduling": lambda d: d["spec"].update(scheduling={}),
    "metadata": lambda d: d["metadata"].update(name="other", labels={"a": "b"}, annotations={"x": "y"}, namespace="z"),
    "explicit-defaults": lambda d: lwt(d).update(restartPolicy="RecreateGroupOnPodRestart"),
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_covered_fields_change_the_key(name: str) -> None:
    assert revision_key(make(COVERED[name])) != revision_key(make())


@pytest.mark.parametrize("name", sorted(NOT_COVERED))
def test_uncovered_fields_keep_the_key(name: str) -> None:
    assert revision_key(make(NOT_COVERED[name])) == revision_key(make())


def test_covered_set_is_exactly_lwt_and_network_config() -> None:
    data = revision_data(make())
    assert set(data) == {"spec"}
    assert set(data["spec"]) == {"leaderWorkerTemplate", "networkConfig"}
    assert data["spec"]["leaderWorkerTemplate"]["$patch"] == "replace"
    assert data["spec"]["networkConfig"] == {"subdomainPolicy": "Shared", "$patch": "replace"}


@pytest.mark.parametrize("net", [None, {}, {"subdomainPolicy": None}, {"subdomainPolicy": "Shared"}])
def test_nil_network_config_equals_shared(net: Any) -> None:
    assert revision_key(make(lambda d: d["spec"].update(networkConfig=net))) == revision_key(make())


def test_restart_policy_spellings_share_a_key() -> None:
    none = make(lambda d: lwt(d).update(restartPolicy="None"))
    assert revision_key(make(lambda d: lwt(d).update(restartPolicy="Default"))) == revision_key(none)
    assert revision_key(make(lambda d: lwt(d).update(restartPolicy=""))) == revision_key(make())


def test_dict_key_order_and_float_ints_do_not_matter() -> None:
    def reorder(d: dict[str, Any]) -> None:
        w = lwt(d)["workerTemplate"]["spec"]["containers"][0]
        lwt(d)["workerTemplate"]["spec"]["containers"][0] = dict(reversed(list(w.items())))
        d["spec"]["leaderWorkerTemplate"] = dict(reversed(list(lwt(d).items())))

    assert revision_key(make(reorder)) == GOLDEN_KEY
    assert (
        revision_key(
            make(lambda d: lwt(d)["workerTemplate"]["spec"]["containers"][0]["ports"][0].update(containerPort=8080.0))
        )
        == GOLDEN_KEY
    )


def test_snake_case_construction_has_the_same_key() -> None:
    snake = LeaderWorkerSet(
        metadata={"name": "demo"},
        spec={
            "replicas": 3,
            "leader_worker_template": {
                "size": 4,
                "leader_template": BASE["spec"]["leaderWorkerTemplate"]["leaderTemplate"],
                "worker_template": BASE["spec"]["leaderWorkerTemplate"]["workerTemplate"],
            },
        },
    )
    assert revision_key(snake) == GOLDEN_KEY


def test_key_is_stable_across_processes() -> None:
    code = (
        "import json,sys; from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet as L; "
        "from pulumi_lws.lws.revision import revision_key; print(revision_key(L.parse(json.loads(sys.argv[1]))))"
    )
    keys = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(BASE)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        keys.add(out.stdout.strip())
    assert keys == {GOLDEN_KEY}


def test_apply_revision_round_trips() -> None:
    old = make()
    new = make(
        lambda d: (
            lwt(d).update(size=6),
            d["spec"].update(replicas=5, networkConfig={"subdomainPolicy": "UniquePerReplica"}),
        )
    )
    back = apply_revision(new, revision_data(old))
    assert revision_key(back) == revision_key(old)
    assert back.spec.leader_worker_template == old.spec.leader_worker_template
    assert back.spec.network_config.subdomain_policy == "Shared"
    assert back.replicas == 5 and back.metadata == new.metadata  # uncovered fields stay live
    assert new.size == 6  # the input is not mutated
    assert apply_revision(old, revision_data(old)) == old


def _cr(key: str, number: int, data: Any = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": f"demo-{key}-{number}", "labels": {L.NAME: "demo", L.TEMPLATE_REVISION_HASH: key}},
        "revision": number,
        "data": data or {"spec": {"leaderWorkerTemplate": {"size": number}}},
    }


def test_build_catalog_new_key_numbers_max_plus_one() -> None:
    lws = make()
    cat = build_catalog(lws, [_cr("aaa", 2), _cr("bbb", 5), {"metadata": {"labels": {}}, "revision": 9}])
    assert cat.target.key == GOLDEN_KEY
    assert cat.target.number == 6
    assert cat.target.controller_revision_name("demo") == f"demo-{GOLDEN_KEY}-6"
    assert set(cat.known) == {"aaa", "bbb", GOLDEN_KEY}
    assert cat.lws_at(lws, GOLDEN_KEY) is lws
    assert cat.lws_at(lws, "aaa").size == 2
    with pytest.raises(KeyError):
        cat.lws_at(lws, "zzz")


def test_build_catalog_highest_revision_wins() -> None:
    lws = make()
    cat = build_catalog(lws, [_cr("aaa", 3), _cr("aaa", 7), _cr("aaa", 4), _cr(GOLDEN_KEY, 2), _cr(GOLDEN_KEY, 5)])
    assert cat.get("aaa").number == 7
    assert cat.lws_at(lws, "aaa").size == 7
    assert cat.target.number == 5  # an existing key keeps its (highest) number
    assert cat.target.data == revision_data(lws)


def test_build_catalog_empty() -> None:
    cat = build_catalog(make(), [])
    assert (cat.target.number, list(cat.known)) == (1, [GOLDEN_KEY])
    assert key_of_data(cat.target.data) == GOLDEN_KEY


def test_build_catalog_ignores_statefulset_history_revisions() -> None:
    """A StatefulSet's own ControllerRevisions copy the pod template labels; they are not ours."""
    lws = make()
    sts_revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "revision": 9,
        "metadata": {"name": "demo-7d9f8c6b5", "labels": {L.NAME: "demo", L.TEMPLATE_REVISION_HASH: "aaa"}},
        "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": []}}}},
    }
    cat = build_catalog(lws, [sts_revision, _cr("aaa", 2)])
    assert cat.get("aaa").number == 2 and cat.lws_at(lws, "aaa").size == 2
    assert cat.target.number == 3
    only_sts = build_catalog(lws, [sts_revision])
    assert set(only_sts.known) == {GOLDEN_KEY} and only_sts.target.number == 1
