"""Every mirrored upstream Kthena ModelServing manifest parses unchanged and validates (or is
rejected exactly as upstream's webhook rejects it), and the README lists every file."""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import REPO_ROOT

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.rules import DNS1035_MSG
from pulumi_lws.modelserving.api import ModelServing

DIR = REPO_ROOT / "tests" / "manifests_upstream_kthena"
FILES = sorted(DIR.glob("*.yaml"))
#: upstream's webhook rejects these (upstream-addenda §3.8), with exactly these errors
REJECTED = {
    "examples_model-serving_multi-node_fb05987.yaml": [
        (
            "spec.template.roles[0].name",
            "role name must be a valid DNS-1035 label (lowercase alphanumeric "
            "characters or '-', must start with a letter): " + DNS1035_MSG,
        )
    ],
}


def test_mirror_is_complete() -> None:
    assert len(FILES) == 23
    readme = (DIR / "README.md").read_text()
    listed = set(re.findall(r"^\| `([^`]+\.yaml)`", readme, flags=re.MULTILINE))
    assert listed == {f.name for f in FILES}
    for f in FILES:
        assert re.match(r"# mirrors volcano-sh/kthena \S+\.yaml @ [0-9a-f]{7}\n", f.read_text()), f.name


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_upstream_manifest(path: pathlib.Path) -> None:
    if path.name in REJECTED:
        with pytest.raises(SpecError) as exc:
            ModelServing.from_manifest(path)
        assert [(e.path, e.message) for e in exc.value.errors] == REJECTED[path.name]
        return
    m = ModelServing.from_manifest(path)
    assert m.name and m.roles
    again = ModelServing.from_manifest(m.to_wire())  # the wire form is itself a valid manifest
    assert again.to_wire() == m.to_wire()
