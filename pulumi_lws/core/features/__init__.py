"""Cross-API features on top of the contract: rollout control (pause, progress deadline), adoption, rollback, Kubernetes Events, capacity demand, forced-rollback recovery, pod retention."""
