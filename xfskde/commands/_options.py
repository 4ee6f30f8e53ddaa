"""Command-line options shared by subcommands: the local FS-KDE parameters, the nodata value and
the scheduler; the help formatter that shows every default; where progress bars go; and what a
command that writes a store says when it fails or is interrupted."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .._scheduling import check_address, connect, is_address
from ..api import local_fskde
from ..exceptions import (
    ImageReadError,
    ParameterError,
    StoreExistsError,
    StoreFormatError,
    StoreParametersError,
    XfskdeError,
)
from ..gradients import BOUNDARY_MODES, GRADIENT_OPERATORS, NAN_POLICIES
from ..io import locate, open_image, store_status
from ..io.geojson import WRITTEN_VECTOR_FORMATS, geopackage_layers, labels_layer
from ..io.geotiff import PAM_SIDECAR, pam_sidecar
from ..io.images import parse_plane
from ..io.omezarr import check_ome_zarr_grid
from ..io.stores import has_checksums, refuse_foreign_folder, refuse_replacing_inputs
from ..lazy import DEFAULT_CHUNK
from ..local import LocalParameters
from ..masks import METHODS as MASK_METHODS
from ..masks import resolve_mask
from ..windows import WINDOW_KINDS

# ------------------------------------------------------------------------------------- help


def _shown(value: Any, action: argparse.Action) -> str:
    """A default as it is typed on the command line: numbers without a needless ``.0``, a
    sequence comma-separated for an option that takes one word (``--lengths 4,8,16``) and
    space-separated for one that takes several."""
    if isinstance(value, list | tuple):
        words = [_shown(v, action) for v in value]
        several = action.nargs not in (None, argparse.OPTIONAL)
        return (" " if several else ",").join(words)
    if isinstance(value, float):
        return format(value, "g")
    return str(value)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, ``(default: 8)``, unless the help already
    states it so (``(default: 8)``: one style for every command, tests/test_cli_help.py);
    options whose default is None or False (a flag, or an option that is off unless given)
    say nothing, or say what they stand for in the same style (``(default: one per core)``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or "%(default)" in help_text
        ):
            return help_text
        shown = _shown(default, action)
        said = re.escape(shown)
        if re.search(rf"\(default: {said}\)", help_text):
            return help_text
        # the help is a %-format string (argparse fills in %(prog)s, ...): escape the default
        return f"{help_text} (default: {shown.replace('%', '%%')})".strip()


def use_defaults_formatter(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and all its subcommands (and theirs) :class:`DefaultsHelpFormatter`."""
    parser.formatter_class = DefaultsHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                use_defaults_formatter(sub)


# ------------------------------------------------------------------------------ the options


def nodata_option(text: str) -> str | int | float | None:
    """``--nodata``: ``"auto"``, a number (an int when it is written as one) or ``"none"``.

    Parameters
    ----------
    text : str
        The word given on the command line (any case): ``auto``, ``none``, or a finite number
        such as ``0``, ``-9999`` or ``nan`` (NaN pixels are the missing ones).

    Returns
    -------
    "auto", int, float or None
        What :func:`xfskde.local_fskde` takes as ``nodata=``.

    Raises
    ------
    argparse.ArgumentTypeError
        For any other text (argparse prints it after ``argument --nodata:``).
    """
    word = text.strip().lower()
    if word in ("auto", "none"):
        return "auto" if word == "auto" else None
    try:
        return int(word)
    except ValueError:
        pass
    try:
        value = float(word)
    except ValueError:
        value = None
    if value is None or math.isinf(value):
        raise argparse.ArgumentTypeError(
            "expected 'auto' (the input's own nodata value), a number such as 0 (pixels equal "
            f"to it are missing) or 'none' (every pixel is data), got {text!r}"
        )
    return value


def add_nodata_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--nodata auto|NUMBER|none``; ``what`` says what becomes of the missing pixels."""
    parser.add_argument(
        "--nodata",
        type=nodata_option,
        default="auto",
        metavar="auto|NUMBER|none",
        help="the value that marks missing pixels: 'auto' uses the input's own (a TIFF's "
        "GDAL_NODATA tag, as GDAL and rioxarray write it; a GDAL raster's, each band's own "
        "where they differ, as in a VRT stack; the other formats record none), a number "
        f"names it for every band, 'none' makes every pixel data; {what}",
    )


def add_fskde_options(parser: argparse.ArgumentParser, *, window: str = "gaussian",
                      size: float = 4, stride: int = 1) -> None:  # fmt: skip
    """The parameters of :func:`xfskde.local_fskde`."""
    group = parser.add_argument_group("FS-KDE parameters")
    group.add_argument("--order", type=int, default=8, help="kernel order K")
    group.add_argument("--window", choices=WINDOW_KINDS, default=window, help="window φ")
    group.add_argument(
        "--size", type=float, default=size,
        help="box side, Gaussian sigma or disk radius, in pixels",
    )  # fmt: skip
    group.add_argument("--stride", type=int, default=stride, help="sample every N-th pixel")
    group.add_argument(
        "--eps", type=float, default=None,
        help="truncation threshold ε (eq. 8) (default: none, all K + 1 coefficients kept)",
    )  # fmt: skip
    group.add_argument(
        "--boundary", choices=BOUNDARY_MODES,
        default="reflect", help="how the image is read beyond its edges",
    )  # fmt: skip
    group.add_argument(
        "--nan-policy", choices=NAN_POLICIES, default=None,
        help="'omit' gives gradients touching NaN pixels zero weight; 'raise' refuses them "
        "(default: raise, but omit for an input with a nodata value, whose nodata pixels are "
        "NaN once read)",
    )  # fmt: skip
    group.add_argument(
        "--gradient", choices=GRADIENT_OPERATORS, default="central",
        help="the gradient operator: central differences (the paper's), Scharr, or Gaussian "
        "derivatives (the most isotropic: orientation errors of 0.001° where central "
        "differences give 1.5°, at 1.5x the time; their σ is the gradient scale)",
    )  # fmt: skip
    group.add_argument(
        "--gradient-scale", type=float, default=None,
        help="σ of the Gaussian derivatives, in pixels; --gradient gaussian only (default: 1)",
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
        **({} if args.nan_policy is None else {"nan_policy": args.nan_policy}),
        "gradient": args.gradient,
        **({} if args.gradient_scale is None else {"gradient_scale": args.gradient_scale}),
    }


def add_scheduler_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler",
        default="threads",
        help="'threads', 'processes', 'synchronous', or the address of a Dask distributed "
        "scheduler (e.g. tcp://10.0.0.5:8786)",
    )
    parser.add_argument(
        "--workers", type=workers_option, default=None,
        help="threads or processes to use locally (default: one per core)",
    )  # fmt: skip
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar (shown on stderr)"
    )


@contextlib.contextmanager
def progress_on_stderr() -> Iterator[None]:
    """Send what is printed to stdout inside the block to stderr.

    Dask's ``ProgressBar`` writes to the ``sys.stdout`` of the moment it is made, and
    distributed's text progress bar to ``sys.stdout`` as it draws; the block that computes is
    where both are made and drawn, so that stdout holds only a command's results (``xfskde
    coefficients ... > log`` keeps its summary line, and nothing of the bar).
    """
    with contextlib.redirect_stdout(sys.stderr):
        yield


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


def plane_option(text: str) -> dict[str, int]:
    """``--plane z=12,t=0``: the index kept along each named axis (``open_image``'s ``plane``)."""
    try:
        return parse_plane(text)
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dims_option(text: str) -> tuple[str, ...]:
    """``--dims c,y,x``: the names of an unlabelled input's axes (``open_image``'s ``dims``)."""
    names = tuple(name.strip() for name in text.split(","))
    if not all(names) or len(set(names)) != len(names) or not {"y", "x"} <= set(names):
        raise argparse.ArgumentTypeError(
            f"expected the input's axis names in order, each once, y and x among them (c,y,x "
            f"or z,y,x), got {text!r}"
        )
    return names


def add_dims_option(parser: argparse.ArgumentParser) -> None:
    """``--dims c,y,x``: the names of the axes of an input that records none."""
    parser.add_argument(
        "--dims", type=dims_option, default=None, metavar="AXIS,AXIS,...",
        help="the names of the axes of an input that records none (an NPY file, a Zarr array "
        "without dimension names), in order: c,y,x for planar colour, z,y,x for a stack; needed "
        "where its shape cannot tell (a first axis of 2 to 4)",
    )  # fmt: skip


def _comma_names(text: str, expected: str) -> list[str]:
    """Comma-separated names, each stripped; refused (``expected``, what to give) if one is
    empty."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return names


def channels_option(text: str) -> list[str]:
    """``--channels DAPI,CD3`` or ``--channels 0,2``: the channels to read, in order
    (``open_image``'s ``channels``: names, or indices where no channel is so named)."""
    return _comma_names(text, "channel names or indices separated by commas (DAPI,CD3 or 0,2)")


def classes_option(text: str) -> list[str]:
    """``--mask-classes Tumor,Stroma``: the classes of the regions a mask draws, or of the
    pixels of a label image (``--mask-classes 40``)."""
    return _comma_names(text, "class names separated by commas (Tumor or Tumor,Stroma)")


def series_option(text: str) -> int | str:
    """``--series 1`` (an index) or ``--series labels/textures`` (an image's name); an empty
    one is refused (it read series 0, as if no --series were given)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected an image's index (0, 1, ...) or name, as 'xfskde info' lists them, got "
            f"{text!r}"
        )
    try:
        return int(text)
    except ValueError:
        return text


def workers_option(text: str) -> int:
    """``--workers N``: a whole number of threads, processes or chunk reads, at least 1 (0
    was taken for the default, a negative number failed inside the thread pool)."""
    try:
        workers = int(text)
    except ValueError:
        workers = 0
    if workers < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number, at least 1, got {text!r}")
    return workers


def location_option(what: str) -> Callable[[str], str]:
    """An argparse type: a path or URL, ``what`` the option takes (said when refused); an
    empty one is refused (it was taken for the current folder)."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return text

    parse.__name__ = "path or URL"
    return parse


def add_level_options(parser: argparse.ArgumentParser) -> None:
    """``--level N`` or ``--mpp MICRONS``: which pyramid level of the input is read;
    ``--plane z=N,...``: which plane of a z-stack, time series, ... (every axis beyond y, x
    and colour of more than one plane); ``--series N|NAME``: which image of a TIFF;
    ``--channels NAME,...``: which of its channels; ``--dims c,y,x``: the axes of an input
    that records none."""
    parser.add_argument(
        "--plane", type=plane_option, default=None, metavar="AXIS=N[,AXIS=N]",
        help="the plane of an input with axes beyond y, x and colour: a z-stack's z=12, a time "
        "series' t=0 (negative counts from the end); required for each such axis",
    )  # fmt: skip
    parser.add_argument(
        "--series", type=series_option, default=0, metavar="N|NAME",
        help="the image of a file that holds several (a multi-scene OME-TIFF, an OME-Zarr of "
        "bioformats2raw, the labels of an OME-TIFF xfskde wrote: 'labels/textures'): its index "
        "or name; 'xfskde info' lists them",
    )  # fmt: skip
    parser.add_argument(
        "--channels", type=channels_option, default=None, metavar="NAME,NAME|N,N",
        help="the channels of the input to read, in this order: by name where it names them "
        "(OME-TIFF and OME-Zarr channel names, a GeoTIFF's band descriptions: DAPI,CD3 or "
        "B04,B03,B02; 'xfskde info' lists them) or by index (0,2) (default: all)",
    )  # fmt: skip
    add_dims_option(parser)
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--level", type=int, default=None, help="pyramid level of the input (default: 0)"
    )
    group.add_argument(
        "--mpp", type=float, default=None,
        help="instead of --level: the pixel size wanted, in µm; the nearest a level gives, as "
        "it is or averaged over cells of f x f pixels (f whole), is read, and refused when "
        "over 25%% off (non-square pixels: the geometric mean of their sizes; the input must "
        "record its pixel size: OME-TIFF, SVS, OME-Zarr, ...)",
    )  # fmt: skip


def add_mask_option(parser: argparse.ArgumentParser) -> None:
    """``--mask auto|none|METHOD|PATH`` and ``--mask-classes``: the foreground to compute
    (:func:`xfskde.masks.resolve_mask`)."""
    parser.add_argument(
        "--mask", default="none", metavar="auto|none|fluorescence|brightfield|PATH",
        type=location_option("auto, none, fluorescence, brightfield or a mask's path or URL"),
        help="the foreground to compute: 'auto' finds the tissue on a slide's glass (8-bit "
        "RGB without a CRS) or else the data (non-zero, not nodata) on a low-resolution level; "
        "'fluorescence' the signal on a dark background (any channels and bits), "
        "'brightfield' the tissue on glass whatever the bits; PATH is a mask image at any "
        "resolution (non-zero: foreground, NaN never; a palette PNG by its indices, not its "
        "colours; a segment result, .ome.tif or .ome.zarr, by its labels) or "
        "a GeoJSON of regions (QuPath's, in level-0 pixels; an area of interest, in its CRS "
        "or WGS 84; a shapefile, GeoPackage, FlatGeobuf or KML with geopandas installed); "
        "blocks without foreground are neither read nor computed",
    )  # fmt: skip
    parser.add_argument(
        "--mask-classes", default=None, type=classes_option, metavar="CLASS[,CLASS...]",
        help="with --mask REGIONS: draw only the regions of these classes (QuPath's "
        "classifications, e.g. Tumor,Stroma, or a GIS file's 'class' column); those classified "
        "Ignore* are cut out all the same. With --mask LABELS (a label image: a land cover, a "
        "classifier's or xfskde's labels, a segment result): the pixels of these values (40, "
        "or 4,5; 'texture 2' for xfskde's)",
    )  # fmt: skip
    parser.add_argument(
        "--mask-storage-option", action="append", default=None, type=storage_option,
        dest="mask_storage_options", metavar="KEY=VALUE",
        help="with --mask URL: an option of the filesystem that reaches the mask (fsspec's "
        "storage_options: endpoint_url=https://s3.example.org, key=..., secret=..., anon=true; "
        "VALUE is read as JSON where it is JSON: true, 3, {\"region_name\": \"eu-west-1\"}), "
        "for a mask in another bucket, at another endpoint or with other credentials than the "
        "input's (which come from the environment); repeat it for each option. Without it a "
        "mask at a URL is reached as the input is",
    )  # fmt: skip


def storage_option(text: str) -> tuple[str, Any]:
    """``--mask-storage-option KEY=VALUE``: one of a filesystem's storage options, its value
    read as JSON where it is JSON (``anon=true``, ``client_kwargs={"region_name": "x"}``),
    else as the text it is (``endpoint_url=https://s3.example.org``)."""
    key, found, value = text.partition("=")
    if not found or not key.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is no KEY=VALUE (endpoint_url=https://s3.example.org, anon=true)"
        )
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def mask_argument(args: argparse.Namespace) -> Any:
    """``--mask`` as :func:`xfskde.masks.resolve_mask` takes it: a URL given
    ``--mask-storage-option`` as its :class:`~xfskde.io.Location`, reached with those
    options (not the input's); anything else as given.

    Raises
    ------
    ParameterError
        For ``--mask-storage-option`` with a mask that is no URL (a method, a local path).
    """
    options = getattr(args, "mask_storage_options", None)
    if not options:
        return args.mask
    if args.mask in (*MASK_METHODS, "none") or locate(args.mask).is_local:
        raise ParameterError(
            f"--mask-storage-option reaches a mask at a URL (s3://, gs://, https://...); the "
            f"mask {args.mask!r} is not one: drop --mask-storage-option"
        )
    return locate(args.mask, dict(options))


#: The value of an option chosen by the command.
AUTO = "auto"


def auto_or(kind: type) -> Any:
    """An argparse type: ``auto`` or a number of ``kind``."""

    def parse(text: str) -> Any:
        if text == AUTO:
            return text
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected auto or a number, got {text!r}") from None

    parse.__name__ = f"auto or {kind.__name__}"
    return parse


def add_field_options(
    parser: argparse.ArgumentParser, *, output: str, tiff: str | None = None
) -> None:
    """The arguments of a command that computes a local FS-KDE field of an image and writes a
    store: ``input`` and ``output`` (what the output is, in words), the field's options,
    ``--nodata``, ``--level``/``--mpp``, ``--mask``, ``--chunks``, the scheduler's and
    ``--resume``/``--overwrite``. ``tiff``: what an output named ``*.tif`` holds, written as
    one GeoTIFF (:func:`write_tiff_output`); None: such a name is refused."""
    parser.add_argument(
        "input", type=location_option("the input image's path or URL"),
        help="image file or Zarr store: a path or URL (s3://, gs://, http://)",
    )  # fmt: skip
    also = (
        (
            f"; or a GeoTIFF of {tiff} (a name ending in .tif: CRS and grid kept), or the "
            "OME-Zarr image as one pyramidal OME-TIFF (.ome.tif: QuPath, Fiji)"
        )
        if tiff
        else ""
    )
    parser.add_argument(
        "output", type=location_option("the output's path or URL"),
        help=f"{output}: a path or URL (s3://, gs://){also}",
    )  # fmt: skip
    parser.set_defaults(tiff_output=tiff is not None)
    add_fskde_options(parser)
    add_nodata_option(
        parser, "missing pixels are omitted: every gradient that touches one has zero weight"
    )
    add_level_options(parser)
    add_mask_option(parser)
    parser.add_argument(
        "--chunks", type=auto_or(int), default=AUTO,
        help=f"target block side in pixels, rounded to the file's tiles and the stride; auto: "
        f"{DEFAULT_CHUNK}, or less where a block's coefficients would pass "
        f"{FIELD_BLOCK_BYTES // 2**20} MiB (fine strides)",
    )  # fmt: skip
    add_scheduler_option(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="finish an interrupted write")
    mode.add_argument("--overwrite", action="store_true", help="replace an existing store")
    add_verify_option(parser)


#: The help of ``--verify``, the option of the commands that resume a store.
VERIFY_HELP = (
    "with --resume: first read every block the store holds back against its checksum, and "
    "compute the damaged ones again (a resume reads none without it: it lists the store's "
    "chunks, and computes again those that are gone)"
)


def store_complete(output: str) -> bool:
    """Whether ``output`` is a complete store (before a resume: one that has nothing to do,
    unless it is found damaged)."""
    if not output_exists(output):
        return False
    try:
        return bool(store_status(output)["complete"])
    except (OSError, ValueError, KeyError, XfskdeError):  # not a store: the write refuses it
        return False


def complete_note(verified: bool, output: str | None = None) -> str:
    """What a resume that found a store complete, and computed nothing, says of its blocks:
    read back whole (``--verify``), or not read at all — never that they were checked, nor,
    where the store at ``output`` carries no checksums, that their values were."""
    if verified and output is not None and not has_checksums(output):
        return (
            "each decoded, but none could be checked: its chunks carry no checksum (written "
            "before xfskde checksummed them); write it again with --overwrite to have them "
            "checked"
        )
    if verified:
        return "each read back whole"
    return (
        "none was read back: --resume --verify reads each against its checksum and computes "
        "the damaged again"
    )


def add_verify_option(parser: argparse.ArgumentParser) -> None:
    """``--verify``, of the commands that ``--resume`` a store: the resume reads the blocks it
    keeps back first (``verify=True`` of :func:`xfskde.io.write_blocks`)."""
    parser.add_argument("--verify", action="store_true", help=VERIFY_HELP)


#: ``--chunks auto`` of the field commands: the most bytes of coefficients one block holds.
#: A stride-1 field of order 8 (9 complex64 a pixel) in blocks of 2048² held 302 MB a block,
#: and `xfskde maps` of an 8192² slide peaked at 1.76 GiB, of a 16384² one at 2.18 GiB; in
#: blocks of 1024² at 0.76 and 0.90 GiB, in 13.3 s instead of 14.4 s and 52.0 s instead of 54.1.
FIELD_BLOCK_BYTES = 64 * 2**20


def field_chunk(params: LocalParameters) -> int:
    """The target block side (input pixels) of ``--chunks auto`` for a field of ``params``:
    :data:`xfskde.lazy.DEFAULT_CHUNK`, or the side of a block whose complex64 coefficients
    (``params.length`` a sample, a sample every ``params.stride`` pixels) hold
    :data:`FIELD_BLOCK_BYTES` where that is smaller: 965 px at stride 1 and order 8 (the
    planner then rounds it to the file's tiles), 2048 from stride 3 on."""
    samples = math.isqrt(FIELD_BLOCK_BYTES // (8 * params.length))
    return max(1, min(DEFAULT_CHUNK, samples * params.stride))


def field_from_input(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The image, its lazy local FS-KDE field and the mask (None without ``--mask``), every
    option checked before anything is read (and a misspelt scheduler or a dead address
    refused before anything is laid out)."""
    if args.chunks != AUTO and args.chunks < 1:
        raise ParameterError(f"--chunks must be a positive number of pixels, got {args.chunks}")
    if args.workers is not None and args.workers < 1:
        raise ParameterError(f"--workers must be at least 1, got {args.workers}")
    params = LocalParameters(**fskde_kwargs(args))  # checked before the image is opened
    chunks = field_chunk(params) if args.chunks == AUTO else args.chunks
    refuse_existing(args)
    check_scheduler(args)
    # the one chunk planner: the file's tiles, the target, the window's halo and the stride
    image = open_image(
        args.input, level=args.level or 0, mpp=args.mpp, chunks=chunks, halo=params.depth,
        stride=params.stride, plane=args.plane, series=args.series, dims=args.dims,
        channels=args.channels,
    )  # fmt: skip
    # nodata is no LocalParameters field: local_fskde resolves it ("auto": the image's
    # _FillValue) and records it in the field's attrs, which a resume compares
    mask = resolve_mask(mask_argument(args), image, classes=args.mask_classes)
    field = local_fskde(image, **fskde_kwargs(args), nodata=args.nodata, mask=mask)
    return image, field, mask


#: An output this many times larger than its input (and at least LARGE_BYTES) is warned of.
LARGE_RATIO = 10
LARGE_BYTES = 100e6


def byte_size(n: float) -> str:
    """A number of bytes as people read it: ``"105.4 MB"``, ``"9.2 kB"``."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


#: What makes a coefficient field or its maps smaller.
SMALLER_FIELD = (
    "a larger --stride (each doubling divides it by 4) or a smaller --order makes it smaller"
)


def warn_if_large(
    args: argparse.Namespace, output_bytes: float, what: str, remedy: str = SMALLER_FIELD
) -> None:
    """Say on stderr, before a long run, when the output will be far larger than the input
    (a 21 MB JPEG slide at stride 1 and order 8 is a 1.3 GB coefficient store), and the
    ``remedy``: what makes it smaller."""
    location = locate(args.input)
    try:
        fs, path = location.filesystem()
        input_bytes = float(fs.du(path) if location.is_dir() else fs.size(path))
    except Exception:  # a server's failure too (aiohttp's errors): the read will name it
        return
    if output_bytes >= LARGE_BYTES and output_bytes > LARGE_RATIO * max(input_bytes, 1.0):
        print(
            f"xfskde {args.command}: warning: the {what} will hold about "
            f"{byte_size(output_bytes)} before compression, "
            f"{output_bytes / max(input_bytes, 1.0):.0f} times the "
            f"{byte_size(input_bytes)} of {args.input}; {remedy}",
            file=sys.stderr,
            flush=True,
        )


#: Output names written as one TIFF file, not as a Zarr store: a GeoTIFF
#: (:func:`write_tiff_output`), or an OME-TIFF when the name ends in :data:`OME_TIFF_SUFFIXES`.
GEOTIFF_SUFFIXES = (".tif", ".tiff")
OME_TIFF_SUFFIXES = (".ome.tif", ".ome.tiff")


#: Output names written as an indexed PNG of the labels (``xfskde segment`` only).
PNG_SUFFIXES = (".png",)
#: Output names written as GeoJSON regions of the labels (``xfskde segment`` only).
GEOJSON_SUFFIXES = (".geojson",)
#: Output names written as the labels' regions in a GIS vector format, by geopandas
#: (``xfskde segment`` only; :data:`xfskde.io.geojson.WRITTEN_VECTOR_FORMATS`).
VECTOR_SUFFIXES = tuple(WRITTEN_VECTOR_FORMATS)
#: Formats no command writes: pictures lossy or not made for labels or values, vector
#: formats read as masks but not written (KML is longitude and latitude only; zipped
#: shapefiles and GML: write a GeoPackage; a regions file is written as *.geojson, not
#: *.json), rasters and arrays of other libraries, text, tables and archives. Any other name
#: — with no suffix (``labels``) or one no file format uses — is a store (until 2026-11-30 an
#: output named ``out.txt``, ``out.nc`` or ``out.jp2`` was written as a Zarr store of that
#: name).
_UNWRITTEN_SUFFIXES = (
    ".jpg", ".jpeg", ".jpe", ".bmp", ".gif", ".webp", ".jp2", ".j2k", ".jpx", ".avif",
    ".heic", ".ico", ".svg", ".pdf", ".eps", ".ps",
    ".npy", ".npz", ".mat", ".pkl", ".pickle", ".parquet", ".feather", ".arrow",
    ".nc", ".nc4", ".cdf", ".h5", ".hdf", ".hdf5", ".he5", ".n5",
    ".vrt", ".img", ".hdr", ".envi", ".asc", ".xyz", ".ecw", ".sid", ".dem", ".dt2",
    ".svs", ".ndpi", ".scn", ".mrxs", ".czi", ".nd2", ".lif", ".vsi", ".dcm", ".btf", ".tf8",
    ".kml", ".kmz", ".gml", ".shz", ".shp.zip", ".json", ".topojson", ".csv", ".tsv",
    ".txt", ".xml", ".html", ".htm", ".md", ".yaml", ".yml", ".log",
    ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z",
)  # fmt: skip


def _named(output: str, suffixes: str | tuple[str, ...]) -> bool:
    return str(output).rstrip("/").lower().endswith(suffixes)


def is_geotiff(output: str) -> bool:
    """Whether ``output`` names a TIFF file (by its suffix): a GeoTIFF, or an OME-TIFF
    (:func:`is_ome_tiff`); either is written whole, as a local file."""
    return _named(output, GEOTIFF_SUFFIXES)


def is_ome_tiff(output: str) -> bool:
    """Whether ``output`` names an OME-TIFF (``*.ome.tif``): the OME-Zarr image the command
    would write, as one pyramidal file (:func:`xfskde.io.write_ome_tiff`)."""
    return _named(output, OME_TIFF_SUFFIXES)


def is_png(output: str) -> bool:
    """Whether ``output`` names a PNG (by its suffix): the labels as an indexed picture
    (:func:`write_png_output`), written whole, as a local file."""
    return _named(output, PNG_SUFFIXES)


def is_geojson(output: str) -> bool:
    """Whether ``output`` names a GeoJSON file (by its suffix): the labels as regions
    (:func:`write_geojson_output`), written whole, as a local file."""
    return _named(output, GEOJSON_SUFFIXES)


def is_vector(output: str) -> bool:
    """Whether ``output`` names a GeoPackage, shapefile or FlatGeobuf (by its suffix): the
    labels as regions (:func:`write_vector_output`), written whole, as local files."""
    return _named(output, VECTOR_SUFFIXES)


#: The outputs written as one local file: their kind, how their name is told, the parser
#: default by which a command says it writes them, and the refusal where it does not (the
#: command's name in place of ``{command}``).
_FILE_OUTPUTS = (
    ("GeoJSON", is_geojson, "geojson_output",
     "a GeoJSON holds regions: `xfskde segment` writes its labels as them; xfskde {command} "
     "writes a Zarr store (*.zarr)"),
    ("vector", is_vector, "geojson_output",
     "a GeoPackage, shapefile or FlatGeobuf holds regions: `xfskde segment` writes its labels "
     "as them; xfskde {command} writes a Zarr store (*.zarr)"),
    ("PNG", is_png, "png_output",
     "a PNG holds a picture: `xfskde segment` writes its labels as one, `xfskde maps` its "
     "orientation and coherence; xfskde {command} writes a Zarr store (*.zarr)"),
    ("TIFF", is_geotiff, "tiff_output",
     "xfskde {command} writes a Zarr store (name it *.zarr); `xfskde maps` and `xfskde "
     "segment` write GeoTIFFs, and xfskde.io.geotiff.write_geotiff writes a field as 2 float "
     "bands per coefficient"),
)  # fmt: skip


def is_file_output(output: str) -> bool:
    """Whether ``output`` is written as one local file (a TIFF, a PNG, a GeoJSON), not as a
    Zarr store."""
    return any(named(output) for _, named, _, _ in _FILE_OUTPUTS)


def output_forms(args: argparse.Namespace) -> str:
    """The outputs the command of ``args`` writes, by the names that choose them, in words:
    ``maps`` an OME-Zarr image under any other name, ``coefficients`` a Zarr store."""
    if args.command == "maps":
        forms = ["*.ome.zarr or a name without a suffix (OME-Zarr)"]
    else:
        forms = ["*.zarr or a name without a suffix (a Zarr store)"]
        if getattr(args, "tiff_output", False):
            forms.append("*.ome.zarr (OME-Zarr)")
    if getattr(args, "tiff_output", False):
        forms += ["*.ome.tif (OME-TIFF)", "*.tif (GeoTIFF)"]
    if getattr(args, "png_output", False):
        picture = "the maps as a picture" if args.command == "maps" else "an indexed PNG"
        forms.append(f"*.png ({picture})")
    if getattr(args, "geojson_output", False):
        forms.append("*.geojson, *.gpkg, *.shp or *.fgb (regions)")
    return "; ".join(forms[:-1]) + "; or " + forms[-1] if len(forms) > 1 else forms[0]


def refuse_file_output(args: argparse.Namespace) -> None:
    """An output written as one file — a GeoTIFF, a PNG, a GeoJSON — is refused before anything is
    computed for a command that does not write it, with ``--resume`` (it is written whole) and
    at a URL (it is a local file); the suffix of a file format no command writes
    (:data:`_UNWRITTEN_SUFFIXES`: ``labels.jpg``, ``out.txt``, once written as Zarr stores of
    those names) always, naming the outputs the command writes (:func:`output_forms`)."""
    if _named(args.output, _UNWRITTEN_SUFFIXES):
        name = str(args.output).rstrip("/").lower()
        suffix = max((s for s in _UNWRITTEN_SUFFIXES if name.endswith(s)), key=len)
        raise ParameterError(
            f"{args.output}: xfskde {args.command} writes no {suffix} file: name the output "
            f"{output_forms(args)}"
        )
    found = [entry for entry in _FILE_OUTPUTS if entry[1](args.output)]
    if not found:
        return
    kind, _, writes, refusal = found[0]
    if not getattr(args, writes, False):
        raise ParameterError(f"{args.output}: {refusal.format(command=args.command)}")
    if args.resume:
        raise ParameterError(
            f"{args.output} is a {kind} file, written whole: --resume needs a Zarr store (name "
            "the output *.zarr), or run again with --overwrite"
        )
    where = locate(args.output)
    if not where.is_local and (kind == "vector" or where.read_only):
        why = "a read-only server" if where.read_only else "GDAL writes GIS vector files locally"
        raise ParameterError(
            f"{args.output}: a {kind} output at {where.protocol}:// cannot be written ({why}); "
            "write it locally, or a *.zarr store, a *.tif, *.png or *.geojson to a bucket"
        )
    if kind == "vector" and importlib.util.find_spec("geopandas") is None:  # before the fit
        raise ParameterError(
            f"writing {args.output} needs geopandas: pip install 'xfskde[vector]'; or name the "
            "output *.geojson"
        )


def refuse_ome_zarr_grid(image: Any, args: argparse.Namespace, *, always: bool) -> None:
    """The grid check of the OME-Zarr writer (:func:`xfskde.io.omezarr.check_ome_zarr_grid`:
    a north-up GeoTIFF's decreasing y is refused, with a GeoTIFF output as the way out), made
    before anything is computed (segment fits first). ``always``: every output but a GeoTIFF is
    OME-Zarr (``maps``); else only a name ending in ``.ome.zarr``. An OME-TIFF is a copy of the
    OME-Zarr image: checked alike; a PNG (``maps``' picture) for its grid only, as a picture
    of a scene with a CRS is drawn."""
    ome = not is_geotiff(args.output) if always else is_ome_zarr(args.output)
    if ome or is_ome_tiff(args.output):
        check_ome_zarr_grid(image, str(args.input), crs=not is_png(args.output))


def is_ome_zarr(output: str) -> bool:
    """Whether ``output`` names an OME-Zarr image (by its suffix ``.ome.zarr``)."""
    return _named(output, ".ome.zarr")


def write_tiff_output(
    result: Any, args: argparse.Namespace, nodata: Any = "auto", overviews: str = "nearest"
) -> None:
    """Write a labelled result to the GeoTIFF ``args.output`` (:func:`xfskde.io.geotiff.
    write_geotiff`: CRS, grid and attrs kept; ``nodata`` as there), on the scheduler in
    effect, as a Cloud-Optimised GeoTIFF whose overviews are computed by GDAL's
    ``overviews`` resampling (``"mode"`` for labels; ``"nearest"`` keeps every value a true
    sample, as angles need): QGIS then draws a whole scene or slide at any zoom from them,
    not from every pixel, and a tiler reads it from a URL. Written first to
    ``OUTPUT.partial`` next to it, then renamed, so that a file at ``args.output`` is always
    whole; a failed or interrupted write leaves nothing new there."""
    from ..io.geotiff import write_geotiff

    def write(partial: Path) -> None:
        write_geotiff(result, partial, nodata=nodata, cog=True, overview_resampling=overviews)

    _written_whole(args.output, write)


def write_png_output(labels: Any, args: argparse.Namespace) -> None:
    """Write labels to the PNG ``args.output`` as an indexed picture in the library's colours,
    their attrs kept (:func:`xfskde.io.png.write_labels_png`), first to ``OUTPUT.partial`` and
    then renamed, as :func:`write_tiff_output` does."""
    from ..io.png import write_labels_png

    _written_whole(args.output, lambda partial: write_labels_png(labels, partial))


def write_geojson_output(labels: Any, args: argparse.Namespace) -> None:
    """Write labels to the GeoJSON ``args.output`` as one MultiPolygon per texture
    (:func:`xfskde.io.geojson.write_labels_geojson`: QuPath's annotations in level-0 pixels,
    or a scene's regions in its CRS), as :func:`write_tiff_output` does."""
    from ..io.geojson import write_labels_geojson

    _written_whole(args.output, lambda partial: write_labels_geojson(labels, partial))


def write_vector_output(labels: Any, args: argparse.Namespace) -> None:
    """Write labels to the GeoPackage, shapefile or FlatGeobuf ``args.output``
    (:func:`xfskde.io.geojson.write_labels_vector`), whole: into a scratch folder beside it,
    then each file moved into place (a shapefile is several: .shp, .shx, .dbf, .prj, ...). A
    GeoPackage that exists with other layers is copied there first and gets its layer
    (:func:`xfskde.io.geojson.labels_layer`) written or replaced, its other layers kept."""
    from ..io.geojson import write_labels_vector

    path = Path(args.output)
    scratch = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent or "."))
    try:
        if _other_layers(args.output):  # a GeoPackage of other layers: ours written into a copy
            shutil.copy2(path, scratch / path.name)
        write_labels_vector(labels, scratch / path.name)
        if path.is_dir():  # --overwrite of a store given this name
            shutil.rmtree(path)
        for part in scratch.iterdir():
            os.replace(part, path.with_name(part.name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def write_picture_output(rgb: Any, attrs: dict, args: argparse.Namespace) -> None:
    """Write an RGB picture in [0, 1] to the PNG ``args.output``, ``attrs`` kept
    (:func:`xfskde.io.png.write_picture_png`), as :func:`write_png_output` writes labels."""
    from ..io.png import write_picture_png

    _written_whole(args.output, lambda partial: write_picture_png(rgb, partial, attrs))


def _written_whole(output: str, write: Callable[[Path], Any]) -> None:
    """``write(partial)`` to ``OUTPUT.partial`` next to ``output``, then renamed to it, so
    that a file at ``output`` is always whole; a failed or interrupted write leaves nothing
    new there (a store of that name, given ``--overwrite``, is replaced once the file is).
    At a URL (a bucket), written to a scratch folder here, then put there whole: an object
    store shows an object once all of it is uploaded (a north-up scene's maps, which must be
    a GeoTIFF, could not be written to a bucket at all).

    The file's GDAL PAM sidecar (:data:`xfskde.io.geotiff.PAM_SIDECAR`: a labels GeoTIFF's
    class names) goes with it, after it; an older one is removed first, before the file is
    replaced: GDAL would read it as the new file's (another segmentation's names, or names
    on a map)."""
    where = locate(output)
    if not where.is_local:
        scratch = Path(tempfile.mkdtemp(prefix="xfskde-output-"))
        try:
            local = scratch / where.name
            write(local)
            if where.is_dir():  # --overwrite of a store given this name
                where.remove()
            fs, remote = where.filesystem()
            locate(where.url + PAM_SIDECAR, where.storage_options).remove()
            fs.put_file(str(local), remote)
            if pam_sidecar(local).exists():
                fs.put_file(str(pam_sidecar(local)), remote + PAM_SIDECAR)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    path = Path(output)
    partial = path.with_name(path.name + ".partial")
    try:
        write(partial)
        if path.is_dir():  # --overwrite of a store given this name
            shutil.rmtree(path)
        pam_sidecar(path).unlink(missing_ok=True)
        os.replace(partial, path)
        if pam_sidecar(partial).exists():
            os.replace(pam_sidecar(partial), pam_sidecar(path))
    finally:
        partial.unlink(missing_ok=True)
        pam_sidecar(partial).unlink(missing_ok=True)


def _other_layers(output: str) -> bool:
    """Whether ``output`` is a GeoPackage file that holds layers other than the one the
    labels' regions are written to (:func:`xfskde.io.geojson.labels_layer`): a project's,
    whose layers are kept."""
    if not _named(output, ".gpkg") or not Path(output).is_file():
        return False
    layers = geopackage_layers(output)
    return bool(layers) and any(layer != labels_layer(output) for layer in layers)


def refuse_no_gradient(args: argparse.Namespace, image: Any, what: str) -> None:
    """Remove the output just written of an image without a gradient anywhere (every
    ``what`` zero or NaN: a constant image, one of a pixel, or all missing), which would pass
    for a result, and say so (:class:`~xfskde.exceptions.ImageReadError`)."""
    locate(args.output).remove()
    height, width = image.sizes["y"], image.sizes["x"]
    raise ImageReadError(
        f"{args.input} has no gradient anywhere (its {height} x {width} pixels are all "
        "equal, or all NaN under --nan-policy omit, or all nodata): every "
        f"{what} is zero or NaN, so {args.output} was not kept"
    )


def refuse_unwritable_folder(output: str) -> None:
    """A local output whose folder cannot be written in is refused before anything is
    computed, naming the folder (it was found after the whole computation, in words about a
    temporary file): a file output's folder must exist and be writable; a Zarr store's
    missing folders are created, as Zarr creates them, in the nearest one that exists, which
    must be writable."""
    where = locate(output)
    if not where.is_local:
        return
    folder = Path(os.path.abspath(where.url.rstrip(os.sep))).parent
    if not is_file_output(output):
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    why = ("does not exist: create it first" if not folder.exists()
           else "is not a folder" if not folder.is_dir()
           else "is not writable: choose a folder you can write in"
           if not os.access(folder, os.W_OK | os.X_OK) else None)  # fmt: skip
    if why is not None:
        raise ParameterError(f"cannot write {output}: the folder {folder} {why}")


def refuse_existing(args: argparse.Namespace) -> None:
    """An output that exists is refused before anything is computed, unless ``--resume`` or
    ``--overwrite`` says what to do with it (a file output: :func:`refuse_file_output`). A
    GeoPackage is written into as GDAL writes a layer: refused only where it holds the
    layer of the labels already."""
    if getattr(args, "verify", False) and not args.resume:
        raise ParameterError(
            "--verify reads back the blocks --resume keeps: pass --resume too (xfskde info "
            "--verify STORE checks a store without writing to it)"
        )
    refuse_file_output(args)
    refuse_unwritable_folder(args.output)
    if args.overwrite and output_exists(args.output):
        refuse_replacing(args)
    if output_exists(args.output) and not (args.overwrite or args.resume):
        if _other_layers(args.output):
            layer = labels_layer(args.output)
            if layer not in (geopackage_layers(args.output) or ()):
                return  # the labels' layer is added, the others kept
            raise StoreExistsError(
                f"{args.output} holds a layer {layer!r} already; pass --overwrite to replace "
                "that layer (its other layers are kept)"
            )
        if is_file_output(args.output):
            raise StoreExistsError(f"{args.output} exists; pass --overwrite to replace it")
        raise StoreExistsError(
            f"{args.output} exists; pass --resume to finish an interrupted run or --overwrite "
            "to replace it"
        )


def refuse_replacing(args: argparse.Namespace) -> None:
    """``--overwrite`` replaces what a command writes — a file, or a Zarr store — and nothing
    else: refused, before anything is computed, where the output is or holds what the command
    reads (the input image, a mask file, a model's result: the store was cleared before the
    image was read, and a folder named as the output went with the slide in it), and where
    it is a folder that is no Zarr store (the user's files, which nothing xfskde writes
    replaces).

    The store writer refuses the same of what the data records it reads
    (:func:`xfskde.io.stores.refuse_replacing_inputs`, one comparison for both); this check
    comes first, before the fit and the first read, and covers what the data does not
    record or never reaches the store writer: a ``--model`` result, and the outputs written
    as one file (a GeoTIFF, a PNG, GeoJSON)."""
    out = locate(args.output)
    given = {"input": args.input, "mask": getattr(args, "mask", None),
             "model": getattr(args, "model", None)}  # fmt: skip
    read = [
        (what, locate(path))
        for what, path in given.items()
        if path is not None and not (what == "mask" and str(path) in ("none", *MASK_METHODS))
    ]
    refuse_replacing_inputs(out, read, "--overwrite")
    refuse_foreign_folder(out, "--overwrite")


def output_exists(output: str) -> bool:
    """Whether something is at ``output``, a path or URL (an empty directory counts as
    nothing)."""
    return locate(output).is_occupied()


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


def store_state(output: str) -> tuple[dict[str, Any], Any] | None:
    """A store's status (:func:`xfskde.io.store_status`) and what its filesystem says of its
    root metadata (size, modification time, ETag), which every layout and every completion
    rewrites; None where no store is at ``output``."""
    try:
        if not output_exists(output):
            return None
        status = store_status(output)
        fs, path = locate(output).filesystem()
        return status, fs.info(f"{path.rstrip('/')}/zarr.json")
    except (OSError, ValueError, KeyError, XfskdeError):
        return None


def _left(
    output: str, interrupted: bool, before: tuple[dict[str, Any], Any] | None = None
) -> str | None:
    """What a failed or interrupted write left at ``output``, and how to go on from there;
    ``before`` is :func:`store_state` when the command began, to tell a store the failure
    left as it was (a run refused before it touched the store) from one it replaced."""
    if not output_exists(output):
        return f"nothing was written to {output}" if interrupted else None
    try:
        status = store_status(output)
    except (OSError, ValueError, KeyError, XfskdeError):
        return None
    if status["complete"]:
        if before is not None and store_state(output) == before:
            return f"{output} was not touched: it is complete, as before"
        return f"{output} is complete"
    done, total = status["blocks_done"], status["blocks_total"]
    then = "run the same command with --resume to finish it" if interrupted else (
        "fix the cause, then run the same command with --resume to finish it (or "
        "--overwrite to start again)"
    )  # fmt: skip
    if total == 0:  # no record of its blocks yet: "keeps 0 of 0 blocks" said nothing
        return f"{output} was cut short while it was laid out, before any block: {then}"
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
    before = store_state(output)
    try:
        yield
    except KeyboardInterrupt as exc:
        note = _left(output, interrupted=True, before=before)
        if note:
            exc.add_note(note)
        raise
    except (StoreExistsError, StoreParametersError, StoreFormatError):
        raise  # refused before anything was written: the message says what to do
    except XfskdeError as exc:
        note = _left(output, interrupted=False, before=before)
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
            said = f"cannot write {output}: {reason}"  # no "[Errno None]" without an errno
            error = OSError(exc.errno, said) if exc.errno is not None else OSError(said)
        note = _left(output, interrupted=False, before=before)
        if note:
            error.add_note(note)
        if error is exc:
            raise
        raise error from exc
