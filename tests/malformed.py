"""Helpers of the "bad input through every entry point" tests (one per API): write a manifest,
run CLI commands expecting exit 2 naming the field, and a mock engine that records registrations."""
from __future__ import annotations

from typing import Any, Sequence

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
        assert (named(err, field) if named else field in err), (argv[0], field, err)
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
