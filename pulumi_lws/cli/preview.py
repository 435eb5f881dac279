"""``pulumi-lws preview [DIR]``: see :mod:`pulumi_lws.cli.stack`."""

from __future__ import annotations

from pulumi_lws.cli.stack.commands import register_preview as register

__all__ = ["register"]
