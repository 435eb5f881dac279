"""``pulumi-lws preview | up | destroy [DIR]``: the user's own Pulumi program on the embedded cluster.

One ``up`` here is one ``pulumi up``: the program (``DIR/Pulumi.yaml`` and its ``main``) runs
under Pulumi's mock engine with the stack's configuration, its workload components observe and
act on the simulated cluster, and what it registered is applied to that cluster as the
Kubernetes provider would (``sim/cluster/apply.py``). The cluster and the stack's last registrations and
outputs persist under ``DIR/.pulumi-lws/<stack>/`` (:mod:`.state`), so consecutive ``up``s advance
a rollout exactly as consecutive ``pulumi up``s do. ``preview`` changes nothing.

Modules: :mod:`.project` (Pulumi.yaml, stack selection, config), :mod:`.state` (persistence),
:mod:`.changes` (what changed against the last registered state), :mod:`.display` (the resource
tree, ``--diff``, diagnostics, outputs and the summary as ``pulumi preview`` prints them),
:mod:`.commands` (the three commands).
"""
