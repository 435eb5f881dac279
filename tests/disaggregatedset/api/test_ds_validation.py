"""DisaggregatedSet validation: every CRD and webhook rule (exact path, message, kind), the embedded
LWS rules under ``spec.roles[i]``, the name budgets at their boundaries, warnings, all errors at once."""

from __future__ import annotations

import pytest
from ds_base import ds, role

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.rules import DNS1035_MSG, PERCENT_MSG
from pulumi_lws.disaggregatedset.api import DisaggregatedSet

EXCL = "leaderworkerset.sigs.k8s.io/exclusive-topology"
SUB_EXCL = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
ALL_OR_NOTHING = "replicas must be zero for all non-External roles or non-zero for all non-External roles"
PARTITION = (
    "partition is not supported by DisaggregatedSet; rolling updates are managed across roles by the "
    "DisaggregatedSet controller"
)


def errors(m: dict) -> list:
    return DisaggregatedSet.parse(m).validation_errors()


def cfg(**c) -> dict:
    return {"rolloutStrategy": {"rollingUpdateConfiguration": c}}


def with_meta(m: dict, **meta) -> dict:
    m["metadata"] = {**m["metadata"], **meta}
    return m


def svc_msg(n: int, limit: int) -> str:
    return (
        f"the generated service name ({n} chars) would exceed the DNS-1035 limit of 63 characters; reduce the "
        f"DisaggregatedSet name and/or role name (combined limit: {limit} characters)"
    )


def exclusive(key: str, typ: str = "ExclusiveSlice") -> str:
    return f'the "{key}" annotation must not be combined with a non-None spec.placementPolicy.type ({typ})'


PLACE = {"type": "ExclusiveSlice", "topology": "zone"}

# (id, manifest, path, message, kind)
BAD = [
    (
        "name-required",
        with_meta(ds(), name=None),
        "metadata.name",
        "Required value: name or generateName is required",
        "Required",
    ),
    ("one-role", ds(role("a")), "spec.roles", "spec.roles in body should have at least 2 items", "Invalid"),
    (
        "eleven-roles",
        ds(*[role(f"r{i}") for i in range(11)]),
        "spec.roles",
        "Too many: 11: must have at most 10 items",
        "TooMany",
    ),
    (
        "role-name-empty",
        ds(role(""), role("b")),
        "spec.roles[0].name",
        "spec.roles[0].name in body should be at least 1 chars long",
        "Invalid",
    ),
    (
        "role-name-pattern",
        ds(role("a"), role("Decode")),
        "spec.roles[1].name",
        "spec.roles[1].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
        "Invalid",
    ),
    (
        "role-name-dash-end",
        ds(role("a-"), role("b")),
        "spec.roles[0].name",
        "spec.roles[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
        "Invalid",
    ),
    (
        "role-name-64",
        ds(role("r" * 64), role("b"), name="d"),
        "spec.roles[0].name",
        "Too long: may not be more than 63 bytes",
        "TooLong",
    ),
    (
        "duplicate-role",
        ds(role("a"), role("b"), role("a")),
        "spec.roles[2]",
        'Duplicate value: {"name":"a"}',
        "Duplicate",
    ),
    ("slices-0", ds(slices=0), "spec.slices", "spec.slices in body should be greater than or equal to 1", "Invalid"),
    ("slices-101", ds(slices=101), "spec.slices", "spec.slices in body should be less than or equal to 100", "Invalid"),
    (
        "replicas-negative",
        ds(role("a", -1), role("b", -1)),
        "spec.roles[0].spec.replicas",
        "spec.roles[0].spec.replicas in body should be greater than or equal to 0",
        "Invalid",
    ),
    (
        "replicas-too-many",
        ds(role("a", 1_000_001), role("b")),
        "spec.roles[0].spec.replicas",
        "spec.roles[0].spec.replicas in body should be less than or equal to 1000000",
        "Invalid",
    ),
    ("cel-all-or-nothing", ds(role("a", 0), role("b", 2)), "spec", ALL_OR_NOTHING, "Invalid"),
    ("cel-default-replicas-count", ds(role("a", None), role("b", 0)), "spec", ALL_OR_NOTHING, "Invalid"),
    (
        "rollout-type-empty",
        ds(role("a", rolloutStrategy={"type": ""}), role("b")),
        "spec.roles[0].spec.rolloutStrategy.type",
        'Unsupported value: "": supported values: "RollingUpdate"',
        "NotSupported",
    ),
    (
        "startup-policy-empty",
        ds(role("a"), role("b", startupPolicy="")),
        "spec.roles[1].spec.startupPolicy",
        'Unsupported value: "": supported values: "LeaderCreated", "LeaderReady"',
        "NotSupported",
    ),
    (
        "subdomain-policy-required",
        ds(role("a", networkConfig={}), role("b")),
        "spec.roles[0].spec.networkConfig.subdomainPolicy",
        "Required value",
        "Required",
    ),
    (
        "partition-1",
        ds(role("a", **cfg(partition=1)), role("b")),
        f"spec.roles[0].{RUC}.partition",
        PARTITION,
        "Forbidden",
    ),
    (
        "partition-negative",
        ds(role("a"), role("b", **cfg(partition=-1))),
        f"spec.roles[1].{RUC}.partition",
        PARTITION,
        "Forbidden",
    ),
    (
        "both-zero",
        ds(role("a", 2, **cfg(maxSurge=0, maxUnavailable=0)), role("b")),
        f"spec.roles[0].{RUC}.maxUnavailable",
        "must not be 0 when `maxSurge` is 0",
        "Invalid",
    ),
    (
        "both-zero-percent",
        ds(role("a", 3, **cfg(maxSurge="0%", maxUnavailable="0%")), role("b")),
        f"spec.roles[0].{RUC}.maxUnavailable",
        "must not be 0 when `maxSurge` is 0",
        "Invalid",
    ),
    (
        "unavailable-floors-to-0",
        ds(role("a", 5, **cfg(maxUnavailable="10%")), role("b")),
        f"spec.roles[0].{RUC}.maxUnavailable",
        "must not be 0 when `maxSurge` is 0",
        "Invalid",
    ),
    (
        "surge-not-percent",
        ds(role("a", **cfg(maxSurge="abc")), role("b")),
        f"spec.roles[0].{RUC}.maxSurge",
        PERCENT_MSG,
        "Invalid",
    ),
    (
        "unavailable-over-100",
        ds(role("a", **cfg(maxUnavailable="150%")), role("b")),
        f"spec.roles[0].{RUC}.maxUnavailable",
        "must not be greater than 100%",
        "Invalid",
    ),
    (
        "unavailable-negative",
        ds(role("a", **cfg(maxUnavailable=-1)), role("b")),
        f"spec.roles[0].{RUC}.maxUnavailable",
        "must be greater than or equal to 0",
        "Invalid",
    ),
    (
        "surge-bad-at-0-replicas (beyond upstream)",
        ds(role("a", 0, **cfg(maxSurge="abc")), role("b", 0)),
        f"spec.roles[0].{RUC}.maxSurge",
        PERCENT_MSG,
        "Invalid",
    ),
    (
        "scaler-name-253",
        ds(role("pre", scaling="External"), role("b"), name="a" * 250),
        "spec.roles[0].name",
        f'would produce scaler name "{"a" * 250}-pre" exceeding 253 characters',
        "Invalid",
    ),
    (
        "slices-with-external",
        ds(role("a", scaling="External"), role("b"), slices=2),
        "spec.slices",
        "spec.slices > 1 is not supported while any role has scaling.mode: External (alpha restriction)",
        "Forbidden",
    ),
    ("service-name-64", ds(role("r" * 8), role("b"), name="d" * 40), "spec.roles[0].name", svc_msg(64, 47), "Invalid"),
    (
        "service-name-11-slices",
        ds(role("r" * 9), role("b"), name="d" * 38, slices=11),
        "spec.roles[0].name",
        svc_msg(64, 46),
        "Invalid",
    ),
    (
        "topology-required",
        ds(placementPolicy={"type": "ExclusiveTopology"}),
        "spec.placementPolicy.topology",
        "Required value: topology is required when type is not None",
        "Required",
    ),
    (
        "exclusive-annotation-on-metadata",
        ds(role("a", metadata={"annotations": {EXCL: "zone"}}), role("b"), placementPolicy=PLACE),
        "spec.roles[0]",
        exclusive(EXCL),
        "Forbidden",
    ),
    (
        "subgroup-exclusive-on-worker-template",
        ds(
            role("a"),
            role(
                "b",
                leaderWorkerTemplate={
                    "size": 2,
                    "subGroupPolicy": {"subGroupSize": 1},
                    "workerTemplate": {
                        "metadata": {"annotations": {SUB_EXCL: "rack"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                },
            ),
            placementPolicy={"type": "ExclusiveTopology", "topology": "zone"},
        ),
        "spec.roles[1]",
        exclusive(SUB_EXCL, "ExclusiveTopology"),
        "Forbidden",
    ),
    (
        "exclusive-on-leader-template",
        ds(
            role(
                "a",
                leaderWorkerTemplate={
                    "leaderTemplate": {
                        "metadata": {"annotations": {EXCL: "zone"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    }
                },
            ),
            role("b"),
            placementPolicy=PLACE,
        ),
        "spec.roles[0]",
        exclusive(EXCL),
        "Forbidden",
    ),
    # the embedded LWS spec under the LWS rules (beyond upstream), paths prefixed spec.roles[i].
    (
        "lws-size-0",
        ds(role("a", leaderWorkerTemplate={"size": 0}), role("b")),
        "spec.roles[0].spec.leaderWorkerTemplate.size",
        "size must be equal or greater than 1",
        "Invalid",
    ),
    (
        "lws-worker-template-required",
        ds(role("a"), {"name": "b", "spec": {"leaderWorkerTemplate": {}}}),
        "spec.roles[1].spec.leaderWorkerTemplate.workerTemplate",
        "Required value",
        "Required",
    ),
    (
        "lws-subgroup-size",
        ds(role("a"), role("b", leaderWorkerTemplate={"size": 5, "subGroupPolicy": {"subGroupSize": 3}})),
        "spec.roles[1].spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize",
        "size or size - 1 must be divisible by subGroupSize",
        "Invalid",
    ),
    (
        "lws-pod-template",
        ds(role("a", leaderWorkerTemplate={"workerTemplate": {"spec": {"containers": [{"name": "c"}]}}}), role("b")),
        "spec.roles[0].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image",
        "Required value",
        "Required",
    ),
    (
        "lws-subgroup-exclusive-needs-policy",
        ds(role("a", metadata={"annotations": {SUB_EXCL: "x"}}), role("b")),
        f"spec.roles[0].metadata.annotations[{SUB_EXCL}]",
        "cannot have subgroup-exclusive-topology without subGroupSize set",
        "Invalid",
    ),
    (
        "lws-immediate-needs-hash",
        ds(role("a"), role("b", groupReplacementPolicy="Immediate")),
        "spec.roles[1].spec.groupReplacementPolicy",
        "groupReplacementPolicy Immediate is only supported with groupIdentity Hash",
        "Invalid",
    ),
    (
        "ds-name-not-dns1035",
        ds(name="1ds"),
        "metadata.name",
        f"the generated LeaderWorkerSet names '1ds-<slice>-<revision>-<role>' must be DNS-1035 labels: {DNS1035_MSG}",
        "Invalid",
    ),
]


@pytest.mark.parametrize(("manifest", "path", "message", "kind"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_reported_with_path_message_and_kind(manifest: dict, path: str, message: str, kind: str) -> None:
    found = [(e.path, e.message, e.kind) for e in errors(manifest)]
    assert (path, message, kind) in found, found
    with pytest.raises(SpecError) as exc:
        DisaggregatedSet.from_manifest(manifest)
    assert any(e.path == path and e.message == message for e in exc.value.errors)


def test_the_table_is_large_enough() -> None:
    assert len(BAD) >= 30


def test_rendered_like_kubernetes() -> None:
    e = errors(ds(role("a", **cfg(partition=1)), role("b")))
    assert [str(x) for x in e] == [f"spec.roles[0].{RUC}.partition: Forbidden: {PARTITION}"]
    e = errors(ds(placementPolicy={"type": "ExclusiveSlice"}))
    assert [str(x) for x in e] == [
        "spec.placementPolicy.topology: Required value: topology is required when type is not None"
    ]
    e = errors(ds(role("a", 2, **cfg(maxSurge=0, maxUnavailable=0)), role("b")))
    assert [str(x) for x in e] == [
        f"spec.roles[0].{RUC}.maxUnavailable: Invalid value: 0: must not be 0 when `maxSurge` is 0"
    ]


GOOD = [
    ("minimal", ds()),
    ("all-zero", ds(role("a", 0), role("b", 0))),
    ("external-exempt-from-cel", ds(role("a", 0, scaling="External"), role("b", 2))),
    ("external-zero-others-zero", ds(role("a", 5, scaling="External"), role("b", 0), role("c", 0))),
    ("both-zero-at-0-replicas", ds(role("a", 0, **cfg(maxSurge=0, maxUnavailable=0)), role("b", 0))),
    ("empty-config", ds(role("a", **cfg()), role("b"))),
    ("partition-0", ds(role("a", **cfg(partition=0)), role("b"))),
    ("surge-only", ds(role("a", 4, **cfg(maxSurge="25%", maxUnavailable=0)), role("b"))),
    (
        "placement-none-ignores-annotation",
        ds(role("a", metadata={"annotations": {EXCL: "zone"}}), role("b"), placementPolicy={"type": "None"}),
    ),
    ("placement", ds(placementPolicy={"type": "ExclusiveTopology", "topology": "zone"}, slices=4)),
    ("ten-roles", ds(*[role(f"r{i}") for i in range(10)])),
    ("hundred-slices", ds(slices=100)),
    ("digit-role-name", ds(role("0a"), role("1"))),
]


@pytest.mark.parametrize("manifest", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_input_passes(manifest: dict) -> None:
    assert errors(manifest) == []


def test_all_errors_at_once_in_rule_order() -> None:
    m = ds(
        role("Bad", 0, **cfg(partition=2)),
        role("b", 2, leaderWorkerTemplate={"size": 0}),
        role("b", scaling="External"),
        slices=3,
        placementPolicy={"type": "ExclusiveSlice"},
    )
    got = [(e.path, e.kind) for e in errors(m)]
    assert got == [
        ("spec.roles[0].name", "Invalid"),  # CRD pattern
        ("spec.roles[2]", "Duplicate"),  # listMapKey
        ("spec", "Invalid"),  # CEL
        (f"spec.roles[0].{RUC}.partition", "Forbidden"),  # webhook, per role
        ("spec.slices", "Forbidden"),  # External + slices
        ("spec.placementPolicy.topology", "Required"),  # placement
        ("spec.roles[1].spec.leaderWorkerTemplate.size", "Invalid"),  # embedded LWS rules
    ]


def test_embedded_errors_never_repeat_an_upstream_path() -> None:
    e = errors(ds(role("a", -1), role("b", -1)))
    paths = [x.path for x in e]
    assert paths.count("spec.roles[0].spec.replicas") == 1  # the CRD message, not also the LWS one
    e = errors(ds(role("a", **cfg(partition=-5)), role("b")))
    assert [x.path for x in e] == [f"spec.roles[0].{RUC}.partition"]


def test_update_validation_is_the_same_as_create() -> None:
    old = DisaggregatedSet.parse(
        ds(role("a", leaderWorkerTemplate={"size": 2, "subGroupPolicy": {"subGroupSize": 1}}), role("b"))
    )
    new = DisaggregatedSet.parse(ds(role("a", leaderWorkerTemplate={"size": 2}), role("b"), slices=3))
    assert new.validation_errors(old) == [] and new.validate(old) is new


# ---- name budgets at their boundaries ---------------------------------------------------------
@pytest.mark.parametrize(
    ("ds_len", "role_len", "slices", "ok"),
    [
        (40, 7, 1, True),
        (40, 8, 1, False),  # upstream: len(ds) + len(role) <= 47 (<= 10 slices)
        (40, 7, 10, True),
        (39, 7, 11, True),
        (40, 7, 11, False),  # 46 above 10 slices
    ],
)
def test_service_name_budget_boundary(ds_len: int, role_len: int, slices: int, ok: bool) -> None:
    m = ds(role("r" * role_len, leaderWorkerTemplate={"size": 1}), role("b"), name="d" * ds_len, slices=slices)
    svc = [e for e in errors(m) if e.path == "spec.roles[0].name" and "generated service name" in e.message]
    assert (svc == []) is ok


@pytest.mark.parametrize(
    ("ds_len", "role_len", "size", "replicas", "limit"),
    [
        (30, 10, 1, 1, 52),  # leader controller-revision-hash: len(child) <= 52
        (30, 8, 2, 10, 50),  # workers, <= 10 groups: len(child) + 1 + 1 + 11 <= 63
        (30, 7, 2, 11, 49),  # 11 groups: two digits
    ],
)
def test_child_lws_name_budget_boundary(ds_len: int, role_len: int, size: int, replicas: int, limit: int) -> None:
    def child_errors(rl: int) -> list:
        m = ds(role("r" * rl, replicas, leaderWorkerTemplate={"size": size}), role("b", replicas), name="d" * ds_len)
        return [e for e in errors(m) if e.path == "spec.roles[0].name"]

    assert ds_len + 3 + 1 + 8 + role_len == limit  # the worst-case child name is exactly at the limit
    assert child_errors(role_len) == []
    over = child_errors(role_len + 1)
    assert len(over) == 1 and f"at most {limit} are allowed" in over[0].message
    assert "generated service name" not in over[0].message  # upstream's budget (59) is still met


def test_upstream_service_budget_wins_over_the_child_budget_on_the_same_field() -> None:
    e = [x for x in errors(ds(role("r" * 8), role("b"), name="d" * 40)) if x.path == "spec.roles[0].name"]
    assert [x.message for x in e] == [svc_msg(64, 47)]


# ---- warnings -----------------------------------------------------------------------------------
def test_external_replicas_warning_is_not_an_error() -> None:
    d = DisaggregatedSet.from_manifest(ds(role("prefill", 3, scaling="External"), role("decode", 2), name="my"))
    assert d.warnings() == [
        (
            'role "prefill" sets scaling.mode: External and spec.replicas: 3 — spec.replicas is '
            'ignored; drive replicas via DisaggregatedSetRoleScaler "my-prefill" instead'
        )
    ]
    assert DisaggregatedSet.parse(ds(role("p", 1, scaling="External"), role("d"))).warnings() == []
    assert DisaggregatedSet.parse(ds(role("p", 3), role("d", 3))).warnings() == []
