"""``disaggregatedset.x-k8s.io/v1`` DisaggregatedSet: typed model, embedded CRD defaults, manifest I/O.

Invariants:

* the role's embedded ``metadata`` and ``spec`` ARE the LeaderWorkerSet types
  (:class:`pulumi_lws.core.k8s.objectmeta.ObjectMeta`, :class:`LeaderWorkerSetSpec`), so a
  role's spec is the child LWS's spec (:meth:`DisaggregatedSet.role_spec_as_lws`);
* the embedded CRD defaults hold after parsing: ``replicas 1``, ``startupPolicy LeaderCreated``,
  ``rolloutStrategy.type RollingUpdate``, ``leaderWorkerTemplate.size 1``, ``restartPolicy
  RecreateGroupOnPodRestart`` and, **only when the object is written**, ``rollingUpdateConfiguration
  {maxSurge 0, maxUnavailable 1, partition 0}``. The LWS type always holds a configuration, so
  whether the manifest wrote one is kept per role (:meth:`DisaggregatedSet.rolling_update_config_given`):
  the rollout planner defaults an omitted one to ``{surge 1, unavailable 0}`` (addenda §4.1), which
  differs from ``{}`` (CRD defaults: surge 0, unavailable 1);
* the LWS type's other defaults (networkConfig Shared, groupIdentity Ordinal, ...) are what the
  child LWS gets from the LWS webhook; ``""`` where the embedded CRD has an enum is kept as written
  (:meth:`DisaggregatedRole.empty_enum_paths`) so validation rejects it as the CRD does;
* ``slices`` defaults to 1; ``placementPolicy`` stays ``None`` when omitted (effective type
  ``None``: :meth:`DisaggregatedSet.placement_type`); ``scaling.mode`` defaults to Static;
* type errors (unknown field, wrong enum, wrong type) raise :class:`SpecError` with wire paths
  from the constructor and :meth:`DisaggregatedSet.parse`; the semantic rules live in
  :mod:`pulumi_lws.disaggregatedset.api.validation` and run in :meth:`DisaggregatedSet.validate`
  / :meth:`DisaggregatedSet.from_manifest`, all errors at once. Warnings (upstream's admission
  warnings) never fail: :meth:`DisaggregatedSet.warnings`.
"""

# ruff: noqa: UP045  (fields use typing.Optional: core.model.wire_path maps Optional, not PEP 604 unions, to wire paths)
from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal, Optional

from pydantic import Field, PrivateAttr, model_validator

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.model import Int32, K8sModel
from pulumi_lws.core.k8s.objectmeta import ObjectMeta
from pulumi_lws.core.k8s.resource import ManifestResource
from pulumi_lws.core.k8s.resource import load_manifest as load_resource_manifest
from pulumi_lws.disaggregatedset.api.validation import (
    disaggregatedset_warnings,
    validate_disaggregatedset,
)
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet, LeaderWorkerSetSpec
from pulumi_lws.lws.api.per_pod_rules import MODES, PER_POD_VALUES, POLICY_API_VERSION, POLICY_VERSIONS

API_VERSION: Final = "disaggregatedset.x-k8s.io/v1"
KIND: Final = "DisaggregatedSet"

STATIC, EXTERNAL = "Static", "External"
PLACEMENT_NONE, EXCLUSIVE_SLICE, EXCLUSIVE_TOPOLOGY = "None", "ExclusiveSlice", "ExclusiveTopology"

RoleScalingMode = Literal["Static", "External"]
PlacementType = Literal["None", "ExclusiveSlice", "ExclusiveTopology"]

#: embedded-CRD enums the LWS type reads ``""`` as its default for; the DS CRD rejects ``""``.
#: (path inside the role's ``spec``, supported values)
_EMBEDDED_ENUMS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("rolloutStrategy", "type"), ("RollingUpdate",)),
    (("startupPolicy",), ("LeaderCreated", "LeaderReady")),
    (
        ("leaderWorkerTemplate", "restartPolicy"),
        ("Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"),
    ),
)


def _get(data: Any, *keys: str) -> Any:
    """``data[k1][k2]...`` accepting camelCase or snake_case keys; None when absent or null."""
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        data = data.get(key) if data.get(key) is not None else data.get(snake)
    return data


class RoleScaling(K8sModel):
    """``scaling``: where a role's replicas come from (Static: ``spec.replicas``; External: the
    DisaggregatedSetRoleScaler ``<ds>-<role>``)."""

    mode: RoleScalingMode = "Static"


class DisaggregatedRole(K8sModel):
    """``spec.roles[i]``: ``name`` + ``scaling`` + the inline LeaderWorkerSetTemplateSpec."""

    name: str
    scaling: RoleScaling = Field(default_factory=RoleScaling)
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: LeaderWorkerSetSpec = Field(default_factory=LeaderWorkerSetSpec)

    _ruc_given: bool = PrivateAttr(default=False)
    _empty_enums: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_raw(cls, data: Any, handler: Any) -> Any:
        given = _get(data, "spec", "rolloutStrategy", "rollingUpdateConfiguration") is not None
        empty = tuple(".".join(("spec",) + path) for path, _ in _EMBEDDED_ENUMS if _get(data, "spec", *path) == "")
        out = handler(data)
        if isinstance(out, DisaggregatedRole) and not isinstance(data, DisaggregatedRole):
            out._ruc_given, out._empty_enums = given, empty
        return out

    @property
    def rolling_update_config_given(self) -> bool:
        """The manifest wrote ``spec.rolloutStrategy.rollingUpdateConfiguration`` (even ``{}``)."""
        return self._ruc_given

    def empty_enum_paths(self) -> list[tuple[str, tuple[str, ...]]]:
        """Role-relative paths where the manifest wrote ``""`` for an embedded-CRD enum, with the
        CRD's supported values (the LWS type read them as the default)."""
        supported = {".".join(("spec",) + p): values for p, values in _EMBEDDED_ENUMS}
        return [(p, supported[p]) for p in self._empty_enums]

    @property
    def external(self) -> bool:
        return self.scaling.mode == EXTERNAL

    @property
    def replicas(self) -> int:
        """``spec.replicas`` as written (CRD default 1); for an External role the scaler decides."""
        return self.spec.replicas


class PlacementPolicy(K8sModel):
    """``spec.placementPolicy``: ``type`` defaults to None; ``topology`` is a node-label key."""

    type: PlacementType = "None"
    topology: Optional[str] = None


class DisaggregatedSetSpec(K8sModel):
    roles: list[DisaggregatedRole]
    slices: Int32 = 1
    placement_policy: Optional[PlacementPolicy] = None


class DisaggregatedSet(ManifestResource):
    """A DisaggregatedSet, as upstream's CRD accepts it. ``status`` in a manifest is ignored."""

    api_version: Literal["disaggregatedset.x-k8s.io/v1"] = API_VERSION
    kind: Literal["DisaggregatedSet"] = KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DisaggregatedSetSpec

    KIND: ClassVar[str] = KIND

    def validation_errors(self, old: DisaggregatedSet | None = None) -> list[FieldError]:
        """Every DS webhook + CRD rule, each role's embedded LWS spec under the LWS rules and the
        generated-name budgets. ``old`` changes nothing (upstream has no update-only rule)."""
        return validate_disaggregatedset(self, old)

    def warnings(self) -> list[str]:
        """Upstream's admission warnings (never errors): External role with ``spec.replicas > 1``."""
        return disaggregatedset_warnings(self)

    # ---- derived values ---------------------------------------------------------------------
    @property
    def roles(self) -> list[DisaggregatedRole]:
        return self.spec.roles

    @property
    def role_names(self) -> list[str]:
        return [r.name for r in self.spec.roles]

    def role(self, name: str) -> DisaggregatedRole:
        """The role called ``name``; KeyError when there is none."""
        for r in self.spec.roles:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def slices(self) -> int:
        return self.spec.slices

    @property
    def placement_type(self) -> str:
        return self.spec.placement_policy.type if self.spec.placement_policy is not None else PLACEMENT_NONE

    @property
    def placement_topology(self) -> str:
        pp = self.spec.placement_policy
        return (pp.topology or "") if pp is not None else ""

    @staticmethod
    def rolling_update_config_given(role: DisaggregatedRole) -> bool:
        """Whether the manifest wrote the role's ``rollingUpdateConfiguration`` (even ``{}``)."""
        return role.rolling_update_config_given

    def role_spec_as_lws(self, role: DisaggregatedRole | str, *, name: str | None = None) -> LeaderWorkerSet:
        """A LeaderWorkerSet built from the role's metadata and spec (deep copies): the child's
        shape before the renderer sets its name, replicas, labels and placement.

        ``name`` defaults to the **role name** (a placeholder: the real child name is
        ``names.child_lws(ds, slice, rev8, role)``); the namespace is the DisaggregatedSet's
        (the role's own ``metadata.namespace`` is ignored, as upstream). Not validated here.
        """
        r = self.role(role) if isinstance(role, str) else role
        meta = ObjectMeta(
            name=name or r.name,
            namespace=self.namespace,
            labels=dict(r.metadata.labels),
            annotations={**self.inherited_annotations(r), **r.metadata.annotations},
        )
        return LeaderWorkerSet(metadata=meta, spec=r.spec.model_copy(deep=True))

    def inherited_annotations(self, role: DisaggregatedRole) -> dict[str, str]:
        """The DisaggregatedSet's own per-pod-values choice (``pulumi-lws.io/per-pod-values``,
        ``pulumi-lws.io/admission-policy-api-version``; component argument ``per_pod_values``),
        given to every Ordinal role that makes no choice of its own (a Hash role keeps
        ``template``: its leaders' keys exist only once they are created). A role's annotation wins."""
        if role.spec.group_identity == "Hash":
            return {}
        own = self.metadata.annotations
        known = {PER_POD_VALUES: MODES, POLICY_API_VERSION: POLICY_VERSIONS}  # a bad one is reported once, at the DS
        return {k: own[k] for k, allowed in known.items() if own.get(k) in allowed}


def load_manifest(source: str | pathlib.Path | Mapping[str, Any]) -> dict[str, Any]:
    """A manifest dict from a dict, YAML/JSON text or a file path (the first DisaggregatedSet document)."""
    return load_resource_manifest(source, KIND)
