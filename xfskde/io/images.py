"""Reading images of any size as lazy, labelled DataArrays: :func:`open_image`.

:func:`open_image` returns a Dask-backed ``(y, x)`` or ``(y, x, c)`` DataArray (dims in the
source's order) for

* NumPy and Dask arrays (dims told from the shape) and DataArrays (returned as they are),
* Zarr arrays and groups: a group with one array, or a level of an OME-Zarr multiscale group,
* TIFF / OME-TIFF / SVS / NDPI ... files through tifffile (a TIFF by another name by its first
  bytes; a microscope's own format refused by name: :func:`file_format`): a task receives only
  the file's path and reads the tiles of its rectangle itself (:mod:`xfskde.io._tiff`, tasks named
  ``xfskde-read-tiff-...``), so the graph holds no pixel data and no open file handle and runs
  unchanged on a distributed cluster,
* PNG / JPEG / BMP / GIF / WebP / NPY files, for small images (read into memory; an alpha
  channel is dropped and its transparent pixels become NaN, :func:`_open_plain`).

**GeoTIFFs.** A TIFF's nodata value (GDAL's ``GDAL_NODATA`` tag, as written by GDAL and
rioxarray) is put in ``attrs["_FillValue"]``, where :func:`xfskde.local_fskde` finds it and
omits those pixels. When the file carries GeoTIFF keys and rioxarray is installed (the ``geo``
extra), the georeferencing is read by ``rioxarray.open_rasterio`` from the file's header only —
``x``/``y`` coords in CRS units (pixel centres), a scalar ``spatial_ref`` coord with the CRS WKT
and GeoTransform, and the file's attrs — exactly as ``open_rasterio`` gives them; the pixels are
still read inside the tasks by :mod:`xfskde.io._tiff` (the graph holds no open file). Without
rioxarray a GeoTIFF opens with pixel coords, and a :class:`GeoreferencingWarning` says so.

**Chunks.** The spatial chunks are planned by :func:`xfskde.lazy.plan_chunks` with the file's
native tile (or Zarr chunk, or a Dask array's chunk) shape as ``tiles``, so that every task reads
whole tiles; the colour dim is one chunk. The native tile shape is recorded on the result as
``encoding["preferred_chunks"] = {"y": th, "x": tw}`` (xarray's convention for backends), so a
caller that knows its halo and stride can plan again with ``plan_chunks(..., tiles=...)``.

**Errors.** An unreadable file or an unsupported layout raises
:class:`~xfskde.exceptions.ImageReadError`, an array whose dims cannot be told
:class:`~xfskde.exceptions.DimensionError`, an out-of-range ``level`` or ``chunks``
:class:`~xfskde.exceptions.ParameterError`, a missing path :class:`FileNotFoundError`.
"""

from __future__ import annotations

import binascii
import contextlib
import functools
import html
import io
import json
import logging
import math
import os
import re
import struct
import threading
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import dask.array as da
import numpy as np
import tifffile
import xarray as xr
import zarr
from dask.base import tokenize

from .._labels import (
    COLOR_DIMS,
    channel_names,
    crs_wkt,
    image_dims,
    nodata_value,
    parse_crs,
    pixel_nodata,
    pixel_steps,
    refuse_dataset,
    regular_step,
)
from .._pictures import (
    CONVERTED_MODES,
    GDAL_TAGS,
    ORIENTATION_TAG,
    animation,
    data_palette,
    is_picture,
    picture_values,
    transparent_as_nan,
    warn_if_turned,
)
from .._scheduling import compute as compute_collections
from .._validation import _check_level, _check_nonnegative_int, _check_positive_int
from ..exceptions import (
    ChunkSizeWarning,
    DimensionError,
    GeoreferencingWarning,
    ImageReadError,
    ParameterError,
    XfskdeError,
    find_stack_level,
)
from ..lazy import DEFAULT_CHUNK, dask_view, plan_chunks
from ._gdal import (
    GdalLevel,
    RemoteVrt,
    gdal_format,
    gdal_levels,
    input_version,
    read_gdal_block,
    remote_env,
    remote_opener,
    remote_vrt,
)
from ._location import (
    UNITS,
    Location,
    check_stamp,
    locate,
    metadata_stamp,
    micrometres,
    named_failures,
)
from ._record import _refuse_holes
from ._tiff import mapped_strips, mask_sidecar, read_tiff_block, with_mask_version

__all__ = ["GeoreferencingWarning", "ImageLevel", "image_levels", "open_image"]

_TIFF_SUFFIXES = (".tif", ".tiff", ".svs", ".ndpi", ".scn", ".btf", ".qptiff")
_PLAIN_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".npy")
#: Those of the formats whose file may be a film (an animated GIF, WebP or APNG): its frames
#: are read along ``t`` (:func:`_open_plain`).
_FILM_SUFFIXES = (".png", ".gif", ".webp")
#: The first bytes of a TIFF and of a BigTIFF, in either byte order: a file of another name
#: that starts so is read as one (Zeiss LSM, MetaMorph STK, Ventana BIF, ImageJ hyperstacks).
_TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
#: Microscopes' and scanners' own formats, which xfskde does not read, by suffix. Some start
#: as a TIFF (an Olympus VSI holds a thumbnail; its pixels are in .ets files beside it), so
#: they are named before the first bytes are looked at.
_OTHER_FORMATS = {
    ".czi": "Zeiss CZI", ".nd2": "Nikon ND2", ".lif": "Leica LIF", ".lof": "Leica LOF",
    ".mrxs": "3DHISTECH MIRAX", ".vsi": "Olympus VSI", ".ets": "Olympus ETS",
    ".oib": "Olympus OIB", ".oir": "Olympus OIR", ".ims": "Imaris", ".isyntax": "Philips iSyntax",
    ".dcm": "DICOM", ".ndpis": "Hamamatsu NDPIS", ".sld": "SlideBook", ".lsm5": "Zeiss LSM5",
}  # fmt: skip
#: Files of named variables, by suffix: xarray opens them, and one of their DataArrays is an
#: image.
_VARIABLE_FORMATS = {".nc": "NetCDF", ".nc4": "NetCDF", ".h5": "HDF5", ".hdf5": "HDF5",
                     ".he5": "HDF-EOS5", ".hdf": "HDF"}  # fmt: skip
#: TIFF axis codes that xfskde reads, and the dims they become.
_TIFF_AXES = {"Y": "y", "X": "x", "S": "c", "C": "c"}
#: What tifffile raises for a file it cannot read (TiffFileError derives from ValueError).
_TIFF_ERRORS = (OSError, tifffile.TiffFileError)
#: What zarr raises for a path or node that is not a readable Zarr array or group.
_ZARR_ERRORS = (OSError, KeyError, zarr.errors.BaseZarrError, json.JSONDecodeError)

_Chunks = int | Mapping[str, int] | None
#: GDAL's TIFF tag holding the nodata value as ASCII text.
_GDAL_NODATA = 42113

#: TIFF ResolutionUnit values that describe a physical length (inches are left out: 72 or 300
#: "dpi" in a photograph's header is a printing hint, not the size of what was imaged).
_RESOLUTION_UNITS = {3: 1e4, 4: 1e3, 5: 1.0}  # centimetre, millimetre, micrometre


# ------------------------------------------------------------------------------ chunk plans


def _check_chunks(chunks: _Chunks) -> None:
    """Refuse a ``chunks`` that is not a positive int or a ``{"y": .., "x": ..}`` mapping."""
    if isinstance(chunks, Mapping):
        values = [v for d, v in chunks.items() if d in ("y", "x")]
    else:
        values = [chunks]
    if chunks is not None and not all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 1 for v in values
    ):
        raise ParameterError(
            f"chunks must be a positive number of pixels or a dict such as "
            f"{{'y': 2048, 'x': 2048}}, got {chunks!r}"
        )


def _refuse_chunk_keys(chunks: _Chunks, image: xr.DataArray) -> None:
    """Refuse a ``chunks`` mapping with a key other than ``"y"`` and ``"x"`` (``{"z": 0}``,
    a misspelt ``{"q": 5}``): it was silently not read."""
    other = [key for key in chunks if key not in ("y", "x")] if isinstance(chunks, Mapping) else []
    if other:
        raise ParameterError(
            f"chunks takes the keys 'y' (a chunk's rows) and 'x' (its columns) only, got "
            f"{other[0]!r}: this image's dims are {tuple(map(str, image.dims))}, its spatial "
            "ones 'y' and 'x' to chunks whatever their names, and any other dim one chunk"
        )


def _target(chunks: _Chunks) -> tuple[int, int]:
    """The wanted (rows, columns) side of a chunk: ``chunks``, else :data:`DEFAULT_CHUNK`."""
    if chunks is None:
        return DEFAULT_CHUNK, DEFAULT_CHUNK
    if isinstance(chunks, Mapping):
        return int(chunks.get("y", DEFAULT_CHUNK)), int(chunks.get("x", DEFAULT_CHUNK))
    return int(chunks), int(chunks)


class _Request(NamedTuple):
    """What the caller asks of the chunks: a target side, the halo and the stride it needs."""

    target: tuple[int, int]
    halo: int
    stride: int
    #: the wanted pixel size in µm, to pick a pyramid level by (None: ``level`` decides)
    mpp: float | None = None
    #: the index kept along each axis beyond y, x and colour (``open_image``'s ``plane``)
    plane: Mapping[str, int] | None = None
    #: the image of a multi-image TIFF, by index or name (``open_image``'s ``series``)
    series: int | str = 0
    #: the names of an unlabelled source's axes (``open_image``'s ``dims``), checked
    dims: tuple[str, ...] | None = None
    #: whether some channels only are read (``open_image``'s ``channels``): the colour dim
    #: is then cut as the file stores it, so that the others' chunks are never read
    picks: bool = False


def _plan(
    shape: Sequence[int], dims: Sequence[str], native: Sequence[int], request: _Request
) -> tuple[tuple[tuple[int, ...], ...], dict[str, int]]:
    """Dask chunks of every dim, and the native tile shape ``{"y": th, "x": tw}``.

    The ``y`` and ``x`` dims are planned by :func:`~xfskde.lazy.plan_chunks` on the native
    tiles, with the caller's halo and stride; every other dim (colour, or a length-1 dim about
    to be dropped) is one chunk — but the colour dim of a request that ``picks`` channels,
    which is cut as the source stores it (an OME-Zarr image's chunks of one channel, an
    OME-TIFF's page per channel), so that the channels not picked are never read; they are
    joined into one chunk once picked (:func:`_chosen_channels`).
    """
    iy, ix = list(dims).index("y"), list(dims).index("x")
    tiles = (max(1, int(native[iy])), max(1, int(native[ix])))
    rows, cols = plan_chunks(
        (shape[iy], shape[ix]),
        tiles=tiles,
        target=request.target,
        halo=request.halo,
        stride=request.stride,
    )
    planned: dict[str, tuple[int, ...]] = {"y": rows, "x": cols}
    for d, n, side in zip(dims, shape, native, strict=True):
        if request.picks and d.lower() in COLOR_DIMS and 0 < side < n:
            planned[d] = (int(side),) * (n // side) + ((n % side,) if n % side else ())
    out = tuple(planned.get(d, (int(n),)) for d, n in zip(dims, shape, strict=True))
    return out, {"y": tiles[0], "x": tiles[1]}


def is_plane_axis(dim: str) -> bool:
    """Whether a dim is neither spatial nor colour: one plane of it is read (z, t, ...)."""
    return dim not in ("y", "x") and dim.lower() not in COLOR_DIMS


def parse_plane(text: str) -> dict[str, int]:
    """The ``plane`` that ``"z=12,t=0"`` names: how ``--plane`` and ``attrs["source_plane"]``
    write it (:func:`_plane_attrs`).

    Raises
    ------
    ParameterError
        For text that is not ``AXIS=INDEX[,AXIS=INDEX...]``.
    """
    plane: dict[str, int] = {}
    for item in text.split(","):
        name, _, index = item.partition("=")
        try:
            plane[name.strip().lower()] = int(index)
        except ValueError:
            raise ParameterError(
                f"expected AXIS=INDEX[,AXIS=INDEX...] such as z=12 or t=0,z=5, got {text!r}"
            ) from None
        if not name.strip():
            raise ParameterError(f"an axis name is missing in {text!r} (z=12)")
    return plane


def _plane_selection(
    source: Any, dims: Sequence[str], shape: Sequence[int], plane: Mapping[str, int] | None
) -> tuple[int | None, ...]:
    """The index kept along each dim (None: the dim stays), from ``open_image``'s ``plane``.

    Every dim beyond y, x and colour loses its axis: ``plane`` names the index kept along it
    (negative counts from the end), a length-1 dim it does not name keeps its only plane.

    Raises
    ------
    ImageReadError
        For a dim of more than one plane that ``plane`` does not name.
    ParameterError
        For a name that is not such a dim of the image, or an index out of its range.
    """
    extra = {d.lower(): i for i, d in enumerate(dims) if is_plane_axis(d)}
    chosen = {str(name).lower(): index for name, index in (plane or {}).items()}
    for name, index in chosen.items():
        if name not in extra:
            others = ", ".join(f"{dims[i]} ({shape[i]})" for i in extra.values()) or "none"
            raise ParameterError(
                f"plane names {name!r}, which is not an axis of {source} beyond y, x and "
                f"colour (those it has: {others})"
            )
        n = int(shape[extra[name]])
        if not isinstance(index, int | np.integer) or isinstance(index, bool):
            raise ParameterError(f"plane {name}={index!r}: the index must be an integer")
        if not -n <= index < n:
            raise ParameterError(
                f"plane {name}={index} is out of range: {source} has {n} planes along "
                f"{name} (0 to {n - 1})"
            )
    selection: list[int | None] = [None] * len(dims)
    unchosen = []
    for name, i in extra.items():
        if name in chosen:
            selection[i] = int(chosen[name]) % int(shape[i])
        elif shape[i] == 1:
            selection[i] = 0
        else:
            unchosen.append((dims[i], int(shape[i])))
    if unchosen:
        axes = ", ".join(f"{d} ({n} planes)" for d, n in unchosen)
        choice = ",".join(f"{d.lower()}=0" for d, _ in unchosen)
        raise ImageReadError(
            f"{source} has axes beyond y, x and colour: {axes}; choose one plane with "
            f"plane={{{', '.join(repr(d.lower()) + ': 0' for d, _ in unchosen)}}} "
            f"(--plane {choice} on the command line)"
        )
    return tuple(selection)


def _select_plane(
    data: da.Array, dims: Sequence[str], selection: Sequence[int | None]
) -> tuple[da.Array, list[str]]:
    """The plane of ``data`` that ``selection`` keeps, and the dims left (Dask culls the
    reads of every other plane, whose chunks along those dims are single planes)."""
    data = data[tuple(slice(None) if s is None else s for s in selection)]
    return data, [d for d, s in zip(dims, selection, strict=True) if s is None]


def _single_planes(
    planned: tuple[tuple[int, ...], ...], selection: Sequence[int | None]
) -> tuple[tuple[int, ...], ...]:
    """Chunks of one plane along the dims a plane is selected from: a task reads that plane."""
    return tuple(c if s is None else (1,) * sum(c) for c, s in zip(planned, selection, strict=True))


def _plane_attrs(
    image: xr.DataArray, dims: Sequence[str], selection: Sequence[int | None], plane: Any
) -> xr.DataArray:
    """Record the plane chosen (``source_plane``, as ``--plane`` writes it: ``"z=3,t=0"``)."""
    if not plane:
        return image
    named = {str(k).lower() for k in plane}
    chosen = (
        f"{d.lower()}={s}" for d, s in zip(dims, selection, strict=True) if d.lower() in named
    )
    return image.assign_attrs(source_plane=",".join(chosen))  # a copy of the attrs


def _read_plan(
    what: Any,
    dims: Sequence[str],
    shape: tuple[int, ...],
    native: Sequence[int],
    request: _Request,
    dtype: Any,
) -> tuple[tuple[int | None, ...], tuple[tuple[int, ...], ...], tuple[int, int] | None]:
    """How a source of ``dims``, ``shape`` and ``dtype`` is read, whatever its format: the
    ``plane`` of the request chosen among its axes (:func:`_plane_selection`), the Dask chunks
    planned on its ``native`` tiles (:func:`_plan`, a task reading one plane) and those tiles.
    A source of complex numbers is refused first: no image holds them, and an xfskde
    coefficients store given as an image was told to choose a plane of its ``k`` axis."""
    if np.dtype(dtype).kind == "c":
        raise ImageReadError(
            f"{what} holds complex numbers ({np.dtype(dtype)}), not an image's pixels: a store "
            "of FS-KDE coefficients opens with xfskde.open_coefficients (its maps: "
            "xfskde.orientation.orientation, coherence, energy); give the image itself here"
        )
    selection = _plane_selection(what, dims, shape, request.plane)
    planned, tiles = _plan(shape, dims, native, request)
    return selection, _single_planes(planned, selection), tiles


#: The bytes one read of a file's storage unit (a strip, tile or Zarr chunk) may decode before
#: opening it warns (:func:`_warn_if_large_reads`): a task holds the unit whole while it cuts
#: its block out, on top of the computation's memory. 256 MiB: a 16384² RGB whole-slide image
#: stored as one strip or chunk (805 MB) warns, an 8192² one (201 MB) does not.
LARGE_READ_BYTES = 256 * 2**20


def _warn_if_large_reads(
    what: Any, unit: str, shape: Sequence[int], nbytes: int, remedy: str
) -> None:
    """Warn once that every read of ``what`` decodes a storage ``unit`` ("strip", "tile",
    "chunk") of ``shape`` and ``nbytes`` larger than :data:`LARGE_READ_BYTES`, and how to
    rewrite the file (``remedy``) so that it is read in bounded memory."""
    if nbytes <= LARGE_READ_BYTES:
        return
    sides = " x ".join(str(int(n)) for n in shape)
    warnings.warn(
        f"{what} is stored in {unit}s of {sides} ({nbytes / 1e6:.0f} MB decoded): every "
        f"read decodes a whole {unit} at once, so reading it takes that much memory beside the "
        f"computation's; for bounded memory, {remedy}",
        ChunkSizeWarning,
        stacklevel=find_stack_level(),
    )


def _plane_image(
    data: da.Array,
    dims: Sequence[str],
    selection: Sequence[int | None],
    name: str,
    tiles: tuple[int, int] | None,
    request: _Request,
) -> xr.DataArray:
    """The labelled image of the chosen plane of ``data`` (read as :func:`_read_plan` planned
    it), recording the plane chosen."""
    data, kept = _select_plane(data, dims, selection)
    return _plane_attrs(_labelled(data, kept, name, tiles), dims, selection, request.plane)


#: ``open_image(mpp=)`` reads pixels within this ratio of ``mpp`` (25 %), or refuses: the
#: ratio within which a texture model takes an image's pixels as its own
#: (:data:`xfskde.segmentation.model.PIXEL_RATIO`), so that the pixel size a model names
#: reads an image the model takes.
MPP_LIMIT = 1.25
#: Readings of ``mpp`` that come this near it as the nearest one (1 %, by ratio) count as
#: tied with it: of those, the one that reads the fewest pixels (a pyramid's rounded sizes
#: make its level and a finer level in cells differ by a fraction of a percent).
MPP_TIE = 1.01


def pixel_size_text(size: Sequence[float]) -> str:
    """A (y, x) pixel size in µm as messages give it: ``0.5 µm``, or both axes where they
    differ, with their geometric mean, which ``mpp`` is compared with (``1 x 0.5 µm (y x x;
    0.7071 µm mean)``)."""
    y, x = float(size[0]), float(size[1])
    if math.isclose(y, x, rel_tol=1e-6):
        return f"{x:.4g} µm"
    return f"{y:.4g} x {x:.4g} µm (y x x; {math.sqrt(y * x):.4g} µm mean)"


def _level_and_cells(
    source: Any, sizes: Sequence[tuple[float, float] | None], level: int, mpp: float | None
) -> tuple[int, int]:
    """The level to read and the side f of the f × f cells of its pixels averaged into one
    (:func:`_binned`), so that the pixel size comes nearest ``mpp`` µm.

    ``level`` (f = 1) without ``mpp``. With it, every level and every whole f are weighed,
    and the pixel size nearest ``mpp`` by ratio is read (a pixel's size is the geometric mean
    of its y and x sizes, as f × f cells keep its aspect); of readings within
    :data:`MPP_TIE` of the nearest, the one with the fewest pixels. A 0.325 / 0.65 / 1.3 µm
    pyramid at ``mpp=1`` is its level 0 in 3 × 3 cells (0.975 µm; level 2 is 30 % off), an
    Aperio pyramid of 0.5 / 2 / 8 µm at ``mpp=1`` its level 0 in 2 × 2 cells, at ``mpp=2``
    its level 1. A nearest reading more than :data:`MPP_LIMIT` off ``mpp`` is refused, naming
    the pixel sizes the image gives (a 0.325 µm slide at ``mpp=0.5``: 0.325 and 0.65 µm are
    both over 25 % off)."""
    chosen = _choose_level(source, sizes, level, mpp)  # checks level and mpp
    if mpp is None:
        return chosen, 1
    reading = nearest_reading(sizes, mpp)
    if reading.off > MPP_LIMIT * (1 + 1e-9):  # 25 % off itself is within
        _refuse_mpp(source, sizes, mpp, reading)
    return reading.level, reading.cells


class MppReading(NamedTuple):
    """The reading of an image nearest a pixel size (:func:`nearest_reading`)."""

    #: the level read
    level: int
    #: the side f of the f × f cells of its pixels averaged into one
    cells: int
    #: the (y, x) size of the pixels read, in µm
    size: tuple[float, float]
    #: how far they are from the size asked, as a ratio ≥ 1 of their geometric mean to it
    off: float


def nearest_reading(sizes: Sequence[tuple[float, float] | None], mpp: float) -> MppReading:
    """The level and whole f whose f × f cells come nearest ``mpp`` µm, by ratio, of levels
    of (y, x) pixel sizes ``sizes`` (None: unknown, never chosen), as ``open_image(mpp=)``
    reads them (see :func:`_level_and_cells`), without refusing one too far off."""
    readings = []  # (how far off by ratio, cells, level)
    for i, size in enumerate(sizes):
        if size:
            mean = math.sqrt(size[0] * size[1])
            ratio = mpp / mean
            for f in {1, max(1, math.floor(ratio)), max(1, math.ceil(ratio))}:
                readings.append((abs(math.log(mean * f / mpp)), f, i))
    nearest = min(readings)[0]
    near = [(f, gap, i) for gap, f, i in readings if gap <= nearest + math.log(MPP_TIE)]
    cells, off, level = min(near)
    size = sizes[level]
    assert size is not None  # only levels of known sizes are read
    return MppReading(level, cells, (size[0] * cells, size[1] * cells), math.exp(off))


def _refuse_mpp(
    source: Any, sizes: Sequence[tuple[float, float] | None], mpp: float, nearest: MppReading
) -> None:
    """Refuse ``mpp`` that no level of ``source`` comes within :data:`MPP_LIMIT` of, as it is
    or in whole cells (``nearest``: the nearest reading), naming what to ask for instead."""
    known = [(math.sqrt(s[0] * s[1]), i, s) for i, s in enumerate(sizes) if s]
    finest, level, smallest = min(known)
    if mpp < finest:
        raise ParameterError(
            f"mpp={mpp:g} µm is finer than the finest level of {source} "
            f"({pixel_size_text(smallest)}, level {level}), by more than "
            f"{MPP_LIMIT - 1:.0%}: read that level with level={level}, or ask for "
            f"mpp={finest:.4g} or more"
        )
    got = math.sqrt(nearest.size[0] * nearest.size[1])
    levels = ", ".join(pixel_size_text(s) for _, _, s in known)
    raise ParameterError(
        f"mpp={mpp:g} µm: no level of {source} ({levels}), "
        f"as it is or averaged over whole f x f cells, comes within {MPP_LIMIT - 1:.0%} of it; "
        f"the nearest is {pixel_size_text(nearest.size)} ({reading_text(nearest)}, "
        f"{nearest.off - 1:.0%} off): ask for mpp={got:.4g}, or resample the image to "
        f"{mpp:g} µm pixels with another tool"
    )


def reading_text(reading: MppReading) -> str:
    """What a reading reads: ``level 1``, ``level 0 in 2 x 2 cells``."""
    cells = reading.cells
    return f"level {reading.level}" + (f" in {cells} x {cells} cells" if cells > 1 else "")


#: The largest side a level is read in to be averaged over cells (4096² RGB bytes: 50 MB).
_CELL_READ = 4096


def _for_cells(request: _Request, cells: int) -> _Request:
    """The request of a level read to be averaged over ``cells`` × ``cells`` pixels: chunks of
    whole cells, ``cells`` times the target but at most :data:`_CELL_READ` (or the target) on a
    side, so that a task reads a bounded part of the level; :func:`_binned` then chunks the
    averaged image as ``request`` asks (its halo and stride are the averaged image's)."""
    if cells == 1:
        return request
    target = tuple(min(t * cells, max(t, _CELL_READ)) for t in request.target)
    return request._replace(target=target, halo=0, stride=cells)


def _binned(image: xr.DataArray, cells: int, request: _Request) -> xr.DataArray:
    """``image`` averaged over ``cells`` × ``cells`` pixels (the last partial row and column
    of cells dropped), lazily and block by block: the mean of each cell in its dtype (integers
    rounded), a cell holding a missing pixel missing (NaN, or the ``_FillValue`` a pixel
    equals in every channel); coordinates along y and x averaged alike (a cell's centre is the
    mean of its pixels' centres), then chunked as ``request`` asks of the binned image."""
    if cells == 1:
        return image
    ny, nx = image.sizes["y"] // cells * cells, image.sizes["x"] // cells * cells
    if ny == 0 or nx == 0:
        raise ParameterError(
            f"the image ({image.sizes['y']} x {image.sizes['x']} pixels) is smaller than one "
            f"cell of the {cells} x {cells} pixels that the mpp asked for averages: ask for a "
            "smaller mpp"
        )
    image = image.isel(y=slice(0, ny), x=slice(0, nx))
    dims = list(image.dims)
    iy, ix = dims.index("y"), dims.index("x")
    channel = next((i for i, d in enumerate(dims) if d not in ("y", "x")), None)
    fill = image.attrs.get("_FillValue")
    dtype = image.dtype

    # a cell's pixels along their own axes, after the cells' (y before x in either order)
    cell_axes = (iy + 1, ix + 2) if iy < ix else (iy + 2, ix + 1)

    def mean(block: np.ndarray) -> np.ndarray:
        out = block.reshape(_split(block.shape, iy, ix, cells)).mean(cell_axes, dtype=np.float64)
        if fill is not None:  # a pixel equal to it in every channel is missing, and its cell
            missing = block == fill
            if channel is not None:
                missing = missing.all(axis=channel, keepdims=True)
            hole = missing.reshape(_split(missing.shape, iy, ix, cells)).any(cell_axes)
            out = np.where(hole, fill, out)
        if np.dtype(dtype).kind in "iub":
            out = np.rint(out)
        return out.astype(dtype)

    reduced = tuple(c if a not in (iy, ix) else tuple(n // cells for n in c)
                    for a, c in enumerate(image.data.chunks))  # fmt: skip
    data = image.data.map_blocks(mean, chunks=reduced, dtype=dtype)
    coords = {}
    for name, coord in image.coords.items():
        along = {d: cells for d in coord.dims if d in ("y", "x")}
        if along:
            coords[name] = coord.coarsen(along).mean().variable
        else:
            coords[name] = coord.variable
    binned = xr.DataArray(data, dims=image.dims, coords=coords, name=image.name,
                          attrs=dict(image.attrs))  # fmt: skip
    binned.encoding = {k: v for k, v in image.encoding.items() if k != "preferred_chunks"}
    rows, cols = plan_chunks((binned.sizes["y"], binned.sizes["x"]),
                             tiles=(max(binned.data.chunks[iy]), max(binned.data.chunks[ix])),
                             target=request.target, halo=request.halo,
                             stride=request.stride)  # fmt: skip
    binned = binned.chunk({"y": rows, "x": cols})
    binned.encoding["preferred_chunks"] = {"y": max(rows), "x": max(cols)}
    return binned.assign_attrs(source_binning=cells)


def _split(shape: Sequence[int], iy: int, ix: int, cells: int) -> list[int]:
    """``shape`` with its y and x axes each split into (cells of ``cells``, ``cells``)."""
    split: list[int] = []
    for axis, n in enumerate(shape):
        split += [n // cells, cells] if axis in (iy, ix) else [n]
    return split


def _choose_level(
    source: Any, sizes: Sequence[tuple[float, float] | None], level: int, mpp: float | None
) -> int:
    """The level asked for: ``level``, or the one whose pixel size is nearest ``mpp`` µm (by
    ratio, as a pyramid's levels are spaced), with one line saying what is wrong otherwise."""
    if mpp is None:
        if not 0 <= level < len(sizes):
            raise ParameterError(
                f"level must be in 0..{len(sizes) - 1} for {source} (its pyramid levels), "
                f"got {level}"
            )
        return level
    if level != 0:
        raise ParameterError(f"give level or mpp, not both (got level={level}, mpp={mpp})")
    if not (isinstance(mpp, int | float) and np.isfinite(mpp) and mpp > 0):
        raise ParameterError(f"mpp must be a positive pixel size in µm, got {mpp!r}")
    if sizes[0] is None:
        raise ParameterError(
            f"mpp={mpp} needs the pixel size of {source}, which it does not record; pick a "
            "pyramid level with level= instead"
        )
    gaps = [abs(np.log(np.sqrt(s[0] * s[1]) / mpp)) if s else np.inf for s in sizes]
    return int(np.argmin(gaps))


def _physical_coords(
    shape: tuple[int, int], scale: tuple[float, float], offset: tuple[float, float]
) -> dict[str, Any]:
    """``y`` and ``x`` coords in µm: the centres of the pixels, ``offset + scale * index``."""
    return {
        dim: (dim, offset[i] + scale[i] * np.arange(shape[i]), {"units": UNITS})
        for i, dim in enumerate(("y", "x"))
    }


def _labelled(
    data: da.Array, dims: Sequence[str], name: str, tiles: dict[str, int] | None
) -> xr.DataArray:
    """The DataArray of an opened image, with its native tiles in ``preferred_chunks``."""
    out = xr.DataArray(data, dims=tuple(dims), name=name)
    if tiles is not None:
        out.encoding["preferred_chunks"] = dict(tiles)
    return out


# ----------------------------------------------------------------------------------- arrays


def _dims_for(shape: tuple[int, ...], what: Any = "an array") -> tuple[str, ...]:
    """Dims of an unlabelled array, told from its shape where the shape can tell: (y, x);
    (y, x, c) with at most 4 channels last; (c, y, x) with one plane first. A first axis of
    2 to 4 planes is refused: it may hold colour channels (a planar RGB array) or the planes of
    a z-stack or time series (``(z, y, x)`` is how stacks are stored), and reading a stack as
    colour mixes its planes into one image."""
    if len(shape) == 2:
        return ("y", "x")
    if len(shape) == 3 and shape[-1] <= 4:
        return ("y", "x", "c")
    if len(shape) == 3 and shape[0] == 1:
        return ("c", "y", "x")
    if len(shape) == 3 and shape[0] <= 4:
        raise DimensionError(
            f"cannot tell whether the first axis of {what} (shape {shape}) holds colour "
            "channels or the planes of a stack: name its axes, dims=('c', 'y', 'x') for colour "
            "or dims=('z', 'y', 'x') with plane={'z': 0} for a stack (--dims c,y,x, or --dims "
            "z,y,x --plane z=0, on the command line)"
        )
    raise DimensionError(
        f"cannot tell the dims of {what} of shape {shape}: name its axes with dims= (a "
        "DataArray with dims ('y', 'x') or ('y', 'x', 'c') also works), or select a 2-D plane "
        "first"
    )


def _checked_dims(dims: Sequence[str]) -> tuple[str, ...]:
    """``open_image``'s ``dims``: distinct axis names, ``y`` and ``x`` among them."""
    if isinstance(dims, str) or not all(isinstance(d, str) and d for d in dims):
        raise ParameterError(
            f"dims must be a sequence of axis names such as ('c', 'y', 'x'), got {dims!r}"
        )
    names = tuple(dims)
    if len(set(names)) != len(names) or not {"y", "x"} <= set(names):
        raise ParameterError(f"dims must name each axis once, 'y' and 'x' among them, got {names}")
    return names


def _axes_of(
    recorded: Sequence[str] | None,
    shape: tuple[int, ...],
    given: tuple[str, ...] | None,
    what: Any,
) -> tuple[str, ...]:
    """The dims of a source: those it records, else those the caller named (``dims``), else
    those its shape tells (:func:`_dims_for`). Names given for a source that records others are
    refused (they would relabel it)."""
    if given is None:
        return tuple(recorded) if recorded is not None else _dims_for(shape, what)
    if len(given) != len(shape):
        raise ParameterError(
            f"dims={given} names {len(given)} axes; {what} has {len(shape)} (shape {shape})"
        )
    if recorded is not None and tuple(recorded) != given:
        raise ParameterError(
            f"dims={given} names the axes of an unlabelled array; {what} records its own, "
            f"{tuple(recorded)}: leave dims out"
        )
    return given


def length_pixel_size_um(image: xr.DataArray) -> tuple[float, float] | None:
    """The pixel size (y, x) in µm of an image whose regular y and x coords are lengths (a
    ``units`` attr such as ``"µm"``, as :func:`open_image` gives a slide's), else None. None
    for an image with a CRS too: its coords in ``metre`` are a map projection's, and its pixel
    size is measured on the ground."""
    if crs_wkt(image) is not None:
        return None
    steps = pixel_steps(image)
    if steps is None:
        return None
    units = [image.coords[dim].attrs.get("units") for dim in ("y", "x")]
    sizes = [micrometres(step, unit) for step, unit in zip(steps, units, strict=True)]
    if None in units or None in sizes:
        return None
    return sizes[0], sizes[1]


def _dataarray_at(image: xr.DataArray, mpp: float, request: _Request) -> xr.DataArray:
    """A DataArray at ``mpp`` µm per pixel, as :func:`open_image` reads a file's level
    (:func:`_level_and_cells`: the nearest pixel size, as it is or averaged over f × f cells by
    :func:`_binned`); its pixel size comes from its coords."""
    size = length_pixel_size_um(image) if {"y", "x"} <= set(map(str, image.dims)) else None
    if size is None:
        raise ParameterError(
            f"mpp={mpp} needs the DataArray's pixel size: regular y and x coords with a "
            "length as their units attr (\"µm\"), as open_image gives a slide's; a CRS's are "
            "on the ground"
        )
    _, cells = _level_and_cells("the DataArray", [size], 0, mpp)
    if cells == 1:
        return image
    lazy = isinstance(image.data, da.Array)
    binned = _binned(image if lazy else image.chunk(), cells, request)
    binned = binned.assign_attrs(source_pixel_size_um=[size[0] * cells, size[1] * cells])
    return binned if lazy else compute_collections([binned])[0]


def _rechunked(image: xr.DataArray, request: _Request) -> xr.DataArray:
    """A DataArray in the planner's chunks of its spatial dims (colour one chunk), as
    :func:`open_image` plans a file's: a NumPy-backed one sliced in place (:func:`dask_view`),
    a Dask-backed one rechunked."""
    y, x, _ = image_dims(image)
    dims = ["y" if d == y else "x" if d == x else str(d) for d in image.dims]
    native = image.data.chunksize if isinstance(image.data, da.Array) else (1,) * image.ndim
    if not isinstance(image.data, da.Array):  # in memory: picking channels reads nothing
        request = request._replace(picks=False)
    planned, _ = _plan(image.shape, dims, native, request)
    if isinstance(image.data, da.Array):
        return image.chunk(dict(zip(image.dims, planned, strict=True)))
    return image.copy(data=dask_view(np.asarray(image.data), planned))


def _open_array(source: Any, request: _Request, name: str, what: Any = "the array") -> xr.DataArray:
    """Wrap a NumPy or Dask array (or a :class:`_NpyFile`), not copied, reading the ``plane``
    of a stack; a Dask array's chunks count as its native tiles. ``what``: the source, as
    messages name it."""
    shape = tuple(source.shape)
    dims = _axes_of(None, shape, request.dims, what)
    native = source.chunksize if isinstance(source, da.Array) else (1,) * source.ndim
    if not isinstance(source, da.Array):  # in memory or mapped: a pick costs no read
        request = request._replace(picks=False)
    selection, planned, tiles = _read_plan(what, dims, shape, native, request, source.dtype)
    if isinstance(source, da.Array):
        data = source if source.chunks == planned else source.rechunk(planned)
    else:
        tiles = None
        data = dask_view(source, planned, name=getattr(source, "token", None))
    return _plane_image(data, dims, selection, name, tiles, request)


# ------------------------------------------------------------------------------------- TIFF


class _TiffInfo(NamedTuple):
    """What opening a TIFF needs: its levels, whether it is a GeoTIFF, and its nodata text."""

    #: ``(axes, shape, dtype, (tile rows, tile columns))`` of every level of the first series
    levels: list[tuple[str, tuple[int, ...], np.dtype, tuple[int, int]]]
    is_geotiff: bool
    nodata: str | None
    #: the (y, x) size of a pixel of level 0 in µm, when the file says it
    pixel_size: tuple[float, float] | None
    #: a GeoTIFF's (y, x) pixel size in the units of its CRS, and that unit's name
    geo_pixel_size: tuple[tuple[float, float], str] | None = None
    #: the channel that is an alpha (opacity) channel (ExtraSamples: the last of RGBA, or of
    #: a drone's five bands and alpha), None without one
    alpha: int | None = None
    #: the (y, x) centre of level 0's first pixel in µm (an xfskde OME-TIFF's origin), else 0
    origin: tuple[float, float] = (0.0, 0.0)
    #: the index of the series (the image of a multi-image file) described
    series: int = 0
    #: the first page's Orientation tag (1: rows top to bottom, columns left to right)
    orientation: int = 1
    #: the names of the channels (OME-XML ``Channel Name``), when the file gives them
    channel_names: tuple[str, ...] | None = None
    #: the entries of the colour map of a palette image whose values are data the map only
    #: shows (Photometric 3 in a GeoTIFF or GDAL raster, an OME-TIFF or an ImageJ TIFF:
    #: classes, labels, a lookup table over intensities), 0 for any other
    palette: int = 0
    #: the series holding the described one's transparency mask (GDAL's internal mask: pages
    #: of NewSubfileType 4 beside each level), if it has one
    mask_series: int | None = None
    #: for an image that stores 0 as white (Photometric 0, MinIsWhite), the value that is
    #: black (2^bits - 1 of an unsigned integer image, 1 of a bilevel one), else None
    white_is_zero: int | None = None
    #: the file of the image's transparency mask beside it (GDAL's ``ortho.tif.msk``:
    #: :func:`xfskde.io._tiff.mask_sidecar`), when it has no mask inside, and the (y, x)
    #: shapes of that file's levels
    mask_file: Location | None = None
    mask_shapes: tuple[tuple[int, int], ...] = ()
    #: whether the image is CMYK (Photometric 5, Separated, of InkSet 1 and four inks, 8 or
    #: 16 bits): its inks are read as RGB (:func:`_cmyk_rgb`)
    cmyk: bool = False
    #: why the image's values cannot be read as light (a MinIsWhite image of floats, inks other
    #: than CMYK): said when it is opened or described, else None
    refused: str | None = None
    #: the colours, ``(entries, 3)`` uint8, of a palette image whose colours are the picture
    #: (a scanner's or an image editor's: :func:`_colour_map`), read as RGB; else None
    colours: np.ndarray | None = None
    #: for every level, whether it is a local file's uncompressed strips, read out of a memory
    #: map (:func:`xfskde.io._tiff.mapped_strips`): its chunks are planned without strips
    mapped: tuple[bool, ...] = ()


#: GeoKey unit names as they are usually written.
_GEO_UNIT_NAMES = {"Meter": "m", "Foot": "ft", "Foot_US_Survey": "US survey ft", "Degree": "°"}


def _geo_pixel_size(tif: tifffile.TiffFile) -> tuple[tuple[float, float], str] | None:
    """A GeoTIFF's (y, x) pixel size from its GeoTransform, in the units of its CRS."""
    geo = tif.geotiff_metadata or {}
    if "ModelTransformation" in geo:
        m = np.asarray(geo["ModelTransformation"], float).reshape(-1)
        size = (float(np.hypot(m[1], m[5])), float(np.hypot(m[0], m[4])))
    elif "ModelPixelScale" in geo:
        scale = geo["ModelPixelScale"]
        size = (abs(float(scale[1])), abs(float(scale[0])))
    else:
        return None
    if not all(s > 0 for s in size):
        return None
    geographic = getattr(geo.get("GTModelTypeGeoKey"), "name", "") == "Geographic"
    key = geo.get("GeogAngularUnitsGeoKey" if geographic else "ProjLinearUnitsGeoKey")
    name = getattr(key, "name", None) or (str(key) if key is not None else "CRS units")
    return size, _GEO_UNIT_NAMES.get(name, name)


def _ome_pixels(tif: tifffile.TiffFile, series: int = 0) -> dict[str, Any]:
    """The OME-XML ``Pixels`` element of an OME-TIFF's image ``series``, as a dict (empty for
    a TIFF without OME-XML): its physical sizes and its channels."""
    if not tif.is_ome:
        return {}
    images = tifffile.xml2dict(tif.ome_metadata).get("OME", {}).get("Image", {})
    images = images if isinstance(images, list) else [images]
    return images[min(series, len(images) - 1)].get("Pixels", {})


def _some_named(names: Sequence[Any]) -> tuple[str, ...] | None:
    """Channel names where the file gives some: each channel's own, its index as text where
    it has none (what ``channels=`` reads as that index); None where none has one."""
    if not any(names):
        return None
    return tuple(str(n) if n else str(i) for i, n in enumerate(names))


def _ome_channel_names(pixels: dict[str, Any]) -> tuple[str, ...] | None:
    """The ``Name`` of each ``Channel`` of an OME-XML ``Pixels`` element (:func:`_ome_pixels`;
    a channel without one named by its index, :func:`_some_named`; None where none has one)."""
    channels = pixels.get("Channel", [])
    channels = channels if isinstance(channels, list) else [channels]
    return _some_named([c.get("Name") if isinstance(c, dict) else None for c in channels])


def _channel_named(image: xr.DataArray, names: Sequence[str] | None) -> xr.DataArray:
    """``image`` with its channels' ``names`` as the coordinate of its ``c`` dim, where it has
    one of that many channels (a file's channel names: DAPI, CD3, CD8; two channels of one
    name keep it, and ``channels=`` refuses to pick by it); else as it is."""
    if not names or "c" not in image.dims or "c" in image.coords:
        return image
    names = [str(n) for n in names]
    if len(names) != image.sizes["c"]:
        return image
    return image.assign_coords(c=names)


class _PixelSize(NamedTuple):
    """A TIFF series' pixel size and where it was read (:func:`_tiff_pixel_size`)."""

    #: the (y, x) size of a pixel of level 0 in µm, None where the file gives none
    size: tuple[float, float] | None
    #: where ``size`` was read ("the OME-XML PhysicalSizeY/X"), or why none was ("not
    #: recorded", resolution tags in inches left unread): ``xfskde info``'s pixel_size row
    source: str


#: ResolutionUnit names, for what ``xfskde info`` says of the tags it read.
_RESOLUTION_UNIT_NAMES = {3: "centimetre", 4: "millimetre", 5: "micrometre"}


def _tiff_pixel_size(tif: tifffile.TiffFile, series: int, pixels: dict[str, Any]) -> _PixelSize:
    """The (y, x) pixel size of level 0 of a series in µm, and where it was read: from
    OME-XML (its ``Pixels`` element, :func:`_ome_pixels`), an Aperio SVS description (MPP),
    ImageJ's unit, or resolution tags in centimetres, millimetres or micrometres.

    One of OME's ``PhysicalSizeX`` and ``PhysicalSizeY`` without the other is no pixel size
    (the schema gives a default to their units, µm, not to the sizes, and pixels need not be
    square): not used, with a warning naming the one that is missing, unless another record
    below gives both."""
    page = tif.series[series].levels[0].keyframe
    half = None
    if tif.is_ome:
        y = micrometres(pixels.get("PhysicalSizeY"), pixels.get("PhysicalSizeYUnit"))
        x = micrometres(pixels.get("PhysicalSizeX"), pixels.get("PhysicalSizeXUnit"))
        if y and x:
            return _PixelSize((y, x), "from the OME-XML PhysicalSizeY/X")
        given = [a for a in "XY" if pixels.get(f"PhysicalSize{a}") is not None]
        if len(given) == 1:
            half = given[0]
    found = _other_pixel_size(tif, page)
    if found.size is None and half is not None:
        other = "Y" if half == "X" else "X"
        warnings.warn(
            f"{tif.filename}: its OME-XML gives PhysicalSize{half} "
            f"({pixels[f'PhysicalSize{half}']} {pixels.get(f'PhysicalSize{half}Unit', 'µm')}) but "
            f"no PhysicalSize{other}, which OME does not default: its pixel size is not read "
            f"(pixels may not be square); add PhysicalSize{other} to its OME-XML (tifffile's "
            "tiffcomment) to read it",
            UserWarning,
            stacklevel=5,
        )
        return _PixelSize(None, f"not read: the OME-XML gives PhysicalSize{half} without "
                          f"PhysicalSize{other}")  # fmt: skip
    return found


def _other_pixel_size(tif: tifffile.TiffFile, page: Any) -> _PixelSize:
    """The (y, x) pixel size in µm of a TIFF page from what is not OME-XML, and where it was
    read: an Aperio SVS description (MPP), ImageJ's unit, or resolution tags in centimetres,
    millimetres or micrometres (:func:`_tiff_pixel_size`). Tags in inches are not read (a
    photograph's 72 or 300 "dpi" is a printing hint): the source says so, with what they
    would give."""
    if tif.is_svs and (svs := _svs_pixel_size(tif, page)) is not None:
        return svs
    per_unit, source = None, ""
    unit = int(page.resolutionunit)
    if tif.is_imagej and (tif.imagej_metadata or {}).get("unit") is not None:
        per_unit = micrometres(1.0, tif.imagej_metadata["unit"])
        source = "from the ImageJ unit"
    elif unit in _RESOLUTION_UNITS:
        per_unit = _RESOLUTION_UNITS[unit]
        source = "from the TIFF resolution tags"
        if unit != 3:  # the usual unit goes without saying
            source += f" (pixels per {_RESOLUTION_UNIT_NAMES[unit]})"
    x_res, y_res = page.get_resolution()
    written = x_res > 0 and y_res > 0 and (x_res, y_res) != (1.0, 1.0)
    if per_unit and written:
        return _PixelSize((per_unit / y_res, per_unit / x_res), source)
    if written and unit == 2 and not source:  # not ImageJ's own unit, which is read
        dpi = f"{x_res:g} dpi" if x_res == y_res else f"{x_res:g} x {y_res:g} dpi (x, y)"
        um = (f"{25400 / x_res:.4g}" if x_res == y_res
              else f"({25400 / y_res:.4g}, {25400 / x_res:.4g})")  # fmt: skip
        return _PixelSize(None, f"not read: resolution tags in inches ({dpi}; {um} µm were "
                          "they the sample's), taken for a printing hint")  # fmt: skip
    return _PixelSize(None, "not recorded")


def tiff_pixel_size_source(tif: tifffile.TiffFile, series: int = 0) -> str:
    """Where :func:`open_image` reads the pixel size of a TIFF's series (not a GeoTIFF's) —
    ``from the OME-XML PhysicalSizeY/X``, ``from the SVS MPP``, ``from the ImageJ unit``,
    ``from the TIFF resolution tags`` — or why it reads none (``not recorded``, tags in
    inches): what ``xfskde info`` says of it. The warning of a half OME size is left to the
    opening, which gives it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return _tiff_pixel_size(tif, series, _ome_pixels(tif, series)).source


#: The size an Aperio description gives a downsampled copy of the slide (a reduced level, the
#: thumbnail): ``46000x32914 -> 1024x732``, the last arrow's when a re-saved slide has two.
_SVS_REDUCED = re.compile(r"->\s*(\d+)x(\d+)(?!.*->)", re.DOTALL)


def _svs_pixel_size(tif: tifffile.TiffFile, page: Any) -> _PixelSize | None:
    """The (y, x) pixel size in µm of a page of an Aperio SVS file: the ``MPP`` of its first
    page (the baseline, whose pixels MPP measures) for that page, times the baseline's size
    over the page's for a downsampled copy whose description says so (``46000x32914 ->
    1024x732``: a reduced level, the thumbnail); None for another page (the label, the
    macro photograph: not the slide's pixels) and where the baseline gives no MPP."""
    first = tif.pages.first

    def mpp(described: Any) -> float | None:
        text = described.description or ""
        if not text.startswith("Aperio "):
            return None
        return micrometres(tifffile.tifffile.svs_description_metadata(text).get("MPP"), "µm")

    size = mpp(first)
    if size is None:
        return None
    if page.index == first.index:
        return _PixelSize((size, size), "from the SVS MPP")
    reduced = _SVS_REDUCED.search((page.description or "").split("|", 1)[0])
    if reduced is None or (int(reduced[2]), int(reduced[1])) != (page.imagelength, page.imagewidth):
        return None
    scaled = (size * first.imagelength / page.imagelength,
              size * first.imagewidth / page.imagewidth)  # fmt: skip
    return _PixelSize(scaled, "from the SVS MPP of the first image, scaled to this copy's size")


#: The namespace of the OME key-value pairs (``MapAnnotation``) that hold where the first
#: pixel's centre is, in µm (``y``, ``x``): :func:`xfskde.io.write_ome_tiff` writes them for
#: maps on a stride grid, whose first cell's centre is not at 0 (OME-TIFF has no translation).
ORIGIN_NAMESPACE = "xfskde.origin"


def ome_pairs(xml: str, namespace: str) -> list[tuple[str, dict[str, str]]]:
    """The key-value pairs (OME ``MapAnnotation``) of ``namespace`` that annotate each image of
    an OME-XML document: ``(image name, pairs)`` for every image, in the document's order
    (``{}`` for an image without such pairs)."""

    def name(element: ElementTree.Element) -> str:  # the tag without its namespace
        return element.tag.rsplit("}", 1)[-1]

    root = ElementTree.fromstring(xml)
    annotations = {
        element.get("ID"): {m.get("K", ""): m.text or "" for m in element.iter() if name(m) == "M"}
        for element in root.iter()
        if name(element) == "MapAnnotation" and element.get("Namespace") == namespace
    }
    found = []
    for image in (e for e in root if name(e) == "Image"):
        refs = [r.get("ID") for r in image if name(r) == "AnnotationRef"]
        found.append((image.get("Name", ""), next((annotations[r] for r in refs
                                                   if r in annotations), {})))  # fmt: skip
    return found


def gdal_pairs(text: str | None) -> dict[str, str]:
    """The dataset-level items of a GDAL_METADATA tag's text (as GDAL and rioxarray write the
    attrs of a DataArray: a GeoTIFF xfskde wrote holds its result's attrs there), as text
    values; {} for no tag or one that is not XML."""
    if not text:
        return {}
    try:
        items = ElementTree.fromstring(text).iter("Item")
    except ElementTree.ParseError:
        return {}
    # GDAL escapes each value for XML before the document escapes it again: unescape twice
    return {
        i.get("name", ""): html.unescape(i.text or "") for i in items if i.get("sample") is None
    }


def _ome_origin(xml: str, series: int = 0) -> tuple[float, float]:
    """The (y, x) centre of an image's first pixel in µm from its xfskde origin pairs
    (:data:`ORIGIN_NAMESPACE`), else (0, 0): the centre convention of every OME-TIFF."""
    images = ome_pairs(xml, ORIGIN_NAMESPACE)
    pairs = images[series][1] if series < len(images) else {}
    try:
        return float(pairs["y"]), float(pairs["x"])
    except (KeyError, ValueError):
        return 0.0, 0.0


#: GDAL's ModelTransformationTag: the GeoTransform of a TIFF, written without GeoKeys for an
#: image without a CRS.
_MODEL_TRANSFORMATION = 34264


def _frame_origin(page: Any, size: tuple[float, float] | None) -> tuple[float, float]:
    """The (y, x) centre of a TIFF's first pixel in µm from the GeoTransform GDAL writes
    without a CRS (its ModelTransformationTag), where its steps are the resolution tags' pixel
    size (``size``, µm: its unit then theirs) and it neither turns nor flips; else (0, 0).

    Labels of a microscope image, and its abundances, written as a ``*.tif`` carry both (the
    cells of a slide read at ``mpp=`` begin half a cell before level 0's first pixel centre:
    -0.125 µm for cells of 4 × 0.25 µm), and were read back at 0 µm."""
    tag = page.tags.get(_MODEL_TRANSFORMATION)
    if tag is None or size is None:
        return 0.0, 0.0
    m = np.asarray(tag.value, dtype=np.float64).reshape(-1)
    if m.size != 16 or not np.all(np.isfinite(m)) or m[1] != 0 or m[4] != 0:
        return 0.0, 0.0
    (sy, sx), steps = size, (float(m[5]), float(m[0]))
    if not (np.isclose(steps[0], sy, rtol=1e-4) and np.isclose(steps[1], sx, rtol=1e-4)):
        return 0.0, 0.0  # other units, or another grid: not this pixel size's frame
    return float(m[7] + steps[0] / 2), float(m[3] + steps[1] / 2)


def _refuse_series(series: Any, what: Any) -> None:
    """Refuse a ``series`` other than the first (the default) for ``what``, which holds one
    image (no TIFF, no bioformats2raw OME-Zarr)."""
    first = isinstance(series, int | np.integer) and not isinstance(series, bool) and series == 0
    if not first:
        raise ParameterError(
            f"series picks an image of a file that holds several (a TIFF, a bioformats2raw "
            f"OME-Zarr); {what} holds one: drop series"
        )


def _pick_series(names: Sequence[str], series: int | str, path: Any) -> int:
    """The index of the image ``series`` names among a file's images of ``names`` ("" for
    one without a name): an index, or a name.

    Raises
    ------
    ParameterError
        For an index the file does not have or a name none of its images has, listing them.
    """
    listed = ", ".join(f"{i} {n!r}" if n else str(i) for i, n in enumerate(names))
    if isinstance(series, str):
        if series in names:
            return list(names).index(series)
        raise ParameterError(f"{path} has no image named {series!r}; its series are {listed}")
    if isinstance(series, bool) or not isinstance(series, int | np.integer):
        raise ParameterError(f"series must be an index or an image's name, got {series!r}")
    if not -len(names) <= series < len(names):
        raise ParameterError(f"{path} has no series {series}; its series are {listed}")
    return int(series) % len(names)


def _series_index(tif: tifffile.TiffFile, series: int | str, path: Any) -> int:
    """The index of the series ``series`` names: an index, or an image's name (OME ``Name``).

    Raises
    ------
    ParameterError
        For an index the file does not have or a name none of its images has, listing them.
    """
    names = [s.name or "" for s in tif.series]
    if not names:  # a file cut before its first image's description (GDAL writes it last)
        raise ImageReadError(
            f"{path} holds no image: it is damaged or truncated (its header names no page "
            "that is there); copy or download it again"
        )
    return _pick_series(names, series, path)


#: What tifffile logs when a TIFF's structure points beyond its end or into nothing: a page
#: chain or a tag value cut off. It then goes on with the pages it found, so a z-stack cut
#: short reads as the single grey page before the cut.
_DAMAGE_MESSAGES = ("invalid page offset", "invalid value offset", "invalid tag value offset")


class _DamageLog(logging.Handler):
    """Collects, for the thread that opens a TIFF, what tifffile logs of a damaged structure."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.thread == self.thread and any(m in message for m in _DAMAGE_MESSAGES):
            self.found.append(message)


@contextlib.contextmanager
def _refusing_damage(path: Any) -> Iterator[None]:
    """Raise :class:`ImageReadError` if tifffile found the structure of ``path`` damaged while
    the block ran (it only logs it, and reads on with what it found)."""
    log = _DamageLog()
    logger = logging.getLogger("tifffile")
    logger.addHandler(log)
    try:
        yield
    finally:
        logger.removeHandler(log)
    if log.found:
        raise ImageReadError(
            f"{path} is damaged or truncated (tifffile: {log.found[-1]}): its images cannot be "
            "told apart from what is left of it; copy or export it again"
        )


def _refuse_cut_short(tif: tifffile.TiffFile, series: int, path: Any) -> None:
    """Refuse a TIFF whose tiles or strips start beyond its end: a copy or download cut short
    that kept its header (tifffile writes it first). Its header opens and its first blocks
    compute, and a whole slide failed only at the block that reached the cut, hours in; any
    reader fails there. Checked on every page of each level of the series whose IFD was read
    (a stack cut short loses its page chain: :func:`_refusing_damage`). An uncompressed
    segment must end within the file; a compressed one that starts within it and runs past its
    end is left to its decoder, as libtiff leaves it (some writers count a few bytes too many).

    Raises
    ------
    ImageReadError
        Naming the level, how many of its segments are gone — or from which of its pages on,
        for a level of several pages (a stack: the pages past the cut, and the metadata
        written after them, cannot be counted) — and the file's size.
    """
    size = tif.filehandle.size

    def gone(page: Any) -> int:
        offsets = np.asarray(page.dataoffsets, np.int64)
        counts = np.asarray(page.databytecounts, np.int64)
        # an uncompressed segment needs all its bytes; a compressed one may end early
        needed = counts if page.compression == 1 else np.minimum(counts, 1)
        return int(np.count_nonzero((counts > 0) & (offsets + needed > size)))

    for number, level in enumerate(tif.series[series].levels):
        planes = list(level.pages)  # None: a page whose IFD lies past the end
        pages = [p for p in planes if p]
        if not pages or (len(pages) == len(planes) and not gone(pages[-1]) and not gone(pages[0])):
            continue
        if len(planes) > 1:  # a stack, whose pages past the cut may be unreadable: which
            first = next(i for i, p in enumerate(planes) if p is None or gone(p))
            what = f"the pages of level {number} after the first {first}"
        else:
            kind = "tiles" if pages[0].is_tiled else "strips"
            what = f"{gone(pages[0])} of the {len(pages[0].dataoffsets)} {kind} of level {number}"
        raise ImageReadError(
            f"cannot read {path} (truncated: {what} lie past its end, at "
            f"byte {size:,}): the file was cut short; copy or download it again"
        )


def _alpha_channel(page: Any) -> int | None:
    """The channel of a TIFF page that is an alpha channel — the first extra sample marked
    associated or unassociated alpha (ExtraSamples 1 or 2), after the photometric samples —
    else None."""
    extras = [int(e) for e in (page.extrasamples or ())]
    alpha = next((i for i, e in enumerate(extras) if e in (1, 2)), None)
    if alpha is None or page.samplesperpixel < 2:
        return None
    return int(page.samplesperpixel) - len(extras) + alpha


#: ExtraSamples values, as ``xfskde info`` names them.
_EXTRA_SAMPLES = {0: "unspecified", 1: "associated alpha", 2: "unassociated alpha"}


def tiff_extra_samples(page: Any) -> list[tuple[str, str]]:
    """What :func:`open_image` does with a TIFF page's extra samples (ExtraSamples: channels
    beyond its grey or RGB), as ``xfskde info``'s rows: ``alpha`` for an alpha channel, which
    is not read as a channel and whose transparent pixels are missing; ``extra_samples`` for
    one of unspecified meaning (a multispectral band, or an alpha its writer did not mark),
    read as a channel. No rows for a page without extra samples."""
    extras = [int(e) for e in (page.extrasamples or ())]
    if not extras or page.samplesperpixel < 2:
        return []
    first = int(page.samplesperpixel) - len(extras)
    alpha = _alpha_channel(page)
    rows = []
    for i, extra in enumerate(extras, first):
        kind = _EXTRA_SAMPLES.get(extra, f"ExtraSamples {extra}")
        if i == alpha:
            rows.append(("alpha", f"channel {i} ({kind}): not read as a channel; its transparent "
                         "pixels (alpha 0) are missing (NaN)"))  # fmt: skip
        else:
            rows.append(("extra_samples", f"channel {i} ({kind}): read as a channel"))
    return rows


def transparency_mask_series(tif: tifffile.TiffFile, index: int) -> int | None:
    """The series of ``tif`` that is series ``index``'s transparency mask, if any: one bit
    per pixel, 0 where there is no data, as GDAL writes beside each level of a JPEG-compressed
    GeoTIFF or COG (``-mask``, ``GDAL_TIFF_INTERNAL_MASK``; an orthophoto's area outside its
    footprint, where JPEG cannot hold a nodata value); its pages of NewSubfileType 4 (mask),
    each level the image's shape."""
    image = tif.series[index]
    if image.keyframe.subfiletype & 4:  # the mask itself, read as an image
        return None
    shapes = [_yx_shape(level.axes, level.shape) for level in image.levels]
    for number, other in enumerate(tif.series):
        if number == index or not other.keyframe.subfiletype & 4 or other.axes != "YX":
            continue
        if [tuple(level.shape) for level in other.levels] == shapes:
            return number
    return None


def _tiff_info(path: Location, series: int | str = 0) -> _TiffInfo:
    """The levels of a series (a stripped level's native chunk is a strip: ``(rows per strip,
    image width)``), whether its first page has GeoTIFF keys, and its GDAL_NODATA text.
    """
    try:
        with (
            _refusing_damage(path),
            path.open_ranged() as file,
            tifffile.TiffFile(file, name=path.name) as tif,
        ):
            index = _series_index(tif, series, path)
            _refuse_cut_short(tif, index, path)
            levels, mapped = [], []
            for level in tif.series[index].levels:
                key = level.keyframe
                rows = key.tilelength or min(key.rowsperstrip or key.imagelength, key.imagelength)
                cols = key.tilewidth or key.imagewidth
                levels.append((level.axes, tuple(level.shape), level.dtype, (rows, cols)))
                mapped.append(path.is_local and mapped_strips(tif, level))
            first = tif.series[index].levels[0].keyframe
            tag = first.tags.get(_GDAL_NODATA)
            nodata = str(tag.value).strip("\x00 ") if tag is not None else None
            geotiff = bool(first.is_geotiff) and index == 0  # GDAL reads the first image
            ome = _ome_pixels(tif, index)  # the OME-XML read once, for sizes and channels
            size = None if geotiff else _tiff_pixel_size(tif, index, ome).size
            geo = _geo_pixel_size(tif) if geotiff else None
            alpha = _alpha_channel(first)
            xml = tif.ome_metadata if tif.is_ome and size else None
            origin = _ome_origin(xml, index) if xml else _frame_origin(first, size)
            turned = first.tags.get(ORIENTATION_TAG)
            orientation = int(turned.value) if turned is not None else 1
            names = _ome_channel_names(ome)
            colours = _colour_map(tif, first)
            palette = 0
            if colours is None and first.photometric == 3 and first.colormap is not None:
                palette = int(np.shape(first.colormap)[-1])  # its values are data: kept
            mask = transparency_mask_series(tif, index)
            inverted, cmyk, refused = _photometric(first, path, tag is not None)
    except _TIFF_ERRORS as exc:
        raise ImageReadError(f"cannot read {path} as a TIFF image: {exc}") from exc
    # GDAL's mask beside the file is the first image's, and one inside it or an alpha band
    # comes first
    sidecar = mask_sidecar(path) if index == 0 and mask is None and alpha is None else None
    return _TiffInfo(levels, geotiff, nodata or None, size, geo, alpha, origin, index,
                     orientation, names, palette, mask, inverted, sidecar,
                     _sidecar_shapes(sidecar, path) if sidecar else (), cmyk,
                     refused, colours, tuple(mapped))  # fmt: skip


def _colour_map(tif: tifffile.TiffFile, page: Any) -> np.ndarray | None:
    """The colours, ``(entries, 3)`` uint8, of a palette TIFF (Photometric 3) whose colours are
    the picture — a scanner's, an image editor's, Pillow's or MATLAB's, no metadata saying
    otherwise — each the high byte of its 16-bit entry, as Pillow reads the map; None for
    any other image, and for a palette image whose values are data the map only shows: a
    GeoTIFF's or GDAL raster's classes (a land cover, xfskde's labels.tif), an OME-TIFF's
    label image (xfskde's ``labels/textures``), an ImageJ TIFF's lookup table. A PIL picture
    of the file is told apart alike, by the tags Pillow read
    (:func:`xfskde._pictures.data_palette`)."""
    if page.photometric != 3 or page.colormap is None:
        return None
    if tif.is_ome or tif.is_imagej or any(code in page.tags for code in GDAL_TAGS):
        return None
    entries = np.asarray(page.colormap, np.uint16).T  # (entries, 3)
    return np.ascontiguousarray(entries >> 8).astype(np.uint8)


def _photometric(page: Any, path: Location, nodata: bool) -> tuple[int | None, bool, str | None]:
    """How a TIFF page's values become light, where they are not its grey or RGB as stored:
    the black of a MinIsWhite image (Photometric 0: 0 is white; read inverted, as viewers
    show it), whether it is CMYK (Photometric 5 of InkSet CMYK: read as RGB), and why it
    cannot be read (None where it can): a MinIsWhite image of signed or floating-point values,
    which TIFF gives no black to invert them against, and inks other than CMYK of 8 or 16 bits
    (or with a GDAL_NODATA value, ``nodata``: a value of inks, not of the RGB read).
    """
    dtype = np.dtype(page.dtype)
    if page.photometric == 0:  # MinIsWhite
        if dtype.kind == "u":
            return 2 ** int(page.bitspersample) - 1, False, None
        if dtype.kind == "b":  # bilevel: a fax, a scanned page
            return 1, False, None
        refused = (
            f"{path} stores {dtype} values with 0 as white (Photometric MinIsWhite), which sets "
            "no black to invert them against: write it with white high (1 - values, for values "
            "in [0, 1]) and read that"
        )
        return None, False, refused
    if page.photometric != 5:  # SEPARATED
        return None, False, None
    tag = page.tags.get(332)  # InkSet: 1 CMYK (the default), 2 other inks
    inkset = int(tag.value) if tag is not None else 1
    inks = int(page.samplesperpixel) - len(page.extrasamples or ())
    if inkset == 1 and inks == 4 and dtype in (np.uint8, np.uint16) and not nodata:
        return None, True, None
    held = f"{inks} inks of InkSet {inkset}" if inkset != 1 or inks != 4 else f"CMYK of {dtype}"
    extra = " with a GDAL_NODATA value" if nodata else ""
    refused = (
        f"{path} stores print inks ({held}, Photometric Separated{extra}), which xfskde reads "
        "as RGB only as CMYK of 8 or 16 bits: convert it to RGB first (magick in.tif "
        "-colorspace sRGB out.tif)"
    )
    return None, False, refused


def tiff_values(tif: tifffile.TiffFile, page: Any, path: Location) -> str | None:
    """How :func:`open_image` reads a TIFF page's values where they are not its grey or RGB as
    stored (for ``xfskde info``): a palette read through its colour map (:func:`_colour_map`)
    or by its indices, MinIsWhite inverted, CMYK as RGB (:func:`_photometric`; what it refuses,
    opening refuses first); None for any other page."""
    if page.photometric == 3 and page.colormap is not None:
        entries = page.colormap.shape[-1]
        if _colour_map(tif, page) is not None:
            return (f"indices of a colour map of {entries} entries, read as the RGB they index "
                    "(a picture's palette: no GeoTIFF, OME or ImageJ metadata)")  # fmt: skip
        return (f"indices of a colour map of {entries} entries (classes or labels the map only "
                "shows: a mask reads them; convert it to RGB to compute on it)")  # fmt: skip
    black, cmyk, _ = _photometric(page, path, _GDAL_NODATA in page.tags)  # refused: on open
    if black is not None:
        return ("0 is white (MinIsWhite): read inverted, 2^bits - 1 less each stored value, as "
                "viewers show it")  # fmt: skip
    if cmyk:
        return ("print inks (CMYK): read as RGB, as Pillow converts it (R = (1 - C)(1 - K); "
                "no ICC profile applied)")  # fmt: skip
    return None


def tiff_mask_file(path: Location) -> Location | None:
    """The file of a TIFF's transparency mask beside it (``.msk``) that :func:`open_image`
    reads with its first image, if any."""
    return _tiff_info(path).mask_file


def _sidecar_shapes(sidecar: Location, path: Location) -> tuple[tuple[int, int], ...]:
    """The (y, x) shapes of the levels of the transparency mask beside a TIFF (``.msk``).

    Raises
    ------
    ImageReadError
        When it is not a TIFF of one mask for all bands (GDAL's per-band masks, which xfskde
        does not read), naming what to do.
    """
    try:
        with (
            _refusing_damage(sidecar),
            sidecar.open_ranged() as file,
            tifffile.TiffFile(file, name=sidecar.name) as tif,
        ):
            mask = tif.series[0]
            axes, shapes = mask.axes, [_yx_shape(level.axes, level.shape) for level in mask.levels]
    except _TIFF_ERRORS as exc:
        raise ImageReadError(
            f"cannot read {sidecar}, the transparency mask beside {path.name}, as a TIFF: {exc}"
        ) from exc
    if axes != "YX":
        raise ImageReadError(
            f"{sidecar.name} holds a transparency mask per band of {path.name} (axes {axes}), "
            "which xfskde does not read: write one mask for all bands (gdal_translate -mask "
            "<band>), or move the .msk file aside to read the image without it"
        )
    return tuple(shapes)


def _geo_labels(
    path: Location, level: int, shape: dict[str, int], vrt: RemoteVrt | None = None
) -> tuple[dict[str, Any], dict[str, Any], str | None] | None:
    """The coords (``x``, ``y``, ``spatial_ref``), attrs and grid-mapping name that
    ``rioxarray.open_rasterio`` gives, the axes' CF attrs added (``standard_name``,
    ``long_name``, ``units``, ``axis``: ``rio.write_coordinate_system``); a VRT at a URL
    opened from its XML as ``vrt`` holds it (not fetched again).

    Only the header is read; the DataArray rioxarray opens is closed at once and none of it but
    NumPy coords and attrs is kept. None, with a :class:`GeoreferencingWarning`, when rioxarray
    is not installed or its grid does not match the level tifffile reads.
    """
    try:
        import rioxarray
    except ImportError:
        warnings.warn(
            f"{path.name} is a GeoTIFF, but rioxarray is not installed: it is opened with pixel "
            "coordinates and no CRS. Install the geo extra (pip install 'xfskde[geo]') to keep "
            "its CRS and coordinates",
            GeoreferencingWarning,
            stacklevel=4,
        )
        return None
    with remote_env(path):  # GDAL not sent after sidecars at a URL
        fs_path = path.filesystem()[1]
        # through fsspec, GDAL's paths resolved (a VRT's ../ sources)
        opener: dict[str, Any] = {} if path.is_local else {"opener": remote_opener(path, vrt)}
        # an overview only when one is asked: rioxarray given overview_level, even None, leaves
        # out the bands' descriptions (their names)
        overview = {"overview_level": level - 1} if level else {}
        with rioxarray.open_rasterio(
            fs_path, mask_and_scale=False, cache=False, parse_coordinates=True, **overview,
            **opener,
        ) as geo:  # fmt: skip
            if geo.sizes.get("y") != shape["y"] or geo.sizes.get("x") != shape["x"]:
                warnings.warn(
                    f"{path.name}: GDAL reads level {level} as {dict(geo.sizes)}, tifffile as "
                    f"{shape}; the CRS and coordinates are not kept",
                    GeoreferencingWarning,
                    stacklevel=4,
                )
                return None
            # CF's names and units of the axes (projection_x_coordinate in metre; longitude in
            # degrees_east), which rioxarray leaves off: xarray, cf-xarray and GDAL's netCDF reader
            # then know what the coordinates are, and the results and stores keep them
            geo = geo.rio.write_coordinate_system()
            coords = {
                str(name): (coord.dims, np.asarray(coord.values), dict(coord.attrs))
                for name, coord in geo.coords.items()
                if set(coord.dims) <= {"y", "x"}
            }
            attrs = {str(k): v for k, v in geo.attrs.items()}
            grid_mapping = geo.encoding.get("grid_mapping")
        if level:  # an overview's bands lack their descriptions, scale and offset: the image's
            with rioxarray.open_rasterio(fs_path, mask_and_scale=False, cache=False,
                                         parse_coordinates=False, **opener) as full:  # fmt: skip
                attrs = {str(k): v for k, v in full.attrs.items()}
        return coords, attrs, grid_mapping if grid_mapping in coords else None


def _georeferenced(
    image: xr.DataArray, geo: tuple[dict[str, Any], dict[str, Any], str | None]
) -> xr.DataArray:
    """``image`` with the labels :func:`_geo_labels` read (a GeoTIFF's, or a raster's read
    through GDAL): its coordinates and CRS, its bands named by their descriptions (as an
    OME-TIFF's channels), rioxarray's attrs and the grid mapping's name."""
    coords, attrs, grid_mapping = geo
    image = image.assign_coords(coords)
    names = attrs.get("long_name")  # GDAL's band descriptions: one per band
    if isinstance(names, tuple) and all(isinstance(n, str) and n for n in names):
        image = _channel_named(image, names)
    image.attrs.update(attrs)
    if grid_mapping is not None:
        image.encoding["grid_mapping"] = grid_mapping
    return image


def _yx_shape(axes: str, shape: Sequence[int]) -> tuple[int, int]:
    return int(shape[axes.index("Y")]), int(shape[axes.index("X")])


def _tiff_level_sizes(info: _TiffInfo) -> list[tuple[float, float] | None]:
    """The (y, x) pixel size of every level in µm: level 0's, times the level's downsampling
    (the ratio of the sizes, as pyramids round odd sides)."""
    if info.pixel_size is None:
        return [None] * len(info.levels)
    full = _yx_shape(info.levels[0][0], info.levels[0][1])
    sizes = []
    for axes, shape, _, _ in info.levels:
        ny, nx = _yx_shape(axes, shape)
        sizes.append((info.pixel_size[0] * full[0] / ny, info.pixel_size[1] * full[1] / nx))
    return sizes


def _tiff_dims(axes: str) -> tuple[str, ...]:
    """The dims of a TIFF series' axes (tifffile's letters: ``YXS`` -> ``(y, x, c)``)."""
    return tuple(_TIFF_AXES.get(a, a.lower()) for a in axes)


def _open_tiff(path: Location, level: int, request: _Request) -> xr.DataArray:
    info = _tiff_info(path, request.series)
    if info.refused is not None:
        raise ImageReadError(info.refused)
    _warn_if_turned(path, info.orientation, "TIFF Orientation")
    levels = info.levels
    sizes = _tiff_level_sizes(info)
    if request.mpp is not None and info.is_geotiff and sizes[0] is None:
        raise ParameterError(
            f"mpp is a pixel size under a microscope, in µm; {path.name} is a GeoTIFF, whose "
            "pixels are measured on the ground in its CRS: pick one of its overviews with level= "
            "(--level; xfskde info lists them)"
        )
    level, cells = _level_and_cells(path, sizes, level, request.mpp)
    axes, shape, dtype, tile = levels[level]
    all_dims = list(_axes_of(_tiff_dims(axes), tuple(shape), request.dims, path))
    if info.mapped[level]:  # uncompressed strips: any rectangle reads only its own rows
        tile = (1, 1)
    else:
        samples = shape[axes.index("S")] if "S" in axes else 1
        _warn_if_large_reads(
            path, "tile" if tile[1] < shape[axes.index("X")] else "strip", tile,
            tile[0] * tile[1] * samples * np.dtype(dtype).itemsize,
            f"rewrite it tiled (gdal_translate -co TILED=YES -co COMPRESS=DEFLATE {path.name} "
            "out.tif, or bfconvert -tilex 512 -tiley 512, or tifffile.imwrite(out, "
            "tifffile.imread(path), tile=(512, 512)))",
        )  # fmt: skip
    native = {"Y": tile[0], "X": tile[1], "C": 1}  # a page per channel (samples: "S")
    native_shape = [native.get(a, n) for a, n in zip(axes, shape, strict=True)]
    selection, planned, tiles = _read_plan(path, all_dims, tuple(shape), native_shape,
                                           _for_cells(request, cells), dtype)  # fmt: skip
    version = path.version()
    data = da.map_blocks(
        functools.partial(read_tiff_block, path, level, version, info.series),
        chunks=planned,
        dtype=dtype,
        meta=np.empty((0,) * len(shape), dtype),
        name=f"xfskde-read-tiff-{tokenize(path.token(), level, version, info.series)}",
    )
    image = _plane_image(data, all_dims, selection, path.stem, tiles, request)
    alpha = info.alpha
    if info.cmyk:  # its inks as RGB; an alpha after them one channel nearer
        image = _cmyk_as_rgb(image)
        alpha = None if alpha is None else alpha - 1
    elif info.colours is not None:  # the colours its values index
        image = _palette_as_rgb(image, info.colours)
    else:
        image = _channel_named(image, info.channel_names)
    if info.series:  # another image than the first: say which
        image.attrs["source_series"] = info.series
    if info.palette:  # its values are indices: a mask reads them; the consumers refuse them
        image.attrs["source_palette"] = info.palette
    if info.white_is_zero is not None:  # as viewers show it, its alpha as it is
        image = _white_high(image, info.white_is_zero, alpha)
    geo = None
    if info.is_geotiff:
        ny, nx = _yx_shape(axes, shape)
        geo = _geo_labels(path, level, {"y": ny, "x": nx})
    if geo is not None:
        image = _georeferenced(image, geo)
    elif sizes[level] is not None:  # a level's pixel centre: the mean of the ones it covers
        base = info.pixel_size
        levels = zip(info.origin, sizes[level], base, strict=True)
        offset = tuple(o + 0.5 * (size - b) for o, size, b in levels)
        image = image.assign_coords(_physical_coords(_yx_shape(axes, shape), sizes[level], offset))
    nodata = None if info.nodata is None else nodata_value(info.nodata, dtype, "GDAL_NODATA")
    if nodata is not None and info.white_is_zero is not None:
        nodata = info.white_is_zero - nodata  # the stored value's, read inverted
    if alpha is not None and "c" in image.dims and image.sizes["c"] > alpha:
        image = _alpha_dropped(image, nodata, alpha)
    elif info.mask_series is not None or info.mask_file is not None:
        image = _masked(image, _transparency(path, info, level, version, image), nodata)
        if info.mask_file is not None:
            image.attrs["mask"] = (
                f"the transparency mask beside the TIFF ({info.mask_file.name}): where it is 0, "
                "the pixels are NaN"
            )
    elif nodata is not None:
        image.attrs["_FillValue"] = nodata
    image = _binned(image, cells, request)
    # a resumed write sees the mask beside it rewritten, as the image (the file's version and
    # its mask's, known here: not looked up again)
    version = with_mask_version(version, info.mask_file)
    return _recorded(image, path, level, _cell_size(sizes[level], cells), version)


def _white_high(image: xr.DataArray, black: int, alpha: int | None) -> xr.DataArray:
    """A MinIsWhite image (0 is white) read as viewers show it: ``black`` less each stored
    value (``not`` of a bilevel one), but for its alpha channel, block by block."""
    axis = image.dims.index("c") if alpha is not None and "c" in image.dims else None
    data = image.data.map_blocks(_inverted, black, axis, alpha, dtype=image.dtype)
    out = image.copy(data=data)
    out.attrs["source_photometric"] = (
        f"MinIsWhite: read inverted, {black} - the stored value, as viewers show it"
    )
    return out


def _inverted(block: np.ndarray, black: int, axis: int | None, alpha: int | None) -> np.ndarray:
    """``black`` less each value of a block (``not`` of booleans), but along ``axis`` its
    channel ``alpha``."""
    out = ~block if block.dtype == bool else np.asarray(black, block.dtype) - block
    if axis is not None and alpha is not None:
        index = [slice(None)] * block.ndim
        index[axis] = slice(alpha, alpha + 1)
        out[tuple(index)] = block[tuple(index)]
    return out


def _palette_as_rgb(image: xr.DataArray, colours: np.ndarray) -> xr.DataArray:
    """A palette image (its values indices into ``colours``, ``(entries, 3)``) as the RGB
    they index, block by block, its colour dim ``c`` last, recorded as
    ``attrs["source_colormap"]`` (the map's entries)."""
    data = image.data  # lazy: the tasks' blocks of the file
    rgb = data.map_blocks(_coloured, colours, new_axis=data.ndim, chunks=(*data.chunks, (3,)),
                          dtype=np.uint8)  # fmt: skip
    out = xr.DataArray(rgb, dims=(*image.dims, "c"), coords=image.coords,
                       attrs=dict(image.attrs), name=image.name)  # fmt: skip
    out.encoding.update(image.encoding)
    out.attrs["source_colormap"] = len(colours)
    return out


def _coloured(block: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """The colours, ``(..., 3)``, that a block of palette indices index."""
    return colours[block]


def _cmyk_as_rgb(image: xr.DataArray) -> xr.DataArray:
    """A CMYK image (its first four channels C, M, Y, K; extra ones, an alpha, after them) as
    RGB, block by block (:func:`_cmyk_rgb`), recorded as ``attrs["source_photometric"]``."""
    axis = image.dims.index("c")
    data = image.data.rechunk({axis: -1})  # lazy; one chunk along c: a block's inks together
    chunks = tuple((n[0] - 1,) if i == axis else n for i, n in enumerate(data.chunks))
    rgb = data.map_blocks(_cmyk_rgb, axis, chunks=chunks, dtype=data.dtype)
    coords = {k: v for k, v in image.coords.items() if "c" not in v.dims}
    out = xr.DataArray(rgb, dims=image.dims, coords=coords, attrs=dict(image.attrs),
                       name=image.name)  # fmt: skip
    out.encoding.update(image.encoding)
    out.attrs["source_photometric"] = (
        "CMYK (Separated): read as RGB as Pillow converts CMYK, R = (1 - C)(1 - K) of full "
        "scale; an ICC profile is not applied"
    )
    return out


def _cmyk_rgb(block: np.ndarray, axis: int) -> np.ndarray:
    """The RGB of a block of CMYK inks along ``axis`` (unsigned integers, 0 no ink), its
    channels after the four kept: R = (1 - C)(1 - K) of the dtype's full scale, and G, B of
    M, Y alike — Pillow's conversion of CMYK (``cmyk2rgb``), its rounding of 8 bits exactly."""
    full = int(np.iinfo(block.dtype).max)
    ink = np.moveaxis(block, axis, -1).astype(np.int64)
    white = full - ink[..., 3:4]  # the light K lets through
    product = ink[..., :3] * white
    if full == 255:  # Pillow's MULDIV255
        product += 128
        taken = (product + (product >> 8)) >> 8
    else:
        taken = (product + full // 2) // full
    rgb = np.clip(white - taken, 0, full)
    out = np.concatenate([rgb, ink[..., 4:]], axis=-1).astype(block.dtype)
    return np.moveaxis(out, -1, axis)


def _transparency(
    path: Location, info: _TiffInfo, level: int, version: str, image: xr.DataArray
) -> da.Array:
    """The transparency mask of a TIFF's ``level``, ``(y, x)`` in ``image``'s chunks, read
    inside the tasks: GDAL's internal mask (a series of the file) or the file beside it
    (``.msk``), its level of the same shape.

    Raises
    ------
    ImageReadError
        When the file beside it has no level of that shape (overviews built before the mask),
        naming what to do.
    """
    source, series, at, stamp = path, info.mask_series, level, version
    if info.mask_file is not None:
        shape = _yx_shape(info.levels[level][0], info.levels[level][1])
        if shape not in info.mask_shapes:
            raise ImageReadError(
                f"{info.mask_file.name}, the transparency mask of {path.name}, has no level of "
                f"{shape[1]}x{shape[0]} px (its level {level}): read another level, or build "
                "the overviews again (gdaladdo), which writes the mask's too"
            )
        source, series = info.mask_file, 0
        at, stamp = info.mask_shapes.index(shape), info.mask_file.version()
    return da.map_blocks(
        functools.partial(read_tiff_block, source, at, stamp, series),
        chunks=(image.chunks[image.dims.index("y")], image.chunks[image.dims.index("x")]),
        dtype=np.uint8,
        meta=np.empty((0, 0), np.uint8),
        name=f"xfskde-read-tiff-mask-{tokenize(source.token(), at, stamp, series)}",
    )


def _gdal_dims(level: GdalLevel) -> tuple[str, ...]:
    """The dims a GDAL raster is read in: ``(c, y, x)``, band-sequential as GDAL gives it;
    ``(y, x)`` for a single band, as a one-band GeoTIFF is."""
    return ("c", "y", "x") if level.shape[0] > 1 else ("y", "x")


def _gdal_image_level(
    level: GdalLevel, given: tuple[str, ...] | None, path: Location
) -> ImageLevel:
    """What :func:`image_levels` says of a GDAL raster's level, as :func:`_open_gdal` opens
    it (an alpha band dropped, the values then float32)."""
    dims = _gdal_dims(level)
    shape: tuple[int, ...] = level.shape if len(dims) == 3 else level.shape[1:]
    _axes_of(dims, shape, given, path)
    dtype = np.float32 if level.masked else level.dtype
    if level.alpha is not None:  # dropped: the other bands, or one band as (y, x)
        bands = shape[0] - 1
        shape, dims = ((bands, *shape[1:]), dims) if bands > 1 else (shape[1:], ("y", "x"))
        dtype = np.float32
    return ImageLevel(tuple(shape), dims, np.dtype(dtype), level.block, level.pixel_size,
                      level.units)  # fmt: skip


def _open_gdal(path: Location, level: int, request: _Request) -> xr.DataArray:
    """A JPEG 2000, VRT or ERDAS Imagine raster's ``level`` (0, or one of its overviews),
    read through rasterio inside the tasks (:func:`xfskde.io._gdal.read_gdal_block`) and
    labelled by rioxarray as a GeoTIFF is (:func:`_geo_labels`). A VRT at a URL is fetched
    once (:func:`~xfskde.io._gdal.remote_vrt`), its sources asked their versions once."""
    vrt = remote_vrt(path)
    levels = gdal_levels(path, vrt)
    kind = gdal_format(path)
    if request.mpp is not None:
        raise ParameterError(
            f"mpp is a pixel size under a microscope, in µm; {path.name} is a {kind} raster, "
            "whose pixels are measured in its CRS: pick one of its overviews with level= "
            "(--level; xfskde info lists them)"
        )
    level, _ = _level_and_cells(path, [None] * len(levels), level, None)
    info = levels[level]
    dims = _gdal_dims(info)
    shape = info.shape if len(dims) == 3 else info.shape[1:]
    all_dims = list(_axes_of(dims, shape, request.dims, path))
    native = (*shape[:-2], *info.block)
    selection, planned, tiles = _read_plan(path, all_dims, shape, native, request, info.dtype)
    version = input_version(path, vrt)  # a VRT's with its files'
    # what each task checks: this version (a local VRT's with its files'; any other URL's
    # the file's own), or at a URL a VRT's own (its XML's digest: the task fetches the XML
    # anyway) and its sources' as GDAL opens them for the block
    checked, sources = version, None
    if vrt is not None:
        checked, sources = vrt.version, tuple(vrt.versions())
    dtype = np.dtype(np.float32) if info.masked else info.dtype  # NaN where its mask is 0
    data = da.map_blocks(
        functools.partial(read_gdal_block, path, level, checked, info.masked, sources=sources),
        chunks=planned,
        dtype=dtype,
        meta=np.empty((0,) * len(shape), dtype),
        name=f"xfskde-read-gdal-{tokenize(path.token(), level, version)}",
    )
    image = _plane_image(data, all_dims, selection, path.stem, tiles, request)
    geo = None  # a photograph's JPEG 2000 has pixel coordinates, as a plain TIFF
    if info.located:
        geo = _geo_labels(path, level, {"y": shape[-2], "x": shape[-1]}, vrt)
    if geo is not None:
        image = _georeferenced(image, geo)
    nodata = None if info.nodata is None else nodata_value(info.nodata, info.dtype, "nodata")
    bands = _gdal_band_nodata(info)
    if info.alpha is not None and "c" in image.dims:
        if bands is not None:  # the colour bands' own values: one for the pixels
            colour = list(bands)
            colour[info.alpha] = None
            merged, nodata = pixel_nodata(image.data, tuple(colour), image.dims.index("c"))
            image = image.copy(data=merged)
        image = _alpha_dropped(image, nodata, info.alpha)
    elif info.masked:
        image.attrs.update(
            _FillValue=float("nan"),
            source_dtype=info.dtype.name,
            mask="the raster's mask (GDAL's): where it is 0, the pixels are NaN",
        )
    elif bands is not None:  # each band its own (a VRT stack): image_nodata reads them
        image.attrs.pop("_FillValue", None)  # rioxarray's: the first band's, not the others'
        image.attrs["nodatavals"] = tuple(math.nan if v is None else v for v in bands)
    elif nodata is not None:
        image.attrs["_FillValue"] = nodata
    return _recorded(image, path, level, None, version)


def _gdal_band_nodata(info: GdalLevel) -> tuple[int | float | None, ...] | None:
    """A GDAL raster's nodata values per band (None for a band without one) where its bands'
    differ — a VRT stack of two products' bands, ``gdalbuildvrt -separate`` of a B04 whose
    nodata is 0 and a B08 whose is 65535 —, else None: their one value is ``info.nodata``.
    GDAL masks each band by its own value; one of them for every band used the others'
    missing samples as data."""
    values = [None if v is None else nodata_value(v, info.dtype, f"band {i + 1}'s nodata")
              for i, v in enumerate(info.nodatavals)]  # fmt: skip
    keys = {"none" if v is None else ("nan" if math.isnan(v) else v) for v in values}
    return tuple(values) if len(keys) > 1 else None


def _cell_size(size: tuple[float, float] | None, cells: int) -> tuple[float, float] | None:
    """The (y, x) pixel size of a level's pixels averaged over ``cells`` × ``cells``."""
    return None if size is None else (size[0] * cells, size[1] * cells)


def _recorded(
    image: xr.DataArray,
    source: Any,
    level: int,
    size: tuple[float, float] | None,
    version: str | None = None,
) -> xr.DataArray:
    """Record where the pixels come from: the ``source``, its ``source_level``, its
    ``source_version`` (:meth:`Location.version`: what a resumed write compares, so that its
    blocks all come from the same pixels; ``version`` when already read) and, when known,
    ``source_pixel_size_um`` ((y, x), µm) — true of every result computed from them.
    ``encoding["source"]`` keeps the :class:`Location` itself, storage options included (never
    written to a store), so that the file can be read again (a low-resolution level for a
    tissue mask) as it was first read."""
    image.attrs["source"] = str(source)
    if isinstance(source, Location):
        image.encoding["source"] = source
        image.attrs["source_version"] = version or source.version()
    image.attrs["source_level"] = int(level)
    if size is not None:
        image.attrs["source_pixel_size_um"] = [float(size[0]), float(size[1])]
    return image


# ------------------------------------------------------------------------------------- Zarr


#: Attrs that describe how xarray laid a variable out in Zarr, not the image.
_LAYOUT_ATTRS = ("_ARRAY_DIMENSIONS",)


def _variable_attrs(array: zarr.Array) -> dict[str, Any]:
    """A Zarr array's attrs as the variable xarray wrote had them (less :data:`_LAYOUT_ATTRS`),
    its ``_FillValue`` decoded as xarray decodes it: a float array's is stored as the base64
    text of its bytes in Zarr v3 (``'AAAAAAAA+H8='`` for NaN), which read as it is would be no
    number (and every float image xarray wrote refused as having a nodata value that is not
    one)."""
    attrs = {k: v for k, v in array.attrs.items() if k not in _LAYOUT_ATTRS}
    fill = attrs.get("_FillValue")
    if isinstance(fill, str | list) and np.dtype(array.dtype).kind in "fc":
        from xarray.backends.zarr import FillValueCoder

        try:
            attrs["_FillValue"] = FillValueCoder.decode(fill, array.dtype)
        except (TypeError, ValueError, struct.error, binascii.Error):
            pass  # not xarray's encoding: left as it is, for the nodata check to refuse
    return attrs


def _zarr_node(source: Any) -> zarr.Array | zarr.Group:
    """The Zarr array or group at ``source`` (a :class:`Location`, or a node already open)."""
    if isinstance(source, zarr.Array | zarr.Group):
        return source
    try:
        return zarr.open(source.zarr_store(read_only=True), mode="r")
    except _ZARR_ERRORS as exc:
        _refuse_missing_store(source)
        raise ImageReadError(f"{source} is not a readable Zarr array or group ({exc})") from exc


def _refuse_missing_store(source: Location) -> None:
    """Raise :class:`FileNotFoundError` where no Zarr metadata is at a URL zarr could not open
    (a wrong URL: zarr said "No group found in store StorePath(FsspecStore, ...)"); a server
    that refuses or fails to serve it is named by :meth:`Location.exists`."""
    if source.is_local:
        return
    names = ("zarr.json", ".zgroup", ".zarray")
    root = source.url.rstrip("/")
    if not any(Location(f"{root}/{n}", source.storage_options).exists() for n in names):
        raise FileNotFoundError(
            f"no such image: {source} (no Zarr metadata there: zarr.json, .zgroup, .zarray)"
        )


#: The attr of the root group of a store in NGFF's transitional bioformats2raw layout (what
#: ``bioformats2raw`` writes of a microscope's file): its images are the series groups
#: ``0``, ``1``, ... (or those its ``OME`` group's ``series`` lists), described by
#: ``OME/METADATA.ome.xml``.
BIOFORMATS2RAW = "bioformats2raw.layout"


class ZarrSeries(NamedTuple):
    """An image of a bioformats2raw store: its group's path in the store and its name."""

    path: str
    #: the OME-XML ``Image``'s ``Name``, else its multiscale's ``name``, else ""
    name: str


def _ngff_attrs(group: zarr.Group) -> dict[str, Any]:
    """A group's attrs, NGFF 0.5's ``ome`` block merged into them (0.4 has none)."""
    attrs = dict(group.attrs)
    ome = attrs.get("ome")
    return {**attrs, **ome} if isinstance(ome, dict) else attrs


def _bioformats2raw_names(root: zarr.Group) -> list[str]:
    """The ``Name`` of each ``Image`` of a bioformats2raw store's ``OME/METADATA.ome.xml``, in
    the document's order (the series' order); [] without it."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    key = f"{root.path}/OME/METADATA.ome.xml" if root.path else "OME/METADATA.ome.xml"
    try:
        found = sync(root.store.get(key, prototype=default_buffer_prototype()))
        return [] if found is None else [n for n, _ in ome_pairs(found.to_bytes().decode(), "")]
    except (*_ZARR_ERRORS, ValueError, ElementTree.ParseError):  # a decoding error: ValueError
        return []


def bioformats2raw_series(node: zarr.Group) -> list[ZarrSeries] | None:
    """The images of a store in NGFF's bioformats2raw layout (its root's
    ``bioformats2raw.layout`` attr), in order: the paths its ``OME`` group's ``series`` lists,
    else the groups ``0``, ``1``, ... there are; named by ``OME/METADATA.ome.xml`` (its
    ``Image`` elements in the same order), else by their multiscale's ``name``.

    Parameters
    ----------
    node : zarr.Group
        A Zarr group, opened.

    Returns
    -------
    list of ZarrSeries or None
        The series (``path``, ``name``: "" for one without a name); None for another group,
        and for a plate's (images in wells, no series).
    """
    attrs = _ngff_attrs(node)
    if BIOFORMATS2RAW not in attrs or "plate" in attrs:
        return None
    try:
        meta = node["OME"] if "OME" in node else None
        listed = _ngff_attrs(meta).get("series") if isinstance(meta, zarr.Group) else None
    except _ZARR_ERRORS:
        listed = None
    paths = [str(p) for p in listed] if isinstance(listed, list) else []
    if not paths:  # the series are the groups 0, 1, ... up to the first missing
        while str(len(paths)) in node:
            paths.append(str(len(paths)))
    names = _bioformats2raw_names(node)
    series = []
    for index, path in enumerate(paths):
        name = names[index] if index < len(names) else ""
        if not name:
            try:
                multiscales = _ngff_attrs(node[path]).get("multiscales") or [{}]
                name = str(multiscales[0].get("name") or "")
            except (*_ZARR_ERRORS, AttributeError, IndexError, TypeError):
                name = ""
        series.append(ZarrSeries(path, name))
    return series


def _series_node(
    source: Any, node: zarr.Array | zarr.Group, series: int | str
) -> tuple[zarr.Array | zarr.Group, str, int]:
    """The node of the image ``series`` picks in a Zarr node, its path there and its index:
    a bioformats2raw store's series group (the first by default, as a TIFF's); the node
    itself, path "" and index 0 for any other (which holds one image: ``series`` is refused
    unless it is the first)."""
    found = bioformats2raw_series(node) if isinstance(node, zarr.Group) else None
    if not found:
        _refuse_series(series, source)
        return node, "", 0
    index = _pick_series([s.name for s in found], series, source)
    path = found[index].path
    try:
        group = node[path]
    except _ZARR_ERRORS as exc:
        raise ImageReadError(f"{source} lists the series {path!r} but it cannot be opened "
                             f"({exc})") from exc  # fmt: skip
    if not isinstance(group, zarr.Group):
        raise ImageReadError(f"{source}: its series {path!r} is a Zarr array, not an image group")
    return group, path, index


def _first_field(node: zarr.Group, plate: Mapping[str, Any]) -> str:
    """The path of the first field's image of an OME-Zarr plate: its first well's first image
    (``A/1/0``)."""
    wells = plate.get("wells") or [{}]
    well = str(wells[0].get("path", "A/1")) if isinstance(wells[0], dict) else "A/1"
    try:
        images = _ngff_attrs(node[well]).get("well", {}).get("images") or [{}]
        field = str(images[0].get("path", "0"))
    except (*_ZARR_ERRORS, AttributeError, TypeError):
        field = "0"
    return f"{well}/{field}"


def _image_groups(node: zarr.Group) -> list[str]:
    """The names of a group's groups that are OME-Zarr images (a multiscale each)."""
    try:
        return sorted(
            name for name, group in node.groups() if _ngff_attrs(group).get("multiscales")
        )
    except _ZARR_ERRORS:
        return []


class _Transform(NamedTuple):
    """Where an OME-Zarr level's pixels are: centre = translation + scale * index, in µm."""

    scale: tuple[float, float]
    translation: tuple[float, float]


def _ngff_transforms(multiscale: Mapping[str, Any]) -> list[_Transform | None]:
    """The (y, x) scale and translation of every level of an OME-NGFF multiscale, in µm (None
    where the axes have no known unit of length or the transforms are missing)."""
    axes = multiscale.get("axes", [])
    names = [str(a["name"] if isinstance(a, dict) else a).lower() for a in axes]
    if not {"y", "x"} <= set(names):
        return [None] * len(multiscale.get("datasets", []))
    iy, ix = names.index("y"), names.index("x")
    units = [micrometres(1.0, a.get("unit")) if isinstance(a, dict) and a.get("unit") else None
             for a in axes]  # fmt: skip

    def combined(transforms: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        scale, shift = np.ones(len(names)), np.zeros(len(names))
        for t in transforms:
            if t.get("type") == "scale" and "scale" in t:
                scale = scale * np.asarray(t["scale"], float)
                shift = shift * np.asarray(t["scale"], float)
            elif t.get("type") == "translation" and "translation" in t:
                shift = shift + np.asarray(t["translation"], float)
        return scale, shift

    outer = multiscale.get("coordinateTransformations", [])
    result: list[_Transform | None] = []
    for dataset in multiscale.get("datasets", []):
        own = dataset.get("coordinateTransformations", [])
        if not own or units[iy] is None or units[ix] is None:
            result.append(None)
            continue
        scale, shift = combined([*own, *outer])
        result.append(_Transform(
            (float(scale[iy] * units[iy]), float(scale[ix] * units[ix])),
            (float(shift[iy] * units[iy]), float(shift[ix] * units[ix])),
        ))  # fmt: skip
    return result


def _zarr_image(
    source: Any, node: zarr.Group, level: int, mpp: float | None
) -> tuple[zarr.Array, str, tuple[str, ...] | None, int, _Transform | None]:
    """The image array of a group, its path in the group, its dims if the group names them,
    the level read and where its pixels are.

    An OME-Zarr multiscale group gives its level ``level`` (or the one nearest ``mpp`` µm),
    the names of its axes and its transforms; any other group must hold exactly one array.
    """
    multiscales = node.attrs.get("multiscales") or node.attrs.get("ome", {}).get("multiscales")
    transform = None
    if multiscales:
        datasets = multiscales[0].get("datasets", [])
        transforms = _ngff_transforms(multiscales[0])
        sizes = [t.scale if t is not None else None for t in transforms]
        level, cells = _level_and_cells(source, sizes, level, mpp)
        component = str(datasets[level].get("path"))
        axes = [a["name"] if isinstance(a, dict) else a for a in multiscales[0].get("axes", [])]
        dims = tuple(str(a).lower() for a in axes) or None
        transform = transforms[level]
    else:
        arrays = dict(node.arrays())
        images = [name for name, array in arrays.items() if _is_image(array)]
        if len(images) != 1:
            plate = _ngff_attrs(node).get("plate")
            if isinstance(plate, dict):  # HCS: images in wells, one per field
                raise ImageReadError(
                    f"{source} is an OME-Zarr plate (wells of fields, an image each), not one "
                    f"image: open one field's image (e.g. '{source}/{_first_field(node, plate)}')"
                )
            inside = _image_groups(node) if not images else []
            if inside:  # a collection of OME-Zarr images: name them
                raise ImageReadError(
                    f"{source} is a Zarr group of the OME-Zarr images {inside}, not one: open "
                    f"one of them (e.g. '{source}/{inside[0]}')"
                )
            raise ImageReadError(
                f"{source} is a Zarr group with arrays {sorted(arrays)}; open the image array "
                "itself (e.g. 'store.zarr/name') or use an OME-Zarr multiscale group"
            )
        component, dims = images[0], None
        level, cells = _choose_level(source, [None], level, mpp), 1
    try:
        array = node[component]
    except _ZARR_ERRORS as exc:
        raise ImageReadError(f"{source} lists {component!r} but cannot open it ({exc})") from exc
    if not isinstance(array, zarr.Array):
        raise ImageReadError(f"{source}: {component!r} is a Zarr group, not an image array")
    return array, component, dims, level, transform, cells


def _omero_labels(node: zarr.Group) -> tuple[str, ...] | None:
    """The ``label`` of each of an OME-Zarr image's ``omero`` channels (NGFF 0.4 and 0.5; a
    channel without one named by its index, :func:`_some_named`; None where none has one)."""
    omero = node.attrs.get("omero") or node.attrs.get("ome", {}).get("omero") or {}
    channels = omero.get("channels") if isinstance(omero, dict) else None
    if not isinstance(channels, list) or not channels:
        return None
    return _some_named([c.get("label") if isinstance(c, dict) else None for c in channels])


def _stored_dims(array: Any) -> tuple[str, ...] | None:
    """The dim names a Zarr array records (Zarr v3 ``dimension_names``, or xarray's
    ``_ARRAY_DIMENSIONS`` attr for Zarr v2), None unless every dim has one."""
    stored = array.attrs.get("_ARRAY_DIMENSIONS") or getattr(
        array.metadata, "dimension_names", None
    )
    return tuple(map(str, stored)) if stored and all(d is not None for d in stored) else None


def _is_image(array: Any) -> bool:
    """Whether an array of a plain Zarr group can be its image: two dims or more, ``y`` and
    ``x`` among them when they are named — not the arrays beside it, xarray's coordinate
    variables (1-D ``y``, ``x``; a 0-d ``spatial_ref``) or a block store's completion record
    (dims ``xfskde_block_y``, ``xfskde_block_x``)."""
    dims = _stored_dims(array)
    return array.ndim >= 2 and (dims is None or {"y", "x"} <= set(dims))


def _parent_group(source: Any) -> tuple[zarr.Group, str] | None:
    """The Zarr group holding the array at ``source`` and the array's name in it (None if the
    array is not in a group)."""
    if not isinstance(source, Location) or "/" not in source.url.rstrip("/"):
        return None
    parent, name = source.url.rstrip("/").rsplit("/", 1)
    try:
        group = zarr.open_group(
            Location(parent, source.storage_options).zarr_store(read_only=True), mode="r"
        )
        return (group, name) if name in dict(group.arrays()) else None
    except (*_ZARR_ERRORS, ValueError):
        return None


def _group_coords(image: xr.DataArray, group: zarr.Group, name: str) -> xr.DataArray:
    """An image read from a Zarr group as xarray writes a DataArray (``to_zarr``; xfskde's
    own label stores too), with what xarray stores beside it: its 1-D ``y`` / ``x`` coordinate
    variables (CRS coordinates, µm with their ``units``), the 0-d grid-mapping variable its
    ``grid_mapping`` or ``coordinates`` attr names (``spatial_ref``: the CRS rioxarray reads)
    and its attrs (a ``_FillValue`` or ``nodata`` marks missing pixels)."""
    arrays = dict(group.arrays())
    attrs = _variable_attrs(arrays[name])
    coords: dict[str, Any] = {}
    for dim in ("y", "x"):
        coord = arrays.get(dim)
        if coord is not None and coord.ndim == 1 and coord.shape[0] == image.sizes[dim]:
            # no fill value: a coordinate has no missing values (xarray keeps its _FillValue in
            # the encoding; carried as an attr, results written with it could not be read)
            kept = {k: v for k, v in _variable_attrs(coord).items() if k != "_FillValue"}
            coords[dim] = (dim, np.asarray(coord[:]), kept)
    named = [str(attrs.get("grid_mapping", "")), *str(attrs.get("coordinates", "")).split()]
    for mapping in named:
        if mapping in arrays and arrays[mapping].ndim == 0:
            scalar = arrays[mapping]
            coords[mapping] = ((), np.asarray(scalar[()]), _variable_attrs(scalar))
    attrs.pop("coordinates", None)
    attrs.pop("source_version", None)  # its input's, not its own (set when read from a path)
    return image.assign_coords(coords).assign_attrs(attrs)


def _coordinate_pixel_size(
    group: zarr.Group, name: str
) -> tuple[tuple[float, float] | None, str | None]:
    """The (y, x) pixel size of the image ``name`` of a group written by xarray: the steps of
    its regular 1-D ``y``/``x`` coordinate arrays, in its CRS's axis unit (``"m"``, through
    pyproj when installed) or else in their ``units`` (µm, say); (None, None) without them."""
    arrays = dict(group.arrays())
    steps = [regular_step(arrays[d][...]) if d in arrays else None for d in ("y", "x")]
    if None in steps:
        return None, None
    mapping = str(_variable_attrs(arrays[name]).get("grid_mapping", "spatial_ref"))
    wkt = _variable_attrs(arrays[mapping]).get("crs_wkt") if mapping in arrays else None
    # a map's unit as a GeoTIFF's is named (its axes' CF "metre", "degrees_east" say the same)
    unit = (_crs_unit(str(wkt)) if wkt else None) or _variable_attrs(arrays["x"]).get("units")
    return (steps[0], steps[1]), str(unit) if unit else "coordinate units"


def _crs_unit(wkt: str) -> str | None:
    """The unit of a CRS's first axis, as a GeoTIFF's is written (``m``, ``°``, ...)."""
    crs = parse_crs(wkt)
    if crs is None or not crs.axis_info:
        return None
    name = crs.axis_info[0].unit_name
    return {"metre": "m", "degree": "°", "US survey foot": "US survey ft", "foot": "ft"}.get(
        name, name
    )


def _checked_blocks(data: da.Array, source: Location, component: str | None) -> da.Array:
    """The blocks of a local Zarr array, each read by a task that first checks the array's
    metadata file is the one the client opened (:func:`._location.check_stamp`): a worker on
    a machine that does not share the folder would read every chunk as missing, that is as
    the fill value, zeros, without an error."""
    array = Location(os.path.join(source.url, component) if component else source.url)
    stamp = metadata_stamp(array)
    return data.map_blocks(
        check_stamp,
        location=array,
        stamp=stamp,
        dtype=data.dtype,
        meta=data._meta,
        name=f"xfskde-read-zarr-{tokenize(data.name, array.url, stamp)}",
    )


class _RemoteZarr:
    """A Zarr array at a URL as Dask's tasks index it: each read first reads the array's
    metadata file (``zarr.json``, or v2's ``.zarray``) and refuses the block where it is gone
    or another (Zarr reads a chunk it cannot find as its fill value: a store removed or
    rewritten during the run was read as zeros, the store written said complete); a failure
    of its server or connection (a 403 or a 500 answered for a chunk, a server stopped
    halfway) is raised as an :class:`~xfskde.exceptions.ImageReadError` naming the URL and
    what to do (:func:`._location.named_failures`), where aiohttp's own error was an
    "internal error"."""

    def __init__(self, array: zarr.Array, location: Location, component: str | None) -> None:
        self.array, self.location = array, location
        self.shape, self.dtype, self.ndim = tuple(array.shape), array.dtype, array.ndim
        name = "zarr.json" if array.metadata.zarr_format == 3 else ".zarray"
        path = "/".join(p for p in (location.url.rstrip("/"), component, name) if p)
        self.metadata = Location(path, location.storage_options)
        with named_failures(self.metadata):
            self.stamp = self._stamp()

    def _stamp(self) -> bytes:
        fs, path = self.metadata.filesystem()
        return bytes(fs.cat_file(path))

    def __getitem__(self, key: Any) -> np.ndarray:
        with named_failures(self.location, task=True):  # its metadata gone: named there too
            if self._stamp() != self.stamp:
                raise ImageReadError(
                    f"{self.location} changed since it was opened (its {self.metadata.name} "
                    "is another): open it again (xfskde.open_image) and compute again"
                )
            return np.asarray(self.array[key])


def _remote_blocks(
    array: zarr.Array, source: Location, component: str | None, chunks: Any
) -> da.Array:
    """The blocks of the Zarr array ``array`` opened at the URL ``source``, read by the tasks
    through :class:`_RemoteZarr` (the array, and its store's storage options, travel with
    them)."""
    name = tokenize(source.url, component, chunks, array.shape, str(array.dtype), source.token())
    return da.from_array(
        _RemoteZarr(array, source, component),
        chunks=chunks,
        name=f"xfskde-read-zarr-{name}",
        meta=np.empty((0,) * array.ndim, dtype=array.dtype),
    )


def _refuse_remote_zip(path: Location) -> None:
    """A zip file is read in place only locally (zarr's ``ZipStore``)."""
    if path.is_zip and not path.is_local:
        raise ImageReadError(
            f"cannot read {path}: a zipped Zarr store is read in place only from a local file; "
            "download it first"
        )


def _open_zarr(source: Any, level: int, request: _Request) -> xr.DataArray:
    node, prefix, series = _series_node(source, _zarr_node(source), request.series)
    component = None
    dims: tuple[str, ...] | None = None
    transform = None
    group: tuple[zarr.Group, str] | None = None
    if isinstance(node, zarr.Group):
        _refuse_holes(node, source)
        array, component, dims, level, transform, cells = _zarr_image(source, node, level,
                                                                       request.mpp)  # fmt: skip
        if transform is None:
            group = (node, component)
        component = f"{prefix}/{component}" if prefix else component
    else:
        array, cells = node, 1
        level = _choose_level(source, [None], level, request.mpp)
        group = _parent_group(source)
        if group is not None:
            _refuse_holes(group[0], source)
    dims = _axes_of(dims or _stored_dims(array), tuple(array.shape), request.dims, source)
    if not {"y", "x"} <= set(dims):
        raise ImageReadError(
            f"{source} has dims {dims}; only y, x and one colour dim are supported: name its "
            "spatial dims 'y' and 'x'"
        )
    selection, planned, tiles = _read_plan(source, dims, array.shape, array.chunks,
                                           _for_cells(request, cells), array.dtype)  # fmt: skip
    _warn_if_large_reads(
        source, "chunk", array.chunks, math.prod(array.chunks) * array.dtype.itemsize,
        "rechunk it to chunks of about 1024² pixels (dask.array.from_zarr(store)"
        ".rechunk(1024).to_zarr(new), or the rechunker package)",
    )  # fmt: skip
    try:
        if isinstance(source, zarr.Array | zarr.Group) or source.is_zip:
            data = da.from_zarr(array, chunks=planned)  # a zip's ZipStore pickles to the tasks
        elif not source.is_local:  # each task reads its chunks, a server's failure named
            data = _remote_blocks(array, source, component, planned)
        else:  # from the path: the tasks open the store themselves
            data = da.from_zarr(source.url, component=component, chunks=planned)
            # a task first checks the store is the one opened (a stat)
            data = _checked_blocks(data, source, component)
    except _ZARR_ERRORS as exc:
        raise ImageReadError(f"cannot read the Zarr array of {source} ({exc})") from exc
    name = source.stem if isinstance(source, Location) else Path(source.path or "image").stem
    image = _plane_image(data, dims, selection, name or "image", tiles, request)
    if isinstance(node, zarr.Group):
        image = _channel_named(image, _omero_labels(node))
    if group is not None:
        image = _group_coords(image, *group)
    if transform is not None:
        shape = (image.sizes["y"], image.sizes["x"])
        image = image.assign_coords(_physical_coords(shape, transform.scale, transform.translation))
    image = _binned(image, cells, request)
    if series:  # another image than a bioformats2raw store's first: say which
        image.attrs["source_series"] = series
    if not isinstance(source, Location):
        return image
    size = None if transform is None else _cell_size(transform.scale, cells)
    return _recorded(image, source, level, size)


# ------------------------------------------------------------------------------ plain files


#: PIL's modes whose last channel is an alpha (opacity) channel.
_ALPHA_MODES = ("RGBA", "RGBa", "LA", "La", "PA")


class _NpyFile:
    """A local ``.npy`` file as the tasks read it: each slice from a memory map opened there,
    so the graph holds the path (a worker process elsewhere opens the file itself) and nothing
    is read until a block is computed."""

    __slots__ = ("dtype", "ndim", "path", "shape", "token", "version")

    def __init__(self, path: str) -> None:
        header = np.load(path, mmap_mode="r")
        self.path, self.shape, self.dtype, self.ndim = path, header.shape, header.dtype, header.ndim
        self.version = Location(path).version()
        self.token = f"xfskde-read-npy-{tokenize(path, self.version)}"

    def __getitem__(self, key: Any) -> np.ndarray:
        Location(self.path).refuse_changed(self.version)  # not another array's values
        return np.array(np.load(self.path, mmap_mode="r")[key])


#: PIL's modes of the PNG files decoded by imagecodecs' PNG decoder (:func:`_png_values`),
#: to the values Pillow and scikit-image read (grey, grey and alpha, RGB, RGBA; 8 or 16 bits).
_PNG_MODES = ("L", "LA", "RGB", "RGBA", "I;16", "I;16B")


def _png_values(source: str | io.BytesIO) -> np.ndarray:
    """The pixels of a PNG file of one of :data:`_PNG_MODES`, decoded by imagecodecs into one
    array: Pillow's decoded image, then its bytes, then scikit-image's array held a 8192² RGB
    PNG three times over (722 MB at the peak, for 201 MB of pixels; 398 MB here)."""
    import imagecodecs

    if isinstance(source, io.BytesIO):
        return imagecodecs.png_decode(source.getvalue())
    with open(source, "rb") as file:
        return imagecodecs.png_decode(file.read())


def _large_picture_pixels() -> int | None:
    """The pixels of a picture beyond which it is said to be read whole: Pillow's own guard
    (``PIL.Image.MAX_IMAGE_PIXELS``, about 9459², where Pillow warns of a decompression bomb),
    None where it is lifted."""
    from PIL import Image

    return Image.MAX_IMAGE_PIXELS


def _warn_if_large_picture(path: Location, header: Any) -> None:
    """Warn once that a large picture (PNG, JPEG, ...: no tiles, no random access) is read whole
    into memory, with its size in memory, and how to make it a tiled TIFF, read in part."""
    limit = _large_picture_pixels()
    width, height = header.size
    if limit is None or width * height <= limit:
        return
    decoded = width * height * len(header.getbands()) * (2 if header.mode.startswith("I;16") else 1)
    warnings.warn(
        f"{path} is a {width} x {height} {header.format} picture, read whole into memory "
        f"({decoded / 1e6:.0f} MB): it has no tiles to read in part. For bounded memory, convert "
        f"it once to a tiled TIFF (vips tiffsave {path.name} out.tif --tile --compression "
        f"deflate, or gdal_translate -co TILED=YES {path.name} out.tif)",
        ChunkSizeWarning,
        stacklevel=find_stack_level(),
    )


def _too_large_picture(path: Location, exc: Exception) -> str:
    """The line refusing a picture Pillow will not open (more than twice
    ``PIL.Image.MAX_IMAGE_PIXELS``: its decompression-bomb guard), saying what to do."""
    pixels = re.search(r"\((\d+) pixels\)", str(exc))
    size = f"of {int(pixels.group(1)) / 1e6:.0f} Mpx" if pixels else "this large"
    return (
        f"cannot read {path}: a picture {size} is more than Pillow opens (twice "
        "PIL.Image.MAX_IMAGE_PIXELS, its guard against decompression bombs), and it would be "
        f"read whole into memory. Convert it once to a tiled TIFF (vips tiffsave {path.name} "
        f"out.tif --tile --compression deflate, or gdal_translate -co TILED=YES {path.name} "
        "out.tif), or, trusting the file, set PIL.Image.MAX_IMAGE_PIXELS = None in Python"
    )


def _warn_if_turned(path: Location, turned: int, tag: str) -> None:
    """Say that a file whose orientation tag asks viewers to turn or mirror it is read as
    stored (:func:`xfskde._pictures.warn_if_turned`)."""
    warn_if_turned(
        str(path), turned, tag, ", and save them for the command line (tifffile.imwrite)"
    )


def _refuse_plane(name: str) -> None:
    """Refuse ``plane`` for a source whose axes have no names (an array, a picture's file)."""
    raise ParameterError(
        f"plane selects along the named axes of a TIFF, Zarr or DataArray; {name} has "
        "none: name them, dims=('z', 'y', 'x'), or index it yourself (image[12])"
    )


def _open_plain(path: Location, request: _Request, *, film: bool = False) -> xr.DataArray:
    """A small PNG/JPEG/NPY/... image, read into memory and wrapped.

    An image with an alpha channel (PIL's modes :data:`_ALPHA_MODES`: RGBA and grey-and-alpha
    PNGs, cut-outs on a transparent background) opens without it, as float32 values with NaN
    at its transparent pixels (alpha 0) and ``attrs["_FillValue"] = nan``: the pixels that are
    not there are missing, as GDAL reads an alpha band as a mask; every consumer then omits
    them (``nodata="auto"``), where they would have been black or white texture. A CMYK
    picture (a print JPEG) is read as RGB, as Pillow converts it, and says so in
    ``attrs["source_mode"]``. An animated GIF, WebP or APNG holds its frames along ``t``
    (dims ``("t", "y", "x"[, "c"])`` unless ``dims`` names them): one is read
    (``plane={"t": i}``), and without one it is refused — unless ``film``, for the
    description of the whole file (:func:`image_levels`).
    """
    alpha, turned, mode, frames = False, 1, None, None
    try:
        if path.is_local:
            source: Any = path.url
        else:  # a remote file: its bytes, read once
            with path.open() as file:
                source = io.BytesIO(file.read())
        if path.name.lower().endswith(".npy") and path.is_local:  # read in the tasks
            return _open_array(_NpyFile(path.url), request, path.stem, path)
        if path.name.lower().endswith(".npy"):
            array = np.load(source)
        else:
            from PIL import Image
            from skimage import io as skio

            array, plain_png = None, False
            with warnings.catch_warnings():  # Pillow's decompression-bomb warning: ours instead
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                try:
                    header = Image.open(source)
                except Image.DecompressionBombError as exc:
                    raise ImageReadError(_too_large_picture(path, exc)) from exc
                with header:
                    alpha, mode = header.mode in _ALPHA_MODES, header.mode
                    turned = int(header.getexif().get(ORIENTATION_TAG, 1) or 1)
                    frames = animation(header)
                    if frames is None and (_transparent_palette(header) or mode in CONVERTED_MODES):
                        array, alpha = picture_values(header, warn=False)  # as its colours
                    _warn_if_large_picture(path, header)
                    plain_png = (
                        header.format == "PNG"
                        and mode in _PNG_MODES
                        and frames is None
                        and "transparency" not in header.info
                    )
                if isinstance(source, io.BytesIO):
                    source.seek(0)
                if array is None and plain_png:
                    array = _png_values(source)
                array = skio.imread(source) if array is None else array
    except XfskdeError:  # the file read, its axes or a plane refused: said as it is
        raise
    except (OSError, ValueError) as exc:  # numpy's and the image plugins' own errors
        raise ImageReadError(f"cannot read {path} as an image: {exc}") from exc
    array = np.asarray(array)
    if frames is None and request.plane and request.dims is None:
        _refuse_plane(str(path))
    whole = None  # a film described whole: its frames' count, its first frame read
    if frames is not None and request.dims is None:  # a film: its frames along t
        if film and "t" not in (request.plane or {}):
            whole, request = len(array), request._replace(plane={"t": 0})
        elif "t" not in (request.plane or {}):
            raise DimensionError(
                f"{path} is {frames}, along t: pick one, plane={{'t': 0}} (--plane t=0 on "
                "the command line)"
            )
        request = request._replace(dims=("t", "y", "x", "c")[: array.ndim])
    _warn_if_turned(path, turned, "EXIF orientation")
    image = _without_alpha(_open_array(array, request, path.stem, path), alpha)
    if whole is not None:
        image = image.expand_dims(t=whole)
    if mode in CONVERTED_MODES:  # what the file stores, beside what is read
        image.attrs["source_mode"] = (
            f"{mode}, read as {CONVERTED_MODES[mode]} as Pillow converts it"
        )
    return image


def _without_alpha(image: xr.DataArray, alpha: bool) -> xr.DataArray:
    """An opened picture without its alpha channel (:func:`_alpha_dropped`) where ``alpha``
    says its last channel is one."""
    if alpha and image.ndim == 3 and image.sizes["c"] in (2, 4):
        return _alpha_dropped(image, None)
    return image


def _transparent_palette(picture: Any) -> bool:
    """Whether a picture of one frame is a palette one whose table has transparent entries
    (a PNG's tRNS, a GIF's transparent index): viewers show those pixels transparent, and it
    is read as RGBA (:func:`xfskde._pictures.picture_values`) so that they are missing."""
    transparent = picture.mode == "PA" or (picture.mode == "P" and "transparency" in picture.info)
    return transparent and getattr(picture, "n_frames", 1) == 1


def _masked(image: xr.DataArray, mask: da.Array, nodata: float | int | None) -> xr.DataArray:
    """An image without data where its transparency ``mask`` (``(y, x)``, read in the image's
    chunks) is 0, and at its ``nodata`` pixels: float32 with NaN there, recorded as
    ``_FillValue`` NaN, as :func:`_alpha_dropped` makes an image with alpha (GDAL reads an
    internal mask as it reads an alpha band); the values stay those stored, an integer
    image's dtype recorded as ``attrs["source_dtype"]``."""
    present = xr.DataArray(mask != 0, dims=("y", "x"))
    if nodata is not None:
        stored = image == nodata
        present = present & ~(stored.all("c") if "c" in image.dims else stored)
    out = image.astype(np.float32).where(present).transpose(*image.dims)
    out.attrs = dict(image.attrs)
    out.encoding.update(image.encoding)
    out.attrs["_FillValue"] = float("nan")
    out.attrs["mask"] = "the TIFF's transparency mask: where it is 0, the pixels are NaN"
    if image.dtype.kind in "ui":
        out.attrs["source_dtype"] = image.dtype.name
    return out


def _alpha_dropped(
    image: xr.DataArray, nodata: float | int | None, index: int = -1
) -> xr.DataArray:
    """An image whose channel ``index`` (the last) is alpha, without it: float32 colour (or
    grey, or a multispectral image's other bands) with NaN
    at its transparent pixels, and at its ``nodata`` pixels, recorded as ``_FillValue`` NaN (as
    GDAL reads an alpha band as a mask), block by block for a lazy image. The values stay those
    stored; an integer image's dtype is recorded as ``attrs["source_dtype"]``, so that
    segmentation reads them in that dtype's range as it reads the integers (an 8-bit RGBA PNG
    as its RGB version)."""
    axis = image.dims.index("c")
    data = image.data
    chunks = tuple((c[0] - 1,) if i == axis else c for i, c in enumerate(data.chunks))
    dropped = data.map_blocks(transparent_as_nan, axis, nodata, index, chunks=chunks,
                              dtype=np.float32)  # fmt: skip
    coords: dict[str, Any] = {k: v for k, v in image.coords.items() if "c" not in v.dims}
    for name, coord in image.coords.items():  # the channels' names, the alpha's left out
        if coord.dims == ("c",):
            coords[name] = ("c", np.delete(coord.values, index), dict(coord.attrs))
    out = xr.DataArray(dropped, dims=image.dims, coords=coords, attrs=dict(image.attrs),
                       name=image.name)  # fmt: skip
    out.encoding.update(image.encoding)
    if out.sizes["c"] == 1:
        out = out.squeeze("c", drop=True)
    out.attrs["_FillValue"] = float("nan")
    out.attrs["alpha"] = "the alpha channel was dropped; its transparent pixels are NaN"
    if image.dtype.kind in "ui":  # the values are still the stored integers'
        out.attrs["source_dtype"] = image.dtype.name
    return out


# ----------------------------------------------------------------------------- description


class ImageLevel(NamedTuple):
    """One pyramid level of an image, as :func:`image_levels` describes it: what
    :func:`open_image` reads at that level, but of every plane and channel (a stack's ``z``
    whole, where ``open_image`` reads the one ``plane`` names)."""

    #: the level's shape, in the image's own dims
    shape: tuple[int, ...]
    #: its dims, in the source's order: ``y``, ``x``, a colour dim, and any other axis (a
    #: stack's ``z`` or ``t``, of any length) under its own name
    dims: tuple[str, ...]
    #: the dtype :func:`open_image` gives (float32 where transparent or masked pixels are NaN)
    dtype: np.dtype
    #: the native (rows, columns) of a tile, strip or chunk: what one read gives
    tile: tuple[int, int]
    #: the (y, x) size of a pixel, when the image records it
    pixel_size: tuple[float, float] | None
    #: its unit: ``"µm"``, or a GeoTIFF's CRS unit (``"m"``, ``"°"``); None with no size
    units: str | None

    @property
    def sides(self) -> tuple[int, int]:
        """Its (height, width) in pixels."""
        return self.shape[self.dims.index("y")], self.shape[self.dims.index("x")]


def is_whole_level(image: xr.DataArray, levels: Sequence[ImageLevel]) -> bool:
    """Whether an opened image is the whole of the pyramid level of its file it records
    (``source_level``; read at ``mpp=`` in cells of ``source_binning`` pixels, whole cells
    only), given the file's ``levels`` (:func:`image_levels`): not a crop, nor an image
    computed from it."""
    number = int(image.attrs.get("source_level", 0))
    if not 0 <= number < len(levels):
        return False
    cells = int(image.attrs.get("source_binning", 1))
    height, width = levels[number].sides
    return (height // cells, width // cells) == (image.sizes["y"], image.sizes["x"])


def image_levels(
    source: Any,
    *,
    storage_options: Mapping[str, Any] | None = None,
    series: int | str = 0,
    dims: Sequence[str] | None = None,
) -> list[ImageLevel]:
    """The pyramid levels of an image file or store, from its metadata only.

    What :func:`open_image` would read at each ``level``: shape, dims, dtype, the native tile
    and the pixel size, decided by the same rules (see :func:`open_image`; a GeoTIFF's pixel
    size is its GeoTransform's, in its CRS's unit). A PNG/JPEG/NPY file, small by definition,
    is read to be described.

    Parameters
    ----------
    source : path or URL
        As :func:`open_image` takes it.
    storage_options : dict, optional
        Options of a URL's filesystem; refused with a local path.
    series : int or str, optional
        The image of a file that holds several (a TIFF, a bioformats2raw OME-Zarr): its
        index (negative counts from the end) or its name, as :func:`open_image` takes it;
        default 0, the first (the only one any other file may be given).
    dims : sequence of str, optional
        The names of an unlabelled source's axes (as :func:`open_image` takes them).

    Returns
    -------
    list of ImageLevel
        One per pyramid level, in the order ``level=`` numbers them: level 0, the full
        resolution, first (one only for a file without a pyramid).

    Raises
    ------
    TypeError
        For a ``source`` that is not a path or URL (an array, a DataArray).
    FileNotFoundError, ImageReadError, ImportError, ParameterError, DimensionError
        As :func:`open_image`.
    """
    if not isinstance(source, str | os.PathLike | Location):
        raise TypeError(
            f"source must be the path or URL of an image file or store, got a "
            f"{type(source).__name__}: an image in memory has one level, its own (an opened "
            "image's file is its attrs['source'])"
        )
    given = None if dims is None else _checked_dims(dims)
    path = locate(source, storage_options)
    _refuse_product(path)
    with named_failures(path):  # a server's refusal or failure, a connection broken: named
        return _levels_at(path, series, given)


def _levels_at(
    path: Location, series: int | str, given: tuple[str, ...] | None
) -> list[ImageLevel]:
    """:func:`image_levels` of the file or store at ``path``."""
    name = path.name.lower()
    remote_store = name.endswith(".zarr") and not path.is_local  # zarr says if it is there
    if not remote_store and not path.exists():
        raise FileNotFoundError(f"no such image: {path}")
    if is_store(path):
        _refuse_remote_zip(path)
        return _zarr_levels(path, given, series)
    kind = file_format(path)
    if kind == "tiff":
        return _tiff_levels(path, series, given)
    _refuse_series(series, path)
    if kind == "gdal":
        return [_gdal_image_level(level, given, path) for level in gdal_levels(path)]
    request = _Request((DEFAULT_CHUNK, DEFAULT_CHUNK), 0, 1, dims=given)
    image = _open_plain(path, request, film=True)
    shape = tuple(int(n) for n in image.shape)
    yx = (image.sizes["y"], image.sizes["x"])
    return [ImageLevel(shape, tuple(map(str, image.dims)), image.dtype, yx, None, None)]


def opened_as(image: xr.DataArray) -> dict[str, Any]:
    """The ``plane``, ``series``, ``dims`` and ``channels`` an opened image was read with (from
    its attrs), as :func:`xfskde.open_image` takes them: its file's other levels are read
    alike."""
    opening: dict[str, Any] = {}
    if "source_plane" in image.attrs:
        opening["plane"] = parse_plane(str(image.attrs["source_plane"]))
    if "source_series" in image.attrs:
        opening["series"] = int(image.attrs["source_series"])
    if "source_axes" in image.attrs:
        opening["dims"] = tuple(str(image.attrs["source_axes"]).split())
    if "source_channels" in image.attrs:
        opening["channels"] = json.loads(str(image.attrs["source_channels"]))
    return opening


def level_arguments(opening: dict[str, Any]) -> dict[str, Any]:
    """The arguments of :func:`xfskde.io.images.image_levels` among ``open_image``'s."""
    return {k: v for k, v in opening.items() if k in ("series", "dims")}


def refuse_options_in_memory(source: Any, storage_options: Mapping[str, Any] | None) -> None:
    """Refuse ``storage_options`` given with a source that is not a path or URL (an array, a
    DataArray, a picture, a Zarr object): it is read as it is, and they were ignored, where
    a local path refuses them (:func:`xfskde.io.locate`)."""
    if storage_options and not isinstance(source, str | os.PathLike | Location):
        raise ParameterError(
            f"storage_options were given for a {type(source).__name__}, which is read as it "
            "is: they apply to URLs (s3://, gs://, http://, ...) only; drop them"
        )


#: A Sentinel-2 product, by name: its folder or zip as downloaded, its metadata file.
_SENTINEL_2_PRODUCT = re.compile(r".*\.safe(\.zip)?|s2[a-d]_msi(l1c|l2a)_.*\.zip|mtd_msil.*\.xml")


def is_product(path: Location) -> bool:
    """Whether ``path`` names a Sentinel-2 product (:data:`_SENTINEL_2_PRODUCT`) rather than
    an image: refused by :func:`open_image`, and taken for an input by ``xfskde info``."""
    return _SENTINEL_2_PRODUCT.fullmatch(path.name.lower()) is not None


def _refuse_product(path: Location) -> None:
    """Refuse a Sentinel-2 product — its ``.SAFE`` folder or the zip of it, or the
    ``MTD_MSIL*.xml`` in it — naming the way in: its bands are JPEG 2000 files, stacked by a
    VRT (a folder or zip would be taken for a Zarr store, the XML for an unknown format)."""
    if is_product(path):
        raise ImageReadError(
            f"cannot read {path}: a Sentinel-2 product holds one JPEG 2000 file per band "
            "(GRANULE/*/IMG_DATA/R10m/*_B04_10m.jp2, ...; unzip it first); stack the bands to "
            "use with a VRT and give it: gdalbuildvrt -separate stack.vrt *_B04_10m.jp2 "
            "*_B03_10m.jp2 *_B02_10m.jp2"
        )


def is_store(path: Location) -> bool:
    """Whether an image source is a Zarr store (named ``.zarr``, a directory or a zip file)
    rather than a file (:func:`file_format`)."""
    return path.name.lower().endswith(".zarr") or path.is_dir() or path.is_zip


def file_format(path: Location) -> str:
    """``"tiff"``, ``"plain"`` (PNG, JPEG, NPY, …) or ``"gdal"`` (JPEG 2000, VRT, ERDAS
    Imagine: :data:`xfskde.io._gdal.GDAL_FORMATS`): by the file's suffix, else by its first
    bytes (:data:`_TIFF_MAGIC`: a TIFF by another name).

    Raises
    ------
    ImageReadError
        For a microscope's or scanner's own format (:data:`_OTHER_FORMATS`), naming it and the
        ways to bring it here, and for any other file.
    """
    name = path.name.lower()
    if name.endswith(_TIFF_SUFFIXES):
        return "tiff"
    if name.endswith(_PLAIN_SUFFIXES):
        return "plain"
    if gdal_format(path) is not None:
        return "gdal"
    held = next((f for suffix, f in _VARIABLE_FORMATS.items() if name.endswith(suffix)), None)
    if held == "NetCDF":
        raise ImageReadError(
            f"cannot read {path}: a NetCDF file holds named variables; open one with xarray "
            f"and pass the DataArray (xr.open_dataset({path.name!r}, decode_coords='all', "
            "chunks={})['B04']: lazy, its CRS kept)"
        )
    if held is not None:  # an ilastik export, a satellite's HDF: datasets in groups
        raise ImageReadError(
            f"cannot read {path}: a {held} file holds named datasets; read the image's with "
            f"h5py (h5py.File({path.name!r})['exported_data']: an ilastik export's) or xarray "
            "(a NetCDF-4 or HDF-EOS5 file's variables) and pass the array, with dims= where "
            "it has none"
        )
    other = next((f for suffix, f in _OTHER_FORMATS.items() if name.endswith(suffix)), None)
    if other is not None:
        raise ImageReadError(
            f"cannot read {path}: xfskde does not read {other} files; convert it to OME-Zarr "
            "(bioformats2raw) or OME-TIFF (bfconvert, QuPath), or read it with its own reader "
            "(bioio) and pass the array or DataArray"
        )
    try:
        with path.open() as file:
            head = file.read(4)
    except OSError as error:
        raise ImageReadError(f"cannot read {path}: {error}") from error
    if head in _TIFF_MAGIC:
        return "tiff"
    raise ImageReadError(
        f"cannot read {path}: unknown format (expected TIFF/OME-TIFF/SVS, Zarr, PNG, JPEG or NPY;"
        " JPEG 2000, VRT or ERDAS Imagine with the geo extra)"
    )


def _tiff_levels(
    path: Location, series: int | str = 0, given: tuple[str, ...] | None = None
) -> list[ImageLevel]:
    info = _tiff_info(path, series)
    if info.refused is not None:
        raise ImageReadError(info.refused)
    if info.geo_pixel_size is not None:
        (gy, gx), units = info.geo_pixel_size
        fy, fx = _yx_shape(info.levels[0][0], info.levels[0][1])
        sizes: list[tuple[float, float] | None] = []
        for axes, shape, _, _ in info.levels:
            ny, nx = _yx_shape(axes, shape)
            sizes.append((gy * fy / ny, gx * fx / nx))
    else:
        sizes, units = _tiff_level_sizes(info), UNITS
    levels = []
    for (axes, shape, dtype, tile), size in zip(info.levels, sizes, strict=True):
        dims = _axes_of(_tiff_dims(axes), tuple(shape), given, path)
        shape = tuple(map(int, shape))
        alpha = info.alpha
        if info.cmyk:  # read as RGB: one channel fewer
            i = dims.index("c")
            shape = (*shape[:i], shape[i] - 1, *shape[i + 1 :])
            alpha = None if alpha is None else alpha - 1
        elif info.colours is not None:  # its indices read as RGB, the colours last
            shape, dims, dtype = (*shape, 3), (*dims, "c"), np.uint8
        if alpha is not None and "c" in dims and shape[dims.index("c")] > alpha:
            i = dims.index("c")
            shape = (*shape[:i], shape[i] - 1, *shape[i + 1 :])
            if shape[i] == 1:
                shape, dims = shape[:i] + shape[i + 1 :], dims[:i] + dims[i + 1 :]
            dtype = np.float32
        elif info.mask_series is not None or info.mask_file is not None:  # NaN where it is 0
            dtype = np.float32
        unit = units if size is not None else None
        levels.append(ImageLevel(shape, dims, np.dtype(dtype), tile, size, unit))
    return levels


def _zarr_levels(
    path: Location, given: tuple[str, ...] | None = None, series: int | str = 0
) -> list[ImageLevel]:
    node = _series_node(path, _zarr_node(path), series)[0]
    multiscales = None
    if isinstance(node, zarr.Group):
        multiscales = node.attrs.get("multiscales") or node.attrs.get("ome", {}).get("multiscales")
    if not multiscales:
        size: tuple[float, float] | None = None
        unit = None
        if isinstance(node, zarr.Group):
            array, component, dims, _, _, _ = _zarr_image(path, node, 0, None)
            size, unit = _coordinate_pixel_size(node, component)
        else:
            array, dims = node, None
        dims = _axes_of(dims or _stored_dims(array), tuple(array.shape), given, path)
        iy, ix = dims.index("y"), dims.index("x")
        tile = (int(array.chunks[iy]), int(array.chunks[ix]))
        shape = tuple(int(n) for n in array.shape)
        return [ImageLevel(shape, tuple(dims), np.dtype(array.dtype), tile, size, unit)]
    levels = []
    transforms = _ngff_transforms(multiscales[0])
    for level, transform in enumerate(transforms):
        array, _, dims, _, _, _ = _zarr_image(path, node, level, None)
        dims = _axes_of(dims, tuple(array.shape), given, path)
        iy, ix = dims.index("y"), dims.index("x")
        size = None if transform is None else transform.scale
        levels.append(ImageLevel(
            tuple(int(n) for n in array.shape), tuple(dims), np.dtype(array.dtype),
            (int(array.chunks[iy]), int(array.chunks[ix])), size,
            UNITS if size is not None else None,
        ))  # fmt: skip
    return levels


# ------------------------------------------------------------------------------------ entry


def open_image(
    source: Any,
    *,
    level: int = 0,
    mpp: float | None = None,
    chunks: _Chunks = None,
    halo: int = 0,
    stride: int = 1,
    storage_options: Mapping[str, Any] | None = None,
    plane: Mapping[str, int] | str | None = None,
    series: int | str = 0,
    dims: Sequence[str] | None = None,
    channels: Sequence[str | int] | str | int | None = None,
) -> xr.DataArray:
    """Open an image of any size as a lazy ``(y, x)`` or ``(y, x, c)`` DataArray.

    Parameters
    ----------
    source : path, URL, zarr.Array, zarr.Group, numpy.ndarray, dask.array.Array, DataArray, picture
        TIFF / OME-TIFF / SVS (``.tif``, ``.tiff``, ``.svs``, ...), a Zarr array or group (an
        OME-Zarr multiscale group picks ``level``; a local zip of one, ``.zip`` or ``.ozx``, is
        read in place), or a PNG/JPEG/NPY file for small images; a PIL picture
        (``PIL.Image.open``'s) as its file is read (a palette one as RGB). A TIFF's values
        are read as light: a palette TIFF whose colours are the picture (a scanner's, an
        image editor's) as RGB through its colour map (``attrs["source_colormap"]``, its
        entries), one whose values are data its map only shows (a GeoTIFF's or GDAL raster's
        classes, an OME-TIFF's label image, an ImageJ lookup table) by its values
        (``attrs["source_palette"]``: refused as an image to compute on), a CMYK TIFF as RGB
        and a MinIsWhite one inverted (``attrs["source_photometric"]`` says how).
        A path or an fsspec URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://``,
        ``file://``): a relative path is made absolute here, so that workers started in
        another directory read the same file; remote TIFFs are read by byte ranges, tile by
        tile, inside the tasks. A DataArray is returned as it is (rechunked with ``chunks``
        when given, indexed with ``plane``, averaged with ``mpp``), an
        :class:`xarray.Dataset` refused.
    level : int, optional
        Pyramid level of a multiscale TIFF, OME-Zarr or GDAL image (0 = full resolution, the
        default); an array, a DataArray, a picture or a file without a pyramid has level 0
        only (another is refused).
    mpp : float, optional
        Instead of ``level``: the pixel size wanted, in µm (micrometres per pixel). Of every
        level, read as it is or averaged over f × f cells of its pixels (f whole), the pixel
        size nearest ``mpp`` by ratio is read; readings within 1 % of the nearest count as
        tied, and the one reading the fewest pixels is taken (a single-level 0.5 µm slide at
        ``mpp=2``: 4 × 4 cells; a 0.325 / 0.65 / 1.3 µm pyramid at ``mpp=1``: level 0 in
        3 × 3 cells, 0.975 µm). A pixel's size is the geometric mean of its y and x sizes
        (f × f cells keep non-square pixels' aspect). Cells are averaged lazily, block by
        block, in the image's dtype (a cell with a missing pixel is missing), the last
        partial row and column of cells dropped; recorded as ``attrs["source_binning"]``
        (f), and the coords and ``source_pixel_size_um`` are the cells'. A nearest pixel
        size more than 25 % off ``mpp`` (:data:`MPP_LIMIT`, the ratio a texture model
        takes) is refused, naming the sizes the image gives. Needs an image that records
        its pixel size: a DataArray's comes from its y and x coords and their ``units``
        (µm, nm, ...), and it is averaged alike.
    chunks : int or dict, optional
        Target Dask chunk side in pixels, an int or ``{"y": rows, "x": columns}`` (default
        :data:`xfskde.lazy.DEFAULT_CHUNK`, 2048, also for the key a dict leaves out; another
        key is refused). Chunks are planned by :func:`xfskde.lazy.plan_chunks`: a
        multiple of the file's tiles (or Zarr / Dask chunks) near the target, so that every
        task reads whole tiles. The colour dim is one chunk.
    halo, stride : int, optional
        The halo and the stride of the computation the image is opened for (e.g.
        ``Window.depth`` and ``stride`` of a local FS-KDE; integers, ``halo >= 0`` and
        ``stride >= 1``; default 0 and 1): the planned chunks are then also multiples of the
        stride, so that strided results come in regular chunks, and at least as large as the
        halo, so that no chunk is merged later.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL (``{"endpoint_url": ..., "anon": True}``,
        credentials); refused with a local path, and with an array, DataArray, picture or
        Zarr object (read as it is).
    plane : dict or str, optional
        For images with axes beyond y, x and colour — a z-stack, a time series, an OME-Zarr
        image's ``t`` and ``z`` — the plane to read: ``{"z": 12}``, ``{"t": 0, "z": -1}`` (an
        index per axis, by its lower-case name; negative counts from the end), or as
        ``--plane`` writes it, ``"z=12"``, ``"t=0,z=-1"``. Every such axis
        of more than one plane must be named; only the chosen plane is read (each task reads
        its blocks of that plane, not the stack). Recorded as ``attrs["source_plane"]``
        (``"z=12"``). A DataArray is indexed alike (``.isel``).
    series : int or str, optional
        The image of a file that holds several (a multi-scene OME-TIFF, the labels of an
        OME-TIFF written by ``xfskde segment``, a bioformats2raw OME-Zarr): its index
        (negative counts from the end), or its name (the OME ``Name``, e.g.
        ``"labels/textures"``); default 0, the first, the only one another source may be
        given. Another than the first is recorded as ``attrs["source_series"]`` (its index).
        ``xfskde info`` lists a file's series.
    dims : sequence of str, optional
        The names of the axes of a source that records none — a NumPy or Dask array, an
        ``.npy`` file, a Zarr array without ``dimension_names`` — in its order, ``y`` and
        ``x`` among them: ``("c", "y", "x")`` for planar colour, ``("z", "y", "x")`` for a
        stack (with ``plane``). Without it such a source's dims are told from its shape where
        the shape can tell: ``(y, x)``, ``(y, x, c)`` with at most 4 channels last, ``(c, y,
        x)`` with one plane first; a first axis of 2 to 4 planes is refused (colour or a
        stack?). Names that differ from those a source records (a TIFF's axes, a DataArray's
        or a Zarr array's dims) are refused. Recorded as ``attrs["source_axes"]``
        (``"c y x"``).
    channels : sequence of str or int, str or int, optional
        The channels to read (one, or several), in this order, each once: by name where the
        image names them (an OME-TIFF's or OME-Zarr's channel names, a GeoTIFF's band
        descriptions: ``["DAPI", "CD3"]``, ``["B04", "B03", "B02"]``) or by index (``[0,
        2]``; a string of digits that names no channel is an index). Only those are read.
        Recorded as ``attrs["source_channels"]`` (JSON: the names, or the indices of unnamed
        channels), so that a mask found on the file's low resolution reads the same
        channels.

    Returns
    -------
    xarray.DataArray
        Dask-backed (a DataArray given keeps its own backing, NumPy or Dask, unless
        ``chunks`` is given); the pixels of files are read inside the tasks. Dims are those
        of the source, in its order, less the axes ``plane`` selects along (``("c", "y",
        "x")`` for a planar TIFF or array). An image that
        records its pixel size — OME-TIFF (``PhysicalSizeX/Y``), Aperio SVS (``MPP``), ImageJ
        TIFFs, resolution tags in centimetres, millimetres or micrometres (not inches: a
        photograph's "dpi" is a printing hint), OME-Zarr (its scale and translation) — gets
        ``y``/``x`` coords in µm (``units: "µm"``) at the centres of its pixels, a level's
        pixel at the mean of the level-0 pixels it covers; a GeoTIFF gets its CRS coords. A
        file's attrs record ``source`` (the path or URL), ``source_level``, ``source_version``
        (its size, modification time and content digest, or its ETag: a resumed write whose
        store was begun from another version starts again) and, when known,
        ``source_pixel_size_um`` ((y, x) of the level read, or of its cells with ``mpp``, then
        also ``source_binning``): every result keeps them. For files and
        Dask arrays, ``encoding["preferred_chunks"]`` holds the native tile shape
        ``{"y": rows, "x": columns}``, for callers that plan their chunks again with
        ``plan_chunks(..., tiles=...)``.

    Raises
    ------
    FileNotFoundError
        If the path (or the remote file) does not exist.
    ImportError
        If a URL's filesystem is not installed (``s3fs``, ``gcsfs``, ``aiohttp``: the ``s3``,
        ``gcs`` and ``http`` extras).
    ImageReadError
        For formats, files or layouts it cannot read, with what to do instead (an axis of
        several planes that ``plane`` does not name among them).
    DimensionError
        For an unlabelled array whose dims cannot be told from its shape (pass ``dims``), or
        an :class:`xarray.Dataset` (pass one of its variables).
    StoreIncompleteError
        For a store xfskde is writing, or whose write did not finish, with blocks not yet
        written (they would read as 0: a labels store as background, a mask as no foreground).
    TypeError
        For a ``source`` of none of those kinds (a number, None, a list), and a ``level``,
        ``halo`` or ``stride`` that is not an integer (a bool included; a whole float is
        taken as a ``halo`` or ``stride``).
    ParameterError
        For a ``level`` the image does not have, ``mpp`` with ``level``, not positive, for an
        image that records no pixel size or that no reading comes within
        :data:`MPP_LIMIT` of, ``channels`` of an image without a colour dim, naming a
        channel it does not have (the message lists those it has), one twice, a name that
        several channels share, or none, ``chunks`` that are not positive or a dict with a
        key other than ``"y"`` and ``"x"``, a negative ``halo``, a ``stride`` below 1, a
        ``plane`` that is not a mapping or ``"AXIS=INDEX"`` text, that names no axis of the
        image beyond y, x and colour or an index out of its range, ``storage_options`` with a
        local path or a source in memory, or a ``series`` the TIFF does not have (or given
        for another format), or ``dims`` that do not name each axis once, ``y`` and ``x``
        among them, or differ from the source's own.
    """
    refuse_dataset(source)
    _check_chunks(chunks)
    level = _check_level(level)
    halo, stride = _check_nonnegative_int("halo", halo), _check_positive_int("stride", stride)
    refuse_options_in_memory(source, storage_options)
    given = None if dims is None else _checked_dims(dims)
    if isinstance(plane, str):  # as --plane and attrs["source_plane"] write it: "z=12"
        plane = parse_plane(plane)
    elif plane is not None and not isinstance(plane, Mapping):
        raise ParameterError(
            f"plane must be a mapping such as {{'z': 12}} or 'z=12', got {plane!r}"
        )
    request = _Request(_target(chunks), halo, stride, mpp, plane, series, given,
                       picks=channels is not None)  # fmt: skip
    image = _opened(source, level, chunks, storage_options, request)
    _refuse_chunk_keys(chunks, image)
    if given is not None:  # a new object: a DataArray passed in keeps its attrs
        image = image.assign_attrs(source_axes=" ".join(given))
    if channels is not None:
        image = _chosen_channels(image, channels)
    return image


#: The attrs rioxarray gives one value per band of (GDAL's descriptions, scales, offsets, ...).
_PER_BAND_ATTRS = ("long_name", "scales", "offsets", "units", "nodatavals", "description")


def _chosen_channels(
    image: xr.DataArray, channels: Sequence[str | int] | str | int
) -> xr.DataArray:
    """``image`` with only ``channels`` along its colour dim (by name or index, in that order),
    recording them as ``attrs["source_channels"]``."""
    try:
        dim = image_dims(image)[2]
    except DimensionError:  # not an image's layout: no colour dim found
        dim = None
    if dim is None:
        raise ParameterError(
            f"channels= picks among an image's channels; this one (dims "
            f"{tuple(map(str, image.dims))}) has no colour dim to pick from"
        )
    count = image.sizes[dim]
    wanted = [channels] if isinstance(channels, str | int | np.integer) else list(channels)
    names = channel_names(image)
    have = f"its channels are {', '.join(names)}" if names else f"it has {count} unnamed channels"
    indices = []
    for channel in wanted:
        if isinstance(channel, str) and names and channel in names:
            same = [i for i, name in enumerate(names) if name == channel]
            if len(same) > 1:
                raise ParameterError(
                    f"channels: {channel!r} names {len(same)} channels of this image (indices "
                    f"{', '.join(map(str, same))}); pick one by its index"
                )
            indices.append(same[0])
            continue
        try:
            index = int(channel) if not isinstance(channel, bool | float) else None
        except (TypeError, ValueError):
            index = None
        if index is None or not -count <= index < count:
            raise ParameterError(
                f"channels: {channel!r} is no channel of this image ({have}; or an index from "
                f"0 to {count - 1})"
            )
        indices.append(index % count)
    if not indices or len(set(indices)) != len(indices):
        raise ParameterError(f"channels must name each channel once, at least one; got {wanted!r}")
    if indices == list(range(count)):  # every channel, in order: the image as it is (a
        # resume of a store begun without channels= was refused for the record alone)
        return image
    picked = image.isel({dim: indices})
    if dim not in picked.coords:  # unnamed channels keep their indices, as named ones their names
        picked = picked.assign_coords({dim: indices})
    if isinstance(picked.data, da.Array) and len(picked.chunks[picked.dims.index(dim)]) > 1:
        picked = picked.chunk({dim: -1})  # read channel by channel (_plan): one chunk now
    record = [names[i] for i in indices] if names else indices
    # rioxarray's attrs of one value per band (descriptions, scales, ...): those picked
    per_band = {
        key: tuple(value[i] for i in indices)
        for key, value in image.attrs.items()
        if key in _PER_BAND_ATTRS and isinstance(value, tuple | list) and len(value) == count
    }
    return picked.assign_attrs(per_band, source_channels=json.dumps(record))


def _opened(
    source: Any,
    level: int,
    chunks: _Chunks,
    storage_options: Mapping[str, Any] | None,
    request: _Request,
) -> xr.DataArray:
    """:func:`open_image` of a source, its arguments checked."""
    plane, series, mpp = request.plane, request.series, request.mpp

    if not isinstance(source, str | os.PathLike | Location | zarr.Array | zarr.Group):
        _refuse_series(series, f"a {type(source).__name__}")  # arrays, DataArrays
    if isinstance(source, xr.DataArray):
        _axes_of(tuple(map(str, source.dims)), source.shape, request.dims, "the DataArray")
        if plane:
            dims = [str(d) for d in source.dims]
            selection = _plane_selection(f"the {dims} DataArray", dims, source.shape, plane)
            indexer = {d: s for d, s in zip(source.dims, selection, strict=True) if s is not None}
            source = _plane_attrs(source.isel(indexer), dims, selection, plane)
        if level != 0:
            raise ParameterError(
                f"level={level} picks a pyramid level of a file; a DataArray is one image: "
                "open the file with level=, or pass mpp= to average the DataArray's pixels"
            )
        if mpp is not None:
            source = _dataarray_at(source, mpp, request)
        return source if chunks is None else _rechunked(source, request)
    if plane and request.dims is None:
        name = "an array" if isinstance(source, np.ndarray | da.Array) else str(source)
        if isinstance(source, np.ndarray | da.Array) or str(source).lower().endswith(
            tuple(set(_PLAIN_SUFFIXES) - set(_FILM_SUFFIXES))  # a film's frames: t (below)
        ):
            _refuse_plane(name)
    if isinstance(source, np.ndarray | da.Array):
        _choose_level("an array", [None], level, mpp)  # one level, no pixel size
        return _open_array(source, request, "image")
    if is_picture(source):  # a PIL picture, as its file opens: palette decoded, alpha dropped
        _choose_level("a picture", [None], level, mpp)
        values, alpha = picture_values(source)
        image = _without_alpha(_open_array(values, request, "image"), alpha)
        if entries := data_palette(source):  # its indices, as its file's: consumers refuse them
            image.attrs["source_palette"] = entries
        return image
    if isinstance(source, zarr.Array | zarr.Group):
        return _open_zarr(source, level, request)
    if not isinstance(source, str | os.PathLike | Location):
        raise TypeError(
            f"source must be a path or URL, a NumPy, Dask or Zarr array, an xarray DataArray or "
            f"a PIL picture, got {type(source).__name__}"
        )
    path = locate(source, storage_options)
    _refuse_product(path)
    with named_failures(path):  # a server's refusal or failure, a connection broken: named
        return _opened_at(path, level, request)


def _opened_at(path: Location, level: int, request: _Request) -> xr.DataArray:
    """:func:`open_image` of the file or store at ``path``."""
    series, mpp = request.series, request.mpp
    if path.name.lower().endswith(".zarr"):  # zarr says whether it is there (http lists no dirs)
        if path.is_local and not path.exists():
            raise FileNotFoundError(f"no such image: {path}")
        return _open_zarr(path, level, request)
    if not path.exists():
        raise FileNotFoundError(f"no such image: {path}")
    if path.is_dir() or path.is_zip:
        _refuse_remote_zip(path)
        return _open_zarr(path, level, request)
    kind = file_format(path)
    if kind == "tiff":
        return _open_tiff(path, level, request)
    _refuse_series(series, path)
    if kind == "gdal":
        return _open_gdal(path, level, request)
    _choose_level(path, [None], level, mpp)
    return _recorded(_open_plain(path, request), path, 0, None)
