"""``xfskde coefficients INPUT OUTPUT.zarr``: a local FS-KDE field of any image, to Zarr."""

from __future__ import annotations

import argparse
import time

from ..io import open_blocks, store_status, write_coefficients
from ..io.stores import block_record
from ._options import (
    add_field_options,
    complete_note,
    field_from_input,
    progress_on_stderr,
    refuse_no_gradient,
    store_complete,
    warn_if_large,
    writing,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "coefficients",
        help="compute local FS-KDE coefficients of an image and write them to Zarr",
        description="Compute the local FS-KDE of an image (TIFF/OME-TIFF/SVS, Zarr, PNG, ...) "
        "block by block and write the (y, x, k) coefficients to a Zarr v3 store. An interrupted "
        "or failed run continues with --resume (only the missing blocks are computed; with "
        "--verify, the blocks already written are read back first and the damaged computed "
        "again).",
    )
    add_field_options(parser, output="output Zarr store")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import dask

    image, field, _ = field_from_input(args)
    warn_if_large(args, field.size * field.dtype.itemsize, "store")
    start = time.perf_counter()
    complete = args.resume and store_complete(args.output)
    config = {"num_workers": args.workers} if args.workers else {}
    with writing(args.output, args.input), dask.config.set(config), progress_on_stderr():
        written = write_coefficients(
            field,
            args.output,
            resume=args.resume,
            overwrite=args.overwrite,
            scheduler=args.scheduler,
            progress=not args.no_progress,
            verify=args.verify,
        )
    seconds = time.perf_counter() - start
    record = block_record(args.output)
    if record.size and (record == 2).all():
        # no coefficient is a value but 0 or NaN: a constant image, one of a pixel, or all
        # missing (NaN under --nan-policy omit, or --nodata); such a store would pass for a
        # result, so it is not kept
        refuse_no_gradient(args, image, "coefficient")
    total = record.size
    pixels = image.sizes["y"] * image.sizes["x"]
    # the store's chunks: a resume adopts them, whatever blocks the field was planned in
    chunks = tuple(open_blocks(args.output).encoding["chunks"][:2])
    if complete and not written:
        blocks = f"{total} block" + ("s" if total != 1 else "")
        note = complete_note(args.verify, args.output)
        print(f"{args.output} is complete already: nothing computed ({tuple(field.shape)} "
              f"{field.dtype}, chunks {chunks}, {blocks}; {note})")  # fmt: skip
        return 0
    # blocks of a complete store computed again: a StoreDamagedWarning said which, and why;
    # a block with no foreground is written (filled) but not computed, as xfskde info says
    skipped = store_status(args.output)["blocks_skipped"]
    done = "written" if skipped else "computed"
    outside = f" (the store's {skipped} outside the mask filled, not computed)" if skipped else ""
    print(
        f"wrote {args.output}: {tuple(field.shape)} {field.dtype}, chunks {chunks}, "
        f"{written} of {total} blocks {done} in {seconds:.1f} s "
        f"({pixels / 1e6 / max(seconds, 1e-9):.3g} Mpx/s){outside}"
    )
    return 0
