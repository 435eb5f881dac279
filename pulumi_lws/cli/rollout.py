"""``pulumi-lws rollout``: loop ``pulumi up`` (one stage each) until every workload reports complete.

Uses the Pulumi Automation API, which shells out to the ``pulumi`` CLI: without it on PATH the
command exits 2. The loop itself (:func:`drive`) is a pure function over :class:`StackLike` (and
injected clock/sleep), so it is tested with a fake stack. It reads the outputs every workload
component publishes (LeaderWorkerSet, ModelServing, DisaggregatedSet: :mod:`pulumi_lws.cli.progress`).

Between two ``up`` runs it does not sleep blindly: when the stack can report readiness
(:meth:`StackLike.poll`, a fingerprint of the workloads' pods: :class:`AutomationStack` lists each
workload's ``stage.pods`` in its own namespace, on the cluster of the stack's ``kubernetes:kubeconfig``
/ ``kubernetes:context`` config), it polls every ``poll`` seconds and runs the next ``up`` as soon as
the fingerprint changes, at the latest after ``interval`` seconds.

**Waiting is not being blocked.** A blocker the cluster clears by itself — groups becoming ready or
going away, a PostTermination replacement, a groups-in-flight cap
(:func:`~pulumi_lws.core.contract.stage.waits_for_cluster`, the list ``pulumi-lws up
--until-complete`` reads too) — is how a healthy rollout paces itself: it never counts toward
``patience``, only ``max_stages`` and ``timeout`` bound it. Any other blocker counts once per
``up`` that reports it again *without progress* since the previous one; **progress** is the
readiness fingerprint changing while the driver waited, or any workload's stage output (groups,
replicas, partition, counts, roles, blocker text; not the observation time) changing between two
``up`` runs. A different blocker, or one after progress, starts the count again at 1.

Stop conditions, first match wins (exit status, README "Exit codes"):

* every workload's ``stage.complete`` -> 0;
* a workload reports ``ProgressDeadlineExceeded`` (its ``Progressing=False`` condition) -> 5;
* a workload is paused (``pulumi-lws.io/paused``) -> 6: resume it, then run again;
* the same blocker other than waiting ``patience`` times in a row without progress -> 1;
* ``max_stages`` runs (unless ``until_complete``) or ``timeout`` seconds elapsed -> 1;
* an ``up`` fails on a cluster fault (a component's ``cluster error:``: kubeconfig, connection,
  TLS, HTTP error, malformed answer, timeout) -> 4, one line naming the server or the file;
* an ``up`` fails otherwise -> 7, the engine's error lines (an object that already exists, a
  server-side-apply conflict, an error in the program...). A transient conflict — another update
  holding the stack (``ConcurrentUpdateError``), a write refused because the object changed since
  it was read (``the object has been modified``) — is first run again, up to 3 runs in all with
  5 s then 10 s between them, never past ``timeout`` (:mod:`pulumi_lws.cli.up_failure`).

The stack itself: ``--stack`` / ``--cwd`` naming no stack (or no project, or a backend not logged
in) -> 2, the engine's message.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import up_failure as F
from pulumi_lws.cli.progress import Display, WorkloadProgress, describe, workloads_in
from pulumi_lws.core.features.control import CHECK_CAPACITY_ENV


class StackLike(Protocol):
    def up(self) -> Mapping[str, Any]:
        """Run one ``pulumi up``; return the stack outputs as plain values."""


@dataclass
class RolloutResult:
    complete: bool
    stages: list[dict[str, Any]] = field(default_factory=list)
    blocker: str | None = None
    reason: str = ""
    exit_code: int = X.NOT_CONVERGED
    #: a failed ``pulumi up`` (exit 4 or 7): what the engine said, one entry per error (``reason``
    #: says which run failed); None otherwise
    error: list[str] | None = None
    #: seconds spent in the driver itself (parsing outputs, display), excluding up() and waiting
    overhead: list[float] = field(default_factory=list)


def lws_outputs(outputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every workload output set (kept name: it predates ModelServing and DisaggregatedSet)."""
    return [{"stage": dict(w.stage), "blocker": w.blocker} for w in workloads_in(outputs)]


def _verdict(sets: list[WorkloadProgress], n: int) -> tuple[int, str] | None:
    if all(w.complete for w in sets):
        return X.OK, f"complete after {n} stage(s)"
    late = [w for w in sets if w.deadline_exceeded]
    if late:
        return X.DEADLINE_EXCEEDED, "; ".join(f"{w.key or 'workload'}: {w.deadline_message}" for w in late)
    paused = [w.key or "workload" for w in sets if w.paused and not w.complete]
    if paused:
        return (
            X.PAUSED,
            f"paused: {', '.join(paused)} (remove pulumi-lws.io/paused or set paused: false, then run again)",
        )
    return None


def wait_for_change(
    poll_fn: Callable[[], Hashable] | None,
    interval: float,
    poll: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> str:
    """Wait at most ``interval`` seconds, returning early once ``poll_fn``'s fingerprint changes
    (checked every ``poll`` seconds). Without ``poll_fn``: sleep ``interval``. Returns why it woke."""
    if poll_fn is None or poll <= 0:
        sleep(interval)
        return "interval"
    start, first = clock(), poll_fn()
    while clock() - start + poll <= interval:
        sleep(poll)
        if poll_fn() != first:
            return "changed"
    rest = interval - (clock() - start)
    if rest > 0:
        sleep(rest)
    return "interval"


def _joined(blockers: Iterable[str | None]) -> str | None:
    return "; ".join(sorted({str(b) for b in blockers if b})) or None


def progress_key(sets: list[WorkloadProgress]) -> str:
    """What "the stage changed" compares: every workload's stage output and blocker, without the
    observation time (``control.now``, new at every ``up``)."""
    view = []
    for w in sets:
        stage = dict(w.stage)
        if isinstance(stage.get("control"), Mapping):
            stage["control"] = {k: v for k, v in stage["control"].items() if k != "now"}
        view.append([w.key, stage, w.blocker])
    return json.dumps(view, sort_keys=True, default=str)


def drive(
    stack: StackLike,
    *,
    max_stages: int = 50,
    interval: float = 10.0,
    patience: int = 3,
    echo: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    until_complete: bool = False,
    timeout: float | None = None,
    poll: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    display: Display | None = None,
    up_attempts: int = F.UP_ATTEMPTS,
) -> RolloutResult:
    """Run ``stack.up()`` until a stop condition of the module docstring; never raises on them, nor
    on a failed ``pulumi up`` (:mod:`pulumi_lws.cli.up_failure`: retried when transient, then
    ``exit_code`` 4 or 7 with ``error``)."""
    show = display or Display(sys.stdout, tty=False)
    say = echo or show.line
    result = RolloutResult(complete=False)
    started = clock()
    last_blocker, last_key, repeats, n = None, None, 0, 0
    woke = ""
    poll_fn = getattr(stack, "poll", None)
    deadline = None if timeout is None else started + timeout
    while until_complete or n < max_stages:
        n += 1
        try:
            outputs = _up(stack, n, attempts=up_attempts, sleep=sleep, clock=clock, deadline=deadline, say=say)
        except Exception as exc:  # a failed `pulumi up` is exit 4 or 7 with the engine's words; anything else a bug
            fault = F.cluster_fault(exc)
            if fault is None and not F.is_command_error(exc):
                raise
            result.reason = f"stage {n}: pulumi up failed"
            result.exit_code, result.error = (
                (X.UNREACHABLE, [fault]) if fault is not None else (X.UP_FAILED, F.describe(exc))
            )
            return result
        t0 = clock()
        sets = workloads_in(outputs)
        if not sets:
            result.reason, result.exit_code = "the stack exports no workload `stage` output", X.NOT_CONVERGED
            return result
        for w in sets:
            say(describe(n, w, clock() - started))
            result.stages.append(dict(w.stage))
        verdict = _verdict(sets, n)
        result.overhead.append(clock() - t0)
        # what the last line names when the driver stops short of complete (waiting ones included)
        result.blocker = _joined(w.blocker for w in sets if w.blocker and not w.paused)
        if verdict is not None:
            result.exit_code, result.reason = verdict
            result.complete = verdict[0] == X.OK
            result.blocker = None if result.complete else result.blocker
            return result
        # waiting blockers never count; another one counts while it repeats without progress
        blocker = _joined(w.blocker for w in sets if w.blocker and not w.paused and not w.waiting)
        key = progress_key(sets)
        progressed = woke == "changed" or (last_key is not None and key != last_key)
        if blocker is None:
            repeats = 0
        elif blocker == last_blocker and not progressed:
            repeats += 1
        else:
            repeats = 1
        last_blocker, last_key = blocker, key
        if blocker and repeats >= patience:
            result.blocker = blocker
            result.reason = f"blocked for {repeats} consecutive stages without progress"
            return result
        if timeout is not None and clock() - started >= timeout:
            result.reason = f"not complete after {timeout:g}s (--timeout)"
            return result
        wait = interval if timeout is None else max(0.0, min(interval, timeout - (clock() - started)))
        show.status(f"waiting up to {wait:g}s for the cluster (stage {n})")
        woke = wait_for_change(poll_fn, wait, poll, sleep, clock)
    result.reason = f"not complete after {max_stages} stages"
    return result


def _up(
    stack: StackLike,
    n: int,
    *,
    attempts: int,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    deadline: float | None,
    say: Callable[[str], None],
) -> Mapping[str, Any]:
    """``stack.up()``, run again on a transient conflict (:func:`pulumi_lws.cli.up_failure.is_transient`):
    at most ``attempts`` runs, exponential backoff, never waiting past ``deadline``; the last
    failure is raised."""
    from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential

    def stop(state: RetryCallState) -> bool:
        upcoming = getattr(state, "upcoming_sleep", 0.0) or 0.0
        return state.attempt_number >= attempts or (deadline is not None and clock() + upcoming > deadline)

    def announce(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        said = F.describe(exc)[0] if exc is not None else "failed"
        say(
            f"stage {n}: pulumi up failed on a transient conflict ({said}); retry {state.attempt_number}/{attempts - 1} in {wait:g}s"
        )

    retrying = Retrying(
        sleep=sleep,
        stop=stop,
        wait=wait_exponential(multiplier=F.UP_RETRY_WAIT, max=F.UP_RETRY_MAX_WAIT),
        retry=retry_if_exception(F.is_transient),
        before_sleep=announce,
        reraise=True,
    )
    return retrying(stack.up)


#: the stack config keys of the cluster the default pulumi-kubernetes provider targets, which every
#: workload component observes too (:func:`pulumi_lws.components.base.kubernetes_provider_settings`)
KUBECONFIG_KEY, CONTEXT_KEY = "kubernetes:kubeconfig", "kubernetes:context"

#: one workload's pods as ``stage.pods`` names them: (namespace, Pod label selector)
PodTarget = tuple[str, Mapping[str, str | None]]


class AutomationStack:
    """StackLike over ``pulumi.automation`` (needs the ``pulumi`` CLI; ``stack``: an Automation API
    ``Stack`` already selected, for tests). ``poll`` fingerprints the pods every workload's
    ``stage.pods`` output names — in its namespace, with its label selector — so the driver runs the
    next ``up`` as soon as a pod changes. It reads them with the cluster the components observe:
    the stack's ``kubernetes:kubeconfig`` / ``kubernetes:context`` config (:func:`stack_client`)."""

    def __init__(self, stack_name: str, work_dir: str, *, stack: Any = None) -> None:
        if stack is None:
            from pulumi import automation as auto

            stack = auto.select_stack(stack_name=stack_name, work_dir=work_dir)
        self._stack = stack
        self._targets: list[PodTarget] = []
        self._client: Any = None

    def up(self) -> Mapping[str, Any]:
        res = self._stack.up(on_output=lambda line: None)
        outputs = {k: v.value for k, v in res.outputs.items()}
        self._targets = pod_targets(workloads_in(outputs))
        return outputs

    def poll(self) -> Hashable:
        if not self._targets:
            return None  # nothing names its pods (components before stage.pods): the driver waits --interval
        try:
            if self._client is None:
                self._client = stack_client(self._stack.get_all_config())
            return readiness_fingerprint(self._client, self._targets)
        except Exception:  # a poll never fails the rollout: the next up reads the cluster and says why
            return None


def pod_targets(sets: list[WorkloadProgress]) -> list[PodTarget]:
    """Every workload's (namespace, Pod selector) from its ``stage.pods`` output, each once."""
    seen: dict[str, PodTarget] = {}
    for w in sets:
        if w.pods is not None:
            namespace, selector = w.pods
            seen.setdefault(json.dumps([namespace, selector], sort_keys=True), (namespace, selector))
    return list(seen.values())


def stack_client(config: Mapping[str, Any]) -> Any:
    """A lightkube client of the cluster the stack's components observe: the stack config's
    ``kubernetes:kubeconfig`` (a path or the file's content) and ``kubernetes:context`` (unset: the
    current context of ``KUBECONFIG`` / ``~/.kube/config`` / in-cluster), built as the components'
    live backend builds it (:meth:`pulumi_lws.cluster.live.LiveCluster.from_kubeconfig`). ``config``:
    the Automation API's ``get_all_config()`` (``ConfigValue`` objects) or plain strings."""
    from pulumi_lws.cluster.live import LiveCluster

    def value(key: str) -> str | None:
        entry = config.get(key)
        entry = getattr(entry, "value", entry)
        return str(entry) if entry else None

    return LiveCluster.from_kubeconfig(value(CONTEXT_KEY), kubeconfig=value(KUBECONFIG_KEY)).client


def readiness_fingerprint(client: Any, targets: list[PodTarget]) -> Hashable:
    """One LIST of pods per (namespace, label selector), in that namespace only: each pod's
    namespace, name, uid, phase and Ready status. Any change — a pod created, deleted, started or
    ready — changes the fingerprint."""
    from lightkube.resources.core_v1 import Pod

    from pulumi_lws.cluster.resources import lightkube_labels

    out = []
    for namespace, selector in targets:
        for pod in client.list(Pod, namespace=namespace, labels=lightkube_labels(selector)):
            labels = pod.metadata.labels or {}
            if not all((k in labels) if v is None else labels.get(k) == v for k, v in selector.items()):
                continue  # selected server-side; checked again, as the live backend does
            status = pod.status
            ready = next((c.status for c in (status.conditions or []) if c.type == "Ready"), "") if status else ""
            out.append((namespace, pod.metadata.name, pod.metadata.uid, status.phase if status else "", ready))
    return tuple(sorted(out))


DESCRIPTION = """\
Run pulumi up in the Pulumi project directory, one rollout stage per run, until every
LeaderWorkerSet, ModelServing and DisaggregatedSet in the stack reports its rollout complete. After
each run it shows the stage, groups updated/ready/total, the rollout's elapsed time and an ETA
(from the cluster's timestamps), then waits for the cluster: it polls readiness every --poll
seconds and runs the next stage as soon as something changed, at most --interval seconds later.
Waiting for pods (a blocker such as waiting-for-groups, which the cluster clears by itself) never
stops it: only --max-stages and --timeout bound that. Any other blocker stops it once it is reported
--patience times in a row without progress (no stage or pod readiness change in between).
Exit status: 0 complete; 1 blocked (--patience times), or --max-stages / --timeout reached;
2 the Pulumi CLI is not on PATH (use pulumi-lws simulate to see a rollout without a cluster), or
--stack / --cwd select no stack; 4 a pulumi up failed on a cluster fault (kubeconfig,
connection, TLS, HTTP error, malformed answer, timeout); 5 a workload passed its progress deadline
(ProgressDeadlineExceeded); 6 a workload is paused; 7 a pulumi up failed otherwise (an object that
already exists, a server-side-apply conflict, an error in the program: the engine's error lines).
A pulumi up that fails on a transient conflict (another update in progress, "the object has been
modified") is run again first: 3 runs in all, 5 s then 10 s apart.
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rollout",
        help="loop pulumi up (one stage each) until the rollout completes",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--stack", default="dev", help="stack name")
    p.add_argument("--cwd", default=".", help="Pulumi project directory")
    p.add_argument("--max-stages", type=int, default=50, help="give up after this many pulumi up runs")
    p.add_argument(
        "--until-complete",
        action="store_true",
        help="no stage limit (still stops at a blocker, a passed progress deadline, a pause or --timeout)",
    )
    p.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    p.add_argument("--interval", type=float, default=10.0, help="at most this many seconds between stages")
    p.add_argument("--poll", type=float, default=2.0, help="seconds between readiness polls while waiting")
    p.add_argument(
        "--patience",
        type=int,
        default=3,
        help="stop after the same blocker this many pulumi up runs in a row without progress (a stage or pod "
        "readiness change); blockers that only wait for pods to become ready or go away never count",
    )
    p.add_argument(
        "--check-capacity",
        action="store_true",
        help="every component of the program checks that a stage's new pods fit the nodes before creating them "
        "(blocker insufficient-capacity; as the argument check_capacity, via PULUMI_LWS_CHECK_CAPACITY=true in "
        "the pulumi up runs; docs/capacity.md)",
    )
    p.set_defaults(handler=run)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after every option; the description's paragraphs kept as written."""


def run(args: argparse.Namespace, *, stack_factory: Callable[[str, str], StackLike] | None = None) -> int:
    if stack_factory is None and shutil.which("pulumi") is None:
        print(
            "error: `pulumi-lws rollout` drives `pulumi up` through the Automation API and needs the Pulumi CLI "
            "on PATH (https://www.pulumi.com/docs/install/). Without it, run `pulumi-lws simulate` instead.",
            file=sys.stderr,
        )
        return X.BAD_INPUT
    if getattr(args, "check_capacity", False):
        # the pulumi up runs (Automation API subprocesses, the program's language host) inherit it
        os.environ[CHECK_CAPACITY_ENV] = "true"
    try:
        stack = (stack_factory or AutomationStack)(args.stack, args.cwd)
    except Exception as exc:  # no such stack, no project in --cwd, not logged in: what --stack/--cwd name
        if not F.is_command_error(exc):
            raise
        _error(f"cannot select stack {args.stack!r} in {os.path.abspath(args.cwd)}", F.describe(exc))
        return X.BAD_INPUT
    display = Display(sys.stdout)
    result = drive(
        stack,
        max_stages=args.max_stages,
        interval=args.interval,
        patience=args.patience,
        until_complete=args.until_complete,
        timeout=args.timeout,
        poll=args.poll,
        display=display,
    )
    if result.error is not None:
        _error(result.reason, result.error)
        return result.exit_code
    display.line(result.reason + (f": {result.blocker}" if result.blocker else ""))
    return result.exit_code


def _error(what: str, lines: list[str]) -> None:
    """``error: WHAT: LINE`` for one line; ``error: WHAT:`` and the lines indented for more."""
    if len(lines) == 1:
        print(f"error: {what}: {lines[0]}" if what else f"error: {lines[0]}", file=sys.stderr)
        return
    print(f"error: {what}:", file=sys.stderr)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
