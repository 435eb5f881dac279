"""``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet: typed model, upstream defaults, manifest I/O.

Pod templates stay Kubernetes-shaped dicts (we never re-model PodSpec). Defaults are upstream's
(webhook ``Default`` + CRD defaults). Validation lives in :mod:`pulumi_lws.api.validation`;
:meth:`LeaderWorkerSet.from_manifest` runs it and raises one :class:`SpecError` listing all
problems.
"""
from __future__ import annotations

import copy
import pathlib
from typing import Any, Literal, Mapping, Optional

import yaml
from pydantic import Field, ValidationError, field_validator

from pulumi_lws.api.common import FieldError, IntOrString, K8sModel, SpecError, scaled_value

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"

RestartPolicy = Literal["RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"]
StartupPolicy = Literal["LeaderCreated", "LeaderReady"]
SubGroupPolicyType = Literal["LeaderWorker", "LeaderExcluded"]
SubdomainPolicy = Literal["Shared", "UniquePerReplica"]
GroupIdentity = Literal["Ordinal", "Hash"]
GroupReplacementPolicy = Literal["PostTermination", "Immediate"]
PodTerminationPolicy = Literal["Sequential", "Parallel"]


class ObjectMeta(K8sModel):
    """The subset of ObjectMeta an LWS manifest carries; server-set fields are accepted and ignored."""

    model_config = K8sModel.model_config | {"extra": "ignore"}

    name: Optional[str] = None
    namespace: Optional[str] = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class SubGroupPolicy(K8sModel):
    sub_group_policy_type: SubGroupPolicyType = "LeaderWorker"
    sub_group_size: Optional[int] = None


class RestartBackoff(K8sModel):
    """Group recreation backoff: ``min(base_seconds * 2**count, cap_seconds)`` from leader creation."""

    base_seconds: int = 10
    cap_seconds: int = 300


class LeaderWorkerTemplate(K8sModel):
    size: int = 1
    leader_template: Optional[dict[str, Any]] = None
    worker_template: dict[str, Any] = Field(default_factory=dict)
    restart_policy: RestartPolicy = "RecreateGroupOnPodRestart"
    sub_group_policy: Optional[SubGroupPolicy] = None
    volume_claim_templates: Optional[list[dict[str, Any]]] = None
    persistent_volume_claim_retention_policy: Optional[dict[str, str]] = None
    max_group_restarts: Optional[int] = None
    restart_backoff: Optional[RestartBackoff] = None

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
    max_unavailable: IntOrString = 1
    max_surge: IntOrString = 0
    partition: int = 0


class RolloutStrategy(K8sModel):
    type: Literal["RollingUpdate"] = "RollingUpdate"
    rolling_update_configuration: RollingUpdateConfiguration = Field(default_factory=RollingUpdateConfiguration)


class NetworkConfig(K8sModel):
    subdomain_policy: Optional[SubdomainPolicy] = "Shared"


class Scheduling(K8sModel):
    """``spec.scheduling`` (workload-aware gang scheduling). Sub-structures stay dicts."""

    model_config = K8sModel.model_config | {"extra": "allow"}

    replica: Optional[dict[str, Any]] = None
    scheduling_policy: Optional[dict[str, Any]] = None
    scheduling_constraints: Optional[dict[str, Any]] = None
    disruption_mode: Optional[str] = None
    resource_claims: Optional[list[dict[str, Any]]] = None

    def level(self) -> str:
        """The active scheduling level: ``lws`` (whole set), ``role`` or ``replica`` (default)."""
        if self.scheduling_policy is not None or self.scheduling_constraints is not None or self.disruption_mode:
            return "lws"
        if self.replica and ("leader" in self.replica or "worker" in self.replica):
            return "role"
        return "replica"


class LeaderWorkerSetSpec(K8sModel):
    replicas: int = 1
    leader_worker_template: LeaderWorkerTemplate = Field(default_factory=LeaderWorkerTemplate)
    startup_policy: StartupPolicy = "LeaderCreated"
    rollout_strategy: RolloutStrategy = Field(default_factory=RolloutStrategy)
    network_config: NetworkConfig = Field(default_factory=NetworkConfig)
    group_identity: GroupIdentity = "Ordinal"
    group_replacement_policy: GroupReplacementPolicy = "PostTermination"
    pod_termination_policy: PodTerminationPolicy = "Sequential"
    scheduling: Optional[Scheduling] = None

    @field_validator("group_identity", "group_replacement_policy", "startup_policy", "pod_termination_policy", mode="before")
    @classmethod
    def _empty_is_default(cls, v: Any, info) -> Any:
        defaults = {
            "group_identity": "Ordinal",
            "group_replacement_policy": "PostTermination",
            "startup_policy": "LeaderCreated",
            "pod_termination_policy": "Sequential",
        }
        return defaults[info.field_name] if v in (None, "") else v

    @field_validator("network_config", mode="before")
    @classmethod
    def _default_network_config(cls, v: Any) -> Any:
        return {"subdomainPolicy": "Shared"} if v is None else v

    @field_validator("rollout_strategy", mode="before")
    @classmethod
    def _default_rollout(cls, v: Any) -> Any:
        return {} if v is None else v


class LeaderWorkerSet(K8sModel):
    """A LeaderWorkerSet, as upstream's CRD accepts it. ``status`` in a manifest is ignored."""

    model_config = K8sModel.model_config | {"extra": "ignore"}

    api_version: Literal["leaderworkerset.x-k8s.io/v1"] = API_VERSION
    kind: Literal["LeaderWorkerSet"] = KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: LeaderWorkerSetSpec = Field(default_factory=LeaderWorkerSetSpec)

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_manifest(cls, source: "str | pathlib.Path | Mapping[str, Any]", *, validate: bool = True,
                      namespace: str | None = None) -> "LeaderWorkerSet":
        """Build from an upstream manifest: a dict, YAML text, or a path to a YAML file.

        Accepts the manifest unchanged. Raises :class:`SpecError` (every problem, with field
        paths) when the manifest is not a valid LeaderWorkerSet.
        """
        data = load_manifest(source)
        lws = cls.parse(data)
        if namespace and not lws.metadata.namespace:
            lws.metadata.namespace = namespace
        if validate:
            lws.validate()
        return lws

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> "LeaderWorkerSet":
        """Type-check a dict (camelCase or snake_case keys) without the semantic rules."""
        name = (data.get("metadata") or {}).get("name") if isinstance(data, Mapping) else None
        try:
            return cls.model_validate(copy.deepcopy(dict(data)))
        except ValidationError as exc:
            raise SpecError(KIND, name, pydantic_field_errors(exc)) from None

    def validate(self, old: "LeaderWorkerSet | None" = None) -> "LeaderWorkerSet":
        """Run every upstream validation rule (plus pulumi-lws name budgets); raise on any error.

        ``old`` enables the update-only rules (immutable fields).
        """
        from pulumi_lws.api.validation import validate_leaderworkerset

        errors = validate_leaderworkerset(self, old)
        if errors:
            raise SpecError(KIND, self.metadata.name, errors)
        return self

    # ---- derived values ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

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

    def to_wire(self) -> dict[str, Any]:
        out = super().to_wire()
        out["metadata"] = {k: v for k, v in out.get("metadata", {}).items() if v not in ({}, None)}
        return out


def load_manifest(source: "str | pathlib.Path | Mapping[str, Any]") -> dict[str, Any]:
    """A manifest dict from a dict, a YAML/JSON string or a file path (first document)."""
    if isinstance(source, Mapping):
        return dict(source)
    text: str
    if isinstance(source, pathlib.Path) or (isinstance(source, str) and "\n" not in source and source.endswith((".yaml", ".yml", ".json"))):
        text = pathlib.Path(source).read_text()
    else:
        text = str(source)
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    if not docs:
        raise SpecError(KIND, None, [FieldError("<manifest>", "no YAML document found")])
    if not isinstance(docs[0], Mapping):
        raise SpecError(KIND, None, [FieldError("<manifest>", "expected a mapping at the top level")])
    return dict(docs[0])


def _wire_path(loc: tuple[Any, ...]) -> str:
    from pydantic.alias_generators import to_camel

    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "literal[", "str", "int")):
            continue  # pydantic union-branch markers, not fields
        else:
            key = to_camel(str(part)) if "_" in str(part) else str(part)
            out += ("." if out else "") + key
    return out or "<root>"


def pydantic_field_errors(exc: ValidationError) -> list[FieldError]:
    """Translate pydantic errors into wire-path FieldErrors with Kubernetes-style messages."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for err in exc.errors():
        path = _wire_path(err["loc"])
        typ = err["type"]
        value = err.get("input")
        if typ == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            msg = f"Unsupported value: {value!r}: supported values: {expected}"
        elif typ == "extra_forbidden":
            msg = "unknown field"
            value = None
        elif typ == "missing":
            msg = "Required value"
            value = None
        elif typ.startswith("int_") or typ.startswith("string_"):
            msg = f"Invalid value: expected {'an integer' if typ.startswith('int') else 'a string'}"
        else:
            msg = err["msg"]
        key = f"{path}|{msg}"
        if key in seen:
            continue  # IntOrString reports one error per union branch
        seen.add(key)
        errors.append(FieldError(path, msg, None if typ in ("missing", "extra_forbidden") else value))
    return errors
