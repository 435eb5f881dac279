"""``pulumi-lws rollout``'s loop (:func:`drive`) against a faked Automation API boundary: a stack
whose ``up`` returns scripted outputs of the three components, an injected clock and sleep, and
the progress display in terminal and plain modes; the exit codes of every stop condition."""

from __future__ import annotations

import io

import pytest

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.progress import ERASE_LINE, Display
from pulumi_lws.cli.rollout import drive


def stage(
    groups: str,
    *,
    complete: bool = False,
    paused: bool = False,
    exceeded: bool = False,
    roles=None,
    updated: int = 0,
    total: int = 4,
    started: float = 1000.0,
    now: float = 1060.0,
) -> dict:
    control = {
        "paused": paused,
        "deadlineExceeded": exceeded,
        "updatedGroups": updated,
        "totalGroups": total,
        "readyGroups": groups.count("U") + groups.count("o"),
        "startedAt": started,
        "now": now,
        "progressing": {
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": "no group became ready ...; holding: waiting for groups 3",
        }
        if exceeded
        else None,
    }
    out = {
        "policy": "lws/ordinal",
        "replicas": total,
        "partition": None,
        "case": None,
        "complete": complete,
        "groups": groups,
        "paused": paused,
        "control": control,
    }
    if roles is not None:
        out["roles"] = roles
    return out


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s


class FakeStack:
    """The Automation API boundary: each ``up`` returns the next outputs; ``poll`` a fingerprint."""

    def __init__(self, outputs: list[dict], fingerprints: list | None = None, clock: FakeClock | None = None) -> None:
        self.outputs, self.ups = outputs, 0
        self.fingerprints = list(fingerprints or [])
        self.clock = clock
        if fingerprints is None:
            self.poll = None  # type: ignore[assignment]

    def up(self) -> dict:
        out = self.outputs[min(self.ups, len(self.outputs) - 1)]
        self.ups += 1
        if self.clock:
            self.clock.t += 5.0  # pulumi up takes time
        return out

    def poll(self):  # replaced by None on the instance when the stack cannot poll
        return self.fingerprints.pop(0) if self.fingerprints else "same"


def lws_outputs(st: dict, blocker=None) -> dict:
    return {"web": {"stage": st, "blocker": blocker, "status": {}}}


def run(outputs, *, tty: bool = False, **kw):
    clock = FakeClock()
    stack = FakeStack(outputs, kw.pop("fingerprints", None), clock)
    stream = io.StringIO()
    result = drive(stack, interval=10, poll=2, sleep=clock.sleep, clock=clock, display=Display(stream, tty=tty), **kw)
    return result, stream.getvalue(), stack, clock


def test_plain_mode_prints_one_line_per_stage_with_counts_elapsed_and_eta_then_exits_0() -> None:
    result, out, stack, _ = run(
        [
            lws_outputs(stage("oooo")),
            lws_outputs(stage("ooUU", updated=2)),
            lws_outputs(stage("UUUU", updated=4, complete=True)),
        ]
    )
    assert result.exit_code == X.OK and result.complete and stack.ups == 3
    lines = out.splitlines()
    assert ERASE_LINE not in out
    assert "stage 2 web: 2/4 updated, 4 ready, groups ooUU | rollout 1m00s, ETA 1m00s" in lines[2]
    assert "stage 1 web: 0/4 updated" in lines[0] and "ETA ?" in lines[0]
    assert lines[-1].startswith("stage 3 web:") and lines[-1].endswith("| complete")
    assert sum(1 for line in lines if line.startswith("waiting up to")) == 2


def test_terminal_mode_rewrites_the_status_line_in_place() -> None:
    _, out, _, _ = run([lws_outputs(stage("oooo")), lws_outputs(stage("UUUU", updated=4, complete=True))], tty=True)
    assert out.count(ERASE_LINE) == 2  # written, then erased before the next permanent line
    assert "\nwaiting up to" not in out and ERASE_LINE + "waiting up to 10s for the cluster (stage 1)" in out


def test_the_three_components_outputs_are_understood() -> None:
    ms = {"stage": stage("Uo", updated=1, total=2), "blocker": None}
    ds = {"stage": stage("", roles=[{"name": "prefill", "old": 1, "new": 2}], updated=2, total=3), "blocker": None}
    done = {"stage": stage("UU", updated=2, total=2, complete=True), "blocker": None}
    result, out, _, _ = run([{"ms": ms, "ds": ds}, {"ms": done, "ds": done}])
    assert result.exit_code == X.OK
    assert "stage 1 ms: 1/2 updated" in out and "stage 1 ds: 2/3 updated, 0 ready, roles prefill 1|2" in out


def test_a_passed_progress_deadline_stops_with_its_exit_code_and_message() -> None:
    result, out, _, _ = run([lws_outputs(stage("ooUu", updated=2)), lws_outputs(stage("ooUu", exceeded=True))])
    assert result.exit_code == X.DEADLINE_EXCEEDED == 5 and not result.complete
    assert "holding: waiting for groups 3" in result.reason and "ProgressDeadlineExceeded" in out


def test_a_deadline_in_the_status_conditions_alone_is_enough() -> None:
    st = stage("ooUu")
    status = {"conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}
    result, _, _, _ = run([{"web": {"stage": st, "blocker": None, "status": status}}])
    assert result.exit_code == X.DEADLINE_EXCEEDED


def test_a_paused_workload_stops_at_once_with_exit_6() -> None:
    result, out, stack, _ = run([lws_outputs(stage("ooUU", paused=True), blocker="paused: rollout paused")])
    assert result.exit_code == X.PAUSED == 6 and stack.ups == 1 and "PAUSED" in out


def test_a_persistent_blocker_stops_after_patience_runs() -> None:
    result, _, stack, _ = run([lws_outputs(stage("oooo"), blocker="x: stuck")], patience=3)
    assert result.exit_code == X.NOT_CONVERGED and stack.ups == 3 and result.blocker == "x: stuck"


def test_max_stages_and_until_complete() -> None:
    never = [lws_outputs(stage("oooo"))]
    assert run(never, max_stages=4)[2].ups == 4
    result, _, stack, _ = run(
        [*[lws_outputs(stage("oooo"))] * 60, lws_outputs(stage("UUUU", complete=True))],
        max_stages=4,
        until_complete=True,
    )
    assert result.exit_code == X.OK and stack.ups == 61


def test_timeout_bounds_the_run_and_the_last_wait() -> None:
    result, _, stack, clock = run([lws_outputs(stage("oooo"))], until_complete=True, timeout=32)
    assert result.exit_code == X.NOT_CONVERGED and "--timeout" in result.reason
    assert clock.t <= 32 + 5 and stack.ups >= 2


def test_bounded_poll_runs_the_next_stage_as_soon_as_readiness_changes() -> None:
    result, _, _, clock = run(
        [lws_outputs(stage("oooo")), lws_outputs(stage("UUUU", complete=True))], fingerprints=["a", "a", "b"]
    )
    assert result.exit_code == X.OK
    assert clock.sleeps == [2, 2]  # woke on the change, not after the 10 s interval


def test_without_poll_it_waits_the_interval() -> None:
    clock = FakeClock()
    stack = FakeStack([lws_outputs(stage("oooo")), lws_outputs(stage("UUUU", complete=True))])
    drive(stack, interval=10, sleep=clock.sleep, clock=clock, display=Display(io.StringIO(), tty=False))
    assert clock.sleeps == [10]


def test_a_stack_without_workload_outputs_is_reported() -> None:
    result, _, _, _ = run([{"url": "x"}])
    assert result.exit_code == X.NOT_CONVERGED and "no workload" in result.reason


# ---- waiting is not being blocked ----------------------------------------------------------------


def _waiting_blockers() -> dict[str, str]:
    """The ``blocker`` output of each API's ordinary waiting, built from the planners' own codes."""
    from pulumi_lws.components.outputs import blocker_text
    from pulumi_lws.core.contract.stage import Blocker, Stage
    from pulumi_lws.disaggregatedset.rollout import blockers as ds
    from pulumi_lws.lws.rollout.hash import blockers as hash_mode
    from pulumi_lws.lws.rollout.ordinal import planner as ordinal
    from pulumi_lws.modelserving.rollout import role_planner, servinggroup

    def text(code: str, message: str) -> str:
        return str(blocker_text(Stage("p", "r", 4, None, {}, blocker=Blocker(code, message))))

    return {
        "lws-ordinal": text(ordinal.WAITING, "waiting for groups 2,3 to become ready"),
        "lws-hash": text(ordinal.WAITING, "waiting for group 3f2a9c01 to become ready"),
        "lws-hash-post-termination": text(hash_mode.DEFERRED, "waiting for 1 terminating group to be removed"),
        "modelserving": text(servinggroup.WAITING, "waiting for groups chat-2 to become ready"),
        "modelserving-deletion": text(servinggroup.WAITING_DELETION, "waiting for groups chat-4 to be deleted"),
        "modelserving-role": text(role_planner.WAITING, "waiting for role replicas [chat-0/prefill-0] to become ready"),
        "modelserving-in-flight-cap": text(role_planner.CAPPED, "groups ['chat-1'] wait for max_groups_in_flight"),
        "disaggregatedset": text(ds.WAITING, "waiting for role prefill of revision 5f9f7d67 to have 2/2 ready"),
    }


WAITING = _waiting_blockers()


@pytest.mark.parametrize("api", sorted(WAITING))
def test_ordinary_waiting_never_counts_toward_patience(api) -> None:
    """Was: every blocker counted, so 3 ups (~20 s) of groups becoming ready ended the rollout
    with exit 1. Twelve ups of the same waiting blocker on an unchanged stage, then complete."""
    waiting = [lws_outputs(stage("ooUu", updated=2), blocker=WAITING[api])] * 12
    result, out, stack, _ = run([*waiting, lws_outputs(stage("UUUU", updated=4, complete=True))], patience=3)
    assert result.exit_code == X.OK and result.complete and stack.ups == 13
    assert f"| waiting: {WAITING[api]}" in out and "blocked:" not in out


def test_waiting_is_bounded_by_the_timeout_and_named_in_the_reason() -> None:
    waiting = lws_outputs(stage("ooUu", updated=2), blocker=WAITING["lws-ordinal"])
    result, _, stack, clock = run([waiting], until_complete=True, timeout=60)
    assert result.exit_code == X.NOT_CONVERGED and "--timeout" in result.reason
    assert result.blocker == WAITING["lws-ordinal"] and stack.ups > 3 and clock.t <= 60 + 5


def test_waiting_is_bounded_by_max_stages() -> None:
    result, _, stack, _ = run([lws_outputs(stage("ooUu"), blocker=WAITING["disaggregatedset"])], max_stages=7)
    assert result.exit_code == X.NOT_CONVERGED and stack.ups == 7 and "7 stages" in result.reason


def test_a_real_blocker_counts_only_while_nothing_progresses() -> None:
    """``insufficient-capacity`` while groups still become ready (the stage changes): no count; once
    the stage stops changing, the third up without progress stops (the first of them counts 1)."""
    full = "insufficient-capacity: the surge group needs 16 nvidia.com/gpu; 8 are free"
    moving = [lws_outputs(stage(g, updated=2), blocker=full) for g in ("uuoo", "Uuoo", "UUoo", "UUoo", "UUoo")]
    result, out, stack, _ = run(moving, patience=3)
    assert result.exit_code == X.NOT_CONVERGED and stack.ups == 5 and result.blocker == full
    assert "without progress" in result.reason and f"| blocked: {full}" in out
    assert out.count(full) == 5  # once per line: the state names it, nothing repeats it


def test_a_readiness_change_while_waiting_is_progress() -> None:
    """The stage output is unchanged but the pods' fingerprint changed during every wait."""
    stuck = [lws_outputs(stage("uuoo"), blocker="insufficient-capacity: no room")] * 5
    done = lws_outputs(stage("UUUU", complete=True))
    # each wait: the first poll is the reference, the next one differs -> woke on a change
    result, _, stack, _ = run([*stuck, done], patience=2, fingerprints=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert result.exit_code == X.OK and stack.ups == 6


def test_the_observation_time_alone_is_no_progress() -> None:
    outputs = [
        lws_outputs(stage("uuoo", now=1060.0 + 10 * i), blocker="resource-deadlock-717: stuck") for i in range(5)
    ]
    result, _, stack, _ = run(outputs, patience=3)
    assert result.exit_code == X.NOT_CONVERGED and stack.ups == 3


def test_a_waiting_workload_beside_a_blocked_one_does_not_hide_the_blocker() -> None:
    """Two workloads: one waiting (never counted), one blocked on an unchanging stage."""
    both = {
        "web": {"stage": stage("UUuu"), "blocker": WAITING["lws-ordinal"], "status": {}},
        "gpu": {"stage": stage("oo", total=2), "blocker": "resource-deadlock-717: stuck", "status": {}},
    }
    result, _, stack, _ = run([both], patience=3)
    assert result.exit_code == X.NOT_CONVERGED and stack.ups == 3 and result.blocker == "resource-deadlock-717: stuck"
