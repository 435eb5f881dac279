"""``workload.serving.volcano.sh/v1alpha1`` ModelServing: typed model, CRD defaults, manifest I/O.

Invariants:

* every upstream field is modelled (``pkg/apis/workload/v1alpha1`` with PR #1626's ``maxSurge``);
  attributes are snake_case, the wire is camelCase; unknown fields are rejected with their path;
  ``null`` means unset (the CRD default applies);
* CRD defaults are applied at parse time (``replicas: 1``, ``schedulerName: volcano``, plugin
  ``type: BuiltIn``, ``restartGracePeriodSeconds: 0``, role ``replicas: 1`` and
  ``maxUnavailable: 1``, ``rolloutStrategy.type: ServingGroupRollingUpdate`` and
  ``rollingUpdateConfiguration.maxUnavailable: 1`` when those objects exist,
  ``networkTopology.*.mode: hard``, ``recoveryPolicy: RoleRecreate``). Fields with no CRD
  default stay ``None`` (``rolloutStrategy``, ``maxSurge``, ``partition``, ``workerTemplate``);
  the accessors below give their effective values;
* pod templates stay Kubernetes-shaped dicts (``{metadata, spec}``): PodSpec is never re-modelled;
* type errors raise :class:`SpecError` with wire paths (``spec.template.roles[0].workerReplicas``)
  from the constructor and :meth:`ModelServing.parse`; the semantic rules (webhook + CRD +
  pulumi-lws name budgets) live in :mod:`pulumi_lws.modelserving.api.validation` and run in
  :meth:`ModelServing.validate` / :meth:`ModelServing.from_manifest`, all errors at once.
"""

# ruff: noqa: UP045  (fields use typing.Optional: core.model.wire_path maps Optional, not PEP 604 unions, to wire paths)
from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal, Optional

from pydantic import Field, field_validator

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.model import Int32, IntOrString, K8sInt, K8sModel
from pulumi_lws.core.k8s.objectmeta import ObjectMeta
from pulumi_lws.core.k8s.podspec import without_nulls
from pulumi_lws.core.k8s.resource import ManifestResource
from pulumi_lws.core.k8s.resource import load_manifest as load_resource_manifest
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.modelserving.api.validation import validate_modelserving

API_VERSION: Final = "workload.serving.volcano.sh/v1alpha1"
KIND: Final = "ModelServing"

SERVING_GROUP_ROLLING_UPDATE = "ServingGroupRollingUpdate"
ROLE_ROLLING_UPDATE = "RoleRollingUpdate"
SERVING_GROUP_RECREATE, ROLE_RECREATE, RECOVERY_NONE = "ServingGroupRecreate", "RoleRecreate", "None"

RolloutStrategyType = Literal["ServingGroupRollingUpdate", "RoleRollingUpdate"]
RecoveryPolicy = Literal["ServingGroupRecreate", "RoleRecreate", "None"]
PluginType = Literal["BuiltIn"]
NetworkTopologyMode = Literal["hard", "soft"]


class PluginScope(K8sModel):
    """``plugins[].scope``. ``target`` has no enum/default in the CRD (upstream marker typo)."""

    roles: Optional[list[str]] = None
    target: Optional[str] = None


class PluginSpec(K8sModel):
    """``spec.plugins[]``: ``name`` required, ``type`` defaults to BuiltIn; ``config`` is any JSON."""

    name: str
    type: PluginType = "BuiltIn"
    config: Optional[Any] = None
    scope: Optional[PluginScope] = None


class NetworkTopologySpec(K8sModel):
    """Volcano ``NetworkTopologySpec``; bounds (``>= 0``, ``<= 253``) are checked by validation."""

    mode: NetworkTopologyMode = "hard"
    highest_tier_allowed: Optional[K8sInt] = None
    highest_tier_name: Optional[str] = None


class NetworkTopology(K8sModel):
    """``template.networkTopology``: ``groupPolicy`` -> PodGroup, ``rolePolicy`` -> every subGroupPolicy."""

    group_policy: Optional[NetworkTopologySpec] = None
    role_policy: Optional[NetworkTopologySpec] = None


class GangPolicy(K8sModel):
    """``template.gangPolicy``; ``minRoleReplicas`` is immutable once set (CRD CEL)."""

    min_role_replicas: Optional[dict[str, Int32]] = None


class Role(K8sModel):
    """``template.roles[]``. The rolling-update budgets are inlined (only RoleRollingUpdate uses them).

    ``maxUnavailable`` carries the CRD default 1 on every role; ``maxSurge``/``partition`` stay
    ``None`` when unset (= 0). ``workerReplicas`` is required, ``workerTemplate`` optional.
    """

    name: str
    replicas: Int32 = 1
    entry_template: dict[str, Any]
    worker_replicas: Int32
    worker_template: Optional[dict[str, Any]] = None
    max_unavailable: IntOrString = 1
    max_surge: Optional[IntOrString] = None
    partition: Optional[IntOrString] = None

    @field_validator("entry_template", "worker_template", mode="before")
    @classmethod
    def _drop_nulls(cls, v: Any) -> Any:
        # Kubernetes JSON: `field: null` anywhere in an embedded object means "unset".
        return without_nulls(v)


class RollingUpdateConfiguration(K8sModel):
    """``rolloutStrategy.rollingUpdateConfiguration`` (ServingGroupRollingUpdate only)."""

    max_unavailable: IntOrString = 1
    max_surge: Optional[IntOrString] = None
    partition: Optional[IntOrString] = None


class RolloutStrategy(K8sModel):
    type: RolloutStrategyType = "ServingGroupRollingUpdate"
    rolling_update_configuration: Optional[RollingUpdateConfiguration] = None


class ServingGroupTemplate(K8sModel):
    """``spec.template``: one ServingGroup's shape. ``roles`` is required (1..4 checked by validation)."""

    restart_grace_period_seconds: K8sInt = 0
    gang_policy: Optional[GangPolicy] = None
    network_topology: Optional[NetworkTopology] = None
    roles: list[Role]


class ModelServingSpec(K8sModel):
    replicas: Int32 = 1
    scheduler_name: str = "volcano"
    plugins: Optional[list[PluginSpec]] = None
    template: ServingGroupTemplate
    rollout_strategy: Optional[RolloutStrategy] = None
    recovery_policy: RecoveryPolicy = "RoleRecreate"


class ModelServing(ManifestResource):
    """A ModelServing as upstream's CRD accepts it. ``status`` in a manifest is ignored.

    Both ``ModelServing(metadata=..., spec=...)`` (snake_case or camelCase keys) and
    :meth:`parse` raise :class:`SpecError` (wire paths) on a type error.
    """

    api_version: Literal["workload.serving.volcano.sh/v1alpha1"] = API_VERSION
    kind: Literal["ModelServing"] = KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ModelServingSpec

    KIND: ClassVar[str] = KIND

    def validation_errors(self, old: ModelServing | None = None) -> list[FieldError]:
        """Every rule (webhook, CRD, name budgets; with ``old`` the update rules)."""
        return validate_modelserving(self, old)

    # ---- derived values -------------------------------------------------------------------
    @property
    def replicas(self) -> int:
        return self.spec.replicas

    @property
    def roles(self) -> list[Role]:
        return self.spec.template.roles

    @property
    def strategy(self) -> str:
        """The effective rollout type (a nil ``rolloutStrategy`` means ServingGroupRollingUpdate)."""
        rs = self.spec.rollout_strategy
        return rs.type if rs is not None else SERVING_GROUP_ROLLING_UPDATE

    def role(self, name: str) -> Role:
        """The role called ``name``; KeyError when there is none."""
        for r in self.spec.template.roles:
            if r.name == name:
                return r
        raise KeyError(name)

    def rolling_update_configuration(self) -> RollingUpdateConfiguration:
        """The ServingGroup budgets as written, or the defaults (``maxUnavailable: 1``) when unset."""
        rs = self.spec.rollout_strategy
        if rs is None or rs.rolling_update_configuration is None:
            return RollingUpdateConfiguration()
        return rs.rolling_update_configuration

    def max_unavailable(self) -> int:
        """ServingGroup maxUnavailable: percent of ``spec.replicas`` rounded down (nil -> 1)."""
        return scaled_value(self.rolling_update_configuration().max_unavailable, self.replicas, round_up=False)

    def max_surge(self) -> int:
        """ServingGroup maxSurge: percent of ``spec.replicas`` rounded up (nil -> 0)."""
        ms = self.rolling_update_configuration().max_surge
        return 0 if ms is None else scaled_value(ms, self.replicas, round_up=True)

    def partition(self) -> int:
        """ServingGroup partition: percent of ``spec.replicas`` rounded up (nil -> 0)."""
        p = self.rolling_update_configuration().partition
        return 0 if p is None else scaled_value(p, self.replicas, round_up=True)

    @staticmethod
    def _role(role: Role | str, ms: ModelServing) -> Role:
        return ms.role(role) if isinstance(role, str) else role

    def role_max_unavailable(self, role: Role | str) -> int:
        """Role maxUnavailable: percent of ``role.replicas`` rounded down (CRD default 1)."""
        r = self._role(role, self)
        return scaled_value(r.max_unavailable, r.replicas, round_up=False)

    def role_max_surge(self, role: Role | str) -> int:
        """Role maxSurge: percent of ``role.replicas`` rounded up (nil -> 0)."""
        r = self._role(role, self)
        return 0 if r.max_surge is None else scaled_value(r.max_surge, r.replicas, round_up=True)

    def role_partition(self, role: Role | str) -> int:
        """Role partition: percent of ``role.replicas`` rounded up (nil -> 0)."""
        r = self._role(role, self)
        return 0 if r.partition is None else scaled_value(r.partition, r.replicas, round_up=True)


def load_manifest(source: str | pathlib.Path | Mapping[str, Any]) -> dict[str, Any]:
    """A manifest dict from a dict, YAML/JSON text or a file path (the first ModelServing document)."""
    return load_resource_manifest(source, KIND)
