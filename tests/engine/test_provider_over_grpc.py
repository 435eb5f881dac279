"""The component provider as the Pulumi CLI runs it: the plugin started as the Python language host
starts the source plugin of ``PulumiPlugin.yaml`` (``python <plugin dir> <engine address>``, port on
stdout), ``GetSchema``, and ``Construct`` of each component with
inputs encoded as the Node.js, Go and YAML SDKs (through the engine) send them — numbers as
doubles, ``"25%"`` budgets, nested maps, a namespace that is an Output of another resource
(output value + input dependencies), secrets (output values and the secret signature), unknowns
(output values without a value and the unknown sentinel) — in preview and in update. The
components observe kmock's Kubernetes emulator through the live backend (the stack config
``kubernetes:kubeconfig``), as a user's stack points them at a cluster.

The children must be what the Python component registers for the same inputs (types, names,
parents, manifests: compared with a mock-engine run), with the component's URN as parent and the
Namespace as dependency; the Construct response carries the component's outputs; a bad input is a
gRPC ``INVALID_ARGUMENT`` carrying the Python component's own message, never a traceback."""

from __future__ import annotations

import copy
import json

import grpc
import pulumi
import pytest
import yaml
from conftest import REPO_ROOT
from google.protobuf import empty_pb2
from grpc_engine import UNKNOWN, TestEngine, plain, secret_paths, to_dict, unknown_paths
from grpc_provider import (
    KmockCluster,
    configure,
    construct_request,
    output_value,
    plugin_command,
    secret,
    start_provider,
)
from pulumi.runtime.proto import provider_pb2

from pulumi_lws import __version__
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.k8s.model import ints_back
from pulumi_lws.sim.driver.pulumi_engine import run_program

pytest.importorskip("kmock")

PROJECT, STACK = "consumer", "dev"
ROOT = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
NAMESPACE_URN = f"urn:pulumi:{STACK}::{PROJECT}::kubernetes:core/v1:Namespace::serving"
TOKEN = "hf_0123456789abcdef"
IMAGE = "vllm/vllm-openai:v0.8.5"


def _container(image, token) -> dict:
    return {
        "name": "server",
        "image": image,
        "ports": [{"containerPort": 8080}],
        "env": [{"name": "HF_TOKEN", "value": token}],
    }


def _lws_inputs(image, token) -> dict:
    return {
        "replicas": 3,
        "size": 2,
        "rollout": {"maxUnavailable": "25%", "maxSurge": 1},
        "workerTemplate": {"spec": {"containers": [_container(image, token)]}},
    }


def _ms_inputs(image, token) -> dict:
    manifest = yaml.safe_load((REPO_ROOT / "examples/modelserving-pd/ms.yaml").read_text())
    manifest["spec"]["template"]["roles"][0]["entryTemplate"]["spec"]["containers"] = [_container(image, token)]
    return {"manifest": manifest}


def _ds_inputs(image, token) -> dict:
    manifest = yaml.safe_load((REPO_ROOT / "examples/disaggregated-pd/ds.yaml").read_text())
    manifest["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"] = [
        _container(image, token)
    ]
    return {"manifest": manifest}


#: component -> (inputs builder, the input path of the container the builders fill, a bad input, its field)
COMPONENTS = {
    "LeaderWorkerSet": (_lws_inputs, "worker_template.spec.containers[0]", {"replicas": -1}, "spec.replicas"),
    "ModelServing": (
        _ms_inputs,
        "manifest.spec.template.roles[0].entryTemplate.spec.containers[0]",
        {"manifest": {"spec": {"replicas": -1}}},
        "spec.replicas",
    ),
    "DisaggregatedSet": (
        _ds_inputs,
        "manifest.spec.roles[0].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]",
        {"manifest": {"spec": {"roles": []}}},
        "spec.roles",
    ),
}


@pytest.fixture(scope="module")
def served():
    with (
        KmockCluster() as cluster,
        TestEngine(project=PROJECT, stack=STACK, config={"kubernetes:kubeconfig": cluster.kubeconfig}) as engine,
    ):
        engine.root_urn = ROOT
        with start_provider(engine.address, env={"KUBECONFIG": "/nonexistent/kubeconfig"}) as provider:
            configure(provider)
            yield engine, provider


def _construct(served, component: str, inputs: dict, *, dry_run: bool, config: dict | None = None):
    engine, provider = served
    engine.begin(dry_run=dry_run)
    saved = dict(engine.config)
    if config is not None:
        engine.config = config
    try:
        request = construct_request(
            engine,
            f"lws:index:{component}",
            "pd",
            inputs,
            input_dependencies={"namespace": (NAMESPACE_URN,)},
            dependencies=(NAMESPACE_URN,),
        )
        return provider.stub.Construct(request)
    finally:
        engine.config = saved


def _with_namespace(inputs: dict, namespace) -> dict:
    return {**inputs, "namespace": namespace}


def _python_run(component: str, inputs, *, preview: bool = False):
    """The Python component with the same (known) inputs under the mock engine (``inputs``: the
    args, or a function making them inside the run, for Outputs)."""
    import pulumi_lws

    cls = getattr(pulumi_lws, component)
    return run_program(
        lambda: cls("pd", inputs() if callable(inputs) else inputs),
        EmptyObserver(),
        _NoActions(),
        preview=preview,
        stack=STACK,
        project=PROJECT,
    )


class _NoActions:
    def execute(self, namespace, actions):
        return [a.describe() for a in actions]


def _manifest(registered) -> dict:
    obj = ints_back(plain(registered.inputs))
    _, group_version, kind = registered.type.split(":", 2)
    group, _, version = group_version.rpartition("/")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", version if group in ("", "core") else f"{group}/{version}")
    return obj


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _key(m: dict) -> tuple:
    return m["kind"], m["metadata"].get("namespace") or "default", m["metadata"]["name"]


# -- the plugin ------------------------------------------------------------------------------
def test_the_plugin_starts_as_the_cli_starts_it(served):
    engine, provider = served
    command = plugin_command(engine.address)
    assert command[1:] == [str(REPO_ROOT), engine.address]  # the root __main__.py, as the Python host runs it
    assert provider.port > 0 and provider.process.poll() is None
    assert provider.stub.GetPluginInfo(empty_pb2.Empty()).version == __version__
    accepted = configure(provider)
    assert accepted.acceptSecrets and accepted.acceptResources and accepted.acceptOutputs


def test_get_schema_is_the_committed_schema_json(served):
    _, provider = served
    served_schema = json.loads(provider.stub.GetSchema(provider_pb2.GetSchemaRequest()).schema)
    assert served_schema == json.loads((REPO_ROOT / "schema.json").read_text())


# -- Construct, update -------------------------------------------------------------------------
@pytest.mark.parametrize("component", COMPONENTS)
def test_construct_registers_what_the_python_component_registers(served, component):
    build, _container_path, _, _ = COMPONENTS[component]
    wire = _with_namespace(
        build(IMAGE, output_value(TOKEN, is_secret=True)), output_value("serving", dependencies=(NAMESPACE_URN,))
    )
    response = _construct(served, component, wire, dry_run=False)
    engine = served[0]

    urn = f"urn:pulumi:{STACK}::{PROJECT}::lws:index:{component}::pd"
    assert response.urn == urn
    registered = engine.resources[urn]
    assert registered.type == f"lws:index:{component}" and registered.parent == ROOT and not registered.custom
    assert NAMESPACE_URN in registered.dependencies
    children = engine.custom()
    assert children and {c.parent for c in children} == {urn}
    assert all(NAMESPACE_URN in c.dependencies for c in children)  # created after the Namespace

    python = _python_run(component, lambda: _with_namespace(build(IMAGE, pulumi.Output.secret(TOKEN)), "serving"))
    assert {c.urn for c in children} == {u for u, r in python.registrations.items() if r.type.startswith("kubernetes:")}
    assert {_key(m): m for m in map(_manifest, children)} == {_key(m): m for m in python.manifests}
    for child in children:  # the same secret leaves as the Python component's children
        assert tuple(secret_paths(child.inputs)) == python.registrations[child.urn].secret_paths
        assert not unknown_paths(child.inputs)
    assert any(secret_paths(c.inputs) for c in children)

    state = to_dict(response.state)
    outputs = engine.outputs[urn]
    # the Construct response carries what the component registered as its outputs, under the
    # schema's names (the registered outputs, i.e. the component's state, keep the Python names)
    assert state == {_camel(k): v for k, v in outputs.items()}
    assert {"revision", "stage", "status", "actions", "remainingStages"} <= set(state)
    assert state["revision"] == python.stages[0].target_revision
    assert TOKEN not in json.dumps(state) and TOKEN not in json.dumps(engine.logs)
    assert set(response.stateDependencies) <= set(state)


# -- Construct, preview ---------------------------------------------------------------------
@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("encoding", ["output value", "sentinel"])
def test_construct_preview_plans_unknowns_as_documented(served, component, encoding):
    """An unknown image (an Output of a build not yet run) reaches every child unknown, and the
    stage says what it assumed (docs/component.md, "pulumi preview with unknown values")."""
    build, container_path, _, _ = COMPONENTS[component]
    image = output_value(known=False, dependencies=(NAMESPACE_URN,)) if encoding == "output value" else UNKNOWN
    wire = _with_namespace(
        build(image, output_value(TOKEN, is_secret=True)), output_value("serving", dependencies=(NAMESPACE_URN,))
    )
    state = to_dict(_construct(served, component, wire, dry_run=True).state)
    engine = served[0]
    children = engine.custom()
    assert children and all(c.parent.endswith(f"lws:index:{component}::pd") for c in children)
    carrying = {c.urn: _token_images(_manifest(c)) for c in children}
    assert {c.type.split(":")[-1] for c in children if carrying[c.urn]} >= {"ControllerRevision", "StatefulSet"}
    for child in children:  # every image of the container the input filled is unknown, no other
        assert carrying[child.urn] == sorted(p for p in unknown_paths(child.inputs) if p.endswith(".image")), child.name
    assert not any(UNKNOWN in json.dumps(_manifest(c)["metadata"]) for c in children)  # names are known
    note = f"{container_path}.image is unknown"
    assumptions = state["stage"]["assumptions"]
    assert any(
        a.startswith(note)
        and a.endswith("passed through to the children (it cannot change this stage: every object is created)")
        for a in assumptions
    ), assumptions
    assert TOKEN not in json.dumps(state)
    preview_lines = [m for _, urn, m in engine.logs if urn.endswith("::pd")]
    assert any(f"assumes: {note}" in m for m in preview_lines), preview_lines


@pytest.mark.parametrize("component", COMPONENTS)
def test_construct_preview_with_an_unknown_namespace(served, component):
    build = COMPONENTS[component][0]
    wire = _with_namespace(build(IMAGE, "x"), output_value(known=False, dependencies=(NAMESPACE_URN,)))
    state = to_dict(_construct(served, component, wire, dry_run=True).state)
    engine = served[0]
    assert any(
        a.startswith("namespace is unknown") and "assumes nothing of this workload exists there yet" in a
        for a in state["stage"]["assumptions"]
    )
    assert all("metadata.namespace" in unknown_paths(c.inputs) for c in engine.custom())


def test_a_plain_secret_marks_its_whole_top_level_input_secret(served):
    """The secret *signature* nested in a plain value (no output value) is lifted by the Python
    SDK's provider server to the whole top-level input (``rpc.deserialize_properties``): every
    string of ``workerTemplate`` is then secret in the children. Conservative, never a leak."""
    wire = _with_namespace(_lws_inputs(IMAGE, secret(TOKEN)), "serving")
    state = to_dict(_construct(served, "LeaderWorkerSet", wire, dry_run=False).state)
    engine = served[0]
    workers = [c for c in engine.custom() if c.type.endswith("StatefulSet")]
    assert all("spec.template.spec.containers[0].image" in secret_paths(c.inputs) for c in workers)
    assert TOKEN not in json.dumps(state) and TOKEN not in json.dumps(engine.logs)


# -- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("component", COMPONENTS)
def test_bad_input_is_invalid_argument_with_the_python_components_message(served, component):
    build, _, bad, field = COMPONENTS[component]
    good = build(IMAGE, "x")
    wire = {**good, **({"manifest": _deep_merge(good["manifest"], bad["manifest"])} if "manifest" in bad else bad)}
    with pytest.raises(grpc.RpcError) as raised:
        _construct(served, component, wire, dry_run=True)
    with pytest.raises(SpecError) as python:
        _python_run(component, ints_back(wire), preview=True)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == str(python.value)
    assert f"  - {field}" in raised.value.details()
    assert "Traceback" not in raised.value.details() and 'File "' not in raised.value.details()
    assert not served[0].resources  # nothing registered


def test_no_cluster_is_one_clear_line(served):
    """No ``kubernetes:kubeconfig`` and no kubeconfig file: the component's NoClusterError text,
    no traceback."""
    with pytest.raises(grpc.RpcError) as raised:
        _construct(served, "LeaderWorkerSet", _lws_inputs(IMAGE, "x"), dry_run=True, config={})
    details = raised.value.details()
    assert "pulumi-lws has no cluster to observe" in details and "kubernetes:kubeconfig" in details
    assert "Traceback" not in details and 'File "' not in details


def _token_images(value, path: str = "") -> list[str]:
    """Paths of the ``image`` of every container carrying the HF_TOKEN env (the one the inputs fill)."""
    found = []
    if isinstance(value, dict):
        if (
            any(isinstance(e, dict) and e.get("name") == "HF_TOKEN" for e in value.get("env") or ())
            and "image" in value
        ):
            found.append(f"{path}.image")
        for k, v in value.items():
            found += _token_images(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _token_images(v, f"{path}[{i}]")
    return sorted(found)


def _deep_merge(base: dict, change: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in change.items():
        out[k] = _deep_merge(out.get(k) or {}, v) if isinstance(v, dict) else v
    return out
