"""``pulumi-lws`` command line: render | plan | simulate | rollout.

Each subcommand lives in its own module exposing ``register(subparsers)``; a handler returns the
process exit status. Errors in user input exit 2 with the message on stderr; a rollout that
violates an invariant or ends blocked exits 1.
"""
from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = ("render", "plan", "simulate", "rollout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pulumi-lws", description="LeaderWorkerSet semantics for Pulumi, without an operator.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"pulumi_lws.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"pulumi_lws.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from pulumi_lws.core.errors import SpecError

    try:
        return int(args.handler(args) or 0)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
