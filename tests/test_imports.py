"""What ``import xfskde`` loads: what every use needs, not what only some functions do.

A worker of a Dask cluster imports xfskde for its first task, and that memory stays for the
worker's life: in 2026-11 ``import xfskde`` loaded scikit-image's morphology and measure
modules, and through them scipy's stats, signal, spatial and optimize, for the tissue mask's
disk, the GeoJSON writer's contours and a Gabor kernel (187 MiB in a worker, 249 MiB of its
RSS; 137 and 199 MiB once they were imported where they are used), and a worker of 300 MB
paused for good. The modules are looked for in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Modules only some functions need, each imported inside them.
ONLY_WHERE_USED = (
    "sklearn", "matplotlib", "distributed", "rasterio", "rioxarray", "ome_zarr", "napari",
    "skimage.morphology", "skimage.measure", "scipy.stats", "scipy.signal", "scipy.spatial",
    "scipy.optimize",
)  # fmt: skip


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    ["import xfskde", "from xfskde.cli import build_parser; build_parser()"],
    ids=["import-xfskde", "command-start-up"],
)
def test_what_only_some_functions_need_is_not_imported(code):
    loaded = set(_loaded_after(code))
    assert "xfskde.api" in loaded  # the package itself was imported
    assert not [name for name in ONLY_WHERE_USED if name in loaded]


def test_the_functions_that_import_them_still_work():
    """Each function that now imports scikit-image itself, called first in a fresh process:
    the tissue mask's closing and margin, a region's outlines, the Gabor kernels."""
    code = """
import numpy as np
from xfskde.masks import _closed
from xfskde.io.geojson import _outlines
from xfskde.segmentation._bank import _gabor_kernel

mask = np.zeros((9, 9), bool)
mask[2:7, 2:7] = True
mask[4, 4] = False
assert _closed(mask, 2)[4, 4] and _closed(mask, 2).sum() == 25
((ring, holes),) = _outlines(mask)
assert len(holes) == 1 and ring.min() == 2 and ring.max() == 7
kernel = _gabor_kernel(0.25, 45)
assert abs(kernel.mean()) < 1e-12 and kernel.shape[0] == kernel.shape[1]
"""
    assert "skimage.morphology" in _loaded_after(code)
