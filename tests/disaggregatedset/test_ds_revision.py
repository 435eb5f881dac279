"""The DisaggregatedSet revision (revision.compute_revision): upstream ComputeRevision's coverage
(role names + leaderWorkerTemplate, in role order) plus groupIdentity, canonical and stable."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import REPO_ROOT

from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.revision import compute_revision, revision_payload


def role(name: str, image: str = "img:v1", **spec: Any) -> dict[str, Any]:
    return {
        "name": name,
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}}},
            **spec,
        },
    }


BASE: dict[str, Any] = {
    "apiVersion": "disaggregatedset.x-k8s.io/v1",
    "kind": "DisaggregatedSet",
    "metadata": {"name": "ds"},
    "spec": {"roles": [role("prefill"), role("decode")]},
}


def rev(m: dict[str, Any]) -> str:
    return compute_revision(DisaggregatedSet.from_manifest(copy.deepcopy(m)))


def edited(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    m = copy.deepcopy(BASE)
    fn(m)
    return m


def r0(m: dict[str, Any]) -> dict[str, Any]:
    return m["spec"]["roles"][0]


def lwt0(m: dict[str, Any]) -> dict[str, Any]:
    return r0(m)["spec"]["leaderWorkerTemplate"]


def test_shape_payload_and_pinned_key() -> None:
    ds = DisaggregatedSet.from_manifest(copy.deepcopy(BASE))
    payload = json.loads(revision_payload(ds))
    assert [e["name"] for e in payload] == ["prefill", "decode"]
    assert payload[0] == {
        "name": "prefill",
        "template": {
            "size": 1,
            "restartPolicy": "RecreateGroupOnPodRestart",
            "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "img:v1"}]}},
        },
    }
    key = compute_revision(ds)
    assert len(key) == 8 and all(ch in "0123456789abcdef" for ch in key)
    # pinned: a change here re-rolls every DisaggregatedSet on upgrade (say so in the release notes)
    assert key == "a92a9b24"
    assert key == hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]


def test_stable_across_processes_and_hash_seeds() -> None:
    code = (
        "import json,sys; from pulumi_lws.disaggregatedset.api import DisaggregatedSet;"
        "from pulumi_lws.disaggregatedset.revision import compute_revision;"
        "print(compute_revision(DisaggregatedSet.from_manifest(json.loads(sys.argv[1]))))"
    )
    keys = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(BASE)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO_ROOT,
            check=True,
        )
        keys.add(out.stdout.strip())
    assert keys == {rev(BASE)}


def test_dict_order_and_written_defaults_do_not_matter() -> None:
    reordered = json.loads(json.dumps(BASE, sort_keys=True))
    reordered["spec"]["roles"] = [dict(reversed(list(r.items()))) for r in reordered["spec"]["roles"]]
    assert rev(reordered) == rev(BASE)
    explicit = edited(lambda m: lwt0(m).update(size=1, restartPolicy="RecreateGroupOnPodRestart"))
    assert rev(explicit) == rev(BASE)
    assert rev(edited(lambda m: r0(m)["spec"].update(groupIdentity="Ordinal"))) == rev(BASE)


UNCOVERED = {
    "replicas": lambda m: [r["spec"].update(replicas=5) for r in m["spec"]["roles"]],
    "rolloutStrategy": lambda m: r0(m)["spec"].update(
        rolloutStrategy={"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxSurge": 2, "maxUnavailable": 0}}
    ),
    "startupPolicy": lambda m: r0(m)["spec"].update(startupPolicy="LeaderReady"),
    "networkConfig": lambda m: r0(m)["spec"].update(networkConfig={"subdomainPolicy": "UniquePerReplica"}),
    "role metadata": lambda m: r0(m).update(metadata={"labels": {"a": "b"}, "annotations": {"c": "d"}}),
    "ds metadata": lambda m: m["metadata"].update(labels={"x": "y"}, annotations={"k": "v"}),
    "slices": lambda m: m["spec"].update(slices=3),
    "placement": lambda m: m["spec"].update(placementPolicy={"type": "ExclusiveSlice", "topology": "zone"}),
    "scaling": lambda m: [r.update(scaling={"mode": "External"}) for r in m["spec"]["roles"]],
}


@pytest.mark.parametrize("what", sorted(UNCOVERED))
def test_unchanged_by_fields_outside_the_revision(what: str) -> None:
    assert rev(edited(UNCOVERED[what])) == rev(BASE)


COVERED = {
    "image": lambda m: lwt0(m)["workerTemplate"]["spec"]["containers"][0].update(image="img:v2"),
    "pod template label": lambda m: lwt0(m)["workerTemplate"].update(metadata={"labels": {"a": "b"}}),
    "leader template": lambda m: lwt0(m).update(leaderTemplate={"spec": {"containers": [{"name": "l", "image": "x"}]}}),
    "size": lambda m: lwt0(m).update(size=2),
    "restartPolicy": lambda m: lwt0(m).update(restartPolicy="None"),
    "rename": lambda m: r0(m).update(name="prefill2"),
    "add role": lambda m: m["spec"]["roles"].append(role("router")),
    "remove role": lambda m: m["spec"].update(roles=[role("prefill"), role("decode"), role("router")][::2]),
    "role order": lambda m: m["spec"]["roles"].reverse(),
    "groupIdentity": lambda m: r0(m)["spec"].update(groupIdentity="Hash"),
}


@pytest.mark.parametrize("what", sorted(COVERED))
def test_changed_by_covered_fields(what: str) -> None:
    assert rev(edited(COVERED[what])) != rev(BASE)


def test_group_identity_switch_is_a_new_revision_distinct_per_role() -> None:
    first = rev(edited(lambda m: r0(m)["spec"].update(groupIdentity="Hash")))
    second = rev(edited(lambda m: m["spec"]["roles"][1]["spec"].update(groupIdentity="Hash")))
    assert len({first, second, rev(BASE)}) == 3
