"""``pulumi-lws rollout`` when a ``pulumi up`` fails: what the Automation API raises (a real
``CommandError`` over the engine's output, as the Pulumi CLI prints it) from a fake stack. A
failure that is not a cluster fault is exit 7 with the engine's own error lines, never a
traceback; a transient conflict is run again, boundedly (``pulumi_lws/cli/up_failure.py``)."""

from __future__ import annotations

import io

import pytest
from pulumi.automation._cmd import CommandResult
from pulumi.automation.errors import CommandError, ConcurrentUpdateError, StackNotFoundError

from pulumi_lws.cli import build_parser
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import rollout as rollout_cli
from pulumi_lws.cli.progress import Display
from pulumi_lws.cli.rollout import drive
from pulumi_lws.cli.up_failure import engine_errors

ALREADY_EXISTS = """Updating (dev)

     Type                                    Name                     Status                  Info
     pulumi:pulumi:Stack                     infra-dev                **failed**              1 error
     └─ lws:index:LeaderWorkerSet            vllm
 +      └─ kubernetes:core/v1:Service        vllm-service-vllm        **creating failed**     1 error

Diagnostics:
  kubernetes:core/v1:Service (vllm-service-vllm):
    error: resource inference/vllm was not successfully created by the Kubernetes API server: services "vllm" already exists

  pulumi:pulumi:Stack (infra-dev):
    error: update failed

Resources:
    7 unchanged

Duration: 3s
"""

SSA_CONFLICT = """Updating (dev)

Diagnostics:
  kubernetes:apps/v1:StatefulSet (vllm-statefulset-vllm):
    error: resource "urn:pulumi:dev::infra::lws:index:LeaderWorkerSet$kubernetes:apps/v1:StatefulSet::vllm-statefulset-vllm" was not successfully updated: Server-Side Apply field conflict detected.
    The resource managed by field manager "pulumi-kubernetes-5c8e5e2a" had an apply conflict: Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas

  pulumi:pulumi:Stack (infra-dev):
    error: update failed
"""

MODIFIED = """Updating (dev)

Diagnostics:
  kubernetes:apps/v1:StatefulSet (vllm-statefulset-vllm):
    error: Operation cannot be fulfilled on statefulsets.apps "vllm": the object has been modified; please apply your changes to the latest version and try again

  pulumi:pulumi:Stack (infra-dev):
    error: update failed
"""

PROGRAM = """Updating (dev)

Diagnostics:
  pulumi:pulumi:Stack (infra-dev):
    error: Program failed with an unhandled exception:
    Traceback (most recent call last):
      File "/work/infra/__main__.py", line 12, in <module>
        raise ValueError("no image configured")
    ValueError: no image configured
"""

LOCKED = "error: [409] Conflict: Another update is currently in progress.\n"


def command_error(stdout: str = "", stderr: str = "", cls: type[CommandError] = CommandError) -> CommandError:
    return cls(CommandResult(stdout=stdout, stderr=stderr, code=255))


def done() -> dict:
    return {"web": {"stage": {"complete": True, "groups": "UU", "replicas": 2}, "blocker": None, "status": {}}}


class Clock:
    def __init__(self) -> None:
        self.t, self.sleeps = 0.0, []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s


class Stack:
    """Each ``up`` takes 5 s and returns the next outcome's outputs, or raises it."""

    poll = None

    def __init__(self, outcomes: list, clock: Clock | None = None) -> None:
        self.outcomes, self.ups, self.clock = list(outcomes), 0, clock

    def up(self) -> dict:
        outcome = self.outcomes[min(self.ups, len(self.outcomes) - 1)]
        self.ups += 1
        if self.clock is not None:
            self.clock.t += 5.0
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def run_cli(outcomes: list, capsys, *argv: str) -> tuple[int, str, str, Stack]:
    stack = Stack(outcomes)
    args = build_parser().parse_args(["rollout", "--interval", "0", *argv])
    code = rollout_cli.run(args, stack_factory=lambda name, cwd: stack)
    out, err = capsys.readouterr()
    return code, out, err, stack


def drive_it(outcomes: list, **kw):
    clock = Clock()
    stack = Stack(outcomes, clock)
    lines: list[str] = []
    result = drive(
        stack,
        interval=10,
        sleep=clock.sleep,
        clock=clock,
        echo=lines.append,
        display=Display(io.StringIO(), tty=False),
        **kw,
    )
    return result, stack, clock, lines


def test_an_object_that_already_exists_is_exit_7_and_one_line_with_the_engines_message(capsys) -> None:
    """Was: re-raised, so main printed ``internal error: CommandError ...`` (exit 3)."""
    code, _, err, stack = run_cli([command_error(ALREADY_EXISTS)], capsys)
    assert code == X.UP_FAILED == 7 and stack.ups == 1  # not retried: rerunning cannot change it
    assert err.splitlines() == [
        "error: stage 1: pulumi up failed: kubernetes:core/v1:Service (vllm-service-vllm): resource inference/vllm was "
        'not successfully created by the Kubernetes API server: services "vllm" already exists'
    ]
    assert "internal error" not in err and "Traceback" not in err


def test_a_server_side_apply_conflict_names_the_other_manager_and_is_not_retried(capsys) -> None:
    code, _, err, stack = run_cli([command_error(SSA_CONFLICT)], capsys)
    assert code == X.UP_FAILED and stack.ups == 1 and len(err.splitlines()) == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas' in err
    assert err.startswith("error: stage 1: pulumi up failed: kubernetes:apps/v1:StatefulSet (vllm-statefulset-vllm): ")


def test_an_error_in_the_program_is_its_exception_line(capsys) -> None:
    code, _, err, _ = run_cli([command_error(PROGRAM)], capsys)
    assert code == X.UP_FAILED
    assert (
        err
        == "error: stage 1: pulumi up failed: Program failed with an unhandled exception: ValueError: no image configured\n"
    )


def test_several_engine_errors_are_one_line_each(capsys) -> None:
    both = ALREADY_EXISTS.replace("Resources:", SSA_CONFLICT.split("Diagnostics:\n", 1)[1] + "\nResources:")
    code, _, err, _ = run_cli([command_error(both)], capsys)
    lines = err.splitlines()
    assert code == X.UP_FAILED and lines[0] == "error: stage 1: pulumi up failed:" and len(lines) == 3
    assert lines[1].startswith("  kubernetes:core/v1:Service") and lines[2].startswith(
        "  kubernetes:apps/v1:StatefulSet"
    )


def test_a_concurrent_update_is_run_again_with_backoff_then_the_rollout_goes_on() -> None:
    locked = command_error(stderr=LOCKED, cls=ConcurrentUpdateError)
    result, stack, clock, lines = drive_it([locked, locked, done()])
    assert result.exit_code == X.OK and stack.ups == 3 and clock.sleeps == [5.0, 10.0]
    assert lines[0] == (
        "stage 1: pulumi up failed on a transient conflict ([409] Conflict: Another update is currently in "
        "progress.); retry 1/2 in 5s"
    )


def test_the_object_has_been_modified_is_run_again() -> None:
    result, stack, clock, _ = drive_it([command_error(MODIFIED), done()])
    assert result.exit_code == X.OK and stack.ups == 2 and clock.sleeps == [5.0]


def test_a_conflict_that_outlasts_the_retries_is_exit_7(capsys) -> None:
    locked = command_error(stderr=LOCKED, cls=ConcurrentUpdateError)
    result, stack, clock, _ = drive_it([locked])
    assert result.exit_code == X.UP_FAILED and stack.ups == 3 and clock.sleeps == [5.0, 10.0]
    assert result.error == ["[409] Conflict: Another update is currently in progress."]


def test_retries_never_wait_past_the_timeout() -> None:
    result, stack, clock, _ = drive_it([command_error(MODIFIED)], timeout=12)
    assert result.exit_code == X.UP_FAILED and stack.ups == 2 and clock.sleeps == [5.0]  # 10 + 10 s > 12


def test_a_cluster_fault_is_still_exit_4_and_never_retried() -> None:
    fault = command_error(
        stderr="error: update failed\n    error: web: cluster error: cluster context 'x' at https://k: HTTP 503"
    )
    result, stack, _, _ = drive_it([fault])
    assert result.exit_code == X.UNREACHABLE and stack.ups == 1
    assert result.error == ["web: cluster error: cluster context 'x' at https://k: HTTP 503"]


def test_anything_else_raised_by_up_is_a_bug_and_propagates() -> None:
    with pytest.raises(ZeroDivisionError):
        drive_it([ZeroDivisionError("bug")])


def test_a_stack_that_cannot_be_selected_is_bad_input(capsys, tmp_path) -> None:
    def factory(name: str, cwd: str):
        raise command_error(stderr=f"error: no stack named '{name}' found\n", cls=StackNotFoundError)

    args = build_parser().parse_args(["rollout", "--stack", "prod", "--cwd", str(tmp_path)])
    assert rollout_cli.run(args, stack_factory=factory) == X.BAD_INPUT
    assert capsys.readouterr().err == f"error: cannot select stack 'prod' in {tmp_path}: no stack named 'prod' found\n"


def test_engine_errors_reads_the_automation_api_text() -> None:
    text = str(command_error(ALREADY_EXISTS, "error: update failed\n"))
    assert engine_errors(text) == [
        "kubernetes:core/v1:Service (vllm-service-vllm): resource inference/vllm was not successfully created by "
        'the Kubernetes API server: services "vllm" already exists'
    ]
    assert engine_errors(str(command_error(stderr="error: update failed\n"))) == ["update failed"]
    assert engine_errors("no error here") == []
