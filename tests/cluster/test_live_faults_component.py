"""How the component shell surfaces an actuator failure (``WorkloadComponent._run_actions``): the
actions applied before it are logged on the component, and ``pulumi up`` fails with a
``pulumi.RunError`` (no traceback) naming the component, the failed action, the context, the HTTP
status and the applied actions. The actuator is the live one against kmock in the fault suite
(test_live_faults.py); here a stand-in raises the same :class:`ActionError` so the mock engine's
event loop needs no HTTP server."""

from __future__ import annotations

import dataclasses

import pulumi
import pytest
from conftest import fresh_mock_runtime
from support.fakes_component import FakeObserver, fake_reconcile

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.ports import ActionError
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import reconcile as reconcile_module

WORKER = {"spec": {"containers": [{"name": "nginx", "image": "nginxinc/nginx-unprivileged:1.27"}]}}
ARGS = {"replicas": 2, "size": 2, "worker_template": WORKER, "namespace": "serving"}
FIRST = Action("label", "Pod", "demo-0", {"labels": {"step": "pre"}}, uid="u0")
FAILING = Action("delete", "Pod", "demo-1", uid="u1")
LAST = Action("label", "Pod", "demo-2", {"labels": {"step": "post"}}, uid="u2")


class FailingSecondActuator:
    """Applies the first action, then fails the way the live actuator does."""

    def execute(self, namespace, actions):
        applied = [f"label Pod/{actions[0].name}: step=pre"]
        failure = ActionError(
            f"delete Pod/{namespace}/demo-1 failed on cluster context 'prod': HTTP 500 InternalError: "
            "etcdserver: request timed out (gave up after 5 attempts)",
            action=actions[1],
            status=500,
        )
        raise failure.within(applied, 2, len(actions))


def test_a_failed_action_fails_the_update_naming_it_and_logs_the_applied_ones(monkeypatch):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    def reconcile_with_three_actions(lws, snapshot, options=None):
        result = fake_reconcile(lws, snapshot, options)
        return dataclasses.replace(result, stage=dataclasses.replace(result.stage, actions=(FIRST, FAILING, LAST)))

    monkeypatch.setattr(reconcile_module, "reconcile", reconcile_with_three_actions)
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "info", lambda msg, resource=None, *a, **k: logged.append(msg))

    class Echo(pulumi.runtime.Mocks):
        def new_resource(self, args):
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args):
            return {}

    fresh_mock_runtime(Echo(), preview=False)
    with use_backend(FakeObserver(), FailingSecondActuator()), pytest.raises(pulumi.RunError) as raised:
        LeaderWorkerSet("demo", ARGS)

    message = str(raised.value)
    assert message.startswith(
        "demo: cluster error: delete Pod/serving/demo-1 failed on cluster context 'prod': HTTP 500"
    )
    assert "[action 2 of 3; applied before it: label Pod/demo-0: step=pre; not run: 1 later action(s);" in message
    assert "label Pod/demo-0: step=pre" in logged  # logged on the component although the update failed
    # the action after the failed one never ran: no result line for it (the stage table logged on
    # update lists it among the planned actions, which says nothing about running it)
    assert not any(line.startswith("label Pod/demo-2") for line in logged)
    assert [line for line in logged if not line.startswith("lws/")] == ["label Pod/demo-0: step=pre"]


class _Echo(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args):
        return {}


class FailingObserver:
    """Fails the way the live observer does when a LIST still fails after its retries."""

    def observe(self, scope):
        from pulumi_lws.core.contract.ports import ObserveError

        raise ObserveError(
            "observe failed: LIST StatefulSet in namespace 'serving' on cluster context 'prod': "
            "HTTP 503 ServiceUnavailable; nothing was planned from the partial read"
        )


def test_a_failed_observe_fails_the_update_in_one_line_before_anything_is_registered(monkeypatch):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    registered: list[str] = []

    class Recording(_Echo):
        def new_resource(self, args):
            registered.append(args.typ)
            return super().new_resource(args)

    fresh_mock_runtime(Recording(), preview=False)
    with use_backend(FailingObserver(), FailingSecondActuator()), pytest.raises(pulumi.RunError) as raised:
        LeaderWorkerSet("demo", ARGS)
    assert str(raised.value).startswith("demo: cluster error: observe failed: LIST StatefulSet in namespace 'serving'")
    assert "\n" not in str(raised.value)
    assert not [t for t in registered if t.startswith("kubernetes:")]  # no child of a partial read


class EventsDownActuator:
    """Applies every action, but the Events API fails (after its retries)."""

    def execute(self, namespace, actions):
        return [a.describe() for a in actions]

    def list_events(self, namespace, selector):
        from pulumi_lws.core.contract.ports import ObserveError

        raise ObserveError("observe failed: LIST Event in namespace 'serving': HTTP 500")

    def record_events(self, namespace, events):  # pragma: no cover - list_events fails first
        raise AssertionError("not reached")


def test_an_events_failure_after_the_actions_ran_warns_instead_of_failing_the_update(monkeypatch):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    def reconcile_with_an_action(lws, snapshot, options=None):
        result = fake_reconcile(lws, snapshot, options)
        return dataclasses.replace(result, stage=dataclasses.replace(result.stage, actions=(FIRST,)))

    monkeypatch.setattr(reconcile_module, "reconcile", reconcile_with_an_action)
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda msg, resource=None, *a, **k: warned.append(msg))
    fresh_mock_runtime(_Echo(), preview=False)
    with use_backend(FakeObserver(), EventsDownActuator()):
        component = LeaderWorkerSet("demo", ARGS)
    assert component is not None
    assert any(w.startswith("Events not recorded for LeaderWorkerSet serving/") and "HTTP 500" in w for w in warned)
