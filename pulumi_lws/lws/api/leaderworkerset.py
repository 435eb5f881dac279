"""``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet: typed model, upstream defaults, manifest I/O.

Pod templates stay Kubernetes-shaped dicts (we never re-model PodSpec; validation checks them
against the Kubernetes 1.35 schema, :mod:`pulumi_lws.core.k8s.podspec`). Defaults are upstream's
(webhook ``Default`` + CRD defaults, reference §5.2); they are applied at parse time, so a parsed
model never holds an "unset" enum, rollout budget or network config. Validation lives in
:mod:`pulumi_lws.lws.api.validation`; :meth:`LeaderWorkerSet.from_manifest` runs it and raises one
:class:`SpecError` listing all problems. Type errors (wrong enum value, unknown field, wrong type)
raise :class:`SpecError` too, from :meth:`LeaderWorkerSet.parse` and from the constructor.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.model import Int32, IntOrString, K8sInt, K8sModel  # noqa: F401  (K8sInt re-exported)
from pulumi_lws.core.k8s.objectmeta import ObjectMeta
from pulumi_lws.core.k8s.podspec import without_nulls
from pulumi_lws.core.k8s.resource import ManifestResource
from pulumi_lws.core.k8s.resource import load_manifest as load_resource_manifest
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.lws.api.validation import validate_leaderworkerset

API_VERSION: Final = "leaderworkerset.x-k8s.io/v1"
KIND: Final = "LeaderWorkerSet"

RestartPolicy = Literal["RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"]
StartupPolicy = Literal["LeaderCreated", "LeaderReady"]
SubGroupPolicyType = Literal["LeaderWorker", "LeaderExcluded"]
SubdomainPolicy = Literal["Shared", "UniquePerReplica"]
GroupIdentity = Literal["Ordinal", "Hash"]
GroupReplacementPolicy = Literal["PostTermination", "Immediate"]
PodTerminationPolicy = Literal["Sequential", "Parallel"]


class SubGroupPolicy(K8sModel):
    """``subGroupPolicy``: type defaults to LeaderWorker; ``subGroupSize`` is checked by validation."""

    sub_group_policy_type: SubGroupPolicyType = "LeaderWorker"
    sub_group_size: Int32 | None = None

    @field_validator("sub_group_policy_type", mode="before")
    @classmethod
    def _empty_type(cls, v: Any) -> Any:
        return "LeaderWorker" if v == "" else v


class RestartBackoff(K8sModel):
    """Group recreation backoff: ``min(base_seconds * 2**count, cap_seconds)`` from leader creation."""

    base_seconds: Int32 = 10
    cap_seconds: Int32 = 300


class LeaderWorkerTemplate(K8sModel):
    """``spec.leaderWorkerTemplate``: everything here is covered by the revision key."""

    size: Int32 = 1
    leader_template: dict[str, Any] | None = None
    worker_template: dict[str, Any] = Field(default_factory=dict)
    restart_policy: RestartPolicy = "RecreateGroupOnPodRestart"
    sub_group_policy: SubGroupPolicy | None = None
    volume_claim_templates: list[dict[str, Any]] | None = None
    persistent_volume_claim_retention_policy: dict[str, str] | None = None
    max_group_restarts: Int32 | None = None
    restart_backoff: RestartBackoff | None = None

    @field_validator(
        "leader_template",
        "worker_template",
        "volume_claim_templates",
        "persistent_volume_claim_retention_policy",
        mode="before",
    )
    @classmethod
    def _drop_nulls(cls, v: Any) -> Any:
        # Kubernetes JSON: `field: null` anywhere in an embedded object means "unset".
        return without_nulls(v)

    @field_validator("restart_policy", mode="before")
    @classmethod
    def _default_restart_policy(cls, v: Any) -> Any:
        # Upstream webhook: "" -> RecreateGroupOnPodRestart, deprecated "Default" -> None.
        if v in (None, ""):
            return "RecreateGroupOnPodRestart"
        if v == "Default":
            return "None"
        return v

    def leader_pod_template(self) -> dict[str, Any]:
        """leaderTemplate, or workerTemplate when leaderTemplate is omitted (upstream rule)."""
        return self.leader_template if self.leader_template is not None else self.worker_template


class RollingUpdateConfiguration(K8sModel):
    """Budgets as written (IntOrString); scale them with :meth:`LeaderWorkerSet.max_surge` etc."""

    max_unavailable: IntOrString = 1
    max_surge: IntOrString = 0
    partition: Int32 = 0


class RolloutStrategy(K8sModel):
    type: Literal["RollingUpdate"] = "RollingUpdate"
    rolling_update_configuration: RollingUpdateConfiguration = Field(default_factory=RollingUpdateConfiguration)

    @field_validator("type", mode="before")
    @classmethod
    def _empty_type(cls, v: Any) -> Any:
        return "RollingUpdate" if v == "" else v


class NetworkConfig(K8sModel):
    """``networkConfig``; ``subdomainPolicy`` is always set after parsing (nil -> Shared).

    Whether the input left ``subdomainPolicy`` nil inside a present ``networkConfig`` is kept in
    :attr:`subdomain_policy_was_nil` for the update rule U4 (``cannot set subdomainPolicy as null``).
    """

    subdomain_policy: SubdomainPolicy = "Shared"
    _subdomain_policy_nil: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_nil(cls, data: Any, handler: Any) -> Any:
        nil = isinstance(data, Mapping) and all(data.get(k) is None for k in ("subdomainPolicy", "subdomain_policy"))
        out = handler(data)
        if nil:
            out._subdomain_policy_nil = True
        return out

    @property
    def subdomain_policy_was_nil(self) -> bool:
        return self._subdomain_policy_nil


def _as_dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


@dataclass(frozen=True)
class GangUnit:
    """One PodGroup template a scheduling level asks for.

    ``path``: wire path of the level (``spec.scheduling``, ``spec.scheduling.replica``,
    ``spec.scheduling.replica.leader|worker``); ``members``: complete membership (lws:
    ``max(replicas*size, 1)``, replica: ``size``, leader: 1, worker: ``size-1``);
    ``leader_and_workers``: the gang holds a leader and its workers; ``policy``: the
    ``schedulingPolicy`` as written, or ``{"gang": {}}`` where the level defaults to a gang.
    """

    path: str
    members: int
    leader_and_workers: bool
    policy: dict[str, Any]

    @property
    def gang(self) -> bool:
        return "gang" in self.policy

    @property
    def min_count(self) -> Any:
        return _as_dict(self.policy.get("gang")).get("minCount")


class Scheduling(K8sModel):
    """``spec.scheduling`` (workload-aware gang scheduling). Sub-structures stay dicts.

    ``scheduling: {}`` selects the replica level (one gang of ``size`` pods per group).
    """

    replica: dict[str, Any] | None = None
    scheduling_policy: dict[str, Any] | None = None
    scheduling_constraints: dict[str, Any] | None = None
    disruption_mode: dict[str, Any] | str | None = None
    resource_claims: list[dict[str, Any]] | None = None

    def levels(self) -> list[str]:
        """Every scheduling level the spec activates, in the order ``lws``, ``replica``, ``role``.

        A valid spec has exactly one; an empty block means ``["replica"]``.
        """
        out = []
        if self.scheduling_policy is not None or self.scheduling_constraints is not None or self.disruption_mode:
            out.append("lws")
        if self.replica is not None:
            roles = [k for k in self.replica if k in ("leader", "worker")]
            if not roles or len(roles) < len(self.replica):
                out.append("replica")
            if roles:
                out.append("role")
        return out or ["replica"]

    def gang_units(self, replicas: int, size: int) -> list[GangUnit]:
        """The gang units of every active level (replica and role levels default to a gang
        policy; the whole-LWS level defaults to Basic, i.e. no gang unless ``gang`` is set)."""
        out, levels, rep = [], self.levels(), _as_dict(self.replica)
        if "lws" in levels:
            out.append(GangUnit("spec.scheduling", max(replicas * size, 1), True, _as_dict(self.scheduling_policy)))
        if "replica" in levels:
            out.append(
                GangUnit("spec.scheduling.replica", size, True, _as_dict(rep.get("schedulingPolicy")) or {"gang": {}})
            )
        for role, members in (("leader", 1), ("worker", size - 1)):
            if "role" in levels and role in rep:
                pol = _as_dict(_as_dict(rep[role]).get("schedulingPolicy")) or {"gang": {}}
                out.append(GangUnit(f"spec.scheduling.replica.{role}", members, False, pol))
        return out

    def has_constraints(self) -> bool:
        """``schedulingConstraints`` (workload topology) is set at any level."""
        rep = _as_dict(self.replica)
        return any(
            c is not None
            for c in [self.scheduling_constraints, rep.get("schedulingConstraints")]
            + [_as_dict(rep.get(r)).get("schedulingConstraints") for r in ("leader", "worker")]
        )

    def level(self) -> str:
        """The active scheduling level: ``lws`` (whole set), ``role`` or ``replica`` (default)."""
        if self.scheduling_policy is not None or self.scheduling_constraints is not None or self.disruption_mode:
            return "lws"
        if self.replica and ("leader" in self.replica or "worker" in self.replica):
            return "role"
        return "replica"


class LeaderWorkerSetSpec(K8sModel):
    """``spec`` with upstream defaults; ``""`` enum values mean "unset" like upstream's webhook."""

    replicas: Int32 = 1
    leader_worker_template: LeaderWorkerTemplate = Field(default_factory=LeaderWorkerTemplate)
    startup_policy: StartupPolicy = "LeaderCreated"
    rollout_strategy: RolloutStrategy = Field(default_factory=RolloutStrategy)
    network_config: NetworkConfig = Field(default_factory=lambda: NetworkConfig(subdomain_policy="Shared"))
    group_identity: GroupIdentity = "Ordinal"
    group_replacement_policy: GroupReplacementPolicy = "PostTermination"
    pod_termination_policy: PodTerminationPolicy = "Sequential"
    scheduling: Scheduling | None = None

    @field_validator(
        "group_identity", "group_replacement_policy", "startup_policy", "pod_termination_policy", mode="before"
    )
    @classmethod
    def _empty_is_default(cls, v: Any, info: ValidationInfo) -> Any:
        defaults = {
            "group_identity": "Ordinal",
            "group_replacement_policy": "PostTermination",
            "startup_policy": "LeaderCreated",
            "pod_termination_policy": "Sequential",
        }
        return defaults[str(info.field_name)] if v in (None, "") else v


class LeaderWorkerSet(ManifestResource):
    """A LeaderWorkerSet, as upstream's CRD accepts it. ``status`` in a manifest is ignored.

    Both ``LeaderWorkerSet(metadata=..., spec=...)`` (snake_case or camelCase keys) and
    :meth:`parse` raise :class:`SpecError` (wire paths) on a type error.
    """

    api_version: Literal["leaderworkerset.x-k8s.io/v1"] = API_VERSION
    kind: Literal["LeaderWorkerSet"] = KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: LeaderWorkerSetSpec = Field(default_factory=LeaderWorkerSetSpec)

    KIND: ClassVar[str] = KIND

    def validation_errors(self, old: LeaderWorkerSet | None = None) -> list[FieldError]:
        """Every upstream validation rule (plus pulumi-lws name budgets); ``old`` enables the
        update-only rules (immutable fields)."""
        return validate_leaderworkerset(self, old)

    # ---- derived values ---------------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.spec.leader_worker_template.size

    @property
    def replicas(self) -> int:
        return self.spec.replicas

    def max_surge(self) -> int:
        """Scaled maxSurge: percent of replicas rounded up, then capped at replicas (Ordinal rule)."""
        cfg = self.spec.rollout_strategy.rolling_update_configuration
        return min(scaled_value(cfg.max_surge, self.replicas, round_up=True), self.replicas)

    def max_unavailable(self) -> int:
        """Scaled maxUnavailable: percent of replicas rounded down."""
        cfg = self.spec.rollout_strategy.rolling_update_configuration
        return scaled_value(cfg.max_unavailable, self.replicas, round_up=False)

    def user_partition(self) -> int:
        return self.spec.rollout_strategy.rolling_update_configuration.partition


def load_manifest(source: str | pathlib.Path | Mapping[str, Any]) -> dict[str, Any]:
    """A manifest dict from a dict, YAML/JSON text or a file path (the first LeaderWorkerSet document)."""
    return load_resource_manifest(source, KIND)
