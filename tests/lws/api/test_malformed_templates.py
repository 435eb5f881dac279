"""Generated malformed pod templates: a wrong value at any depth of the leader template, the worker
template or a volume claim template (``resources: 3``, ``spec: "x"``, bytes, ``null`` list items,
unknown keys) gives the project's own ``SpecError`` with field paths under the broken template,
never an ``AttributeError``/``TypeError``; a spec that still validates reconciles against an empty
cluster without any exception.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile

TEMPLATE = {
    "metadata": {"labels": {"role": "worker", "app.kubernetes.io/managed-by": "kustomize"}, "annotations": {"a": "b"}},
    "spec": {
        "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
        "containers": [
            {
                "name": "w",
                "image": "img:1",
                "args": ["--x"],
                "ports": [{"containerPort": 8080, "name": "http"}],
                "env": [
                    {"name": "A", "value": "1"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                ],
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"google.com/tpu": 4}},
                "readinessProbe": {"httpGet": {"port": 8080, "path": "/health"}, "periodSeconds": 5},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "securityContext": {"runAsNonRoot": True, "capabilities": {"add": ["NET_ADMIN"]}},
            }
        ],
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            }
        },
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}],
        "subdomain": "x",
        "priorityClassName": "high",
        "terminationGracePeriodSeconds": 30,
    },
}
CLAIM = {
    "metadata": {"name": "data", "labels": {"a": "b"}},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
}
ROOTS = ("leaderTemplate", "workerTemplate", "volumeClaimTemplates")


def base() -> dict[str, Any]:
    leader = copy.deepcopy(TEMPLATE)
    leader["spec"]["containers"][0]["name"] = "leader"
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "gen"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 3,
                "leaderTemplate": leader,
                "workerTemplate": copy.deepcopy(TEMPLATE),
                "volumeClaimTemplates": [copy.deepcopy(CLAIM)],
            },
        },
    }


def locations(node: Any, here: tuple = ()) -> Iterator[tuple]:
    """Every key / index path inside ``node`` (the node itself excluded)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield here + (key,)
        yield from locations(child, here + (key,))


LWT_BASE = base()["spec"]["leaderWorkerTemplate"]
PLACES = [(root,) + loc for root in ROOTS for loc in locations(LWT_BASE[root])] + [(root,) for root in ROOTS[:2]]

wrong = st.one_of(
    st.integers(-3, 2**40),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.just(None),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just([None]),
    st.just({"unknownField": 1}),
)


def mutate(manifest: dict[str, Any], place: tuple, value: Any, add_key: bool) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    node = out["spec"]["leaderWorkerTemplate"]
    for part in place[:-1]:
        node = node[part]
    target = node[place[-1]]
    if add_key and isinstance(target, dict):
        target["bogusField"] = value  # an unknown field at this depth
    else:
        node[place[-1]] = value
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(place=st.sampled_from(PLACES), value=wrong, add_key=st.booleans())
def test_malformed_templates_raise_only_spec_errors_with_paths(place, value, add_key) -> None:
    manifest = mutate(base(), place, value, add_key)
    try:
        lws = LeaderWorkerSet.from_manifest(manifest)
    except SpecError as exc:
        assert exc.errors, exc
        root = f"spec.leaderWorkerTemplate.{place[0]}"
        assert any(e.path.startswith(root) for e in exc.errors), exc.errors
        return
    try:
        result = reconcile(lws, EMPTY)
    except SpecError:
        return
    assert result.manifests


def test_the_base_reconciles() -> None:
    result = reconcile(LeaderWorkerSet.from_manifest(base()), EMPTY)
    assert {m["kind"] for m in result.manifests} >= {"StatefulSet", "Service"}
