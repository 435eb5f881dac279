"""Help text for ``--help``: module docstrings without reStructuredText markup.

Docstrings are written for code readers (````code````, ``:func:`name```` roles); ``--help`` shows
plain text. Invariant: :func:`plain` only removes markup, it never changes a word, so a command's
docstring and its ``--help`` description cannot drift apart.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)


def plain(text: str | None) -> str:
    """``text`` with ``:role:`target``` reduced to its target and ````literal```` to its content."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text or "")).strip()
