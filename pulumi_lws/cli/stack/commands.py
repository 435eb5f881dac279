"""The ``preview``, ``up`` and ``destroy`` commands (package docstring: what one run is).

Exit status: 0 done; 2 bad input — no project, bad config, or the user's program raised (shown as
Pulumi shows it: the message and the program's own frames, ``PULUMI_LWS_DEBUG=1`` for all
frames); ``up --until-complete``: 1 when a component ends blocked (a blocker other than waiting
for pods) or the rollout is not complete after ``--max-updates``.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.stack import display
from pulumi_lws.cli.stack.changes import STACK_TYPE, Change, changes, current_resources
from pulumi_lws.cli.stack.project import Project, StackConfig, choose_stack, load_project, stack_config
from pulumi_lws.cli.stack.state import StackState, StateStore, masked
from pulumi_lws.cli.terminal import table_glyphs
from pulumi_lws.core.contract.glyphs import ASCII, prefer
from pulumi_lws.core.contract.stage import waits_for_cluster


class ProgramError(Exception):
    """The user's program raised ``error``; ``text`` is what Pulumi would show for it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass
class Run:
    """One preview or update of the stack."""

    preview: bool
    changes: list[Change]
    logs: list[Any]
    outputs: dict[str, Any]
    previous_outputs: dict[str, Any]
    stages: dict[str, Any] = field(default_factory=dict)
    time: float = 0.0


# ---- arguments -------------------------------------------------------------------------------
def add_stack_arguments(p: argparse.ArgumentParser, *, config: bool = True) -> None:
    p.add_argument(
        "directory",
        nargs="?",
        default=".",
        metavar="DIR",
        help="the Pulumi project directory (Pulumi.yaml and the program; default: the current directory)",
    )
    p.add_argument(
        "-s", "--stack", help="the stack (default: PULUMI_STACK, else the only Pulumi.<stack>.yaml, else dev)"
    )
    if config:
        p.add_argument(
            "-c",
            "--config",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a config value for this run (overrides Pulumi.<stack>.yaml; KEY without a namespace "
            "gets the project's)",
        )
        p.add_argument(
            "--config-secret",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="a secret config value (read with Config.get_secret; overrides a secure: value of the "
            "stack file, which is otherwise decrypted with PULUMI_CONFIG_PASSPHRASE[_FILE])",
        )
        p.add_argument(
            "--config-file",
            metavar="FILE",
            help="use the configuration (and encryptionsalt) of FILE instead of DIR/Pulumi.<stack>.yaml, as "
            "pulumi up --config-file does",
        )
        p.add_argument("--diff", action="store_true", help="show the property diff of every changed resource")
        p.add_argument("--show-sames", action="store_true", help="show unchanged resources in the tree too")
        p.add_argument(
            "--ascii",
            action="store_true",
            help="draw the tree and the stage tables with ASCII (|- and U u o x g t) instead of box drawing "
            "and emoji; automatic when stdout cannot encode them",
        )
        p.add_argument(
            "--reset",
            action="store_true",
            help="start from an empty simulated cluster and stack (removes .pulumi-lws/<stack>/ first)",
        )


def _context(args: argparse.Namespace) -> tuple[Project, StackConfig, StateStore]:
    project = load_project(args.directory)
    stack = choose_stack(project, args.stack)
    config = stack_config(project, stack, args.config, args.config_secret, config_file=args.config_file)
    return project, config, StateStore(project, stack)


# ---- one run -----------------------------------------------------------------------------------
def _user_frames(exc: BaseException, project: Project) -> traceback.StackSummary:
    """The traceback's frames in the user's program: files under DIR, not a virtualenv's (every
    frame with ``PULUMI_LWS_DEBUG=1``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if os.environ.get(X.DEBUG_ENV):
        return frames
    root = str(project.directory) + os.sep
    return traceback.StackSummary.from_list(
        [f for f in frames if f.filename.startswith(root) and os.sep + ".venv" + os.sep not in f.filename]
    )


def _program_error(exc: BaseException, project: Project) -> ProgramError:
    """What Pulumi shows for ``exc``: a ``pulumi.RunError`` (an invalid component input, a cluster
    error) as its message, then the user's frame that raised it — the innermost one in DIR, the
    line that constructed the component, also inside the user's own components; any other
    exception as an unhandled one with the user's frames."""
    import pulumi

    frames = _user_frames(exc, project)
    if isinstance(exc, pulumi.RunError):
        where = "".join(traceback.StackSummary.from_list(frames[-1:]).format()) if frames else ""
        return ProgramError(f"error: {exc}" + ("\n" + where.rstrip("\n") if where else ""))
    kind = type(exc)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    text = "".join(
        [
            "error: Program failed with an unhandled exception:\n",
            "Traceback (most recent call last):\n",
            *frames.format(),
            f"{name}: {exc}",
        ]
    )
    return ProgramError(text)


def run_once(project: Project, config: StackConfig, store: StateStore, *, preview: bool) -> Run:
    """One ``pulumi preview`` (nothing written) or ``pulumi up`` (applied and saved) of the stack."""
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    cluster = store.load_cluster()
    previous = store.load_stack()
    try:
        result = run_program(
            project.program,
            cluster,
            cluster,
            preview=preview,
            stack=config.stack,
            project=project.name,
            config=config.values,
            secret_keys=config.secret_keys,
        )
    except Exception as exc:
        raise _program_error(exc, project) from exc
    current = current_resources(result)
    outputs = {
        k: masked({"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": v})
        if k in result.secret_outputs
        else v
        for k, v in result.outputs.items()
    }
    if not preview:
        cluster.apply(result.manifests, stack_id=config.stack, dependencies=result.dependencies)
        store.save(cluster, StackState(current, outputs))
    return Run(
        preview,
        changes(previous, current),
        result.logs,
        outputs,
        previous.outputs,
        dict(result.stages_by_component),
        cluster.clock.now,
    )


def wait(store: StateStore, seconds: float) -> float:
    """Let ``seconds`` of simulated time pass on the saved cluster (pods start, become ready)."""
    cluster = store.load_cluster()
    cluster.step(cluster.clock.now + seconds)
    stack = store.load_stack()
    store.save(cluster, stack)
    return cluster.clock.now


def render(run: Run, stack: str, *, diff: bool = False, show_sames: bool = False, ascii_only: bool = False) -> str:
    names = {c.urn: (c.resource.type, c.resource.name) for c in run.changes}
    stack_urn = next((c.urn for c in run.changes if c.resource.type == STACK_TYPE), "")
    counted: dict[str, int] = {}
    for entry in run.logs:
        if entry.severity != "debug":
            counted[entry.urn or stack_urn] = counted.get(entry.urn or stack_urn, 0) + 1
    verb = "Previewing update" if run.preview else "Updating"
    lines = [f"{verb} ({stack}) on the simulated cluster at t={run.time:g}s:", ""]
    if diff:
        lines += display.diff_listing(run.changes, preview=run.preview)
    else:
        lines += display.tree_lines(
            run.changes, counted, preview=run.preview, show_sames=show_sames, ascii_only=ascii_only
        )
    lines.append("")
    lines += display.diagnostics_lines(run.logs, names, stack_urn)
    lines += display.outputs_lines(run.previous_outputs, run.outputs, preview=run.preview)
    lines += display.summary_lines(run.changes, preview=run.preview)
    return "\n".join(lines) + "\n"


def _show_error(err: ProgramError, stack: str, project: Project) -> int:
    print("Diagnostics:", file=sys.stderr)
    print(f"  {STACK_TYPE} ({project.name}-{stack}):", file=sys.stderr)
    for line in err.text.splitlines():
        print(f"    {line}".rstrip(), file=sys.stderr)
    return X.BAD_INPUT


# ---- commands ----------------------------------------------------------------------------------
def cmd_preview(args: argparse.Namespace) -> int:
    project, config, store = _context(args)
    if args.reset:
        store.clear()
    glyphs = table_glyphs(args.ascii)
    try:
        with prefer(glyphs):
            run = run_once(project, config, store, preview=True)
    except ProgramError as err:
        return _show_error(err, config.stack, project)
    sys.stdout.write(render(run, config.stack, diff=args.diff, show_sames=args.show_sames, ascii_only=glyphs is ASCII))
    return X.OK


def _settled(run: Run) -> tuple[bool, list[str]]:
    """(every component complete, the real blockers): what ends ``--until-complete``. A blocker the
    cluster clears by itself (:func:`~pulumi_lws.core.contract.stage.waits_for_cluster`: pods
    becoming ready or going away) is no reason to stop; ``pulumi-lws rollout`` reads it the same."""
    blocked = [
        f"{name}: {stage.blocker.code}: {stage.blocker.message}"
        for name, stage in run.stages.items()
        if stage.blocker is not None and not waits_for_cluster(stage.blocker.code)
    ]
    complete = all(stage.complete and stage.blocker is None for stage in run.stages.values())
    return complete, blocked


def cmd_up(args: argparse.Namespace) -> int:
    project, config, store = _context(args)
    if args.reset:
        store.clear()
    step = args.wait if args.wait is not None else (5.0 if args.until_complete else 0.0)
    updates = args.max_updates if args.until_complete else 1
    glyphs = table_glyphs(args.ascii)
    for n in range(1, updates + 1):
        try:
            with prefer(glyphs):
                run = run_once(project, config, store, preview=False)
        except ProgramError as err:
            return _show_error(err, config.stack, project)
        sys.stdout.write(
            render(run, config.stack, diff=args.diff, show_sames=args.show_sames, ascii_only=glyphs is ASCII)
        )
        if not args.until_complete:
            if step:
                print(f"\nwaited {step:g}s of simulated time: t={wait(store, step):g}s")
            return X.OK
        complete, blocked = _settled(run)
        if complete or blocked:
            print(
                f"\nupdate {n}: "
                + ("every component's rollout is complete" if complete else "blocked: " + "; ".join(blocked))
            )
            return X.OK if complete else X.NOT_CONVERGED
        t = wait(store, step)
        print(f"\nupdate {n}: in progress; waited {step:g}s of simulated time (t={t:g}s)\n")
    print(f"not complete after {updates} updates (--max-updates)")
    return X.NOT_CONVERGED


def cmd_destroy(args: argparse.Namespace) -> int:
    project = load_project(args.directory)
    stack = choose_stack(project, args.stack)
    store = StateStore(project, stack)
    if not store.exists():
        print(f"Destroying ({stack}): nothing to destroy (no {store.directory.relative_to(project.directory)})")
        return X.OK
    count = len(store.load_stack().resources)
    store.clear()
    print(
        f"Destroying ({stack}): removed the simulated cluster and the stack's state "
        f"({count} resources, {store.directory.relative_to(project.directory)})"
    )
    return X.OK


def register_preview(sub: Any) -> None:
    p = sub.add_parser(
        "preview",
        help="preview your own Pulumi program against the simulated cluster",
        description="Run the Pulumi program in DIR under Pulumi's mock engine against the simulated "
        "cluster kept in DIR/.pulumi-lws/<stack>/ and show what `pulumi preview` would: "
        "the resource tree, each component's stage table, outputs, counts. Changes nothing.",
    )
    add_stack_arguments(p)
    p.set_defaults(handler=cmd_preview)


def register_up(sub: Any) -> None:
    p = sub.add_parser(
        "up",
        help="one `pulumi up` of your own program on the simulated cluster (kept in DIR/.pulumi-lws/)",
        description="Run the Pulumi program in DIR as one `pulumi up` against the simulated cluster "
        "kept in DIR/.pulumi-lws/<stack>/: each run applies one rollout stage, as "
        "consecutive `pulumi up`s do.",
    )
    add_stack_arguments(p)
    p.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="let this much simulated time pass after applying (pods start and become ready)",
    )
    p.add_argument(
        "--until-complete",
        action="store_true",
        help="repeat up (waiting --wait seconds, default 5, between updates) until every component's "
        "stage is complete (exit 0) or blocked (exit 1)",
    )
    p.add_argument(
        "--max-updates", type=int, default=100, help="with --until-complete: give up after this many (default 100)"
    )
    p.set_defaults(handler=cmd_up)


def register_destroy(sub: Any) -> None:
    p = sub.add_parser("destroy", help="remove the simulated cluster and stack state of DIR (.pulumi-lws/<stack>/)")
    add_stack_arguments(p, config=False)
    p.set_defaults(handler=cmd_destroy)
