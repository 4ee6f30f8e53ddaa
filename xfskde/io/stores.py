"""The block store: writing DataArrays to Zarr v3 block by block, resumably, and reading them back.

**Layout.** A store written by :func:`write_blocks` (or :func:`write_coefficients`, whose array
is named ``"fskde"``) is a Zarr v3 group holding

* the data array, chunked ``(cy, cx, *trailing)`` along its first two (spatial) dims and never
  split along the others,
* its coordinates, one array each, and its attributes (``coordinates`` names the non-index
  coordinates),
* ``xfskde_blocks``: the completion record, a ``uint8`` array of one entry per block,
* the group attributes ``xfskde_status`` (``"incomplete"``, then ``"complete"``) and
  ``xfskde_parameters`` (the shape, dtype and attributes of the data, as JSON).

**Writing.** The store is laid out first; then every Dask task (named ``xfskde-write-...``)
writes one block, its Dask chunk being exactly one Zarr chunk so that concurrent writes never
share a chunk, and then sets that block's entry of the record. Only once every entry is set does
:func:`finalize_store` set the status to ``"complete"`` and consolidate the metadata, last of
all. A write that did not finish therefore never looks finished, and ``resume=True`` computes
only the blocks whose entry is missing.

**Defaults.** The store's chunk shape is, unless given, the data's own Dask chunks (the largest
along each spatial dim), or for NumPy-backed data the plan of :func:`xfskde.lazy.plan_chunks`.
Data whose chunks are already regular is written as it is, never rechunked.

**Errors.** :class:`~xfskde.exceptions.StoreExistsError`,
:class:`~xfskde.exceptions.StoreIncompleteError`,
:class:`~xfskde.exceptions.StoreParametersError`, :class:`~xfskde.exceptions.StoreFormatError`;
:class:`~xfskde.exceptions.DimensionError` and :class:`~xfskde.exceptions.ParameterError` for
the data and the arguments; :class:`FileNotFoundError` for a path that does not exist.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import xarray as xr
import zarr
from dask.base import tokenize

from .._scheduling import compute as compute_collections
from ..exceptions import (
    DimensionError,
    ParameterError,
    StoreExistsError,
    StoreFormatError,
    StoreIncompleteError,
    StoreParametersError,
)
from ..lazy import plan_chunks

__all__ = [
    "finalize_store",
    "open_blocks",
    "open_coefficients",
    "store_status",
    "write_blocks",
    "write_coefficients",
]

#: Group attribute: ``"incomplete"`` until :func:`finalize_store`, then ``"complete"``.
_STATUS_ATTR = "xfskde_status"
#: Group attribute: the JSON of the data's shape, dtype and attributes (checked on resume).
_PARAMETERS_ATTR = "xfskde_parameters"
#: The completion record: one ``uint8`` entry per block, set once the block is written.
_BLOCKS = "xfskde_blocks"
#: The array of a coefficient store.
_VARIABLE = "fskde"

# The ``compressors`` choices, each defined once; the strings are the public values.
#: Chunks stored uncompressed.
_RAW = None
#: xfskde's codec, Blosc-LZ4 with bit shuffle (:func:`_blosc_lz4`): the default of
#: :func:`write_coefficients`, whose floats zarr's zstd compresses no better, 2-3x slower.
_BLOSC_LZ4 = "default"
#: zarr's own default codec (zstd): the default of :func:`write_blocks`, a general-purpose
#: codec for whatever else it writes (segmentation labels: small integers in large regions).
_ZARR_DEFAULT = "auto"

# Every chunk is written as it is: coefficient chunks are never all zero in practice, and zarr's
# check for "empty" chunks (a full comparison pass) cost 20 ms per 19 MB complex64 chunk, more
# than writing it (5 ms), in benchmarks/bench_scale.py.
_WRITE_CONFIG = {"write_empty_chunks": True}


# ------------------------------------------------------------------------------------ chunks


def _axis_chunks(n: int, side: int) -> tuple[int, ...]:
    """An axis of ``n`` cut into chunks of ``side``, the last one possibly shorter."""
    return (side,) * (n // side) + ((n % side,) if n % side else ())


def _store_chunks(data: xr.DataArray, chunks: int | Sequence[int] | None) -> tuple[int, int]:
    """The store's (rows, columns) chunk shape: ``chunks``, else the data's own, else planned.

    Dask-backed data gives the largest of its chunks along each spatial dim (its chunk side
    when regular); NumPy-backed data the side :func:`~xfskde.lazy.plan_chunks` plans for its
    shape. The result is clipped to the data's shape.
    """
    height, width = data.shape[:2]
    if chunks is not None:
        cy, cx = (chunks, chunks) if np.isscalar(chunks) else tuple(chunks)
        if not all(isinstance(c, int | np.integer) and c >= 1 for c in (cy, cx)):
            raise ParameterError(
                f"chunks must be a positive number of pixels or a (rows, columns) pair, got "
                f"{chunks!r}"
            )
    elif data.chunks is not None:
        cy, cx = max(data.chunks[0]), max(data.chunks[1])
    else:
        rows, cols = plan_chunks((height, width))
        cy, cx = rows[0], cols[0]
    return max(1, min(int(cy), height)), max(1, min(int(cx), width))


def _blocked(data: xr.DataArray, cy: int, cx: int) -> xr.DataArray:
    """``data`` as Dask chunks that match the store's chunks one to one.

    Data already chunked so (each chunk but the last of an axis of the store's side, trailing
    dims whole) is returned as it is: no rechunk enters the graph.
    """
    height, width, *rest = data.shape
    wanted = (_axis_chunks(height, cy), _axis_chunks(width, cx), *((int(n),) for n in rest))
    if data.chunks is not None and tuple(map(tuple, data.chunks)) == wanted:
        return data
    return data.chunk(dict(zip(data.dims, wanted, strict=True)))


# ----------------------------------------------------------------------------------- layout


def _blosc_lz4() -> zarr.codecs.BloscCodec:
    """Blosc-LZ4 with bit shuffle, level 1: cheap, and as good as anything lossless here.

    Coefficients are floats whose low mantissa bits are noise: on 512×512×9 complex64 chunks of
    a photograph with sensor-like noise (σ = 2 grey levels) LZ4 with bit shuffle gave a ratio of
    1.10 at ~1.3–1.9 GB/s, byte shuffle 1.02 at 1.2 GB/s, zstd 1.06–1.07 at 0.6 GB/s. Smooth or
    repetitive images compress far better (5.3 on the tiled photograph of bench_scale.py).
    """
    return zarr.codecs.BloscCodec(cname="lz4", clevel=1, shuffle="bitshuffle")


def _codecs(compressors: Any) -> Any:
    """The ``compressors`` argument of ``zarr.create_array`` for a choice of the writers."""
    if compressors is _RAW:
        return None
    if isinstance(compressors, str):
        if compressors == _BLOSC_LZ4:
            return _blosc_lz4()
        if compressors == _ZARR_DEFAULT:
            return _ZARR_DEFAULT
        raise ParameterError(
            f"compressors must be zarr codecs, None, {_BLOSC_LZ4!r} or {_ZARR_DEFAULT!r}, "
            f"got {compressors!r}"
        )
    return compressors


def _parameters(data: xr.DataArray) -> str:
    """The JSON a resumed write must match: shape, dtype and attributes (but the version)."""
    keep = {k: v for k, v in data.attrs.items() if k not in (_STATUS_ATTR, "xfskde_version")}
    return json.dumps({"shape": list(data.shape), "dtype": str(data.dtype), **keep},
                      sort_keys=True, default=str)  # fmt: skip


def _create_store(
    store: Any,
    field: xr.DataArray,
    name: str,
    chunks: tuple[int, int],
    n_blocks: tuple[int, int],
    params: str,
    compressors: Any,
) -> None:
    """Lay out an empty store: coordinates, the data array, the completion record.

    Written with the zarr API rather than ``Dataset.to_zarr``: xarray 2026.9 stores a *lazy*
    complex variable's metadata as float64 in Zarr v3, and the layout must exist before any
    block is written.
    """
    group = zarr.open_group(store, mode="w", zarr_format=3)
    group.attrs.update({_STATUS_ATTR: "incomplete", _PARAMETERS_ATTR: params})
    extra = []
    for coord_name, coord in field.coords.items():
        values = np.asarray(coord.values)
        arr = group.create_array(
            str(coord_name),
            shape=values.shape,
            dtype=values.dtype,
            chunks=values.shape,
            dimension_names=tuple(map(str, coord.dims)),
            attributes=dict(coord.attrs),
            fill_value=None if values.dtype.kind in "OSU" else 0,
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
        chunks=(*chunks, *field.shape[2:]),
        dimension_names=tuple(map(str, field.dims)),
        attributes=attrs,
        fill_value=0,
        compressors=compressors,
    )
    group.create_array(
        _BLOCKS,
        shape=n_blocks,
        chunks=(1, 1),
        dtype="uint8",
        fill_value=0,
        dimension_names=("xfskde_block_y", "xfskde_block_x"),
    )


def _store_exists(store: Any) -> bool:
    if isinstance(store, str | os.PathLike):
        return Path(store).exists()
    try:
        zarr.open_group(store, mode="r")
    except (zarr.errors.GroupNotFoundError, FileNotFoundError, KeyError):
        return False
    return True


def _open_group(store: Any, what: str) -> zarr.Group:
    """The store's group, read-only; a path that is not a Zarr group is a StoreFormatError."""
    if isinstance(store, str | os.PathLike) and not Path(store).exists():
        raise FileNotFoundError(f"no such {what}: {store}")
    try:
        return zarr.open_group(store, mode="r")
    except (OSError, KeyError, zarr.errors.BaseZarrError, json.JSONDecodeError) as exc:
        raise StoreFormatError(f"{store} is not a Zarr store ({exc})") from exc


# ------------------------------------------------------------------------------------ write


def _write_block(
    block: np.ndarray, store: Any, name: str, by: int, bx: int, cy: int, cx: int
) -> int:
    """Write one block, then its completion record (in that order)."""
    target = zarr.open_array(store, path=name, mode="r+").with_config(_WRITE_CONFIG)
    target[by * cy : by * cy + block.shape[0], bx * cx : bx * cx + block.shape[1]] = block
    zarr.open_array(store, path=_BLOCKS, mode="r+")[by, bx] = 1
    return 1


def _write_mapped_block(
    block: np.ndarray,
    store: Any,
    variable: str,
    chunk_shape: tuple[int, int],
    block_info: dict | None = None,
) -> np.ndarray:
    """The block function of the write tasks: one ``1`` per block written."""
    by, bx = block_info[0]["chunk-location"][:2]
    written = _write_block(block, store, variable, by, bx, *chunk_shape)
    return np.full((1,) * block.ndim, written, np.int64)


def store_status(store: Any) -> dict[str, Any]:
    """How far the write of a store got.

    Parameters
    ----------
    store : str, pathlib.Path or zarr store
        A store written by :func:`write_blocks` or :func:`write_coefficients`.

    Returns
    -------
    dict
        ``{"complete": bool, "blocks_done": int, "blocks_total": int}``: whether the status
        is ``"complete"``, and how many entries of the completion record are set, of how many.

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    StoreFormatError
        If it is not a Zarr store.
    """
    group = _open_group(store, "store")
    done = np.asarray(group[_BLOCKS][...]) if _BLOCKS in group else np.zeros((0, 0))
    return {
        "complete": group.attrs.get(_STATUS_ATTR) == "complete",
        "blocks_done": int(done.sum()),
        "blocks_total": int(done.size),
    }


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
) -> Any:
    """Write a ``(y, x, k)`` coefficient field to a Zarr v3 store, resumably.

    :func:`write_blocks` with the array named ``"fskde"`` and xfskde's codec for floats.

    Parameters
    ----------
    coeffs : xarray.DataArray
        A field from :func:`xfskde.local_fskde` (NumPy- or Dask-backed).
    store : str, pathlib.Path or zarr store
        A path for work on a cluster (tasks open it themselves).
    chunks : int or (int, int), optional
        Zarr chunk shape along (y, x); k is never split. Default: the field's Dask chunks (the
        largest along each dim), or for a NumPy-backed field the chunks
        :func:`xfskde.lazy.plan_chunks` plans for its shape. The Dask chunks are made to match
        exactly, so concurrent writes never share a chunk; a field already chunked so is
        written without a rechunk.
    resume : bool
        Continue an interrupted write: blocks whose completion record exists are not computed
        again. The parameters must match the store's; the chunks are the store's own (``chunks``
        may be left out, and other chunks are refused), whatever the field's Dask chunks. A
        store in which no block was written yet is started again, with any parameters.
    overwrite : bool
        Replace an existing store (otherwise an existing store is an error unless ``resume``).
    compute : bool
        False returns the Dask collection of block writes (compute it to write); the status is
        then set by :func:`finalize_store`. A computed write that fails (or is interrupted)
        before its first block is written removes the store it laid out, so that the corrected
        run starts afresh; one that fails later leaves the store to be resumed.
    scheduler : str or distributed.Client, optional
        Where the blocks run: ``"threads"``, ``"processes"``, ``"synchronous"``, a
        ``distributed.Client`` or the address of a Dask scheduler (``"tcp://host:8786"``).
        Default: Dask's current scheduler (the active ``Client``, if any).
    progress : bool
        Show a progress bar that suits the scheduler: Dask's ``ProgressBar`` locally,
        ``distributed.progress`` on a cluster.
    compressors : zarr codecs, None, "default" or "auto"
        Compression of the coefficient chunks. The default, ``"default"``, is Blosc-LZ4 with
        bit shuffle: it costs little and saves ~10 % on noisy photographs (floats compress
        poorly), where ``"auto"``, zarr's own default (zstd), is 2-3x slower for no better
        ratio. None stores them raw; for much smaller stores, pass a lossy filter such as
        numcodecs' ``BitRound`` yourself.

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
    if tuple(coeffs.dims) != ("y", "x", "k"):
        raise DimensionError(
            f"coeffs must have dims ('y', 'x', 'k'), got {coeffs.dims}: pass a field from "
            "xfskde.local_fskde, or call .transpose('y', 'x', 'k') first"
        )
    return write_blocks(
        coeffs, store, name=_VARIABLE, chunks=chunks, resume=resume, overwrite=overwrite,
        compute=compute, scheduler=scheduler, progress=progress, compressors=compressors,
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
) -> Any:
    """Write any ``(y, x, ...)`` DataArray to a Zarr v3 store block by block, resumably.

    The machinery behind :func:`write_coefficients` and ``xfskde segment``: the store is laid
    out first (coordinates, the array ``name``, a completion record of one entry per block, the
    status ``"incomplete"``), each block writes its data and then its record, and the status
    becomes ``"complete"`` (:func:`finalize_store`) only once every record exists. The first two
    dims are cut into ``chunks``; the others are never split. Dask data already chunked so is
    written as it is (no rechunk); the write tasks are named ``xfskde-write-...``.

    Parameters
    ----------
    data : xarray.DataArray
        NumPy- or Dask-backed, with the two spatial dims first.
    store : str, pathlib.Path or zarr store
        A path for work on a cluster (tasks open it themselves).
    name : str
        Name of the array in the store.
    chunks, resume, overwrite, compute, scheduler, progress
        As in :func:`write_coefficients` (the same chunk default: the data's own Dask chunks,
        else :func:`xfskde.lazy.plan_chunks`).
    compressors : zarr codecs, None, "auto" or "default"
        Codecs of the chunks. The default, ``"auto"``, is zarr's own default (zstd), a
        general-purpose codec for data of any kind (``xfskde segment`` writes its labels with
        it); ``"default"`` is xfskde's Blosc-LZ4 with bit shuffle, the default of
        :func:`write_coefficients`, chosen for floating-point coefficients; None stores them
        raw.

    Returns
    -------
    int or dask.array.Array
        The number of blocks written now, or the pending writes with ``compute=False``.

    Raises
    ------
    DimensionError
        If ``data`` has fewer than two dims.
    ParameterError
        For ``chunks`` that are not positive or an unknown ``compressors`` string.
    StoreExistsError
        If the store exists and neither ``resume`` nor ``overwrite`` is set.
    StoreParametersError
        If ``resume`` meets a store written with other parameters, shape or dtype.
    StoreFormatError
        If ``resume`` meets something that is not a Zarr store.
    """
    if data.ndim < 2:
        raise DimensionError(
            f"data must have at least two (spatial) dims, got {data.dims}: pass a (y, x, ...) "
            "DataArray"
        )
    codecs = _codecs(compressors)
    params = _parameters(data)
    exists = _store_exists(store)
    if exists and not (resume or overwrite):
        raise StoreExistsError(
            f"{store} already exists; pass resume=True to finish an interrupted write or "
            "overwrite=True to replace it"
        )
    fresh = not exists or overwrite
    if not fresh:
        group = _open_group(store, "store")
        if _BLOCKS not in group or name not in group:
            raise StoreFormatError(
                f"cannot resume {store}: it is not a store written by xfskde (no array {name!r} "
                f"or no completion record {_BLOCKS!r}); use overwrite=True to replace it"
            )
        if not np.asarray(group[_BLOCKS][...]).any():
            fresh = True  # nothing was written: start again, with whatever parameters
        elif group.attrs.get(_PARAMETERS_ATTR) != params:
            raise StoreParametersError(
                f"cannot resume {store}: it was written with other parameters or shape; "
                "use overwrite=True to start again"
            )
    if fresh:
        cy, cx = _store_chunks(data, chunks)
    else:
        # the blocks already written, and their records, are on the store's own grid: the
        # resumed write adopts it (a grid of other chunks would leave holes marked complete)
        cy, cx = (int(c) for c in group[name].chunks[:2])
        if chunks is not None and _store_chunks(data, chunks) != (cy, cx):
            raise StoreParametersError(
                f"cannot resume {store} with chunks {chunks!r}: it is written in chunks of "
                f"{(cy, cx)}; drop chunks= (a resume adopts the store's chunks) or overwrite"
            )
    field = _blocked(data, cy, cx)
    nby, nbx = len(field.chunks[0]), len(field.chunks[1])
    if fresh:
        if overwrite and isinstance(store, str | os.PathLike) and Path(store).is_file():
            Path(store).unlink()  # a file where the store goes: zarr cannot clear it itself
        _create_store(store, field, name, (cy, cx), (nby, nbx), params, codecs)
    done = np.asarray(zarr.open_group(store, mode="r")[_BLOCKS][...]).astype(bool)
    # one writer mapped over every block; selecting the missing blocks' outputs lets Dask cull
    # the rest, so a resumed write neither reads nor computes what is already stored
    store_key = os.fspath(store) if isinstance(store, str | os.PathLike) else store
    writes = field.data.map_blocks(
        _write_mapped_block,
        store=store,
        variable=name,  # not name=: map_blocks takes that for the output's (the tasks') name
        chunk_shape=(cy, cx),
        chunks=((1,) * nby, (1,) * nbx, *(((1,),) * (field.ndim - 2))),
        dtype=np.int64,
        meta=np.empty((0,) * field.ndim, np.int64),
        name=f"xfskde-write-{tokenize(field.data.name, store_key, name, (cy, cx))}",
    )
    todo = [writes.blocks[by, bx].ravel() for by, bx in zip(*np.nonzero(~done), strict=True)]
    pending = da.concatenate(todo) if todo else da.zeros(0, dtype=np.int64)
    if not compute:
        return pending
    try:
        written = int(compute_collections([pending.sum()], scheduler, progress)[0])
    except BaseException:
        if fresh:  # a write that failed before its first block leaves nothing in the way
            _remove_if_untouched(store)
        raise
    finalize_store(store)
    return written


def _remove_if_untouched(store: Any) -> None:
    """Remove a store laid out by this write if no block of it was written (a local path)."""
    if not isinstance(store, str | os.PathLike) or not Path(store).is_dir():
        return
    try:
        untouched = store_status(store)["blocks_done"] == 0
    except (OSError, StoreFormatError, KeyError):
        return
    if untouched:
        shutil.rmtree(store, ignore_errors=True)


def finalize_store(store: Any) -> None:
    """Mark a store complete once every block's record exists, then consolidate its metadata.

    :func:`write_blocks` calls it itself; call it after computing the writes it returned with
    ``compute=False``.

    Parameters
    ----------
    store : str, pathlib.Path or zarr store
        A store laid out by :func:`write_blocks` or :func:`write_coefficients`.

    Raises
    ------
    StoreIncompleteError
        If some block's record is missing: finish the write with ``resume=True``.
    """
    status = store_status(store)
    if status["blocks_done"] != status["blocks_total"]:
        raise StoreIncompleteError(
            f"{store}: only {status['blocks_done']} of {status['blocks_total']} blocks were "
            "written; run the write again with resume=True"
        )
    group = zarr.open_group(store, mode="r+")
    group.attrs[_STATUS_ATTR] = "complete"
    with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
        warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
        zarr.consolidate_metadata(store)


# ------------------------------------------------------------------------------------- read


def open_coefficients(store: Any, *, allow_incomplete: bool = False) -> xr.DataArray:
    """Reopen a coefficient store lazily, with its coordinates and attributes.

    Parameters
    ----------
    store : str, pathlib.Path or zarr store
        A store written by :func:`write_coefficients` (or ``xfskde coefficients``).
    allow_incomplete : bool
        Read a store whose write did not finish (unwritten blocks read as 0).

    Returns
    -------
    xarray.DataArray
        Dask-backed ``(y, x, k)`` field named ``"fskde"``.

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    StoreFormatError
        If it is not a Zarr store or holds no ``"fskde"`` array.
    StoreIncompleteError
        If the store's write did not finish (unless ``allow_incomplete``): resume it with
        ``write_coefficients(..., resume=True)`` or ``xfskde coefficients ... --resume``.
    """
    return open_blocks(store, name=_VARIABLE, allow_incomplete=allow_incomplete)


def open_blocks(
    store: Any, *, name: str | None = None, allow_incomplete: bool = False
) -> xr.DataArray:
    """Reopen any store written by :func:`write_blocks` (coefficients, labels) lazily.

    Parameters
    ----------
    store : str, pathlib.Path or zarr store
        A store written by :func:`write_blocks`, :func:`write_coefficients` or the CLI.
    name : str, optional
        The array to open; default: the store's only data array.
    allow_incomplete : bool
        Read a store whose write did not finish (unwritten blocks read as 0).

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
    """
    group = _open_group(store, "store")
    if name is None:
        dims = {d for _, arr in group.arrays() for d in (arr.metadata.dimension_names or ())}
        data = [n for n, arr in group.arrays() if n != _BLOCKS and n not in dims]
        if len(data) != 1 or _BLOCKS not in group:
            raise StoreFormatError(
                f"{store} is not a store written by xfskde (arrays {sorted(data)}); "
                "pass name= to open one of its arrays"
            )
        name = data[0]
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
    with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
        warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
        ds = xr.open_zarr(store, consolidated=complete)
    return ds[name]
