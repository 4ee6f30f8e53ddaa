"""Command-line options shared by subcommands: the local FS-KDE parameters and the scheduler."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from .._scheduling import compute, is_address
from ..gradients import BOUNDARY_MODES, NAN_POLICIES
from ..windows import WINDOW_KINDS


def add_fskde_options(parser: argparse.ArgumentParser, *, window: str = "gaussian",
                      size: float = 4, stride: int = 1) -> None:  # fmt: skip
    """The parameters of :func:`xfskde.local_fskde`."""
    group = parser.add_argument_group("FS-KDE parameters")
    group.add_argument("--order", type=int, default=8, help="kernel order K (default 8)")
    group.add_argument("--window", choices=WINDOW_KINDS, default=window, help="window φ")
    group.add_argument(
        "--size", type=float, default=size,
        help="box side, Gaussian sigma or disk radius, in pixels",
    )  # fmt: skip
    group.add_argument("--stride", type=int, default=stride, help="sample every N-th pixel")
    group.add_argument("--eps", type=float, default=None, help="truncation threshold (eq. 7)")
    group.add_argument(
        "--boundary", choices=BOUNDARY_MODES,
        default="reflect", help="how the image is read beyond its edges",
    )  # fmt: skip
    group.add_argument(
        "--nan-policy", choices=NAN_POLICIES, default="raise",
        help="'omit' gives gradients touching NaN pixels zero weight",
    )  # fmt: skip


def fskde_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    size = int(args.size) if args.window == "box" and float(args.size).is_integer() else args.size
    return {
        "order": args.order,
        "window": args.window,
        "size": size,
        "stride": args.stride,
        "eps": args.eps,
        "boundary": args.boundary,
        "nan_policy": args.nan_policy,
    }


def add_scheduler_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler",
        default="threads",
        help="'threads' (default), 'processes', 'synchronous', or the address of a Dask "
        "distributed scheduler (e.g. tcp://10.0.0.5:8786)",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="threads or processes to use locally"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


@contextlib.contextmanager
def scheduler(args: argparse.Namespace) -> Iterator[Any]:
    """Make the chosen scheduler current for the block; yields ``run(collections) -> results``.

    Everything computed inside, not only ``run``, uses it (a cluster address is connected to
    once, for the whole block).
    """
    import dask

    progress = not args.no_progress
    if is_address(args.scheduler):
        from distributed import Client

        with Client(args.scheduler) as client:
            yield lambda collections: compute(collections, client, progress)
        return
    config = {"scheduler": args.scheduler}
    if args.workers:
        config["num_workers"] = args.workers
    with dask.config.set(config):
        yield lambda collections: compute(collections, None, progress)
