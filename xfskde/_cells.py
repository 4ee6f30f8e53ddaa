"""Images averaged over f × f cells, block by block, in one compiled pass over each block in
its own dtype.

Two consumers average an image over cells: segmentation analyses coarse textures on cells of
f × f pixels (``resolution``), and :func:`xfskde.masks.tissue_mask` finds the foreground of a
large image without a low-resolution level on its cells. Both read each pixel once as it is
stored (8-bit images are never converted to float32 first): a cell's mean is the mean of its
finite values over the pixels that are not missing (every channel equal to the ``nodata``
value) and lie on the foreground ``mask``, when one is given; a cell with none is NaN.

:func:`in_whole_cells` cuts a Dask image into blocks of whole cells; :func:`cell_means`
averages each; :func:`block_cells` is the one block's computation. The compiled helpers that
read a block in its own dtype (:func:`compiled_view`, :func:`marked`) also serve
segmentation's test of the pixels present.
"""

from __future__ import annotations

import math
from typing import Any

import dask
import dask.array as da
import numba
import numpy as np

from ._grid import mask_over

__all__ = [
    "NO_MASK",
    "block_cells",
    "cell_means",
    "compiled_view",
    "in_whole_cells",
    "kept",
    "marked",
    "missing_marker",
]

#: No foreground mask, for the compiled passes that take one (a mask of no rows).
NO_MASK = np.ones((0, 0), bool)


def missing_marker(dtype: np.dtype, nodata: float | int | None) -> tuple[Any, bool]:
    """``nodata`` as a value of ``dtype``, compared as ``block == nodata`` compares it (NumPy's
    rules for a Python number: in the block's own dtype, where an integer image equals no value
    it cannot hold), and whether any pixel can equal it."""
    if nodata is None or (isinstance(nodata, float) and math.isnan(nodata)):
        return dtype.type(0), False
    if dtype.kind in "uib":
        limits = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
        number = float(nodata)
        if not number.is_integer() or not limits.min <= int(number) <= limits.max:
            return dtype.type(0), False
        return (np.uint8 if dtype.kind == "b" else dtype.type)(int(number)), True
    return dtype.type(nodata), True


def compiled_view(block: np.ndarray, nodata: float | int | None, unit: bool = True):
    """A (h, w, c) block as the compiled passes read it (bools as bytes), the divisor of its
    values (with ``unit``, an integer dtype's maximum, so that they lie in [0, 1]; else 1),
    the missing pixels' value and whether there is one (:func:`missing_marker`)."""
    marker, has_marker = missing_marker(block.dtype, nodata)
    if block.dtype.kind == "b":
        return np.ascontiguousarray(block).view(np.uint8), np.float32(1), marker, has_marker
    top = np.iinfo(block.dtype).max if unit and block.dtype.kind in "ui" else 1
    return np.ascontiguousarray(block), np.float32(top), marker, has_marker


def kept(
    mask: np.ndarray | None,
    origin: tuple[int, int],
    image_shape: tuple[int, int] | None,
    block_info: dict | None,
) -> np.ndarray:
    """The foreground ``mask`` over the pixels of a block of a Dask array (``block_info``)
    that is the part of an image of ``image_shape`` from pixel ``origin``
    (:func:`xfskde._grid.mask_over`); :data:`NO_MASK` without a mask."""
    if mask is None:
        return NO_MASK
    (r0, r1), (c0, c1) = block_info[0]["array-location"][:2]
    rows, cols = (origin[0] + r0, origin[0] + r1), (origin[1] + c0, origin[1] + c1)
    return mask_over(mask, image_shape, rows, cols)


def block_cells(
    block: np.ndarray,
    f: int,
    nodata: float | int | None = None,
    mask: np.ndarray | None = None,
    origin: tuple[int, int] = (0, 0),
    image_shape: tuple[int, int] | None = None,
    unit: bool = True,
    block_info: dict | None = None,
) -> np.ndarray:
    """The (⌈h / f⌉, ⌈w / f⌉, c) float32 means over f × f cells of one (h, w, c) block.

    Each cell's mean, channel by channel, of the finite values (divided by an integer dtype's
    maximum with ``unit``) of its pixels that are not missing (every channel equal to
    ``nodata``) and, with a foreground ``mask`` (covering an image of ``image_shape`` of which
    the block's array is the part from pixel ``origin``; ``block_info`` places the block), lie
    on it; NaN where none does. The cells of the last row and column average the pixels the
    block has. Summed in float64 in one compiled pass over the block in its own dtype
    (converted to float32 first and then averaged, a 16384² RGB slide at f = 5 took 3.1 s of
    thread time; 1.3 s so).
    """
    h, w = block.shape[:2]
    out = np.empty((-(-h // f), -(-w // f), block.shape[2]), np.float32)
    values, top, marker, has_marker = compiled_view(block, nodata, unit)
    keep = kept(mask, origin, image_shape, block_info)
    _raw_cell_means(values, f, top, marker, has_marker, keep, out)
    return out


@numba.njit(nogil=True, cache=True)
def _raw_cell_means(block, f, top, marker, has_marker, keep, out):
    """``out[i, j, c]``: the mean of the finite float32(value) / ``top`` of channel c over the
    pixels of cell (i, j) that are not missing (every channel equal to ``marker``, with
    ``has_marker``; outside ``keep``, unless it has no rows), NaN if none; summed in float64 in
    the block's memory order."""
    h, w, channels = block.shape
    rows, cols = out.shape[0], out.shape[1]
    masked = keep.shape[0] > 0
    total = np.empty((cols, channels))
    count = np.empty((cols, channels), np.int64)
    for i in range(rows):
        total[:] = 0.0
        count[:] = 0
        for y in range(i * f, min(h, (i + 1) * f)):
            for x in range(w):
                if has_marker and marked(block, y, x, marker):
                    continue
                if masked and not keep[y, x]:
                    continue
                j = x // f
                for c in range(channels):
                    v = np.float32(block[y, x, c]) / top
                    if np.isfinite(v):
                        total[j, c] += v
                        count[j, c] += 1
        for j in range(cols):
            for c in range(channels):
                n = count[j, c]
                out[i, j, c] = total[j, c] / n if n > 0 else np.nan


@numba.njit(nogil=True, cache=True, inline="always")
def marked(block, y, x, marker):
    """Whether every channel of pixel (y, x) equals ``marker`` (the pixel is missing)."""
    for c in range(block.shape[2]):
        if block[y, x, c] != marker:
            return False
    return True


def cell_means(
    blocks: da.Array,
    f: int,
    nodata: float | int | None = None,
    mask: np.ndarray | None = None,
    origin: tuple[int, int] = (0, 0),
    image_shape: tuple[int, int] | None = None,
    unit: bool = True,
) -> da.Array:
    """:func:`block_cells` of every block of a (y, x, c) Dask array cut into whole cells (but
    its last row and column: :func:`in_whole_cells`), lazily: a chunk of cells per block. The
    ``mask``, when given, is one graph node that every task reads; by default it covers
    ``blocks`` itself (``origin`` (0, 0), ``image_shape`` its own)."""
    cells = tuple(tuple(-(-c // f) for c in axis) for axis in blocks.chunks[:2])
    node = None if mask is None else dask.delayed(mask, pure=True)
    return blocks.map_blocks(block_cells, f, nodata, node, origin,
                             image_shape or blocks.shape[:2], unit,
                             chunks=(*cells, blocks.chunks[2]), dtype=np.float32)  # fmt: skip


def in_whole_cells(arr: da.Array, f: int) -> da.Array:
    """``arr`` rechunked along y and x (its first two axes) into blocks of whole f × f cells
    (but the last row and column, cut at its edge): each axis's chunks rounded up to a multiple
    of f, so chunks already whole stay as they are, and the whole of the other axes."""
    chunks = []
    for axis, n in zip(arr.chunks[:2], arr.shape[:2], strict=True):
        side = max(f, -(-max(axis) // f) * f)
        chunks.append((side,) * (n // side) + ((n % side,) if n % side else ()))
    return arr.rechunk((*chunks, *(-1,) * (arr.ndim - 2)))
