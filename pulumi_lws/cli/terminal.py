"""What the terminal can print: the glyph set of stage tables (``--ascii`` or automatic)."""

from __future__ import annotations

import sys

from pulumi_lws.core.contract.glyphs import ASCII, UNICODE, GlyphSet, can_encode


def table_glyphs(ascii_flag: bool = False) -> GlyphSet:
    """ASCII marks when asked (``--ascii``) or when stdout cannot encode the emoji; in the latter
    case stdout also replaces any other character it cannot encode (an arrow in a description, a
    name) instead of failing with a traceback."""
    if can_encode(sys.stdout):
        return ASCII if ascii_flag else UNICODE
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # io.TextIOWrapper; a test's StringIO has none
    if reconfigure is not None:
        reconfigure(errors="replace")
    return ASCII
