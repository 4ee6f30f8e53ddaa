"""The block store: writing DataArrays to Zarr v3 block by block, resumably, and reading them back.

**Layout.** A store written by :func:`write_blocks` (or :func:`write_coefficients`, whose array
is named ``"fskde"``) is a Zarr v3 group holding

* the data array, chunked ``(cy, cx, *trailing)`` along its first two (spatial) dims and never
  split along the others,
* its coordinates, one array each, and its attributes (``coordinates`` names the non-index
  coordinates),
* ``xfskde_blocks``: the completion record, a ``uint8`` array of one entry per block (0: not
  written; 1: written; 2: written, and the block holds no value but 0 and NaN),
* the group attributes ``xfskde_status`` (``"incomplete"``, then ``"complete"``),
  ``xfskde_parameters`` (the shape, dtype, dims, attributes and a digest of the coordinates of
  the data, as JSON) and ``xfskde_data`` (the data array's name), written together with the
  group, before anything else.

**Checksums.** Every chunk of every array xfskde writes ends with a CRC-32C checksum (Zarr v3's
``crc32c`` codec, the last bytes-to-bytes codec, after compression). Reading a chunk whose bytes
changed on disk, that cannot be decoded, or that the store says was written but is gone raises
:class:`~xfskde.exceptions.StoreCorruptError` naming the store, the array and the chunk key
(:func:`open_blocks` reads through a checked reader, so the error comes when the lazy array is
computed); :func:`verify_store` reads every chunk and lists what is wrong — of the arrays made
from the data too (an OME-Zarr image's coarser levels and label images, whose chunks
:func:`finalize_store` counts, ``xfskde_chunks``), and every ``zarr.json``
(:func:`check_metadata`).

**Writing.** The store is laid out first; then every Dask task (named ``xfskde-write-...``)
writes one block, its Dask chunk being exactly one Zarr chunk so that concurrent writes never
share a chunk, and then sets that block's entry of the record. Only once every entry is set does
:func:`finalize_store` consolidate the metadata and then, last of all, set the status to
``"complete"``. A write that did not finish therefore never looks finished, and ``resume=True``
computes only the blocks whose entry is missing. Zarr writes every file whole (a temporary file
renamed into place), so a write killed at any point leaves no half-written chunk or record.

**Resuming** checks what shapes the data: the parameters above must match, the chunks are the
store's own (explicit other chunks are refused), and so are the codecs (explicit other
``compressors`` are refused). A store in which no block was written yet, or whose layout was
interrupted, is laid out again with whatever parameters.

**Defaults.** The store's chunk shape is, unless given, the data's own Dask chunks (the largest
along each spatial dim), or for NumPy-backed data the plan of :func:`xfskde.lazy.plan_chunks`.
Data whose chunks are already regular is written as it is, never rechunked.

**Errors.** :class:`~xfskde.exceptions.StoreExistsError`,
:class:`~xfskde.exceptions.StoreIncompleteError`,
:class:`~xfskde.exceptions.StoreParametersError`, :class:`~xfskde.exceptions.StoreFormatError`,
:class:`~xfskde.exceptions.StoreCorruptError`; :class:`~xfskde.exceptions.DimensionError` and
:class:`~xfskde.exceptions.ParameterError` for the data and the arguments;
:class:`FileNotFoundError` for a path that does not exist.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import dask
import dask.array as da
import dask.multiprocessing
import numpy as np
import xarray as xr
import zarr
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from fsspec.core import split_protocol
from zarr.codecs import Crc32cCodec
from zarr.core.buffer import default_buffer_prototype
from zarr.core.group import GroupMetadata
from zarr.core.sync import sync

from .._scheduling import check_room, connect, is_address, refuse_unshared_folder, runs_on_cluster
from .._scheduling import compute as compute_collections
from ..exceptions import (
    DimensionError,
    ImageReadError,
    InputChangedWarning,
    ParameterError,
    StoreCorruptError,
    StoreDamagedWarning,
    StoreExistsError,
    StoreFormatError,
    StoreIncompleteError,
    StoreParametersError,
    find_stack_level,
)
from ..lazy import dask_view, plan_chunks, skipped_blocks
from ._gdal import input_version
from ._location import Location, locate, named_failures, same_version, store_target, zarr_like
from ._record import _BLOCKS, _CHUNKS_ATTR, _STATUS_ATTR, _read_record

__all__ = [
    "BlockDamage",
    "StoreProblem",
    "StoreReport",
    "block_record",
    "check_metadata",
    "finalize_store",
    "forget_damaged_blocks",
    "has_checksums",
    "input_changed",
    "open_blocks",
    "open_coefficients",
    "refuse_other_parameters",
    "source_changed",
    "store_status",
    "verify_store",
    "write_blocks",
    "write_coefficients",
]

#: Group attribute: the JSON of what shapes the data (checked on resume).
_PARAMETERS_ATTR = "xfskde_parameters"
#: Group attribute: the name of the data array the completion record is of (an OME-Zarr
#: image's level 0, "0", has arrays beside it before its metadata says which is the data).
_DATA_ATTR = "xfskde_data"
#: Group attribute, set by a resume that found such arrays damaged: their paths and how many
#: chunks each held when it was written; :func:`finalize_store` refuses to complete the store
#: until each is whole again (a label image added to an image is not written again by the
#: writer of the image).
_REWRITE_ATTR = "xfskde_rewrite"
#: Keys of the parameters' JSON added after the first stores were written: a store written
#: without them is compared without them.
_DIMS_KEY = "xfskde_dims"
_COORDS_KEY = "xfskde_coordinates_sha256"
#: The attrs of a field's gradient operator, and their values before they were recorded.
_GRADIENT_DEFAULTS = {"gradient": "central", "gradient_scale": 1.0}
#: Entries of the record: not written; written; written, no value but 0 or NaN (no gradient
#: or no data anywhere in the block);
#: written as the fill of a block with no foreground, which was neither read nor computed.
_NOT_WRITTEN, _WRITTEN, _WRITTEN_EMPTY, _SKIPPED = 0, 1, 2, 3
#: The array of a coefficient store.
_VARIABLE = "fskde"
#: The start of the name of the Dask arrays :func:`open_blocks` reads a store's arrays into.
_OPENED = "xfskde-open-"


class _InputFile(NamedTuple):
    """A file the data is read from, as its attrs record it."""

    #: what a refusal calls it
    what: str
    #: the attr naming it: an absolute path or a URL (the same file named from another
    #: working directory is the same)
    name: str
    #: the attr of its version (:meth:`Location.version`), recorded for a file only (a mask
    #: made by a method, or given as an array, records a description and no version)
    version: str


#: The input files a store's parameters record. Their versions are compared apart from the
#: parameters, since blocks computed from another version of the same file are not wrong
#: parameters but other pixels: a resume then writes every block again (:func:`_changed_input`).
#: Another file is refused, not written over (:func:`_other_file`).
_INPUT_FILES = (
    _InputFile("image", "source", "source_version"),
    _InputFile("mask", "mask", "mask_version"),
)


class _Default(str):
    """The default of a ``compressors`` argument: equal to its string, yet told apart from the
    same string passed on purpose (a resume adopts the store's codecs unless given others)."""

    __slots__ = ()


# The ``compressors`` choices, each defined once; the strings are the public values.
#: Chunks stored uncompressed.
_RAW = None
#: xfskde's codec, Blosc-LZ4 with bit shuffle (:func:`_blosc_lz4`): the default of
#: :func:`write_coefficients`, whose floats zarr's zstd compresses no better, 2-3x slower.
_BLOSC_LZ4 = _Default("default")
#: zarr's own default codec (zstd): the default of :func:`write_blocks`, a general-purpose
#: codec for whatever else it writes (segmentation labels: small integers in large regions).
_ZARR_DEFAULT = _Default("auto")

# Every chunk is written as it is: coefficient chunks are never all zero in practice, and zarr's
# check for "empty" chunks (a full comparison pass) cost 20 ms per 19 MB complex64 chunk, more
# than writing it (5 ms), in benchmarks/bench_scale.py. It also makes a chunk that is not in
# the store a sign of damage, never of zeros.
_WRITE_CONFIG = {"write_empty_chunks": True}


# --------------------------------------------------------------------------------- locations


# ------------------------------------------------------------------------------------ chunks


def _spatial(dims: Sequence[Any]) -> tuple[int, int]:
    """The positions of the spatial dims: those named ``y`` and ``x`` when both are there (an
    OME-Zarr level is ``(c, y, x)``), else the first two."""
    names = [str(d) for d in dims]
    if "y" in names and "x" in names:
        return names.index("y"), names.index("x")
    return 0, 1


def _array_spatial(array: zarr.Array) -> tuple[int, int]:
    return _spatial(array.metadata.dimension_names or range(array.ndim))


def _region(spatial: tuple[int, int], ndim: int, y: Any, x: Any, other: Any) -> tuple:
    """A tuple over ``ndim`` axes: ``y`` and ``x`` at the spatial positions, ``other`` elsewhere."""
    iy, ix = spatial
    return tuple(y if i == iy else x if i == ix else other for i in range(ndim))


def _axis_chunks(n: int, side: int) -> tuple[int, ...]:
    """An axis of ``n`` cut into chunks of ``side``, the last one possibly shorter."""
    return (side,) * (n // side) + ((n % side,) if n % side else ())


def _store_chunks(data: xr.DataArray, chunks: int | Sequence[int] | None) -> tuple[int, int]:
    """The store's (rows, columns) chunk shape: ``chunks``, else the data's own, else planned.

    Dask-backed data gives the largest of its chunks along each spatial dim (its chunk side
    when regular); NumPy-backed data the side :func:`~xfskde.lazy.plan_chunks` plans for its
    shape. The result is clipped to the data's shape.
    """
    iy, ix = _spatial(data.dims)
    height, width = data.shape[iy], data.shape[ix]
    if chunks is not None:
        cy, cx = (chunks, chunks) if np.isscalar(chunks) else tuple(chunks)
        if not all(isinstance(c, int | np.integer) and c >= 1 for c in (cy, cx)):
            raise ParameterError(
                f"chunks must be a positive number of pixels or a (rows, columns) pair, got "
                f"{chunks!r}"
            )
    elif data.chunks is not None:
        cy, cx = max(data.chunks[iy]), max(data.chunks[ix])
    else:
        rows, cols = plan_chunks((height, width))
        cy, cx = rows[0], cols[0]
    return max(1, min(int(cy), height)), max(1, min(int(cx), width))


def _blocked(data: xr.DataArray, cy: int, cx: int) -> xr.DataArray:
    """``data`` as Dask chunks that match the store's chunks one to one.

    Data already chunked so (each chunk but the last of an axis of the store's side, the other
    dims whole) is returned as it is: no rechunk enters the graph.
    """
    iy, ix = _spatial(data.dims)
    wanted = tuple(
        _axis_chunks(n, cy) if i == iy else _axis_chunks(n, cx) if i == ix else (int(n),)
        for i, n in enumerate(data.shape)
    )
    if data.chunks is not None and tuple(map(tuple, data.chunks)) == wanted:
        return data
    if data.chunks is None:  # in memory: sliced in place, not copied (dask_view)
        return data.copy(data=dask_view(np.asarray(data.data), wanted))
    return data.chunk(dict(zip(data.dims, wanted, strict=True)))


# ---------------------------------------------------------------------------------- codecs


def _blosc_lz4() -> zarr.codecs.BloscCodec:
    """Blosc-LZ4 with bit shuffle, level 1: cheap, and as good as anything lossless here.

    Coefficients are floats whose low mantissa bits are noise: on 512×512×9 complex64 chunks of
    a photograph with sensor-like noise (σ = 2 grey levels) LZ4 with bit shuffle gave a ratio of
    1.10 at ~1.3–1.9 GB/s, byte shuffle 1.02 at 1.2 GB/s, zstd 1.06–1.07 at 0.6 GB/s. Smooth or
    repetitive images compress far better (5.3 on the tiled photograph of bench_scale.py).
    """
    return zarr.codecs.BloscCodec(cname="lz4", clevel=1, shuffle="bitshuffle")


def _is_checksum(codec: Any) -> bool:
    return isinstance(codec, Crc32cCodec) or (
        isinstance(codec, dict) and codec.get("name") == "crc32c"
    )


def _codecs(compressors: Any, dtype: Any) -> tuple[Any, ...]:
    """The bytes-to-bytes codecs of a choice of the writers, ending with the CRC-32C checksum.

    The checksum comes last, after compression, so that it covers the bytes on disk.
    """
    if compressors is _RAW:
        chosen: tuple[Any, ...] = ()
    elif isinstance(compressors, str):
        if compressors == _BLOSC_LZ4:
            chosen = (_blosc_lz4(),)
        elif compressors == _ZARR_DEFAULT:  # zarr's default for the dtype, as zarr would pick it
            probe = zarr.create_array(
                zarr.storage.MemoryStore(), shape=(1,), dtype=dtype, compressors=_ZARR_DEFAULT
            )
            chosen = tuple(probe.compressors)
        else:
            raise ParameterError(
                f"compressors must be zarr codecs, None, {str(_BLOSC_LZ4)!r} or "
                f"{str(_ZARR_DEFAULT)!r}, got {compressors!r}"
            )
    elif isinstance(compressors, list | tuple):
        chosen = tuple(compressors)
    else:
        chosen = (compressors,)
    if not (chosen and _is_checksum(chosen[-1])):
        chosen = (*chosen, Crc32cCodec())
    return chosen


def _codec_list(array: zarr.Array) -> list[dict]:
    """Every codec of an array (serializer and compressors) as JSON, to compare layouts."""
    return [codec.to_dict() for codec in array.metadata.codecs]


def _has_checksum(array: zarr.Array) -> bool:
    return any(_is_checksum(codec) for codec in array.metadata.codecs)


# ------------------------------------------------------------------------------- parameters


def _coordinates_digest(data: xr.DataArray) -> str:
    """A SHA-256 of the coordinates' names, dims, dtypes and values."""
    digest = hashlib.sha256()
    for coord_name in sorted(map(str, data.coords)):
        coord = data.coords[coord_name]
        values = np.asarray(coord.values)
        head = [coord_name, list(map(str, coord.dims)), str(values.dtype), list(values.shape)]
        digest.update(json.dumps(head).encode())
        if values.dtype.kind == "O":
            digest.update(json.dumps(values.tolist(), default=str).encode())
        else:
            digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


def _parameters(data: xr.DataArray) -> str:
    """The JSON a resumed write must match: shape, dtype, dims, coordinates and attributes
    (but the version)."""
    keep = {k: v for k, v in data.attrs.items() if k not in (_STATUS_ATTR, "xfskde_version")}
    shaped = {
        "shape": list(data.shape),
        "dtype": str(data.dtype),
        _DIMS_KEY: list(map(str, data.dims)),
        _COORDS_KEY: _coordinates_digest(data),
    }
    return json.dumps({**keep, **shaped}, sort_keys=True, default=str)


def _recorded(stored: Any, params: str) -> tuple[Any, dict[str, Any]]:
    """A store's recorded parameters, read (None where there are none or they cannot be
    read), and ``params``, the data's (:func:`_parameters`)."""
    try:
        old = json.loads(stored)
    except (TypeError, ValueError):
        old = None
    return old, json.loads(params)


def _compared_parameters(stored: Any, params: str) -> tuple[Any, dict[str, Any]]:
    """A store's recorded parameters (None where unreadable) and ``params``, made comparable:
    keys the store predates are not compared."""
    old, new = _recorded(stored, params)
    if old is None:
        return None, new
    for key in (file.version for file in _INPUT_FILES):  # compared by _changed_input
        new.pop(key, None)
        if isinstance(old, dict):
            old.pop(key, None)
    for key in (_DIMS_KEY, _COORDS_KEY):
        if isinstance(old, dict) and key not in old:
            new.pop(key, None)
    if isinstance(old, dict) and "kernel" in old:  # a field written before gradient= existed:
        for key, value in _GRADIENT_DEFAULTS.items():  # it was computed with the defaults
            old.setdefault(key, value)
    return old, new


def _named_file(record: dict[str, Any], file: _InputFile) -> str | None:
    """The path or URL of ``file`` in a record of parameters, where it names a file (its
    version is recorded too); else None."""
    name = record.get(file.name)
    return name if isinstance(name, str) and file.version in record else None


def _changed_input(stored: Any, params: str) -> str | None:
    """Which input file (:data:`_INPUT_FILES`) is of another version than the one a store's
    recorded parameters name, with both versions; None when every input file recorded on
    both sides is the same (an array in memory records none: it is the caller's to keep).
    Another file is not another version: :func:`_other_file`'s."""
    old, new = _recorded(stored, params)
    if not isinstance(old, dict):
        return None
    changed = [
        f"its {file.what} ({old[file.version]} then, {new[file.version]} now)"
        for file in _INPUT_FILES
        if _named_file(old, file) is not None
        and _named_file(old, file) == _named_file(new, file)
        and not same_version(str(old[file.version]), str(new[file.version]))
    ]
    return " and ".join(changed) or None


def _other_file(stored: Any, params: str) -> tuple[_InputFile, str, str] | None:
    """``(file, then, now)``: an input file (:data:`_INPUT_FILES`: the image, the mask) a
    store was begun from and another one the data is read from now, both as recorded; None
    when each is the same, or is not a file on either side (a mask made by a method, or none:
    the parameters differ, and :func:`_refuse_other_parameters` says so). Another version of
    the *same* file is :func:`_changed_input`'s: that store is written again; another file
    is refused, not written over."""
    old, new = _recorded(stored, params)
    if not isinstance(old, dict):
        return None
    for file in _INPUT_FILES:
        then, now = _named_file(old, file), _named_file(new, file)
        if then is not None and now is not None and then != now:
            return file, then, now
    return None


def _refuse_other_files(store: Any, group: zarr.Group, params: str) -> None:
    """Refuse to resume a store begun from another input file or mask file than the data's
    (:func:`_other_file`), naming both: a resume finishes a store from its own files."""
    _refuse_other_recorded(store, group.attrs.get(_PARAMETERS_ATTR), params)


def _refuse_other_recorded(store: Any, stored: Any, params: str) -> None:
    """:func:`_refuse_other_files` for the store's recorded parameters as JSON, ``stored``."""
    other = _other_file(stored, params)
    if other is None:
        return
    file, then, now = other
    if file.what == "image":
        raise StoreParametersError(
            f"cannot resume {store}: it was computed from {then}, not {now} (a resume "
            "finishes a store from its own input); pass overwrite=True to start again from "
            f"{now}, or name another store"
        )
    raise StoreParametersError(
        f"cannot resume {store}: it was computed with the {file.what} {then}, not {now} (a "
        f"resume finishes a store with its own {file.what}); resume with "
        f"{file.name}={then!r}, or pass overwrite=True to start again with {now}"
    )


def refuse_other_input_files(
    store: Any, recorded: Mapping[str, Any], attrs: Mapping[str, Any]
) -> None:
    """Refuse at once to resume ``store`` from other input files than it was begun from, for a
    writer that has a long way to go before :func:`write_blocks` (a segmentation's fit):
    ``recorded`` are the attrs of the store's data, as :func:`open_blocks` opened it, and
    ``attrs`` what the data to be written will record of its files (``source`` and
    ``source_version``, ``mask`` and ``mask_version``: :data:`_INPUT_FILES`); the same
    comparison as :func:`write_blocks`'s (:func:`_other_file`).

    Raises
    ------
    StoreParametersError
        Naming both files, as :func:`write_blocks` does.
    """
    names = [key for file in _INPUT_FILES for key in (file.name, file.version)]

    def files(found: Mapping[str, Any]) -> str:
        return json.dumps({key: found[key] for key in names if key in found}, default=str)

    _refuse_other_recorded(store_target(store), files(recorded), files(attrs))


def source_changed(attrs: Any) -> tuple[str, str, str] | None:
    """``(source, then, now)`` when the local input file or Zarr store a result was computed
    from (its recorded ``source`` and ``source_version``) is of another version now
    (:meth:`Location.version`); None when it is the same, gone, remote (its storage options
    are not recorded), or not recorded.

    ``attrs`` is a result's attributes, or a store's recorded parameters (a JSON text).
    :func:`finalize_store` refuses to mark complete a store whose input changed while it was
    written (a Zarr input is not checked block by block, a TIFF is), and ``xfskde info``
    flags a store whose input changed since.

    Parameters
    ----------
    attrs : dict or str
        The attributes, or their JSON text (anything else, or text that is not JSON: None).

    Returns
    -------
    (str, str, str) or None
        The recorded ``source``, its recorded version and its version now; or None.
    """
    if isinstance(attrs, str):
        try:
            attrs = json.loads(attrs)
        except ValueError:
            return None
    if not isinstance(attrs, dict):
        return None
    source, then = attrs.get("source"), attrs.get("source_version")
    if not isinstance(source, str) or not isinstance(then, str):
        return None
    if split_protocol(source)[0] not in (None, "file", "local"):
        return None
    location = locate(source)
    try:
        now = input_version(location)  # a VRT's with the files it names
    except (OSError, ImageReadError):  # gone, unreadable: every block was read before
        return None
    return None if same_version(then, now) else (source, then, now)


def input_changed(data: xr.DataArray, store: Any) -> str | None:
    """Whether ``store`` was begun from another version of ``data``'s input files than the
    one ``data`` is computed from (``attrs["source_version"]``, ``attrs["mask_version"]``:
    a file's size, modification time and content digest, or its ETag), saying which; None
    when they are the same or not recorded.

    A resumed :func:`write_blocks` writes such a store again whole (with an
    :class:`~xfskde.exceptions.InputChangedWarning`): its blocks came from other pixels. For
    a writer that leaves a complete store as it is without calling it (an OME-Zarr image).

    Parameters
    ----------
    data : xarray.DataArray
        The result about to be written, with its attrs.
    store : str, pathlib.Path, URL, Location or zarr store
        The store begun before.

    Returns
    -------
    str or None
        What changed (the input or the mask file, with its versions), or None.

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`store_status`.
    """
    store = store_target(store)
    group = _open_group(store, "store")
    return _changed_input(group.attrs.get(_PARAMETERS_ATTR), _parameters(data))


def _same_parameters(stored: Any, params: str) -> bool:
    """Whether a store's recorded parameters are ``params`` (keys it predates are not compared)."""
    old, new = _compared_parameters(stored, params)
    return old == new


#: Values longer than this are named, not shown, in :func:`_parameter_differences`.
_SHOWN_VALUE = 40
#: What an attr that is not recorded means, as a refusal says it: an image read from the first
#: series of a TIFF records none (``open_image`` names another series only).
_UNRECORDED = {"source_series": 0}


def _parameter_differences(stored: Any, params: str, shown: int = 4) -> str:
    """What differs between a store's recorded parameters and ``params``, for a refusal: the
    first ``shown`` keys, each with the store's value and the new one where they are short
    (``seed 0 in the store, 3 now``)."""
    old, new = _compared_parameters(stored, params)
    if not isinstance(old, dict):
        return "its recorded parameters cannot be read"
    names = {_DIMS_KEY: "dims", _COORDS_KEY: "coordinates", "shape": "shape", "dtype": "dtype"}
    values = {
        k: (json.dumps(old.get(k, _UNRECORDED.get(k))), json.dumps(new.get(k, _UNRECORDED.get(k))))
        for k in old.keys() | new.keys()
        if old.get(k) != new.get(k)
    }

    def short(key: str) -> bool:
        return key != _COORDS_KEY and sum(map(len, values[key])) <= 2 * _SHOWN_VALUE

    # the data's own layout first, then its inputs (the mask, its classes: what changes all
    # that the segmentation chooses), then the values a user gives (short: a seed, a size;
    # the shortest first, as a fit's scales and weights are short too but written to 16
    # digits), then what was derived from them (an attr "chose_*" saying why, a value that
    # such an attr says was chosen — a size, a stride —, fitted arrays): a resume with
    # another --seed named the window the new fit chose before the seed. A value chosen on
    # one side only was given on the other: the user's (a resume with --size 5 of a store
    # whose size was chosen named it among "12 more")
    def derived(key: str) -> bool:
        return key.startswith("chose_") or (f"chose_{key}" in old and f"chose_{key}" in new)

    def order(key: str) -> tuple[bool, bool, bool, bool, int, str]:
        length = sum(map(len, values[key])) if short(key) else 0
        inputs = key.startswith(("mask", "source"))
        return key not in names, not inputs, derived(key), not short(key), length, key

    keys = sorted(values, key=order)
    parts = []
    for key in keys[:shown]:
        a, b = values[key]
        parts.append(f"{names.get(key, key)} {a} in the store, {b} now" if short(key)
                     else names.get(key, key))  # fmt: skip
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return "; ".join(parts) + more


# ----------------------------------------------------------------------------------- layout


def refuse_replacing_inputs(store: Any, read: Sequence[tuple[str, Location]], option: str) -> None:
    """Refuse to replace a store (``option``: ``--overwrite``, ``overwrite=True``) that is, or
    holds, what is read to compute what is written there: ``read`` names each file or store
    (``"input"``, ``"mask"``, ``"model"``) with its location. Replaced first, it would be
    gone, or half gone, before it is read (a folder named as the output held the slide).

    Raises
    ------
    ParameterError
        Naming the store and what it is or holds.
    """
    if not isinstance(store, Location):
        return
    for what, where in read:
        if store.holds(where):
            relation = "is" if where.holds(store) else "holds"
            raise ParameterError(
                f"{store} {relation} the {what} {where}: {option} would replace what is "
                "read to compute it; name another output"
            )


def refuse_replacing_sources(data: Any, target: Any, option: str) -> None:
    """Refuse to replace ``target`` (a store, or a file's path) with ``data`` where the lazy
    data reads it (:func:`refuse_replacing_inputs` for what :func:`_read_from` finds, every
    variable of a Dataset's): replaced first, it would be gone before it is read.

    Raises
    ------
    ParameterError
        Naming the target and what it is or holds.
    """
    target = target if isinstance(target, Location) else locate(target)
    arrays = data.data_vars.values() if isinstance(data, xr.Dataset) else [data]
    read = [found for array in arrays for found in _read_from(array)]
    refuse_replacing_inputs(target, read, option)


def _read_from(data: xr.DataArray) -> list[tuple[str, Location]]:
    """What a lazy ``data`` reads as it is computed, as far as it records it, each named for
    :func:`refuse_replacing_inputs`: the image it was opened from (``encoding["source"]``,
    or the ``source`` its attrs record with its version), the mask file its attrs record
    with its version (:data:`_INPUT_FILES`), and every store :func:`open_blocks` read into
    its Dask graph (the maps of a stored field keep no attrs of the store). Data in memory
    reads nothing."""
    if data.chunks is None or not isinstance(data.data, da.Array):
        return []
    found = []
    if isinstance(opened := data.encoding.get("source"), Location):
        found.append(("image", opened))
    for file in _INPUT_FILES:
        if (name := _named_file(data.attrs, file)) is not None:
            found.append((file.what, locate(name)))
    layers = getattr(data.data.dask, "layers", {})
    for layer_name, layer in layers.items():  # open_blocks's readers: one task each
        if _OPENED in str(layer_name) and isinstance(layer, MaterializedLayer):
            for value in layer.values():
                if isinstance(value, _CheckedReader) and isinstance(value.store, Location):
                    found.append(("store", value.store))
    return found


def refuse_foreign_folder(store: Any, option: str) -> None:
    """Refuse to replace a folder (a prefix) that holds files but no Zarr store: ``option``
    (``--overwrite``, ``overwrite=True``) replaces a store or a file written here, never the
    user's other files (zarr clears whatever folder it creates a group in)."""
    if isinstance(store, Location) and not store.is_empty_dir() and store.is_dir():
        if not store.is_zarr_store():
            raise ParameterError(
                f"{store} is a folder of other files, not a Zarr store: {option} replaces only "
                "a store or a file xfskde writes; name another output, or empty it yourself"
            )


def _create_store(
    store: Any,
    field: xr.DataArray,
    name: str,
    chunks: tuple[int, int],
    n_blocks: tuple[int, int],
    params: str,
    codecs: tuple[Any, ...],
    fill_value: Any = 0,
    *,
    new: bool = False,
) -> None:
    """Lay out an empty store: the group with its status, coordinates, the data array, the
    completion record — in that order, so that a layout cut short is recognised as one.

    Written with the zarr API rather than ``Dataset.to_zarr``: xarray 2026.9 stores a *lazy*
    complex variable's metadata as float64 in Zarr v3, and the layout must exist before any
    block is written.

    A ``new`` store (nothing was there) replaces nothing: its group is claimed first, at once
    (:func:`_claim_group`), so that of two writers that both found no store, the second is
    refused (:class:`~xfskde.exceptions.StoreExistsError`) instead of clearing the first's
    layout, or failing in zarr's words.
    """
    attributes = {_STATUS_ATTR: "incomplete", _PARAMETERS_ATTR: params, _DATA_ATTR: name}
    if new:
        group = _claim_group(store, attributes)
    else:
        group = zarr.create_group(
            zarr_like(store), overwrite=True, zarr_format=3, attributes=attributes
        )
    extra = []
    for coord_name, coord in field.coords.items():
        values = np.asarray(coord.values)
        dtype = str if values.dtype.kind in "OU" else values.dtype  # strings: Zarr v3's own
        arr = group.create_array(
            str(coord_name),
            shape=values.shape,
            dtype=dtype,
            chunks=values.shape,
            dimension_names=tuple(map(str, coord.dims)),
            attributes=dict(coord.attrs),
            fill_value=None if values.dtype.kind in "OSU" else 0,
            compressors=_codecs(_ZARR_DEFAULT, dtype),
            config=_WRITE_CONFIG,
        )
        arr[...] = values
        if coord_name not in field.dims:
            extra.append(str(coord_name))
    attrs = dict(field.attrs)
    if extra:
        attrs["coordinates"] = " ".join(extra)
    group.create_array(
        name,
        shape=field.shape,
        dtype=field.dtype,
        chunks=tuple(
            side if side is not None else int(n)
            for side, n in zip(
                _region(_spatial(field.dims), field.ndim, chunks[0], chunks[1], None),
                field.shape,
                strict=True,
            )
        ),
        dimension_names=tuple(map(str, field.dims)),
        attributes=attrs,
        fill_value=fill_value,
        compressors=codecs,
    )
    group.create_array(  # last: a store without it was cut short while being laid out
        _BLOCKS,
        shape=n_blocks,
        chunks=(1, 1),
        dtype="uint8",
        fill_value=0,
        dimension_names=("xfskde_block_y", "xfskde_block_x"),
        compressors=(Crc32cCodec(),),
    )


def _claim_group(store: Any, attributes: dict[str, Any]) -> zarr.Group:
    """The group of a new store, created only where none is: a local one's ``zarr.json``
    opened exclusively (``O_EXCL``: of two writers, exactly one creates it), elsewhere by
    zarr without overwriting. Another writer's store there is a StoreExistsError."""
    taken = StoreExistsError(
        f"{store} already exists (another write laid it out just now); pass resume=True to "
        "finish an interrupted write or overwrite=True to replace it"
    )
    try:
        if isinstance(store, Location) and store.is_local and not store.is_zip:
            held: dict[str, Any] = {}  # the group's metadata as zarr writes it
            zarr.create_group(zarr.storage.MemoryStore(held), zarr_format=3, attributes=attributes)
            os.makedirs(store.url, exist_ok=True)
            with open(os.path.join(store.url, "zarr.json"), "xb") as file:
                file.write(held["zarr.json"].to_bytes())
            return zarr.open_group(zarr_like(store), mode="r+", zarr_format=3)
        return zarr.create_group(zarr_like(store), zarr_format=3, attributes=attributes)
    except (FileExistsError, zarr.errors.ContainsGroupError, zarr.errors.ContainsArrayError,
            zarr.errors.ContainsArrayAndGroupError) as exc:  # fmt: skip
        raise taken from exc


def _store_exists(store: Any) -> bool:
    """Whether something is at ``store`` (an empty directory counts as nothing)."""
    if isinstance(store, Location):
        return store.is_occupied()
    try:
        zarr.open_group(store, mode="r")
    except (zarr.errors.GroupNotFoundError, FileNotFoundError, KeyError):
        return False
    return True


def _open_group(store: Any, what: str) -> zarr.Group:
    """The store's group, read-only; a path that is not a Zarr group is a StoreFormatError."""
    if isinstance(store, Location) and not store.exists():
        raise FileNotFoundError(f"no such {what}: {store}")
    try:
        group = zarr.open_group(zarr_like(store), mode="r")
    except json.JSONDecodeError as exc:  # its metadata cut short or changed: nothing to rebuild
        raise StoreFormatError(
            f"{_metadata_key(store, '')} is damaged (not JSON: {exc}): the store cannot be read "
            "or resumed without it; write it again with overwrite=True (--overwrite)"
        ) from exc
    except (OSError, KeyError, zarr.errors.BaseZarrError) as exc:
        raise StoreFormatError(f"{store} is not a Zarr store ({exc})") from exc
    if group.metadata.consolidated_metadata is None:  # a complete store's are rebuilt from it
        _refuse_damaged_metadata(store, group)
    return group


def _refuse_damaged_metadata(store: Any, group: zarr.Group) -> None:
    """Refuse a store without consolidated metadata (its write did not finish) one of whose
    arrays' or groups' ``zarr.json`` is not JSON, naming it: zarr would fail as it is read,
    in words that name no file, and no copy of it is there to write it back. One listing per
    group and one small read per node; no chunk is listed."""

    async def children(prefix: str) -> list[str]:
        return [name async for name in group.store.list_dir(prefix)]

    prefixes = [""]
    while prefixes:
        prefix = prefixes.pop()
        for child in sync(children(prefix)):
            path = f"{prefix}{child}"
            raw = None if child == "zarr.json" else _raw_chunk(group, f"{path}/zarr.json")
            if raw is None:
                continue  # the group's own metadata, or no node (a chunk's folder)
            try:
                document = json.loads(raw)
            except ValueError as exc:
                raise StoreFormatError(
                    f"{_metadata_key(store, path)} is damaged (not JSON: {exc}), and the store, "
                    "whose write did not finish, holds no copy of it: write it again with "
                    "overwrite=True (--overwrite)"
                ) from exc
            if isinstance(document, dict) and document.get("node_type") == "group":
                prefixes.append(f"{path}/")


def _metadata_key(store: Any, path: str) -> str:
    """How a message names the ``zarr.json`` of the node ``path`` of ``store``."""
    return f"{str(store).rstrip('/')}/{path}{'/' if path else ''}zarr.json"


def _data_name(store: Any, group: zarr.Group, verb: str) -> str:
    """The store's one data array: neither the record, nor a dimension's coordinate, nor a
    coordinate its data array names (a scalar CRS, a 2-D latitude)."""
    multiscales = group.attrs.get("ome", {}).get("multiscales")
    if multiscales and _BLOCKS in group:  # an OME-Zarr image: its full resolution is the data
        return str(multiscales[0]["datasets"][0]["path"])
    arrays = dict(group.arrays())
    recorded = group.attrs.get(_DATA_ATTR)
    if _BLOCKS in group and isinstance(recorded, str) and recorded in arrays:
        return recorded  # the array laid out with the record (an image cut short: level 0)
    dims = {d for arr in arrays.values() for d in (arr.metadata.dimension_names or ())}
    data = [n for n in arrays if n != _BLOCKS and n not in dims]
    named = {c for n in data for c in str(arrays[n].attrs.get("coordinates", "")).split()}
    data = [n for n in data if n not in named]
    if len(data) != 1 or _BLOCKS not in group:
        raise StoreFormatError(
            f"{store} is not a store written by xfskde (arrays {sorted(data)}); "
            f"pass name= to {verb} one of its arrays"
        )
    return data[0]


def _refuse_other_parameters(store: Any, group: zarr.Group, params: str) -> None:
    """Refuse to resume a store written with other parameters than ``params``
    (:func:`_parameters`), naming what differs."""
    recorded = group.attrs.get(_PARAMETERS_ATTR)
    if not _same_parameters(recorded, params):
        raise StoreParametersError(
            f"cannot resume {store}: it was written with other parameters, shape, dims or "
            f"coordinates ({_parameter_differences(recorded, params)}); resume with the "
            "store's, or use overwrite=True to start again"
        )


def refuse_other_parameters(data: xr.DataArray, store: Any) -> None:
    """Refuse to resume ``store`` with ``data`` when the store was begun from another input
    or mask file, or written with other parameters, shape, dims, coordinates or attributes —
    what :func:`write_blocks` checks on resume — for a writer that leaves a complete store as
    it is without calling it (an OME-Zarr image: :func:`xfskde.io.write_ome_zarr`).

    Parameters
    ----------
    data : xarray.DataArray
        The result about to be written, with its attrs.
    store : str, pathlib.Path, URL, Location or zarr store
        The store begun before.

    Raises
    ------
    StoreParametersError
        Naming the other file, or what differs.
    FileNotFoundError, StoreFormatError
        As :func:`store_status`.
    """
    store = store_target(store)
    group, params = _open_group(store, "store"), _parameters(data)
    _refuse_other_files(store, group, params)
    _refuse_other_parameters(store, group, params)


def _refuse_cut_layout(store: Any, group: zarr.Group) -> None:
    """A store whose layout was cut short (its group says "incomplete", its record is not
    there yet) holds no block: say so, and how to start it again."""
    if _BLOCKS not in group and group.attrs.get(_STATUS_ATTR) == "incomplete":
        raise StoreIncompleteError(
            f"{store} was cut short while it was laid out: no block was written; run the write "
            "again with resume=True (--resume), which starts it afresh"
        )


# ------------------------------------------------------------------------------------ write


def _holds_values(block: np.ndarray) -> bool:
    """Whether any value of a block is neither 0 nor NaN: its first values, then (rarely) all."""

    def valued(values: np.ndarray) -> bool:
        return bool(np.any((values != 0) & (values == values)))  # NaN != NaN

    flat = block.reshape(-1)
    return valued(flat[:4096]) or valued(flat)


class _Targets:
    """The array a write fills and its completion record, opened once for the write tasks that
    share this object: every task of a write on threads, one task on a cluster (each is
    unpickled with its own, without the arrays, and opens them).

    Opened for each block, the two arrays cost two metadata reads, each a round trip to zarr's
    event loop, which waits behind the compute threads for Python's lock: the write of a 16384²
    slide's 256 blocks of labels 10.1–10.6 → 9.2–9.4 s end to end opened once."""

    def __init__(self, store: Any, name: str) -> None:
        self.store, self.name = store, name
        self._lock = threading.Lock()
        self._arrays: tuple[zarr.Array, zarr.Array] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"store": self.store, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["store"], state["name"])

    def arrays(self) -> tuple[zarr.Array, zarr.Array]:
        """The data array (writing empty chunks too) and the completion record."""
        with self._lock:
            if self._arrays is None:
                self._arrays = _opened_targets(self.store, self.name)
            return self._arrays


def _opened_targets(store: Any, name: str) -> tuple[zarr.Array, zarr.Array]:
    """The data array ``name`` of ``store`` (writing empty chunks too) and its completion
    record, opened for writing."""
    target = zarr.open_array(zarr_like(store), path=name, mode="r+").with_config(_WRITE_CONFIG)
    return target, zarr.open_array(zarr_like(store), path=_BLOCKS, mode="r+")


def _write_block(
    block: np.ndarray,
    store: Any,
    name: str,
    by: int,
    bx: int,
    cy: int,
    cx: int,
    spatial: tuple[int, int] = (0, 1),
    skipped: bool = False,
    targets: _Targets | None = None,
) -> int:
    """Write one block, then its completion record (in that order), to the arrays of
    ``targets`` (opened here without)."""
    target, record = targets.arrays() if targets is not None else _opened_targets(store, name)
    iy, ix = spatial
    rows = slice(by * cy, by * cy + block.shape[iy])
    cols = slice(bx * cx, bx * cx + block.shape[ix])
    target[_region(spatial, block.ndim, rows, cols, slice(None))] = block
    entry = _SKIPPED if skipped else _WRITTEN if _holds_values(block) else _WRITTEN_EMPTY
    record[by, bx] = entry
    return 1


def _write_mapped_block(
    block: np.ndarray,
    store: Any,
    variable: str,
    chunk_shape: tuple[int, int],
    spatial: tuple[int, int] = (0, 1),
    skipped: frozenset = frozenset(),
    targets: _Targets | None = None,
    block_info: dict | None = None,
) -> np.ndarray:
    """The block function of the write tasks: one ``1`` per block written. Blocks in
    ``skipped`` (no foreground: filled, not computed) are recorded as such."""
    location = block_info[0]["chunk-location"]
    by, bx = location[spatial[0]], location[spatial[1]]
    # a worker without the client's credentials or endpoint says so (botocore's bare error)
    remote = isinstance(store, Location) and not store.is_local
    with named_failures(store, task=True, writing=True) if remote else contextlib.nullcontext():
        written = _write_block(block, store, variable, by, bx, *chunk_shape, spatial=spatial,
                               skipped=(by, bx) in skipped, targets=targets)  # fmt: skip
    return np.full((1,) * block.ndim, written, np.int64)


def store_status(store: Any, *, storage_options: dict | None = None) -> dict[str, Any]:
    """How far the write of a store got.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks` or :func:`write_coefficients`.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    dict
        ``{"complete": bool, "blocks_done": int, "blocks_total": int, "blocks_skipped": int}``:
        whether the status is ``"complete"``, how many entries of the completion record are
        set, of how many, and how many of those blocks had no foreground under the mask (not
        computed: stored as the fill value).

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    StoreFormatError
        If it is not a Zarr store.
    """
    store = store_target(store, storage_options)
    group = _open_group(store, "store")
    done = _read_record(group)[0] if _BLOCKS in group else np.zeros((0, 0))
    return {
        "complete": group.attrs.get(_STATUS_ATTR) == "complete",
        "blocks_done": int((done > 0).sum()),
        "blocks_total": int(done.size),
        "blocks_skipped": int((done == _SKIPPED).sum()),
    }


def block_record(store: Any, *, storage_options: dict | None = None) -> np.ndarray:
    """The completion record of a store: one entry per block, as a ``(blocks_y, blocks_x)`` array.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks` or :func:`write_coefficients`.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    numpy.ndarray
        ``uint8``: 0 where the block is not written (or its entry cannot be read), 1 where it
        is, 2 where it is and holds no value but 0 and NaN (for a coefficient field: no
        gradient or no data anywhere in the block, as in a constant region or one of missing
        pixels).

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`store_status`; also when the store has no completion record.
    """
    store = store_target(store, storage_options)
    group = _open_group(store, "store")
    if _BLOCKS not in group:
        raise StoreFormatError(f"{store} is not a store written by xfskde (no {_BLOCKS!r})")
    return _read_record(group)[0]


def write_coefficients(
    coeffs: xr.DataArray,
    store: Any,
    *,
    chunks: int | tuple[int, int] | None = None,
    resume: bool = False,
    overwrite: bool = False,
    compute: bool = True,
    scheduler: Any = None,
    progress: bool = False,
    compressors: Any = _BLOSC_LZ4,
    storage_options: dict | None = None,
    verify: bool = False,
) -> Any:
    """Write a ``(y, x, k)`` coefficient field to a Zarr v3 store, resumably.

    :func:`write_blocks` with the array named ``"fskde"`` and xfskde's codec for floats.

    Parameters
    ----------
    coeffs : xarray.DataArray
        A field from :func:`xfskde.local_fskde` (NumPy- or Dask-backed).
    store : str, pathlib.Path, URL or zarr store
        A path for work on a cluster (tasks open it themselves).
    chunks : int or (int, int), optional
        Zarr chunk shape along (y, x); k is never split. Default: the field's Dask chunks (the
        largest along each dim), or for a NumPy-backed field the chunks
        :func:`xfskde.lazy.plan_chunks` plans for its shape. The Dask chunks are made to match
        exactly, so concurrent writes never share a chunk; a field already chunked so is
        written without a rechunk.
    resume : bool, optional
        Continue an interrupted write: blocks whose completion record exists are not computed
        again, unless their chunk is not in the store (a listing of its keys) or does not read
        back (:func:`forget_damaged_blocks`: a chunk gone means the store was damaged after it
        was written, and then every other recorded block is read back against its checksum;
        the status becomes ``"incomplete"``, they are computed again, and a
        :class:`~xfskde.exceptions.StoreDamagedWarning` says how many). The parameters must
        match the store's (shape, dtype, dims, coordinates, attributes); the chunks and the
        codecs are the store's own (``chunks`` and ``compressors`` may be left out, and others
        are refused), whatever the field's Dask chunks. It is refused for a store begun from
        another input file or mask file (its ``source``, its ``mask``). A store in which no
        block was written yet is started again, with any parameters; one begun from another
        version of the field's input file or mask file (its ``source_version``,
        ``mask_version``: :func:`input_changed`) is written again whole, with an
        :class:`~xfskde.exceptions.InputChangedWarning`.
    overwrite : bool, optional
        Replace an existing store (otherwise an existing store is an error unless ``resume``);
        never one that is, or holds, what the lazy field is read from (the image it was opened
        from, its mask file, a store :func:`open_blocks` read): that is refused.
    compute : bool, optional
        False returns the Dask collection of block writes (compute it to write); the status is
        then set by :func:`finalize_store`. A computed write that fails (or is interrupted)
        before its first block is written removes the store it laid out, so that the corrected
        run starts afresh (on a local scheduler: on a cluster, where tasks already running
        cannot be waited for, it stays, and ``resume=True`` starts it again); one that fails
        later leaves the store to be resumed.
    scheduler : str or distributed.Client, optional
        Where the blocks run: ``"threads"``, ``"processes"``, ``"synchronous"``, a
        ``distributed.Client`` or the address of a Dask scheduler (``"tcp://host:8786"``; an
        address nothing answers on is a :class:`ConnectionError` within seconds).
        Default: Dask's current scheduler (the active ``Client``, if any).
    progress : bool, optional
        Show a progress bar that suits the scheduler: Dask's ``ProgressBar`` locally,
        ``distributed.progress`` on a cluster.
    compressors : zarr codecs, None, "default" or "auto"
        Compression of the coefficient chunks; a CRC-32C checksum (Zarr's ``crc32c`` codec) is
        always appended. The default, ``"default"``, is Blosc-LZ4 with bit shuffle: it costs
        little and saves ~10 % on noisy photographs (floats compress poorly), where ``"auto"``,
        zarr's own default (zstd), is 2-3x slower for no better ratio. None stores them raw;
        for much smaller stores, pass a lossy filter such as numcodecs' ``BitRound`` yourself.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).
    verify : bool, optional
        With ``resume``: read every block the store records as written back against its
        checksum before resuming, and compute the damaged ones again — the repair of a store
        whose chunk changed in place, which a resume without it does not read (a complete
        store whose chunks are all there is otherwise left as it is).

    Returns
    -------
    int or dask.array.Array
        The number of blocks written now (0 when everything was already there), or, with
        ``compute=False``, a Dask array with one entry per pending block.

    Raises
    ------
    DimensionError
        If ``coeffs`` does not have dims ``("y", "x", "k")``.
    StoreExistsError, StoreParametersError, StoreFormatError, ParameterError
        As :func:`write_blocks`.
    """
    planes = [d for d in coeffs.dims if d not in ("y", "x", "k")]
    if planes and {"y", "x", "k"} <= set(coeffs.dims):  # the field of a stack of images
        first = planes[0]
        raise DimensionError(
            f"coeffs is the field of a stack of images (dims {coeffs.dims}): a store holds one "
            f"image's field; write each plane's (coeffs.isel({first}=0), one store each), or the "
            "whole stack with xarray's to_zarr (not resumable)"
        )
    if tuple(coeffs.dims) != ("y", "x", "k"):
        raise DimensionError(
            f"coeffs must have dims ('y', 'x', 'k'), got {coeffs.dims}: pass a field from "
            "xfskde.local_fskde, or call .transpose('y', 'x', 'k') first"
        )
    return write_blocks(
        coeffs, store, name=_VARIABLE, chunks=chunks, resume=resume, overwrite=overwrite,
        compute=compute, scheduler=scheduler, progress=progress, compressors=compressors,
        storage_options=storage_options, verify=verify,
    )  # fmt: skip


def write_blocks(
    data: xr.DataArray,
    store: Any,
    *,
    name: str,
    chunks: int | tuple[int, int] | None = None,
    resume: bool = False,
    overwrite: bool = False,
    compute: bool = True,
    scheduler: Any = None,
    progress: bool = False,
    compressors: Any = _ZARR_DEFAULT,
    storage_options: dict | None = None,
    finalize: bool = True,
    fill_value: Any = 0,
    verify: bool = False,
) -> Any:
    """Write any ``(y, x, ...)`` DataArray to a Zarr v3 store block by block, resumably.

    The machinery behind :func:`write_coefficients` and ``xfskde segment``: the store is laid
    out first (the group with the status ``"incomplete"`` and the parameters, coordinates, the
    array ``name``, a completion record of one entry per block), each block writes its data and
    then its record, and the status becomes ``"complete"`` (:func:`finalize_store`) only once
    every record exists. The first two dims are cut into ``chunks``; the others are never split.
    Dask data already chunked so is written as it is (no rechunk); the write tasks are named
    ``xfskde-write-...``. Every chunk carries a CRC-32C checksum.

    Parameters
    ----------
    data : xarray.DataArray
        NumPy- or Dask-backed, with the two spatial dims first.
    store : str, pathlib.Path, URL or zarr store
        A path for work on a cluster (tasks open it themselves).
    name : str
        Name of the array in the store.
    chunks, resume, overwrite, compute, scheduler, progress : optional
        As in :func:`write_coefficients` (the same defaults; for ``chunks`` the data's own
        Dask chunks, else :func:`xfskde.lazy.plan_chunks`).
    compressors : zarr codecs, None, "auto" or "default"
        Codecs of the chunks, followed by the CRC-32C checksum. The default, ``"auto"``, is
        zarr's own default (zstd), a general-purpose codec for data of any kind (``xfskde
        segment`` writes its labels with it); ``"default"`` is xfskde's Blosc-LZ4 with bit
        shuffle, the default of :func:`write_coefficients`, chosen for floating-point
        coefficients; None stores them raw (with the checksum). A resume adopts the store's
        codecs when ``compressors`` is left out.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).
    finalize : bool, optional
        Mark the store complete once every block is written (:func:`finalize_store`). False
        leaves that to the caller, which writes more into the group first (the levels and the
        metadata of an OME-Zarr image) and then calls :func:`finalize_store` itself.
    fill_value : scalar, optional
        What a chunk never written reads as (default 0; NaN suits maps, where it means "no
        value").
    verify : bool, optional
        As in :func:`write_coefficients`.

    Returns
    -------
    int or dask.array.Array
        The number of blocks written now, or the pending writes with ``compute=False``.

    Raises
    ------
    DimensionError
        If ``data`` has fewer than two dims.
    ParameterError
        For ``chunks`` that are not positive or an unknown ``compressors`` string; for
        ``overwrite`` of a store that is, or holds, what the lazy ``data`` is read from (as
        far as it records it: the image it was opened from, its mask file, a store
        :func:`open_blocks` read), or of a folder of other files that is no Zarr store.
    StoreExistsError
        If the store exists and neither ``resume`` nor ``overwrite`` is set.
    StoreParametersError
        If ``resume`` meets a store written with other parameters, shape, dtype, dims or
        coordinates, or from another input or mask file (its recorded ``source`` or
        ``mask``), or is given chunks or compressors other than the store's.
    StoreFormatError
        If ``resume`` meets something that is not a Zarr store.

    Warns
    -----
    InputChangedWarning
        If ``resume`` meets a store begun from another version of the data's input file or
        mask file (:func:`input_changed`): every block is written again, in the store's chunks
        and codecs.
    StoreDamagedWarning
        If ``resume`` meets blocks recorded as written whose chunks are gone or do not read
        back, or damaged coordinates (:func:`forget_damaged_blocks`): they are written again.
    """
    if data.ndim < 2:
        raise DimensionError(
            f"data must have at least two (spatial) dims, got {data.dims}: pass a (y, x, ...) "
            "DataArray"
        )
    store = store_target(store, storage_options)
    if isinstance(store, Location) and store.is_zip:
        raise ParameterError(
            f"cannot write a store at {store}: a zip file is read, not written; write the "
            "store to a folder (NAME.zarr) and zip it afterwards"
        )
    if isinstance(store, Location) and store.read_only:
        raise ParameterError(
            f"cannot write a store at {store}: {store.protocol}:// is read-only; write to a "
            "local path, s3:// or gs:// instead"
        )
    if isinstance(store, Location):
        store.refuse_missing_bucket()
    if verify and not resume:
        raise ParameterError(
            "verify=True reads back the blocks a resume keeps: pass resume=True too (a new "
            "store is checked with xfskde.io.stores.verify_store)"
        )
    if compute and is_address(scheduler):  # connected before anything is laid out
        with connect(scheduler) as client:
            return write_blocks(
                data, store, name=name, chunks=chunks, resume=resume, overwrite=overwrite,
                compute=compute, scheduler=client, progress=progress, compressors=compressors,
                verify=verify,
            )  # fmt: skip
    if compute and isinstance(store, Location) and store.protocol == "memory":
        _refuse_other_processes(store, scheduler)
    if compute and isinstance(store, Location) and store.is_local:  # the tasks write its blocks
        refuse_unshared_folder(os.path.dirname(store.url.rstrip(os.sep)), scheduler)
    codecs = _codecs(compressors, data.dtype)
    params = _parameters(data)
    exists = _store_exists(store)
    if exists and not (resume or overwrite):
        raise StoreExistsError(
            f"{store} already exists; pass resume=True to finish an interrupted write or "
            "overwrite=True to replace it"
        )
    if exists and overwrite:
        refuse_replacing_sources(data, store, "overwrite=True")
        refuse_foreign_folder(store, "overwrite=True")
    fresh = not exists or overwrite
    kept: zarr.Array | None = None  # a store written again from a new input keeps its layout
    if not fresh:
        group = _open_group(store, "store")
        if _BLOCKS not in group and group.attrs.get(_STATUS_ATTR) == "incomplete":
            fresh = True  # its layout was cut short: nothing in it was written
        elif _BLOCKS in group and name not in group:  # xfskde's, of another array
            held = ", ".join(repr(k) for k, a in group.arrays() if a.ndim > 1 and k != _BLOCKS)
            raise StoreFormatError(
                f"cannot resume {store}: it holds {held or 'no image'}, not {name!r} (written "
                "by another command or option: xfskde segment --abundances writes "
                "'abundances'); use overwrite=True to replace it"
            )
        elif _BLOCKS not in group:
            raise StoreFormatError(
                f"cannot resume {store}: it is not a store written by xfskde (no array {name!r} "
                f"or no completion record {_BLOCKS!r}); use overwrite=True to replace it"
            )
        elif not (written := _read_record(group)[0] > 0).any():
            fresh = True  # nothing was written: start again, with whatever parameters
        else:
            _refuse_other_files(store, group, params)  # another image or mask file
            changed = _changed_input(group.attrs.get(_PARAMETERS_ATTR), params)
            if changed is not None:
                # its blocks came from other pixels: none of them is kept (the file was
                # replaced, or repaired after a failed read: either way, only a whole new
                # write is sure)
                warnings.warn(
                    f"{store} was begun from another version of {changed}: "
                    + (
                        "its one written block is"
                        if written.sum() == 1
                        else f"its {int(written.sum())} written blocks are"
                    )
                    + " computed again",
                    InputChangedWarning,
                    stacklevel=find_stack_level(),
                )
                fresh, kept = True, group[name]
            else:
                _refuse_other_parameters(store, group, params)
                _repair(store, group, name, data, verify)
    if kept is not None and chunks is None:  # the chunks and codecs it was begun with
        stored_y, stored_x = _array_spatial(kept)
        cy, cx = int(kept.chunks[stored_y]), int(kept.chunks[stored_x])
        if isinstance(compressors, _Default):
            codecs = tuple(kept.compressors)
    elif fresh:
        cy, cx = _store_chunks(data, chunks)
    else:
        # the blocks already written, and their records, are on the store's own grid: the
        # resumed write adopts it (a grid of other chunks would leave holes marked complete)
        stored_y, stored_x = _array_spatial(group[name])
        cy, cx = int(group[name].chunks[stored_y]), int(group[name].chunks[stored_x])
        if chunks is not None and _store_chunks(data, chunks) != (cy, cx):
            raise StoreParametersError(
                f"cannot resume {store} with chunks {chunks!r}: it is written in chunks of "
                f"{(cy, cx)}; drop chunks= (a resume adopts the store's chunks) or overwrite"
            )
        # and its codecs: the blocks it holds were encoded with them (given others: refused)
        if not isinstance(compressors, _Default):
            stored = _codec_list(group[name])
            wanted = _codec_list(
                zarr.create_array(
                    zarr.storage.MemoryStore(), shape=group[name].shape,
                    chunks=group[name].chunks, dtype=group[name].dtype, compressors=codecs,
                )
            )  # fmt: skip
            if wanted != stored:
                raise StoreParametersError(
                    f"cannot resume {store} with compressors {compressors!r}: its chunks are "
                    f"encoded with {[c['name'] for c in stored]}; drop compressors= (a resume "
                    "adopts the store's codecs) or overwrite"
                )
    field = _blocked(data, cy, cx)
    spatial = _spatial(field.dims)
    nby, nbx = len(field.chunks[spatial[0]]), len(field.chunks[spatial[1]])
    if compute:  # on a cluster too small, refused before an overwrite touches the old store
        check_room([field.data], scheduler)
    if fresh:
        if overwrite and isinstance(store, Location) and store.is_file():
            store.remove()  # a file where the store goes: zarr cannot clear it itself
        _create_store(store, field, name, (cy, cx), (nby, nbx), params, codecs, fill_value,
                      new=not exists)  # fmt: skip
    done = _read_record(zarr.open_group(zarr_like(store), mode="r"))[0] > 0
    # one writer mapped over every block; selecting the missing blocks' outputs lets Dask cull
    # the rest, so a resumed write neither reads nor computes what is already stored
    store_key = store.token() if isinstance(store, Location) else store
    writes = field.data.map_blocks(
        _write_mapped_block,
        store=store,
        variable=name,  # not name=: map_blocks takes that for the output's (the tasks') name
        chunk_shape=(cy, cx),
        spatial=spatial,
        skipped=frozenset(skipped_blocks(field.data, spatial)),
        targets=_Targets(store, name),
        chunks=tuple((1,) * len(c) for c in field.chunks),
        dtype=np.int64,
        meta=np.empty((0,) * field.ndim, np.int64),
        name=f"xfskde-write-{tokenize(field.data.name, store_key, name, (cy, cx))}",
    )
    pending = _pending(writes, np.argwhere(~done), spatial)
    if not compute:
        return pending
    try:
        written = int(compute_collections([pending.sum()], scheduler, progress, check=False)[0])
    except BaseException:
        # a write that failed before its first block leaves nothing in the way; on a cluster,
        # tasks that already run cannot be waited for, so the (resumable) layout stays there
        if fresh and not runs_on_cluster(scheduler):
            _remove_if_untouched(store)
        raise
    if finalize:
        finalize_store(store)
    return written


def _pending(writes: da.Array, blocks: np.ndarray, spatial: tuple[int, int]) -> da.Array:
    """The writes of the blocks still to do, as one 1-D array named ``xfskde-pending-...``: one
    task per block, each pointing at its write task, so that Dask culls every other block (a
    resumed write neither reads nor computes what is already stored) and the graph's names say
    what it does."""
    if not len(blocks):
        return da.zeros(0, dtype=np.int64)
    name = f"xfskde-pending-{tokenize(writes.name, blocks.tobytes())}"
    layer = {
        (name, i): (np.ravel, (writes.name, *_region(spatial, writes.ndim, int(by), int(bx), 0)))
        for i, (by, bx) in enumerate(blocks)
    }
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[writes])
    return da.Array(graph, name, chunks=((1,) * len(blocks),), dtype=np.int64,
                    meta=np.empty((0,), np.int64))  # fmt: skip


def _refuse_other_processes(store: Location, scheduler: Any) -> None:
    """A ``memory://`` store lives in this process: tasks run by other processes cannot reach
    it (they would write to memories of their own and the store would never be complete)."""
    elsewhere = runs_on_cluster(scheduler) or (
        dask.base.get_scheduler(scheduler=scheduler) is dask.multiprocessing.get
    )
    if elsewhere:
        raise ParameterError(
            f"{store} lives in this process's memory, which the scheduler's worker processes "
            "cannot reach: write to a path or URL they share (s3://, gs://, a shared "
            "filesystem), or compute with scheduler='threads'"
        )


def _remove_if_untouched(store: Any) -> None:
    """Remove a store laid out by this write if no block of it was written (a path or URL)."""
    if not isinstance(store, Location) or not store.is_dir():
        return
    try:
        untouched = store_status(store)["blocks_done"] == 0
    except (OSError, StoreFormatError, KeyError, ValueError):
        return
    if untouched:
        try:
            store.remove()
        except OSError:
            pass  # a store that cannot be removed stays, and resume=True starts it again


def _refuse_unrepaired(store: Any, group: zarr.Group) -> None:
    """Refuse to complete a store an array of which a resume found damaged (:data:`_REWRITE_ATTR`)
    and the write that finished it did not write again: fewer chunks than it held, or one that
    does not read back. Then the mark is taken off."""
    rewrite = group.attrs.get(_REWRITE_ATTR)
    if not rewrite:
        return
    arrays = dict(_derived_arrays(group, _data_name(store, group, "finalize")))
    left = []
    for path, held in rewrite.items():
        if path not in arrays:
            continue  # taken out of the store: nothing of it says it is whole
        array, keys = arrays[path], _chunk_keys(group, path)
        if len(keys) < int(held) or any(
            _chunk_problem(array, _chunk_coords(array, path, key), written=True) is not None
            for key in keys
        ):
            left.append(path)
    if left:
        them = "it" if len(left) == 1 else "them"
        raise StoreIncompleteError(
            f"{store}: {', '.join(left)} {'was' if len(left) == 1 else 'were'} found damaged, "
            "and the write that finished the store did not write "
            f"{them} again (a label image added by write_ome_zarr_labels is not among what the "
            f"image's writer writes): write {them} again with xfskde.io.write_ome_zarr_labels, "
            "then call xfskde.io.finalize_store, or restore the store from a copy"
        )
    del group.attrs[_REWRITE_ATTR]


def _count_chunks(store: Any, group: zarr.Group) -> None:
    """Record how many chunks each array made from the store's data holds (``group`` opened
    writable, without its consolidated metadata), so that one gone is found: when the store is
    finalized, and when an array is added to a complete one (a label image)."""
    derived = _derived_arrays(group, _data_name(store, group, "finalize"))
    if derived or _CHUNKS_ATTR in group.attrs:
        group.attrs[_CHUNKS_ATTR] = {path: len(_chunk_keys(group, path)) for path, _ in derived}


def finalize_store(store: Any, *, storage_options: dict | None = None) -> None:
    """Mark a store complete once every block's record exists: consolidate its metadata, then,
    last of all, set its status to ``"complete"``. Where the store holds arrays made from its
    data (an OME-Zarr image's coarser levels and label images), how many chunks each holds is
    recorded first, so that :func:`verify_store` and a resume find one that is gone.

    :func:`write_blocks` calls it itself; call it after computing the writes it returned with
    ``compute=False``.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store laid out by :func:`write_blocks` or :func:`write_coefficients`.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Raises
    ------
    StoreIncompleteError
        If some block's record is missing: finish the write with ``resume=True``. Or if the
        local input file or Zarr store it was computed from (its recorded ``source``) is of
        another version than the one it was opened at (:func:`source_changed`): its blocks
        may hold both.
    """
    store = store_target(store, storage_options)
    status = store_status(store)
    if status["blocks_done"] != status["blocks_total"]:
        raise StoreIncompleteError(
            f"{store}: only {status['blocks_done']} of {status['blocks_total']} blocks were "
            "written; run the write again with resume=True (--resume)"
        )
    changed = source_changed(_open_group(store, "store").attrs.get(_PARAMETERS_ATTR))
    if changed is not None:
        source, then, now = changed
        raise StoreIncompleteError(
            f"{store}: {source} changed while it was written ({then} then, {now} now), so its "
            "blocks may hold both versions; open the input again and resume the write "
            "(resume=True): it is written again, from the input as it is now"
        )
    group = zarr.open_group(zarr_like(store), mode="r+", use_consolidated=False)
    _refuse_unrepaired(store, group)
    _count_chunks(store, group)
    with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
        warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
        zarr.consolidate_metadata(zarr_like(store))
        group = zarr.open_group(zarr_like(store), mode="r+")
    group.attrs[_STATUS_ATTR] = "complete"  # the last write: a store cut short never says it


# ------------------------------------------------------------------------------ chunk checks


def _chunk_key(array: zarr.Array, coords: tuple[int, ...]) -> str:
    """The key of a chunk in the store (``"fskde/c/0/1/0"``)."""
    key = array.metadata.encode_chunk_key(tuple(int(c) for c in coords))
    return f"{array.path}/{key}" if array.path else key


def _raw_chunk(array: zarr.Array, key: str) -> bytes | None:
    """The bytes of a chunk as stored, or None if the store has no such key."""
    buffer = sync(array.store.get(key, prototype=default_buffer_prototype()))
    return None if buffer is None else buffer.to_bytes()


def _chunk_exists(array: zarr.Array, key: str) -> bool:
    return bool(sync(array.store.exists(key)))


async def _keys_under(store: Any, prefix: str) -> set[str]:
    return {key async for key in store.list_prefix(prefix)}


def _derived_arrays(group: zarr.Group, name: str) -> list[tuple[str, zarr.Array]]:
    """The arrays of a store made from its data array ``name`` (an OME-Zarr image's coarser
    levels and label images, at any depth): every array but the data, its record and its
    coordinates, by path."""
    skip = {name, _BLOCKS, *(n for n, _ in _coordinate_arrays(group, name))}
    return sorted(
        (str(path), node)
        for path, node in group.members(max_depth=None)
        if isinstance(node, zarr.Array) and path not in skip
    )


def _chunk_keys(group: zarr.Group, path: str) -> list[str]:
    """The keys of the chunks of the array ``path`` that are in the store (one listing)."""
    keys = sync(_keys_under(group.store, f"{path}/"))
    return sorted(key for key in keys if key != f"{path}/zarr.json")


def _chunk_coords(array: zarr.Array, path: str, key: str) -> tuple[int, ...]:
    """The chunk coordinates of the key ``key`` of the array ``path`` (``"1/c/0/2/3"``: zarr's
    own decoding drops one character too few of the default encoding's ``c/``)."""
    encoding = array.metadata.chunk_key_encoding
    relative = key[len(path) + 1 :]
    if isinstance(encoding, zarr.core.chunk_key_encodings.DefaultChunkKeyEncoding):
        relative = relative[len("c") + len(encoding.separator) :]
    return tuple(int(c) for c in relative.split(encoding.separator) if c != "")


def _derived_problems(
    group: zarr.Group, name: str, *, read: bool, workers: int = 4
) -> tuple[list[StoreProblem], int, tuple[str, ...]]:
    """What is wrong with the arrays made from a complete store's data (:func:`_derived_arrays`):
    chunks gone (fewer than :func:`finalize_store` counted), and, when ``read`` or when one is
    gone, chunks that do not read back against their checksum. Also the number of chunks read,
    and the arrays whose chunks were not counted (a store finalized before they were): only
    what is there can be checked of those."""
    counted = group.attrs.get(_CHUNKS_ATTR) or {}
    listed = [(p, array, _chunk_keys(group, p)) for p, array in _derived_arrays(group, name)]
    problems: list[StoreProblem] = []
    for path, _, keys in listed:
        gone = int(counted.get(path, 0)) - len(keys)
        if gone > 0:
            its = "it" if gone == 1 else "they"
            problems.append(StoreProblem(
                path, f"{path}/c", "missing",
                f"{gone} of the {counted[path]} chunks it held when it was written "
                f"{'is' if gone == 1 else 'are'} gone ({its} would read as its fill value)",
            ))  # fmt: skip
    chunks = [(path, array, key) for path, array, keys in listed for key in keys]
    if not (read or problems):
        return problems, 0, tuple(p for p, _, _ in listed if p not in counted)

    def check(item: tuple[str, zarr.Array, str]) -> StoreProblem | None:
        path, array, key = item
        problem = _chunk_problem(array, _chunk_coords(array, path, key), written=True)
        return None if problem is None else StoreProblem(path, key, *problem)

    with ThreadPoolExecutor(max(1, int(workers))) as pool:
        problems += [found for found in pool.map(check, chunks) if found is not None]
    return problems, len(chunks), tuple(p for p, _, _ in listed if p not in counted)


def _damaged_metadata(store: Any, group: zarr.Group) -> list[tuple[str, str, Any]]:
    """The ``zarr.json`` of the store's arrays and groups that are gone or are not JSON, each
    as its path, what is wrong, and the copy its root's consolidated metadata holds (to
    write it back) or None. Only a store with consolidated metadata (a complete one) lists its
    nodes without reading each one's ``zarr.json``; the root's own is read by
    :func:`_open_group`."""
    consolidated = group.metadata.consolidated_metadata
    if consolidated is None:
        return []
    damaged = []
    for path, metadata in consolidated.flattened_metadata.items():
        raw = _raw_chunk(group, f"{path}/zarr.json")
        if raw is None:
            damaged.append((path, "gone", metadata))
            continue
        try:
            document = json.loads(raw)
            if not isinstance(document, dict) or document.get("zarr_format") != 3:
                raise ValueError("not Zarr v3 metadata")
        except ValueError as exc:
            damaged.append((path, f"not Zarr metadata: {' '.join(str(exc).split())}", metadata))
    return damaged


def _rebuild_metadata(store: Any, damaged: Sequence[tuple[str, str, Any]]) -> None:
    """Write each damaged ``zarr.json`` back from the copy the root's consolidated metadata
    holds (the same bytes zarr wrote; a group's without the consolidated metadata only the root
    holds)."""
    writable = zarr.open_group(zarr_like(store), mode="r+")
    prototype = default_buffer_prototype()
    for path, _, metadata in damaged:
        if isinstance(metadata, GroupMetadata):
            metadata = dataclasses.replace(metadata, consolidated_metadata=None)
        buffer = metadata.to_buffer_dict(prototype)["zarr.json"]
        sync(writable.store.set(f"{path}/zarr.json", buffer))


def _metadata_problems(store: Any, group: zarr.Group) -> list[StoreProblem]:
    """:func:`_damaged_metadata` as problems of :func:`verify_store`."""
    return [
        StoreProblem(path, f"{path}/zarr.json", "damaged",
                     f"its metadata is {what}; a resume writes it again from the copy in the "
                     "store's consolidated metadata")
        for path, what, _ in _damaged_metadata(store, group)
    ]  # fmt: skip


def has_checksums(
    store: Any, *, name: str | None = None, storage_options: dict | None = None
) -> bool:
    """Whether the chunks of a store's data array carry a CRC-32C checksum (those of a store
    written before xfskde checksummed them do not: reading them back checks that they decode,
    not that their values are the ones written).

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients` or the CLI.
    name : str, optional
        The data array; default: the store's only one.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    bool
        True when the array's codecs include the CRC-32C checksum.

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`verify_store`.
    """
    _, group, name = _recorded_array(store, storage_options, name, "check")
    return _has_checksum(group[name])


def check_metadata(store: Any, *, storage_options: dict | None = None) -> tuple[StoreProblem, ...]:
    """The ``zarr.json`` files of a complete store's arrays and groups that are gone or damaged.

    A complete store is read through its consolidated metadata (the copy of every array's and
    group's metadata its root holds), so xfskde reads it whole without them; other readers
    (ome-zarr-py, napari, zarr without consolidated metadata) read each file and fail. One
    small read per array or group, no chunk: what :func:`verify_store` checks of the metadata,
    and a resume writes each one back from the consolidated copy.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients`,
        :func:`~xfskde.io.write_ome_zarr` or the CLI.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    tuple of StoreProblem
        One ``"damaged"`` problem per file (empty for a store without consolidated metadata:
        an incomplete one, whose resume writes its metadata again).

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`store_status` (its root ``zarr.json`` damaged: a StoreFormatError naming it).
    """
    store = store_target(store, storage_options)
    return tuple(_metadata_problems(store, _open_group(store, "store")))


class BlockDamage(NamedTuple):
    """What a resume found wrong with the blocks a store records as written
    (:func:`forget_damaged_blocks`): each is marked not written, to be computed again."""

    #: blocks recorded as written whose chunk is not in the store
    missing: int
    #: blocks recorded as written whose chunk does not read back (checksum mismatch,
    #: undecodable)
    damaged: int
    #: entries of the completion record that cannot be read, or that are gone from a store
    #: whose status says ``"complete"``
    entries: int
    #: blocks whose chunk was read back (0: the store's keys were only listed)
    read: int
    #: whether the chunks carry checksums (a store written before xfskde checksummed them is
    #: checked for presence and decoding only)
    checksums: bool
    #: chunks of the arrays made from the data (an OME-Zarr image's coarser levels and label
    #: images) gone or not reading back: those arrays are written again from the data
    derived: int = 0
    #: the arrays those chunks are of
    derived_arrays: tuple[str, ...] = ()
    #: ``zarr.json`` files gone or damaged, written again from the store's consolidated metadata
    metadata: int = 0

    @property
    def blocks(self) -> int:
        """How many blocks are computed again."""
        return self.missing + self.damaged + self.entries

    @property
    def found(self) -> int:
        """How many things are written again: blocks computed again, and chunks of the arrays
        made from the data (written again from it); not the metadata files written back."""
        return self.blocks + self.derived


def _block_reads(array: zarr.Array, spatial: tuple[int, int], block: tuple[int, int]) -> bool:
    """Whether the chunk of ``block`` reads back: decoded, its checksum checked, dropped."""
    coords = _region(spatial, array.ndim, block[0], block[1], 0)
    try:
        array[_chunk_region(array, coords)]
    except Exception:
        return False
    return True


def _forget_damaged_blocks(
    store: Any, group: zarr.Group, name: str, *, verify: bool = False, workers: int = 4
) -> BlockDamage:
    """Before a resume: mark not written the blocks that the record says were written but that
    are not right, so that the resume computes them again.

    One listing of the array's keys finds a chunk that is gone; an entry of the record that
    cannot be read (or is gone from a store that says it is complete) is found as the record is
    read. Either says the store was damaged after it was written (a write cut short never
    records a block before its chunk is whole), so then — or when ``verify`` — every other
    recorded block's chunk is read back (``workers`` at a time), which checks its checksum. The
    status ``"incomplete"`` is set first, then the entries, so a resume cut short says so.
    Without a sign of damage nothing is read: a chunk whose bytes changed is found by
    ``verify`` (:func:`verify_store` lists it). In a complete store, the arrays made from the
    data (an OME-Zarr image's coarser levels and label images) are listed too — fewer chunks
    than :func:`finalize_store` counted is a sign of damage — and read with the blocks; any
    found damaged leaves the store ``"incomplete"``, for its writer to write them again
    (:func:`finalize_store` checks that it did). A ``zarr.json`` gone or damaged is written back
    from the root's consolidated metadata first.
    """
    metadata = _damaged_metadata(store, group)
    if metadata:  # first: the arrays below are read through it
        _rebuild_metadata(store, metadata)
    record, unreadable = _read_record(group)
    array = group[name]
    checksums = _has_checksum(array)
    complete = group.attrs.get(_STATUS_ATTR) == "complete"
    if complete:
        unreadable = unreadable | (record == _NOT_WRITTEN)
    entries = [(int(by), int(bx)) for by, bx in np.argwhere(unreadable)]
    written = [(int(by), int(bx)) for by, bx in np.argwhere(record > 0)]
    spatial = _array_spatial(array)
    stored = sync(_keys_under(array.store, f"{array.path}/" if array.path else ""))
    present = [b for b in written
               if _chunk_key(array, _region(spatial, array.ndim, *b, 0)) in stored]  # fmt: skip
    missing = sorted(set(written) - set(present))
    # an incomplete store's other arrays are written again by the resume that completes it
    derived = _derived_problems(group, name, read=bool(verify or missing or entries),
                                workers=workers)[0] if complete else []  # fmt: skip
    damaged: list[tuple[int, int]] = []
    read = 0
    if present and (verify or missing or entries or derived):
        with ThreadPoolExecutor(max(1, int(workers))) as pool:
            reads = list(pool.map(lambda b: _block_reads(array, spatial, b), present))
        damaged = [b for b, whole in zip(present, reads, strict=True) if not whole]
        read = len(present)
    forget = missing + damaged + entries
    if forget or derived:
        writable = zarr.open_group(zarr_like(store), mode="r+")
        # first: a resume cut short says so, and the writer that completes the store writes
        # the arrays made from its data again (an OME-Zarr image's levels and labels), which
        # finalize_store checks
        if derived:
            counted = group.attrs.get(_CHUNKS_ATTR) or {}
            rewrite = dict(group.attrs.get(_REWRITE_ATTR) or {})
            for problem in derived:
                rewrite[problem.array] = max(int(counted.get(problem.array, 0)),
                                             int(rewrite.get(problem.array, 0)))  # fmt: skip
            writable.attrs[_REWRITE_ATTR] = rewrite
        writable.attrs[_STATUS_ATTR] = "incomplete"
        record_array = writable[_BLOCKS]
        for block in forget:
            record_array[block] = _NOT_WRITTEN  # a damaged entry is written anew too
    arrays = tuple(sorted({problem.array for problem in derived}))
    return BlockDamage(len(missing), len(damaged), len(entries), read, checksums,
                       len(derived), arrays, len(metadata))  # fmt: skip


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _damage_note(store: Any, damage: BlockDamage) -> str:
    """The warning of a resume that found ``damage``: what, how many, and that they are computed
    again (one line)."""
    found = []
    if damage.missing:
        its = "its chunk" if damage.missing == 1 else "their chunks"
        found.append(f"{_count(damage.missing, 'block', 'blocks')} had lost {its}")
    if damage.damaged:
        was = "was" if damage.damaged == 1 else "were"
        found.append(
            f"{_count(damage.damaged, 'block', 'blocks')} of the {damage.read} read back {was} "
            "damaged (checksum mismatch or undecodable)"
        )
    if damage.entries:
        was = "was" if damage.entries == 1 else "were"
        found.append(
            f"{_count(damage.entries, 'entry', 'entries')} of its completion record {was} "
            "damaged or gone"
        )
    if damage.derived:
        were = "was" if damage.derived == 1 else "were"
        found.append(
            f"{_count(damage.derived, 'chunk', 'chunks')} of the arrays made from them "
            f"({', '.join(damage.derived_arrays)}) {were} damaged or gone"
        )
    if damage.metadata:
        files = "file was" if damage.metadata == 1 else "files were"
        found.append(
            f"{damage.metadata} zarr.json metadata {files} damaged or gone, and written again "
            "from the copy in its consolidated metadata"
        )
    if damage.read and not damage.damaged:
        against = "against their checksums" if damage.checksums else "(no checksums: decoded)"
        other = "the other" if damage.blocks else "its"
        found.append(f"{other} {damage.read} read back whole {against}")
    done = []
    if damage.blocks:
        again = "is" if damage.blocks == 1 else "are"
        done.append(f"{_count(damage.blocks, 'block', 'blocks')} {again} computed again")
    if damage.derived:
        done.append("those arrays are written again from its blocks")
    said = f"{store} was damaged after its blocks were written: {', '.join(found)}"
    return f"{said}; {', and '.join(done)}" if done else said


def _recorded_array(
    store: Any, storage_options: dict | None, name: str | None, verb: str
) -> tuple[Any, zarr.Group, str]:
    """The store (its target), its group and the name of its data array (``name``, or the one
    :func:`_data_name` finds; ``verb`` for its message), for reading back against the
    completion record.

    Raises
    ------
    FileNotFoundError, StoreFormatError
        No store, a layout cut short, or no such array beside a completion record.
    """
    store = store_target(store, storage_options)
    group = _open_group(store, "store")
    _refuse_cut_layout(store, group)
    if name is None:
        name = _data_name(store, group, verb)
    if name not in group or _BLOCKS not in group:
        raise StoreFormatError(f"{store} holds no {name!r} array and completion record")
    return store, group, name


def forget_damaged_blocks(
    store: Any,
    *,
    name: str | None = None,
    verify: bool = False,
    workers: int = 4,
    storage_options: dict | None = None,
) -> BlockDamage:
    """Before a resume: find the blocks a store records as written that are not right, and mark
    them not written, so that the resume computes them again.

    :func:`write_blocks` (and :func:`write_coefficients`, :func:`~xfskde.io.write_ome_zarr`)
    does this itself when it resumes; call it to know beforehand how many blocks a resume will
    compute. A chunk that is gone costs one listing of the store's keys to find; an entry of the
    record that cannot be read is found as the record is read. Either means the store was
    damaged after it was written, and then — or with ``verify`` — every other recorded block's
    chunk is read back against its checksum. Without ``verify`` and with no such sign, nothing
    is read: a chunk whose bytes changed in place is found only by ``verify`` (or
    :func:`verify_store`, ``xfskde info --verify``). The arrays made from the data of a complete
    store (an OME-Zarr image's coarser levels and label images) are checked alike; found
    damaged, they leave the store incomplete, and its writer writes them again from the data.
    A ``zarr.json`` gone or damaged is written back from the root's consolidated metadata.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients` or the CLI.
    name : str, optional
        The data array; default: the store's only one.
    verify : bool, optional
        Read every recorded block's chunk back, even without a sign of damage.
    workers : int, optional
        Blocks read at the same time.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    BlockDamage
        How many blocks were missing, damaged, or had a damaged record entry (each now marked
        not written, the store's status ``"incomplete"``), how many were read back, how many
        chunks of the arrays made from the data were damaged or gone, and how many ``zarr.json``
        were written back. With any found, a :class:`~xfskde.exceptions.StoreDamagedWarning`
        says so too.

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`verify_store`.
    """
    store, group, name = _recorded_array(store, storage_options, name, "check")
    damage = _forget_damaged_blocks(store, group, name, verify=verify, workers=workers)
    if damage.found or damage.metadata:
        warnings.warn(_damage_note(store, damage), StoreDamagedWarning,
                      stacklevel=find_stack_level())  # fmt: skip
    return damage


def _damaged_coordinates(group: zarr.Group, name: str) -> list[str]:
    """The coordinate arrays of ``name`` with a chunk that is gone or does not read back (they
    are small: one chunk each, read)."""
    return [
        coord_name
        for coord_name, coord in _coordinate_arrays(group, name)
        if any(
            _chunk_problem(coord, coords, written=_has_checksum(coord)) is not None
            for coords in np.ndindex(*coord.cdata_shape)
        )
    ]


def _repair(store: Any, group: zarr.Group, name: str, data: xr.DataArray, verify: bool) -> None:
    """Before a resume of ``store`` with ``data`` (its parameters checked): the blocks recorded
    as written that are not right are marked not written (:func:`_forget_damaged_blocks`),
    and damaged coordinate arrays are written again from ``data``'s; each with a warning."""
    damage = _forget_damaged_blocks(store, group, name, verify=verify)
    if damage.found or damage.metadata:
        warnings.warn(_damage_note(store, damage), StoreDamagedWarning,
                      stacklevel=find_stack_level())  # fmt: skip
    coordinates = _damaged_coordinates(group, name)
    if coordinates:
        _rewrite_coordinates(store, data, coordinates)
        these = "its coordinate " + ", ".join(repr(c) for c in coordinates)
        warnings.warn(
            f"{store} was damaged after it was written: {these} did not read back, and "
            f"{'was' if len(coordinates) == 1 else 'were'} written again from the data's",
            StoreDamagedWarning,
            stacklevel=find_stack_level(),
        )


def _rewrite_coordinates(store: Any, data: xr.DataArray, names: Sequence[str]) -> None:
    """Write the coordinate arrays ``names`` of a store again from ``data``'s (a resume's data,
    whose coordinates the store's parameters matched), the status ``"incomplete"`` first."""
    group = zarr.open_group(zarr_like(store), mode="r+")
    group.attrs[_STATUS_ATTR] = "incomplete"
    for coord_name in names:
        group[coord_name].with_config(_WRITE_CONFIG)[...] = np.asarray(data.coords[coord_name])


def _checksum_matches(raw: bytes) -> bool:
    """Whether the CRC-32C at the end of a chunk matches its bytes, as zarr's own codec says.

    The bytes are decoded by a throw-away one-chunk array whose only codec is the checksum, so
    that the check is zarr's, whichever CRC library it uses.
    """
    if len(raw) < 5:
        return False
    size = len(raw) - 4
    probe = zarr.create_array(
        zarr.storage.MemoryStore(), shape=(size,), chunks=(size,), dtype="uint8",
        compressors=(Crc32cCodec(),), fill_value=0,
    )  # fmt: skip
    key = _chunk_key(probe, (0,))
    sync(probe.store.set(key, default_buffer_prototype().buffer.from_bytes(raw)))
    try:
        probe[...]
    except Exception:
        return False
    return True


def _chunk_region(array: zarr.Array, coords: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(
        slice(c * side, min((c + 1) * side, n))
        for c, side, n in zip(coords, array.chunks, array.shape, strict=True)
    )


#: What a chunk that should be there but is not is said to be.
_GONE = "the store says it was written, but it is not there"


class _Problem(NamedTuple):
    kind: str  # "missing" or "damaged"
    detail: str


def _chunk_problem(array: zarr.Array, coords: tuple[int, ...], written: bool) -> _Problem | None:
    """What is wrong with one chunk: gone, checksum mismatch, undecodable — or None.

    ``written``: whether the chunk must be in the store (a chunk never written reads as zeros).
    """
    key = _chunk_key(array, coords)
    raw = _raw_chunk(array, key)
    if raw is None:
        return _Problem("missing", _GONE) if written else None
    if _has_checksum(array) and not _checksum_matches(raw):
        return _Problem("damaged", "checksum mismatch: its bytes changed after they were written")
    try:
        array[_chunk_region(array, coords)]
    except Exception as exc:
        detail = " ".join(str(exc).split())
        return _Problem("damaged", f"undecodable: {type(exc).__name__}: {detail}")
    return None


def _covered_chunks(array: zarr.Array, key: tuple[slice, ...]) -> list[tuple[int, ...]]:
    """The chunk coordinates a region (a tuple of slices) touches."""
    ranges = []
    for region, side, n in zip(key, array.chunks, array.shape, strict=True):
        start, stop, _ = region.indices(n)
        ranges.append(range(start // side, max(start // side + 1, -(-stop // side))))
    return [
        tuple(r[i] for r, i in zip(ranges, index, strict=True))
        for index in np.ndindex(*(len(r) for r in ranges))
    ]


def _corrupt(store: Any, key: str, problem: _Problem) -> StoreCorruptError:
    return StoreCorruptError(
        f"{store}: chunk {key!r} is {problem.kind} ({problem.detail}); list every damaged "
        f"chunk with `xfskde info --verify {store}`, then run the command that wrote it again "
        "with --resume --verify (resume=True, verify=True), which computes them again, or "
        "restore it from a copy"
    )


class _CheckedReader:
    """One array of a store, read region by region through xarray (with its decoding), with
    every chunk it touches checked: a read that fails is explained (checksum mismatch,
    undecodable), and a chunk that should be there but is not is refused instead of read as
    zeros. The indexable that :func:`open_blocks` wraps in a Dask array.
    """

    def __init__(
        self, store: Any, path: str, variable: xr.Variable, written: np.ndarray | None
    ) -> None:
        self.store = store
        self.path = path
        self.variable = variable
        self.shape = variable.shape
        self.dtype = variable.dtype
        self.ndim = variable.ndim
        #: which chunks along the first two dims must be in the store (None: not checked)
        self.written = written
        self._array: zarr.Array | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_array": None}  # reopened where it is unpickled

    def _zarr(self) -> zarr.Array:
        if self._array is None:
            self._array = zarr.open_array(zarr_like(self.store), path=self.path, mode="r")
        return self._array

    def _must_exist(self, coords: tuple[int, ...]) -> bool:
        if self.written is None:
            return False
        if self.written.ndim == 2 and self.ndim >= 2:  # the record: over the spatial dims
            iy, ix = _spatial(self.variable.dims)
            return bool(self.written[coords[iy], coords[ix]])
        return bool(self.written[coords[: self.written.ndim]])

    def __getitem__(self, key: tuple[slice, ...]) -> np.ndarray:
        try:
            values = np.asarray(self.variable[key].values)
        except Exception as exc:
            array = self._zarr()
            for coords in _covered_chunks(array, key):
                problem = _chunk_problem(array, coords, self._must_exist(coords))
                if problem is not None:
                    raise _corrupt(self.store, _chunk_key(array, coords), problem) from exc
            raise
        if self.written is not None:
            array = self._zarr()
            for coords in _covered_chunks(array, key):
                chunk = _chunk_key(array, coords)
                if self._must_exist(coords) and not _chunk_exists(array, chunk):
                    raise _corrupt(self.store, chunk, _Problem("missing", _GONE))
        return values


def _checked_dask(
    store: Any, path: str, variable: xr.Variable, array: zarr.Array, written: np.ndarray | None,
    token: Any,
) -> da.Array:  # fmt: skip
    reader = _CheckedReader(store, path, variable, written)
    return da.from_array(
        reader,
        chunks=tuple(int(c) for c in array.chunks),
        name=f"{_OPENED}{path}-{tokenize(token, path)}",
        lock=False,
        fancy=False,
        meta=np.empty((0,) * array.ndim, variable.dtype),
    )


def _coordinate_arrays(group: zarr.Group, name: str) -> list[tuple[str, zarr.Array]]:
    """The arrays of the coordinates of ``name``: those of its dims, and those its
    ``coordinates`` attr names (an OME-Zarr store's other levels are not among them)."""
    data = group[name]
    wanted = {*map(str, data.metadata.dimension_names or ())}
    wanted |= set(str(data.attrs.get("coordinates", "")).split())
    return [(n, a) for n, a in group.arrays() if n in wanted and n not in (name, _BLOCKS)]


def _check_coordinates(store: Any, group: zarr.Group, name: str) -> None:
    """Refuse a store whose (checksummed) coordinate arrays lack a chunk: read, it would give
    zeros. Coordinates are small (one chunk each); their bytes are checked as they are read."""
    for _, array in _coordinate_arrays(group, name):
        if not _has_checksum(array) or 0 in array.shape:
            continue
        for coords in np.ndindex(*array.cdata_shape):
            key = _chunk_key(array, coords)
            if not _chunk_exists(array, key):
                raise _corrupt(store, key, _Problem("missing", _GONE))


# ------------------------------------------------------------------------------------- read


def open_coefficients(
    store: Any, *, allow_incomplete: bool = False, storage_options: dict | None = None
) -> xr.DataArray:
    """Reopen a coefficient store lazily, with its coordinates and attributes.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_coefficients` (or ``xfskde coefficients``).
    allow_incomplete : bool, optional
        Read a store whose write did not finish (unwritten blocks read as 0); False by
        default.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    xarray.DataArray
        Dask-backed ``(y, x, k)`` field named ``"fskde"``. Computing a chunk that is damaged
        or missing raises :class:`~xfskde.exceptions.StoreCorruptError`.

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    StoreFormatError
        If it is not a Zarr store or holds no ``"fskde"`` array.
    StoreIncompleteError
        If the store's write did not finish (unless ``allow_incomplete``): resume it with
        ``write_coefficients(..., resume=True)`` or ``xfskde coefficients ... --resume``.
    StoreCorruptError
        If a coordinate chunk is damaged or missing (data chunks: when computed).
    """
    return open_blocks(
        store, name=_VARIABLE, allow_incomplete=allow_incomplete, storage_options=storage_options
    )


def open_blocks(
    store: Any,
    *,
    name: str | None = None,
    allow_incomplete: bool = False,
    storage_options: dict | None = None,
) -> xr.DataArray:
    """Reopen any store written by :func:`write_blocks` (coefficients, labels) lazily.

    Every chunk is checked as it is read: a chunk whose checksum does not match, that cannot
    be decoded, or that the store says was written but is not there raises
    :class:`~xfskde.exceptions.StoreCorruptError` (naming the store and the chunk key) when the
    lazy array is computed — never zeros or wrong values.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients` or the CLI.
    name : str, optional
        The array to open; default: the store's only data array.
    allow_incomplete : bool, optional
        Read a store whose write did not finish (unwritten blocks read as the store's fill
        value: 0 unless :func:`write_blocks` was given another, as NaN for the CLI's
        abundances); False by default.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    xarray.DataArray
        Dask-backed, with the coordinates and attributes it was written with.

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    StoreFormatError
        If it is not a Zarr store, not one written by xfskde (no completion record, or other
        than one data array when ``name`` is not given), or holds no array ``name``.
    StoreIncompleteError
        If the store's write did not finish (unless ``allow_incomplete``).
    StoreCorruptError
        If a coordinate chunk is damaged or missing (data chunks: when computed).
    """
    store = store_target(store, storage_options)
    group = _open_group(store, "store")
    _refuse_cut_layout(store, group)
    if name is None:
        name = _data_name(store, group, "open")
    if name not in group:
        kind = "an xfskde coefficient store" if name == _VARIABLE else f"a store of {name!r}"
        raise StoreFormatError(f"{store} holds no {name!r} variable: not {kind}")
    complete = group.attrs.get(_STATUS_ATTR) == "complete"
    if not complete and not allow_incomplete:
        status = store_status(store)
        raise StoreIncompleteError(
            f"{store} is incomplete ({status['blocks_done']} of {status['blocks_total']} blocks "
            "written): resume the write, or pass allow_incomplete=True to read it anyway"
        )
    array = group[name]
    spatial = _array_spatial(array)
    if complete:
        written = np.ones((array.cdata_shape[spatial[0]], array.cdata_shape[spatial[1]]), bool)
    elif _BLOCKS in group:
        written = _read_record(group)[0] > 0
    else:
        written = None
    _check_coordinates(store, group, name)
    consolidated = complete and group.metadata.consolidated_metadata is not None
    try:
        with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
            warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
            keep = {name, *(n for n, _ in _coordinate_arrays(group, name))}
            ds = xr.open_dataset(
                zarr_like(store),
                engine="zarr",
                consolidated=consolidated,
                chunks=None,
                cache=False,
                drop_variables=[n for n, _ in group.arrays() if n not in keep],
            )
    except Exception as exc:  # a coordinate that cannot be read: say which chunk, and why
        for _, coord in _coordinate_arrays(group, name):
            for coords in np.ndindex(*coord.cdata_shape):
                problem = _chunk_problem(coord, coords, written=_has_checksum(coord))
                if problem is not None:
                    raise _corrupt(store, _chunk_key(coord, coords), problem) from exc
        raise
    token = (
        store.token() if isinstance(store, Location) else id(store),
        group.attrs.get(_PARAMETERS_ATTR),
        group.attrs.get(_STATUS_ATTR),
        None if written is None else int(written.sum()),
    )
    result = ds[name]
    data = _checked_dask(store, name, result.variable, array, written, token)
    result = result.copy(deep=False, data=data)
    for coord_name in [c for c in result.coords if c not in result.dims]:
        coord = result.coords[coord_name]
        coord_array = group[str(coord_name)]
        checked = _checked_dask(
            store, str(coord_name), coord.variable, coord_array,
            np.ones(coord_array.cdata_shape[:2], bool) if _has_checksum(coord_array) else None,
            token,
        )  # fmt: skip
        result = result.assign_coords({coord_name: coord.variable.copy(deep=False, data=checked)})
    return result


# ----------------------------------------------------------------------------------- verify


class StoreProblem(NamedTuple):
    """One thing :func:`verify_store` found wrong with a store."""

    #: the array (``"fskde"``, ``"labels"``, a coordinate, ``"xfskde_blocks"``)
    array: str
    #: the chunk's key in the store (``"fskde/c/0/1/0"``)
    key: str
    #: ``"damaged"`` (checksum mismatch, undecodable), ``"missing"`` (the record says written,
    #: the chunk is not there) or ``"unwritten"`` (the record says not written yet)
    kind: str
    #: what exactly, in words
    detail: str


class StoreReport(NamedTuple):
    """What :func:`verify_store` read and found."""

    #: blocks of the data array
    blocks_total: int
    #: blocks whose chunk was read and checked
    blocks_read: int
    #: whether the store's chunks carry checksums (stores written before xfskde checksummed
    #: them do not: only their decoding and presence can be checked)
    checksums: bool
    #: every problem found, data blocks first
    problems: tuple[StoreProblem, ...]
    #: the arrays made from the data (an OME-Zarr image's coarser levels and label images),
    #: checked when the store is complete
    derived_arrays: tuple[str, ...] = ()
    #: their chunks read and checked
    derived_read: int = 0
    #: those of them whose chunks :func:`finalize_store` did not count (a store finalized
    #: before it counted them, a label image added after): a chunk of theirs that is gone
    #: cannot be told from one of fill values, never written
    uncounted: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        """True when nothing is wrong (an incomplete store is never whole)."""
        return not self.problems


def verify_store(
    store: Any,
    *,
    name: str | None = None,
    workers: int = 4,
    storage_options: dict | None = None,
) -> StoreReport:
    """Read every chunk of a store and report the damaged and the missing ones.

    Each block of the data array is read and decoded on its own (at most ``workers`` at a
    time, so memory stays at a few blocks), its checksum checked, and compared with the
    completion record; the coordinates and the record are checked too, and so are, in a
    complete store, the arrays made from the data (an OME-Zarr image's coarser levels and label
    images: every chunk read, and their number compared with the one :func:`finalize_store`
    recorded) and the ``zarr.json`` of every array and group.

    Parameters
    ----------
    store : str, pathlib.Path, URL or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients` or the CLI.
    name : str, optional
        The data array; default: the store's only one.
    workers : int, optional
        Blocks read at the same time.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL ``store`` (credentials, ``endpoint_url``).

    Returns
    -------
    StoreReport
        ``whole`` is True when every chunk is there and reads back with its checksum; else
        ``problems`` lists, per chunk, ``"damaged"`` (checksum mismatch, undecodable),
        ``"missing"`` (written, by the record or the status, but not in the store) or
        ``"unwritten"`` (not written yet: resume the write).

    Raises
    ------
    FileNotFoundError, StoreFormatError
        As :func:`open_blocks`.
    """
    store, group, name = _recorded_array(store, storage_options, name, "verify")
    complete = group.attrs.get(_STATUS_ATTR) == "complete"
    array = group[name]
    record, damaged_record = _read_record(group)
    problems: list[StoreProblem] = []

    def check(block: tuple[int, int]) -> list[StoreProblem]:
        coords = _region(_array_spatial(array), array.ndim, block[0], block[1], 0)
        key = _chunk_key(array, coords)
        found = []
        if damaged_record[block]:
            found.append(StoreProblem(
                _BLOCKS, _chunk_key(group[_BLOCKS], block), "damaged",
                f"the record entry of block {block} cannot be read (checksum mismatch); "
                "the block counts as not written",
            ))  # fmt: skip
        if complete and not damaged_record[block] and record[block] == _NOT_WRITTEN:
            # gone from a store that says it is complete (its chunk deleted: read as 0): a
            # resume computes the block again, as it says (:func:`_forget_damaged_blocks`)
            found.append(StoreProblem(
                _BLOCKS, _chunk_key(group[_BLOCKS], block), "missing",
                f"the record entry of block {block} is gone from a store that says it is "
                "complete; a resume computes the block again",
            ))  # fmt: skip
        written = bool(record[block]) or complete
        if not written and not damaged_record[block]:
            found.append(StoreProblem(name, key, "unwritten", "not written yet"))
            return found
        try:
            array[_chunk_region(array, coords)]  # decoded, its checksum checked, dropped
            gone = written and not _chunk_exists(array, key)
            problem = _Problem("missing", _GONE) if gone else None
        except Exception as exc:
            problem = _chunk_problem(array, coords, written) or _Problem("damaged", str(exc))
        if problem is not None:
            found.append(StoreProblem(name, key, *problem))
        return found

    blocks = list(np.ndindex(*record.shape))
    with ThreadPoolExecutor(max(1, int(workers))) as pool:
        for found in pool.map(check, blocks):
            problems.extend(found)
    for coord_name, coord in _coordinate_arrays(group, name):
        for coords in np.ndindex(*coord.cdata_shape):
            problem = _chunk_problem(coord, coords, written=_has_checksum(coord))
            if problem is not None:
                problems.append(StoreProblem(coord_name, _chunk_key(coord, coords), *problem))
    problems += _metadata_problems(store, group)
    derived, derived_read, uncounted = (
        _derived_problems(group, name, read=True, workers=workers) if complete else ([], 0, ())
    )
    problems += derived
    unread = sum(p.kind == "unwritten" for p in problems)
    return StoreReport(
        blocks_total=len(blocks),
        blocks_read=len(blocks) - unread,
        checksums=_has_checksum(array),
        problems=tuple(problems),
        derived_arrays=tuple(p for p, _ in _derived_arrays(group, name)) if complete else (),
        derived_read=derived_read,
        uncounted=uncounted,
    )
