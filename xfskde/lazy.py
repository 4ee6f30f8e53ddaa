"""Dask plumbing: the block core of :mod:`xfskde.local` over chunked images.

The Dask path is :func:`xfskde.local.local_fskde_block` applied to every chunk after
``dask.array.overlap.overlap`` with ``boundary="none"``: internal chunk edges see their real
neighbours, the true image edges are handled inside the core by the boundary mode, and the overlap
depth comes from the parameters (:attr:`LocalParameters.depth`). Only the spatial axes overlap;
colour channels are one chunk. The new ``k`` axis is produced inside the block function and the
output chunks are declared explicitly, so nothing is trimmed after the fact (dask #11961).

Strided grids are anchored to the image origin, not to the chunk: a chunk covering rows
``[a, b)`` computes the samples ``i`` with ``a <= i*s + o < b``. Chunk sizes need not be multiples
of the stride (output chunks are then irregular, possibly empty); chunks smaller than the overlap
depth are merged with a neighbour and a :class:`ChunkSizeWarning` says so.
"""

from __future__ import annotations

import warnings

import dask.array as da
import numpy as np
from dask.base import tokenize

from .gradients import check_finite, result_float_dtype
from .local import LocalParameters, local_fskde_block, sample_offset

__all__ = ["ChunkSizeWarning", "local_fskde_dask", "safe_chunks", "sample_chunks"]


class ChunkSizeWarning(UserWarning):
    """Chunks were smaller than the overlap depth and have been merged."""


def safe_chunks(chunks: tuple[int, ...], depth: int) -> tuple[int, ...]:
    """Merge chunks smaller than ``depth`` into a neighbour (a single chunk is always safe)."""
    out = [c for c in chunks if c > 0]
    if len(out) <= 1:
        return tuple(out) or tuple(chunks)
    merged: list[int] = []
    for c in out:
        if merged and (merged[-1] < depth or c < depth):
            merged[-1] += c
        else:
            merged.append(c)
    # a short last chunk merged above; a short first chunk merged into its successor
    if len(merged) > 1 and merged[-1] < depth:
        merged[-2] += merged.pop()
    return tuple(merged)


def sample_chunks(chunks: tuple[int, ...], stride: int) -> tuple[int, ...]:
    """Number of grid samples that fall in each input chunk (grid anchored at pixel 0)."""
    o = sample_offset(stride)
    edges = np.concatenate([[0], np.cumsum(chunks)])
    first = -(-(edges - o) // stride)  # ceil((edge - o) / s)
    first = np.maximum(first, 0)
    return tuple(int(v) for v in np.diff(first))


def _first_sample(start: int, stride: int) -> int:
    return max(0, -(-(start - sample_offset(stride)) // stride))


def local_fskde_dask(
    image: da.Array, params: LocalParameters, *, channel_axis: int | None = None
) -> da.Array:
    """Lazy local FS-KDE of a Dask image: ``(y, x[, c])`` → ``(ny, nx, ℓ)`` complex.

    Parameters
    ----------
    image : dask.array.Array
        2-D, or 3-D with ``channel_axis``.
    params : LocalParameters
    channel_axis : int, optional

    Returns
    -------
    dask.array.Array
        Same values as the in-memory :func:`xfskde.local_fskde`, whatever the chunking.
    """
    ftype = result_float_dtype(image.dtype)
    out_dtype = np.result_type(ftype, np.complex64)
    if channel_axis is None:
        if image.ndim != 2:
            raise ValueError(
                f"image must be 2-D (y, x) when channel_axis is None, got shape {image.shape}; "
                "pass channel_axis=-1 (or 0) for a colour image"
            )
        src = image[None]
    else:
        if image.ndim != 3:
            raise ValueError(
                f"image must be 3-D with channel_axis={channel_axis}, got {image.shape}"
            )
        src = da.moveaxis(image, channel_axis, 0)
    depth = params.depth
    height, width = src.shape[1:]
    row_chunks = safe_chunks(src.chunks[1], depth)
    col_chunks = safe_chunks(src.chunks[2], depth)
    if (row_chunks, col_chunks) != src.chunks[1:]:
        warnings.warn(
            f"chunks smaller than the overlap depth ({depth} pixels) were merged with their "
            f"neighbours: rows {src.chunks[1]} -> {row_chunks}, columns {src.chunks[2]} -> "
            f"{col_chunks}. Choose chunks of at least {depth} pixels to avoid the rechunk.",
            ChunkSizeWarning,
            stacklevel=3,
        )
    src = src.rechunk({0: -1, 1: row_chunks, 2: col_chunks})
    stride = params.stride
    out_chunks = (
        sample_chunks(row_chunks, stride),
        sample_chunks(col_chunks, stride),
        (params.length,),
    )
    row_starts = np.concatenate([[0], np.cumsum(row_chunks)])
    col_starts = np.concatenate([[0], np.cumsum(col_chunks)])
    overlapped = da.overlap.overlap(src, depth={0: 0, 1: depth, 2: depth}, boundary="none")
    nan_policy = params.nan_policy
    # a unique, deterministic key: two fields in one graph must never share their blocks' keys
    name = "xfskde-local-" + tokenize(
        overlapped.name, params.attrs(), params.scale(), params.profile(), params.half_widths(),
        (height, width), str(out_dtype),
    )  # fmt: skip

    def block(x: np.ndarray, block_info=None) -> np.ndarray:
        _, bi, bj = block_info[0]["chunk-location"]
        a, b = int(row_starts[bi]), int(row_starts[bi + 1])
        c, d = int(col_starts[bj]), int(col_starts[bj + 1])
        top = min(depth, a) if bi > 0 else 0
        left = min(depth, c) if bj > 0 else 0
        check_finite(x, nan_policy)
        return local_fskde_block(
            x,
            params,
            image_shape=(height, width),
            src_origin=(a - top, c - left),
            rows=(_first_sample(a, stride), _first_sample(b, stride)),
            cols=(_first_sample(c, stride), _first_sample(d, stride)),
            out_dtype=out_dtype,
        )

    return da.map_blocks(
        block,
        overlapped,
        drop_axis=0,
        new_axis=2,
        chunks=out_chunks,
        dtype=out_dtype,
        meta=np.empty((0, 0, 0), dtype=out_dtype),
        name=name,
    )
