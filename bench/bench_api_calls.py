"""API calls per reconcile of the live backend, counted at the client boundary.

The LiveCluster observer is given a counting stand-in for the lightkube client that serves a
mid-rollout fleet of ``groups`` groups (size 4): every ``list`` request is one API call. (The
same bound is asserted over real HTTP against kmock in tests/cluster/test_live_cluster.py.)
"""

from __future__ import annotations

from types import SimpleNamespace

from bench_fixtures import fleet_lws, mid_rollout_snapshot


class _Discovery:
    """API discovery of a cluster serving every API a registered workload observes (the backend
    asks it before LISTing an optional kind: PodGroup, Workload, a CRD); ``gets`` counts requests."""

    def __init__(self) -> None:
        from pulumi_lws.workloads import registered

        self.gets = 0
        refs = {ref for w in registered().values() for ref in w.observes}
        self.apis: dict[str, list[dict]] = {}
        for ref in refs:
            self.apis.setdefault(ref.api_version, []).append({"name": ref.resource, "kind": ref.kind})

    def get(self, path: str):
        self.gets += 1
        if path == "/apis":
            groups: dict[str, list[dict]] = {}
            for api in self.apis:
                group, _, version = api.rpartition("/")
                if group:
                    groups.setdefault(group, []).append({"groupVersion": api, "version": version})
            body = {"kind": "APIGroupList", "groups": [{"name": g, "versions": v} for g, v in groups.items()]}
        else:
            api = path.removeprefix("/apis/").removeprefix("/api/")
            body = {"kind": "APIResourceList", "groupVersion": api, "resources": self.apis.get(api, [])}
        return SimpleNamespace(status_code=200, headers={"content-type": "application/json"}, json=lambda: body)


class CountingClient:
    """A lightkube stand-in serving ``objects``: every ``list`` is one API call (shared by every
    API's LIST-count figure); API discovery says every observed API is served (its GETs are
    counted apart, ``discovery.gets``)."""

    def __init__(self, objects):
        self.objects = objects
        self.calls = 0
        self.discovery = _Discovery()
        self._client = SimpleNamespace(_client=self.discovery)  # where LiveCluster sends discovery GETs

    def list(self, res, **kwargs):
        self.calls += 1
        kind = getattr(res, "_api_info", None)
        kind = kind.resource.kind if kind is not None else getattr(res, "__name__", "")
        return [SimpleNamespace(to_dict=lambda o=o: dict(o)) for o in self.objects if o["kind"] == kind]


def count_calls(groups: int = 50) -> int:
    from pulumi_lws.cluster.live import LiveCluster
    from pulumi_lws.lws.observe import lws_scope

    lws = fleet_lws(groups)
    snap = mid_rollout_snapshot(lws)
    client = CountingClient(list(snap))
    observed = LiveCluster(client).observe(lws_scope("bench", "fleet", nodes=True))
    assert len(observed.list("Pod")) == groups, "the counting client must serve every pod"
    return client.calls
