"""Bad input end to end: every LeaderWorkerSet validation rule through the Pulumi component and the CLI.

`tests/test_api_validation.py` proves each rule at the function level. Here each rule's bad
manifest goes through `pulumi_lws.LeaderWorkerSet(name, {"manifest": bad})` under the mock engine:
it must raise `SpecError` naming the field path and message, and the mock engine must have seen
NO resource registration at all (not even the component) -- nothing is half-applied. The same
manifest through `pulumi-lws render FILE` exits 2 with the path and message on stderr and prints
nothing on stdout. Update-only rules (U1-U10) need the previous object, which neither the component
(no stored old spec) nor `render` has, so they are out of scope here.
"""

from __future__ import annotations

import asyncio
import copy

import pulumi
import pytest
import yaml

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.rules import DNS1035_MSG, PERCENT_MSG
from pulumi_lws.lws.api import validation as V

LWT, SGS = "spec.leaderWorkerTemplate", "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
MU, MS = f"{RUC}.maxUnavailable", f"{RUC}.maxSurge"
SUB_EXCL = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
EXCL = "leaderworkerset.sigs.k8s.io/exclusive-topology"
GOOD = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "size": 3,
            "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "img:1"}]}},
        },
    },
}


def bad(patch: dict) -> dict:
    def merge(a, b):
        out = copy.deepcopy(a)
        for k, v in b.items():
            if v == "DELETE":
                out.pop(k, None)
                continue
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
        return out

    return merge(GOOD, patch)


def lwt(**kw):
    return {"spec": {"leaderWorkerTemplate": kw}}


def ruc(**kw):
    return {"spec": {"rolloutStrategy": {"rollingUpdateConfiguration": kw}}}


# (rule function, bad patch, expected path, expected message) -- one row per create rule (docs/api.md)
CASES = [
    (V.name_is_dns1035_label, {"metadata": {"name": "Bad_Name"}}, "metadata.name", DNS1035_MSG),
    (V.worker_template_required, lwt(workerTemplate="DELETE"), f"{LWT}.workerTemplate", "Required value"),
    (V.replicas_not_negative, {"spec": {"replicas": -1}}, "spec.replicas", "replicas must be equal or greater than 0"),
    (
        V.replicas_at_most_max,
        {"spec": {"replicas": 1_000_001}},
        "spec.replicas",
        "replicas must be equal or less than 1000000",
    ),
    (V.size_at_least_one, lwt(size=0), f"{LWT}.size", "size must be equal or greater than 1"),
    (
        V.replicas_times_size_fits_int32,
        {"spec": {"replicas": 1_000_000, "leaderWorkerTemplate": {"size": 3000}}},
        "spec.replicas",
        "the product of replicas and worker replicas must not exceed 2147483647",
    ),
    (V.max_unavailable_is_int_or_percent, ruc(maxUnavailable="-5%"), MU, PERCENT_MSG),
    (V.max_surge_is_int_or_percent, ruc(maxSurge="150%"), MS, "must not be greater than 100%"),
    (V.partition_not_negative, ruc(partition=-1), f"{RUC}.partition", "must be greater than or equal to 0"),
    (V.budgets_not_both_zero, ruc(maxUnavailable=0, maxSurge=0), MU, "must not be 0 when `maxSurge` is 0"),
    (
        V.subgroup_size_valid,
        lwt(size=5, subGroupPolicy={"subGroupSize": 3}),
        SGS,
        "size or size - 1 must be divisible by subGroupSize",
    ),
    (
        V.subgroup_exclusive_topology_needs_policy,
        {"metadata": {"annotations": {SUB_EXCL: "rack"}}},
        f"metadata.annotations[{SUB_EXCL}]",
        "cannot have subgroup-exclusive-topology without subGroupSize set",
    ),
    (
        V.hash_rejects_partition,
        {"spec": {"groupIdentity": "Hash", **ruc(partition=1)["spec"]}},
        "spec.groupIdentity",
        "rollingUpdateConfiguration.partition is not supported with groupIdentity Hash",
    ),
    (
        V.hash_rejects_volume_claim_templates,
        {
            "spec": {
                "groupIdentity": "Hash",
                "leaderWorkerTemplate": {"volumeClaimTemplates": [{"metadata": {"name": "d"}}]},
            }
        },
        "spec.groupIdentity",
        "volumeClaimTemplates are not supported with groupIdentity Hash",
    ),
    (
        V.immediate_replacement_requires_hash,
        {"spec": {"groupReplacementPolicy": "Immediate"}},
        "spec.groupReplacementPolicy",
        "groupReplacementPolicy Immediate is only supported with groupIdentity Hash",
    ),
    (
        V.max_group_restarts_valid,
        lwt(maxGroupRestarts=-1),
        f"{LWT}.maxGroupRestarts",
        "must be greater than or equal to 0",
    ),
    (
        V.restart_backoff_valid,
        lwt(restartBackoff={"baseSeconds": 20, "capSeconds": 10}),
        f"{LWT}.restartBackoff.capSeconds",
        "must be greater than or equal to baseSeconds (20)",
    ),
    (
        V.name_fits_length_budget,
        {"metadata": {"name": "a" * 51}},
        "metadata.name",
        "name is 51 characters but at most 50",
    ),
    (
        V.scheduling_one_level,
        {"spec": {"scheduling": {"schedulingPolicy": {"gang": {}}, "replica": {}}}},
        "spec.scheduling",
        "phase 1 requires exactly one active scheduling level, got [lws replica]",
    ),
    (
        V.scheduling_rejects_leader_ready,
        {"spec": {"scheduling": {}, "startupPolicy": "LeaderReady"}},
        "spec.scheduling",
        "a gang containing the leader and workers is incompatible with startupPolicy LeaderReady",
    ),
    (
        V.scheduling_rejects_exclusive_topology,
        {"metadata": {"annotations": {EXCL: "rack"}}, "spec": {"scheduling": {}}},
        "spec.scheduling",
        "gang scheduling or workload topology constraints cannot be combined with exclusive topology in alpha",
    ),
    (
        V.scheduling_min_count_is_membership,
        {"spec": {"scheduling": {"replica": {"schedulingPolicy": {"gang": {"minCount": 2}}}}}},
        "spec.scheduling.replica.schedulingPolicy.gang.minCount",
        "must equal complete leaf membership 3",
    ),
    (
        V.scheduling_min_group_count_unavailable,
        {"spec": {"scheduling": {"replica": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}}}},
        "spec.scheduling.replica.schedulingPolicy.gang.minGroupCount",
        "minGroupCount requires CompositePodGroup support and is not available in phase 1",
    ),
    (
        V.scheduling_role_needs_size_two,
        {"spec": {"scheduling": {"replica": {"leader": {}}}, "leaderWorkerTemplate": {"size": 1}}},
        f"{LWT}.size",
        "leader/worker scheduling requires size >= 2",
    ),
    (
        V.scheduling_no_user_scheduling_group,
        {
            "spec": {
                "scheduling": {},
                "leaderWorkerTemplate": {
                    "workerTemplate": {"spec": {"schedulingGroup": {"podGroupName": "x"}, "containers": []}}
                },
            }
        },
        "spec.scheduling",
        "managed pod templates must not set spec.schedulingGroup",
    ),
    (
        V.scheduling_same_priority_class,
        {
            "spec": {
                "scheduling": {},
                "leaderWorkerTemplate": {"leaderTemplate": {"spec": {"priorityClassName": "high", "containers": []}}},
            }
        },
        "spec.scheduling",
        "all managed pod templates must use the same priorityClassName",
    ),
    (
        V.scheduling_resource_claims_referenced,
        {"spec": {"scheduling": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}},
        "spec.scheduling.resourceClaims[0]",
        "must have a matching reference in every member pod template",
    ),
    (
        V.update_order_annotation_valid,
        {"metadata": {"annotations": {"pulumi-lws.io/update-order": "Fastest"}}},
        "metadata.annotations[pulumi-lws.io/update-order]",
        'Unsupported value: "Fastest": supported values: "ScaleFirst", "RolloutFirst"',
    ),
    (
        V.per_pod_values_valid,
        {"metadata": {"annotations": {"pulumi-lws.io/per-pod-values": "webhook"}}},
        "metadata.annotations[pulumi-lws.io/per-pod-values]",
        'Unsupported value: "webhook": supported values: "template", "admission-policy"',
    ),
    # type errors (parse): enum, unknown field, wrong type
    ("type-enum", {"spec": {"groupIdentity": "Sticky"}}, "spec.groupIdentity", 'Unsupported value: "Sticky"'),
    ("type-unknown-field", lwt(sizee=3), f"{LWT}.sizee", 'unknown field "spec.leaderWorkerTemplate.sizee"'),
    ("type-wrong-type", {"spec": {"replicas": "many"}}, "spec.replicas", "must be of type integer"),
]
IDS = [c[0] if isinstance(c[0], str) else c[0].__name__ for c in CASES]


def test_every_create_rule_has_a_row() -> None:
    assert {c[0] for c in CASES if not isinstance(c[0], str)} == set(V.CREATE_RULES)


@pytest.mark.parametrize("rule,patch,path,message", CASES, ids=IDS)
def test_component_rejects_before_registering_anything(mocks, rule, patch, path, message) -> None:
    import pulumi_lws
    from pulumi_lws.backend import use_backend
    from pulumi_lws.core.contract.ports import EmptyObserver

    class NoActuator:
        def execute(self, namespace, actions):  # pragma: no cover - must never run
            raise AssertionError("actions executed for an invalid spec")

    with use_backend(EmptyObserver(), NoActuator()), pytest.raises(SpecError) as info:
        pulumi_lws.LeaderWorkerSet("demo", {"manifest": bad(patch)})
    assert any(e.path == path and message in e.message for e in info.value.errors), info.value.errors
    assert path in str(info.value) and message in str(info.value)
    loop = asyncio.get_event_loop()
    loop.run_until_complete(asyncio.sleep(0.01))  # let any queued registration reach the mock engine
    assert mocks.registered == []


@pytest.mark.parametrize("rule,patch,path,message", CASES, ids=IDS)
def test_render_cli_exits_2_with_path_and_message(capsys, tmp_path, rule, patch, path, message) -> None:
    from pulumi_lws.cli import main

    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(bad(patch)))
    assert main(["render", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and path in err and message in err


@pulumi.runtime.test
def test_the_good_manifest_registers(mocks):
    """Control: the base of every case is valid and does register the component and its children."""
    import pulumi_lws
    from pulumi_lws.backend import use_backend
    from pulumi_lws.core.contract.ports import EmptyObserver

    class NoActuator:
        def execute(self, namespace, actions):
            return []

    with use_backend(EmptyObserver(), NoActuator()):
        lws = pulumi_lws.LeaderWorkerSet("demo", {"manifest": copy.deepcopy(GOOD)})

    def check(_):
        types = {a.typ for a in mocks.registered}
        assert "lws:index:LeaderWorkerSet" in types and "kubernetes:apps/v1:StatefulSet" in types

    return pulumi.Output.all(lws.urn, *[c.urn for c in lws.child_resources]).apply(check)
