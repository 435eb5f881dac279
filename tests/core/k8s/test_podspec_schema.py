"""The vendored Kubernetes 1.35 pod-template schema and the value rules next to it.

* ``tools/gen_podspec_schema.py`` regenerates exactly the committed file (from the installed
  kubernetes-validate), which holds only what PodTemplateSpec / PersistentVolumeClaim reach;
* quantities parse as ``resource.ParseQuantity`` does; int32 ranges; apimachinery's ObjectMeta
  messages, word for word;
* the compiled validator is cached and fast enough to run on every reconcile.
"""

from __future__ import annotations

import importlib.util
import json
import time

import pytest
from conftest import REPO_ROOT

from pulumi_lws.core.k8s import objectmeta as M
from pulumi_lws.core.k8s import podspec as P

SCHEMA = REPO_ROOT / "pulumi_lws" / "core" / "k8s" / P.SCHEMA_FILE


def generator():
    spec = importlib.util.spec_from_file_location("gen_podspec_schema", REPO_ROOT / "tools" / "gen_podspec_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.source_file().is_file():
        pytest.skip(f"the installed kubernetes-validate ships no v{module.VERSION} strict schema")
    return module


def test_regenerating_the_schema_gives_the_committed_file() -> None:
    gen = generator()
    assert gen.OUT == SCHEMA
    assert gen.render(gen.build(gen.source_definitions())) == SCHEMA.read_text(), (
        "run .venv/bin/python tools/gen_podspec_schema.py and commit the result"
    )


def test_the_schema_is_trimmed_to_what_the_roots_reach() -> None:
    defs = json.loads(SCHEMA.read_text())["$defs"]
    gen = generator()
    assert sorted(defs) == gen.reachable(gen.source_definitions(), gen.ROOTS)
    text = SCHEMA.read_text()
    assert len(text) < 100_000 and '"description"' not in text and "x-kubernetes-" not in text and '"null"' not in text
    assert defs["io.k8s.apimachinery.pkg.api.resource.Quantity"] == {"type": ["string", "number"], "format": "quantity"}
    assert set(defs["io.k8s.api.core.v1.Container"]["required"]) == {"name", "image"}
    assert defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]["minItems"] == 1


@pytest.mark.parametrize(
    "value",
    [
        "1",
        "0",
        "500m",
        "1.5",
        ".5",
        "1.",
        "+1",
        "-1",
        "1Ki",
        "10Gi",
        "2Ei",
        "1e3",
        "1E-3",
        "5n",
        "5u",
        "1k",
        "1M",
        "1G",
        "1T",
        "1P",
        "1E",
        "007",
    ],
)
def test_valid_quantities(value: str) -> None:
    assert P.quantity_error(value) is None


@pytest.mark.parametrize(
    "value,message",
    [
        ("", P.QUANTITY_FORMAT_MSG),
        ("abc", P.QUANTITY_FORMAT_MSG),
        ("1x", P.QUANTITY_FORMAT_MSG),
        ("1Gb", P.QUANTITY_FORMAT_MSG),
        ("1.2.3", P.QUANTITY_FORMAT_MSG),
        (" 1", P.QUANTITY_FORMAT_MSG),
        ("1KiB", P.QUANTITY_FORMAT_MSG),
        ("1iK", P.QUANTITY_SUFFIX_MSG),
        ("1e", P.QUANTITY_SUFFIX_MSG),
        ("1Gi3", P.QUANTITY_SUFFIX_MSG),
        ("1k-3", P.QUANTITY_SUFFIX_MSG),
        ("1mm", P.QUANTITY_SUFFIX_MSG),
    ],
)
def test_invalid_quantities(value: str, message: str) -> None:
    assert P.quantity_error(value) == message


def test_messages_are_apimachinerys() -> None:
    assert M.is_dns1123_label("a.b") == ["must not contain dots"]
    assert M.is_dns1123_label("x" * 64) == ["must be no more than 63 characters"]
    assert M.is_qualified_name("example.com/" + "n" * 64) == ["name part must be no more than 63 characters"]
    assert M.is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert M.is_qualified_name("Bad_Prefix/x") == [
        "prefix part " + M.regex_error(M.DNS1123_SUBDOMAIN_MSG, M.DNS1123_SUBDOMAIN_FMT, "example.com")
    ]
    assert M.regex_error("m", "f", "a", "b") == "m (e.g. 'a',  or 'b', regex used for validation is 'f')"
    assert M.is_valid_label_value("") == [] and M.is_qualified_name("app.kubernetes.io/managed-by") == []
    big = {"k": "x" * M.TOTAL_ANNOTATION_SIZE}
    assert [str(e) for e in M.validate_annotations(big, "metadata.annotations")] == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_non_string_map_keys_are_type_errors() -> None:
    errs = P.validate_pod_template(
        {"spec": {"containers": [{"name": "a", "image": "b"}], "nodeSelector": {1: "x"}}}, "t"
    )
    assert [(e.path, e.message, e.value) for e in errs] == [
        ("t.spec.nodeSelector", "map keys must be of type string", 1)
    ]


def test_the_validator_is_cached_and_fast() -> None:
    assert P.validator(P.POD_TEMPLATE_SPEC) is P.validator(P.POD_TEMPLATE_SPEC)
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {
            "containers": [
                {
                    "name": f"c{i}",
                    "image": "x",
                    "env": [{"name": "E", "value": "v"}] * 5,
                    "resources": {"limits": {"cpu": "1"}},
                }
                for i in range(4)
            ]
        },
    }
    P.validate_pod_template(template, "t")
    start = time.perf_counter()
    for _ in range(20):
        assert P.validate_pod_template(template, "t") == []
    assert (time.perf_counter() - start) / 20 < 0.05


def test_the_functions_never_mutate_their_input() -> None:
    template = {"spec": {"containers": [{"name": "a", "image": "b", "env": None}]}}
    before = json.dumps(template)
    P.validate_pod_template(template, "t")
    assert json.dumps(template) == before
    assert P.without_nulls(template) == {"spec": {"containers": [{"name": "a", "image": "b"}]}}
    assert json.dumps(template) == before
