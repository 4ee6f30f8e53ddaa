"""The first five minutes: the package imports from anywhere, every package it imports is one
``pip install .`` installs (or an extra's, asked for by name), and running it never writes into
the installed package's folder (numba's cache goes to the user's cache folder); and the suite
itself starts as many processes as the machine can run."""

import ast
import importlib.metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import xfskde

PACKAGE = Path(xfskde.__file__).resolve().parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"

#: Packages the library imports that only an extra installs (top-level import name -> extra).
#: Every import of them is guarded: without the extra, the feature that needs one says which
#: extra to install (``xfskde.plot._pyplot``, ``io.geotiff._require_rioxarray``; without pyproj
#: a scene's ground pixel size is not recorded, :func:`xfskde._labels.parse_crs`).
OPTIONAL_IMPORTS = {
    "matplotlib": "plot",
    "rioxarray": "geo",
    "rasterio": "geo",
    "pyproj": "geo",
    "geopandas": "vector",
    "pyogrio": "vector",
}

#: Prints where the package was imported from and where numba caches two of its loops (known
#: when the loop is decorated); with the argument "compile", first compiles one small loop, so
#: that its cache is written (one loop: compiling all that ``local_fskde`` runs took 30 s).
PROBE = """
import sys
import numpy as np
import xfskde
from xfskde import _core
from xfskde.segmentation import _filters
if sys.argv[1:] == ["compile"]:
    out = np.zeros((2, 2, 1), np.float32)
    src, starts = np.ones((2, 2, 1), np.float32), np.arange(2)
    _filters._columns(src, np.ones(1, np.float32), starts, np.zeros(2, np.int64), 1, out)
    assert (out == 1).all()
print(xfskde.__file__)
print(_core.fskde_tile._cache._cache_path)
print(_filters._columns._cache._cache_path)
"""


def _run(tmp_path, *args, **env):
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=tmp_path,  # another folder: the checkout is not on the path by accident
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.splitlines()


def test_imports_from_another_folder_and_caches_outside_the_package(tmp_path):
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    lines = subprocess.run(
        [sys.executable, "-c", PROBE, "compile"],
        cwd=tmp_path,
        env={**env, "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.splitlines()
    assert Path(lines[0]).resolve() == PACKAGE / "__init__.py"  # the real package, not a stub
    for path in map(Path, lines[1:]):
        assert path.is_relative_to(cache / "numba"), path
        assert not path.resolve().is_relative_to(PACKAGE), path
    assert list((cache / "numba").rglob("*.nbi")), "nothing was cached"


def test_a_user_cache_dir_wins(tmp_path):
    lines = _run(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    for path in map(Path, lines[1:]):
        assert path.is_relative_to(tmp_path / "mine"), path


def _requirement_names(requirements: list[str]) -> set[str]:
    """Distribution names of PEP 508 requirements, normalised (PEP 503)."""
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level names of the packages the library imports (module and function level), each
    with the modules that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top and top != "xfskde" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(PACKAGE.parent)))
    return found


def test_every_imported_package_is_a_declared_dependency():
    """A plain ``pip install .`` must install what the library imports (``xfskde segment``
    failed with "No module named 'threadpoolctl'": scikit-learn was only in the test and
    experiments extras, which the tests always had)."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    core = _requirement_names(project["dependencies"])
    extras = {k: _requirement_names(v) for k, v in project["optional-dependencies"].items()}
    distributions = importlib.metadata.packages_distributions()
    imports = _third_party_imports()
    assert {"numpy", "sklearn", "matplotlib"} <= set(imports)  # the scan really read the imports
    problems = []
    for top, where in sorted(imports.items()):
        names = {canonicalize_name(d) for d in distributions.get(top, [top])}
        extra = OPTIONAL_IMPORTS.get(top)
        if names & core:
            continue
        if extra is not None and names & extras.get(extra, set()):
            continue
        problems.append(
            f"{top} (imported by {', '.join(sorted(where))}) is not in pyproject's dependencies"
            + (f" nor in the {extra!r} extra" if extra else "")
        )
    assert not problems, "\n".join(problems)


def test_the_suite_starts_a_process_per_usable_cpu_within_memory(monkeypatch):
    """``-n auto`` (pyproject's addopts) asks ``tests/conftest.py`` how many test processes to
    start: the CPUs this process may run on, not the machine's (a container limited to 2 of 64
    visible CPUs started 64 with pytest-xdist's own count), and no more than the available
    memory holds at ``WORKER_MEMORY`` each; at least one."""
    import psutil
    from conftest import WORKER_MEMORY, pytest_xdist_auto_num_workers

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("os.sched_getaffinity is Linux's")

    class Memory:
        available = 0

    def machine(cpus: int, memory: int) -> int:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
        Memory.available = memory
        monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory)
        return pytest_xdist_auto_num_workers(None)

    assert machine(2, 24 * 2**30) == 2  # CI: 2 cores, 24 GiB
    assert machine(64, 24 * 2**30) == 24 // 3  # memory bounds it
    assert machine(16, int(7.9 * 2**30)) == 2
    assert machine(4, WORKER_MEMORY - 1) == 1  # never none
    assert machine(1, 128 * 2**30) == 1
