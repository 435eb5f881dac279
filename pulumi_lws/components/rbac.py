"""``lws:index:ReconcilerRbac``: the least-privilege RBAC of the identity that runs ``pulumi up``.

A Pulumi component registering what :mod:`pulumi_lws.rbac` computes for the given workload
manifests: a Role + RoleBinding per workload namespace and, only when a workload reads Nodes
(exclusive placement, or the opt-in capacity check: Nodes and every namespace's pods), a ClusterRole + ClusterRoleBinding — all bound to one ServiceAccount
(optionally created here), for the workload components' ``mode`` (operator-free: observe, act,
Events, the expanded objects; controller: observe, the CRD check, the upstream custom resource).
It belongs in an admin's stack (whoever may grant RBAC), not in the
workload stack it authorizes: the workload stack's identity cannot create its own grants.

Invalid manifests, an unknown ``mode`` or an operator-free-only option in controller mode raise
``SpecError`` before anything is registered (as every component here). One ``mode`` covers every
manifest: workloads in different modes take one ReconcilerRbac each.
"""

from __future__ import annotations

from typing import Any, TypedDict

import pulumi

from pulumi_lws import rbac

TYPE = "lws:index:ReconcilerRbac"

__all__ = ["TYPE", "Rbac", "ReconcilerRbac", "ReconcilerRbacArgs"]


class ReconcilerRbacArgs(TypedDict, total=False):
    """Which workloads the identity reconciles, and who the identity is."""

    manifests: pulumi.Input[list[Any]]
    """Upstream workload manifests (LeaderWorkerSet, ModelServing, DisaggregatedSet); others are ignored."""
    service_account: pulumi.Input[str]
    """``NAMESPACE/NAME`` of the ServiceAccount the bindings name (default ``default/pulumi-lws``)."""
    create_service_account: pulumi.Input[bool]
    """Also create that ServiceAccount (default false: e.g. the Pulumi Kubernetes Operator's Stack creates it)."""
    gang_provider: pulumi.Input[str]
    """LeaderWorkerSet gang objects: ``kubernetes`` (default) or ``volcano`` (ModelServing always Volcano's)."""
    adoption: pulumi.Input[bool]
    """Also allow ``disown`` on every observed kind (adopting a fleet from the upstream controller; operator-free only)."""
    mode: pulumi.Input[str]
    """The workload components' ``mode``: ``operator-free`` (default) or ``controller`` (docs/rbac.md)."""
    check_capacity: pulumi.Input[bool]
    """Also grant what the workload components' ``check_capacity`` reads: ``list`` on nodes and on pods,
    cluster-wide (a workload whose manifest sets ``pulumi-lws.io/check-capacity`` gets it anyway; docs/capacity.md)."""


class ReconcilerRbac(pulumi.ComponentResource):
    """Least-privilege RBAC for ``pulumi up`` of pulumi-lws workloads (docs/rbac.md)."""

    role_namespaces: pulumi.Output[list[str]]
    """The namespaces that got a Role + RoleBinding."""
    cluster_role: pulumi.Output[str | None]
    """The ClusterRole's name when some workload reads Nodes (or, in controller mode, always: the CRD check), else null."""
    rules: pulumi.Output[list[Any]]
    """Every RBAC object registered (Role, RoleBinding, ClusterRole, ClusterRoleBinding) as plain manifests."""

    def __init__(self, name: str, args: ReconcilerRbacArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        import pulumi_lws.workloads  # noqa: F401 - registers the three APIs
        from pulumi_lws.components.args import reject_outputs
        from pulumi_lws.core.contract.workload import workload_of

        # plain values from here on (reject_outputs); the provider passes schema (camelCase) keys too
        given: dict[str, Any] = dict(args or {})
        reject_outputs(given, "ReconcilerRbac")
        sa = str(given.get("service_account") or given.get("serviceAccount") or "default/pulumi-lws")
        sa_namespace, sa_name = rbac.parse_service_account(sa)
        workloads = [m for m in (given.get("manifests") or []) if workload_of(m) is not None]
        gang = str(given.get("gang_provider") or given.get("gangProvider") or "kubernetes")
        adoption = bool(given.get("adoption"))
        mode = str(given.get("mode") or rbac.OPERATOR_FREE)
        rbac.check_mode(mode, kind="ReconcilerRbac", adoption=adoption, gang_provider=gang)  # even with no workload
        # every manifest is validated (SpecError) before the first registration
        capacity = bool(args.get("check_capacity") or args.get("checkCapacity"))
        policies = [
            rbac.policy_for_manifest(m, gang_provider=gang, adoption=adoption, mode=mode, check_capacity=capacity)
            for m in workloads
        ]
        # per-mode object names (rbac.object_name): a mode switch can add the new RBAC beside the old
        docs = rbac.manifests(
            policies, name=rbac.object_name(name, mode), subject_namespace=sa_namespace, subject_name=sa_name
        )
        super().__init__(TYPE, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        import pulumi_kubernetes as k8s

        depends: list[pulumi.Resource] = []
        #: every child registered (ServiceAccount, Roles, bindings), in registration order
        self.resources: list[pulumi.Resource] = depends
        if given.get("create_service_account") or given.get("createServiceAccount"):
            depends.append(
                k8s.core.v1.ServiceAccount(
                    f"{name}-sa", metadata={"name": sa_name, "namespace": sa_namespace}, opts=child
                )
            )
        classes = {
            "Role": k8s.rbac.v1.Role,
            "ClusterRole": k8s.rbac.v1.ClusterRole,
            "RoleBinding": k8s.rbac.v1.RoleBinding,
            "ClusterRoleBinding": k8s.rbac.v1.ClusterRoleBinding,
        }
        roles: dict[tuple[str, str | None], pulumi.Resource] = {}
        for doc in docs:
            meta = doc["metadata"]
            logical = f"{name}-{doc['kind'].lower()}" + (f"-{meta['namespace']}" if meta.get("namespace") else "")
            if doc["kind"].endswith("Binding"):
                role = roles[(doc["roleRef"]["kind"], meta.get("namespace"))]
                self.resources.append(
                    classes[doc["kind"]](
                        logical,
                        metadata=meta,
                        role_ref=doc["roleRef"],
                        subjects=doc["subjects"],
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[role, *depends]),
                    )
                )
            else:
                role = classes[doc["kind"]](logical, metadata=meta, rules=doc["rules"], opts=child)
                roles[(doc["kind"], meta.get("namespace"))] = role
                self.resources.append(role)
        self.role_namespaces = pulumi.Output.from_input(
            [d["metadata"]["namespace"] for d in docs if d["kind"] == "Role"]
        )
        self.cluster_role = pulumi.Output.from_input(
            next((d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"), None)
        )
        self.rules = pulumi.Output.from_input(docs)
        self.register_outputs(
            {"role_namespaces": self.role_namespaces, "cluster_role": self.cluster_role, "rules": self.rules}
        )


#: the short name the issue and docs use
Rbac = ReconcilerRbac
