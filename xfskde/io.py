"""Reading images of any size and writing coefficient fields to Zarr.

**Images.** :func:`open_image` returns a lazy ``(y, x[, c])`` DataArray for NumPy and Dask arrays,
Zarr arrays and groups (a level of an OME-Zarr multiscale image), and TIFF / OME-TIFF / SVS files
through tifffile (:mod:`xfskde._tiff`). Files are opened *inside* the tasks, from their path: the
graph holds no pixel data and no open file handle, so it runs unchanged on a distributed cluster.

**Stores.** :func:`write_coefficients` writes a ``(y, x, k)`` field to a Zarr v3 store with
explicit encoding chunks (never splitting k) that the Dask chunks match one to one. Every block
writes its data and then its own entry of a completion record (``xfskde_blocks``); the store's
``xfskde_status`` attribute becomes ``"complete"`` only after the last block, and the metadata is
consolidated last of all. A write that did not finish therefore never looks finished, and
``resume=True`` computes only the blocks whose record is missing.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from pathlib import Path
from typing import Any

import dask.array as da
import numpy as np
import xarray as xr
import zarr
from dask.base import tokenize

from ._scheduling import compute as compute_collections
from ._tiff import read_tiff_block
from .accessor import COLOR_DIMS

__all__ = [
    "finalize_store",
    "open_blocks",
    "open_coefficients",
    "open_image",
    "store_status",
    "write_blocks",
    "write_coefficients",
]

TIFF_SUFFIXES = (".tif", ".tiff", ".svs", ".ndpi", ".scn", ".btf", ".qptiff")
PLAIN_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".npy")
_AXIS_NAMES = {"Y": "y", "X": "x", "S": "c", "C": "c"}
DEFAULT_CHUNK = 2048


# ----------------------------------------------------------------------------------- images


def _dims_for(ndim: int, shape: tuple[int, ...]) -> tuple[str, ...]:
    if ndim == 2:
        return ("y", "x")
    if ndim == 3 and shape[-1] <= 4:
        return ("y", "x", "c")
    if ndim == 3 and shape[0] <= 4:
        return ("c", "y", "x")
    raise ValueError(
        f"cannot tell the dims of an array of shape {shape}: pass a DataArray with dims "
        "('y', 'x') or ('y', 'x', 'c')"
    )


def _aligned_chunks(shape: tuple[int, ...], dims: tuple[str, ...], native, chunks) -> tuple:
    """Dask chunks: a multiple of the native (tile) chunks near ``chunks`` (default 2048)."""
    want = DEFAULT_CHUNK if chunks is None else chunks
    out = []
    for n, d, nat in zip(shape, dims, native, strict=True):
        if d not in ("y", "x"):
            out.append(n)
            continue
        target = want.get(d, DEFAULT_CHUNK) if isinstance(want, dict) else int(want)
        nat = max(1, int(nat))
        out.append(min(n, max(nat, round(target / nat) * nat)))
    return tuple(out)


def _open_tiff(path: Path, level: int, chunks) -> xr.DataArray:
    import tifffile

    with tifffile.TiffFile(path) as tif:
        series = tif.series[0]
        n_levels = len(series.levels)
        if not 0 <= level < n_levels:
            raise ValueError(f"level must be in 0..{n_levels - 1} for {path}, got {level}")
        page = series.levels[level]
        axes, shape, dtype = page.axes, tuple(page.shape), page.dtype
        tile = tif.series[0].levels[level].keyframe
        tile_shape = (tile.tilelength or tile.rowsperstrip or 256, tile.tilewidth or shape[-1])
    squeeze = [i for i, a in enumerate(axes) if a not in _AXIS_NAMES and shape[i] == 1]
    unknown = [a for i, a in enumerate(axes) if a not in _AXIS_NAMES and shape[i] != 1]
    if unknown:
        raise ValueError(
            f"{path} has axes {axes!r}; only Y, X and one colour axis (S or C) are supported — "
            f"extract a single plane of the {unknown} axes first"
        )
    dims = tuple(_AXIS_NAMES[a] for a in axes if a in _AXIS_NAMES)
    native = []
    for a, n in zip(axes, shape, strict=True):
        native.append(tile_shape[0] if a == "Y" else tile_shape[1] if a == "X" else n)
    dchunks = _aligned_chunks(shape, tuple(_AXIS_NAMES.get(a, "z") for a in axes), native, chunks)
    mtime = os.path.getmtime(path)
    data = da.map_blocks(
        functools.partial(read_tiff_block, str(path), level, mtime),
        chunks=da.core.normalize_chunks(dchunks, shape),
        dtype=dtype,
        meta=np.empty((0,) * len(shape), dtype),
        name=f"xfskde-read-tiff-{tokenize(str(path), level, mtime)}",
    )
    if squeeze:
        data = data.squeeze(axis=tuple(squeeze))
    return xr.DataArray(data, dims=dims, name=path.stem)


def _open_zarr(path: Any, level: int, chunks) -> xr.DataArray:
    node = zarr.open(path, mode="r")
    component = None
    dims: tuple[str, ...] | None = None
    if isinstance(node, zarr.Group):
        multiscales = node.attrs.get("multiscales") or node.attrs.get("ome", {}).get("multiscales")
        if multiscales:
            datasets = multiscales[0]["datasets"]
            if not 0 <= level < len(datasets):
                raise ValueError(f"level must be in 0..{len(datasets) - 1} for {path}, got {level}")
            component = datasets[level]["path"]
            axes = [a["name"] if isinstance(a, dict) else a for a in multiscales[0].get("axes", [])]
            if axes:
                dims = tuple(a.lower() for a in axes)
        else:
            arrays = [name for name, _ in node.arrays()]
            if len(arrays) != 1:
                raise ValueError(
                    f"{path} is a Zarr group with arrays {arrays}; open the image array itself "
                    "(e.g. 'store.zarr/name') or use an OME-Zarr multiscale group"
                )
            component = arrays[0]
        array = node[component]
    else:
        array = node
    if dims is None:
        stored = array.attrs.get("_ARRAY_DIMENSIONS") or getattr(
            array.metadata, "dimension_names", None
        )
        dims = tuple(stored) if stored else _dims_for(array.ndim, array.shape)
    keep = [i for i, d in enumerate(dims) if d in ("y", "x") or d in COLOR_DIMS]
    drop = [i for i in range(len(dims)) if i not in keep]
    if any(array.shape[i] != 1 for i in drop):
        raise ValueError(
            f"{path} has dims {dims}; only y, x and one colour dim are supported — select a "
            "single plane of the others first"
        )
    dchunks = _aligned_chunks(array.shape, dims, array.chunks, chunks)
    data = da.from_zarr(path if not isinstance(path, zarr.Array) else array,
                        component=component if not isinstance(path, zarr.Array) else None,
                        chunks=dchunks)  # fmt: skip
    if drop:
        data = data.squeeze(axis=tuple(drop))
    return xr.DataArray(data, dims=tuple(dims[i] for i in keep), name=Path(str(path)).stem)


def open_image(source: Any, *, level: int = 0, chunks: int | dict | None = None) -> xr.DataArray:
    """Open an image of any size as a lazy ``(y, x)`` or ``(y, x, c)`` DataArray.

    Parameters
    ----------
    source : path, zarr.Array, zarr.Group, numpy.ndarray, dask.array.Array or xarray.DataArray
        TIFF / OME-TIFF / SVS (``.tif``, ``.tiff``, ``.svs``, ...), a Zarr array or group (an
        OME-Zarr multiscale group picks ``level``), or a PNG/JPEG/NPY file for small images.
    level : int
        Pyramid level of a multiscale TIFF or OME-Zarr image (0 = full resolution).
    chunks : int or dict, optional
        Target Dask chunk side in pixels (default 2048), rounded to a multiple of the file's
        tiles so that every task reads whole tiles.

    Returns
    -------
    xarray.DataArray
        Dask-backed; pixels are read inside the tasks.

    Raises
    ------
    FileNotFoundError
        If the path does not exist.
    ValueError
        For formats or layouts it cannot read, with what to do instead.
    """
    if isinstance(source, xr.DataArray):
        return source.chunk(chunks) if chunks is not None else source
    if isinstance(source, np.ndarray) or type(source).__module__.startswith("dask"):
        dims = _dims_for(source.ndim, source.shape)
        native = source.chunksize if hasattr(source, "chunksize") else (1,) * source.ndim
        data = da.asarray(source).rechunk(_aligned_chunks(source.shape, dims, native, chunks))
        return xr.DataArray(data, dims=dims, name="image")
    if isinstance(source, zarr.Array | zarr.Group):
        return _open_zarr(source, level, chunks)
    path = Path(os.fspath(source))
    if not path.exists():
        raise FileNotFoundError(f"no such image: {path}")
    name = path.name.lower()
    if path.is_dir() or name.endswith(".zarr"):
        try:
            return _open_zarr(str(path), level, chunks)
        except (zarr.errors.GroupNotFoundError, FileNotFoundError, KeyError) as exc:
            raise ValueError(f"{path} is not a readable Zarr array or group ({exc})") from None
    if name.endswith(TIFF_SUFFIXES):
        try:
            return _open_tiff(path, level, chunks)
        except (OSError, ValueError) as exc:
            if (isinstance(exc, ValueError) and "level" in str(exc)) or "axes" in str(exc):
                raise
            raise ValueError(f"cannot read {path} as a TIFF image: {exc}") from None
    if name.endswith(PLAIN_SUFFIXES):
        if name.endswith(".npy"):
            array = np.load(path, mmap_mode="r")
        else:
            from skimage import io as skio

            array = skio.imread(path)
        out = open_image(np.asarray(array), chunks=chunks)
        out.name = path.stem
        return out
    raise ValueError(
        f"cannot read {path}: unknown format (expected TIFF/OME-TIFF/SVS, Zarr, PNG, JPEG or NPY)"
    )


# ----------------------------------------------------------------------------------- stores

STATUS_ATTR = "xfskde_status"
BLOCKS = "xfskde_blocks"
VARIABLE = "fskde"


def _regular_chunks(field: xr.DataArray, chunks: int | tuple[int, int] | None) -> tuple[int, int]:
    if chunks is not None:
        cy, cx = (chunks, chunks) if np.isscalar(chunks) else chunks
    elif field.chunks is not None:
        cy, cx = max(field.chunks[0]), max(field.chunks[1])
    else:
        cy, cx = 1024, 1024
    height, width = field.shape[:2]
    return max(1, min(int(cy), height)), max(1, min(int(cx), width))


def _default_compressors() -> Any:
    """Blosc-LZ4 with bit shuffle, level 1: cheap, and as good as anything lossless here.

    Coefficients are floats whose low mantissa bits are noise: on 512×512×9 complex64 chunks of
    a photograph with sensor-like noise (σ = 2 grey levels) LZ4 with bit shuffle gave a ratio of
    1.10 at ~1.3–1.9 GB/s, byte shuffle 1.02 at 1.2 GB/s, zstd 1.06–1.07 at 0.6 GB/s. Smooth or
    repetitive images compress far better (5.3 on the tiled photograph of bench_scale.py).
    """
    return zarr.codecs.BloscCodec(cname="lz4", clevel=1, shuffle="bitshuffle")


def _create_store(
    store, field: xr.DataArray, name: str, chunks, n_blocks, params: str, compressors
) -> None:
    """Lay out an empty store: coordinates, the data array, the completion record.

    Written with the zarr API rather than ``Dataset.to_zarr``: xarray 2026.9 stores a *lazy*
    complex variable's metadata as float64 in Zarr v3, and the layout must exist before any
    block is written.
    """
    group = zarr.open_group(store, mode="w", zarr_format=3)
    group.attrs.update({STATUS_ATTR: "incomplete", "xfskde_parameters": params})
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
        compressors=_default_compressors() if compressors == "default" else compressors,
    )
    group.create_array(
        BLOCKS,
        shape=n_blocks,
        chunks=(1, 1),
        dtype="uint8",
        fill_value=0,
        dimension_names=("xfskde_block_y", "xfskde_block_x"),
    )


# Every chunk is written as it is: coefficient chunks are never all zero in practice, and zarr's
# check for "empty" chunks (a full comparison pass) cost 20 ms per 19 MB complex64 chunk, more
# than writing it (5 ms), in benchmarks/bench_scale.py.
_WRITE_CONFIG = {"write_empty_chunks": True}


def _write_block(
    block: np.ndarray, store: Any, name: str, by: int, bx: int, cy: int, cx: int
) -> int:
    """Write one block, then its completion record (in that order)."""
    target = zarr.open_array(store, path=name, mode="r+").with_config(_WRITE_CONFIG)
    target[by * cy : by * cy + block.shape[0], bx * cx : bx * cx + block.shape[1]] = block
    zarr.open_array(store, path=BLOCKS, mode="r+")[by, bx] = 1
    return 1


def _write_mapped_block(
    block: np.ndarray, store: Any, variable: str, chunk_shape, block_info=None
) -> np.ndarray:
    by, bx = block_info[0]["chunk-location"][:2]
    written = _write_block(block, store, variable, by, bx, *chunk_shape)
    return np.full((1,) * block.ndim, written, np.int64)


def store_status(store: Any) -> dict[str, Any]:
    """Completion of a coefficient store: ``{"complete", "blocks_done", "blocks_total"}``."""
    if isinstance(store, str | os.PathLike) and not Path(store).exists():
        raise FileNotFoundError(f"no such coefficient store: {store}")
    group = zarr.open_group(store, mode="r")
    done = np.asarray(group[BLOCKS][...]) if BLOCKS in group else np.zeros((0, 0))
    return {
        "complete": group.attrs.get(STATUS_ATTR) == "complete",
        "blocks_done": int(done.sum()),
        "blocks_total": int(done.size),
    }


def _parameters(field: xr.DataArray) -> str:
    keep = {k: v for k, v in field.attrs.items() if k not in (STATUS_ATTR, "xfskde_version")}
    return json.dumps({"shape": list(field.shape), "dtype": str(field.dtype), **keep},
                      sort_keys=True, default=str)  # fmt: skip


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
    compressors: Any = "default",
) -> Any:
    """Write a ``(y, x, k)`` coefficient field to a Zarr v3 store, resumably.

    Parameters
    ----------
    coeffs : xarray.DataArray
        A field from :func:`xfskde.local_fskde` (NumPy- or Dask-backed).
    store : str, pathlib.Path or zarr store
        A path for work on a cluster (tasks open it themselves).
    chunks : int or (int, int), optional
        Zarr chunk shape along (y, x); k is never split. Default: the field's Dask chunks, else
        1024. The Dask chunks are made to match exactly, so concurrent writes never share a chunk.
    resume : bool
        Continue an interrupted write: blocks whose completion record exists are not computed
        again. The parameters must match the store's.
    overwrite : bool
        Replace an existing store (otherwise an existing store is an error unless ``resume``).
    compute : bool
        False returns the Dask collection of block writes (compute it to write); the status is
        then set by :func:`finalize_store`.
    scheduler : str or distributed.Client, optional
        Where the blocks run: ``"threads"``, ``"processes"``, ``"synchronous"``, a
        ``distributed.Client`` or the address of a Dask scheduler (``"tcp://host:8786"``).
        Default: Dask's current scheduler (the active ``Client``, if any).
    progress : bool
        Show a progress bar that suits the scheduler: Dask's ``ProgressBar`` locally,
        ``distributed.progress`` on a cluster.
    compressors : zarr codecs, None or "default"
        Compression of the coefficient chunks. The default, Blosc-LZ4 with bit shuffle, costs
        little and saves ~10 % on noisy photographs (floats compress poorly); zarr's own
        default, zstd, is 2-3x slower for no better ratio. None stores them raw; for much
        smaller stores, pass a lossy filter such as numcodecs' ``BitRound`` yourself.

    Returns
    -------
    int or dask.array.Array
        The number of blocks written now (0 when everything was already there), or, with
        ``compute=False``, a Dask array with one entry per pending block.
    """
    if tuple(coeffs.dims) != ("y", "x", "k"):
        raise ValueError(f"coeffs must have dims ('y', 'x', 'k'), got {coeffs.dims}")
    return write_blocks(
        coeffs, store, name=VARIABLE, chunks=chunks, resume=resume, overwrite=overwrite,
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
    compressors: Any = "auto",
) -> Any:
    """Write any ``(y, x, ...)`` DataArray to a Zarr v3 store block by block, resumably.

    The machinery behind :func:`write_coefficients` and ``xfskde segment``: the store is laid
    out first (coordinates, the array ``name``, a completion record of one entry per block, the
    status ``"incomplete"``), each block writes its data and then its record, and the status
    becomes ``"complete"`` (:func:`finalize_store`) only once every record exists. The first two
    dims are cut into ``chunks``; the others are never split.

    Parameters
    ----------
    data : xarray.DataArray
        NumPy- or Dask-backed, with the two spatial dims first.
    store : str, pathlib.Path or zarr store
    name : str
        Name of the array in the store.
    chunks, resume, overwrite, compute, scheduler, progress
        As in :func:`write_coefficients`.
    compressors : zarr codecs, None, "auto" or "default"
        Codecs of the chunks: ``"auto"`` zarr's own default, ``"default"`` xfskde's Blosc-LZ4
        with bit shuffle (what :func:`write_coefficients` uses), None raw.

    Returns
    -------
    int or dask.array.Array
        The number of blocks written now, or the pending writes with ``compute=False``.
    """
    if data.ndim < 2:
        raise ValueError(f"data must have at least two (spatial) dims, got {data.dims}")
    cy, cx = _regular_chunks(data, chunks)
    params = _parameters(data)
    exists = _store_exists(store)
    if exists and not (resume or overwrite):
        raise FileExistsError(
            f"{store} already exists; pass resume=True to finish an interrupted write or "
            "overwrite=True to replace it"
        )
    fresh = not exists or overwrite
    if not fresh:
        group = zarr.open_group(store, mode="r")
        if group.attrs.get("xfskde_parameters") != params:
            raise ValueError(
                f"cannot resume {store}: it was written with other parameters or shape; "
                "use overwrite=True to start again"
            )
    ydim, xdim, *rest = data.dims
    field = data.chunk({ydim: cy, xdim: cx, **dict.fromkeys(rest, -1)})
    nby, nbx = len(field.chunks[0]), len(field.chunks[1])
    if fresh:
        _create_store(store, field, name, (cy, cx), (nby, nbx), params, compressors)
    done = np.asarray(zarr.open_group(store, mode="r")[BLOCKS][...]).astype(bool)
    # one writer mapped over every block; selecting the missing blocks' outputs lets Dask cull
    # the rest, so a resumed write neither reads nor computes what is already stored
    writes = field.data.map_blocks(
        _write_mapped_block,
        store=store,
        variable=name,  # not name=: map_blocks would take it for the output's name
        chunk_shape=(cy, cx),
        chunks=((1,) * nby, (1,) * nbx, *(((1,),) * len(rest))),
        dtype=np.int64,
        meta=np.empty((0,) * field.ndim, np.int64),
    )
    todo = [writes.blocks[by, bx].ravel() for by, bx in zip(*np.nonzero(~done), strict=True)]
    pending = da.concatenate(todo) if todo else da.zeros(0, dtype=np.int64)
    if not compute:
        return pending
    written = int(compute_collections([pending.sum()], scheduler, progress)[0])
    finalize_store(store)
    return written


def finalize_store(store: Any) -> None:
    """Mark a store complete once every block's record exists, then consolidate its metadata."""
    status = store_status(store)
    if status["blocks_done"] != status["blocks_total"]:
        raise RuntimeError(
            f"{store}: only {status['blocks_done']} of {status['blocks_total']} blocks were "
            "written; run again with resume=True"
        )
    group = zarr.open_group(store, mode="r+")
    group.attrs[STATUS_ATTR] = "complete"
    with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
        warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
        zarr.consolidate_metadata(store)


def _store_exists(store: Any) -> bool:
    if isinstance(store, str | os.PathLike):
        return Path(store).exists()
    try:
        zarr.open_group(store, mode="r")
    except (zarr.errors.GroupNotFoundError, FileNotFoundError, KeyError):
        return False
    return True


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
    ValueError
        If the store's write did not finish (unless ``allow_incomplete``): resume it with
        ``write_coefficients(..., resume=True)`` or ``xfskde coefficients ... --resume``.
    """
    return open_blocks(store, name=VARIABLE, allow_incomplete=allow_incomplete)


def open_blocks(
    store: Any, *, name: str | None = None, allow_incomplete: bool = False
) -> xr.DataArray:
    """Reopen any store written by :func:`write_blocks` (coefficients, labels) lazily.

    Parameters
    ----------
    store : str, pathlib.Path or zarr store
    name : str, optional
        The array to open; default: the store's only data array.
    allow_incomplete : bool
        Read a store whose write did not finish (unwritten blocks read as 0).

    Returns
    -------
    xarray.DataArray
        Dask-backed, with the coordinates and attributes it was written with.
    """
    if isinstance(store, str | os.PathLike) and not Path(store).exists():
        raise FileNotFoundError(f"no such store: {store}")
    try:
        group = zarr.open_group(store, mode="r")
    except (zarr.errors.GroupNotFoundError, FileNotFoundError) as exc:
        raise ValueError(f"{store} is not a Zarr store ({exc})") from None
    if name is None:
        dims = {d for _, arr in group.arrays() for d in (arr.metadata.dimension_names or ())}
        data = [n for n, arr in group.arrays() if n != BLOCKS and n not in dims]
        if len(data) != 1 or BLOCKS not in group:
            raise ValueError(f"{store} is not a store written by xfskde (arrays {sorted(data)})")
        name = data[0]
    if name not in group:
        kind = "an xfskde coefficient store" if name == VARIABLE else f"a store of {name!r}"
        raise ValueError(f"{store} holds no {name!r} variable: not {kind}")
    complete = group.attrs.get(STATUS_ATTR) == "complete"
    if not complete and not allow_incomplete:
        status = store_status(store)
        raise ValueError(
            f"{store} is incomplete ({status['blocks_done']} of {status['blocks_total']} blocks "
            "written): resume the write, or pass allow_incomplete=True to read it anyway"
        )
    with warnings.catch_warnings():  # consolidated metadata is a zarr-python v3 extension
        warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
        ds = xr.open_zarr(store, consolidated=complete)
    return ds[name]
