"""The shared core every workload API builds on (pure: no Pulumi, no Kubernetes client, no I/O).

``errors``/``model``/``rules``/``scaling`` (input), ``snapshot``/``ports`` (observed state and the
ports shells implement), ``stage`` (what one reconcile decides), ``dependencies``/``manifests``
(apply order, object helpers), ``hashing``, ``trace`` (stage tables), ``workload`` (the contract
an API implements and the registry the shells dispatch through).
"""
