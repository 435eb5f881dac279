"""The one argument layer (pulumi_lws.components.args.build_spec) every workload component builds
its manifest with, once: the same forms, the same errors, for every API; ``metadata: None`` (or
any non-object metadata) is a SpecError naming ``metadata``, never an AttributeError, and nothing
is registered."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO_ROOT
from support.fakes_component import FakeActuator

import pulumi_lws
from pulumi_lws.backend import use_backend
from pulumi_lws.components import args as args_module
from pulumi_lws.components.args import build_spec
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.workloads import workload_for

EXAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}
KINDS = sorted(EXAMPLES)


def example(kind: str) -> dict:
    return yaml.safe_load((REPO_ROOT / "examples" / EXAMPLES[kind]).read_text())


def _bad_metadata_forms(kind: str, value) -> list:
    doc = {**example(kind), "metadata": value}
    return [
        doc,
        {"manifest": doc},
        {"manifest": doc, "replicas": 2} if kind != "DisaggregatedSet" else {"manifest": doc, "slices": 1},
        yaml.safe_dump(doc),
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("value", [None, "web", ["a"]])
def test_non_object_metadata_is_a_spec_error_naming_metadata(kind, value) -> None:
    for form in _bad_metadata_forms(kind, value):
        with pytest.raises(SpecError) as err:
            build_spec(kind, "web", form)
        assert [e.path for e in err.value.errors] == ["metadata"], err.value.errors
        assert "must be an object" in str(err.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_component_given_metadata_none_registers_nothing(mocks, kind) -> None:
    component = getattr(pulumi_lws, kind)
    with use_backend(EmptyObserver(), FakeActuator()), pytest.raises(SpecError, match="metadata"):
        component("web", {"manifest": {**example(kind), "metadata": None}})
    assert mocks.registered == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_form_builds_the_same_spec_and_manifest(kind) -> None:
    doc = example(kind)
    doc["metadata"] = {"name": "web", "namespace": "serving"}
    workload = workload_for(kind)
    forms = [
        doc,
        yaml.safe_dump(doc),
        {"manifest": doc},
        {"manifest": yaml.safe_dump(doc)},
        workload.arguments.model.from_manifest(doc),
    ]
    built = [build_spec(kind, "ignored", f) for f in forms]
    assert all(b.spec.to_wire() == built[0].spec.to_wire() for b in built[1:])
    assert built[0].manifest["metadata"] == {"name": "web", "namespace": "serving"}
    assert workload.identity(built[0].spec) == ("serving", "web")
    defaulted = build_spec(kind, "resource-name", {k: v for k, v in doc.items() if k != "metadata"})
    assert workload.identity(defaulted.spec) == ("default", "resource-name")


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_arguments_and_bad_options_are_named(kind) -> None:
    with pytest.raises(SpecError) as err:
        build_spec(kind, "web", {"manifest": example(kind), "bogus_field": 1, "alsoBogus": 2})
    assert [e.path for e in err.value.errors] == ["also_bogus", "bogus_field"]
    options = workload_for(kind).arguments.options
    bad = {o.name: "not-a-valid-value" for o in options if o.name != "volcano_queue"}
    with pytest.raises(SpecError) as err:
        build_spec(kind, "web", {"manifest": example(kind), **bad})
    assert {e.path for e in err.value.errors} == {args_module._camel(n) for n in bad}  # every problem at once


@pytest.mark.parametrize("kind", KINDS)
def test_the_manifest_is_built_once_per_component(mocks, kind, monkeypatch) -> None:
    calls = []
    real = args_module.apply_fields

    def counting(*a, **k):
        calls.append(a[2].kind)
        return real(*a, **k)

    monkeypatch.setattr(args_module, "apply_fields", counting)
    with use_backend(EmptyObserver(), FakeActuator()):
        getattr(pulumi_lws, kind)("web", {"manifest": example(kind)})
    assert calls == [kind]
