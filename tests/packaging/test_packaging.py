"""The published package: ``python -m build`` gives an sdist and a wheel that work from a clean venv.

One build per test session (:func:`dist`): the sources a release ships (``pyproject.toml``,
``README.md``, ``pulumi_lws/``) are copied to a temporary directory and built there with
``python -m build --no-isolation`` (offline: the build backend comes from the ``test`` extra), so
the working tree is never written and a file the package needs but does not declare fails here.
``build`` makes the wheel *from the sdist*, so a working wheel also proves the sdist complete.

The wheel is installed with ``pip install --no-index --no-deps`` into a fresh venv (no pip, no
site-packages) whose only view of the dependencies is one ``.pth`` line naming this venv's
site-packages directory — ``.pth`` files there (the editable install of this checkout) are not
processed, so ``pulumi_lws`` can only come from the wheel. Commands run from a temporary cwd.
"""

from __future__ import annotations

import ast
import email
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest
from conftest import REPO_ROOT

pytestmark = pytest.mark.packaging

SHIPPED = ("pyproject.toml", "README.md", "pulumi_lws")


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> dict[str, pathlib.Path]:
    src = tmp_path_factory.mktemp("src")
    for name in SHIPPED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, src / name)
    out = src / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="session")
def venv(dist, tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--quiet",
            str(dist["wheel"]),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    site = pathlib.Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    (site / "zz-test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return root


def run_in(venv: pathlib.Path, *argv: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(argv),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)},
    )


def test_one_version_string(dist):
    from pulumi_lws import __version__

    with zipfile.ZipFile(dist["wheel"]) as wheel:
        meta_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(wheel.read(meta_name))
    assert meta["Version"] == __version__ and dist["wheel"].name == f"pulumi_lws-{__version__}-py3-none-any.whl"
    assert dist["sdist"].name == f"pulumi_lws-{__version__}.tar.gz"
    assert meta["License-Expression"] == "Apache-2.0" and meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Repository", "Changelog", "Issues"} <= set(urls) and all(
        u.startswith("https://") for u in urls.values()
    )
    assert (REPO_ROOT / "CHANGELOG.md").read_text().count(f"## [{__version__}]") == 1


def test_package_data_in_and_test_data_out(dist):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        in_wheel = set(wheel.namelist())
    with tarfile.open(dist["sdist"]) as sdist:
        in_sdist = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    needed = {
        "pulumi_lws/py.typed",
        *(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "pulumi_lws/core/k8s/schemas").glob("*.json")),
    }
    assert needed <= in_wheel and needed <= in_sdist
    sources = {str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "pulumi_lws").rglob("*.py")}
    assert sources <= in_wheel, sorted(sources - in_wheel)[:5]
    for names in (in_wheel, in_sdist):  # conformance vectors and goldens are test data
        assert not [n for n in names if n.startswith("tests/") or "conformance" in n or "golden" in n]


def test_installed_wheel_runs_the_cli_and_imports(venv, tmp_path):
    from pulumi_lws import __version__

    version = run_in(venv, "pulumi-lws", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"pulumi-lws {__version__}", version.stderr
    where = run_in(
        venv, "python", "-c", "import pulumi_lws, sys; print(pulumi_lws.__file__); print(sys.prefix)", cwd=tmp_path
    )
    module_file, prefix = where.stdout.split()
    assert module_file.startswith(prefix) and prefix == str(venv), where.stdout  # the wheel, not the checkout


def test_installed_wheel_reads_its_package_data(venv, tmp_path):
    """render validates pod templates against the packaged core/k8s/schemas JSON."""
    manifest = tmp_path / "lws.yaml"
    shutil.copy2(REPO_ROOT / "examples" / "quickstart" / "lws.yaml", manifest)
    done = run_in(venv, "pulumi-lws", "render", str(manifest), cwd=tmp_path)
    assert done.returncode == 0 and "kind: StatefulSet" in done.stdout, done.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(manifest.read_text().replace("containers:", "containerz:", 1))
    rejected = run_in(venv, "pulumi-lws", "render", str(bad), cwd=tmp_path)
    assert rejected.returncode == 2 and rejected.stdout == "" and "containerz" in rejected.stderr


def _example_imports() -> list[str]:
    lines = []
    for program in sorted((REPO_ROOT / "examples").glob("*/__main__.py")):
        for node in ast.parse(program.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines.append(ast.unparse(node))
    return sorted(set(lines))


def test_installed_wheel_satisfies_every_example_import(venv, tmp_path):
    imports = _example_imports()
    assert any("pulumi_lws" in line for line in imports) and len(imports) >= 3
    code = "\n".join([*imports, "import pulumi_lws.provider.schema as s; assert len(s.components()) == 3"])
    done = run_in(venv, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
