"""``xfskde segment INPUT OUTPUT.zarr --textures N``: texture labels of an image of any size."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ..exceptions import ParameterError, StoreExistsError
from ..io import open_image, store_status, write_blocks
from ..segmentation import FEATURE_GROUPS, FeatureSpec, fit_textures
from ..segmentation.features import feature_depth
from ..segmentation.model import FEATURE_CHUNK
from ..windows import WINDOW_KINDS
from ._options import add_scheduler_option, check_scheduler, output_exists, scheduler, writing


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "segment",
        help="segment an image into textures (ORTSEG with FS-KDE features) and write to Zarr",
        description="Fit the pure texture features once on a sample of pixels, then unmix every "
        "block (local colour histograms and cos^2K FS-KDEs of gradients through one window) and "
        "write the (y, x) uint8 labels to a Zarr v3 store.",
    )
    parser.add_argument("input", help="image file (TIFF/OME-TIFF/SVS, PNG, NPY) or Zarr store")
    parser.add_argument("output", help="output Zarr store (directory)")
    parser.add_argument("--textures", type=int, required=True, help="number of textures")
    parser.add_argument(
        "--features", default="color,fskde",
        help=f"comma-separated groups among {', '.join(FEATURE_GROUPS)} (default color,fskde)",
    )  # fmt: skip
    parser.add_argument("--window", choices=WINDOW_KINDS, default="gaussian")
    parser.add_argument("--size", type=float, default=6.0, help="window size in pixels (6)")
    parser.add_argument("--color-bins", type=int, default=16, help="bins per colour channel")
    parser.add_argument("--angle-bins", type=int, default=16, help="gradient histogram bins")
    parser.add_argument("--coefficients", type=int, default=8, help="complex FS-KDE coefficients")
    parser.add_argument("--sample", type=int, default=20000, help="pixels to fit the textures")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample and the fit")
    parser.add_argument("--level", type=int, default=0, help="pyramid level of the input")
    parser.add_argument(
        "--chunks", type=int, default=FEATURE_CHUNK,
        help=f"target block side in pixels (default {FEATURE_CHUNK})",
    )  # fmt: skip
    parser.add_argument("--overwrite", action="store_true", help="replace an existing store")
    parser.add_argument(
        "--resume", action="store_true",
        help="finish an interrupted run: only blocks without a completion record are computed",
    )  # fmt: skip
    add_scheduler_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.chunks < 1:
        raise ParameterError(f"--chunks must be a positive number of pixels, got {args.chunks}")
    out = Path(os.fspath(args.output))
    if output_exists(out) and not (args.overwrite or args.resume):
        raise StoreExistsError(
            f"{out} exists; pass --resume to finish an interrupted run or --overwrite to replace it"
        )
    options = {
        "features": tuple(f.strip() for f in args.features.split(",") if f.strip()),
        "window": args.window,
        "size": int(args.size) if args.window == "box" else args.size,
        "color_bins": args.color_bins,
        "angle_bins": args.angle_bins,
        "n_coefficients": args.coefficients,
        "sample": args.sample,
        "seed": args.seed,
    }
    spec_keys = ("features", "window", "size", "color_bins", "angle_bins")
    spec = FeatureSpec(
        **{k: options[k] for k in spec_keys}, n_coefficients=options["n_coefficients"]
    )
    check_scheduler(args)  # a misspelt name or a dead address fails now, before the fit
    # the one chunk planner: the file's tiles, the target and the features' halo
    image = open_image(args.input, level=args.level, chunks=args.chunks, halo=feature_depth(spec))
    start = time.perf_counter()
    with writing(str(out), args.input), scheduler(args):
        # the fit is seeded, so a resumed run fits the same endmembers; they are in the
        # labels' attrs, and write_blocks refuses to resume a store written with others
        model = fit_textures(image, args.textures, **options)
        labels = model.predict(image)
        written = write_blocks(
            labels, out, name="labels", resume=args.resume, overwrite=args.overwrite,
            progress=not args.no_progress,
        )  # fmt: skip
    seconds = time.perf_counter() - start
    total = store_status(out)["blocks_total"]
    print(
        f"wrote {out}: labels {tuple(labels.shape)} uint8, {args.textures} textures, "
        f"{written} of {total} blocks computed in {seconds:.1f} s"
    )
    return 0
