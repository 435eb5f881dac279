"""The exit status of every ``pulumi-lws`` command, in one place (README "Exit codes").

Commands return these constants from their handlers; :func:`pulumi_lws.cli.main` maps
exceptions to them. Invariant: each status means one thing across all commands, so CI can tell
"your input is wrong" (2) from "the rollout would not go through" (1) from "a bug in
pulumi-lws" (3).
"""

from __future__ import annotations

#: the command did what was asked (render printed, simulate converged within the invariants)
OK = 0
#: the rollout ended blocked, an invariant was violated, or it did not converge in time
NOT_CONVERGED = 1
#: bad input: an invalid manifest or scenario, a file that cannot be read, argparse usage errors
BAD_INPUT = 2
#: an unexpected exception inside pulumi-lws (one line on stderr; PULUMI_LWS_DEBUG=1 adds the traceback)
INTERNAL_ERROR = 3
#: any command that talks to a cluster (``status``, ``rollback``, ``rollout``): it could not be reached,
#: read or written — a missing/empty/invalid kubeconfig, unknown context, refused connection, TLS
#: error, HTTP error (401, 403, 5xx after retries; a 404 on a kind every cluster serves, or from API
#: discovery: the URL is no Kubernetes API server), malformed response, timeout — one line naming
#: the server or the file and the cause
UNREACHABLE = 4
#: ``rollout``: a workload passed its progress deadline (``Progressing=False``, ``ProgressDeadlineExceeded``)
DEADLINE_EXCEEDED = 5
#: ``rollout``: a workload is paused (``pulumi-lws.io/paused``): resume it, then run again
PAUSED = 6
#: ``rollout``: a ``pulumi up`` failed for another reason than a cluster fault — an object that
#: already exists, a server-side-apply conflict with another field manager, another update holding
#: the stack after the retries, an error in the program: the engine's error lines
#: (:mod:`pulumi_lws.cli.up_failure`)
UP_FAILED = 7
#: 128 + SIGINT: interrupted (Ctrl-C)
INTERRUPTED = 130
#: 128 + SIGPIPE: the reader of standard output went away (``... | head -1``), as for cat or grep
BROKEN_PIPE = 141

#: environment variable that makes an internal error print its traceback
DEBUG_ENV = "PULUMI_LWS_DEBUG"

TABLE = (
    (OK, "done"),
    (NOT_CONVERGED, "rollout blocked, invariant violated, or not converged"),
    (BAD_INPUT, "bad input (manifest, scenario, file, command-line usage)"),
    (INTERNAL_ERROR, "internal error (please report)"),
    (UNREACHABLE, "the cluster could not be reached, read or written (kubeconfig, connection, TLS, HTTP, timeout)"),
    (DEADLINE_EXCEEDED, "rollout: a workload passed its progress deadline (ProgressDeadlineExceeded)"),
    (PAUSED, "rollout: a workload is paused (pulumi-lws.io/paused)"),
    (UP_FAILED, "rollout: a pulumi up failed, not on a cluster fault (conflict, concurrent update, program error)"),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
    (BROKEN_PIPE, "standard output closed early (e.g. `| head`)"),
)
