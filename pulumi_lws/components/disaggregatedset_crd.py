"""Upstream's ``DisaggregatedSetRoleScaler`` CRD as a Pulumi resource, registered at most once per
program and Kubernetes provider (External scaling, docs/component.md).

A DisaggregatedSet never declares the CRD (pulumi_lws/disaggregatedset/external.py): it is
cluster-scoped and shared by every set, namespace and stack. Install it once per cluster — in
one stack with :func:`role_scaler_crd`, or ``python -m pulumi_lws.disaggregatedset.external |
kubectl apply -f -``, or with upstream's lws install manifests, which carry it. In a program
with several DisaggregatedSets every call returns the same resource (one registration, no
duplicate URN), so each set can ``depends_on`` it. It is registered with ``retain_on_delete``:
deleting the stack (or dropping the call) must never delete the CRD, which would delete every
scaler of every set in the cluster with it.
"""

from __future__ import annotations

from typing import Any

import pulumi

from pulumi_lws.disaggregatedset import external

#: (root stack resource, provider) -> the registered CRD: one per program run and provider
_REGISTERED: dict[tuple[int, int], Any] = {}


def role_scaler_crd(name: str = external.CRD_NAME, opts: pulumi.ResourceOptions | None = None) -> Any:
    """The ``disaggregatedsetrolescalers.disaggregatedset.x-k8s.io`` CRD (upstream's schema, scale and
    status subresources), registered once per program and ``opts.provider``; later calls return it."""
    from pulumi.runtime.settings import get_root_resource
    from pulumi_kubernetes.apiextensions.v1 import CustomResourceDefinition

    key = (id(get_root_resource()), id(opts.provider) if opts is not None and opts.provider is not None else 0)
    if key not in _REGISTERED:
        crd = external.scaler_crd()
        merged = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
        _REGISTERED[key] = CustomResourceDefinition(name, metadata=crd["metadata"], spec=crd["spec"], opts=merged)
    return _REGISTERED[key]
