"""SVG timelines a reader can read (issue 25 item 5), checked on the picture itself: each plot is
rasterized to PNG with cairosvg, its text labels measured with the renderer's own font metrics
(cairo, the same "monospace" face) and checked not to overlap; red only for a real blocker;
a legend entry for every state drawn; lanes in the stage table's order; one label per stage; the
floor drawn as checked only where the simulator checks it.

Needs the system cairo library (Debian/Ubuntu: ``apt-get install libcairo2``); without it the
module is skipped with that reason.
"""

from __future__ import annotations

import contextlib
import io
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import TESTS_DIR

try:
    import cairocffi
    import cairosvg
except (ImportError, OSError) as exc:  # OSError: cairocffi found no libcairo
    pytest.skip(f"cairosvg needs the system cairo library (apt-get install libcairo2): {exc}", allow_module_level=True)

from pulumi_lws.cli import main
from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.sim.driver.plot import BLOCKED, FONT

EXAMPLES = TESTS_DIR.parent / "examples"
NS = "{http://www.w3.org/2000/svg}"
SCENARIOS = {
    "hash": EXAMPLES / "hash" / "scenario.yaml",  # gated and terminating groups, ordinary waiting
    "gpu-717": EXAMPLES / "gpu-717" / "scenario-scalefirst.yaml",  # a real blocker, an unchecked floor
    "ms-role": EXAMPLES / "modelserving-pd" / "scenario-role.yaml",  # the floor re-armed after a scale-down
    "ds": EXAMPLES / "disaggregated-pd" / "scenario.yaml",  # role panels
}


@pytest.fixture(scope="module")
def plots(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Per scenario: (SVG text, the printed stage table)."""
    out_dir = tmp_path_factory.mktemp("plots")
    result = {}
    for name, path in SCENARIOS.items():
        svg = out_dir / f"{name}.svg"
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["simulate", str(path), "--engine", "pure", "--plot", str(svg), "--ascii"])
        result[name] = (svg.read_text(), buf.getvalue())
    return result


def texts(svg: str) -> list[tuple[str, float, float, str, float, bool]]:
    """Every drawn text: (content, x, y, anchor, size, bold)."""
    root = ET.fromstring(svg)
    size0 = float(root.get("font-size", FONT))
    out = []
    for el in root.iter(f"{NS}text"):
        content = "".join(el.itertext())
        out.append(
            (
                content,
                float(el.get("x")),
                float(el.get("y")),
                el.get("text-anchor", "start"),
                float(el.get("font-size", size0)),
                el.get("font-weight") == "bold",
            )
        )
    return out


def boxes(svg: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Label boxes from cairo's metrics of the font the PNG is drawn with."""
    surface = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, 10, 10)
    ctx = cairocffi.Context(surface)
    out = []
    for content, x, y, anchor, size, bold in texts(svg):
        ctx.select_font_face(
            "monospace",
            cairocffi.FONT_SLANT_NORMAL,
            cairocffi.FONT_WEIGHT_BOLD if bold else cairocffi.FONT_WEIGHT_NORMAL,
        )
        ctx.set_font_size(size)
        width = ctx.text_extents(content)[4]  # x_advance
        ascent, descent = ctx.font_extents()[:2]
        left = x - (width / 2 if anchor == "middle" else width if anchor == "end" else 0)
        out.append((content, (left, y - ascent, left + width, y + descent)))
    return out


def overlapping(items) -> list[tuple[str, str]]:
    bad = []
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(items):
        for b, (bx0, by0, bx1, by1) in items[i + 1 :]:
            if min(ax1, bx1) - max(ax0, bx0) > 0.5 and min(ay1, by1) - max(ay0, by0) > 0.5:
                bad.append((a, b))
    return bad


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_rasterizes_and_no_labels_overlap(name, plots):
    svg, _ = plots[name]
    png = cairosvg.svg2png(bytestring=svg.encode())
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    root = ET.fromstring(svg)
    assert image.size == (int(float(root.get("width"))), int(float(root.get("height"))))
    assert image.convert("L").getextrema()[0] < 100  # something dark was drawn
    labels = boxes(svg)
    assert len(labels) > 10
    assert overlapping(labels) == []
    width = float(root.get("width"))
    assert [c for c, (x0, _, x1, _) in labels if x0 < 0 or x1 > width] == []  # nothing cut off at the edges


def _legend_words(svg: str) -> set[str]:
    root = ET.fromstring(svg)
    return {
        "".join(t.itertext())
        for g in root.iter(f"{NS}g")
        if g.get("class") == "legend-entry"
        for t in g.iter(f"{NS}text")
    }


@pytest.mark.parametrize("name", ["hash", "gpu-717"])
def test_every_drawn_state_has_a_legend_entry(name, plots):
    svg, _ = plots[name]
    drawn = set(re.findall(r'class="cell" data-state="([a-z-]+)"', svg))
    assert drawn
    words = _legend_words(svg)
    assert {G.WORDS.get(s, s) for s in drawn} <= words
    if name == "hash":  # the gated new groups are gated (were red "old, not ready"), the old ones terminate
        assert {G.GATED, G.TERMINATING} <= drawn


def test_red_only_for_a_real_blocker(plots):
    healthy, _ = plots["hash"]
    assert 'class="blocked"' not in healthy and BLOCKED not in healthy  # waiting is neutral
    assert 'class="waiting"' in healthy and "waiting (healthy pacing)" in _legend_words(healthy)
    blocked, _ = plots["gpu-717"]
    assert re.search(r'class="blocked" data-blocker="resource-deadlock-717"', blocked)
    assert "blocked" in _legend_words(blocked)


@pytest.mark.parametrize("name", ["hash", "gpu-717", "ms-role"])
def test_lanes_follow_the_table_and_each_stage_is_labelled_once(name, plots):
    svg, table = plots[name]
    header = next(line for line in table.splitlines() if line.startswith("Stage "))
    columns = re.findall(r"(R-\d+|G-\w+)", header)
    lanes = re.findall(r'class="lane-label" x="[\d.]+" y="[\d.]+">([^<]+)<', svg)
    assert len(lanes) == len(columns) and all(lane.startswith(col) for lane, col in zip(lanes, columns))
    roles = re.findall(r"(\S+) old\|new", header)  # role lanes (ModelServing RoleRollingUpdate): panels in that order
    assert re.findall(r'class="role-lane" data-role="([^"]+)"', svg) == roles
    assert lanes or roles
    stages = len([line for line in table.splitlines() if re.match(r"Stage \d+ ", line)])
    labels = re.findall(r'<g class="stage-marker"[^>]*>.*?<text[^>]*>(S\d+)</text>', svg)
    assert labels == [f"S{n}" for n in range(1, stages + 1)]


def _polyline(svg: str, cls: str) -> list[tuple[float, float]]:
    points = re.search(rf'<polyline class="{cls}"[^>]* points="([^"]+)"', svg).group(1)
    return [tuple(map(float, p.split(","))) for p in points.split()]


@pytest.mark.parametrize("name", ["ms-role", "gpu-717", "hash"])
def test_the_checked_floor_is_never_above_available(name, plots):
    """The floor is drawn red (checked) only while the simulator's invariant holds it: available
    never dips below a red floor (the runs report 0 violations); before the set is fully available
    at a new replica count the floor is grey dotted (``floor-unarmed``)."""
    svg, table = plots[name]
    assert "0 invariant violations" in table
    available = _polyline(svg, "available")
    floors = re.findall(r'<line class="floor" data-value="\d+" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)"', svg)
    for x1, y, x2 in ((float(a), float(b), float(c)) for a, b, c in floors):
        below = [(px, py) for px, py in available if x1 < px < x2 and py > y + 0.1]
        assert below == [], (x1, x2, y)
    if name == "ms-role":  # replicas 4 -> 2 at t=0: 0 available until t=5, the floor not yet checked
        assert 'class="floor-unarmed"' in svg and floors
    if name == "gpu-717":  # the scale-up never gets fully available: the floor is never checked
        assert not floors and 'class="floor-unarmed"' in svg


def test_role_panels_render_for_disaggregatedset(plots):
    svg, _ = plots["ds"]
    assert svg.count('class="role-lane"') == 2 and "target revision, ready" in _legend_words(svg)
