"""``xfskde coefficients INPUT OUTPUT.zarr``: a local FS-KDE field of any image, to Zarr."""

from __future__ import annotations

import argparse
import time

from ..api import local_fskde
from ..exceptions import ImageReadError, ParameterError
from ..io import locate, open_image, write_coefficients
from ..io.stores import block_record
from ..lazy import DEFAULT_CHUNK
from ..local import LocalParameters
from ._options import (
    add_fskde_options,
    add_level_options,
    add_nodata_option,
    add_scheduler_option,
    check_scheduler,
    fskde_kwargs,
    progress_on_stderr,
    refuse_existing,
    writing,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "coefficients",
        help="compute local FS-KDE coefficients of an image and write them to Zarr",
        description="Compute the local FS-KDE of an image (TIFF/OME-TIFF/SVS, Zarr, PNG, ...) "
        "block by block and write the (y, x, k) coefficients to a Zarr v3 store. An interrupted "
        "or failed run continues with --resume (only the missing blocks are computed).",
    )
    parser.add_argument(
        "input", help="image file or Zarr store: a path or URL (s3://, gs://, http://)"
    )
    parser.add_argument("output", help="output Zarr store: a path or URL (s3://, gs://)")
    add_fskde_options(parser)
    add_nodata_option(
        parser,
        "missing pixels are omitted: every gradient that touches one has zero weight",
    )
    add_level_options(parser)
    parser.add_argument(
        "--chunks", type=int, default=DEFAULT_CHUNK,
        help="target block side in pixels, rounded to the file's tiles and the stride",
    )  # fmt: skip
    add_scheduler_option(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="finish an interrupted write")
    mode.add_argument("--overwrite", action="store_true", help="replace an existing store")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dask

    if args.chunks < 1:
        raise ParameterError(f"--chunks must be a positive number of pixels, got {args.chunks}")
    if args.workers is not None and args.workers < 1:
        raise ParameterError(f"--workers must be at least 1, got {args.workers}")
    params = LocalParameters(**fskde_kwargs(args))  # checked before the image is opened
    refuse_existing(args)
    check_scheduler(args)  # a misspelt name or a dead address fails now, not after the layout
    # the one chunk planner: the file's tiles, the target, the window's halo and the stride
    image = open_image(
        args.input,
        level=args.level,
        mpp=args.mpp,
        chunks=args.chunks,
        halo=params.depth,
        stride=params.stride,
    )
    # nodata is no LocalParameters field: local_fskde resolves it ("auto": the image's
    # _FillValue) and records it in the field's attrs, which a resume compares
    field = local_fskde(image, **fskde_kwargs(args), nodata=args.nodata)
    start = time.perf_counter()
    config = {"num_workers": args.workers} if args.workers else {}
    with writing(args.output, args.input), dask.config.set(config), progress_on_stderr():
        written = write_coefficients(
            field,
            args.output,
            resume=args.resume,
            overwrite=args.overwrite,
            scheduler=args.scheduler,
            progress=not args.no_progress,
        )
    seconds = time.perf_counter() - start
    record = block_record(args.output)
    if record.size and (record == 2).all():
        # every coefficient is zero: a constant image, one of a pixel, or all missing (NaN
        # under --nan-policy omit, or --nodata); a store of zeros would pass for a result, so
        # it is not kept
        locate(args.output).remove()
        height, width = image.sizes["y"], image.sizes["x"]
        raise ImageReadError(
            f"{args.input} has no gradient anywhere (its {height} x {width} pixels are all "
            "equal, or all NaN under --nan-policy omit, or all nodata): every coefficient is "
            f"zero, so {args.output} was not kept"
        )
    total = record.size
    pixels = image.sizes["y"] * image.sizes["x"]
    chunks = tuple(max(c) for c in field.chunks[:2]) if field.chunks else field.shape[:2]
    print(
        f"wrote {args.output}: {tuple(field.shape)} {field.dtype}, chunks {chunks}, "
        f"{written} of {total} blocks computed in {seconds:.1f} s "
        f"({pixels / 1e6 / max(seconds, 1e-9):.1f} Mpx/s)"
    )
    return 0
