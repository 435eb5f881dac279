"""The LWS model: upstream defaults (§5.2), both key spellings, clean type errors, percent scaling."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet, Scheduling

MINIMAL = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "demo"},
    "spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}},
}


def parse_spec(**spec: Any) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse({"metadata": {"name": "demo"}, "spec": spec})


# ---- defaults ----------------------------------------------------------------------------------
def test_defaults_match_upstream() -> None:
    lws = LeaderWorkerSet.parse(MINIMAL)
    s = lws.spec
    assert (lws.replicas, lws.size) == (1, 1)
    assert s.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart"
    assert s.rollout_strategy.type == "RollingUpdate"
    ruc = s.rollout_strategy.rolling_update_configuration
    assert (ruc.max_unavailable, ruc.max_surge, ruc.partition) == (1, 0, 0)
    assert s.network_config.subdomain_policy == "Shared"
    assert s.startup_policy == "LeaderCreated"
    assert s.group_identity == "Ordinal"
    assert s.group_replacement_policy == "PostTermination"
    assert s.pod_termination_policy == "Sequential"
    assert s.scheduling is None
    assert lws.namespace == "default"
    assert lws.validate() is lws


@pytest.mark.parametrize(
    "given_value,expected",
    [
        (None, "RecreateGroupOnPodRestart"),
        ("", "RecreateGroupOnPodRestart"),
        ("Default", "None"),
        ("None", "None"),
        ("RecreateGroupAfterStart", "RecreateGroupAfterStart"),
    ],
)
def test_restart_policy_defaulting(given_value: Any, expected: str) -> None:
    lwt = {"restartPolicy": given_value} if given_value is not None else {}
    assert parse_spec(leaderWorkerTemplate=lwt).spec.leader_worker_template.restart_policy == expected


@pytest.mark.parametrize(
    "rollout",
    [
        None,
        {},
        {"type": ""},
        {"type": "RollingUpdate", "rollingUpdateConfiguration": None},
        {"rollingUpdateConfiguration": {}},
    ],
)
def test_rollout_defaults(rollout: Any) -> None:
    lws = parse_spec(rolloutStrategy=rollout)
    assert lws.spec.rollout_strategy.type == "RollingUpdate"
    assert (lws.max_unavailable(), lws.max_surge(), lws.user_partition()) == (1, 0, 0)


def test_rollout_partial_config_keeps_other_defaults() -> None:
    ruc = parse_spec(
        rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": 2}}
    ).spec.rollout_strategy.rolling_update_configuration
    assert (ruc.max_unavailable, ruc.max_surge, ruc.partition) == (1, 2, 0)


@pytest.mark.parametrize("net", [None, {}, {"subdomainPolicy": None}, {"subdomainPolicy": "Shared"}])
def test_network_config_nil_is_shared(net: Any) -> None:
    assert parse_spec(networkConfig=net).spec.network_config.subdomain_policy == "Shared"


@pytest.mark.parametrize(
    "field,default",
    [
        ("groupIdentity", "Ordinal"),
        ("groupReplacementPolicy", "PostTermination"),
        ("startupPolicy", "LeaderCreated"),
        ("podTerminationPolicy", "Sequential"),
    ],
)
def test_empty_enum_is_default(field: str, default: str) -> None:
    lws = parse_spec(**{field: ""})
    assert lws.spec.to_wire()[field] == default


@pytest.mark.parametrize(
    "sched,level",
    [
        ({}, "replica"),
        ({"replica": {}}, "replica"),
        ({"replica": {"schedulingPolicy": {"gang": {}}}}, "replica"),
        ({"replica": {"leader": {}}}, "role"),
        ({"replica": {"worker": {}, "leader": {}}}, "role"),
        ({"schedulingPolicy": {"gang": {}}}, "lws"),
        ({"disruptionMode": "Pod"}, "lws"),
    ],
)
def test_scheduling_levels(sched: dict[str, Any], level: str) -> None:
    s = parse_spec(scheduling=sched).spec.scheduling
    assert isinstance(s, Scheduling)
    assert s.level() == level
    assert s.levels() == [level]


def test_snake_and_camel_case_are_the_same_model() -> None:
    camel = LeaderWorkerSet.parse(
        {
            "metadata": {"name": "x"},
            "spec": {
                "replicas": 3,
                "leaderWorkerTemplate": {"size": 2, "restartPolicy": "None", "subGroupPolicy": {"subGroupSize": 1}},
                "rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": "50%"}},
                "networkConfig": {"subdomainPolicy": "UniquePerReplica"},
            },
        }
    )
    snake = LeaderWorkerSet(
        metadata={"name": "x"},
        spec={
            "replicas": 3,
            "leader_worker_template": {"size": 2, "restart_policy": "None", "sub_group_policy": {"sub_group_size": 1}},
            "rollout_strategy": {"rolling_update_configuration": {"max_surge": "50%"}},
            "network_config": {"subdomain_policy": "UniquePerReplica"},
        },
    )
    assert camel == snake
    assert camel.to_wire() == snake.to_wire()
    assert snake.to_wire()["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] == {
        "subGroupPolicyType": "LeaderWorker",
        "subGroupSize": 1,
    }


def test_wire_round_trip_and_ignored_status() -> None:
    manifest = {**MINIMAL, "status": {"replicas": 3}, "metadata": {"name": "demo", "uid": "u", "resourceVersion": "7"}}
    lws = LeaderWorkerSet.parse(manifest)
    assert "status" not in lws.to_wire()
    assert LeaderWorkerSet.parse(lws.to_wire()) == lws


def test_from_manifest_yaml_text(tmp_path) -> None:
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: y}\n"
        "spec: {replicas: 4, leaderWorkerTemplate: {workerTemplate: {spec: {containers: [{name: c, image: i}]}}}}\n"
    )
    assert LeaderWorkerSet.from_manifest(text).replicas == 4
    f = tmp_path / "lws.yaml"
    f.write_text(text)
    assert LeaderWorkerSet.from_manifest(f, namespace="ns").namespace == "ns"


# ---- type errors -> FieldErrors --------------------------------------------------------------------
TYPE_CASES = [
    (
        "enum",
        {"spec": {"leaderWorkerTemplate": {"restartPolicy": "Always"}}},
        (
            "spec.leaderWorkerTemplate.restartPolicy",
            'Unsupported value: "Always": supported values: "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"',
            "NotSupported",
        ),
    ),
    (
        "enum-nested",
        {"spec": {"leaderWorkerTemplate": {"subGroupPolicy": {"subGroupPolicyType": "Foo", "subGroupSize": 1}}}},
        (
            "spec.leaderWorkerTemplate.subGroupPolicy.subGroupPolicyType",
            'Unsupported value: "Foo": supported values: "LeaderWorker", "LeaderExcluded"',
            "NotSupported",
        ),
    ),
    (
        "enum-rollout-type",
        {"spec": {"rolloutStrategy": {"type": "Recreate"}}},
        (
            "spec.rolloutStrategy.type",
            'Unsupported value: "Recreate": supported values: "RollingUpdate"',
            "NotSupported",
        ),
    ),
    (
        "unknown-field",
        {"spec": {"leaderWorkerTemplate": {"sizee": 2}}},
        ("spec.leaderWorkerTemplate.sizee", 'unknown field "spec.leaderWorkerTemplate.sizee"', "Unknown"),
    ),
    ("unknown-top-level", {"sepc": {}}, ("sepc", 'unknown field "sepc"', "Unknown")),
    (
        "unknown-scheduling-field",
        {"spec": {"scheduling": {"bogus": 1}}},
        ("spec.scheduling.bogus", 'unknown field "spec.scheduling.bogus"', "Unknown"),
    ),
    ("wrong-int", {"spec": {"replicas": "three"}}, ("spec.replicas", "must be of type integer", "Invalid")),
    (
        "bool-int",
        {"spec": {"leaderWorkerTemplate": {"size": True}}},
        ("spec.leaderWorkerTemplate.size", "must be of type integer", "Invalid"),
    ),
    ("fractional-int", {"spec": {"replicas": 1.5}}, ("spec.replicas", "must be of type integer", "Invalid")),
    (
        "int-or-string",
        {"spec": {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": [1]}}}},
        ("spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge", "must be of type integer or string", "Invalid"),
    ),
    (
        "object",
        {"spec": {"leaderWorkerTemplate": "big"}},
        ("spec.leaderWorkerTemplate", "must be of type object", "Invalid"),
    ),
    (
        "label-value",
        {"metadata": {"name": "demo", "labels": {"team": 7}}},
        ("metadata.labels[team]", "must be of type string", "Invalid"),
    ),
    (
        "snake-input-wire-path",
        {"spec": {"leader_worker_template": {"restart_policy": "X"}}},
        (
            "spec.leaderWorkerTemplate.restartPolicy",
            'Unsupported value: "X": supported values: "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"',
            "NotSupported",
        ),
    ),
]


@pytest.mark.parametrize("patch,expected", [c[1:] for c in TYPE_CASES], ids=[c[0] for c in TYPE_CASES])
def test_type_errors_are_field_errors(patch: dict[str, Any], expected: tuple[str, str, str]) -> None:
    data = {"metadata": {"name": "demo"}, **patch}
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.parse(data)
    assert [(e.path, e.message, e.kind) for e in info.value.errors] == [expected]
    with pytest.raises(SpecError) as ctor:  # the constructor reports the same errors
        LeaderWorkerSet(**data)
    assert ctor.value.errors == info.value.errors


def test_all_type_errors_in_one_spec_error() -> None:
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.parse({"metadata": {"name": "d"}, "spec": {"replicas": "x", "groupIdentity": "Id", "foo": 1}})
    assert [e.path for e in info.value.errors] == ["spec.replicas", "spec.groupIdentity", "spec.foo"]
    assert "LeaderWorkerSet 'd' is invalid (3 problems)" in str(info.value)


def test_field_error_formats_like_kubernetes() -> None:
    assert str(FieldError("spec.replicas", "must be x", -1)) == "spec.replicas: Invalid value: -1: must be x"
    assert str(FieldError("a", "must be y", "v")) == 'a: Invalid value: "v": must be y'
    assert (
        str(FieldError("a", 'Unsupported value: "X": supported values: "A"', "X", "NotSupported"))
        == 'a: Unsupported value: "X": supported values: "A"'
    )
    assert str(FieldError("a", "Required value", kind="Required")) == "a: Required value"
    assert str(FieldError("a", "no", kind="Forbidden")) == "a: Forbidden: no"


# ---- percent scaling ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,replicas,surge,unavailable",
    [
        ("25%", 10, 3, 2),  # 2.5: surge ceil, unavailable floor
        ("50%", 3, 2, 1),  # 1.5
        ("100%", 7, 7, 7),
        ("0%", 7, 0, 0),
        ("1%", 1, 1, 0),
        ("33%", 0, 0, 0),
        (5, 3, 3, 5),  # an int maxSurge is capped at replicas; maxUnavailable is not
        (0, 4, 0, 0),
    ],
)
def test_percent_rounding(value: Any, replicas: int, surge: int, unavailable: int) -> None:
    lws = parse_spec(
        replicas=replicas, rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": value, "maxUnavailable": value}}
    )
    assert (lws.max_surge(), lws.max_unavailable()) == (surge, unavailable)


@settings(max_examples=300, deadline=None)
@given(pct=st.integers(0, 100), replicas=st.integers(0, 1_000_000))
def test_percent_scaling_property(pct: int, replicas: int) -> None:
    lws = parse_spec(
        replicas=replicas,
        rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": f"{pct}%", "maxUnavailable": f"{pct}%"}},
    )
    ms, mu = lws.max_surge(), lws.max_unavailable()
    assert 0 <= mu <= ms <= replicas
    assert mu == (pct * replicas) // 100
    assert ms == min(math.ceil(pct * replicas / 100), replicas)
    assert ms - mu <= 1


def test_scaled_value_rejects_unscalable() -> None:
    for bad in ("abc", "5", "x%", True):
        with pytest.raises(ValueError):
            scaled_value(bad, 10, round_up=True)


@pytest.mark.parametrize(
    "sched,units",
    [
        ({}, [("spec.scheduling.replica", 4, True, True, None)]),
        ({"replica": {"schedulingPolicy": {"gang": {"minCount": 4}}}}, [("spec.scheduling.replica", 4, True, True, 4)]),
        (
            {"replica": {"leader": {}, "worker": {"schedulingPolicy": {"gang": {"minCount": 3}}}}},
            [
                ("spec.scheduling.replica.leader", 1, False, True, None),
                ("spec.scheduling.replica.worker", 3, False, True, 3),
            ],
        ),
        ({"schedulingPolicy": {"gang": {}}}, [("spec.scheduling", 12, True, True, None)]),
        ({"disruptionMode": "Pod"}, [("spec.scheduling", 12, True, False, None)]),  # whole-LWS level defaults to Basic
    ],
)
def test_gang_units(sched: dict[str, Any], units: list[tuple[Any, ...]]) -> None:
    lws = parse_spec(replicas=3, leaderWorkerTemplate={"size": 4}, scheduling=sched)
    got = lws.spec.scheduling.gang_units(lws.replicas, lws.size)
    assert [(u.path, u.members, u.leader_and_workers, u.gang, u.min_count) for u in got] == units
    assert LeaderWorkerSet.parse(lws.to_wire()).spec.scheduling == lws.spec.scheduling  # `{}` survives to_wire


def test_gang_units_lws_level_at_zero_replicas_keeps_min_one() -> None:
    lws = parse_spec(replicas=0, scheduling={"schedulingPolicy": {"gang": {}}})
    assert lws.spec.scheduling.gang_units(0, 1)[0].members == 1
