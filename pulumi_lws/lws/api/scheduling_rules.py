"""Workload-aware (gang) scheduling rules of ``spec.scheduling`` (upstream webhook, §5.5), create
and update. Split from :mod:`pulumi_lws.lws.api.validation`, which runs them in rule order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.fields import LWT, SCHED, Errors
from pulumi_lws.lws.api.fields import err as _err

if TYPE_CHECKING:
    from pulumi_lws.lws.api.leaderworkerset import GangUnit, LeaderWorkerSet


# ---- §5.5 workload-aware (gang) scheduling --------------------------------------------------
def _sched(lws: LeaderWorkerSet) -> dict[str, Any] | None:
    s = lws.spec.scheduling
    return None if s is None else s.to_wire()


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _units(lws: LeaderWorkerSet) -> list[GangUnit]:
    return [] if lws.spec.scheduling is None else lws.spec.scheduling.gang_units(lws.replicas, lws.size)


def _priority_class(template: dict[str, Any] | None) -> str:
    return _dict(_dict(template).get("spec")).get("priorityClassName") or ""


def scheduling_one_level(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.scheduling is None or len(levels := lws.spec.scheduling.levels()) == 1:
        return []
    return _err(SCHED, f"phase 1 requires exactly one active scheduling level, got [{' '.join(levels)}]")


def scheduling_rejects_leader_ready(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.startup_policy == "LeaderReady" and any(u.gang and u.leader_and_workers for u in _units(lws)):
        return _err(SCHED, "a gang containing the leader and workers is incompatible with startupPolicy LeaderReady")
    return []


def scheduling_rejects_exclusive_topology(lws: LeaderWorkerSet) -> Errors:
    s = lws.spec.scheduling
    if (
        L.EXCLUSIVE_TOPOLOGY in lws.metadata.annotations
        and s is not None
        and (any(u.gang for u in _units(lws)) or s.has_constraints())
    ):
        return _err(
            SCHED,
            "gang scheduling or workload topology constraints cannot be combined with exclusive topology in alpha",
        )
    return []


def scheduling_min_count_is_membership(lws: LeaderWorkerSet) -> Errors:
    errs: Errors = []
    for u in _units(lws):
        if u.min_count is not None and u.min_count != u.members:
            errs += _err(
                f"{u.path}.schedulingPolicy.gang.minCount",
                f"must equal complete leaf membership {u.members}",
                u.min_count,
            )
    return errs


def scheduling_min_group_count_unavailable(lws: LeaderWorkerSet) -> Errors:
    errs: Errors = []
    for u in _units(lws):
        if (mgc := _dict(u.policy.get("gang")).get("minGroupCount")) is not None:
            errs += _err(
                f"{u.path}.schedulingPolicy.gang.minGroupCount",
                "minGroupCount requires CompositePodGroup support and is not available in phase 1",
                mgc,
            )
    return errs


def scheduling_role_needs_size_two(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.scheduling is not None and "role" in lws.spec.scheduling.levels() and lws.size < 2:
        return _err(f"{LWT}.size", "leader/worker scheduling requires size >= 2", lws.size)
    return []


def scheduling_no_user_scheduling_group(lws: LeaderWorkerSet) -> Errors:
    lwt = lws.spec.leader_worker_template
    if lws.spec.scheduling is not None and any(
        "schedulingGroup" in _dict(_dict(t).get("spec")) for t in (lwt.leader_template, lwt.worker_template)
    ):
        return _err(SCHED, "managed pod templates must not set spec.schedulingGroup")
    return []


def scheduling_same_priority_class(lws: LeaderWorkerSet) -> Errors:
    lwt = lws.spec.leader_worker_template
    if (
        lws.spec.scheduling is not None
        and lws.size > 1
        and _priority_class(lwt.leader_pod_template()) != _priority_class(lwt.worker_template)
    ):
        return _err(SCHED, "all managed pod templates must use the same priorityClassName")
    return []


def _claim_keys(claim: Any) -> set[tuple[str, str]]:
    keys = ("name", "resourceClaimName", "resourceClaimTemplateName")
    return {(k, v) for k, v in _dict(claim).items() if k in keys and isinstance(v, str) and v}


def scheduling_resource_claims_referenced(lws: LeaderWorkerSet) -> Errors:
    """Each shared claim must be referenced (same name or same claim/template) by every member template."""
    s, lwt = _sched(lws) or {}, lws.spec.leader_worker_template
    templates = [lwt.leader_pod_template()] + ([lwt.worker_template] if lws.size > 1 else [])
    errs: Errors = []
    for i, claim in enumerate(s.get("resourceClaims") or []):
        keys = _claim_keys(claim)
        for t in templates:
            refs = _dict(_dict(t).get("spec")).get("resourceClaims")
            refs = refs if isinstance(refs, list) else []
            if not any(keys & _claim_keys(r) for r in refs):
                errs += _err(
                    f"{SCHED}.resourceClaims[{i}]", "must have a matching reference in every member pod template", claim
                )
                break
    return errs


def scheduling_presence_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    if old.spec.scheduling is None and lws.spec.scheduling is not None:
        return _err(SCHED, "cannot add spec.scheduling after creation", kind="Forbidden")
    if old.spec.scheduling is not None and lws.spec.scheduling is None:
        return _err(SCHED, "cannot remove spec.scheduling after creation", kind="Forbidden")
    return []


def scheduling_level_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    if lws.spec.scheduling and old.spec.scheduling and lws.spec.scheduling.levels() != old.spec.scheduling.levels():
        return _err(SCHED, "cannot switch the active scheduling level after creation")
    return []


def _without_min_count(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_min_count(x) for k, x in v.items() if k != "minCount"}
    return [_without_min_count(x) for x in v] if isinstance(v, list) else v


def scheduling_fields_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    """Policy, constraints, disruptionMode, resourceClaims are frozen; only gang.minCount may change."""
    new_s, old_s = _sched(lws), _sched(old)
    if (
        new_s is None
        or old_s is None
        or lws.spec.scheduling is None
        or old.spec.scheduling is None
        or lws.spec.scheduling.levels() != old.spec.scheduling.levels()
    ):
        return []
    if _without_min_count(new_s) != _without_min_count(old_s):
        return _err(
            SCHED,
            "schedulingPolicy, schedulingConstraints, disruptionMode and resourceClaims are immutable "
            "after creation (only gang.minCount may change)",
        )
    return []


def priority_class_frozen(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    if lws.spec.scheduling is None or old.spec.scheduling is None:
        return []
    new_pc = _priority_class(lws.spec.leader_worker_template.leader_pod_template())
    if new_pc != _priority_class(old.spec.leader_worker_template.leader_pod_template()):
        return _err(LWT, "cannot change priorityClassName while workload-aware scheduling is configured", new_pc)
    return []
