"""The typed DisaggregatedSet model: embedded CRD defaults, accessors, wire round trip, type errors."""

from __future__ import annotations

import pytest
from ds_base import POD, ds, role

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.disaggregatedset import labels as L
from pulumi_lws.disaggregatedset import names as N
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSetSpec


def test_embedded_crd_defaults() -> None:
    d = DisaggregatedSet.parse(ds(role("a", replicas=None), role("b", replicas=None)))
    r = d.roles[0]
    assert isinstance(r.spec, LeaderWorkerSetSpec)
    assert (r.spec.replicas, r.spec.startup_policy, r.spec.rollout_strategy.type) == (
        1,
        "LeaderCreated",
        "RollingUpdate",
    )
    lwt = r.spec.leader_worker_template
    assert (lwt.size, lwt.restart_policy) == (1, "RecreateGroupOnPodRestart")
    assert r.scaling.mode == "Static" and not r.external
    assert (d.slices, d.placement_type, d.placement_topology, d.spec.placement_policy) == (1, "None", "", None)
    assert r.metadata.labels == {} and r.metadata.annotations == {}


def test_empty_and_omitted_rolling_update_configuration_differ() -> None:
    d = DisaggregatedSet.parse(
        ds(
            role("omitted"),
            role("empty", rolloutStrategy={"rollingUpdateConfiguration": {}}),
            role("given", rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": 2}}),
            role("typeonly", rolloutStrategy={"type": "RollingUpdate"}),
        )
    )
    given = [DisaggregatedSet.rolling_update_config_given(r) for r in d.roles]
    assert given == [False, True, True, False]
    assert [r.rolling_update_config_given for r in d.roles] == given
    empty = d.role("empty").spec.rollout_strategy.rolling_update_configuration
    assert (empty.max_surge, empty.max_unavailable, empty.partition) == (0, 1, 0)  # CRD defaults of the object
    assert d.role("given").spec.rollout_strategy.rolling_update_configuration.max_surge == 2
    assert d.role("given").spec.rollout_strategy.rolling_update_configuration.max_unavailable == 1


def test_given_flag_survives_snake_case_and_null() -> None:
    d = DisaggregatedSet.parse(
        ds(
            role("a", rollout_strategy={"rolling_update_configuration": {}}),
            role("b", rolloutStrategy={"rollingUpdateConfiguration": None}),
        )
    )
    assert [r.rolling_update_config_given for r in d.roles] == [True, False]


def test_accessors_and_placement() -> None:
    d = DisaggregatedSet.parse(
        ds(
            role("p", scaling="External"),
            role("d", 3),
            name="x",
            slices=3,
            placementPolicy={"type": "ExclusiveSlice", "topology": "zone"},
        )
    )
    assert (d.name, d.namespace, d.role_names, d.slices) == ("x", "default", ["p", "d"], 3)
    assert d.role("p").external and d.role("d").replicas == 3
    assert (d.placement_type, d.placement_topology) == ("ExclusiveSlice", "zone")
    with pytest.raises(KeyError):
        d.role("nope")
    assert DisaggregatedSet.parse(ds(placementPolicy={})).placement_type == "None"


def test_role_spec_as_lws_is_a_copy_with_the_role_name_and_ds_namespace() -> None:
    m = ds(role("prefill", 2, startupPolicy="LeaderReady"), role("decode"))
    m["metadata"]["namespace"] = "ns"
    m["spec"]["roles"][0]["metadata"] = {"labels": {"a": "b"}, "annotations": {"k": "v"}, "namespace": "other"}
    d = DisaggregatedSet.parse(m)
    lws = d.role_spec_as_lws("prefill")
    assert isinstance(lws, LeaderWorkerSet)
    assert (lws.name, lws.namespace, lws.replicas, lws.spec.startup_policy) == ("prefill", "ns", 2, "LeaderReady")
    assert (lws.metadata.labels, lws.metadata.annotations) == ({"a": "b"}, {"k": "v"})
    lws.spec.replicas = 9
    lws.metadata.labels["x"] = "y"
    assert d.role("prefill").spec.replicas == 2 and "x" not in d.role("prefill").metadata.labels
    assert d.role_spec_as_lws(d.roles[1], name="ds-0-abcdefgh-decode").name == "ds-0-abcdefgh-decode"
    assert lws.validation_errors() == []


def test_wire_round_trip_and_status_ignored() -> None:
    m = ds(slices=2)
    m["status"] = {"roleStatuses": [{"name": "prefill"}]}
    d = DisaggregatedSet.parse(m)
    wire = d.to_wire()
    assert "status" not in wire and wire["spec"]["slices"] == 2
    assert wire["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["workerTemplate"] == POD
    assert DisaggregatedSet.parse(wire).to_wire() == wire


def test_from_manifest_yaml_text_and_namespace() -> None:
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: disaggregatedset.x-k8s.io/v1
kind: DisaggregatedSet
metadata: {name: y}
spec:
  roles:
  - {name: a, spec: {leaderWorkerTemplate: {workerTemplate: {spec: {containers: [{name: c, image: i}]}}}}}
  - {name: b, spec: {leaderWorkerTemplate: {workerTemplate: {spec: {containers: [{name: c, image: i}]}}}}}
"""
    d = DisaggregatedSet.from_manifest(text, namespace="team")
    assert (d.name, d.namespace, d.role_names) == ("y", "team", ["a", "b"])


@pytest.mark.parametrize(
    ("patch", "path", "message"),
    [
        (
            {"spec": {"roles": [role("a"), role("b"), {**role("c"), "bogus": 1}]}},
            "spec.roles[2].bogus",
            'unknown field "spec.roles[2].bogus"',
        ),
        (
            {"spec": {"roles": [role("a", foo=1), role("b")]}},
            "spec.roles[0].spec.foo",
            'unknown field "spec.roles[0].spec.foo"',
        ),
        (
            {"spec": {"roles": [role("a"), role("b")], "placementPolicy": {"type": "None", "zone": "x"}}},
            "spec.placementPolicy.zone",
            'unknown field "spec.placementPolicy.zone"',
        ),
        ({"spec": {"roles": [role("a"), role("b")], "extra": True}}, "spec.extra", 'unknown field "spec.extra"'),
        (
            {"spec": {"roles": [{**role("a"), "scaling": {"mode": "Auto"}}, role("b")]}},
            "spec.roles[0].scaling.mode",
            'Unsupported value: "Auto": supported values: "Static", "External"',
        ),
        (
            {"spec": {"roles": [role("a"), role("b")], "placementPolicy": {"type": "Packed"}}},
            "spec.placementPolicy.type",
            'Unsupported value: "Packed": supported values: "None", "ExclusiveSlice", "ExclusiveTopology"',
        ),
        (
            {"spec": {"roles": [role("a", rolloutStrategy={"type": "Recreate"}), role("b")]}},
            "spec.roles[0].spec.rolloutStrategy.type",
            'Unsupported value: "Recreate": supported values: "RollingUpdate"',
        ),
        ({"spec": {"roles": [role("a"), role("b")], "slices": "2"}}, "spec.slices", "must be of type integer"),
        ({"spec": {"roles": [role("a", "1"), role("b")]}}, "spec.roles[0].spec.replicas", "must be of type integer"),
        ({"spec": {"roles": [{"spec": role("a")["spec"]}, role("b")]}}, "spec.roles[0].name", "Required value"),
        ({"spec": {"slices": 1}}, "spec.roles", "Required value"),
    ],
)
def test_type_errors_name_the_wire_path(patch: dict, path: str, message: str) -> None:
    m = ds()
    m["spec"] = patch["spec"]
    with pytest.raises(SpecError) as exc:
        DisaggregatedSet.parse(m)
    assert (path, message) in [(e.path, e.message) for e in exc.value.errors]


def test_spec_is_required() -> None:
    with pytest.raises(SpecError) as exc:
        DisaggregatedSet.parse(
            {"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSet", "metadata": {"name": "x"}}
        )
    assert [(e.path, e.message) for e in exc.value.errors] == [("spec", "Required value")]


def test_names_and_labels() -> None:
    assert N.child_lws("ds", 0, "abcd1234", "prefill") == "ds-0-abcd1234-prefill"
    assert N.legacy_child_lws("ds", "abcd1234", "prefill") == "ds-abcd1234-prefill"
    assert N.service("ds-0-abcd1234-prefill") == "ds-0-abcd1234-prefill-prv"
    assert N.scaler("ds", "prefill") == "ds-prefill"
    assert N.app_label("ds", 3, "decode") == "ds-3-decode"
    assert (
        N.combined_name_limit(1),
        N.combined_name_limit(10),
        N.combined_name_limit(11),
        N.combined_name_limit(100),
    ) == (47, 47, 46, 46)
    assert N.service_name_length("ds", "prefill", 1) == len(N.service(N.child_lws("ds", 0, "abcd1234", "prefill")))
    assert (L.NAME, L.ROLE, L.SLICE, L.REVISION, L.INITIAL_REPLICAS) == (
        "disaggregatedset.x-k8s.io/name",
        "disaggregatedset.x-k8s.io/role",
        "disaggregatedset.x-k8s.io/slice",
        "disaggregatedset.x-k8s.io/revision",
        "disaggregatedset.x-k8s.io/initial-replicas",
    )
    assert L.ENV_NAME == "DISAGGREGATEDSET_NAME" and L.APP == "app"
