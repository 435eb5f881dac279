"""What the CLI says about the workload APIs, every word from the registered APIs' facts.

Help texts name the registered kinds (:func:`kinds`); a flag that maps to an API option
(``--update-order`` -> ``update_order``) is refused, naming the flag, for an API whose
``arguments`` do not take that option (:func:`pulumi_lws.workloads.option_refused`); the top-level ``--help`` lists
each API with its own one-line description (:func:`api_lines`). Adding an API changes these
words without a line changed here.
"""

from __future__ import annotations

from pulumi_lws.workloads import registered


def kinds(conjunction: str = "or") -> str:
    """``LeaderWorkerSet, ModelServing or DisaggregatedSet`` (registration order)."""
    names = list(registered())
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def kinds_taking(option: str) -> list[str]:
    """The registered kinds whose component arguments take the pulumi-lws option ``option``."""
    return [kind for kind, w in registered().items() if option in w.arguments.option_names]


def choosable_gang_kinds() -> list[str]:
    """The registered kinds whose gang provider is a choice (``--gang-provider`` applies)."""
    return [kind for kind, w in registered().items() if w.gang.fixed is None]


def fixed_gang_kinds() -> list[str]:
    """``ModelServing (volcano)``: the kinds whose gang provider is fixed, with that provider."""
    return [f"{kind} ({w.gang.fixed})" for kind, w in registered().items() if w.gang.fixed is not None]


def api_lines() -> str:
    """One line per registered API for the top-level ``--help``: kind, then its description."""
    width = max((len(k) for k in registered()), default=0)
    return "\n".join(f"  {kind:<{width}}  {w.words.description}" for kind, w in registered().items())
