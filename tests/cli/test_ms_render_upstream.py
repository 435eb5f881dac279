"""Every upstream ModelServing example (mirrored in tests/manifests_upstream_kthena) renders, at
the first stage and at steady state, into objects that validate strictly against Kubernetes 1.35;
the one sample upstream's webhook rejects is refused with exit 2 naming the field."""

from __future__ import annotations

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.cli import main

MIRRORS = TESTS_DIR / "manifests_upstream_kthena"
REJECTED = {"examples_model-serving_multi-node_fb05987.yaml": "spec.template.roles[0].name"}
FILES = sorted(p for p in MIRRORS.glob("*.yaml"))


def test_the_mirrors_are_there() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("stage", ["first", "steady"])
@pytest.mark.parametrize("path", [p for p in FILES if p.name not in REJECTED], ids=lambda p: p.stem)
def test_every_upstream_example_renders_valid_objects(path, stage, capsys) -> None:
    code = main(["render", "--stage", stage, str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    objs = [o for o in yaml.safe_load_all(out) if o]
    kinds = {o["kind"] for o in objs}
    assert "StatefulSet" in kinds and "ControllerRevision" in kinds
    for obj in objs:
        validate_manifest(obj)
    if stage == "steady":
        entry = [
            o
            for o in objs
            if o["kind"] == "StatefulSet" and o["spec"]["replicas"] == 1 and not o["metadata"]["name"].endswith("-w")
        ]
        assert entry, "every role replica has its entry StatefulSet"


@pytest.mark.parametrize("name,field", sorted(REJECTED.items()))
def test_the_sample_upstream_rejects_is_refused(name, field, capsys) -> None:
    assert main(["render", str(MIRRORS / name)]) == 2
    assert field in capsys.readouterr().err
