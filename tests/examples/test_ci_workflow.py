"""examples/ci/github-actions.yaml: the workflow's steps, its plan script run for real against a
scratch git repository (a PR changing a LeaderWorkerSet, a ModelServing and a DisaggregatedSet,
adding one, breaking one, touching a ConfigMap), and the one comment it builds rendered as GitHub
renders it (markdown-it-py, CommonMark + GFM tables): one table per changed workload, one row per
stage of ``pulumi-lws plan --format json``, the header's column count in every row, no escape or
raw pipe leaking into a cell. What needs GitHub (the preview and the comment actions) is checked
as configuration only."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import REPO_ROOT
from markdown_it import MarkdownIt

WORKFLOW = REPO_ROOT / "examples" / "ci" / "github-actions.yaml"
EXAMPLES = REPO_ROOT / "examples"
BIN = pathlib.Path(sys.executable).parent


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps() -> dict[str, dict]:
    steps = _workflow()["jobs"]["preview"]["steps"]
    return {s.get("name") or s["uses"].split("@")[0]: s for s in steps}


def test_workflow_runs_preview_and_posts_one_comment():
    flow = _workflow()
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert "pull_request" in triggers
    assert flow["permissions"] == {"contents": "read", "pull-requests": "write"}
    steps = _steps()
    assert steps["actions/checkout"]["with"]["fetch-depth"] == 0  # the base commit is needed
    preview = steps["pulumi preview"]
    assert preview["uses"].startswith("pulumi/actions@") and preview["with"]["command"] == "preview"
    assert preview["with"]["comment-on-pr"] is False  # folded into the one comment
    plan = steps["plan"]
    assert 'pulumi-lws plan old.yaml "$1" --name "$2" --format markdown' in plan["run"]  # per workload
    comment = steps["Comment"]
    assert comment["uses"].startswith("marocchino/sticky-pull-request-comment@")
    assert comment["with"]["path"] == plan["env"]["COMMENT"] == steps["Attach the preview"]["env"]["COMMENT"]
    assert "steps.preview.outputs.output" in steps["Attach the preview"]["env"]["PREVIEW"]
    names = list(steps)
    assert (
        names.index("pulumi preview") < names.index("plan") < names.index("Attach the preview") < names.index("Comment")
    )


def _git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        },
    ).stdout.strip()


def _bump_image(text: str) -> str:
    return text.replace("nginx-unprivileged:1.27", "nginx-unprivileged:1.28")


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory) -> dict:
    """A scratch repository with a base and a head commit, and the plan step run on it."""
    if shutil.which("git") is None or shutil.which("bash") is None:
        pytest.skip("needs git and bash")
    repo = tmp_path_factory.mktemp("repo")
    files = {
        "serving/lws.yaml": EXAMPLES / "quickstart" / "lws.yaml",
        "serving/ms.yaml": EXAMPLES / "modelserving-pd" / "ms.yaml",
        "serving/ds.yaml": EXAMPLES / "disaggregated-pd" / "ds.yaml",
        "serving/broken.yaml": EXAMPLES / "hash" / "lws.yaml",
    }
    (repo / "serving").mkdir()
    for rel, src in files.items():
        (repo / rel).write_text(src.read_text())
    (repo / "serving" / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n"
    )
    # several workloads in one file (and a Service beside them): every one gets its table
    (repo / "serving" / "fleet.yaml").write_text(
        "\n---\n".join(
            [
                (EXAMPLES / "quickstart" / "lws.yaml").read_text(),
                (EXAMPLES / "modelserving-pd" / "ms.yaml").read_text(),
                "apiVersion: v1\nkind: Service\nmetadata: {name: front}\nspec: {ports: [{port: 80}]}\n",
            ]
        )
    )
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    for rel in ("serving/lws.yaml", "serving/ms.yaml", "serving/ds.yaml", "serving/fleet.yaml"):
        (repo / rel).write_text(_bump_image((repo / rel).read_text()))
    (repo / "serving" / "broken.yaml").write_text(
        (repo / "serving" / "broken.yaml").read_text().replace("replicas: 2", "replicas: -2")
    )
    (repo / "serving" / "config.yaml").write_text((repo / "serving" / "config.yaml").read_text().replace("'1'", "'2'"))
    (repo / "serving" / "new.yaml").write_text(
        (EXAMPLES / "hash" / "lws.yaml").read_text().replace("name: web", "name: web2")
    )
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "head")
    head = _git(repo, "rev-parse", "HEAD")
    script = _steps()["plan"]["run"]
    done = subprocess.run(
        ["bash", "-c", script],
        check=False,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": f"{BIN}:/usr/bin:/bin",
            "HOME": str(repo),
            "BASE_SHA": base,
            "HEAD_SHA": head,
            "COMMENT": "pulumi-lws-comment.md",
            # the package under test (a worktree's checkout when given), not only what the venv installed
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        },
    )
    assert done.returncode == 0, done.stderr
    return {"repo": repo, "base": base, "comment": (repo / "pulumi-lws-comment.md").read_text()}


def _sections(markdown: str) -> dict[str, list]:
    """``{h3 heading text: the tokens up to the next h3}``."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    sections: dict[str, list] = {}
    current = None
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h3":
            current = tokens[i + 1].content.strip("`")
            sections[current] = []
        elif current is not None:
            sections[current].append(token)
    return sections


def _table(tokens: list) -> tuple[list[str], list[list[str]]]:
    header, rows, row, part = [], [], None, None
    for i, token in enumerate(tokens):
        if token.type in ("thead_open", "tbody_open"):
            part = token.type
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            row.append(tokens[i + 1].content if tokens[i + 1].type == "inline" else "")
        elif token.type == "tr_close":
            (header if part == "thead_open" else rows).append(row)
    assert len(header) == 1, "exactly one table header"
    return header[0], rows


def _stages(repo: pathlib.Path, base: str, rel: str) -> list[dict]:
    old = repo / "old-for-test.yaml"
    old.write_text(_git(repo, "show", f"{base}:{rel}") + "\n")
    done = subprocess.run(
        [str(BIN / "pulumi-lws"), "plan", str(old), str(repo / rel), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["rows"]


@pytest.mark.parametrize(
    "rel, kind",
    [
        ("serving/lws.yaml", "LeaderWorkerSet"),
        ("serving/ms.yaml", "ModelServing"),
        ("serving/ds.yaml", "DisaggregatedSet"),
    ],
)
def test_one_table_row_per_stage_and_clean_cells(pull_request, rel, kind):
    section = _sections(pull_request["comment"])[rel]
    assert sum(t.type == "table_open" for t in section) == 1, f"{rel}: one table"
    header, rows = _table(section)
    stages = _stages(pull_request["repo"], pull_request["base"], rel)
    assert len(rows) == len(stages) >= 3, f"{kind}: one row per stage"
    assert header[0] == "Stage" and [r[0] for r in rows] == [f"Stage {i}" for i in range(1, len(stages) + 1)]
    for row in rows:
        assert len(row) == len(header), f"{kind}: a raw pipe split a cell: {row}"
        assert not [c for c in row if "\\" in c], f"{kind}: an escape leaked into a cell: {row}"
    html = MarkdownIt("commonmark").enable("table").render(pull_request["comment"])
    assert "\\|" not in html
    if kind == "DisaggregatedSet":  # lanes "old|new" keep their pipe as text inside one cell
        assert [h for h in header if h.endswith("old|new")] == ["prefill old|new", "decode old|new"]
        assert all("|" in row[header.index("prefill old|new")] for row in rows)


def test_comment_covers_every_changed_workload_and_nothing_else(pull_request):
    sections = _sections(pull_request["comment"])
    assert list(sections) == [
        "serving/broken.yaml",
        "serving/ds.yaml",
        "serving/fleet.yaml",
        "serving/lws.yaml",
        "serving/ms.yaml",
        "serving/new.yaml",
    ]
    broken = "".join(t.content for t in sections["serving/broken.yaml"])
    assert "pulumi-lws plan failed (exit 2)" in broken and "replicas" in broken
    assert not any(t.type == "table_open" for t in sections["serving/broken.yaml"])
    new = "".join(t.content for t in sections["serving/new.yaml"])
    assert "New workload" in new and "pulumi-lws render serving/new.yaml" in new
    assert "config.yaml" not in pull_request["comment"]
    # no table text outside a table: a malformed one would render as a paragraph of pipes
    inline = [t for s in sections.values() for t in s if t.type == "inline" and t.content.startswith("| Stage")]
    assert inline == []


def test_a_multi_workload_file_gets_one_table_per_workload(pull_request):
    """Was: "the file holds 2 workloads ...: choose one with --name" as the comment's only text."""
    section = _sections(pull_request["comment"])["serving/fleet.yaml"]
    headings = [section[i + 1].content for i, t in enumerate(section) if t.type == "heading_open" and t.tag == "h4"]
    assert headings == ["LeaderWorkerSet `leaderworkerset-sample`", "ModelServing `pd`"]
    assert sum(t.type == "table_open" for t in section) == 2
    assert "choose one with --name" not in pull_request["comment"]


def _plan_json(repo: pathlib.Path, base: str, rel: str, *flags: str) -> dict:
    old = repo / "old-for-counts.yaml"
    old.write_text(_git(repo, "show", f"{base}:{rel}") + "\n")
    done = subprocess.run(
        [str(BIN / "pulumi-lws"), "plan", str(old), str(repo / rel), "--format", "json", *flags],
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "rel, aligned", [("serving/lws.yaml", False), ("serving/ms.yaml", True), ("serving/ds.yaml", True)]
)
def test_each_table_lists_the_object_changes_of_every_up_of_the_rollout(pull_request, rel, aligned):
    """One list item per `pulumi up` that changes objects, its created/updated/deleted counts as
    `plan --objects` computes them; the first is the next up, exactly `plan --diff`'s changes."""
    repo, base = pull_request["repo"], pull_request["base"]
    tokens = _sections(pull_request["comment"])[rel]
    paragraphs = [t.content for t in tokens if t.type == "inline"]
    start = paragraphs.index("Objects changed by each `pulumi up` of the rollout:")
    items = [p for p in paragraphs[start + 1 :] if p.startswith("`pulumi up`")]
    note = [p for p in paragraphs[start + 1 :] if p.startswith("The table has a row per group")]
    assert bool(note) == (not aligned)  # the reader is told why a LeaderWorkerSet lists fewer ups
    ups = _plan_json(repo, base, rel, "--objects")["objects"]["ups"]
    assert len(ups) >= 2 and len(items) == len(ups)  # a rollout of several ups, each listed
    for item, up in zip(items, ups):
        where = f" (stage {up['stage']})" if up["stage"] is not None else ""
        counts = f"{up['created']} created, {up['updated']} updated, {up['deleted']} deleted"
        assert item == f"`pulumi up` {up['up']}{where}: {counts}"
    assert ups[0]["stage"] == 2  # the next up takes stage 1 to stage 2
    rows = _stages(repo, base, rel)
    assert ([u["stage"] for u in ups] == list(range(2, len(rows) + 1))) == aligned  # one up per stage
    changes = [d["change"] for d in _plan_json(repo, base, rel, "--diff")["diff"]]
    first = ups[0]
    assert (first["created"], first["updated"] + first["replaced"], first["deleted"]) == (
        changes.count("created"),
        changes.count("changed"),
        changes.count("deleted"),
    )


def test_the_sample_comment_in_the_docs_is_what_the_workflow_posts(pull_request):
    """docs/operator.md shows the comment for a PR changing the image of serving/fleet.yaml: its
    section is the one this run posts for the same file."""
    docs = (REPO_ROOT / "docs" / "operator.md").read_text()
    start = docs.index("````markdown\n", docs.index("## The pull-request comment")) + len("````markdown\n")
    sample = docs[start : docs.index("````\n", start)]

    def section(text: str) -> str:
        body = text.split("### `serving/fleet.yaml`\n", 1)[1]
        return body.split("\n### ", 1)[0].rstrip("\n")

    assert section(sample) == section(pull_request["comment"])
    assert sample.startswith(pull_request["comment"].split("\n### ", 1)[0])  # the heading and the intro
