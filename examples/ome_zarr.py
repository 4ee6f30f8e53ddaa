"""Orientation, coherence and energy maps written as an OME-Zarr image for napari, OMERO, QuPath.

A synthetic dead-leaves image of bars in three orientations (vertical, horizontal, diagonal;
paper, section 5.3) is read lazily, its local FS-KDE field is computed in 8×8 cells (box
window, stride 8; section 2.3), and three maps of it (orientation, coherence, energy) are written
with the ground-truth regions as a label image:

1. the store is an OME-NGFF 0.5 multiscale image: one float32 channel per map, a pyramid of
   2×2 means (doubled-angle means for the orientation), labels by 2×2 modes;
2. each level's coordinate transformations put its samples over the pixels they describe: the
   first 8×8 cell's centre is pixel 3.5, i.e. 3.5 × the pixel size in micrometres;
3. read back with zarr alone, level 0 equals the maps, and the mean orientation of the coherent
   cells in the regions of vertical and of horizontal bars is that of their bars
   (ome-zarr-models validates the store when it is installed);
4. the same image as one pyramidal OME-TIFF (``write_ome_tiff``) for QuPath and Fiji: read back
   with tifffile, each level equals the store's and the pixel size is the cell's, in µm.

    python examples/ome_zarr.py [--size 512] [--pixel-size 0.5] [--coarsest 16] [--out PATH]
"""

from __future__ import annotations

import argparse

import numpy as np
import tifffile
import xarray as xr
import zarr

import xfskde
from xfskde.datasets import dead_leaves
from xfskde.io import write_ome_tiff, write_ome_zarr
from xfskde.orientation import coherence, energy, orientation

STRIDE = 8
#: The axis along the bars of each ground-truth region (0: vertical, 1: horizontal bars).
BAR_AXES = {0: np.pi / 2, 1: 0.0}


def axial_mean(angles: np.ndarray) -> float:
    """The mean axis of angles in [0, π): half the argument of the mean of exp(2iθ)."""
    angles = angles[np.isfinite(angles)]
    return float(np.mod(np.angle(np.exp(2j * angles).mean()) / 2, np.pi))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="image side (default 512)")
    parser.add_argument(
        "--pixel-size", type=float, default=0.5, help="micrometres per pixel (default 0.5)"
    )
    parser.add_argument(
        "--coarsest", type=int, default=16, help="longest side of the last level (default 16)"
    )
    parser.add_argument("--out", default="maps.ome.zarr", help="the store (default maps.ome.zarr)")
    args = parser.parse_args(argv)
    if not 128 <= args.size <= 8192:
        parser.error("--size must be between 128 and 8192")
    results: dict[str, float] = {}

    # the image, lazily: pixel centres at 0, 1, 2, ... (its coordinates)
    rgb, truth = dead_leaves((args.size, args.size), seed=0)
    coords = {"y": np.arange(args.size), "x": np.arange(args.size)}
    image = xr.DataArray(rgb.mean(axis=2), dims=("y", "x"), coords=coords, name="bars")
    field = xfskde.local_fskde(
        image.chunk(256), order=8, window="box", size=STRIDE, stride=STRIDE
    )  # lazy: nothing is computed before the writer asks for a block
    maps = {
        "orientation": orientation(field),  # axial angles in [0, π): averaged as such
        "coherence": coherence(field),
        "energy": energy(field),
    }
    labels = xr.DataArray(truth.astype(np.uint8), dims=("y", "x"), coords=coords, name="truth")

    # 1. the OME-Zarr image, its pyramid and its labels
    write_ome_zarr(
        maps, args.out, labels={"truth": labels}, pixel_size=args.pixel_size,
        coarsest=args.coarsest, overwrite=True,
    )  # fmt: skip
    root = zarr.open_group(args.out, mode="r")
    multiscale = root.attrs["ome"]["multiscales"][0]
    shapes = [root[d["path"]].shape for d in multiscale["datasets"]]
    results["levels"] = len(shapes)
    print(f"{args.out}: levels {shapes}, channels "
          f"{[c['label'] for c in root.attrs['ome']['omero']['channels']]}, "
          f"axial {multiscale['metadata']['axial_channels']}, labels "
          f"{root['labels'].attrs['ome']['labels']}")  # fmt: skip

    # 2. where the samples sit: the first cell's centre, pixel 3.5, in micrometres
    first_level = multiscale["datasets"][0]["coordinateTransformations"]
    scale, translation = first_level[0]["scale"], first_level[1]["translation"]
    results["first_centre_um"] = translation[1]
    results["cell_um"] = scale[1]
    last = multiscale["datasets"][-1]["coordinateTransformations"]
    print(f"level 0: a sample every {scale[1]:g} µm, the first at {translation[1]:g} µm "
          f"(pixel {translation[1] / args.pixel_size:g}); level {len(shapes) - 1}: every "
          f"{last[0]['scale'][1]:g} µm from {last[1]['translation'][1]:g} µm")  # fmt: skip

    # 3. read back with zarr: level 0 is the maps; each region's orientation is its bars'
    level0 = root["0"][...]
    stacked = np.stack([m.values for m in maps.values()])
    results["level0_error"] = float(np.nanmax(np.abs(level0 - stacked)))
    centre = STRIDE // 2  # the pixel below-right of each cell's centre, inside the cell
    region = truth[centre::STRIDE, centre::STRIDE][: level0.shape[1], : level0.shape[2]]
    coherent = level0[1] > 0.5
    for value, axis in BAR_AXES.items():
        mean = axial_mean(level0[0][(region == value) & coherent])
        d = abs(mean - axis) % np.pi
        results[f"region_{value}_error_degrees"] = float(np.rad2deg(min(d, np.pi - d)))
    print(f"level 0 equals the maps to {results['level0_error']:.0e}; axial mean orientation "
          f"off the bars' axis by {results['region_0_error_degrees']:.1f}° (vertical bars) and "
          f"{results['region_1_error_degrees']:.1f}° (horizontal bars)")  # fmt: skip

    try:
        from ome_zarr_models.v05.image import Image
    except ImportError:
        print("ome-zarr-models is not installed: the store was not validated")
    else:
        image_model = Image.from_zarr(root)
        print(f"ome-zarr-models: a valid NGFF 0.5 image, labels {image_model.labels.label_paths}")

    # 4. one OME-TIFF of the same image: the store's levels, the cell's size in µm
    tiff = write_ome_tiff(maps, args.out.removesuffix(".zarr") + ".tif",
                          labels={"truth": labels}, pixel_size=args.pixel_size,
                          coarsest=args.coarsest, overwrite=True)  # fmt: skip
    with tifffile.TiffFile(tiff) as tif:
        levels = [level.asarray() for level in tif.series[0].levels]
        same = all(np.array_equal(level, root[d["path"]][...], equal_nan=True)
                   for level, d in zip(levels, multiscale["datasets"], strict=True))  # fmt: skip
        results["tiff_levels_equal"] = float(same and len(levels) == len(shapes))
        size = tif.ome_metadata.split('PhysicalSizeX="')[1].split('"')[0]  # the OME-XML's
        results["tiff_pixel_um"] = float(size)
        print(f"{tiff}: series {[s.name for s in tif.series]}, {len(levels)} levels equal to the "
              f"store's: {same}, pixels of {results['tiff_pixel_um']:g} µm")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
