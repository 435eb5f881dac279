"""DisaggregatedSet (disaggregatedset.x-k8s.io/v1): prefill/decode roles of LeaderWorkerSets rolled together in
proportional lockstep, without an operator. Design: docs/disaggregatedset.md."""
