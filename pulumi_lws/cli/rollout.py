"""``pulumi-lws rollout``: loop ``pulumi up`` (one stage each) until every LWS reports complete.

Uses the Pulumi Automation API, which shells out to the ``pulumi`` CLI: without it on PATH the
command exits 2. The loop itself (:func:`drive`) is a pure function over :class:`StackLike`, so it
is tested with a fake stack.

Stop conditions: all LWS ``stage`` outputs say ``complete`` (exit 0); the same blocker is reported
``patience`` times in a row (exit 1); ``max_stages`` reached (exit 1).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi_lws.cli import exit_codes as X


class StackLike(Protocol):
    def up(self) -> Mapping[str, Any]:
        """Run one ``pulumi up``; return the stack outputs as plain values."""


@dataclass
class RolloutResult:
    complete: bool
    stages: list[dict[str, Any]] = field(default_factory=list)
    blocker: str | None = None
    reason: str = ""


def lws_outputs(outputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every LWS output set in the stack outputs: top-level ``stage`` (+ ``blocker``) or nested dicts."""
    found: list[dict[str, Any]] = []
    if isinstance(outputs.get("stage"), Mapping) and "complete" in outputs["stage"]:
        found.append({"stage": dict(outputs["stage"]), "blocker": outputs.get("blocker")})
    for value in outputs.values():
        if isinstance(value, Mapping) and isinstance(value.get("stage"), Mapping):
            found.append({"stage": dict(value["stage"]), "blocker": value.get("blocker")})
    return found


def drive(stack: StackLike, *, max_stages: int = 50, interval: float = 10.0, patience: int = 3,
          echo: Callable[[str], None] = print, sleep: Callable[[float], None] = time.sleep) -> RolloutResult:
    """Run ``stack.up()`` until complete, a persistent blocker or ``max_stages``."""
    result = RolloutResult(complete=False)
    last_blocker, repeats = None, 0
    for n in range(1, max_stages + 1):
        outputs = stack.up()
        sets = lws_outputs(outputs)
        if not sets:
            result.reason = "the stack exports no LeaderWorkerSet `stage` output"
            return result
        blockers = sorted({s["blocker"] for s in sets if s.get("blocker")})
        blocker = "; ".join(blockers) or None
        for s in sets:
            st = s["stage"]
            echo(f"stage {n}: replicas={st.get('replicas')} partition={st.get('partition')} groups={st.get('groups') or '-'}"
                 f" case={st.get('case')} complete={st.get('complete')}" + (f" blocked: {s['blocker']}" if s.get("blocker") else ""))
            result.stages.append(st)
        if all(s["stage"].get("complete") for s in sets):
            result.complete, result.reason = True, f"complete after {n} stage(s)"
            return result
        repeats = repeats + 1 if blocker is not None and blocker == last_blocker else (1 if blocker else 0)
        last_blocker = blocker
        if blocker and repeats >= patience:
            result.blocker, result.reason = blocker, f"blocked for {repeats} consecutive stages"
            return result
        sleep(interval)
    result.reason = f"not complete after {max_stages} stages"
    return result


class AutomationStack:
    """StackLike over ``pulumi.automation`` (needs the ``pulumi`` CLI)."""

    def __init__(self, stack_name: str, work_dir: str) -> None:
        from pulumi import automation as auto

        self._stack = auto.select_stack(stack_name=stack_name, work_dir=work_dir)

    def up(self) -> Mapping[str, Any]:
        res = self._stack.up(on_output=lambda line: None)
        return {k: v.value for k, v in res.outputs.items()}


DESCRIPTION = """\
Run pulumi up in the Pulumi project directory, one rollout stage per run, until every
LeaderWorkerSet in the stack reports its rollout complete. Between runs, wait --interval seconds
so the cluster can make groups ready. Stops with exit status 1 when the same blocker is reported
--patience times in a row or after --max-stages runs; exit status 2 when the Pulumi CLI is not on
PATH (use pulumi-lws simulate to see a rollout without a cluster).
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rollout", help="loop pulumi up (one stage each) until the rollout completes",
                              description=DESCRIPTION, formatter_class=HelpFormatter)
    p.add_argument("--stack", default="dev", help="stack name")
    p.add_argument("--cwd", default=".", help="Pulumi project directory")
    p.add_argument("--max-stages", type=int, default=50, help="give up after this many pulumi up runs")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between stages")
    p.add_argument("--patience", type=int, default=3, help="stop after the same blocker this many times in a row")
    p.set_defaults(handler=run)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after every option; the description's paragraphs kept as written."""


def run(args: argparse.Namespace) -> int:
    if shutil.which("pulumi") is None:
        print("error: `pulumi-lws rollout` drives `pulumi up` through the Automation API and needs the Pulumi CLI "
              "on PATH (https://www.pulumi.com/docs/install/). Without it, run `pulumi-lws simulate` instead.",
              file=sys.stderr)
        return X.BAD_INPUT
    stack = AutomationStack(args.stack, args.cwd)
    result = drive(stack, max_stages=args.max_stages, interval=args.interval, patience=args.patience)
    print(result.reason + (f": {result.blocker}" if result.blocker else ""))
    return X.OK if result.complete else X.NOT_CONVERGED
