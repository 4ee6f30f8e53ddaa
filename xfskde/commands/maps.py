"""``xfskde maps INPUT OUTPUT.ome.zarr``: orientation, coherence and energy of an image, as an
OME-Zarr pyramid that napari, OMERO, QuPath and other NGFF viewers open.

The local FS-KDE field of the image (the same options as ``xfskde coefficients``) is reduced,
block by block and never whole, to three maps (:mod:`xfskde.orientation`): the axial
orientation of the structures in [0, π) radians, their coherence in [0, 1] and the energy (the
local mean gradient magnitude). They are written by :func:`xfskde.io.write_ome_zarr` as the
channels of one float32 ``(c, y, x)`` image: level 0 block by block with a completion record,
then a pyramid to about 512 pixels; ``--resume`` computes only the missing blocks of level 0
(and those found damaged: ``--verify`` reads every block back first).
"""

from __future__ import annotations

import argparse
import time

import dask
import numpy as np
import xarray as xr

from .._scheduling import compute
from ..exceptions import ParameterError
from ..io import open_image, write_ome_tiff, write_ome_zarr
from ..io.png import check_png_size
from ..io.stores import block_record
from ..orientation import coherence, energy, orientation
from ..plot import axial_rgb
from ._options import (
    add_field_options,
    complete_note,
    field_from_input,
    is_geotiff,
    is_ome_tiff,
    is_png,
    progress_on_stderr,
    refuse_no_gradient,
    refuse_ome_zarr_grid,
    scheduler,
    store_complete,
    store_state,
    warn_if_large,
    write_picture_output,
    write_tiff_output,
    writing,
)

#: The maps written, in channel order.
MAPS = ("orientation", "coherence", "energy")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "maps",
        help="write orientation, coherence and energy maps of an image as an OME-Zarr pyramid",
        description="Compute the local FS-KDE of an image (the options of xfskde coefficients) "
        "block by block, never whole, and reduce it to three maps: the axial orientation of "
        "its structures in [0, π) radians, their coherence in [0, 1] and the energy (the local "
        "mean gradient magnitude). They are written as the channels of one float32 (c, y, x) "
        "OME-Zarr image, which napari, OMERO, QuPath and other NGFF viewers open: level 0 "
        "block by block with a completion record, then a pyramid to about 512 pixels. An "
        "interrupted or failed run continues with --resume (only the missing blocks of level 0 "
        "are computed; with --verify, the blocks already written are read back first and the "
        "damaged computed again). An output named *.ome.tif, *.tif or *.png is written as one "
        "OME-TIFF, a GeoTIFF or a picture instead.",
    )
    add_field_options(
        parser,
        output="output OME-Zarr image (or a PNG picture of the orientation and coherence, a "
        "name ending in .png)",
        tiff="the three maps (float32 bands, NaN nodata)",
    )
    parser.set_defaults(func=run, png_output=True)


def run(args: argparse.Namespace) -> int:
    if args.order == 1:  # the field's F_0 and F_1 only (the library's refusal names order=)
        raise ParameterError(
            "--order 1 gives F_0 and F_1 only, and orientation and coherence need F_2: give "
            "--order 2 or more"
        )
    image, field, _ = field_from_input(args)  # NaN outside --mask and on missing pixels
    refuse_ome_zarr_grid(image, args, always=True)
    ny, nx = field.sizes["y"], field.sizes["x"]
    warn_if_large(args, len(MAPS) * ny * nx * 4 * 4 / 3, "image")  # float32, and its pyramid
    maps = {"orientation": orientation(field), "coherence": coherence(field),
            "energy": energy(field)}  # fmt: skip
    start = time.perf_counter()
    config = {"num_workers": args.workers} if args.workers else {}
    if is_ome_tiff(args.output):  # the OME-Zarr image, as one pyramidal file
        with writing(args.output, args.input), dask.config.set(config), progress_on_stderr():
            write_ome_tiff(maps, args.output, overwrite=args.overwrite, scheduler=args.scheduler,
                           progress=not args.no_progress)  # fmt: skip
        if not _holds_a_value(args.output):
            refuse_no_gradient(args, image, "map")
        seconds = time.perf_counter() - start
        print(f"wrote {args.output}: {', '.join(MAPS)} of {ny} x {nx} cells as an OME-TIFF "
              f"pyramid, in {seconds:.1f} s")  # fmt: skip
        return 0
    if is_png(args.output):  # the picture the library draws of the maps
        remedy = "give a --stride, or name the output *.ome.zarr, *.ome.tif or *.tif"
        check_png_size((ny, nx), f"{args.output}: the maps' cells", remedy)
        with writing(args.output, args.input), dask.config.set(config), scheduler(args), \
                progress_on_stderr():  # fmt: skip
            omega, strength = compute([maps["orientation"], maps["coherence"]])
            if not _valued(strength.values):
                refuse_no_gradient(args, image, "map")
            picture = axial_rgb(omega.values, strength.values)  # hue ω over [0, π), value C
            write_picture_output(picture, dict(maps["orientation"].attrs), args)
        seconds = time.perf_counter() - start
        print(f"wrote {args.output}: orientation (hue) and coherence (brightness) of {ny} x "
              f"{nx} cells as a picture, in {seconds:.1f} s")  # fmt: skip
        return 0
    if is_geotiff(args.output):  # one band per map
        bands = xr.Dataset(maps)  # one band per map, each named and with its unit
        with writing(args.output, args.input), dask.config.set(config), scheduler(args), \
                progress_on_stderr():  # fmt: skip
            write_tiff_output(bands, args)
        if not _holds_a_value(args.output):
            refuse_no_gradient(args, image, "map")
        seconds = time.perf_counter() - start
        print(
            f"wrote {args.output}: {', '.join(MAPS)} of {ny} x {nx} cells as bands 1-3, in "
            f"{seconds:.1f} s"
        )
        return 0
    complete = args.resume and store_complete(args.output)
    before = store_state(args.output) if complete else None
    with writing(args.output, args.input), dask.config.set(config), progress_on_stderr():
        group = write_ome_zarr(
            maps,
            args.output,
            resume=args.resume,
            overwrite=args.overwrite,
            scheduler=args.scheduler,
            progress=not args.no_progress,
            verify=args.verify,
        )
    if (block_record(args.output) == 2).all():  # no value but 0 and NaN in any block
        refuse_no_gradient(args, image, "map")
    seconds = time.perf_counter() - start
    multiscale = group.attrs["ome"]["multiscales"][0]
    unit = next((a.get("unit") for a in multiscale["axes"] if a["name"] == "x"), None)
    sy, sx = multiscale["datasets"][0]["coordinateTransformations"][0]["scale"][-2:]
    side = f"{sx:g}" if sy == sx else f"{sy:g} x {sx:g}"  # pixels not square: y by x
    cell = f"{side} {unit}" if unit else f"{side} input pixels"
    if sy != sx:
        cell += " (y by x)"
    pixels = image.sizes["y"] * image.sizes["x"]
    levels = len(multiscale["datasets"])
    if complete and store_state(args.output) == before:  # left as it was: found whole
        blocks = block_record(args.output).size
        print(f"{args.output} is complete already: nothing computed ({', '.join(MAPS)} of {ny} "
              f"x {nx} cells, {levels} level{'s' if levels != 1 else ''}, {blocks} blocks; "
              f"{complete_note(args.verify, args.output)})")  # fmt: skip
        return 0
    print(
        f"wrote {args.output}: {', '.join(MAPS)} of {ny} x {nx} cells of {cell}, "
        f"{levels} level{'s' if levels != 1 else ''}, in {seconds:.1f} s "
        f"({pixels / 1e6 / max(seconds, 1e-9):.3g} Mpx/s)"
    )
    return 0


def _valued(values: np.ndarray) -> bool:
    """Whether maps hold a value other than 0 and NaN (a gradient somewhere)."""
    return bool((np.isfinite(values) & (values != 0)).any())


def _holds_a_value(output: str) -> bool:
    """Whether the maps written to the file ``output`` (a GeoTIFF, an OME-TIFF) hold a value
    other than 0 and NaN, read back block by block until one does (the first, but for a
    scene of little data)."""
    written = open_image(output)
    data = written.data
    for index in np.ndindex(*data.numblocks):
        if _valued(np.asarray(data.blocks[index])):
            return True
    return False
