"""``xfskde segment INPUT OUTPUT.zarr --textures N``: texture labels of an image of any size.

Every setting left at ``auto`` is chosen from the image by :mod:`xfskde.segmentation.defaults`
and recorded in the store's attrs, with the fitted model; ``--model RESULT`` segments with the
model an earlier result records (:func:`xfskde.segmentation.read_model`) instead of fitting, so
that the slides of a cohort get the same textures under the same labels. Missing pixels (a NaN
channel, or every channel equal to the nodata value) and pixels outside ``--mask`` get the
background label 0; ``--nodata none`` segments nodata pixels as ordinary ones.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

import numpy as np
import xarray as xr

from .._palette import label_names
from .._scheduling import refuse_unshared_folder
from ..exceptions import ParameterError, StoreFormatError, XfskdeError
from ..io import (
    finalize_store,
    locate,
    open_blocks,
    open_image,
    store_status,
    write_blocks,
    write_ome_zarr,
    write_ome_zarr_labels,
)
from ..io.geojson import refuse_gcp_regions
from ..io.images import image_levels, nearest_reading, pixel_size_text, reading_text
from ..io.ometiff import copy_ome_zarr_to_tiff, temporary_ome_zarr
from ..io.png import check_png_size
from ..io.stores import forget_damaged_blocks, input_changed, refuse_other_input_files
from ..lazy import plan_chunks
from ..masks import resolve_mask
from ..segmentation import FEATURE_GROUPS, fit_textures
from ..segmentation.defaults import FINE_SIZE, MASK_MARGIN, auto_features
from ..segmentation.features import vote_reach
from ..segmentation.model import (
    BACKGROUND,
    COLOR_RANGES,
    FEATURE_CHUNK,
    FIT_METHODS,
    LARGE_FEATURE_CHUNK,
    LARGE_IMAGE_BLOCKS,
    METRICS,
    PIXEL_RATIO,
    feature_chunk,
)
from ..segmentation.saved import read_model, same_fit
from ..windows import WINDOW_KINDS, Window
from ._options import (
    add_level_options,
    add_mask_option,
    add_nodata_option,
    add_scheduler_option,
    add_verify_option,
    auto_or,
    byte_size,
    check_scheduler,
    complete_note,
    is_file_output,
    is_geojson,
    is_geotiff,
    is_ome_tiff,
    is_ome_zarr,
    is_png,
    is_vector,
    location_option,
    mask_argument,
    output_exists,
    progress_on_stderr,
    refuse_existing,
    refuse_ome_zarr_grid,
    scheduler,
    store_complete,
    store_state,
    warn_if_large,
    write_geojson_output,
    write_png_output,
    write_tiff_output,
    write_vector_output,
    writing,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "segment",
        help="segment an image into textures (ORTSEG with FS-KDE features): labels to Zarr, "
        "OME-Zarr or GeoTIFF",
        description="Fit the pure texture features once on a sample of pixels, then unmix every "
        "block (local histograms of colour and filter responses and cos^2K FS-KDEs of gradients "
        "through one window) and write the (y, x) uint8 labels to a Zarr v3 store (or an "
        "OME-Zarr image, or a GeoTIFF, by the output's name). Settings left at auto are chosen "
        "from the image and recorded with the labels.",
    )
    parser.add_argument(
        "input",
        type=location_option("the input image's path or URL"),
        help="image file (TIFF/OME-TIFF/SVS/GeoTIFF, PNG, NPY; JPEG 2000 or VRT with the "
        "geo extra) or Zarr store: a path or URL",
    )
    parser.add_argument(
        "output",
        type=location_option("the output's path or URL"),
        help="output Zarr store of the labels, or an OME-Zarr image (a name ending in .ome.zarr) "
        "of the abundances with the labels as its label image: a path or URL (s3://, gs://); "
        "or a GeoTIFF of the labels (a name ending in .tif: CRS and grid kept, the background "
        "label 0 its nodata; needs rioxarray), or an indexed PNG of the labels (.png: each "
        "pixel's value its label, in the library's colours), or their regions as GeoJSON "
        "(.geojson: a MultiPolygon per texture, in level-0 pixels for QuPath's Import "
        "objects, or in a scene's CRS)",
    )
    parser.set_defaults(tiff_output=True, png_output=True, geojson_output=True)
    parser.add_argument(
        "--abundances", action="store_true",
        help="write each texture's abundance (its share of the pixel's window, in [0, 1], "
        "summing to 1; NaN outside the mask) instead of the labels: a GeoTIFF's float32 bands "
        "('texture 1' ..), a Zarr store's (y, x, texture) array; an OME-Zarr or OME-TIFF "
        "output holds both anyway",
    )  # fmt: skip
    parser.add_argument(
        "--textures", type=int, default=None,
        help="number of textures (required unless --model gives them)",
    )  # fmt: skip
    parser.add_argument(
        "--model", default=None, metavar="RESULT",
        type=location_option("the path or URL of an earlier result of xfskde segment"),
        help="segment with the model recorded in an earlier result of xfskde segment (its Zarr "
        "store, OME-Zarr, OME-TIFF or GeoTIFF: a path or URL) instead of fitting one: the same "
        "textures under the same labels; the fit's options are then the model's",
    )  # fmt: skip
    parser.add_argument(
        "--match-levels", nargs="?", const=True, default=False, choices=["channels"],
        help="with --model: map the image's black and white levels (0.1th and 99.9th "
        "percentiles) onto those of the model's image first, for slides or scenes of another "
        "exposure, stain intensity or bit depth (not for images lacking the darkest or "
        "brightest texture); '--match-levels channels' each channel's onto the same channel's, "
        "for fluorescence, whose channels each have their own exposure",
    )  # fmt: skip
    parser.add_argument(
        "--features", default="auto",
        help=f"auto, or comma-separated groups among {', '.join(FEATURE_GROUPS)} "
        "(color,fskde: the paper's ORTSEG-FS-KDE)",
    )  # fmt: skip
    parser.add_argument(
        "--window", choices=WINDOW_KINDS, default="gaussian",
        help="window of the local histograms and FS-KDEs",
    )  # fmt: skip
    parser.add_argument(
        "--size", type=auto_or(float), default="auto",
        help="box side, Gaussian sigma or disk radius of the window, in pixels; auto: from the "
        "texture's scale, the labels drawn through 0.7 of it when it is wider than sigma 6",
    )  # fmt: skip
    parser.add_argument(
        "--stride", type=auto_or(int), default="auto",
        help="solve the abundances every STRIDE pixels and interpolate (1: every pixel); auto: "
        "the window's sigma / 4",
    )  # fmt: skip
    parser.add_argument(
        "--method", choices=FIT_METHODS, default="auto",
        help="how the pure textures are fitted (auto: away from boundaries for windows wider "
        "than the paper's sigma 6, k-means at 6)",
    )  # fmt: skip
    parser.add_argument(
        "--metric", choices=METRICS, default="auto",
        help="the metric the abundances are solved in: within: the textures' within-texture "
        "covariance, estimated on the fit's sample (with the endmembers, until the labels it "
        "gives the sample stop changing); euclidean: the paper's; auto: within with "
        "the fit away from boundaries, euclidean with k-means",
    )  # fmt: skip
    parser.add_argument(
        "--resolution", type=auto_or(int), default="auto",
        help="average the image over RESOLUTION x RESOLUTION pixel cells before the features "
        "(1: every pixel); auto: coarse textures (texture scale / 4, at most sigma / 8) when "
        "--size is auto, else 1",
    )  # fmt: skip
    parser.add_argument("--color-bins", type=int, default=16, help="bins per colour channel")
    parser.add_argument(
        "--color-ranges", choices=COLOR_RANGES, default="auto",
        help="what the colour bins cover: auto: [0, 1] for images that fill it, else the "
        "image's own values (12-bit data, floats in any unit); unit: [0, 1], the paper's",
    )  # fmt: skip
    parser.add_argument("--angle-bins", type=int, default=16, help="gradient histogram bins")
    parser.add_argument("--coefficients", type=int, default=8, help="complex FS-KDE coefficients")
    parser.add_argument("--sample", type=int, default=20000, help="pixels to fit the textures")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample and the fit")
    add_level_options(parser)
    add_mask_option(parser)
    add_nodata_option(
        parser,
        "missing pixels (a NaN channel, or every channel equal to the nodata value) get the "
        "background label 0, like the pixels outside --mask",
    )
    parser.add_argument(
        "--chunks", type=auto_or(int), default="auto",
        help=f"target block side in pixels; auto: {LARGE_FEATURE_CHUNK} for images of at "
        f"least {LARGE_IMAGE_BLOCKS} such blocks (8192² and larger), else {FEATURE_CHUNK}; "
        "with --resume, the blocks of the store it finishes",
    )  # fmt: skip
    mode = parser.add_mutually_exclusive_group()  # both: one of them was silently ignored
    mode.add_argument("--overwrite", action="store_true", help="replace an existing store")
    mode.add_argument(
        "--resume", action="store_true",
        help="finish an interrupted run: only blocks without a completion record are computed",
    )  # fmt: skip
    add_verify_option(parser)
    add_scheduler_option(parser)
    parser.set_defaults(func=run, defaults={n: parser.get_default(n) for n in _FIT_OPTIONS})


def run(args: argparse.Namespace) -> int:
    if args.chunks != "auto" and args.chunks < 1:
        raise ParameterError(f"--chunks must be a positive number of pixels, got {args.chunks}")
    auto_chunks = args.chunks == "auto"
    if auto_chunks:  # read in blocks of the smaller side first; larger ones once it is known
        args.chunks = FEATURE_CHUNK
    refuse_existing(args)
    if args.abundances and (is_png(args.output) or is_geojson(args.output)
                            or is_vector(args.output)):  # fmt: skip
        kind = "PNG" if is_png(args.output) else "GeoJSON" if is_geojson(args.output) else (
            "GeoPackage, shapefile or FlatGeobuf")  # fmt: skip
        raise ParameterError(
            f"{args.output}: a {kind} holds labels; name the output *.tif (a GeoTIFF of one "
            "band per texture) or *.zarr for the abundances"
        )
    model = _given_model(args)
    out = args.output
    features = tuple(f.strip() for f in args.features.split(",") if f.strip())
    size = args.size
    options = {
        "features": "auto" if features == ("auto",) else features,
        "window": args.window,
        "size": int(size) if args.window == "box" and size != "auto" else size,
        "stride": args.stride,
        "method": args.method,
        "metric": args.metric,
        "resolution": args.resolution,
        "color_bins": args.color_bins,
        "color_ranges": args.color_ranges,
        "angle_bins": args.angle_bins,
        "n_coefficients": args.coefficients,
        "sample": args.sample,
        "seed": args.seed,
    }
    check_scheduler(args)  # a misspelt name or a dead address fails now, before the fit
    # the one chunk planner: the file's tiles, the target and a halo for the paper's window and
    # the filter bank when it is used (a wider window chosen by the fit merges the chunks
    # smaller than its halo)
    if model is not None:
        features, size = model.spec.features, model.spec.size * model.resolution
    reach = vote_reach(auto_features(3) if features == ("auto",) else features)
    window = model.spec.window if model is not None else args.window
    halo = Window(window, FINE_SIZE if size == "auto" else size).halo(reach)
    image = open_image(args.input, level=args.level or 0, mpp=args.mpp, chunks=args.chunks,
                       halo=halo, plane=args.plane, series=args.series,
                       dims=args.dims, channels=args.channels)  # fmt: skip
    _refuse_too_coarse(image, args)
    if model is not None and args.level is None:
        _refuse_unreachable_scale(image, model, args)
    if model is not None and args.level is None and args.mpp is None:
        image = _at_model_scale(image, model, args, halo)
    resumed = _resumed_store(args)  # opened once: its blocks now, its model after the fit
    complete = _resuming(args) and store_complete(out)  # then nothing to do, unless damaged
    # an OME-Zarr image whose levels or labels were found damaged is written again from its
    # level 0, no block computed: its root is rewritten then, and only then
    before = store_state(out) if complete and is_ome_zarr(out) else None
    image = _in_blocks(image, resumed, args, halo, auto_chunks)
    refuse_ome_zarr_grid(image, args, always=False)
    if is_geojson(out) or is_vector(out):  # before the fit
        refuse_gcp_regions(image)
    if is_png(out):  # before the fit
        check_png_size((image.sizes["y"], image.sizes["x"]), f"{out}: the labels",
                       "name the output *.tif (a GeoTIFF), *.ome.tif or *.zarr")  # fmt: skip
    start = time.perf_counter()
    with writing(str(out), args.input), scheduler(args), progress_on_stderr():
        output = locate(out)
        if output.is_local:  # before the fit: the cluster's workers must see where they write
            refuse_unshared_folder(os.path.dirname(output.url.rstrip(os.sep)))
        # the fit is seeded, so a resumed run fits the same endmembers; they are in the
        # labels' attrs, and write_blocks refuses to resume a store written with others
        mask = resolve_mask(
            mask_argument(args), image, margin=MASK_MARGIN, classes=args.mask_classes
        )
        if resumed is not None:  # before the fit: another input or mask file is refused now
            refuse_other_input_files(out, resumed.attrs, _input_files(image, mask))
        if model is None:
            model = fit_textures(image, args.textures, **options, mask=mask, nodata=args.nodata)
            model = _as_resumed(model, resumed)
        if is_ome_zarr(out):
            written = _write_ome_zarr(model, image, mask, args)
        elif is_ome_tiff(out):  # the OME-Zarr image, written beside it, as one file
            with temporary_ome_zarr(out) as store:
                _write_ome_zarr(model, image, mask, args, store=str(store))
                copy_ome_zarr_to_tiff(store, out, overwrite=args.overwrite)
        elif args.abundances:  # one float32 band (a store's plane) per texture
            found = model.abundances(image, mask=mask, nodata=args.nodata,
                                     match_levels=args.match_levels)  # fmt: skip
            abundances = _named(found, model)
            if is_geotiff(out):  # nodata NaN; overviews the 2 x 2's mean: a share still
                write_tiff_output(abundances, args, overviews="average")
            else:
                written = write_blocks(
                    abundances, out, name="abundances", resume=args.resume,
                    overwrite=args.overwrite, progress=not args.no_progress, fill_value=np.nan,
                    verify=args.verify,
                )  # fmt: skip
        else:
            labels = model.predict(image, mask=mask, nodata=args.nodata,
                                   match_levels=args.match_levels)  # fmt: skip
            if is_geotiff(out):
                # background: no texture; overviews by each 2 x 2's most frequent label
                write_tiff_output(labels, args, nodata=BACKGROUND, overviews="mode")
            elif is_png(out):
                write_png_output(labels, args)
            elif is_geojson(out):
                write_geojson_output(labels, args)
            elif is_vector(out):
                write_vector_output(labels, args)
            else:
                written = write_blocks(
                    labels, out, name="labels", resume=args.resume, overwrite=args.overwrite,
                    progress=not args.no_progress, verify=args.verify,
                )  # fmt: skip
    seconds = time.perf_counter() - start
    shape = (image.sizes["y"], image.sizes["x"])
    what = "abundances" if args.abundances else "labels"
    if is_file_output(out):
        if is_geojson(out) or is_vector(out):
            what = "labels as regions"
        if is_ome_tiff(out):
            what = "abundances and labels as an OME-TIFF pyramid"
        print(f"wrote {out}: {what} {shape}, {model.n_textures} textures, in {seconds:.1f} s")
        return 0
    status = store_status(out)
    total, skipped = status["blocks_total"], status["blocks_skipped"]
    what = "abundances and labels" if is_ome_zarr(out) else what
    # blocks found damaged are computed again, an OME-Zarr image's levels and labels found
    # damaged written again: a warning says so, and that it was complete is not said
    if complete and not written and (before is None or store_state(out) == before):
        note = complete_note(args.verify, out)
        print(f"{out} is complete already: nothing computed ({what} {shape}, "
              f"{model.n_textures} textures, {total} block{'s' if total != 1 else ''}; "
              f"{note})")  # fmt: skip
        return 0
    # a block with no foreground is written (filled) but not computed: not counted as computed
    done = f"{written} of {total} blocks {'written' if skipped else 'computed'} in {seconds:.1f} s"
    if skipped:
        done += f" (the store's {skipped} outside the mask filled, not computed)"
    print(f"wrote {out}: {what} {shape}, {model.n_textures} textures, {done}")
    return 0


def _resuming(args: argparse.Namespace) -> bool:
    """Whether ``--resume`` finishes a store that is there (file outputs are written whole)."""
    return args.resume and not is_file_output(args.output) and output_exists(args.output)


def _input_files(image: xr.DataArray, mask: xr.DataArray | None) -> dict[str, Any]:
    """What the labels of ``image`` will record of the files they are read from, for
    :func:`xfskde.io.stores.refuse_other_input_files`: the image's ``source`` and its version,
    and a mask read from a file as its path and version (as the results record it)."""
    files = {key: image.attrs[key] for key in ("source", "source_version") if key in image.attrs}
    if mask is not None and "source_version" in mask.attrs and "source" in mask.attrs:
        files.update(mask=str(mask.attrs["source"]), mask_version=str(mask.attrs["source_version"]))
    return files


def _as_resumed(model: Any, resumed: xr.DataArray | None) -> Any:
    """The model the store that ``--resume`` finishes records (``resumed``, the store's data
    as :func:`_resumed_store` opened it: its attrs hold the model, an OME-Zarr image's level 0
    too), where ``model``, fitted again from the same options, is the same fit up to another
    machine's arithmetic (:func:`.segmentation.saved.same_fit`): a store begun on threads and
    resumed on a cluster's workers, whose BLAS took other kernels, was refused as "written
    with other parameters (endmembers; unmixing_vectors)" for differences of 1e-8. Otherwise
    ``model``, which the store's parameters then refuse, naming what differs."""
    if resumed is None:
        return model
    try:
        recorded = read_model(resumed)
    except (XfskdeError, KeyError, ValueError):  # no model there: the store refuses
        return model
    return recorded if same_fit(model, recorded) else model


#: The fit's options: with ``--model`` they are the model's, and giving one is refused.
_FIT_OPTIONS = ("features", "window", "size", "stride", "method", "metric", "resolution",
                "color_bins", "color_ranges", "angle_bins", "coefficients", "sample",
                "seed")  # fmt: skip


def _given_model(args: argparse.Namespace) -> Any:
    """The model of ``--model`` (None without it), or a refusal of ``--textures`` missing, of
    a number of textures other than the model's, or of a fit option next to it."""
    if args.model is None:
        if args.match_levels:
            raise ParameterError(
                "--match-levels maps the image's levels onto those of a model's image: give "
                "--model RESULT"
            )
        if args.textures is None:
            raise ParameterError(
                "give --textures N (the number of textures), or --model RESULT to segment with "
                "the model of an earlier result"
            )
        return None
    given = [
        "--" + name.replace("_", "-")
        for name in _FIT_OPTIONS
        if getattr(args, name) != args.defaults[name]
    ]
    if given:
        raise ParameterError(
            f"{', '.join(given)} cannot be given with --model: the fit's settings are the "
            "model's (drop them, or drop --model to fit a new model)"
        )
    model = read_model(args.model)
    if args.textures is not None and args.textures != model.n_textures:
        raise ParameterError(
            f"--textures {args.textures}, but the model of {args.model} has "
            f"{model.n_textures} textures: drop --textures"
        )
    return model


def _refuse_unreachable_scale(image: Any, model: Any, args: argparse.Namespace) -> None:
    """Refuse, in one line, an input that no level of gives pixels within ``PIXEL_RATIO`` of
    the model's, as it is or averaged over whole cells (``open_image(mpp=)``'s readings): a
    slide of 0.325 µm given a model of 0.5 µm (0.325 and 0.65 µm are both over 25 % off),
    which ``--mpp`` cannot fix, rather than the model's refusal naming an ``--mpp`` that
    reads the same pixels again. An image that records no pixel size in µm is the model's
    business."""
    if model.pixel_ratio(image) is None or "source_pixel_size_um" not in image.attrs:
        return
    wanted = math.sqrt(model.pixel_size[0] * model.pixel_size[1])
    levels = image_levels(args.input, series=args.series, dims=args.dims)
    sizes = [level.pixel_size if level.units == "µm" else None for level in levels]
    if sizes[0] is None:
        return
    nearest = nearest_reading(sizes, wanted)
    if nearest.off <= PIXEL_RATIO * (1 + 1e-9):
        return
    raise ParameterError(
        f"the model of {args.model} was fitted on pixels of {wanted:.4g} µm and takes pixels "
        f"within {PIXEL_RATIO - 1:.0%} of them, which no level of {args.input} "
        f"({', '.join(pixel_size_text(s) for s in sizes if s)}) gives, as it is or averaged "
        f"over whole f x f cells: the nearest is {pixel_size_text(nearest.size)} "
        f"({reading_text(nearest)}, {nearest.off - 1:.0%} off). Resample the image to "
        f"{wanted:.4g} µm pixels with another tool, or fit a model on images of this pixel size"
    )


def _at_model_scale(image: Any, model: Any, args: argparse.Namespace, halo: int) -> Any:
    """The input at the pixel size the model was fitted at (``open_image(mpp=)``: its nearest
    level, averaged over cells of pixels when none is near), when neither ``--level`` nor
    ``--mpp`` chose one and level 0 is more than ``PIXEL_RATIO`` away from it (a slide scanned
    at 40x given a model of 20x); said on stderr. An image that records no
    pixel size in µm (a GeoTIFF's is on the ground: its overviews are not chosen by size), or
    has no nearer level, stays as it is (the model then refuses what it must)."""
    ratio = model.pixel_ratio(image)
    if ratio is None or 1 / PIXEL_RATIO <= ratio <= PIXEL_RATIO:
        return image
    if "source_pixel_size_um" not in image.attrs:
        return image
    wanted = math.sqrt(model.pixel_size[0] * model.pixel_size[1])
    nearest = open_image(
        args.input, mpp=wanted, chunks=args.chunks, halo=halo, plane=args.plane,
        series=args.series, dims=args.dims, channels=args.channels,
    )  # fmt: skip
    read = [
        (i.attrs.get("source_level"), i.attrs.get("source_binning", 1)) for i in (nearest, image)
    ]
    if read[0] == read[1]:
        return image  # no nearer pixel size: the model refuses the image, naming the scale
    cells = read[0][1]
    how = f" averaged over {cells} x {cells} pixels" if cells > 1 else ""
    print(
        f"xfskde segment: reading level {nearest.attrs['source_level']} of {args.input}{how} "
        f"({nearest.attrs['source_pixel_size_um'][1]:.4g} µm), nearest the model's "
        f"{wanted:.4g} µm (--level or --mpp choose another)",
        file=sys.stderr,
    )
    return nearest


#: The fewest pixels on a side of an image read at ``--mpp`` that is segmented: the finest
#: window (σ 6 px) reads 49 pixels across, and a region needs several windows to be seen.
MPP_MIN_SIDE = 64


def _refuse_too_coarse(image: xr.DataArray, args: argparse.Namespace) -> None:
    """Refuse an image that ``--mpp`` shrank below :data:`MPP_MIN_SIDE` pixels on a side, naming
    the largest ``--mpp`` that keeps that many: at ``--mpp 64`` a 2048² slide of 0.25 µm was
    segmented as 8 × 8 pixels into three textures, exit 0; at ``--mpp 300``, one pixel, the
    refusal blamed the mask and the pixels present."""
    side = min(image.sizes["y"], image.sizes["x"])
    if args.mpp is None or side >= MPP_MIN_SIDE:
        return
    extent = float(args.mpp) * side  # in µm; the level read, whole, where it is known
    size, cells = image.attrs.get("source_pixel_size_um"), int(image.attrs.get("source_binning", 1))
    if size is not None and "source_level" in image.attrs:  # its partial cells were dropped
        levels = image_levels(args.input, series=args.series, dims=args.dims)
        sides = levels[int(image.attrs["source_level"])].sides
        extent = min(n * float(s) / cells for n, s in zip(sides, size, strict=True))
    largest = extent / MPP_MIN_SIDE
    raise ParameterError(
        f"at --mpp {args.mpp:g} the image is {image.sizes['y']} x {image.sizes['x']} pixels, "
        f"fewer than {MPP_MIN_SIDE} on a side to segment: ask for --mpp {largest:.3g} or less"
    )


def _in_blocks(
    image: xr.DataArray,
    resumed: xr.DataArray | None,
    args: argparse.Namespace,
    halo: int,
    auto: bool,
) -> xr.DataArray:
    """The image in the blocks it is segmented in: those of ``resumed``, the store that
    ``--resume`` finishes (with ``--chunks auto``: the store is written block by block, so a
    resume computes the store's own blocks), else :func:`_in_large_blocks` for
    ``--chunks auto``. A resume with a ``--chunks`` that gives other blocks than the store's
    is refused, naming them."""
    written = _written_blocks(resumed)
    shape = (image.sizes["y"], image.sizes["x"])
    if written is None or tuple(map(sum, written)) != shape:  # the writer refuses a new shape
        return _in_large_blocks(image, halo) if auto else image
    if auto:
        return image.chunk({"y": written[0], "x": written[1]})
    ours = (image.chunksizes["y"], image.chunksizes["x"])
    if ours != written:
        raise ParameterError(
            f"cannot resume {args.output}: it was written in blocks of {written[0][0]} x "
            f"{written[1][0]} pixels, --chunks {args.chunks} reads blocks of {ours[0][0]} x "
            f"{ours[1][0]}: resume with --chunks auto (the store's blocks)"
        )
    return image


def _resumed_store(args: argparse.Namespace) -> xr.DataArray | None:
    """The data of the store that ``--resume`` finishes, lazily, if it is one of xfskde's
    Zarr or OME-Zarr stores (its level 0), opened once for the blocks it is written in and
    the model it records; None otherwise (nothing to resume, or a store the writer refuses
    with its own message)."""
    if not _resuming(args):
        return None
    try:
        return open_blocks(args.output, allow_incomplete=True)
    except (OSError, ValueError, KeyError, XfskdeError):
        return None


def _written_blocks(resumed: xr.DataArray | None) -> tuple[tuple[int, ...], ...] | None:
    """The (row, column) chunks of the store that ``--resume`` finishes (``resumed``, as
    :func:`_resumed_store` opened it); None without one, or for one without y and x dims."""
    if resumed is None or "y" not in resumed.dims or "x" not in resumed.dims:
        return None
    chunks = dict(zip(resumed.dims, resumed.data.chunks, strict=True))
    return chunks["y"], chunks["x"]


def _in_large_blocks(image: xr.DataArray, halo: int) -> xr.DataArray:
    """The image read in blocks of :func:`.segmentation.model.feature_chunk` (those of a large
    image, each a whole number of the blocks it was read in, so of the file's tiles), when
    that is not the side it was read at (:data:`.segmentation.model.FEATURE_CHUNK`)."""
    shape = (image.sizes["y"], image.sizes["x"])
    target = feature_chunk(shape)
    if target == FEATURE_CHUNK or image.chunks is None:
        return image
    tiles = (image.chunksizes["y"][0], image.chunksizes["x"][0])
    rows, cols = plan_chunks(shape, tiles=tiles, target=target, halo=halo)
    return image.chunk({"y": rows, "x": cols})


def _named(abundances: xr.DataArray, model: Any) -> xr.DataArray:
    """Abundances whose ``texture`` coordinate names each texture as its label does
    (``texture 1`` .. ``texture n``: an OME-Zarr image's channels, a GeoTIFF's bands)."""
    return abundances.assign_coords(texture=label_names(model.n_textures)[1:])


#: The side of the tasks that label an OME-Zarr image's stored abundances.
_LABEL_CHUNK = 1024


def _largest(abundances: np.ndarray) -> np.ndarray:
    """The labels of a ``(texture, y, x)`` block of abundances: 1 + the index of the largest
    (the first of equals), :data:`BACKGROUND` where any is NaN (outside the mask or missing).
    One texture plane at a time: a block's temporaries are two planes, not five copies of
    the block that NumPy's ``argmax`` of the NaN-filled block took (0.4 GiB more at the peak
    of an 8192² slide on 2 threads)."""
    labels = np.ones(abundances.shape[1:], np.uint8)
    best = abundances[0].copy()
    missing = np.isnan(best)
    for index in range(1, abundances.shape[0]):
        plane = abundances[index]
        missing |= np.isnan(plane)
        larger = plane > best  # False where either is NaN: those are background below
        labels[larger] = index + 1
        np.copyto(best, plane, where=larger)
    labels[missing] = BACKGROUND
    return labels


def _write_ome_zarr(
    model: Any, image: Any, mask: Any, args: argparse.Namespace, store: str | None = None
) -> int:
    """The abundances as an OME-Zarr image (one channel per texture, NaN outside the mask)
    and the labels as its label image ``labels/textures``: what napari shows as channels
    under a label layer. The labels are the arg-max of the stored abundances (read back, not
    computed twice); the image says it is complete only once they are written too, so a
    resume of one cut short (in the abundances, their pyramid or the labels) finishes the
    abundances and writes the rest again. ``store``: another place than ``args.output`` (a
    temporary image for an OME-TIFF), written anew."""
    temporary = store is not None
    store = args.output if store is None else store
    resume, overwrite = args.resume and not temporary, args.overwrite or temporary
    status = store_status(store) if resume and output_exists(store) else None
    abundances = model.abundances(image, mask=mask, nodata=args.nodata,
                                  match_levels=args.match_levels)  # fmt: skip
    channels = _named(abundances, model).transpose("texture", "y", "x")
    # begun from other versions of the image or the mask: written again (write_blocks warns)
    if status is not None and input_changed(channels, store) is not None:
        status = None
    if status is not None and status["blocks_done"]:
        # blocks found lost or damaged are marked not written (with a warning) before the
        # count below, which then counts them among the blocks computed; a store of another
        # array is refused by the write, in its words
        try:
            forget_damaged_blocks(store, name="0", verify=args.verify)
        except StoreFormatError:
            pass
        else:
            status = store_status(store)
    complete = status is not None and status["complete"]
    if not complete:
        pixels = channels.sizes["y"] * channels.sizes["x"]
        warn_if_large(  # float32 abundances, and their pyramid
            args, channels.size * 4 * 4 / 3, "image",
            f"the labels alone take {byte_size(pixels)} (an output named .zarr, not "
            ".ome.zarr, or .tif)",
        )  # fmt: skip
    before = status["blocks_done"] if status is not None else 0
    # a complete image is left as it is (its labels too), once its parameters are these and
    # it is not damaged (its blocks were checked above, with --verify if given)
    write_ome_zarr(
        channels.rename("abundances"), store, resume=resume,
        name="xfskde segmentation: texture abundances", overwrite=overwrite,
        scheduler=args.scheduler, progress=not args.no_progress, finalize=False,
    )  # fmt: skip
    if complete and store_status(store)["complete"]:  # left as it was
        return 0
    # level 0, with its coordinates, in tasks of 1024² (a 2048² task held 50 MB a plane)
    stored = open_image(store, chunks=_LABEL_CHUNK)
    channel = next(d for d in stored.dims if d not in ("y", "x"))
    stored = stored.transpose(channel, "y", "x")
    best = stored.data.map_blocks(_largest, drop_axis=0, dtype=np.uint8)
    labels = xr.DataArray(best, coords={d: stored.coords[d] for d in ("y", "x")},
                          dims=("y", "x"), attrs=model.attrs())  # fmt: skip
    for name, coord in stored.coords.items():  # scalar coords (a CRS's spatial_ref) kept
        if coord.ndim == 0:
            labels = labels.assign_coords({name: coord})
    write_ome_zarr_labels(labels.rename("textures"), store, name="textures",
                          overwrite=True, scheduler=args.scheduler,
                          progress=not args.no_progress)  # fmt: skip
    finalize_store(store)  # last: complete only with its labels
    return store_status(store)["blocks_done"] - before
