"""Regions to and from QuPath: segment inside an annotation, and hand the textures back as
annotations.

A pathologist draws the region to analyse in QuPath and exports it (*File > Export objects as
GeoJSON*): its vertices are pixels of the slide's full resolution. The script

1. writes a slide of three textures as a pyramidal OME-TIFF (0.5 µm pixels, a level of 1 µm)
   and, as QuPath would export them, two annotations in the slide's level-0 pixels: the
   tissue's outline (``"Tissue"``) and ``"Tumor"`` inside it (a polygon with a hole);
2. segments the slide at 1 µm (``--mpp 1``, its level 1) inside the tumour only
   (``--mask region.geojson --mask-classes Tumor``): labels outside it are 0, nothing there
   is computed;
3. writes the same labels as regions (``textures.geojson``): one MultiPolygon per texture,
   classified ``texture 1`` … in the library's colours, in level-0 pixels again — what
   QuPath's *File > Import objects* draws on the slide;
4. reads the regions back, each texture's class on its own (``classes=``): drawn on level 1
   they are the labels, pixel for pixel; and ``--model textures.geojson`` labels the slide as
   the first run did.

Run ``python examples/qupath.py [--size 512] [--folder qupath]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import tifffile
import zarr

import xfskde
from xfskde.cli import main as xfskde_command
from xfskde.datasets import random_textures
from xfskde.io.geojson import polygon_mask
from xfskde.metrics import rand_index


def _write_slide(path: Path, side: int) -> np.ndarray:
    """A two-level OME-TIFF of random textures (0.5 µm pixels); the truth of its level 1."""
    image, truth = random_textures((side, side), seed=4)
    pixels = np.round(image * 255).astype(np.uint8)
    options = {"tile": (128, 128), "photometric": "rgb"}
    sizes = {"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    with tifffile.TiffWriter(path, ome=True) as tif:
        tif.write(pixels, subifds=1, metadata={"axes": "YXS", **sizes}, **options)
        tif.write(pixels[::2, ::2], subfiletype=1, **options)
    return truth[::2, ::2]


def _annotations(side: int) -> dict:
    """QuPath's export of two annotations, in level-0 pixels: the tissue's outline, and the
    tumour inside it, a square with a square hole."""
    a, b, c, d = side // 8, 7 * side // 8, 3 * side // 8, 5 * side // 8
    outer = [[a, a], [b, a], [b, b], [a, b], [a, a]]
    hole = [[c, c], [d, c], [d, d], [c, d], [c, c]]
    tissue = [[2, 2], [side - 2, 2], [side - 2, side - 2], [2, side - 2], [2, 2]]
    return {"type": "FeatureCollection", "features": [{
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": [tissue]},
        "properties": {"objectType": "annotation",
                       "classification": {"name": "Tissue", "color": [0, 150, 0]}},
    }, {
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": [outer, hole]},
        "properties": {"objectType": "annotation",
                       "classification": {"name": "Tumor", "color": [200, 0, 0]}},
    }]}  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="the slide's side in pixels")
    parser.add_argument("--folder", default=None, help="keep the slide and regions here")
    args = parser.parse_args(argv)
    quiet = ["--no-progress", "--overwrite"]
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        slide = folder / "slide.ome.tif"
        truth = _write_slide(slide, args.size)
        region = folder / "region.geojson"
        region.write_text(json.dumps(_annotations(args.size)))
        tumour = ["--mask", str(region), "--mask-classes", "Tumor"]

        # 2. inside the tumour only, at 1 µm
        labels_store = folder / "labels.zarr"
        xfskde_command(["segment", str(slide), str(labels_store), "--textures", "3",
                        "--mpp", "1", *tumour, *quiet])  # fmt: skip
        labels = zarr.open_group(labels_store)["labels"][:]
        level1 = xfskde.open_image(slide, level=1)
        inside = polygon_mask(str(region), level1, classes=["Tumor"]).values
        results["outside_labelled"] = float(np.mean(labels[~inside] > 0))
        results["inside_labelled"] = float(np.mean(labels[inside] > 0))
        results["rand_inside"] = float(rand_index(truth[inside], labels[inside]))
        print(
            f"labels inside the Tumor annotation: {results['inside_labelled']:.1%} of its pixels "
            f"(Rand {results['rand_inside']:.3f}); outside: {results['outside_labelled']:.1%}"
        )

        # 3. the textures as QuPath's annotations
        textures = folder / "textures.geojson"
        xfskde_command(["segment", str(slide), str(textures), "--textures", "3", "--mpp", "1",
                        *tumour, *quiet])  # fmt: skip
        collection = json.loads(textures.read_text())
        classes = [f["properties"]["classification"]["name"] for f in collection["features"]]
        print(f"textures.geojson: {', '.join(classes)} as MultiPolygons in level-0 pixels")

        # 4. read back: drawn on level 1 they are the labels; --model labels the slide alike
        drawn = np.zeros_like(labels)
        for feature in collection["features"]:
            name = feature["properties"]["classification"]["name"]  # "texture 1", ...
            drawn[polygon_mask(collection, level1, classes=[name]).values] = feature["properties"][
                "label"
            ]
        results["regions_are_labels"] = float(np.mean(drawn == labels))
        again = folder / "again.zarr"
        xfskde_command(["segment", str(slide), str(again), "--model", str(textures),
                        "--mpp", "1", *tumour, *quiet])  # fmt: skip
        results["model_same_labels"] = float(np.mean(zarr.open_group(again)["labels"][:] == labels))
        print(
            f"the regions drawn back are the labels at {results['regions_are_labels']:.2%} of "
            f"the pixels; --model textures.geojson labels the slide alike at "
            f"{results['model_same_labels']:.2%}"
        )
    return results


if __name__ == "__main__":
    main()
