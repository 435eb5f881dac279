"""What the DisaggregatedSet stage planner reads: plain values, no API model, no cluster objects.

The reconcile builds these from its snapshot (one child LeaderWorkerSet per slice, revision and
role: its ``spec.replicas``, ``status.readyReplicas`` and ``disaggregatedset.x-k8s.io/
initial-replicas`` annotation) and from the spec (per-role target replicas and resolved budgets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pulumi_lws.disaggregatedset.planner import DEFAULT_CONFIG, RollingUpdateConfig


@dataclass(frozen=True)
class ChildObservation:
    """One child LWS as observed: ``spec.replicas``, ready replicas, ``initial-replicas`` (None when
    absent) and ``live``: the groups it runs (None: ``replicas``) — more than ``replicas`` while
    the LWS controller keeps unready surge groups during a scale-down (the surge ceiling counts them)."""

    replicas: int
    ready: int = 0
    initial_replicas: int | None = None
    live: int | None = None
    #: the ``pulumi-lws.io/replaces-revisions`` annotation (None: absent): this target child is
    #: still catching up on a rollout from those revisions (labels.REPLACES)
    replaces: str | None = None


@dataclass(frozen=True)
class RevisionObservation:
    """The children of one revision in one slice, by role name."""

    revision: str
    children: Mapping[str, ChildObservation] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(c.replicas for c in self.children.values())


@dataclass(frozen=True)
class SliceObservation:
    """Every revision observed in one slice, **newest first** (upstream: max creationTimestamp of its
    children). The target revision may be among them."""

    slice: int
    revisions: tuple[RevisionObservation, ...] = ()

    def revision(self, name: str) -> RevisionObservation | None:
        return next((r for r in self.revisions if r.revision == name), None)


@dataclass(frozen=True)
class RoleTarget:
    """One spec role: its per-slice target replicas and resolved budgets.

    ``replicas``: Static -> ``role.spec.replicas`` (nil -> 1, resolved by the caller); External ->
    the scaler's value read back this reconcile, or None when there is none (upstream then keeps
    the child's current replicas). ``config``: :func:`pulumi_lws.disaggregatedset.planner.
    extract_rolling_update_config` of the role. ``external`` arms upstream's no-shrink guard.
    """

    name: str
    replicas: int | None
    config: RollingUpdateConfig = DEFAULT_CONFIG
    external: bool = False
