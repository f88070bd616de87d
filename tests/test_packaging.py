"""Tests of the installable tool: the wheel, the ``specviz`` command it installs, and the Dockerfile.

The wheel is built once for the module without build isolation (hatchling is in
requirements-dev.txt) and installed with ``--no-deps --no-index`` into a fresh venv, which sees this
interpreter's packages through a .pth file: nothing is downloaded. The installed command runs from
a folder outside the checkout, so that only what the wheel carries can be found.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import time
import tomllib
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest
import requests
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import _free_port

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list[str], timeout: float = 120, **kwargs) -> str:
    """Run a command to its end; its stdout, or a failure that shows its stderr."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{shlex.join(argv)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Installed:
    """The wheel installed in a fresh venv, and where to run it from."""

    wheel: Path
    venv: Path
    cwd: Path  # outside the checkout
    env: dict[str, str]

    def specviz(self, *args: str) -> str:
        """stdout of the installed ``specviz`` command."""
        return run([str(self.venv / "bin" / "specviz"), *args], cwd=self.cwd, env=self.env)

    def python(self, *args: str) -> str:
        """stdout of the venv's Python."""
        return run([str(self.venv / "bin" / "python"), *args], cwd=self.cwd, env=self.env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The wheel built from the checkout, installed with --no-deps in a fresh venv whose .pth file
    adds this interpreter's site-packages (its dependencies) after its own."""
    base = tmp_path_factory.mktemp("packaging")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(base / "dist"),
         str(ROOT)])
    wheel, = (base / "dist").glob("specviz-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    # This interpreter's pip installs into the venv (--python): the venv needs no pip of its own.
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps",
         "--no-index", str(wheel)])
    site = run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(site.strip(), "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    cwd = base / "elsewhere"
    cwd.mkdir()
    # No setting of the caller's (SPECVIZ_DATA_DIR above all) and no PYTHONPATH into the checkout.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECVIZ_") and k != "PYTHONPATH"}
    env |= {"SPECVIZ_DB": str(base / "store" / "specviz.duckdb"), "XDG_DATA_HOME": str(base / "xdg")}
    return Installed(wheel, venv, cwd, env)


def test_wheel_holds_the_app_and_its_data(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    shipped = lambda folder: {p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*")
                              if p.is_file() and "__pycache__" not in p.parts and ".duckdb" not in p.name}
    expected = {f"specviz/_app/{name}" for name in shipped("data") | shipped("pages")}
    expected |= {"specviz/_app/app.py", "specviz/_app/.streamlit/config.toml"}
    expected |= shipped("specviz")
    assert {"specviz/_app/data/gpus.csv", "specviz/_app/data/examples/example_sweep.csv",
            "specviz/_app/data/model_configs/Qwen3-32B.json", "specviz/locales/vi.json"} <= expected
    assert expected <= names, sorted(expected - names)
    assert not [name for name in names if ".duckdb" in name]
    project, version = installed.wheel.name.split("-")[:2]
    assert {name.split("/")[0] for name in names} == {"specviz", f"{project}-{version}.dist-info"}


def test_dependencies_are_the_pinned_requirements_at_least():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            pin, = requirement.specifier
            pinned[canonicalize_name(requirement.name)] = pin.version
    declared = {}
    for text in project["dependencies"]:
        requirement = Requirement(text)
        bound, = requirement.specifier
        assert bound.operator == ">=", text
        declared[canonicalize_name(requirement.name)] = bound.version
    assert declared == pinned
    assert project["requires-python"] == ">=3.11"


def subcommands(help_text: str) -> set[str]:
    """The subcommands a ``--help`` text lists (argparse's ``{a,b,...}``: the longest such list, not
    an option's choices such as ``--lang {en,vi}``)."""
    listed = re.findall(r"\{([\w,-]+)\}", help_text)
    assert listed, help_text
    return set(max(listed, key=len).split(","))


def test_installed_command_lists_every_subcommand(installed):
    checkout = run([sys.executable, "-m", "specviz", "--help"], cwd=ROOT)
    assert subcommands(installed.specviz("--help")) == subcommands(checkout) >= {"calc", "ingest", "query", "app"}


def test_installed_calc_gives_the_checkouts_figures(installed):
    row = json.loads(installed.specviz("calc"))
    assert row["speedup"] > 0
    assert row == json.loads(run([sys.executable, "-m", "specviz", "calc"], cwd=ROOT))


def test_installed_paths(installed):
    """The code, presets and app come from the venv; the store defaults to the user's data folder."""
    site = installed.venv.resolve()
    code = "import specviz; from specviz import settings; print(specviz.__file__); print(settings.ROOT)"
    module, root = installed.python("-c", code).splitlines()
    assert Path(module).is_relative_to(site) and Path(root).is_relative_to(site)
    data = Path(installed.python("-m", "specviz.settings", "SPECVIZ_DATA_DIR").strip())
    assert data == Path(root) / "data" and (data / "models.csv").is_file()
    without_db = {k: v for k, v in installed.env.items() if k != "SPECVIZ_DB"}
    db = run([str(installed.venv / "bin" / "python"), "-m", "specviz.settings", "SPECVIZ_DB"], cwd=installed.cwd,
             env=without_db)
    assert Path(db.strip()) == Path(installed.env["XDG_DATA_HOME"]) / "specviz" / "specviz.duckdb"


def test_installed_app_serves(installed, tmp_path):
    """``specviz app`` serves the wheel's app on SPECVIZ_HOST:SPECVIZ_PORT, what follows ``--`` passed
    to Streamlit (here a base path), until it is terminated; Streamlit's exit code is the command's."""
    port = _free_port()
    env = installed.env | {"SPECVIZ_HOST": "127.0.0.1", "SPECVIZ_PORT": str(port)}
    log = tmp_path / "streamlit.log"
    with open(log, "w") as out:
        server = subprocess.Popen([str(installed.venv / "bin" / "specviz"), "app", "--", "--server.baseUrlPath",
                                   "packaged"], cwd=installed.cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                answer = requests.get(f"http://127.0.0.1:{port}/packaged/_stcore/health", timeout=1)
                if answer.ok:
                    break
            except requests.ConnectionError:
                pass
            assert server.poll() is None, f"specviz app exited {server.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"no answer in 60 s:\n{log.read_text()}"
            time.sleep(0.2)
        assert answer.text == "ok"
    finally:
        server.terminate()
        code = server.wait(timeout=10)
    assert code == 0, log.read_text()


def test_installed_app_renders_the_calculator(installed):
    """The wheel's app.py runs (Streamlit's AppTest, no browser): its pages and presets are found."""
    code = ("from streamlit.testing.v1 import AppTest; from specviz import settings; "
            "at = AppTest.from_file(str(settings.ROOT / 'app.py'), default_timeout=60).run(); "
            "print(len(at.exception), len(at.error), len(at.metric))")
    exceptions, errors, metrics = map(int, installed.python("-c", code).split())
    assert (exceptions, errors) == (0, 0) and metrics > 0


def dockerfile_sources(text: str) -> list[str]:
    """The sources of every COPY and ADD of a Dockerfile (shell or JSON form, flags left out)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    sources = []
    for line in "\n".join(lines).replace("\\\n", " ").splitlines():
        instruction, _, rest = line.strip().partition(" ")
        if instruction.upper() in ("COPY", "ADD"):
            args = json.loads(rest) if rest.lstrip().startswith("[") else shlex.split(rest)
            sources += [arg for arg in args if not arg.startswith("--")][:-1]
    return sources


def docker_ignores(path: str) -> bool:
    """Whether .dockerignore keeps ``path`` (or a folder it is in) out of the build context."""
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern.removeprefix("**/")) or fnmatch.fnmatch(prefix, pattern)
               for prefix in prefixes for pattern in patterns)


def docker_answers() -> bool:
    """Whether a Docker daemon answers: the client alone cannot build."""
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def test_dockerfile_copies_what_the_checkout_has():
    """Every COPY/ADD source exists in the checkout and is in the build context; no store is.

    Where a Docker daemon answers (``docker info``), the image is built too (minutes: it installs
    requirements.txt); where none does, that step does not run and the test checks the file only.
    """
    sources = dockerfile_sources((ROOT / "Dockerfile").read_text())
    assert {"requirements.txt", "app.py", "pages/", "specviz/", "data/"} <= set(sources)
    for source in sources:
        assert list(ROOT.glob(source.rstrip("/"))), f"COPY {source}: not in the checkout"
        assert not docker_ignores(source.rstrip("/")), f"COPY {source}: left out by .dockerignore"
    assert docker_ignores("data/specviz.duckdb") and docker_ignores(".venv")
    if docker_answers():
        tag = f"specviz-test:{uuid.uuid4().hex[:12]}"
        run(["docker", "build", "-q", "-t", tag, str(ROOT)], timeout=1800)
        run(["docker", "image", "rm", tag])
