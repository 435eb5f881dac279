"""RBAC of per-pod values (issue 28): the policy kinds, cluster-scoped, only in ``admission-policy``."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml

from pulumi_lws.rbac import policy_for_manifest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LWS = yaml.safe_load((ROOT / "examples" / "quickstart" / "lws.yaml").read_text())
GROUP = "admissionregistration.k8s.io"
PLURALS = ("mutatingadmissionpolicies", "mutatingadmissionpolicybindings")


def with_mode(mode: str | None) -> dict:
    m = copy.deepcopy(LWS)
    if mode:
        m.setdefault("metadata", {}).setdefault("annotations", {})["pulumi-lws.io/per-pod-values"] = mode
    return m


@pytest.mark.parametrize("plural", PLURALS)
def test_admission_policy_mode_grants_pulumi_kubernetes_the_policy_kinds_cluster_wide(plural: str) -> None:
    granted = policy_for_manifest(with_mode("admission-policy"))
    for verb in ("get", "list", "watch", "create", "patch", "delete"):
        assert granted.allows(GROUP, plural, verb, cluster=True)
        assert not granted.allows(GROUP, plural, verb, cluster=False)  # a Role cannot grant a cluster-scoped kind


@pytest.mark.parametrize("mode", [None, "template"])
def test_template_mode_grants_no_policy_kind(mode: str | None) -> None:
    granted = policy_for_manifest(with_mode(mode))
    assert not any(granted.allows(GROUP, plural, "create", cluster=True) for plural in PLURALS)
    assert not any(g.group == GROUP for g in granted.grants)
