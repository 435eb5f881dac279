"""``pulumi-lws`` command line: render | plan | simulate | rollout.

Each subcommand lives in its own module exposing ``register(subparsers)``; a handler returns the
process exit status (:mod:`pulumi_lws.cli.exit_codes`).

Invariant: :func:`main` never lets a traceback reach the user. Errors in user input
(:class:`SpecError`, unreadable files, YAML errors) exit 2 with one ``error:`` line on stderr;
argparse usage errors exit 2 as argparse does; a cluster that cannot be reached, read or
written (:class:`~pulumi_lws.core.contract.ports.ClusterError`: kubeconfig, connection, TLS, HTTP error,
malformed answer, timeout) exits 4 with one line naming the server or file; a closed standard output (``| head``) exits 141
silently; Ctrl-C exits 130 with one line; any other exception is an internal error: exit 3 with
one line, and the traceback only when ``PULUMI_LWS_DEBUG`` is set.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback

from pulumi_lws.cli import exit_codes as X

SUBCOMMANDS = ("render", "plan", "simulate", "preview", "up", "destroy", "rollout", "rollback", "status")


def build_parser() -> argparse.ArgumentParser:
    from pulumi_lws import __version__
    from pulumi_lws.cli.apis import api_lines, kinds

    epilog = f"workload APIs:\n{api_lines()}\n\nexit codes:\n" + "\n".join(
        f"  {code:>3}  {meaning}" for code, meaning in X.TABLE
    )
    parser = argparse.ArgumentParser(
        prog="pulumi-lws",
        description=f"{kinds('and')} semantics for Pulumi, without an operator.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
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
    """Run one command; return its exit status (see the module docstring). The collector's
    thresholds are raised while it runs, or it is off for a command that asks (``collector_off``;
    :mod:`pulumi_lws.cli.collector`)."""
    from pulumi_lws.cli.collector import fewer_collections

    try:
        args = build_parser().parse_args(argv)
        with fewer_collections(off=getattr(args, "collector_off", False)):
            code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a closed pipe surfaces here, inside the handler of BrokenPipeError
        return code
    except BrokenPipeError:
        _silence_stdout()
        return X.BROKEN_PIPE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return X.INTERRUPTED
    except SystemExit as exc:  # argparse: --help/--version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else X.BAD_INPUT)
    except Exception as exc:
        from pulumi_lws.core.contract.ports import ClusterError

        if isinstance(exc, ClusterError):  # the message names the server or the kubeconfig file and the cause
            from pulumi_lws.backend import NoClusterError, command_line_advice

            message = command_line_advice(exc) if isinstance(exc, NoClusterError) else str(exc)
            print(f"error: {' '.join(message.split())}", file=sys.stderr)
            return X.UNREACHABLE
        known = user_error(exc)
        if known is not None:
            print(f"error: {known}", file=sys.stderr)
            return X.BAD_INPUT
        print(
            f"internal error: {type(exc).__name__}: {exc} (please report; rerun with {X.DEBUG_ENV}=1 "
            "for the traceback)",
            file=sys.stderr,
        )
        if os.environ.get(X.DEBUG_ENV):
            traceback.print_exc(file=sys.stderr)
        return X.INTERNAL_ERROR


def user_error(exc: BaseException) -> str | None:
    """The one-line message of an exception caused by the user's input, or None (an internal error)."""
    import yaml

    from pulumi_lws.cli.stack.project import ProjectError
    from pulumi_lws.core.contract.errors import SpecError
    from pulumi_lws.sim.cluster.persist import StateFormatError

    if isinstance(exc, (SpecError, ProjectError, StateFormatError)):
        return str(exc)
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
        return f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not UTF-8 text: {exc}"
    if isinstance(exc, yaml.YAMLError):
        return f"invalid YAML: {exc}"
    return None


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
