"""What a plain ``pip install .`` runs: every command, in an environment with no extra.

``.ci/run`` installs the project into a virtual environment of its own (no extra, so no
matplotlib, rioxarray or test tools) and runs this script there, in an empty folder. The tests
always run with the test extra, which installs much more than ``pip install .`` does: a
package the library imports but does not declare (``xfskde segment`` once failed with "No
module named 'threadpoolctl'") would pass them and fail every user. ``tests/test_install.py``
checks the imports against ``pyproject.toml``; this runs them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import tifffile
import zarr

import xfskde
from xfskde.datasets import random_textures

COMMAND = str(Path(sys.executable).with_name("xfskde"))


def run(*args: str) -> str:
    """One ``xfskde`` command, as a user types it; its output, or the failure with its output."""
    argv = [COMMAND, *args, *(("--no-progress",) if args[0] in PROGRESS else ())]
    try:  # a fresh process each: the first segment() of a process once hung for good
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        sys.exit(f"plain install: xfskde {' '.join(args)} did not finish in 10 minutes")
    if done.returncode:
        sys.exit(f"plain install: xfskde {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    print(f"plain install: xfskde {' '.join(args)}: ok")
    return done.stdout


PROGRESS = {"coefficients", "maps", "segment"}


def main() -> None:
    from importlib.metadata import version

    print("plain install:", ", ".join(
        f"{name} {version(name)}" for name in ("numpy", "numba", "dask", "xarray", "zarr")
    ))  # fmt: skip
    for extra in ("matplotlib", "rioxarray", "pytest"):  # no extra is installed
        assert importlib.util.find_spec(extra) is None, f"{extra} is installed: not a plain install"
    # 512²: the window rule then fits two windows side by side, in two threads, in a process
    # that has not imported scikit-learn yet (where the first segment() of a process hung)
    image, truth = random_textures((512, 512), seed=3)[:2]
    tifffile.imwrite("textures.tif", np.round(image * 255).astype(np.uint8), tile=(256, 256))

    run("demo")
    run("coefficients", "textures.tif", "coefficients.zarr", "--size", "4", "--stride", "4")
    run("maps", "textures.tif", "maps.zarr")
    run("maps", "textures.tif", "maps.ome.tif")
    run("maps", "textures.tif", "maps.png")  # the picture, without matplotlib
    run("segment", "textures.tif", "labels.zarr", "--textures", "3")
    run("segment", "textures.tif", "labels.ome.tif", "--textures", "3")
    run("segment", "textures.tif", "labels.png", "--model", "labels.zarr")
    run("segment", "textures.tif", "regions.geojson", "--model", "labels.zarr")  # no pyproj
    run("segment", "textures.tif", "inside.zarr", "--model", "regions.geojson",
        "--mask", "regions.geojson")  # fmt: skip
    # the regions of one class only
    run("segment", "textures.tif", "second.zarr", "--model", "regions.geojson",
        "--mask", "regions.geojson", "--mask-classes", "texture 2")  # fmt: skip
    assert "complete" in run("info", "labels.zarr")
    run("info", "labels.ome.tif")
    assert "the regions of 3 textures" in run("info", "regions.geojson")

    stored = zarr.open_array("labels.zarr/labels", mode="r")[...]
    assert stored.shape == (512, 512) and set(np.unique(stored)) == {1, 2, 3}, np.unique(stored)
    from PIL import Image

    with Image.open("labels.png") as picture:  # the same labels, as PIL reads an indexed PNG
        assert picture.mode == "P" and np.array_equal(np.asarray(picture), stored)
    # the regions drawn back as the mask, the model read back from them: the same labels
    inside = zarr.open_array("inside.zarr/labels", mode="r")[...]
    assert np.array_equal(inside, stored), "the GeoJSON's regions are not the labels"
    second = zarr.open_array("second.zarr/labels", mode="r")[...]
    assert np.array_equal(second > 0, stored == 2), "--mask-classes drew other regions"
    assert np.array_equal(second[second > 0], stored[stored == 2])
    # a shapefile needs geopandas, which no plain install has: refused with the way in
    Path("aoi.shp").write_bytes(b"")
    argv = [COMMAND, "segment", "textures.tif", "aoi.zarr", "--textures", "3", "--mask", "aoi.shp"]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "needs geopandas" in refused.stderr, refused.stderr
    argv = [COMMAND, "segment", "textures.tif", "labels.gpkg", "--textures", "3"]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "needs geopandas" in refused.stderr, refused.stderr
    # a Sentinel-2 band (JPEG 2000) is read through GDAL: refused with the extra to install
    Path("T32TQM_B04.jp2").write_bytes(b"")
    refused = subprocess.run([COMMAND, "info", "T32TQM_B04.jp2"], capture_output=True,
                             text=True, timeout=600)  # fmt: skip
    assert refused.returncode == 2 and "xfskde[geo]" in refused.stderr, refused.stderr
    labels = np.asarray(xfskde.segment(image, 3))
    rand = xfskde.metrics.rand_index(labels, truth)
    assert rand > 0.8, f"segment scored Rand {rand:.3f} on random textures"
    maps = xfskde.open_image("maps.ome.tif")  # orientation, coherence, energy
    assert dict(maps.sizes) == {"c": 3, "y": 512, "x": 512}, dict(maps.sizes)
    print(f"plain install: every command ran; segment's Rand index {rand:.3f}")


if __name__ == "__main__":
    main()
