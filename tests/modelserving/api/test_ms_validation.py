"""Every ModelServing rule: exact path + message (CRD schema, webhook table §5.1, name budgets).

Each case patches a valid base and asserts the *complete* error list, so a rule that fires too
often (or a neighbour firing with it) fails the test too.
"""

from __future__ import annotations

import pytest
from ms_base import POD, merge, ms, pairs, role, role_ru, roles, sg, spec, template

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.rules import DNS1035_MSG, PERCENT_MSG
from pulumi_lws.modelserving.api import validation as V
from pulumi_lws.modelserving.api.validation import validate_modelserving

RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
R0, R1 = "spec.template.roles[0]", "spec.template.roles[1]"
MRR = "spec.template.gangPolicy.minRoleReplicas"
ROLE_DNS = (
    "role name must be a valid DNS-1035 label (lowercase alphanumeric characters or '-', must start with a letter): "
)
PATTERN = "^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
BOTH_ZERO = "maxUnavailable and maxSurge cannot both resolve to 0"
PAIR = (
    "incompatible recoveryPolicy and rolloutStrategy.type after applying defaults: recoveryPolicy="
    "ServingGroupRecreate, rolloutStrategy.type=RoleRollingUpdate; valid pairs: (ServingGroupRecreate,"
    "ServingGroupRollingUpdate) or (RoleRecreate,RoleRollingUpdate)"
)
NOT_PCT = "invalid value for IntOrString: invalid type: string is not a percentage"


def test_base_is_valid() -> None:
    assert validate_modelserving(ms()) == []
    assert validate_modelserving(ms(), ms()) == []


CASES: list[tuple[str, dict, list[tuple[str, str]]]] = [
    # ---- CRD schema (§5.2) -------------------------------------------------------------------
    (
        "crd-name-required",
        {"metadata": {"name": "DELETE"}},
        [("metadata.name", "Required value: name or generateName is required")]
        + [("metadata.name", "invalid name: " + DNS1035_MSG)] * 2,
    ),  # upstream's probe "-2-prefill-1-1"
    (
        "crd-roles-min",
        roles(),
        [
            ("spec.template.roles", "spec.template.roles in body should have at least 1 items"),
            ("spec.template.roles", "roles must be specified"),
        ],
    ),
    (
        "crd-roles-max",
        roles(*(role(n) for n in "abcde")),
        [("spec.template.roles", "Too many: 5: must have at most 4 items")],
    ),
    (
        "crd-role-name-too-long",
        roles(role("abcdefghijklm")),
        [(f"{R0}.name", "Too long: may not be more than 12 bytes")],
    ),
    (
        "crd-role-name-pattern",
        roles(role("pre_fill")),
        [
            (f"{R0}.name", f"{R0}.name in body should match '{PATTERN}'"),
            ("metadata.name", "invalid name: " + DNS1035_MSG),
            (f"{R0}.name", ROLE_DNS + DNS1035_MSG),
        ],
    ),
    ("crd-role-names-unique", roles(role("a"), role("a")), [("spec.template.roles", "roles name must be unique")]),
    (
        "crd-tier-allowed-min",
        template(networkTopology={"groupPolicy": {"highestTierAllowed": -1}}),
        [
            (
                "spec.template.networkTopology.groupPolicy.highestTierAllowed",
                "spec.template.networkTopology.groupPolicy.highestTierAllowed in body should be greater than or equal to 0",
            )
        ],
    ),
    (
        "crd-tier-name-max",
        template(networkTopology={"rolePolicy": {"highestTierName": "t" * 254}}),
        [("spec.template.networkTopology.rolePolicy.highestTierName", "Too long: may not be more than 253 bytes")],
    ),
    # ---- webhook table §5.1 ------------------------------------------------------------------
    (
        "1-generated-name",
        {"metadata": {"name": "m" * 54}, **roles(role("prefill", workerReplicas=0))},
        [
            ("metadata.name", "invalid name: must be no more than 63 characters"),  # m*54-2-prefill-1-0 = 67
            (
                "metadata.name",
                'entry StatefulSet "' + "m" * 54 + '-1-prefill-0" (ServingGroup 1, role prefill replica 0: the '
                'largest ordinals a rollout reaches) is 66 characters: its pods get the label controller-revision-hash "'
                + "m"
                * 54
                + '-1-prefill-0-<10-character hash>" (77 characters) and a label value is at most 63, so this name '
                "may have at most 52; shorten metadata.name or the role name by 14 (pulumi-lws name budget)",
            ),
        ],
    ),
    ("2-role-name-dns1035", roles(role("405b")), [(f"{R0}.name", ROLE_DNS + DNS1035_MSG)]),
    (
        "2-role-name-uppercase",
        roles(role("Prefill")),
        [("metadata.name", "invalid name: " + DNS1035_MSG), (f"{R0}.name", ROLE_DNS + DNS1035_MSG)],
    ),
    (
        "3-image-spaces",
        roles(role(entryTemplate={"spec": {"containers": [{"name": "c", "image": "a b"}]}})),
        [
            (
                f"{R0}.entryTemplate.spec.containers[0].image",
                "invalid container image reference: image cannot contain spaces",
            )
        ],
    ),
    (
        "3-image-whitespace",
        roles(
            role(workerTemplate={"spec": {"containers": [POD["spec"]["containers"][0], {"name": "d", "image": "\t"}]}})
        ),
        [
            (
                f"{R0}.workerTemplate.spec.containers[1].image",
                "invalid container image reference: image cannot be empty or whitespace only",
            )
        ],
    ),
    # the webhook skips an empty image (test_the_webhook_skips_an_empty_image); the pod schema requires one
    (
        "3-image-empty-pod-schema",
        roles(role(entryTemplate={"spec": {"containers": [{"name": "c", "image": ""}]}})),
        [(f"{R0}.entryTemplate.spec.containers[0].image", "Required value")],
    ),
    ("4-replicas-negative", spec(replicas=-1), [("spec.replicas", "replicas must be a non-negative integer")]),
    (
        "6-role-replicas-negative",
        roles(role(replicas=-1)),
        [(f"{R0}.replicas", "role replicas must be a non-negative integer")],
    ),
    (
        "7-ruc-forbidden-with-role-ru",
        sg("RoleRollingUpdate", maxUnavailable=1),
        [(RUC, "rollingUpdateConfiguration is only valid when rolloutStrategy.type is ServingGroupRollingUpdate")],
    ),
    (
        "8-bad-percent",
        sg(maxUnavailable="5"),
        [(f"{RUC}.maxUnavailable", PERCENT_MSG), (f"{RUC}.maxUnavailable", f"invalid maxUnavailable: {NOT_PCT}")],
    ),
    ("8-percent-over-100", sg(maxSurge="101%"), [(f"{RUC}.maxSurge", "must be a valid percent value (0-100)")]),
    ("8-negative-int", sg(partition=-1), [(f"{RUC}.partition", "must be a non-negative integer")]),
    (
        "8-bad-surge-string",
        sg(maxSurge="x"),
        [(f"{RUC}.maxSurge", PERCENT_MSG), (f"{RUC}.maxSurge", f"invalid maxSurge: {NOT_PCT}")],
    ),
    (
        "9-bad-percent-digits",
        sg(maxUnavailable="1.5%"),
        [
            (f"{RUC}.maxUnavailable", PERCENT_MSG),
            (
                f"{RUC}.maxUnavailable",
                (
                    'invalid maxUnavailable: invalid value for IntOrString: invalid value "1.5%": strconv.Atoi: parsing "1.5": '
                    "invalid syntax"
                ),
            ),
        ],
    ),
    ("10a-both-zero", sg(maxUnavailable=0), [(RUC, BOTH_ZERO)]),
    ("10a-both-zero-percent", sg(maxUnavailable="10%", maxSurge="0%"), [(RUC, BOTH_ZERO)]),
    ("10a-surge-allows-zero", sg(maxUnavailable=0, maxSurge=1), []),
    ("10a-partition-covers-all", sg(maxUnavailable=0, partition=2), []),
    (
        "10a-invalid-partition-counts-0",
        sg(maxUnavailable=0, partition="x"),
        [(f"{RUC}.partition", PERCENT_MSG), (RUC, BOTH_ZERO)],
    ),
    ("10a-zero-replicas", merge(sg(maxUnavailable=0), spec(replicas=0)), []),
    (
        "11-role-partition-forbidden",
        roles(role(partition=1)),
        [(f"{R0}.partition", "partition is only valid when rolloutStrategy.type is RoleRollingUpdate")],
    ),
    (
        "12-role-surge-forbidden",
        roles(role(maxSurge="x")),
        [
            (f"{R0}.maxSurge", PERCENT_MSG),
            (f"{R0}.maxSurge", "maxSurge is only valid when rolloutStrategy.type is RoleRollingUpdate"),
        ],
    ),
    (
        "13-role-mu-over-replicas",
        role_ru(role(replicas=2, maxUnavailable=3)),
        [(f"{R0}.maxUnavailable", "maxUnavailable cannot be greater than replicas (2)")],
    ),
    (
        "13-zero-role-replicas-default-mu",
        role_ru(role(replicas=0)),
        [(f"{R0}.maxUnavailable", "maxUnavailable cannot be greater than replicas (0)")],
    ),
    ("13-zero-role-replicas-fixed", role_ru(role(replicas=0, maxUnavailable=0)), []),
    ("14a-role-both-zero", role_ru(role(replicas=2, maxUnavailable=0)), [(R0, BOTH_ZERO)]),
    ("14a-role-surge-allows-zero", role_ru(role(replicas=2, maxUnavailable=0, maxSurge="50%")), []),
    ("14a-role-partition-covers", role_ru(role(replicas=2, maxUnavailable=0, partition="100%")), []),
    (
        "9-role-bad-mu",
        role_ru(role(maxUnavailable="x")),
        [(f"{R0}.maxUnavailable", PERCENT_MSG), (f"{R0}.maxUnavailable", f"invalid maxUnavailable: {NOT_PCT}")],
    ),
    ("9-role-bad-surge", role_ru(role(maxSurge="-1%")), [(f"{R0}.maxSurge", PERCENT_MSG)]),
    (
        "15-gang-unknown-role",
        template(gangPolicy={"minRoleReplicas": {"router": 1}}),
        [(f"{MRR}[router]", "role router does not exist in template.roles")],
    ),
    (
        "16-gang-exceeds",
        template(gangPolicy={"minRoleReplicas": {"prefill": 2}}),
        [(f"{MRR}[prefill]", "minRoleReplicas (2) for role prefill cannot exceed replicas (1)")],
    ),
    (
        "17-gang-negative",
        template(gangPolicy={"minRoleReplicas": {"decode": -1}}),
        [(f"{MRR}[decode]", "minRoleReplicas for role decode must be non-negative")],
    ),
    (
        "18-worker-replicas-negative",
        roles(role(workerReplicas=-1)),
        [(f"{R0}.workerReplicas", "workerReplicas must be a non-negative integer")],
    ),  # "demo-2-prefill-1--1" is a label
    (
        "19-worker-template-required",
        roles(role(workerTemplate="DELETE", workerReplicas=2)),
        [(f"{R0}.workerTemplate", "Required value: workerTemplate is required when workerReplicas is greater than 0")],
    ),
    ("19-no-workers-no-template", roles(role(workerTemplate="DELETE", workerReplicas=0)), []),
    (
        "20-recovery-pair",
        {"spec": {"recoveryPolicy": "ServingGroupRecreate", "rolloutStrategy": {"type": "RoleRollingUpdate"}}},
        [("spec.rolloutStrategy.type", PAIR)],
    ),
    ("20-none-accepted", {"spec": {"recoveryPolicy": "None", "rolloutStrategy": {"type": "RoleRollingUpdate"}}}, []),
]


@pytest.mark.parametrize(("patch", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(patch, expected) -> None:
    assert pairs(validate_modelserving(ms(patch))) == expected


def test_at_least_30_bad_inputs() -> None:
    assert sum(1 for c in CASES if c[2]) >= 30


def test_kinds_and_rendering() -> None:
    errs = validate_modelserving(
        ms(
            merge(
                roles(role(workerTemplate="DELETE", workerReplicas=1), role("abcdefghijklm")),
                {"spec": {"rolloutStrategy": {"type": "RoleRollingUpdate", "rollingUpdateConfiguration": {}}}},
            )
        )
    )
    assert [str(e) for e in errs] == [
        f"{R1}.name: Too long: may not be more than 12 bytes",
        f"{RUC}: Forbidden: rollingUpdateConfiguration is only valid when rolloutStrategy.type is ServingGroupRollingUpdate",
        f"{R0}.workerTemplate: Required value: workerTemplate is required when workerReplicas is greater than 0",
    ]
    both = validate_modelserving(ms(sg(maxUnavailable=0)))
    assert str(both[0]) == f'{RUC}: Invalid value: "": {BOTH_ZERO}'


def test_all_errors_at_once_in_rule_order() -> None:
    bad = ms(
        {
            "spec": {
                "replicas": -1,
                "recoveryPolicy": "ServingGroupRecreate",
                "rolloutStrategy": {"type": "RoleRollingUpdate"},
                "template": {
                    "gangPolicy": {"minRoleReplicas": {"x": 1}},
                    "roles": [
                        role("Prefill", replicas=-1, workerReplicas=-1, partition="7"),
                        role(
                            "Prefill",
                            workerTemplate="DELETE",
                            workerReplicas=3,
                            entryTemplate={"spec": {"containers": [{"name": "c", "image": " "}]}},
                        ),
                    ],
                },
            }
        }
    )
    with pytest.raises(SpecError) as exc:
        bad.validate()
    paths = [e.path for e in exc.value.errors]
    assert paths == [
        "spec.template.roles",  # CRD: names unique
        "metadata.name",  # 1 (role 0: negative counts in the probe)
        "metadata.name",  # 1 (role 1: uppercase)
        f"{R0}.name",
        f"{R1}.name",  # 2
        f"{R1}.entryTemplate.spec.containers[0].image",  # 3
        "spec.replicas",
        f"{R0}.replicas",  # 4, 6
        f"{R0}.partition",  # 8
        f"{R0}.maxUnavailable",  # 13 (replicas -1)
        f"{MRR}[x]",  # 15
        f"{R0}.workerReplicas",
        f"{R1}.workerTemplate",  # 18, 19
        "spec.rolloutStrategy.type",  # 20
    ]
    assert len(exc.value.errors) == 14 and "14 problems" in str(exc.value)


def test_the_webhook_skips_an_empty_image() -> None:
    """Upstream's image rule accepts ``image: ""``; the entry pod kthena creates from it would not
    pass the API server, so the pod-template schema (run first) reports it."""
    from pulumi_lws.modelserving.api.webhook_rules import worker_images

    assert worker_images(ms(roles(role(entryTemplate={"spec": {"containers": [{"name": "c", "image": ""}]}})))) == []


def test_rule_tables_are_named_functions() -> None:
    names = [r.__name__ for r in V.CREATE_RULES]
    assert names[:2] == ["metadata_is_valid", "pod_templates_are_valid"]  # the embedded Kubernetes schema first
    names = names[2:]
    assert names[:5] == [
        "name_required",
        "roles_count",
        "role_name_schema",
        "role_names_unique",
        "network_topology_bounds",
    ]
    assert names[5:14] == [
        "generated_name_length",
        "role_names",
        "worker_images",
        "replicas",
        "rolling_update_configuration",
        "role_rolling_budgets",
        "gang_policy",
        "worker_replicas",
        "recovery_policy_and_rollout_strategy",
    ]
    assert names[-2:] == ["fleet_fits_int32", "name_budgets"]
    assert [r.__name__ for r in V.UPDATE_RULES] == ["gang_policy_required_once_set", "min_role_replicas_immutable"]


# ---- update rules (CRD CEL) -----------------------------------------------------------------------
GANG = template(gangPolicy={"minRoleReplicas": {"prefill": 1}})


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (GANG, template(gangPolicy={"minRoleReplicas": {"prefill": 0}}), [(MRR, "minRoleReplicas is immutable")]),
        (
            GANG,
            template(gangPolicy={"minRoleReplicas": {"prefill": 1, "decode": 1}}),
            [(MRR, "minRoleReplicas is immutable")],
        ),
        (GANG, {}, [("spec.template", "gangPolicy is required once set")]),
        (template(gangPolicy={}), {}, [("spec.template", "gangPolicy is required once set")]),
        (GANG, GANG, []),
        (GANG, template(gangPolicy={}), []),  # the CEL transition rule needs the field on both sides
        ({}, GANG, []),  # adding a gangPolicy is allowed
        (GANG, merge(GANG, spec(replicas=5)), []),
    ],
)
def test_update_rules(old, new, expected) -> None:
    assert pairs(validate_modelserving(ms(new), ms(old))) == expected
    assert validate_modelserving(ms(new)) == [] or expected == []


def test_validate_with_old_raises() -> None:
    with pytest.raises(SpecError) as exc:
        ms({}).validate(old=ms(GANG))
    assert str(exc.value.errors[0]) == 'spec.template: Invalid value: "object": gangPolicy is required once set'


def test_a_fleet_no_int32_can_count_is_refused_at_once() -> None:
    """pulumi-lws, as LeaderWorkerSet's ``replicas x size``: (replicas + maxSurge) ServingGroups of
    Σ (role replicas + role maxSurge) x (workerReplicas + 1) pods must fit an int32 (the PodGroup's
    ``minMember``); otherwise ``maxSurge: 2147483647`` would render two billion surge groups."""
    ok = ms(sg(maxSurge=2**29 - 3))  # (2 + 2**29 - 3 + ...) groups x 4 pods < 2**31
    assert [e for e in validate_modelserving(ok) if e.path == "spec.replicas"] == []
    bad = validate_modelserving(ms(sg(maxSurge=2**31 - 1)))
    assert [(e.path, e.value) for e in bad] == [("spec.replicas", 2)]
    assert "= 8589934596) must not exceed 2147483647" in bad[0].message
