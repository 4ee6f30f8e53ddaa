"""The first five minutes: the package imports from anywhere, and running it never writes into
the installed package's folder (numba's cache goes to the user's cache folder)."""

import os
import subprocess
import sys
from pathlib import Path

import xfskde

PACKAGE = Path(xfskde.__file__).resolve().parent

PROBE = """
import numpy as np
import xfskde
from xfskde import _core
from xfskde.segmentation import _filters
xfskde.local_fskde(np.zeros((24, 24), np.float32), order=2, window="box", size=3)
print(xfskde.__file__)
print(_core.fskde_tile._cache._cache_path)
print(_filters._columns._cache._cache_path)
"""


def _run(tmp_path, **env):
    return subprocess.run(
        [sys.executable, "-c", PROBE],
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
        [sys.executable, "-c", PROBE],
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
