"""A test-only fourth workload API, ``ToyServer``: proves the :class:`~pulumi_lws.core.contract.workload.Workload`
contract is all a shell needs (docs/design.md, "The workload contract").

``toy.pulumi-lws.io/v1alpha1 ToyServer``: ``spec.replicas`` groups, each ONE Deployment
``<name>-<i>`` (one pod) from ``spec.template``; a template change replaces one group at a time,
highest ordinal first, only while every existing group is ready (maxUnavailable 1, no surge). A
group's Deployment records its revision (label) and the user's template (annotation), which is
what ``status``, the trace view and rollback read back. Register it for a block with
``with registered_temporarily(TOY):`` (the built-in APIs' tests must not see it).

Nothing in ``pulumi_lws`` names this module: every shell reaches it through the registry.
"""

import contextlib
import copy
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract import workload as W
from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.facts import ArgumentSchema, GangChoice, KindRef, RbacFacts, Words
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.contract.stage import GroupView, PredictedStage, Stage
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.core.contract.trace import GroupCell, GroupsView
from pulumi_lws.core.features.rollback import RecordedRevision

KIND = "ToyServer"
API_VERSION = "toy.pulumi-lws.io/v1alpha1"
NAME = "toy.pulumi-lws.io/name"
GROUP = "toy.pulumi-lws.io/group"
REVISION = "toy.pulumi-lws.io/revision"
TEMPLATE = "toy.pulumi-lws.io/template"
DEPLOYMENT = KindRef("Deployment", "apps/v1")
TEMPLATE_PATH = ("spec", "template")

SAMPLE: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "metadata": {"name": "toy", "namespace": "default"},
    "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
}


@dataclass(frozen=True)
class Meta:
    name: str
    namespace: str
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ToySpec:
    metadata: Meta
    replicas: int
    template: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace


def revision_of(template: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


def _groups(spec: ToySpec, snapshot: Snapshot) -> dict[int, tuple[str, bool, Mapping[str, Any]]]:
    """Observed group ordinal -> (revision, ready, the user's template it runs)."""
    out = {}
    for d in snapshot.list("Deployment", **{NAME: spec.name}):
        labels, meta = labels_of(d), d.get("metadata") or {}
        status = d.get("status") or {}
        fresh = int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)
        ready = (
            fresh and int(status.get("availableReplicas") or 0) >= 1 and int(status.get("updatedReplicas") or 0) >= 1
        )
        template = json.loads((meta.get("annotations") or {}).get(TEMPLATE) or "{}")
        out[int(labels.get(GROUP, -1))] = (str(labels.get(REVISION, "")), ready, template)
    return out


class ToyWorkload(W.Workload):
    """``toy.pulumi-lws.io/v1alpha1`` ToyServer: one Deployment per group, one group replaced at a time."""

    kind = KIND
    api_version = API_VERSION
    upstream = W.UpstreamController(
        group="toy.pulumi-lws.io",
        plural="toyservers",
        controller="a ToyServer controller (none exists: a test-only API)",
    )
    words = Words("ToyServer", "one Deployment per group, one group replaced at a time (a test-only API)")
    arguments = ArgumentSchema(
        fields={
            "name": ("metadata", "name"),
            "namespace": ("metadata", "namespace"),
            "replicas": ("spec", "replicas"),
            "template": TEMPLATE_PATH,
        },
        control=(),
    )
    gang = GangChoice(("kubernetes",))
    rbac = RbacFacts(actions=frozenset(), renders=(DEPLOYMENT,))
    observes = (DEPLOYMENT,)

    def parse(self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True) -> ToySpec:
        errors = []
        if manifest.get("apiVersion") != API_VERSION:
            errors.append(FieldError("apiVersion", f"must be {API_VERSION}", manifest.get("apiVersion")))
        meta = manifest.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            errors.append(FieldError("metadata.name", "Required value"))
        spec = manifest.get("spec") if isinstance(manifest.get("spec"), Mapping) else {}
        replicas = spec.get("replicas", 1)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas <= 1000:
            errors.append(FieldError("spec.replicas", "must be an integer in 0..1000", replicas))
        template = spec.get("template")
        if not isinstance(template, Mapping) or not (template.get("spec") or {}).get("containers"):
            errors.append(FieldError("spec.template.spec.containers", "Required value"))
        if errors:
            raise SpecError(KIND, name if isinstance(name, str) else None, errors)
        return ToySpec(
            Meta(name, namespace or meta.get("namespace") or "default", dict(meta.get("annotations") or {})),
            replicas,
            copy.deepcopy(dict(template)),
        )  # type: ignore[arg-type]

    def validate_update(self, spec: ToySpec, old: ToySpec) -> None:
        return None

    def identity(self, spec: ToySpec) -> tuple[str, str]:
        return spec.namespace, spec.name

    def options(self, **choices: Any) -> None:
        return None

    def scope(self, spec: ToySpec, *, nodes: bool | None = None) -> Scope:
        return Scope(spec.namespace, {NAME: spec.name}, ("Deployment",), bool(nodes))

    def reconcile(self, spec: ToySpec, snapshot: Snapshot, options: Any = None) -> W.Reconciled:
        target, observed = self.target_revision(spec), _groups(spec, snapshot)
        old = sorted((i for i in range(spec.replicas) if i in observed and observed[i][0] != target), reverse=True)
        settled = all(observed[i][1] for i in observed if i < spec.replicas)
        admitted = set(old[:1]) if settled else set()  # maxUnavailable 1: one group at a time
        manifests, views, revisions = [], [], {}
        for i in range(spec.replicas):
            on_target = i not in observed or observed[i][0] == target or i in admitted
            revision, template = (target, spec.template) if on_target else (observed[i][0], observed[i][2])
            ready = i in observed and observed[i][1] and observed[i][0] == revision
            revisions[str(i)] = revision
            views.append(GroupView(str(i), revision, ready, revision == target, index=i))
            manifests.append(self._deployment(spec, i, revision, template))
        pending = [i for i in old if i not in admitted]
        # after this stage, one more pending group (highest ordinal first) per stage
        remaining = tuple(
            PredictedStage(
                spec.replicas,
                None,
                "".join("o" if i in pending[k:] else "U" for i in range(spec.replicas)),
                complete=k == len(pending),
            )
            for k in range(1, len(pending) + 1)
        )
        complete = not old and all(v.ready for v in views) and not [i for i in observed if i >= spec.replicas]
        stage = Stage(
            policy="toy/rolling",
            target_revision=target,
            replicas=spec.replicas,
            partition=None,
            group_revisions=revisions,
            groups=tuple(views),
            complete=complete,
            remaining=remaining,
        )
        return W.Reconciled(stage=stage, manifests=tuple(manifests))

    @staticmethod
    def _deployment(spec: ToySpec, i: int, revision: str, template: Mapping[str, Any]) -> dict[str, Any]:
        selector = {NAME: spec.name, GROUP: str(i)}
        labels = {**selector, REVISION: revision}
        pod = copy.deepcopy(dict(template))
        pod["metadata"] = {
            **(pod.get("metadata") or {}),
            "labels": {**((pod.get("metadata") or {}).get("labels") or {}), **labels},
        }
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": f"{spec.name}-{i}",
                "namespace": spec.namespace,
                "labels": labels,
                "annotations": {TEMPLATE: json.dumps(template, sort_keys=True)},
            },
            "spec": {"replicas": 1, "selector": {"matchLabels": selector}, "template": pod},
        }

    def budgets(self, spec: ToySpec) -> dict[str, W.Budgets]:
        return {"": W.Budgets(spec.replicas, 0, 1)}

    def status(self, spec: ToySpec, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        groups = _groups(spec, snapshot)
        return {
            "replicas": len(groups),
            "readyReplicas": sum(1 for g in groups.values() if g[1]),
            "updatedReplicas": sum(1 for g in groups.values() if g[0] == stage.target_revision),
        }

    def target_revision(self, spec: ToySpec) -> str:
        return revision_of(spec.template)

    def stage_lanes(self, spec: ToySpec) -> Lanes:
        return Lanes.GROUPS

    def trace_view(self, spec: ToySpec, snapshot: Snapshot) -> GroupsView:
        target, cells = self.target_revision(spec), []
        groups = _groups(spec, snapshot)
        for i, (revision, ready, _) in sorted(groups.items()):
            updated = revision == target
            cells.append(GroupCell(str(i), ("U" if ready else "u") if updated else ("o" if ready else "x"), revision))
        return GroupsView(
            spec.replicas, None, tuple(cells), live=len(groups), available=sum(1 for g in groups.values() if g[1])
        )

    def covered(self, spec: ToySpec, snapshot: Snapshot | None = None) -> dict:
        return {TEMPLATE_PATH: copy.deepcopy(dict(spec.template))}

    def recorded_revisions(self, spec: ToySpec, snapshot: Snapshot) -> list:
        seen: dict[str, RecordedRevision] = {}
        for i, (revision, _, template) in sorted(_groups(spec, snapshot).items()):
            seen.setdefault(
                revision, RecordedRevision(revision, 0.0, f"Deployment/{spec.name}-{i}", {TEMPLATE_PATH: template})
            )
        return list(seen.values())


TOY = ToyWorkload()


@contextlib.contextmanager
def registered_temporarily(workload: W.Workload = TOY) -> Iterator[W.Workload]:
    """``workload`` registered for the block (the registry is process-wide: other tests must not see it)."""
    with W.registration(workload):
        yield workload


def toy_component_class() -> type:
    """The ``lws:index:ToyServer`` Pulumi component: the typed arguments and outputs, nothing else
    (what a per-API component module is; imported lazily: it loads the Pulumi SDK)."""
    from typing import Optional, TypedDict

    import pulumi

    from pulumi_lws.components.base import WorkloadComponent
    from pulumi_lws.components.prepare import run_workload, workload_outputs

    class ToyServerArgs(TypedDict, total=False):
        """Arguments of a ToyServer: an upstream ``manifest``, individual fields, or both (fields win)."""

        manifest: pulumi.Input[Any]
        """A ``toy.pulumi-lws.io/v1alpha1`` ToyServer manifest (object or YAML text)."""
        name: pulumi.Input[str]
        """``metadata.name`` (default: the manifest's, else the resource name)."""
        namespace: pulumi.Input[str]
        """Namespace of every object (default: the manifest's, else ``default``)."""
        replicas: pulumi.Input[int]
        """Number of groups."""
        template: pulumi.Input[Any]
        """Pod template of every group."""
        mode: pulumi.Input[str]
        """``operator-free`` (default) or ``controller``."""

    class ToyServer(WorkloadComponent):
        """A ToyServer without an operator (a test-only API)."""

        revision: pulumi.Output[str]
        """Target revision."""
        stage: pulumi.Output[dict[str, Any]]
        """This stage."""
        blocker: pulumi.Output[Optional[str]]  # noqa: UP045 - the schema analyzer reads Optional
        """Why the rollout cannot advance, or null."""
        remaining_stages: pulumi.Output[list[dict[str, Any]]]
        """Predicted stages after this one."""
        actions: pulumi.Output[list[str]]
        """Imperative actions of this stage."""
        status: pulumi.Output[dict[str, Any]]
        """replicas, readyReplicas, updatedReplicas."""

        def __init__(self, name: str, args: ToyServerArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:  # noqa: UP045
            self._publish_outputs(
                workload_outputs(TOY, run_workload(self, "lws:index:ToyServer", name, args, opts, TOY))
            )

    return ToyServer


_COMPONENT: list[type] = []


@contextlib.contextmanager
def toy_registered() -> Iterator[W.Workload]:
    """The toy API and its component registered for the block (then both unregistered)."""
    from pulumi_lws.components.base import component_registration

    if not _COMPONENT:
        _COMPONENT.append(toy_component_class())
    with W.registration(TOY), component_registration(KIND, _COMPONENT[0]):
        yield TOY
