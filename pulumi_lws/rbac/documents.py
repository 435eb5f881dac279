"""RBAC documents: Role/RoleBinding (+ ClusterRole/Binding) manifests from policies, the policy of
one upstream workload manifest, and the YAML ``pulumi-lws render --rbac`` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.k8s.yamlio import dump_documents
from pulumi_lws.rbac.policy import CONTROLLER, OPERATOR_FREE, Grant, Policy, check_mode, kind_of_manifest, policy


def merge(policies: Iterable[Policy]) -> list[Policy]:
    """One policy per namespace (grants of every workload there), namespaces sorted."""
    by_ns: dict[str, list[Grant]] = {}
    for p in policies:
        by_ns.setdefault(p.namespace, []).extend(p.grants)
    return [Policy(ns, tuple(dict.fromkeys(gs))) for ns, gs in sorted(by_ns.items())]


def object_name(base: str, mode: str = OPERATOR_FREE) -> str:
    """The name of a mode's RBAC objects: ``base`` in operator-free mode, ``base-controller`` in
    controller mode. The two modes' Roles and bindings never share a name, so a mode switch can
    apply the new mode's RBAC while the old one still exists (docs/modes.md) and delete the old
    one after the switching ``pulumi up``."""
    return base if mode == OPERATOR_FREE else f"{base}-{mode}"


def manifests(
    policies: Iterable[Policy],
    *,
    name: str = "pulumi-lws",
    subject_namespace: str = "default",
    subject_name: str = "pulumi-lws",
) -> list[dict[str, Any]]:
    """Role + RoleBinding per namespace, and one ClusterRole + ClusterRoleBinding only when some
    grant is cluster-scoped; every binding names the ServiceAccount ``subject_namespace/subject_name``."""
    subject = [{"kind": "ServiceAccount", "name": subject_name, "namespace": subject_namespace}]
    labels = {"app.kubernetes.io/managed-by": "pulumi-lws", "app.kubernetes.io/component": "rbac"}
    out: list[dict[str, Any]] = []
    cluster_rules: list[dict[str, Any]] = []
    for p in merge(policies):
        meta = {"name": name, "namespace": p.namespace, "labels": dict(labels)}
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": meta,
                "rules": p.rules(cluster=False),
            }
        )
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": dict(meta),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": subject,
            }
        )
        cluster_rules += [r for r in p.rules(cluster=True) if r not in cluster_rules]
    if cluster_rules:
        meta = {"name": name, "labels": dict(labels)}
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": meta,
                "rules": cluster_rules,
            }
        )
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": dict(meta),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": subject,
            }
        )
    return out


def policy_for_manifest(
    manifest: Mapping[str, Any],
    *,
    namespace: str | None = None,
    gang_provider: str = "kubernetes",
    adoption: bool = False,
    mode: str = OPERATOR_FREE,
    check_capacity: bool = False,
) -> Policy:
    """The policy of one upstream workload manifest in ``mode``: its scope as the spec needs it
    (Nodes only for exclusive placement) and, operator-free, the kinds its first and steady stages
    render; the capacity check's cluster-wide LISTs of Nodes and pods only when it is opted in
    (``check_capacity``, else the manifest's ``pulumi-lws.io/check-capacity`` annotation, where the
    component argument is written). Raises ``SpecError`` for an invalid manifest or a mode / option
    mismatch (nothing is computed from it)."""
    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.errors import FieldError, SpecError
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.core.contract.workload import workload_of
    from pulumi_lws.core.features.control import capacity_checked
    from pulumi_lws.sim.driver.expansion import steady_state

    workload = workload_of(manifest)
    if workload is None:
        raise KeyError(f"not a workload this project models: kind {manifest.get('kind')!r}")
    check_mode(mode, kind=workload.kind, adoption=adoption, gang_provider=gang_provider)
    spec = workload.parse(manifest, namespace=namespace)
    ns, _ = workload.identity(spec)
    gang = workload.gang.provider(gang_provider)
    scope = workload.scope(spec)
    if mode == CONTROLLER and check_capacity:
        raise SpecError(
            workload.kind,
            None,
            [
                FieldError(
                    "checkCapacity",
                    'the capacity check holds pulumi-lws\'s own stages; in mode "controller" the controller '
                    'creates pods regardless: remove it or use mode "operator-free"',
                    True,
                )
            ],
        )
    # controller mode never reads capacity (components.controller): no grant for it, whatever the annotation
    capacity = mode != CONTROLLER and capacity_checked(workload.kind, spec, True if check_capacity else None)
    if mode == CONTROLLER:  # what controller.register_custom_resource observes; the CR is all it manages
        return policy(
            workload.kind,
            ns,
            scope_kinds=scope.kinds,
            nodes=scope.nodes,
            gang_provider=gang,
            mode=mode,
            upstream=workload.upstream,
            capacity=capacity,
        )
    first = workload.reconcile(spec, EMPTY, workload.options(gang_provider=gang)).manifests
    steady = steady_state(manifest, namespace=namespace, gang_provider=gang).reconciled.manifests
    rendered = [*first, *steady]
    return policy(
        workload.kind,
        ns,
        scope_kinds=scope.kinds,
        nodes=scope.nodes,
        rendered={kind_of_manifest(m) for m in rendered},
        gang_provider=gang,
        adoption=adoption,
        awaited={kind_of_manifest(m) for m in rendered if not skips_await(m)},
        capacity=capacity,
    )


def skips_await(manifest: Mapping[str, Any]) -> bool:
    """``pulumi.com/skipAwait: "true"``: pulumi-kubernetes runs no built-in await for it."""
    return ((manifest.get("metadata") or {}).get("annotations") or {}).get("pulumi.com/skipAwait") == "true"


def parse_service_account(value: str) -> tuple[str, str]:
    """``NAMESPACE/NAME`` -> ``(namespace, name)``; ``ValueError`` naming the expected form."""
    namespace, sep, name = value.partition("/")
    if not sep or not namespace or not name or "/" in name:
        raise ValueError(f"--service-account must be NAMESPACE/NAME, got {value!r}")
    return namespace, name


def rbac_yaml(
    manifests_: Sequence[Mapping[str, Any]],
    *,
    namespace: str | None = None,
    gang_provider: str = "kubernetes",
    service_account: str = "default/pulumi-lws",
    adoption: bool = False,
    mode: str = OPERATOR_FREE,
    check_capacity: bool = False,
) -> str:
    """The RBAC documents for every workload of ``manifests_`` (other documents ignored) in
    ``mode`` as YAML, with a header naming the workloads, the mode and the subject. Invalid input
    raises before any output."""

    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.workload import workload_of

    sa_namespace, sa_name = parse_service_account(service_account)
    workloads = [m for m in manifests_ if workload_of(m) is not None]
    policies = [
        policy_for_manifest(
            m,
            namespace=namespace,
            gang_provider=gang_provider,
            adoption=adoption,
            mode=mode,
            check_capacity=check_capacity,
        )
        for m in workloads
    ]
    names = ", ".join(
        f"{m['kind']} {p.namespace}/{(m.get('metadata') or {}).get('name')}" for m, p in zip(workloads, policies)
    )
    jobs = (
        "pulumi-lws observe + CRD check, pulumi-kubernetes managing the custom resource"
        if mode == CONTROLLER
        else "pulumi-lws reconcile + pulumi-kubernetes"
    )
    header = (
        f"# least-privilege RBAC for `pulumi up` of {names or 'no workload'} in mode {mode} ({jobs}), "
        f"bound to ServiceAccount {sa_namespace}/{sa_name}\n"
    )
    docs = manifests(
        policies, name=object_name("pulumi-lws", mode), subject_namespace=sa_namespace, subject_name=sa_name
    )
    return header + dump_documents(docs) if docs else header
