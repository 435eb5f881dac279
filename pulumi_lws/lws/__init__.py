"""LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): api, names, revisions, planners, renderers, status."""
