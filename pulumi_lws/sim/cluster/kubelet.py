"""Pod lifecycle: scheduled -> Running -> ContainersReady -> Ready, restarts, termination.

Invariants:
- a pod is Ready only when its containers are ready AND every ``readinessGates`` condition is
  True in ``status.conditions`` (conditions other than the kubelet's own are never touched);
- a deleting pod turns not-Ready at once and is removed after its grace period
  (``terminationGracePeriodSeconds``, else the simulator default) once it has no finalizers;
  a pod whose grace period is over but whose finalizers keep the object has its containers
  stopped and turns ``Failed`` (Kubernetes 1.27+), so the scheduler no longer counts it;
- timings come only from :class:`KubeletConfig` and the simulated clock (deterministic);
- image faults (``KubeletConfig.fail_images`` / ``pull_errors``, matched per container by exact
  image or glob when the pod is admitted) keep a pod from ever being Ready: a failing image's
  container runs ``CRASH_RUN_SECONDS``, exits and waits in ``CrashLoopBackOff`` until its restart
  ``CRASH_PERIOD_SECONDS`` after the previous start (``restartCount`` = exits so far); a pull
  error leaves the pod ``Pending`` with the container waiting in ``ImagePullBackOff``.
"""

from __future__ import annotations

import fnmatch
import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pulumi_lws.core.contract.simulation import GroupLabels, group_of, owner_of
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.store import Store, meta

#: a crash-looping container restarts this long after its previous start (CrashLoopBackOff, flat)
CRASH_PERIOD_SECONDS = 10.0
#: ... and runs this long before it exits
CRASH_RUN_SECONDS = 1.0


@dataclass(frozen=True)
class Timing:
    """Seconds from scheduling to Running (``start``) and from Running to ready (``ready``)."""

    start: float = 1.0
    ready: float = 2.0
    never_ready: bool = False


@dataclass(frozen=True)
class Override:
    """Timing for pods matching every given selector: name glob, group ordinal, owning workload
    name (``lws:``), a container image (exact or glob: e.g. a new image whose readiness probe never
    passes), creation time. Group and owner are read with the labels the APIs declare
    (:attr:`KubeletConfig.group_labels`)."""

    pod: str | None = None
    image: str | None = None
    group: str | None = None
    lws: str | None = None
    after: float | None = None
    start: float | None = None
    ready: float | None = None
    never_ready: bool | None = None

    def matches(self, pod: Mapping[str, Any], created_at: float, groups: tuple[GroupLabels, ...] = ()) -> bool:
        name = meta(pod)["name"]
        if self.pod is not None and not fnmatch.fnmatchcase(name, self.pod):
            return False
        if self.after is not None and created_at < self.after:
            return False
        if self.image is not None and not any(
            fnmatch.fnmatchcase(str(c.get("image", "")), self.image)
            for c in (pod.get("spec") or {}).get("containers") or []
        ):
            return False
        if self.lws is not None and owner_of(pod, groups) != self.lws:
            return False
        return self.group is None or group_of(pod, groups) == str(self.group)

    def apply(self, base: Timing) -> Timing:
        changes = {k: getattr(self, k) for k in ("start", "ready", "never_ready") if getattr(self, k) is not None}
        return replace(base, **changes)


@dataclass
class KubeletConfig:
    default: Timing = field(default_factory=Timing)
    overrides: list[Override] = field(default_factory=list)
    termination_grace: float = 1.0  # used when a pod does not set terminationGracePeriodSeconds
    instant: bool = False  # warm-up: every scheduled pod is Running and ready at once
    #: images (exact or glob) whose containers crash-loop: Running, never ready, restart every 10 s
    fail_images: tuple[str, ...] = ()
    #: images (exact or glob) that cannot be pulled: the pod stays Pending, ImagePullBackOff
    pull_errors: tuple[str, ...] = ()
    #: how pods name their workload and group, one entry per API (``Workload.group_labels``, filled
    #: by the driver side: the cluster knows no API); without them only name/time overrides match
    group_labels: tuple[GroupLabels, ...] = ()

    def image_faults(self, pod: Mapping[str, Any]) -> dict[str, str]:
        """``{container name: "crash" | "pull"}`` for the pod's containers on a faulty image
        (a pull error wins over a crash loop: a container that is never pulled never runs)."""
        out: dict[str, str] = {}
        if not (self.fail_images or self.pull_errors):
            return out
        for i, c in enumerate((pod.get("spec") or {}).get("containers") or []):
            image = str(c.get("image", ""))
            if any(fnmatch.fnmatchcase(image, g) for g in self.pull_errors):
                out[c.get("name", f"c{i}")] = "pull"
            elif any(fnmatch.fnmatchcase(image, g) for g in self.fail_images):
                out[c.get("name", f"c{i}")] = "crash"
        return out

    def timing_for(self, pod: Mapping[str, Any], created_at: float) -> Timing:
        """The first matching override applied over the default."""
        for ov in self.overrides:
            if ov.matches(pod, created_at, self.group_labels):
                return ov.apply(self.default)
        return self.default


def set_condition(
    pod: dict[str, Any], ctype: str, status: str, now: str, reason: str | None = None, message: str | None = None
) -> bool:
    """Upsert a pod condition; lastTransitionTime changes only when the status flips. True if changed."""
    conds = pod.setdefault("status", {}).setdefault("conditions", [])
    for c in conds:
        if c.get("type") == ctype:
            if c.get("status") == status and c.get("reason") == reason and c.get("message") == message:
                return False
            if c.get("status") != status:
                c["lastTransitionTime"] = now
            c["status"] = status
            _set_opt(c, "reason", reason)
            _set_opt(c, "message", message)
            return True
    c = {"type": ctype, "status": status, "lastTransitionTime": now}
    _set_opt(c, "reason", reason)
    _set_opt(c, "message", message)
    conds.append(c)
    return True


def _set_opt(d: dict[str, Any], key: str, value: str | None) -> None:
    if value is None:
        d.pop(key, None)
    else:
        d[key] = value


def condition_true(pod: Mapping[str, Any], ctype: str) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():  # a loop: hot in every controller pass
        if c.get("type") == ctype and c.get("status") == "True":
            return True
    return False


def _next_deadline(pod: Mapping[str, Any], now: float) -> float:
    """The earliest instant after ``now`` at which :meth:`Kubelet.sync` of this unchanged pod could
    act: it compares the time only with ``running_at`` and ``ready_at`` (its kubelet state) and
    the deletion deadline ``_sim_delete_at`` (``>=``), so it acts no sooner than the first of
    them still ahead. An irrelevant deadline only wakes the pod early (a sync that writes nothing)."""
    state = pod.get("_sim_kubelet") or {}
    times = (state.get("running_at"), state.get("ready_at"), pod.get("_sim_delete_at"), state.get("crash_next"))
    return min((float(t) for t in times if t is not None and float(t) > now), default=float("inf"))


class Kubelet:
    """One kubelet for every node (the simulator does not model node-local agents separately)."""

    def __init__(self, store: Store, clock: Clock, config: KubeletConfig | None = None) -> None:
        self.store = store
        self.clock = clock
        self.config = config or KubeletConfig()
        self._ip = 0
        self._quiet: dict[str, tuple] = {}  # pod uid -> (resourceVersion, next deadline) when left quiet
        self._deadlines: list[tuple[float, str]] = []  # (deadline, pod uid) of quiet pods
        store.pod_terminated = self.terminated
        store.default_grace = self.config.termination_grace

    def terminated(self, pod: Mapping[str, Any]) -> bool:
        """A deleting pod is done when unscheduled, or when its grace period has elapsed."""
        if not (pod.get("spec") or {}).get("nodeName"):
            return True
        return self.clock.now >= float(pod.get("_sim_delete_at", 0.0)) or bool(pod.get("_sim_killed"))

    def sync_all(self) -> None:
        """Sync every pod in pod-list order (namespace, name), skipping one that is unchanged
        (same resourceVersion) since it was last left quiet, until its next deadline.

        A pod's kubelet step depends only on the pod and on whether the time has reached one of
        its deadlines (:func:`_next_deadline`), and it is idempotent at one instant (a second
        sync right after it writes nothing: each step it takes is the last one possible at that
        time). So a pod is left quiet after a sync that wrote nothing, or wrote only the pod
        itself once; it is visited again when written (``Store.pods_written``) or when its
        deadline comes (a heap of deadlines), never because other pods changed.
        """
        now, store, quiet = self.clock.now, self.store, self._quiet
        due = store.pods_written
        while self._deadlines and self._deadlines[0][0] <= now:
            due.add(heapq.heappop(self._deadlines)[1])
        if not due:
            return
        pods = [p for p in map(store.by_uid, due) if p is not None]
        due.clear()  # writes from here on (this pass's included) are the next pass's
        pods.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
        for pod in pods:
            m = pod["metadata"]
            uid, rv = m["uid"], m.get("resourceVersion")
            hit = quiet.get(uid)
            if hit is not None and hit[0] == rv and now < hit[1]:
                continue
            before = store.version
            self.sync(pod)
            if store.version == before:
                self._leave_quiet(uid, rv, pod, now)
            elif (
                store.version == before + 1
                and m.get("resourceVersion") == str(store.version)
                and store.by_uid(uid) is pod
            ):
                due.discard(uid)  # its own single write: a sync now would write nothing
                self._leave_quiet(uid, m["resourceVersion"], pod, now)

    def _leave_quiet(self, uid: str, rv: str | None, pod: Mapping[str, Any], now: float) -> None:
        deadline = _next_deadline(pod, now)
        self._quiet[uid] = (rv, deadline)
        if deadline != float("inf"):
            heapq.heappush(self._deadlines, (deadline, uid))

    def sync(self, pod: dict[str, Any]) -> None:
        if meta(pod).get("deletionTimestamp"):
            self._terminate(pod)
            return
        if not (pod.get("spec") or {}).get("nodeName") or pod["status"].get("phase") in ("Failed", "Succeeded"):
            return
        state = pod.setdefault("_sim_kubelet", {})
        admitted = "scheduled_at" not in state
        if admitted:
            self._admit(pod, state)  # writes podIP/hostIP: a write, whatever else changes
        changed = self._advance(pod, state) | admitted
        changed |= self._sync_ready(pod)
        if changed:
            self.store.touch(pod)

    # ---- lifecycle steps -----------------------------------------------------------------
    def admission_times(self, timing: Timing) -> dict[str, Any]:
        """The lifecycle times a pod admitted now with ``timing`` keeps in its ``_sim_kubelet``
        state (the seeded warm-up writes the same for its pods: sim/driver/seed.py)."""
        now = self.clock.now
        return {
            "scheduled_at": now,
            "timing": timing,
            "running_at": now + timing.start,
            "ready_at": now + timing.start + timing.ready,
        }

    def _admit(self, pod: dict[str, Any], state: dict[str, Any]) -> None:
        created = float(pod.get("_sim_created_at", self.clock.now))
        timing = Timing(0.0, 0.0) if self.config.instant else self.config.timing_for(pod, created)
        state.update(self.admission_times(timing))
        faults = self.config.image_faults(pod)
        if faults:
            state["image_faults"] = faults
        self._ip += 1
        pod["status"]["podIP"] = f"10.244.{self._ip // 250}.{self._ip % 250 + 1}"
        pod["status"]["hostIP"] = "10.0.0.1"

    def _advance(self, pod: dict[str, Any], state: dict[str, Any]) -> bool:
        now, ts = self.clock.now, self.clock.timestamp()
        status = pod["status"]
        changed = False
        faults = state.get("image_faults") or {}
        if "pull" in faults.values():
            changed |= self._pull_backoff(pod, faults)
            changed |= set_condition(pod, "ContainersReady", "False", ts, "ContainersNotReady")
            return changed
        if status.get("phase") == "Pending" and now >= state["running_at"]:
            status["phase"] = "Running"
            status["startTime"] = ts
            changed = True
        if status.get("phase") != "Running":
            changed |= set_condition(pod, "ContainersReady", "False", ts, "ContainersNotReady")
            return changed
        containers_ready = not state["timing"].never_ready and now >= state["ready_at"]
        if faults:
            changed |= self._crash_loop(pod, state, faults, containers_ready)
            containers_ready = False
        else:
            changed |= self._container_statuses(pod, containers_ready, state.get("restarts", 0))
        changed |= set_condition(
            pod,
            "ContainersReady",
            "True" if containers_ready else "False",
            ts,
            None if containers_ready else "ContainersNotReady",
        )
        return changed

    def _container_statuses(self, pod: dict[str, Any], ready: bool, restarts: int) -> bool:
        want = [
            {
                "name": c.get("name", f"c{i}"),
                "image": c.get("image", ""),
                "ready": ready,
                "started": True,
                "restartCount": restarts,
                "state": {"running": {}},
            }
            for i, c in enumerate((pod.get("spec") or {}).get("containers") or [])
        ]
        if pod["status"].get("containerStatuses") == want:
            return False
        pod["status"]["containerStatuses"] = want
        return True

    def _pull_backoff(self, pod: dict[str, Any], faults: Mapping[str, str]) -> bool:
        """Pending for ever: the unpullable containers wait in ImagePullBackOff, the others in
        ContainerCreating (the kubelet starts none of them: the pod's images are not all there)."""
        want = []
        for i, c in enumerate((pod.get("spec") or {}).get("containers") or []):
            name, image = c.get("name", f"c{i}"), c.get("image", "")
            waiting = (
                {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}"'}
                if faults.get(name) == "pull"
                else {"reason": "ContainerCreating"}
            )
            want.append(
                {
                    "name": name,
                    "image": image,
                    "ready": False,
                    "started": False,
                    "restartCount": 0,
                    "state": {"waiting": waiting},
                }
            )
        if pod["status"].get("containerStatuses") == want:
            return False
        pod["status"]["containerStatuses"] = want
        return True

    def _crash_loop(
        self, pod: dict[str, Any], state: dict[str, Any], faults: Mapping[str, str], others_ready: bool
    ) -> bool:
        """The failing containers at this instant of their cycle (a pure function of the time
        since ``running_at``): running for ``CRASH_RUN_SECONDS`` after each start, then waiting in
        CrashLoopBackOff until the next start; ``state["crash_next"]`` is the next change."""
        since = self.clock.now - state["running_at"]
        cycle = int(since // CRASH_PERIOD_SECONDS)
        within = since - cycle * CRASH_PERIOD_SECONDS
        running = within < CRASH_RUN_SECONDS
        exits = cycle + (0 if running else 1)
        start = state["running_at"] + cycle * CRASH_PERIOD_SECONDS
        state["crash_next"] = start + (CRASH_RUN_SECONDS if running else CRASH_PERIOD_SECONDS)
        base = state.get("restarts", 0)
        want = []
        for i, c in enumerate((pod.get("spec") or {}).get("containers") or []):
            name, image = c.get("name", f"c{i}"), c.get("image", "")
            if faults.get(name) != "crash":
                want.append(
                    {
                        "name": name,
                        "image": image,
                        "ready": others_ready,
                        "started": True,
                        "restartCount": base,
                        "state": {"running": {}},
                    }
                )
                continue
            entry: dict[str, Any] = {
                "name": name,
                "image": image,
                "ready": False,
                "started": running,
                "restartCount": base + exits,
                "state": {"running": {}}
                if running
                else {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off {CRASH_PERIOD_SECONDS:g}s restarting failed container={name}",
                    }
                },
            }
            if exits:
                entry["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
            want.append(entry)
        if pod["status"].get("containerStatuses") == want:
            return False
        pod["status"]["containerStatuses"] = want
        return True

    def _sync_ready(self, pod: dict[str, Any]) -> bool:
        """Ready = ContainersReady and every readiness gate condition True."""
        ts = self.clock.timestamp()
        gates = [g.get("conditionType") for g in (pod.get("spec") or {}).get("readinessGates") or []]
        ready = condition_true(pod, "ContainersReady") and all(condition_true(pod, g) for g in gates)
        changed = set_condition(pod, "Initialized", "True", ts)
        changed |= set_condition(
            pod, "Ready", "True" if ready else "False", ts, None if ready else "ContainersNotReady"
        )
        if ready and "ready_since" not in pod["_sim_kubelet"]:
            pod["_sim_kubelet"]["ready_since"] = self.clock.now
        elif not ready:
            pod["_sim_kubelet"].pop("ready_since", None)
        return changed

    def _terminate(self, pod: dict[str, Any]) -> None:
        ts = self.clock.timestamp()
        changed = (
            set_condition(pod, "Ready", "False", ts, "PodTerminating") if pod["status"].get("conditions") else False
        )
        changed |= (
            set_condition(pod, "ContainersReady", "False", ts, "PodTerminating")
            if pod["status"].get("conditions")
            else False
        )
        if changed:
            self.store.touch(pod)
        if not self.store.remove_if_done(pod) and self.terminated(pod):
            self._stop(pod)

    def _stop(self, pod: dict[str, Any]) -> None:
        """A terminated pod kept by finalizers: containers terminated, terminal phase."""
        if not (pod.get("spec") or {}).get("nodeName") or pod["status"].get("phase") in ("Failed", "Succeeded"):
            return
        pod["status"]["phase"] = "Failed"
        for cs in pod["status"].get("containerStatuses") or []:
            cs.update(ready=False, started=False, state={"terminated": {"exitCode": 143, "reason": "Error"}})
        pod.setdefault("_sim_kubelet", {}).pop("ready_since", None)
        self.store.touch(pod)

    # ---- faults --------------------------------------------------------------------------
    def restart_container(self, pod: dict[str, Any]) -> None:
        """A container exits and is restarted: restartCount+1, not ready until it is ready again."""
        state = pod.setdefault("_sim_kubelet", {})
        if "scheduled_at" not in state:
            return
        state["restarts"] = state.get("restarts", 0) + 1
        state["ready_at"] = self.clock.now + state["timing"].start + state["timing"].ready
        ts = self.clock.timestamp()
        self._container_statuses(pod, False, state["restarts"])
        set_condition(pod, "ContainersReady", "False", ts, "ContainersNotReady")
        self._sync_ready(pod)
        self.store.touch(pod)

    def fail_pod(self, pod: dict[str, Any], reason: str = "Error") -> None:
        """The pod fails for good (phase Failed): controllers must replace it."""
        ts = self.clock.timestamp()
        pod["status"]["phase"] = "Failed"
        pod["status"]["reason"] = reason
        set_condition(pod, "ContainersReady", "False", ts, "PodFailed")
        set_condition(pod, "Ready", "False", ts, "PodFailed")
        pod.setdefault("_sim_kubelet", {}).pop("ready_since", None)
        self.store.touch(pod)

    def ready_since(self, pod: Mapping[str, Any]) -> float | None:
        return (pod.get("_sim_kubelet") or {}).get("ready_since")
