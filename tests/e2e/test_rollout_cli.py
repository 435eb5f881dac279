"""``pulumi-lws rollout`` drives a real stack through the Automation API and the real CLI to
completion, waiting through ordinary waiting blockers (``waiting-for-groups``) as long as it takes,
polling the stack's own cluster; the budget holds at the end and every pod runs the new image."""

from __future__ import annotations

from e2e_harness import Invariants, pod_images, roll, set_images

NEW = "nginxinc/nginx-unprivileged:1.28"


def test_rollout_command_completes(cluster, namespace, make_stack):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name="leaderworkerset-sample").complete

    stack.edit(set_images(NEW))
    result = cluster.run(
        [
            "pulumi-lws",
            "rollout",
            "--stack",
            namespace,
            "--cwd",
            str(stack.workdir),
            "--interval",
            "5",
            "--poll",
            "1",
            "--timeout",
            "600",
        ],
        check=False,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "complete" in result.stdout
    cluster.settle(namespace)
    invariants.check(stack.manifest(), "after rollout")
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {NEW}
