"""Generated names and the pulumi-lws name budgets, at the 62/63/64-character boundary."""

from __future__ import annotations

import pytest
from ms_base import merge, ms, role, role_ru, roles, sg

from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names as N
from pulumi_lws.modelserving.api.name_rules import (
    largest_group_ordinal,
    largest_role_ordinal,
)
from pulumi_lws.modelserving.api.validation import validate_modelserving


def test_names_keep_upstream_spellings() -> None:
    assert N.group_name("ms", 3) == N.podgroup("ms", 3) == "ms-3"
    assert N.role_id("prefill", 1) == "prefill-1"
    assert N.entry_statefulset("ms", 3, "prefill", 1) == "ms-3-prefill-1"
    assert N.entry_pod("ms", 3, "prefill", 1) == N.service("ms", 3, "prefill", 1) == "ms-3-prefill-1-0"
    assert N.worker_statefulset("ms", 3, "prefill", 1) == "ms-3-prefill-1-w"
    assert N.worker_pod("ms", 3, "prefill", 1, 2) == "ms-3-prefill-1-w-2"
    assert N.controller_revision("ms", "5f7b9c") == "ms-5f7b9c"
    assert N.revision_hash_label("ms-0-a-0") == "ms-0-a-0-" + "x" * 10
    assert N.STATEFULSET_MAX == 52


def test_label_keys() -> None:
    assert (L.NAME, L.GROUP_NAME, L.ROLE, L.ROLE_ID, L.REVISION, L.ROLE_TEMPLATE_HASH, L.ENTRY) == (
        "modelserving.volcano.sh/name",
        "modelserving.volcano.sh/group-name",
        "modelserving.volcano.sh/role",
        "modelserving.volcano.sh/role-id",
        "modelserving.volcano.sh/revision",
        "modelserving.volcano.sh/role-template-hash",
        "modelserving.volcano.sh/entry",
    )
    assert (L.POD_GROUP_ANNOTATION, L.TASK_SPEC_ANNOTATION, L.QUEUE_NAME_ANNOTATION) == (
        "scheduling.k8s.io/group-name",
        "volcano.sh/task-spec",
        "scheduling.volcano.sh/queue-name",
    )
    assert L.ENV_ORDER == ("GROUP_SIZE", "ENTRY_ADDRESS", "WORKER_INDEX")


@pytest.mark.parametrize(
    ("patch", "group", "role_ordinal"),
    [
        ({}, 1, 0),  # replicas 2, role replicas 1
        (sg(maxUnavailable=0, maxSurge=9), 10, 0),  # replicas + maxSurge - 1
        (sg(maxSurge="50%"), 1 + 1, 0),  # 50% of 2 rounds up to 1
        (role_ru(role("a", replicas=3, maxSurge="34%")), 1, 4),  # 34% of 3 rounds up to 2: 3 + 2 - 1
        (
            merge(roles(role("a", replicas=3, maxSurge=5)), {}),
            1,
            2,
        ),  # role maxSurge ignored (forbidden) outside RoleRollingUpdate
        ({"spec": {"replicas": 0}}, 0, 0),
    ],
)
def test_largest_ordinals(patch, group, role_ordinal) -> None:
    m = ms(patch)
    assert largest_group_ordinal(m) == group
    assert largest_role_ordinal(m, m.roles[0]) == role_ordinal


def _budget_errors(name: str, patch: dict) -> list[str]:
    return [
        e.message
        for e in validate_modelserving(ms(merge({"metadata": {"name": name}}, patch)))
        if "pulumi-lws name budget" in e.message
    ]


# entry StatefulSet "<ms>-1-a-0" (6 + len(ms)); its pods' hash label adds 11: 62/63/64 at len(ms) 45/46/47
NO_WORKERS = roles(role("a", workerReplicas=0, workerTemplate="DELETE"))
# worker StatefulSet "<ms>-1-a-0-w" (8 + len(ms)): 62/63/64 at len(ms) 43/44/45
WORKERS = roles(role("a", workerReplicas=4))


@pytest.mark.parametrize(
    ("patch", "length", "what"),
    [
        (NO_WORKERS, 45, None),
        (NO_WORKERS, 46, None),
        (NO_WORKERS, 47, "entry StatefulSet"),
        (WORKERS, 43, None),
        (WORKERS, 44, None),
        (WORKERS, 45, "worker StatefulSet"),
        # a surge to ServingGroup 10 adds one digit: 63 at len(ms) 45, 64 at 46
        (merge(NO_WORKERS, sg(maxSurge=9)), 45, None),
        (merge(NO_WORKERS, sg(maxSurge=9)), 46, "entry StatefulSet"),
        # a role surge to replica 10 under RoleRollingUpdate adds one digit too
        (role_ru(role("a", workerReplicas=0, workerTemplate="DELETE", maxSurge=10)), 45, None),
        (role_ru(role("a", workerReplicas=0, workerTemplate="DELETE", maxSurge=10)), 46, "entry StatefulSet"),
    ],
)
def test_statefulset_hash_label_boundary(patch, length, what) -> None:
    errs = _budget_errors("m" * length, patch)
    if what is None:
        assert errs == []
    else:
        assert len(errs) == 1 and errs[0].startswith(f'{what} "') and "(64 characters)" in errs[0]
        assert "at most 52; shorten metadata.name or the role name by 1 (pulumi-lws name budget)" in errs[0]


def test_budget_message_names_the_object_and_limit() -> None:
    (err,) = [
        e for e in validate_modelserving(ms(merge({"metadata": {"name": "m" * 45}}, WORKERS))) if "budget" in e.message
    ]
    assert err.path == "metadata.name" and err.value == "m" * 45
    assert err.message == (
        'worker StatefulSet "' + "m" * 45 + '-1-a-0-w" (ServingGroup 1, role a replica 0: the largest ordinals a '
        'rollout reaches) is 53 characters: its pods get the label controller-revision-hash "'
        + "m"
        * 45
        + '-1-a-0-w-<10-character hash>" (64 characters) and a label value is at most 63, so this name may have at '
        "most 52; shorten metadata.name or the role name by 1 (pulumi-lws name budget)"
    )


def test_one_budget_error_per_role() -> None:
    errs = _budget_errors("m" * 50, roles(role("a"), role("b", workerReplicas=0, workerTemplate="DELETE")))
    assert [e.split(" (")[0] for e in errs] == [
        'worker StatefulSet "' + "m" * 50 + '-1-a-0-w"',
        'entry StatefulSet "' + "m" * 50 + '-1-b-0"',
    ]


def test_longest_valid_role_name_fits_with_a_short_name() -> None:
    # role names are at most 12 characters (CRD); a 30-character ModelServing fits any rollout up to 9999 groups
    assert _budget_errors("m" * 30, merge(roles(role("abcdefghijkl")), {"spec": {"replicas": 9999}})) == []
