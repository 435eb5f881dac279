"""Strict pod templates: the embedded Kubernetes objects of a LeaderWorkerSet are checked as the
Kubernetes 1.35 API server would, through ``LeaderWorkerSet.from_manifest`` (parse + validate).

Each row breaks one thing in a valid manifest and lists every (path, message) the SpecError must
carry, in order. Paths are the LWS wire paths; messages are the API server's.
"""

from __future__ import annotations

import asyncio
import copy
import re
from typing import Any

import pytest

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.objectmeta import DNS1123_LABEL_MSG, LABEL_VALUE_MSG, QUALIFIED_NAME_MSG
from pulumi_lws.core.k8s.podspec import QUANTITY_FORMAT_MSG, QUANTITY_SUFFIX_MSG
from pulumi_lws.lws.api import LeaderWorkerSet

LWT = "spec.leaderWorkerTemplate"
W, L, V = f"{LWT}.workerTemplate", f"{LWT}.leaderTemplate", f"{LWT}.volumeClaimTemplates[0]"
C0 = f"{W}.spec.containers[0]"
DELETE = object()
GOOD: dict[str, Any] = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "demo", "namespace": "team-a", "labels": {"app": "demo"}},
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "size": 3,
            "leaderTemplate": {"spec": {"containers": [{"name": "leader", "image": "img:1"}]}},
            "workerTemplate": {
                "metadata": {"labels": {"role": "worker"}},
                "spec": {
                    "containers": [
                        {
                            "name": "w",
                            "image": "img:1",
                            "ports": [{"containerPort": 8080}],
                            "env": [{"name": "A", "value": "1"}],
                            "resources": {
                                "requests": {"cpu": "500m", "memory": "1Gi"},
                                "limits": {"google.com/tpu": 4},
                            },
                            "livenessProbe": {"httpGet": {"port": 8080, "path": "/"}},
                        }
                    ],
                    "nodeSelector": {"disk": "ssd"},
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
                }
            ],
        },
    },
}


def put(manifest: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set (or with DELETE remove) the value at a wire path (``a.b[0].c``, ``m[key]``)."""
    out = copy.deepcopy(manifest)
    parts = [int(p) if p.isdigit() else p for p in (a or b for a, b in re.findall(r"\[([^\]]+)\]|([^.\[\]]+)", path))]
    node = out
    for part in parts[:-1]:
        node = node[part]
    if value is DELETE:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return out


def unknown(path: str) -> tuple[str, str]:
    return path, f'unknown field "{path}"'


def required(path: str) -> tuple[str, str]:
    return path, "Required value"


QUALIFIED_NAME_PART = (
    f"name part {QUALIFIED_NAME_MSG} (e.g. 'MyName',  or 'my.name',  or '123-abc', "
    "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    f"{LABEL_VALUE_MSG} (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAMESPACE = (
    f"{DNS1123_LABEL_MSG} (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

# (id, path to break, bad value, expected [(path, message)] -- the whole error list, in order)
CASES = [
    ("unknown-container-field", f"{C0}.imagee", "img:2", [unknown(f"{C0}.imagee")]),
    ("unknown-pod-field", f"{W}.spec.nodeSelectr", {"a": "b"}, [unknown(f"{W}.spec.nodeSelectr")]),
    ("unknown-template-field", f"{W}.specc", {}, [unknown(f"{W}.specc")]),
    ("unknown-metadata-field", f"{W}.metadata.labelz", {}, [unknown(f"{W}.metadata.labelz")]),
    ("container-without-name", f"{C0}.name", DELETE, [required(f"{C0}.name")]),
    ("container-without-image", f"{C0}.image", DELETE, [required(f"{C0}.image")]),
    ("container-empty-name", f"{C0}.name", "", [required(f"{C0}.name")]),
    ("empty-containers", f"{W}.spec.containers", [], [required(f"{W}.spec.containers")]),
    ("no-containers", f"{W}.spec.containers", DELETE, [required(f"{W}.spec.containers")]),
    ("template-without-spec", f"{W}.spec", DELETE, [required(f"{W}.spec")]),
    ("cpu-abc", f"{C0}.resources.requests.cpu", "abc", [(f"{C0}.resources.requests[cpu]", QUANTITY_FORMAT_MSG)]),
    (
        "memory-bad-suffix",
        f"{C0}.resources.requests.memory",
        "1iK",
        [(f"{C0}.resources.requests[memory]", QUANTITY_SUFFIX_MSG)],
    ),
    (
        "quantity-boolean",
        f"{C0}.resources.limits[google.com/tpu]",
        True,
        [(f"{C0}.resources.limits[google.com/tpu]", "must be of type string or number")],
    ),
    ("env-value-integer", f"{C0}.env[0].value", 3, [(f"{C0}.env[0].value", "must be of type string")]),
    ("env-without-name", f"{C0}.env[0].name", DELETE, [required(f"{C0}.env[0].name")]),
    ("resources-3", f"{C0}.resources", 3, [(f"{C0}.resources", "must be of type object")]),
    ("spec-x", f"{W}.spec", "x", [(f"{W}.spec", "must be of type object")]),
    ("image-bytes", f"{C0}.image", b"img", [(f"{C0}.image", "must be of type string")]),
    (
        "port-string",
        f"{C0}.ports[0].containerPort",
        "8080",
        [(f"{C0}.ports[0].containerPort", "must be of type integer")],
    ),
    (
        "port-overflow",
        f"{C0}.ports[0].containerPort",
        2**40,
        [(f"{C0}.ports[0].containerPort", "must be between -2147483648 and 2147483647, inclusive (int32)")],
    ),
    (
        "probe-port-boolean",
        f"{C0}.livenessProbe.httpGet.port",
        True,
        [(f"{C0}.livenessProbe.httpGet.port", "must be of type string or integer")],
    ),
    ("tolerations-object", f"{W}.spec.tolerations", {"key": "k"}, [(f"{W}.spec.tolerations", "must be of type array")]),
    (
        "node-selector-value-int",
        f"{W}.spec.nodeSelector.disk",
        1,
        [(f"{W}.spec.nodeSelector[disk]", "must be of type string")],
    ),
    ("null-container", f"{W}.spec.containers", [None], [(f"{W}.spec.containers[0]", "must be of type object")]),
    ("template-label-key", f"{W}.metadata.labels", {"bad key!": "v"}, [(f"{W}.metadata.labels", QUALIFIED_NAME_PART)]),
    ("template-label-value", f"{W}.metadata.labels.role", "-x", [(f"{W}.metadata.labels", LABEL_VALUE)]),
    ("leader-unknown-field", f"{L}.spec.containers[0].imagee", "x", [unknown(f"{L}.spec.containers[0].imagee")]),
    ("leader-empty", L, {}, [required(f"{L}.spec")]),
    (
        "vct-bad-quantity",
        f"{V}.spec.resources.requests.storage",
        "10XB",
        [(f"{V}.spec.resources.requests[storage]", QUANTITY_FORMAT_MSG)],
    ),
    ("vct-unknown-field", f"{V}.spec.storageClass", "fast", [unknown(f"{V}.spec.storageClass")]),
    (
        "vct-api-version",
        f"{V}.apiVersion",
        "v2",
        [(f"{V}.apiVersion", 'Unsupported value: "v2": supported values: "v1"')],
    ),
    (
        "retention-policy-typo",
        f"{LWT}.persistentVolumeClaimRetentionPolicy",
        {"whenDeletd": "Retain"},
        [unknown(f"{LWT}.persistentVolumeClaimRetentionPolicy.whenDeletd")],
    ),
    ("lws-namespace", "metadata.namespace", "Team_A", [("metadata.namespace", NAMESPACE)]),
    ("lws-label-value", "metadata.labels.app", "a b", [("metadata.labels", LABEL_VALUE)]),
    (
        "lws-label-key",
        "metadata.labels",
        {"example.com/": "x"},
        [("metadata.labels", "name part must be non-empty"), ("metadata.labels", QUALIFIED_NAME_PART)],
    ),
    (
        "lws-annotation-key",
        "metadata.annotations",
        {"a/b/c": "x"},
        [
            (
                "metadata.annotations",
                (
                    f"a qualified name {QUALIFIED_NAME_MSG} (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
                ),
            )
        ],
    ),
    ("size-string", f"{LWT}.size", "4", [(f"{LWT}.size", "must be of type integer")]),
    ("replicas-string", "spec.replicas", "2", [("spec.replicas", "must be of type integer")]),
    (
        "max-group-restarts-string",
        f"{LWT}.maxGroupRestarts",
        "3",
        [(f"{LWT}.maxGroupRestarts", "must be of type integer")],
    ),
]


def pairs(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.from_manifest(manifest)
    return [(e.path, e.message) for e in info.value.errors]


def test_the_base_manifest_is_valid() -> None:
    LeaderWorkerSet.from_manifest(copy.deepcopy(GOOD))


@pytest.mark.parametrize("path,value,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_template(path: str, value: Any, expected: list[tuple[str, str]]) -> None:
    assert pairs(put(GOOD, path, value)) == expected


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 20 and len({c[0] for c in CASES}) == len(CASES)


def test_every_problem_is_reported_at_once_with_rule_errors() -> None:
    m = put(GOOD, f"{C0}.imagee", "x")
    m = put(m, f"{W}.spec.containers[0].resources.requests.cpu", "abc")
    m = put(m, f"{L}.spec.containers[0].image", DELETE)
    m = put(m, "spec.replicas", -1)
    assert pairs(m) == [
        required(f"{L}.spec.containers[0].image"),
        unknown(f"{C0}.imagee"),
        (f"{C0}.resources.requests[cpu]", QUANTITY_FORMAT_MSG),
        ("spec.replicas", "replicas must be equal or greater than 0"),
    ]


def test_messages_print_as_the_api_server_does() -> None:
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.from_manifest(put(GOOD, f"{C0}.resources.requests.cpu", "abc"))
    assert f'{C0}.resources.requests[cpu]: Invalid value: "abc": {QUANTITY_FORMAT_MSG}' in str(info.value)
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.from_manifest(put(GOOD, f"{C0}.image", b"img"))
    assert f'{C0}.image: Invalid value: "bytes": must be of type string' in str(info.value)


@pytest.mark.parametrize(
    "path,value",
    [
        (f"{C0}.resources", None),  # null == unset, at any depth
        (f"{W}.metadata", None),
        (f"{C0}.resources.requests.cpu", 2),
        (f"{C0}.resources.requests.cpu", 0.5),
        (f"{C0}.resources.requests.cpu", "1e3"),
        (f"{C0}.resources.requests.cpu", "+.5"),
        (f"{C0}.resources.requests.memory", "1.5Gi"),
        (f"{C0}.livenessProbe.httpGet.port", "http"),
        (f"{C0}.ports[0].containerPort", 8080.0),  # Pulumi delivers numbers as floats
        (f"{W}.metadata.labels", {"example.com/role": "", "app.kubernetes.io/managed-by": "kustomize"}),
        ("metadata.annotations", {"Example.com/Note": "anything goes here"}),
        (f"{LWT}.size", 3.0),
    ],
)
def test_valid_edge_cases_pass(path: str, value: Any) -> None:
    lws = LeaderWorkerSet.from_manifest(put(GOOD, path, value))
    assert lws.size == 3


def test_nulls_are_dropped_from_the_stored_templates() -> None:
    lws = LeaderWorkerSet.from_manifest(put(GOOD, f"{C0}.resources", None))
    assert "resources" not in lws.spec.leader_worker_template.worker_template["spec"]["containers"][0]


def test_a_malformed_template_registers_nothing(mocks) -> None:
    import pulumi_lws
    from pulumi_lws.backend import use_backend
    from pulumi_lws.core.contract.ports import EmptyObserver

    class NoActuator:
        def execute(self, namespace, actions):  # pragma: no cover - must never run
            raise AssertionError("actions executed for an invalid spec")

    with use_backend(EmptyObserver(), NoActuator()), pytest.raises(SpecError) as info:
        pulumi_lws.LeaderWorkerSet("demo", {"manifest": put(GOOD, f"{C0}.imagee", "x")})
    assert [e.path for e in info.value.errors] == [f"{C0}.imagee"]
    asyncio.get_event_loop().run_until_complete(asyncio.sleep(0.01))  # let any queued registration arrive
    assert mocks.registered == []
