"""One texture model for many images: fit it on the first slide, segment the others with it,
and every texture keeps its label from slide to slide.

Three "slides" of the same three textures in other layouts (OME-TIFFs with 0.5 µm pixels, the
third 10 % darker) are written to a folder; ``xfskde segment`` fits a model on the first and
stores it with its labels; ``xfskde segment --model`` segments the others with that model (the
darker one with ``--match-levels``, and without it for comparison); in Python,
``xfskde.segmentation.read_model`` rebuilds it from the store. A fourth slide scanned at twice
the magnification (0.25 µm, one level) is read at the model's 0.5 µm in 2 x 2 cells of its
pixels, as the command says; the same slide with ``--level 0`` is refused, naming ``--mpp``.

Run ``python examples/cohort.py [--size 192] [--folder cohort]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import tifffile

import xfskde
from xfskde.cli import main as xfskde_command
from xfskde.datasets import random_textures
from xfskde.segmentation import read_model


def _write_slides(folder: Path, side: int, seed: int) -> dict[str, np.ndarray]:
    """Crops of one image of three textures, as 8-bit OME-TIFFs: their truths by file name
    (slide4's at the model's 0.5 µm: the file is the crop scanned at 0.25 µm)."""
    image, truth = random_textures((2 * side, 2 * side), seed=seed)
    pixels = np.round(image * 255).astype(np.uint8)
    truths = {}
    corners = {"slide1": (0, 0), "slide2": (side, side), "slide3": (0, side)}
    for name, (top, left) in corners.items():
        crop = np.s_[top : top + side, left : left + side]
        slide = pixels[crop] if name != "slide3" else np.round(pixels[crop] * 0.9).astype(np.uint8)
        tifffile.imwrite(folder / f"{name}.ome.tif", slide, ome=True, photometric="rgb",
                         metadata={"axes": "YXS", "PhysicalSizeX": 0.5,
                                   "PhysicalSizeY": 0.5})  # fmt: skip
        truths[name] = truth[crop]
    crop = np.s_[side:, :side]  # the fourth corner, each pixel scanned as 2 x 2
    tifffile.imwrite(folder / "slide4-40x.ome.tif", pixels[crop].repeat(2, 0).repeat(2, 1),
                     ome=True, photometric="rgb",
                     metadata={"axes": "YXS", "PhysicalSizeX": 0.25,
                               "PhysicalSizeY": 0.25})  # fmt: skip
    truths["slide4"] = truth[crop]
    return truths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=192, help="slide side in pixels")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--folder", default=None, help="keep the slides and labels here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        truths = _write_slides(folder, args.size, args.seed)
        first = folder / "slide1-labels.zarr"
        quiet = ["--no-progress", "--overwrite"]
        xfskde_command(["segment", str(folder / "slide1.ome.tif"), str(first), "--textures", "3",
                        *quiet])  # fmt: skip
        for name, options in (("slide2", []), ("slide3", ["--match-levels"]),
                              ("slide3-plain", [])):  # fmt: skip
            xfskde_command(["segment", str(folder / f"{name[:6]}.ome.tif"),
                            str(folder / f"{name}-labels.zarr"), "--model", str(first),
                            *options, *quiet])  # fmt: skip
        # slide4, at 0.25 µm: read at the model's 0.5 µm (said on stderr); --level 0 refused
        xfskde_command(["segment", str(folder / "slide4-40x.ome.tif"),
                        str(folder / "slide4-labels.zarr"), "--model", str(first),
                        *quiet])  # fmt: skip
        code = xfskde_command(["segment", str(folder / "slide4-40x.ome.tif"),
                               str(folder / "slide4-l0-labels.zarr"), "--model", str(first),
                               "--level", "0", *quiet])  # fmt: skip
        # each true texture's most frequent label, slide by slide: the same on every slide
        print("texture   " + "  ".join(f"{name:>6}" for name in truths))
        labels = {
            name: xfskde.io.open_blocks(folder / f"{name}-labels.zarr").values for name in truths
        }
        for texture in range(3):
            row = [np.bincount(labels[n][truths[n] == texture]).argmax() for n in truths]
            print(f"{texture:7}   " + "  ".join(f"{v:6}" for v in row))
        for name in truths:
            print(f"{name}: Rand index {xfskde.rand_index(truths[name], labels[name]):.3f}")
        plain = xfskde.io.open_blocks(folder / "slide3-plain-labels.zarr").values
        print(f"slide3 (10 % darker) without --match-levels: Rand index "
              f"{xfskde.rand_index(truths['slide3'], plain):.3f}")  # fmt: skip
        model = read_model(first)  # the same model in Python
        again = model.predict(xfskde.open_image(folder / "slide2.ome.tif"))
        print(f"read_model({first.name}).predict(slide2) equals the command's labels: "
              f"{bool(np.array_equal(again, labels['slide2']))}")  # fmt: skip
        print(f"slide4 at 0.25 µm with --level 0: refused (exit status {code}), see above")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
