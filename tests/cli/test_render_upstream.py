"""``pulumi-lws render`` on every upstream sample (tests/manifests_upstream): both stages exit 0,
every rendered object validates strictly (Kubernetes 1.35), non-LeaderWorkerSet documents come
out unchanged and in file order, and each LeaderWorkerSet expands into the objects it should."""

from __future__ import annotations

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.cli import main
from pulumi_lws.core.k8s.yamlio import read_documents

UPSTREAM = TESTS_DIR / "manifests_upstream"
FILES = sorted(UPSTREAM.glob("*.yaml"))
LWS = "LeaderWorkerSet"


def sections(out: str) -> list[tuple[str, list[dict]]]:
    """``[(header line, [objects])]``: the output split at its ``# `` header lines."""
    found: list[tuple[str, list[str]]] = []
    for line in out.splitlines(keepends=True):
        if line.startswith("# "):
            found.append((line[2:].rstrip("\n"), []))
        else:
            assert found, f"output does not start with a header line: {line!r}"
            found[-1][1].append(line)
    return [(head, [d for d in yaml.safe_load_all("".join(body)) if d is not None]) for head, body in found]


def render(capsys, path, *flags: str) -> list[tuple[str, list[dict]]]:
    code = main(["render", str(path), *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return sections(out)


def test_the_mirror_holds_every_sample() -> None:
    assert len(FILES) == 20


@pytest.mark.parametrize("stage", ["first", "steady"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_upstream_file_renders_and_validates(capsys, path, stage) -> None:
    inputs = read_documents(path)
    out = render(capsys, path, "--stage", stage)
    assert len(out) == len(inputs)  # one section per input document, in file order
    for doc, (head, objs) in zip(inputs, out):
        name = doc["metadata"]["name"]
        if doc["kind"] != LWS:
            assert head.startswith(f"{doc['kind']} {name}: passed through unchanged")
            assert objs == [doc]
            continue
        assert head.startswith(f"{LWS} default/{name}: ")
        for obj in objs:
            validate_manifest(obj)
        replicas = doc["spec"].get("replicas", 1)
        size = doc["spec"]["leaderWorkerTemplate"].get("size", 1)
        sts = [o["metadata"]["name"] for o in objs if o["kind"] == "StatefulSet"]
        assert sts[0] == name and next(o for o in objs if o["kind"] == "StatefulSet")["spec"]["replicas"] == replicas
        held = "exclusive-topology" in str(doc["metadata"].get("annotations"))
        if stage == "steady" or not held:
            assert sts[1:] == [f"{name}-{i}" for i in range(replicas)] if size > 1 else sts == [name]
            assert {o["kind"] for o in objs} == {"ControllerRevision", "Service", "StatefulSet"}
        else:
            assert sts == [name]
            assert "worker StatefulSets follow once leader pods are scheduled" in head


@pytest.mark.parametrize("path", [p for p in FILES if "hpa" in p.stem or "autoscaler" in p.stem], ids=lambda p: p.stem)
def test_hpa_only_files_are_passed_through(capsys, path) -> None:
    docs = read_documents(path)
    out = render(capsys, path)
    if all(d["kind"] != LWS for d in docs):
        assert [objs for _, objs in out] == [[d] for d in docs]


def test_service_next_to_the_lws_keeps_its_place_and_fields(capsys) -> None:
    path = UPSTREAM / "docs_examples_sample_lws-volume-claim-templates.yaml"
    docs = read_documents(path)
    out = render(capsys, path, "--namespace", "team-a")
    assert [d["kind"] for d in docs] == [LWS, "Service"]
    (lws_head, lws_objs), (svc_head, svc_objs) = out
    assert lws_head.startswith(f"{LWS} team-a/lws: ") and svc_head.startswith("Service lws-leader: passed through")
    assert {o["metadata"]["namespace"] for o in lws_objs} == {"team-a"}
    assert svc_objs == [docs[1]] and "namespace" not in svc_objs[0]["metadata"]  # unchanged: no namespace added


def test_name_selects_one_lws_and_drops_the_rest(capsys) -> None:
    path = UPSTREAM / "docs_examples_vllm_GPU_lws.yaml"
    out = render(capsys, path, "--name", "vllm")
    assert len(out) == 1 and out[0][0].startswith(f"{LWS} default/vllm: ")


def test_unknown_name_lists_the_names(capsys) -> None:
    code = main(["render", str(UPSTREAM / "docs_examples_vllm_GPU_lws.yaml"), "--name", "nope"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "no workload named 'nope'" in err and "LeaderWorkerSet/vllm" in err


def test_several_lws_in_one_file_all_render_and_name_picks_one(capsys, tmp_path) -> None:
    a = read_documents(UPSTREAM / "docs_examples_sample_lws.yaml")[0]
    b = read_documents(UPSTREAM / "docs_examples_sample_lws-multi-template.yaml")[0]
    svc = read_documents(UPSTREAM / "docs_examples_sglang_lws.yaml")[1]
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump_all([a, svc, b]))
    out = render(capsys, path)
    assert [head.split(":")[0] for head, _ in out] == [
        f"{LWS} default/{a['metadata']['name']}",
        f"Service {svc['metadata']['name']}",
        f"{LWS} default/{b['metadata']['name']}",
    ]
    assert out[1][1] == [svc]
    only = render(capsys, path, "--name", b["metadata"]["name"])
    assert len(only) == 1 and only[0][1] == out[2][1]
