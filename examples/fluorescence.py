"""Fluorescence slides: the tissue on its dark background, and one model for slides whose
channels were exposed differently.

Two sections as a fluorescence camera records them (:func:`xfskde.datasets.section_in_fluorescence`:
scikit-image's IHC section's haematoxylin, DAB and optical density as 16-bit counts of three
channels, "DAPI", "marker" and "autofluorescence", on a dark background) are written as
pyramidal OME-TIFFs with 0.5 µm pixels, the second with its DAPI exposed twice as long and its
autofluorescence half as long. ``xfskde segment --mask fluorescence`` fits a model of three
textures on the first, inside its tissue; ``xfskde segment --model`` labels the second with
it, its channels' levels matched one by one (``--match-levels channels``), matched together
(``--match-levels``) and not at all, each compared with the labels of the second section as
it was before its exposures changed. ``--mask auto`` would take the 16-bit image for data and
all of it (it says so, naming ``--mask fluorescence``).

Run ``python examples/fluorescence.py [--folder fluorescence] [--plot]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import tifffile

import xfskde
from xfskde.cli import main as xfskde_command
from xfskde.datasets import section_in_fluorescence
from xfskde.datasets.slides import CAMERA_OFFSET

#: How the second section's channels were exposed, against the first's.
EXPOSURES = (2.0, 1.0, 0.5)
CHANNELS = ["DAPI", "marker", "autofluorescence"]


def _write(path: Path, counts: np.ndarray) -> None:
    """A (y, x, c) uint16 image as a pyramidal OME-TIFF (CYX, 0.5 µm pixels, named channels,
    a level of 2 x 2 means)."""
    cyx = np.ascontiguousarray(np.moveaxis(counts, -1, 0))
    meta = {"axes": "CYX", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5,
            "Channel": {"Name": CHANNELS}}  # fmt: skip
    with tifffile.TiffWriter(path) as tif:
        tif.write(cyx, subifds=1, tile=(256, 256), metadata=meta)
        c, h, w = cyx.shape
        half = cyx[:, : h // 2 * 2, : w // 2 * 2].reshape(c, h // 2, 2, w // 2, 2).mean((2, 4))
        tif.write(half.astype(np.uint16), subfiletype=1, tile=(256, 256))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default=None, help="keep the slides and labels here")
    parser.add_argument("--plot", action="store_true", help="draw the second section")
    args = parser.parse_args(argv)

    first, _ = section_in_fluorescence(seed=0)
    second, section = section_in_fluorescence(seed=1)
    exposed = (second.astype(float) - CAMERA_OFFSET) * np.array(EXPOSURES) + CAMERA_OFFSET
    exposed = np.clip(np.round(exposed), 0, 65535).astype(np.uint16)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for name, counts in (("first", first), ("second", second), ("exposed", exposed)):
            _write(folder / f"{name}.ome.tif", counts)
        quiet = ["--no-progress", "--overwrite", "--mask", "fluorescence"]
        model = folder / "first-labels.zarr"
        xfskde_command(["segment", str(folder / "first.ome.tif"), str(model), "--textures", "3",
                        *quiet])  # fmt: skip
        runs = {"as it was": ("second", []), "channels matched": ("exposed", ["channels"]),
                "matched together": ("exposed", []), "not matched": ("exposed", None)}  # fmt: skip
        labels = {}
        for what, (name, match) in runs.items():
            out = folder / f"{name}-{what.replace(' ', '-')}.zarr"
            levels = [] if match is None or name == "second" else ["--match-levels", *match]
            xfskde_command(["segment", str(folder / f"{name}.ome.tif"), str(out), "--model",
                            str(model), *levels, *quiet])  # fmt: skip
            labels[what] = xfskde.io.open_blocks(out).values
        stored = xfskde.open_image(model)
        print(f"mask: {stored.attrs['mask']}, {stored.attrs['mask_foreground']:.1%} of the slide")
        reference = labels["as it was"]
        print(f"second section labelled: {np.mean(reference[section] > 0):.3f}, "
              f"its background: {np.mean(reference[~section] > 0):.4f}")  # fmt: skip
        print(
            f"exposures {EXPOSURES} (DAPI, marker, autofluorescence); agreement with the "
            "labels of the section as it was, inside it:"
        )
        for what in ("channels matched", "matched together", "not matched"):
            rand = xfskde.rand_index(reference[section], labels[what][section])
            print(f"  {what:17} Rand index {rand:.3f}")
        if args.plot:
            import matplotlib.pyplot as plt

            from xfskde import plot

            plot.segmentation(exposed, labels["channels matched"])
            plt.show()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
