"""Helpers of the "bad input through every entry point" tests (one per API): write a manifest,
run CLI commands expecting exit 2 naming the field, a mock engine that records registrations,
and the bad-input families every API is fed alike (:func:`family_rows`: pod templates,
ObjectMeta, int32 fields)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import BAD_INPUT


def write_manifest(tmp_path, name: str, manifest: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return str(path)


def assert_rejected(capsys, commands: Sequence[Sequence[str]], field: str, *, named=None) -> None:
    """Each command exits 2, prints no traceback, and names ``field`` on stderr (``named``: a
    custom test of the message)."""
    for argv in commands:
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert code == BAD_INPUT, (argv[0], code, err)
        assert "Traceback" not in out + err
        assert named(err, field) if named else field in err, (argv[0], field, err)
        assert "apiVersion" not in out, "nothing is rendered when any input is invalid"


def recording_mocks(registered: list) -> Any:
    """Pulumi mocks that append every registered resource type to ``registered``."""
    import pulumi

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args):
            registered.append(args.typ)
            return args.name + "_id", args.inputs

        def call(self, args):
            return {}

    return Mocks()


# ---- bad-input families every API is fed alike (issue 23) ------------------------------------
#: (id, path under a pod template, bad value, the field the error names, under the template)
POD_TEMPLATE_BREAKS: tuple[tuple[str, str, Any, str], ...] = (
    ("container-unknown-field", "spec.containers[0].bogusField", 1, "spec.containers[0].bogusField"),
    ("spec-array", "spec", [], "spec"),
    ("empty-containers", "spec.containers", [], "spec.containers"),
    ("container-without-image", "spec.containers[0].image", "DELETE", "spec.containers[0].image"),
    (
        "cpu-abc",
        "spec.containers[0].resources",
        {"requests": {"cpu": "abc"}},
        "spec.containers[0].resources.requests[cpu]",
    ),
    (
        "port-overflow",
        "spec.containers[0].ports",
        [{"containerPort": 2**40}],
        "spec.containers[0].ports[0].containerPort",
    ),
    ("env-value-integer", "spec.containers[0].env", [{"name": "A", "value": 3}], "spec.containers[0].env[0].value"),
    ("template-label-value", "metadata", {"labels": {"role": "a b"}}, "metadata.labels"),
)
#: (id, path under the object, bad value, the field the error names)
METADATA_BREAKS: tuple[tuple[str, str, Any, str], ...] = (
    ("namespace-underscore", "metadata.namespace", "Bad_NS", "metadata.namespace"),
    ("label-value-space", "metadata.labels", {"app": "a b"}, "metadata.labels"),
    ("label-key-slashes", "metadata.labels", {"a/b/c": "x"}, "metadata.labels"),
    ("annotation-key", "metadata.annotations", {"bad key!": "x"}, "metadata.annotations"),
)
#: (id, bad value) for a field the CRD types ``integer, format: int32``
INT32_BREAKS: tuple[tuple[str, Any], ...] = (
    ("string", "3"),
    ("beyond-int32", 2**31),
    ("far-beyond", 2**40),
    ("fraction", 1.5),
    ("boolean", True),
)


def put(manifest: Mapping[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``manifest`` with the value at a wire path (``a.b[0].c``, ``m[key]``) set, or
    removed when ``value`` is ``"DELETE"``."""
    out = copy.deepcopy(dict(manifest))
    parts = [int(p) if p.isdigit() else p for p in (a or b for a, b in re.findall(r"\[([^\]]+)\]|([^.\[\]]+)", path))]
    node: Any = out
    for part in parts[:-1]:
        node = node[part]
    if isinstance(value, str) and value == "DELETE":
        del node[parts[-1]]
    else:
        node[parts[-1]] = copy.deepcopy(value)
    return out


def family_rows(
    good: Mapping[str, Any], templates: Sequence[str], int32_fields: Sequence[str], *, metadata: bool = True
) -> list[tuple[str, dict[str, Any], str]]:
    """(id, manifest, field) rows breaking ``good`` once each: every pod template at the wire paths
    ``templates`` by :data:`POD_TEMPLATE_BREAKS`, every field of ``int32_fields`` by
    :data:`INT32_BREAKS`, and (``metadata``) the object's metadata by :data:`METADATA_BREAKS`."""
    rows = [
        (f"{t}-{rid}", put(good, f"{t}.{rel}", value), f"{t}.{field}")
        for t in templates
        for rid, rel, value, field in POD_TEMPLATE_BREAKS
    ]
    rows += [(f"{f}-{rid}", put(good, f, value), f) for f in int32_fields for rid, value in INT32_BREAKS]
    if metadata:
        rows += [(rid, put(good, rel, value), field) for rid, rel, value, field in METADATA_BREAKS]
    return rows
