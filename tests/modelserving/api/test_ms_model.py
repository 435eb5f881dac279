"""The typed ModelServing model: every CRD default, accessors, wire round trip, type errors with paths."""

from __future__ import annotations

import pytest
from ms_base import BASE, POD, merge, ms, role, spec

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.modelserving.api import API_VERSION, KIND, ModelServing

MINIMAL = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "metadata": {"name": "m"},
    "spec": {"template": {"roles": [{"name": "a", "entryTemplate": POD, "workerReplicas": 0}]}},
}


def test_every_crd_default() -> None:
    m = ModelServing.parse(
        merge(
            MINIMAL,
            {
                "spec": {
                    "plugins": [{"name": "lws-standard-labels"}],
                    "template": {
                        "gangPolicy": {},
                        "networkTopology": {"groupPolicy": {}, "rolePolicy": {"highestTierAllowed": 2}},
                        "roles": [{"name": "a", "entryTemplate": POD, "workerReplicas": 0}],
                    },
                    "rolloutStrategy": {"rollingUpdateConfiguration": {}},
                }
            },
        )
    )
    s = m.spec
    assert (s.replicas, s.scheduler_name, s.recovery_policy) == (1, "volcano", "RoleRecreate")
    assert s.plugins[0].type == "BuiltIn" and s.plugins[0].config is None and s.plugins[0].scope is None
    assert s.template.restart_grace_period_seconds == 0
    assert s.template.gang_policy.min_role_replicas is None
    assert s.template.network_topology.group_policy.mode == "hard"
    assert s.template.network_topology.role_policy.mode == "hard"
    assert s.template.network_topology.role_policy.highest_tier_allowed == 2
    r = s.template.roles[0]
    assert (r.replicas, r.max_unavailable, r.max_surge, r.partition, r.worker_template) == (1, 1, None, None, None)
    assert s.rollout_strategy.type == "ServingGroupRollingUpdate"
    cfg = s.rollout_strategy.rolling_update_configuration
    assert (cfg.max_unavailable, cfg.max_surge, cfg.partition) == (1, None, None)


def test_absent_objects_stay_absent() -> None:
    m = ModelServing.parse(MINIMAL)
    assert m.spec.rollout_strategy is None and m.spec.plugins is None
    assert m.spec.template.gang_policy is None and m.spec.template.network_topology is None
    assert m.strategy == "ServingGroupRollingUpdate"
    assert (m.max_unavailable(), m.max_surge(), m.partition()) == (1, 0, 0)


def test_null_means_unset() -> None:
    m = ModelServing.parse(merge(MINIMAL, {"spec": {"replicas": None, "schedulerName": None, "recoveryPolicy": None}}))
    assert (m.replicas, m.spec.scheduler_name, m.spec.recovery_policy) == (1, "volcano", "RoleRecreate")


@pytest.mark.parametrize(
    ("ruc", "replicas", "expected"),
    [
        ({"maxUnavailable": "50%", "maxSurge": "50%", "partition": "50%"}, 3, (1, 2, 2)),  # floor, ceil, ceil
        ({"maxUnavailable": "10%", "maxSurge": "10%", "partition": "10%"}, 4, (0, 1, 1)),
        ({"maxUnavailable": 0, "maxSurge": 2, "partition": 1}, 4, (0, 2, 1)),
    ],
)
def test_servinggroup_budgets_scale_against_spec_replicas(ruc, replicas, expected) -> None:
    m = ms(spec(replicas=replicas, rolloutStrategy={"rollingUpdateConfiguration": ruc}))
    assert (m.max_unavailable(), m.max_surge(), m.partition()) == expected


def test_role_budgets_scale_against_role_replicas() -> None:
    r = role("decode", replicas=3, maxUnavailable="50%", maxSurge="50%", partition="50%")
    m = ms({"spec": {"replicas": 10, "rolloutStrategy": {"type": "RoleRollingUpdate"}, "template": {"roles": [r]}}})
    assert m.strategy == "RoleRollingUpdate"
    assert (m.role_max_unavailable("decode"), m.role_max_surge("decode"), m.role_partition(m.role("decode"))) == (
        1,
        2,
        2,
    )
    with pytest.raises(KeyError):
        m.role("nope")


def test_accessors_and_wire_round_trip() -> None:
    m = ms()
    assert (m.name, m.namespace, m.replicas, [r.name for r in m.roles]) == ("demo", "ns", 2, ["prefill", "decode"])
    wire = m.to_wire()
    assert wire["spec"]["template"]["roles"][0]["workerReplicas"] == 1
    assert wire["spec"]["template"]["roles"][0]["maxUnavailable"] == 1
    assert "rolloutStrategy" not in wire["spec"] and "maxSurge" not in wire["spec"]["template"]["roles"][0]
    assert ModelServing.parse(wire).to_wire() == wire
    assert ModelServing.parse({**BASE, "metadata": {"name": "x"}}).namespace == "default"


def test_snake_case_construction_and_server_fields_ignored() -> None:
    m = ModelServing(
        metadata={"name": "x", "uid": "123", "resourceVersion": "9"},
        spec={"template": {"roles": [{"name": "a", "entry_template": POD, "worker_replicas": 0}]}},
        status={"replicas": 3},
    )
    assert m.roles[0].entry_template == POD and m.metadata.name == "x"


def test_from_manifest_text_path_and_namespace(tmp_path) -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        + "apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelServing\nmetadata: {name: y}\n"
        + "spec:\n  template:\n    roles:\n    - {name: a, entryTemplate: {spec: {containers: [{name: c, image: i}]}}, workerReplicas: 0}\n"
    )
    assert ModelServing.from_manifest(text, namespace="team").namespace == "team"
    p = tmp_path / "ms.yaml"
    p.write_text(text)
    assert ModelServing.from_manifest(p).name == "y"
    assert ModelServing.from_manifest(str(p)).name == "y"


@pytest.mark.parametrize(
    ("patch", "path", "message"),
    [
        (
            {"spec": {"template": {"roles": [{"name": "a", "entryTemplate": POD, "workerReplicas": 0, "bogus": 1}]}}},
            "spec.template.roles[0].bogus",
            'unknown field "spec.template.roles[0].bogus"',
        ),
        ({"spec": {"replicaz": 1}}, "spec.replicaz", 'unknown field "spec.replicaz"'),
        (
            {"spec": {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailabel": 1}}}},
            "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailabel",
            'unknown field "spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailabel"',
        ),
        (
            {"spec": {"template": {"networkTopology": {"groupPolicy": {"tier": 1}}}}},
            "spec.template.networkTopology.groupPolicy.tier",
            'unknown field "spec.template.networkTopology.groupPolicy.tier"',
        ),
        (
            {"spec": {"template": {"roles": [{"name": "a", "entryTemplate": POD}]}}},
            "spec.template.roles[0].workerReplicas",
            "Required value",
        ),
        (
            {"spec": {"template": {"roles": [{"name": "a", "workerReplicas": 0}]}}},
            "spec.template.roles[0].entryTemplate",
            "Required value",
        ),
        (
            {"spec": {"template": {"roles": [{"entryTemplate": POD, "workerReplicas": 0}]}}},
            "spec.template.roles[0].name",
            "Required value",
        ),
        ({"spec": {"template": "DELETE"}}, "spec.template", "Required value"),
        ({"spec": {"template": {"roles": "DELETE"}}}, "spec.template.roles", "Required value"),
        ({"spec": {"plugins": [{"type": "BuiltIn"}]}}, "spec.plugins[0].name", "Required value"),
        (
            {"spec": {"plugins": [{"name": "p", "type": "Wasm"}]}},
            "spec.plugins[0].type",
            'Unsupported value: "Wasm": supported values: "BuiltIn"',
        ),
        (
            {"spec": {"recoveryPolicy": "Recreate"}},
            "spec.recoveryPolicy",
            'Unsupported value: "Recreate": supported values: "ServingGroupRecreate", "RoleRecreate", "None"',
        ),
        (
            {"spec": {"rolloutStrategy": {"type": "RollingUpdate"}}},
            "spec.rolloutStrategy.type",
            'Unsupported value: "RollingUpdate": supported values: "ServingGroupRollingUpdate", "RoleRollingUpdate"',
        ),
        (
            {"spec": {"template": {"networkTopology": {"rolePolicy": {"mode": "strict"}}}}},
            "spec.template.networkTopology.rolePolicy.mode",
            'Unsupported value: "strict": supported values: "hard", "soft"',
        ),
        ({"spec": {"replicas": "two"}}, "spec.replicas", "must be of type integer"),
        (
            {"spec": {"rollout_strategy": {"rolling_update_configuration": {"max_surge": [1]}}}},
            "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge",
            "must be of type integer or string",
        ),
        ({"spec": {"replicas": True}}, "spec.replicas", "must be of type integer"),
        (
            {"spec": {"template": {"gangPolicy": {"minRoleReplicas": {"prefill": "x"}}}}},
            "spec.template.gangPolicy.minRoleReplicas[prefill]",
            "must be of type integer",
        ),
        (
            {"spec": {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": [1]}}}},
            "spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge",
            "must be of type integer or string",
        ),
    ],
)
def test_type_errors_name_the_wire_path(patch, path, message) -> None:
    with pytest.raises(SpecError) as exc:
        ModelServing.parse(merge(BASE, patch))
    assert (path, message) in [(e.path, e.message) for e in exc.value.errors]


def test_unknown_metadata_fields_are_ignored_but_spec_requires_object() -> None:
    with pytest.raises(SpecError) as exc:
        ModelServing.parse([1])
    assert exc.value.errors[0].path == "<root>"
    with pytest.raises(SpecError) as exc:
        ModelServing.parse({"metadata": {"name": "x"}})
    assert [(e.path, e.message) for e in exc.value.errors] == [("spec", "Required value")]
