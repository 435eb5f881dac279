"""Every validation rule: exact path + message (upstream table 5.1/5.5, pulumi-lws extensions).

Each case patches a valid base manifest and asserts the *complete* error list, so a rule that
fires too often (or a neighbour that fires with it) fails the test too.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import REPO_ROOT

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.k8s.rules import DNS1035_MSG, PERCENT_MSG
from pulumi_lws.lws.api import validation as V
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.api.validation import validate_leaderworkerset

ROOT = REPO_ROOT
LWT = "spec.leaderWorkerTemplate"
SGS = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
MU, MS = f"{RUC}.maxUnavailable", f"{RUC}.maxSurge"
EXCL = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUB_EXCL = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
WORKER = {"spec": {"containers": [{"name": "w", "image": "img:1"}]}}
#: a valid container list for rows that only care about another field
C = [{"name": "c", "image": "img:1"}]

BASE: dict[str, Any] = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3, "workerTemplate": WORKER}},
}


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``patch`` into a copy of ``base``; a value ``DELETE`` removes the key."""
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if v == "DELETE":
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def lws(patch: dict[str, Any] | None = None) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse(merge(BASE, patch or {}))


def spec(**kw: Any) -> dict[str, Any]:
    return {"spec": kw}


def lwt(**kw: Any) -> dict[str, Any]:
    return {"spec": {"leaderWorkerTemplate": kw}}


def ruc(**kw: Any) -> dict[str, Any]:
    return {"spec": {"rolloutStrategy": {"rollingUpdateConfiguration": kw}}}


def pairs(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.path, e.message) for e in errors]


def test_base_manifest_is_valid() -> None:
    assert validate_leaderworkerset(lws()) == []
    assert validate_leaderworkerset(lws(), lws()) == []


ORD_WORKER_BUDGET = "worker pods get the label controller-revision-hash"

CREATE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    # ---- table 5.1 --------------------------------------------------------------------------
    ("1-dns1035", {"metadata": {"name": "Demo_1"}}, [("metadata.name", DNS1035_MSG)]),
    ("1-dns1035-trailing-dash", {"metadata": {"name": "demo-"}}, [("metadata.name", DNS1035_MSG)]),
    ("1-required", {"metadata": {"name": "DELETE"}}, [("metadata.name", "Required value")]),
    ("2-replicas-negative", spec(replicas=-1), [("spec.replicas", "replicas must be equal or greater than 0")]),
    ("3-replicas-max", spec(replicas=1_000_001), [("spec.replicas", "replicas must be equal or less than 1000000")]),
    ("3-replicas-at-max-ok", spec(replicas=1_000_000), []),
    ("4-size", lwt(size=0), [(f"{LWT}.size", "size must be equal or greater than 1")]),
    (
        "5-product",
        {"spec": {"replicas": 1_000_000, "leaderWorkerTemplate": {"size": 3000}}},
        [("spec.replicas", "the product of replicas and worker replicas must not exceed 2147483647")],
    ),
    ("6-percent-mu", ruc(maxUnavailable="-5%"), [(MU, PERCENT_MSG)]),
    ("6+9-percent-and-scale-mu", ruc(maxUnavailable="abc"), [(MU, PERCENT_MSG), (MU, "invalid value")]),
    ("6+9-numeric-string-ms", ruc(maxSurge="5"), [(MS, PERCENT_MSG), (MS, "invalid value")]),
    ("7-negative-mu", ruc(maxUnavailable=-1), [(MU, "must be greater than or equal to 0")]),
    ("7-negative-ms", ruc(maxSurge=-1), [(MS, "must be greater than or equal to 0")]),
    ("8-over-100-mu", ruc(maxUnavailable="101%"), [(MU, "must not be greater than 100%")]),
    ("8-over-100-ms", ruc(maxSurge="150%"), [(MS, "must not be greater than 100%")]),
    ("8-100-ok", ruc(maxUnavailable="100%", maxSurge="100%"), []),
    ("10-partition", ruc(partition=-1), [(f"{RUC}.partition", "must be greater than or equal to 0")]),
    ("11-both-zero", ruc(maxUnavailable=0, maxSurge=0), [(MU, "must not be 0 when `maxSurge` is 0")]),
    ("11-both-zero-after-scaling", ruc(maxUnavailable="10%", maxSurge=0), [(MU, "must not be 0 when `maxSurge` is 0")]),
    ("11-surge-rounds-up-ok", ruc(maxUnavailable=0, maxSurge="1%"), []),
    ("11-skipped-at-zero-replicas", {"spec": {"replicas": 0, **ruc(maxUnavailable=0, maxSurge=0)["spec"]}}, []),
    ("12-sgs-zero", lwt(subGroupPolicy={"subGroupSize": 0}), [(SGS, "subGroupSize must be equal or greater than 1")]),
    ("12-sgs-required", lwt(subGroupPolicy={}), [(SGS, "Required value")]),
    (
        "13-divisible",
        {"spec": {"leaderWorkerTemplate": {"size": 5, "subGroupPolicy": {"subGroupSize": 3}}}},
        [(SGS, "size or size - 1 must be divisible by subGroupSize")],
    ),
    ("13-size-1-divisible-ok", lwt(size=4, subGroupPolicy={"subGroupSize": 3}), []),
    ("14-larger", lwt(size=1, subGroupPolicy={"subGroupSize": 2}), [(SGS, "subGroupSize cannot be larger than size")]),
    (
        "13+14-larger",
        lwt(size=3, subGroupPolicy={"subGroupSize": 4}),
        [(SGS, "size or size - 1 must be divisible by subGroupSize"), (SGS, "subGroupSize cannot be larger than size")],
    ),
    (
        "15-leader-excluded",
        lwt(size=4, subGroupPolicy={"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}),
        [(SGS, "size-1 must be divisible by subGroupSize when using LeaderExcluded")],
    ),
    (
        "15-leader-excluded-ok",
        lwt(size=5, subGroupPolicy={"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}),
        [],
    ),
    (
        "16-subgroup-exclusive",
        {"metadata": {"annotations": {SUB_EXCL: "rack"}}},
        [(f"metadata.annotations[{SUB_EXCL}]", "cannot have subgroup-exclusive-topology without subGroupSize set")],
    ),
    (
        "16-ok-with-policy",
        {"metadata": {"annotations": {SUB_EXCL: "rack"}}, **lwt(subGroupPolicy={"subGroupSize": 3})},
        [],
    ),
    # ---- §5.5 Hash mode / replacement ---------------------------------------------------------
    (
        "hash-partition",
        {"spec": {"groupIdentity": "Hash", **ruc(partition=1)["spec"]}},
        [("spec.groupIdentity", "rollingUpdateConfiguration.partition is not supported with groupIdentity Hash")],
    ),
    (
        "hash-vct",
        {
            "spec": {
                "groupIdentity": "Hash",
                "leaderWorkerTemplate": {"volumeClaimTemplates": [{"metadata": {"name": "d"}}]},
            }
        },
        [("spec.groupIdentity", "volumeClaimTemplates are not supported with groupIdentity Hash")],
    ),
    (
        "hash-subgroup-ok",
        {"spec": {"groupIdentity": "Hash", "leaderWorkerTemplate": {"subGroupPolicy": {"subGroupSize": 3}}}},
        [],
    ),
    (
        "hash-unique-per-replica-ok",
        spec(groupIdentity="Hash", networkConfig={"subdomainPolicy": "UniquePerReplica"}),
        [],
    ),
    (
        "immediate-needs-hash",
        spec(groupReplacementPolicy="Immediate"),
        [("spec.groupReplacementPolicy", "groupReplacementPolicy Immediate is only supported with groupIdentity Hash")],
    ),
    ("immediate-hash-ok", spec(groupReplacementPolicy="Immediate", groupIdentity="Hash"), []),
    # ---- restart budget / backoff -------------------------------------------------------------
    (
        "max-group-restarts-negative",
        lwt(maxGroupRestarts=-1),
        [(f"{LWT}.maxGroupRestarts", "must be greater than or equal to 0")],
    ),
    (
        "max-group-restarts-none",
        lwt(maxGroupRestarts=3, restartPolicy="None"),
        [(f"{LWT}.maxGroupRestarts", "maxGroupRestarts is not supported with restartPolicy None")],
    ),
    (
        "max-group-restarts-deprecated-default",
        lwt(maxGroupRestarts=3, restartPolicy="Default"),
        [(f"{LWT}.maxGroupRestarts", "maxGroupRestarts is not supported with restartPolicy None")],
    ),
    ("max-group-restarts-zero-ok", lwt(maxGroupRestarts=0, restartPolicy="RecreateGroupAfterStart"), []),
    (
        "backoff-base",
        lwt(restartBackoff={"baseSeconds": 0}),
        [(f"{LWT}.restartBackoff.baseSeconds", "must be greater than or equal to 1")],
    ),
    (
        "backoff-cap",
        lwt(restartBackoff={"baseSeconds": 1, "capSeconds": 0}),
        [(f"{LWT}.restartBackoff.capSeconds", "must be greater than or equal to 1")],
    ),
    (
        "backoff-order",
        lwt(restartBackoff={"baseSeconds": 20, "capSeconds": 10}),
        [(f"{LWT}.restartBackoff.capSeconds", "must be greater than or equal to baseSeconds (20)")],
    ),
    ("backoff-equal-ok", lwt(restartBackoff={"baseSeconds": 5, "capSeconds": 5}), []),
    # ---- §5.5 workload-aware scheduling ---------------------------------------------------------
    ("sched-empty-ok", spec(scheduling={}), []),
    (
        "sched-two-levels",
        spec(scheduling={"schedulingPolicy": {"gang": {}}, "replica": {}}),
        [("spec.scheduling", "phase 1 requires exactly one active scheduling level, got [lws replica]")],
    ),
    (
        "sched-replica-and-role",
        spec(scheduling={"replica": {"schedulingPolicy": {"gang": {}}, "leader": {}}}),
        [("spec.scheduling", "phase 1 requires exactly one active scheduling level, got [replica role]")],
    ),
    (
        "sched-leader-ready",
        spec(scheduling={}, startupPolicy="LeaderReady"),
        [
            (
                "spec.scheduling",
                "a gang containing the leader and workers is incompatible with startupPolicy LeaderReady",
            )
        ],
    ),
    (
        "sched-leader-ready-lws-gang",
        spec(scheduling={"schedulingPolicy": {"gang": {}}}, startupPolicy="LeaderReady"),
        [
            (
                "spec.scheduling",
                "a gang containing the leader and workers is incompatible with startupPolicy LeaderReady",
            )
        ],
    ),
    (
        "sched-leader-ready-role-ok",
        spec(scheduling={"replica": {"leader": {}, "worker": {}}}, startupPolicy="LeaderReady"),
        [],
    ),
    (
        "sched-exclusive",
        {"metadata": {"annotations": {EXCL: "rack"}}, **spec(scheduling={})},
        [
            (
                "spec.scheduling",
                "gang scheduling or workload topology constraints cannot be combined with exclusive topology in alpha",
            )
        ],
    ),
    (
        "sched-exclusive-lws-constraints",
        {
            "metadata": {"annotations": {EXCL: "rack"}},
            **spec(scheduling={"schedulingConstraints": {"topology": [{"key": "rack"}]}}),
        },
        [
            (
                "spec.scheduling",
                "gang scheduling or workload topology constraints cannot be combined with exclusive topology in alpha",
            )
        ],
    ),
    ("sched-exclusive-no-scheduling-ok", {"metadata": {"annotations": {EXCL: "rack"}}}, []),
    (
        "sched-min-count-replica",
        spec(scheduling={"replica": {"schedulingPolicy": {"gang": {"minCount": 2}}}}),
        [("spec.scheduling.replica.schedulingPolicy.gang.minCount", "must equal complete leaf membership 3")],
    ),
    ("sched-min-count-replica-ok", spec(scheduling={"replica": {"schedulingPolicy": {"gang": {"minCount": 3}}}}), []),
    (
        "sched-min-count-role",
        spec(
            scheduling={
                "replica": {
                    "leader": {"schedulingPolicy": {"gang": {"minCount": 2}}},
                    "worker": {"schedulingPolicy": {"gang": {"minCount": 3}}},
                }
            }
        ),
        [
            ("spec.scheduling.replica.leader.schedulingPolicy.gang.minCount", "must equal complete leaf membership 1"),
            ("spec.scheduling.replica.worker.schedulingPolicy.gang.minCount", "must equal complete leaf membership 2"),
        ],
    ),
    (
        "sched-min-count-role-ok",
        spec(
            scheduling={
                "replica": {
                    "leader": {"schedulingPolicy": {"gang": {"minCount": 1}}},
                    "worker": {"schedulingPolicy": {"gang": {"minCount": 2}}},
                }
            }
        ),
        [],
    ),
    (
        "sched-min-count-lws",
        spec(scheduling={"schedulingPolicy": {"gang": {"minCount": 3}}}),
        [("spec.scheduling.schedulingPolicy.gang.minCount", "must equal complete leaf membership 6")],
    ),
    (
        "sched-role-size",
        {"spec": {"scheduling": {"replica": {"leader": {}}}, "leaderWorkerTemplate": {"size": 1}}},
        [(f"{LWT}.size", "leader/worker scheduling requires size >= 2")],
    ),
    (
        "sched-min-group-count",
        spec(scheduling={"replica": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}}),
        [
            (
                "spec.scheduling.replica.schedulingPolicy.gang.minGroupCount",
                "minGroupCount requires CompositePodGroup support and is not available in phase 1",
            )
        ],
    ),
    (
        "sched-user-scheduling-group",
        {
            "spec": {
                "scheduling": {},
                "leaderWorkerTemplate": {
                    "workerTemplate": {"spec": {"schedulingGroup": {"podGroupName": "x"}, "containers": C}}
                },
            }
        },
        # schedulingGroup is a Kubernetes 1.36 field: the 1.35 schema does not know it either
        [
            (
                f"{LWT}.workerTemplate.spec.schedulingGroup",
                f'unknown field "{LWT}.workerTemplate.spec.schedulingGroup"',
            ),
            ("spec.scheduling", "managed pod templates must not set spec.schedulingGroup"),
        ],
    ),
    (
        "sched-priority-mismatch",
        {
            "spec": {
                "scheduling": {},
                "leaderWorkerTemplate": {"leaderTemplate": {"spec": {"priorityClassName": "high", "containers": C}}},
            }
        },
        [("spec.scheduling", "all managed pod templates must use the same priorityClassName")],
    ),
    ("no-sched-priority-mismatch-ok", lwt(leaderTemplate={"spec": {"priorityClassName": "high", "containers": C}}), []),
    (
        "sched-claim-unreferenced",
        spec(scheduling={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}),
        [("spec.scheduling.resourceClaims[0]", "must have a matching reference in every member pod template")],
    ),
    (
        "sched-claim-referenced-ok",
        {
            "spec": {
                "scheduling": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
                "leaderWorkerTemplate": {
                    "workerTemplate": {
                        "spec": {"containers": C, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}
                    }
                },
            }
        },
        [],
    ),
    # ---- pulumi-lws update-order annotation ----------------------------------------------------
    (
        "update-order-bogus",
        {"metadata": {"annotations": {"pulumi-lws.io/update-order": "Fastest"}}},
        [
            (
                "metadata.annotations[pulumi-lws.io/update-order]",
                'Unsupported value: "Fastest": supported values: "ScaleFirst", "RolloutFirst"',
            )
        ],
    ),
    (
        "update-order-rollout-first-mu0",
        {
            "metadata": {"annotations": {"pulumi-lws.io/update-order": "RolloutFirst"}},
            **ruc(maxUnavailable=0, maxSurge=1),
        },
        [(MU, "must not be 0 when `updateOrder` is RolloutFirst")],
    ),
    (
        "update-order-rollout-first-ok",
        {"metadata": {"annotations": {"pulumi-lws.io/update-order": "RolloutFirst"}}},
        [],
    ),
]


@pytest.mark.parametrize("patch,expected", [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create_rule(patch: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(validate_leaderworkerset(lws(patch))) == expected


def test_name_too_long_reports_dns_and_budget() -> None:
    errs = validate_leaderworkerset(lws({"metadata": {"name": "a" * 64}}))
    assert [e.path for e in errs] == ["metadata.name", "metadata.name"]
    assert errs[0].message == "must be no more than 63 characters"
    assert "at most 50" in errs[1].message


def test_rule_9_non_int_or_string_budget() -> None:
    """A value of neither type (only reachable by assignment) reports ``invalid value`` once."""
    obj = lws()
    obj.spec.rollout_strategy.rolling_update_configuration.max_unavailable = 1.5  # type: ignore[assignment]
    assert pairs(validate_leaderworkerset(obj)) == [(MU, "invalid value")]


# ---- name budgets (pulumi-lws, issue #410) ---------------------------------------------------
BUDGET_CASES = [
    # (group identity, size, replicas, max allowed length)
    ("Ordinal", 1, 2, 52),  # leader only: <name>-<hash10> <= 63
    ("Ordinal", 3, 10, 50),  # worker <name>-<9>-<hash10>
    ("Ordinal", 3, 11, 49),  # group index 10 has two digits
    ("Ordinal", 3, 101, 48),
    ("Ordinal", 3, 0, 50),
    ("Hash", 3, 2, 43),
    ("Hash", 1, 2, 54),
]


@pytest.mark.parametrize("identity,size,replicas,limit", BUDGET_CASES)
def test_name_budget(identity: str, size: int, replicas: int, limit: int) -> None:
    def errs(n: int) -> list[FieldError]:
        return validate_leaderworkerset(
            lws(
                {
                    "metadata": {"name": "a" * n},
                    "spec": {"groupIdentity": identity, "replicas": replicas, "leaderWorkerTemplate": {"size": size}},
                }
            )
        )

    assert errs(limit) == []
    (err,) = errs(limit + 1)
    assert err.path == "metadata.name"
    assert f"name is {limit + 1} characters but at most {limit} are allowed in {identity} mode" in err.message
    assert f"shorten metadata.name to {limit} characters or fewer" in err.message
    assert "#410" in err.message


# ---- update rules ------------------------------------------------------------------------------
UPDATE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[str, str]]]] = [
    (
        "U1-sgs-immutable",
        lwt(size=7, subGroupPolicy={"subGroupSize": 2}),
        lwt(size=7, subGroupPolicy={"subGroupSize": 3}),
        [(SGS, "field is immutable")],
    ),
    (
        "U2-sgs-enable",
        {},
        lwt(subGroupPolicy={"subGroupSize": 3}),
        [(SGS, "cannot enable subGroupSize after the lws is already created")],
    ),
    ("U3-sgs-remove", lwt(subGroupPolicy={"subGroupSize": 3}), {}, [(SGS, "cannot remove subGroupSize after enabled")]),
    (
        "resize-breaking-subgroup",
        lwt(size=9, subGroupPolicy={"subGroupSize": 8}),
        lwt(size=10, subGroupPolicy={"subGroupSize": 8}),
        [(SGS, "size or size - 1 must be divisible by subGroupSize")],
    ),
    (
        "resize-ok",
        lwt(size=9, subGroupPolicy={"subGroupSize": 8}),
        lwt(size=17, subGroupPolicy={"subGroupSize": 8}),
        [],
    ),
    (
        "U4-subdomain-null",
        {},
        spec(networkConfig={"subdomainPolicy": None}),
        [("spec.networkConfig.subdomainPolicy", "cannot set subdomainPolicy as null")],
    ),
    (
        "U4-subdomain-missing",
        {},
        spec(networkConfig={}),
        [("spec.networkConfig.subdomainPolicy", "cannot set subdomainPolicy as null")],
    ),
    ("U4-network-config-nil-ok", {}, spec(networkConfig=None), []),
    ("group-identity", {}, spec(groupIdentity="Hash"), [("spec.groupIdentity", "groupIdentity is immutable")]),
    ("group-identity-empty-is-ordinal", spec(groupIdentity=""), spec(groupIdentity="Ordinal"), []),
    (
        "pod-termination-policy",
        {},
        spec(podTerminationPolicy="Parallel"),
        [("spec.podTerminationPolicy", "field is immutable")],
    ),
    (
        "replacement-policy-mutable",
        spec(groupIdentity="Hash"),
        spec(groupIdentity="Hash", groupReplacementPolicy="Immediate"),
        [],
    ),
    ("sched-add", {}, spec(scheduling={}), [("spec.scheduling", "cannot add spec.scheduling after creation")]),
    ("sched-remove", spec(scheduling={}), {}, [("spec.scheduling", "cannot remove spec.scheduling after creation")]),
    (
        "sched-level",
        spec(scheduling={}),
        spec(scheduling={"replica": {"leader": {}, "worker": {}}}),
        [("spec.scheduling", "cannot switch the active scheduling level after creation")],
    ),
    (
        "sched-fields",
        spec(scheduling={}),
        spec(scheduling={"replica": {"schedulingConstraints": {"topology": []}}}),
        [
            (
                "spec.scheduling",
                "schedulingPolicy, schedulingConstraints, disruptionMode and resourceClaims are immutable "
                "after creation (only gang.minCount may change)",
            )
        ],
    ),
    (
        "sched-min-count-follows-scale",
        spec(scheduling={"schedulingPolicy": {"gang": {"minCount": 6}}}),
        spec(replicas=3, scheduling={"schedulingPolicy": {"gang": {"minCount": 9}}}),
        [],
    ),
    (
        "sched-resize-ok",
        spec(scheduling={}),
        {"spec": {"scheduling": {}, "replicas": 5, "leaderWorkerTemplate": {"size": 4}}},
        [],
    ),
    (
        "priority-frozen",
        spec(scheduling={}),
        {
            "spec": {
                "scheduling": {},
                "leaderWorkerTemplate": {"workerTemplate": {"spec": {"priorityClassName": "high", "containers": C}}},
            }
        },
        [(LWT, "cannot change priorityClassName while workload-aware scheduling is configured")],
    ),
    (
        "priority-free-without-scheduling",
        {},
        lwt(workerTemplate={"spec": {"priorityClassName": "high", "containers": C}}),
        [],
    ),
    (
        "template-mutable",
        {},
        lwt(size=4, restartPolicy="None", workerTemplate={"spec": {"containers": [{"name": "w", "image": "img:2"}]}}),
        [],
    ),
]


@pytest.mark.parametrize(
    "old_patch,new_patch,expected", [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_update_rule(old_patch: dict[str, Any], new_patch: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert pairs(validate_leaderworkerset(lws(new_patch), lws(old_patch))) == expected


def test_update_rules_do_not_run_on_create() -> None:
    assert (
        validate_leaderworkerset(lws(spec(networkConfig={"subdomainPolicy": None}, podTerminationPolicy="Parallel")))
        == []
    )


def test_spec_error_lists_every_problem() -> None:
    manifest = merge(
        BASE,
        {
            "metadata": {"name": "Bad_Name"},
            "spec": {"replicas": -1, "leaderWorkerTemplate": {"size": 0}, "groupReplacementPolicy": "Immediate"},
        },
    )
    with pytest.raises(SpecError) as info:
        LeaderWorkerSet.from_manifest(manifest)
    err = info.value
    assert [e.path for e in err.errors] == [
        "metadata.name",
        "spec.replicas",
        f"{LWT}.size",
        "spec.groupReplacementPolicy",
    ]
    assert "(4 problems)" in str(err)
    assert "spec.replicas: Invalid value: -1: replicas must be equal or greater than 0" in str(err)
    with pytest.raises(SpecError) as upd:
        lws().validate(old=lws(spec(groupIdentity="Hash")))
    assert pairs(upd.value.errors) == [("spec.groupIdentity", "groupIdentity is immutable")]


def test_every_rule_is_a_named_function_documented_in_api_md() -> None:
    doc = (ROOT / "docs" / "api.md").read_text()
    for rule in V.CREATE_RULES + V.UPDATE_RULES:
        assert rule.__name__ != "<lambda>"
        assert f"`{rule.__name__}`" in doc, f"{rule.__name__} missing from docs/api.md"
