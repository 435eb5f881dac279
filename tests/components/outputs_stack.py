"""A small stack around a workload component: where its inputs come from as Pulumi Outputs.

``OtherResources`` declares what a platform team's program declares before the workload — an
auto-named Namespace, an image build (a stand-in custom resource whose ``ref`` output is computed
by its provider), a Kubernetes Secret holding a token, a StackReference exporting ``replicas`` —
and a secret stack config value (``app:apiKey``). ``provider(...)`` is the stand-in provider the
mock engine asks for each registration's outputs (``run_program(resource_outputs=...)``): in an
update every computed output has its value; in a preview the outputs named in ``unknown`` are
left out, i.e. unknown, exactly as for resources that do not exist yet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pulumi

from pulumi_lws.sim.driver.pulumi_engine import unwrap_secrets

NAMESPACE = "serving-8f2c1a"  # what the Namespace's auto-naming yields in the update
IMAGE = "registry.example/vllm@sha256:1f2e3d4c"
TOKEN = "hf_s3cr3tT0kenValue"
API_KEY = "sk-live-0123456789"
REPLICAS = 3
ALL_UNKNOWN = frozenset({"namespace", "image", "replicas"})


class Image(pulumi.CustomResource):
    """An image build: ``ref`` is computed by its provider (unknown in preview until it ran)."""

    ref: pulumi.Output[str]

    def __init__(self, name: str, repository: str) -> None:
        super().__init__("test:index:Image", name, {"repository": repository, "ref": None})


@dataclass
class OtherResources:
    namespace: pulumi.Output[str]
    image: pulumi.Output[str]
    token: pulumi.Output[str]
    api_key: pulumi.Output[str]
    replicas: pulumi.Output[Any]
    urns: list[pulumi.Output[str]]

    @staticmethod
    def declare() -> OtherResources:
        import pulumi_kubernetes as k8s

        ns = k8s.core.v1.Namespace("serving")  # auto-named, as most programs do
        image = Image("vllm-image", "registry.example/vllm")
        secret = k8s.core.v1.Secret(
            "hf",
            metadata={"name": "hf", "namespace": "kube-system"},
            string_data={"token": pulumi.Output.secret(TOKEN)},
        )
        infra = pulumi.StackReference("org/infra/prod")
        return OtherResources(
            namespace=ns.metadata.name,
            image=image.ref,
            token=secret.string_data["token"],
            api_key=pulumi.Config("app").require_secret("apiKey"),
            replicas=infra.get_output("replicas"),
            urns=[ns.urn, image.urn, secret.urn, infra.urn],
        )


def provider(*, preview: bool = False, unknown: frozenset[str] = frozenset()):
    """The stand-in provider (see the module doc)."""
    hide = unknown if preview else frozenset()

    def outputs(args: pulumi.runtime.MockResourceArgs) -> dict[str, Any] | None:
        inputs = dict(args.inputs)
        if args.typ == "kubernetes:core/v1:Namespace":
            if "namespace" in hide:
                return {k: v for k, v in inputs.items() if k != "metadata"}
            return {**inputs, "metadata": {**(inputs.get("metadata") or {}), "name": NAMESPACE}}
        if args.typ == "test:index:Image":
            return inputs if "image" in hide else {**inputs, "ref": IMAGE}
        if args.typ == "kubernetes:core/v1:Secret":
            data = unwrap_secrets(inputs.get("stringData") or {})
            return {**inputs, "stringData": {k: pulumi.Output.secret(v) for k, v in data.items()}}
        if args.typ == "pulumi:pulumi:StackReference":
            return (
                {"name": inputs.get("name")}
                if "replicas" in hide
                else {"name": inputs.get("name"), "outputs": {"replicas": REPLICAS}, "secretOutputNames": []}
            )
        return None

    return outputs


@contextlib.contextmanager
def stack_config() -> Iterator[None]:
    """``app:apiKey`` as a secret config value for the duration of a run."""
    pulumi.runtime.set_all_config({"app:apiKey": API_KEY}, ["app:apiKey"])
    try:
        yield
    finally:
        pulumi.runtime.set_all_config({})


@contextlib.contextmanager
def recorded_logs() -> Iterator[list[str]]:
    """Every message the program logs through ``pulumi.log`` (the engine's event stream)."""
    lines: list[str] = []
    saved = {level: getattr(pulumi.log, level) for level in ("debug", "info", "warn", "error")}

    def recorder(level):
        def log(msg, resource=None, stream_id=None, ephemeral=None):
            lines.append(f"{level}: {msg}")

        return log

    for level in saved:
        setattr(pulumi.log, level, recorder(level))
    try:
        yield lines
    finally:
        for level, fn in saved.items():
            setattr(pulumi.log, level, fn)


def env(token: Any, api_key: Any) -> list[dict[str, Any]]:
    return [{"name": "HF_TOKEN", "value": token}, {"name": "API_KEY", "value": api_key}]


def children_of(result, component_type: str) -> dict[str, Any]:
    """URN -> registration of every direct child of the (single) component of ``component_type``."""
    component = next(u for u, r in result.registrations.items() if r.type == component_type)
    return {u: r for u, r in result.registrations.items() if r.parent == component}


def component_manifests(result, namespace: str) -> list[dict[str, Any]]:
    """The manifests of the workload (those in its namespace), in a stable order."""
    mine = [m for m in result.manifests if (m.get("metadata") or {}).get("namespace") == namespace]
    return sorted(mine, key=lambda m: (m["kind"], m["metadata"]["name"]))
