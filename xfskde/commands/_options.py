"""Command-line options shared by subcommands: the local FS-KDE parameters and the scheduler;
and what a command that writes a store says when it fails or is interrupted."""

from __future__ import annotations

import argparse
import contextlib
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._scheduling import check_address, connect, is_address
from ..exceptions import (
    ImageReadError,
    StoreExistsError,
    StoreFormatError,
    StoreParametersError,
    XfskdeError,
)
from ..gradients import BOUNDARY_MODES, NAN_POLICIES
from ..io import store_status
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


def check_scheduler(args: argparse.Namespace) -> None:
    """Refuse a misspelt scheduler or an address nobody answers on, before any work is done."""
    if is_address(args.scheduler):
        check_address(args.scheduler)


@contextlib.contextmanager
def scheduler(args: argparse.Namespace) -> Iterator[None]:
    """Make the chosen scheduler current for the block: everything computed inside uses it (a
    cluster address is connected to once, for the whole block)."""
    import dask

    if is_address(args.scheduler):
        with connect(args.scheduler):
            yield
        return
    config = {"scheduler": args.scheduler}
    if args.workers:
        config["num_workers"] = args.workers
    with dask.config.set(config):
        yield


def output_exists(output: str) -> bool:
    """Whether something is at ``output`` (an empty directory counts as nothing)."""
    path = Path(os.fspath(output))
    return path.exists() and not (path.is_dir() and not any(path.iterdir()))


# ------------------------------------------------------------------------- failing and stopping

#: Modules whose frames, nearest the error, say it was raised reading the input image.
_INPUT_MODULES = ("xfskde.io._tiff", "xfskde.io.images")
#: Libraries that read image files and stores (met before any xfskde frame: reading the input).
_READERS = ("tifffile", "imagecodecs", "zarr", "numcodecs", "PIL", "imageio", "skimage.io")
#: The module that writes the output store's blocks.
_OUTPUT_MODULES = ("xfskde.io.stores",)


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def origin(exc: BaseException) -> str | None:
    """Where an error raised while computing came from: ``"input"`` (reading the image),
    ``"output"`` (writing the store) or None (the computation itself).

    Told from the modules of the traceback's frames, nearest the error first — the Dask task
    that raised it (locally, or on a cluster, whose tracebacks come back with the error): the
    first xfskde module decides; a file reader met before any xfskde module (Dask reading a
    Zarr input) means the input.
    """
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    reader = False
    for frame in reversed(frames):
        module = str(frame.f_globals.get("__name__", ""))
        if _in(module, _OUTPUT_MODULES):
            return "output"
        if _in(module, _INPUT_MODULES):
            return "input"
        if _in(module, ("xfskde",)):
            return "input" if reader else None
        reader = reader or _in(module, _READERS)
    return "input" if reader else None


def _left(output: str, interrupted: bool) -> str | None:
    """What a failed or interrupted write left at ``output``, and how to go on from there."""
    if not output_exists(output):
        return f"nothing was written to {output}" if interrupted else None
    try:
        status = store_status(output)
    except (OSError, ValueError, KeyError, XfskdeError):
        return None
    if status["complete"]:
        return f"{output} is complete"
    done, total = status["blocks_done"], status["blocks_total"]
    then = "run the same command with --resume to finish it" if interrupted else (
        "fix the cause, then run the same command with --resume to finish it (or "
        "--overwrite to start again)"
    )  # fmt: skip
    return f"{output} keeps {done} of {total} blocks: {then}"


@contextlib.contextmanager
def writing(output: str, source: str | None = None) -> Iterator[None]:
    """Around the part of a command that reads ``source`` and writes the store ``output``.

    An interrupt (Ctrl-C, SIGTERM) or a failure gets a note of what was left at ``output``
    and how to finish it (``--resume``). TIFF tiles that cannot be read raise an
    :class:`~xfskde.exceptions.ImageReadError` naming the file in the reading task itself
    (:func:`xfskde.io._tiff.read_tiff_block`); a Zarr input is read by Dask's own tasks, so an
    error of zarr or its codecs there is recognised by :func:`origin` and becomes the same
    ImageReadError; an :class:`OSError` raised writing the store (a full disk) names the store.
    """
    try:
        yield
    except KeyboardInterrupt as exc:
        note = _left(output, interrupted=True)
        if note:
            exc.add_note(note)
        raise
    except (StoreExistsError, StoreParametersError, StoreFormatError):
        raise  # refused before anything was written: the message says what to do
    except XfskdeError as exc:
        note = _left(output, interrupted=False)
        if note:
            exc.add_note(note)
        raise
    except Exception as exc:
        side = origin(exc)
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        error: Exception = exc
        if side == "input" and source is not None:
            error = ImageReadError(f"cannot read {source} ({detail}): the file is damaged, "
                                   "truncated or in a codec that cannot be decoded")  # fmt: skip
        elif side == "output" and isinstance(exc, OSError):
            reason = exc.strerror or detail
            error = OSError(exc.errno, f"cannot write {output}: {reason}")
        note = _left(output, interrupted=False)
        if note:
            error.add_note(note)
        if error is exc:
            raise
        raise error from exc
