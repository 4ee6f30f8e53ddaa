"""Photographs as a vision researcher holds them: PIL pictures in, an indexed PNG of labels out,
and the model it keeps labelling a second photograph alike.

Two photographs of the same three textures (the halves of a random-texture image) are saved
as a GIF of 64 colours (a palette picture: its raw values are colour-table indices) and as a
PNG with a transparent margin (a cut-out). Each is opened with ``PIL.Image.open`` and handed
to xfskde as it is: the palette is decoded to RGB, the alpha channel dropped and the
transparent pixels left out (label 0). The first photograph's labels are written as an
indexed PNG (``xfskde.io.write_labels_png``: each pixel's value its label, the library's
colours as its palette, the fitted model in a text chunk), read back with PIL, and the model
read from that PNG labels the second photograph — what ``xfskde segment photo.gif labels.png
--textures 3`` and ``xfskde segment cutout.png labels2.png --model labels.png`` do.

Run ``python examples/photos.py [--size 256] [--out DIR]`` (``--out`` keeps the pictures and
the PNGs of labels in DIR; by default they are written to a temporary folder).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

import xfskde
from xfskde.datasets import random_textures
from xfskde.io import write_labels_png
from xfskde.segmentation import read_model

MARGIN = 16  # the cut-out's transparent margin, in pixels


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="each photograph's side")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--out", default=None, help="a folder to keep the files in")
    args = parser.parse_args(argv)

    image, truth = random_textures((args.size, 2 * args.size), seed=args.seed)
    rgb = np.round(image * 255).astype(np.uint8)
    left, right = np.s_[:, : args.size], np.s_[:, args.size :]
    halves = [(rgb[left], truth[left]), (rgb[right], truth[right])]
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.out or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        # 1. a GIF (palette) and a cut-out PNG (RGBA, transparent margin)
        Image.fromarray(halves[0][0]).quantize(64).save(folder / "photo.gif")
        cutout = np.dstack([halves[1][0], np.full(halves[1][0].shape[:2], 255, np.uint8)])
        cutout[:, :MARGIN, 3] = 0
        Image.fromarray(cutout).save(folder / "cutout.png")

        # 2. the GIF as PIL opens it: indices, decoded to RGB by xfskde
        with Image.open(folder / "photo.gif") as picture:
            print(f"photo.gif: PIL mode {picture.mode}, values 0-{np.asarray(picture).max()} "
                  "(colour-table indices)")  # fmt: skip
            labels = xfskde.segment(xfskde.open_image(picture), 3)  # a DataArray: attrs kept
        results["photo"] = xfskde.rand_index(halves[0][1], labels.values)
        print(f"photo.gif    Rand index {results['photo']:.3f} ({labels.attrs['features']})")

        # 3. its labels as an indexed PNG, read back by PIL: the labels themselves
        write_labels_png(labels, folder / "labels.png")
        with Image.open(folder / "labels.png") as written:
            back = np.asarray(written)
            print(f"labels.png: PIL mode {written.mode}, values {np.unique(back).tolist()}, "
                  f"the labels: {np.array_equal(back, labels.values)}")  # fmt: skip
        results["labels_read_back"] = float(np.array_equal(back, labels.values))

        # 4. the model the PNG keeps, on the cut-out (its margin transparent: label 0)
        model = read_model(folder / "labels.png")
        with Image.open(folder / "cutout.png") as picture:
            other = model.predict(picture)
        inside = np.s_[:, MARGIN:]
        results["cutout"] = xfskde.rand_index(halves[1][1][inside], other[inside])
        results["margin_background"] = float((other[:, :MARGIN] == 0).mean())
        print(f"cutout.png   Rand index {results['cutout']:.3f} with the model of labels.png "
              f"(its transparent margin label 0: {results['margin_background']:.0%})")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
