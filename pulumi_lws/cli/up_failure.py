"""What a failed ``pulumi up`` of ``pulumi-lws rollout`` means, and how it is said (pure).

The Automation API raises a ``CommandError`` whose text is the engine's output (``code``,
``stdout``, ``stderr``). Three readings, first match wins:

* **a cluster fault** (:func:`cluster_fault`): a component failed with ``NAME: cluster error:
  MESSAGE`` (kubeconfig, connection, TLS, HTTP error, malformed answer, timeout) -> exit 4, that
  one line;
* **a transient conflict** (:func:`is_transient`): another update holds the stack's lock
  (``ConcurrentUpdateError``: Pulumi Cloud's ``[409] Conflict: Another update is currently in
  progress``, a DIY backend's ``the stack is currently locked by``), or the API server refused a
  write because the object changed since it was read (its optimistic-lock 409 ``the object has
  been modified``, the live backend's :data:`~pulumi_lws.cluster.resilience.STALE_CONFLICT_MESSAGES`).
  The ``up`` is run again — each one observes the cluster afresh and plans from what it holds, so
  a rerun is safe — at most :data:`UP_ATTEMPTS` times in all, waiting :data:`UP_RETRY_WAIT`
  seconds, then twice that, ... (at most :data:`UP_RETRY_MAX_WAIT`); still failing, it is the
  next reading. Every other 409 — ``AlreadyExists``, a server-side-apply field conflict with
  another manager — is not retried: rerunning cannot change it;
* **any other engine error** (an object that already exists, a server-side-apply conflict, a
  transient conflict that outlasted the retries, pending operations, an error in the program) ->
  exit 7 (:data:`~pulumi_lws.cli.exit_codes.UP_FAILED`) with the engine's own error lines
  (:func:`engine_errors`), one per error, each prefixed by the resource it is about.

Anything else raised by ``up`` is not a failed ``pulumi up`` but a bug: it propagates (exit 3).
"""

from __future__ import annotations

import re

#: tries of one ``pulumi up`` that fails on a transient conflict, the first included
UP_ATTEMPTS = 3
#: seconds before the first retry, doubled before each next one, at most :data:`UP_RETRY_MAX_WAIT`
UP_RETRY_WAIT = 5.0
UP_RETRY_MAX_WAIT = 30.0
#: the longest engine error message shown (a longer one ends with "...")
MAX_MESSAGE = 600
#: the most engine errors shown (the first ones)
MAX_ERRORS = 5

#: ``  kubernetes:core/v1:Service (web-svc):``: a resource's heading in the engine's Diagnostics
_HEADING = re.compile(r"^ {2}(\S+ \(.*\)):\s*$")
#: the Automation API's ``CommandError`` text starts its output sections with these
_SECTIONS = (" stdout: ", " stderr: ")
_GENERIC = ("update failed",)


def cluster_fault(exc: BaseException) -> str | None:
    """The one-line cluster fault a failed ``pulumi up`` reports, or None (another failure).

    A component fails ``up`` with ``NAME: cluster error: MESSAGE`` (:data:`~pulumi_lws.core.contract.ports.CLUSTER_ERROR`);
    the Automation API's ``CommandError`` carries the engine's output, where that line appears
    after ``error:`` (and may be repeated by the engine's summary): the first one is returned."""
    from pulumi_lws.core.contract.ports import CLUSTER_ERROR, ClusterError

    if isinstance(exc, ClusterError):
        return " ".join(str(exc).split())
    for line in _lines(str(exc)):
        if CLUSTER_ERROR in line:
            text = line.strip()
            text = text[len("error:") :].strip() if text.startswith("error:") else text
            return " ".join(text.split())
    return None


def is_command_error(exc: BaseException) -> bool:
    """A failed Pulumi CLI command, as the Automation API raises it."""
    from pulumi.automation.errors import CommandError

    return isinstance(exc, CommandError)


def is_transient(exc: BaseException) -> bool:
    """A failed ``pulumi up`` worth running again (module docstring): a concurrent update holding
    the stack, or a write refused because the object changed since it was read."""
    from pulumi.automation.errors import ConcurrentUpdateError

    from pulumi_lws.cluster.resilience import STALE_CONFLICT_MESSAGES

    if isinstance(exc, ConcurrentUpdateError):
        return True
    if not is_command_error(exc) or cluster_fault(exc) is not None:
        return False
    text = str(exc)
    return any(m in text for m in STALE_CONFLICT_MESSAGES)


def _lines(text: str) -> list[str]:
    """The output's lines, the Automation API's `` stdout: `` / `` stderr: `` section starts removed."""
    out = []
    for line in text.splitlines():
        for section in _SECTIONS:
            if line.startswith(section):
                line = line[len(section) :]
        out.append(line)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3].rstrip() + "..."


def engine_errors(text: str) -> list[str]:
    """The engine's ``error:`` messages in a failed command's output, first seen first, each one
    line: continuation lines indented under it joined (a Python traceback reduced to its last line,
    the exception), prefixed by the resource heading it appears under in Diagnostics (not for the
    stack itself). The generic ``update failed`` only when there is nothing else; at most
    :data:`MAX_ERRORS`."""
    lines = _lines(text)
    found: list[str] = []
    owner: str | None = None
    for i, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading:
            owner = None if heading.group(1).startswith("pulumi:pulumi:Stack ") else heading.group(1)
            continue
        if line.strip() and _indent(line) == 0:
            owner = None  # left Diagnostics (or an error of the CLI itself)
        stripped = line.strip()
        if not stripped.startswith("error:"):
            continue
        block = [stripped[len("error:") :].strip()]
        for follow in lines[i + 1 :]:
            if not follow.strip() or _indent(follow) < _indent(line) or follow.strip().startswith("error:"):
                break
            block.append(follow.strip())
        if any(b.startswith("Traceback (most recent call last)") for b in block):
            block = [block[0], block[-1]]  # "Program failed with an unhandled exception: ValueError: ..."
        message = _short(" ".join(b for b in block if b))
        entry = f"{owner}: {message}" if owner else message
        if message and entry not in found:
            found.append(entry)
    specific = [e for e in found if e not in _GENERIC]
    return (specific or found)[:MAX_ERRORS]


def describe(exc: BaseException) -> list[str]:
    """What to say about a failed command: its engine errors, else the last line of its output,
    else the exception's type."""
    errors = engine_errors(str(exc))
    if errors:
        return errors
    rest = [line.strip() for line in _lines(str(exc)) if line.strip() and not line.strip().startswith("code:")]
    return [_short(rest[-1])] if rest else [type(exc).__name__]
