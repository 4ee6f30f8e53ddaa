"""The stride grid: which pixels a strided result samples, and where a block's samples begin.

With ``stride = s`` a local FS-KDE samples the pixels ``(i*s + o, j*s + o)`` with
``o = (s - 1) // 2``: the centres (rounded down) of the s×s cells of a grid anchored at pixel
(0, 0) of the *image*, never of a chunk. Every module that needs the grid (the block core, the
Dask engine, the labelled coordinates, the plots) asks this module, so the rule lives once.

A foreground mask at any resolution falls on the grid by extent: pixel ``(i, j)`` of an
``(my, mx)`` mask covers the image pixels ``[i ny / my, (i + 1) ny / my) × [j nx / mx,
(j + 1) nx / mx)`` of an ``(ny, nx)`` image. :func:`mask_touches` says whether any foreground
falls on a block of pixels, :func:`mask_at_samples` which samples of a block are foreground
(the mask pixel under each); the two agree, so a block without foreground has no foreground
sample.

A result stands for its cells: sample ``i`` for the pixels ``i*s .. i*s + s - 1``, whose centre is
``i*s + (s - 1)/2`` (half a pixel past the sampled pixel for an even stride). An image without
coordinates gives its results the sampled pixels' *indices* ``i*s + o`` as coords;
:func:`index_stride` tells such coords and :func:`cell_centres` gives the cells' centres, the
positions every writer of a file that places pixels puts those samples at.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "MaskFootprint",
    "cell_centres",
    "first_sample",
    "index_stride",
    "mask_at_samples",
    "mask_over",
    "sample_chunks",
    "sample_count",
    "sample_offset",
]


def sample_offset(stride: int) -> int:
    """Row/column of the first sample: the centre (rounded down) of the first stride×stride cell.

    Sample ``i`` of an axis sits at pixel ``i*stride + sample_offset(stride)``, counted from the
    image's first pixel (never a chunk's).

    Parameters
    ----------
    stride : int
        The sampling step ``s`` >= 1, in pixels, the same along both axes.

    Returns
    -------
    int
        ``o = (s - 1) // 2``: 0 for strides 1 and 2, 1 for 3 and 4, 3 for 8.
    """
    return (stride - 1) // 2


def first_sample(start: int, stride: int) -> int:
    """Index of the first sample at or after pixel ``start``: ``ceil((start - o) / s)``, >= 0.

    Sample ``i`` sits at pixel ``i*s + o``; the samples of the pixels ``[a, b)`` are therefore
    ``first_sample(a, s) .. first_sample(b, s) - 1``.
    """
    return max(0, -(-(int(start) - sample_offset(stride)) // stride))


def sample_count(n: int, stride: int) -> int:
    """Number of samples along an axis of ``n`` pixels: ``ceil((n - o) / stride)``.

    The samples are the pixels ``o, o + s, o + 2s, ...`` below ``n``, with
    ``o = sample_offset(s)``; the strided result of an ``(ny, nx)`` image is
    ``(sample_count(ny, s), sample_count(nx, s))``.

    Parameters
    ----------
    n : int
        The number of pixels along the axis (0 or more).
    stride : int
        The sampling step ``s`` >= 1, in pixels.

    Returns
    -------
    int
        The number of samples, >= 0: 0 when ``n <= o`` (a 1-pixel axis at stride 4, whose
        first sample is pixel 1); ``n`` itself at stride 1.
    """
    return first_sample(n, stride)


def index_stride(y: Any, x: Any, attrs: Mapping[str, Any]) -> int | None:
    """The stride ``s`` of a result whose ``y`` and ``x`` coords are the indices of its sampled
    pixels, ``i*s + o``, as xfskde labels the results of an image without coordinates (a plain
    TIFF, a PNG, a NumPy array); None for any other coords.

    Such coords are told by what xfskde makes: integer ``y`` and ``x`` without attrs (a grid's
    own coordinates, read from a file, carry their units or names), increasing by one step
    ``s`` (a one-sample axis takes the other's; a one-sample result its ``stride`` attr, but
    segmentation results, which are per pixel, 1), each at ``o`` plus a multiple of ``s``.
    Coords of a georeferenced result are CRS coordinates whatever their dtype: the caller
    tells those apart first.

    Parameters
    ----------
    y, x : xarray.DataArray or None
        The result's coordinates along ``y`` and ``x`` (None where it has none).
    attrs : mapping
        The result's attrs (its ``stride``, its ``n_textures`` for segmentation results).
    """
    axes = []
    for coord in (y, x):
        if coord is None or coord.ndim != 1 or coord.dtype.kind not in "iu" or coord.attrs:
            return None
        axes.append(np.asarray(coord.values, dtype=np.int64))
    steps = {int(d) for values in axes for d in np.unique(np.diff(values))}
    if len(steps) > 1:
        return None
    if steps:
        step = steps.pop()
    elif "n_textures" in attrs:  # labels and abundances: every pixel
        step = 1
    else:
        stride = attrs.get("stride", 1)
        step = 0 if isinstance(stride, bool) or not isinstance(stride, int | np.integer) else stride
    if step < 1:
        return None
    offset = sample_offset(int(step))
    if any(((values - offset) % step).any() for values in axes):
        return None
    return int(step)


def cell_centres(indices: Any, stride: int) -> np.ndarray:
    """The centres of the cells whose sampled pixels are ``indices`` (``i*s + o``), in input
    pixels with pixel ``j``'s centre at ``j``: ``i*s + (s - 1)/2``, half a pixel past the
    sampled pixel for an even stride (float64)."""
    return np.asarray(indices, dtype=np.float64) + ((stride - 1) / 2 - sample_offset(stride))


def sample_chunks(chunks: tuple[int, ...], stride: int) -> tuple[int, ...]:
    """Number of samples that fall in each chunk of an axis cut into ``chunks`` pixels.

    Chunks whose sides are multiples of the stride give ``side / stride`` samples each (the
    last one possibly fewer): regular output chunks.

    Parameters
    ----------
    chunks : tuple of int
        The chunk sizes along the axis, in pixels, from the image's first pixel (a Dask
        array's ``chunks[axis]``).
    stride : int
        The sampling step ``s`` >= 1, in pixels.

    Returns
    -------
    tuple of int
        The samples in each chunk, one per chunk (0 for a chunk that holds none); they sum to
        ``sample_count(sum(chunks), stride)``.
    """
    edges = np.concatenate([[0], np.cumsum(chunks)])
    firsts = [first_sample(int(e), stride) for e in edges]
    return tuple(int(v) for v in np.diff(firsts))


def mask_at_samples(
    mask: np.ndarray,
    image_shape: tuple[int, int],
    stride: int,
    rows: tuple[int, int],
    cols: tuple[int, int],
) -> np.ndarray:
    """The mask at the samples ``rows × cols`` (half-open sample ranges) of an image's stride grid.

    Each sample takes the mask pixel that covers it (the one under its pixel's centre), so a
    mask of any resolution covering the image's extent applies to any grid.

    Returns
    -------
    numpy.ndarray of bool, shape (rows[1] - rows[0], cols[1] - cols[0])
    """
    my, mx = mask.shape
    o = sample_offset(stride)
    r = ((np.arange(*rows) * stride + o + 0.5) * my / image_shape[0]).astype(np.int64)
    c = ((np.arange(*cols) * stride + o + 0.5) * mx / image_shape[1]).astype(np.int64)
    if len(r) == 0 or len(c) == 0:
        return np.zeros((len(r), len(c)), bool)
    # the mask pixels the samples fall in, each once, then repeated over the samples in it (a
    # coarse mask over a block's pixels: the repeats are memory copies, where indexing every
    # sample took five times as long)
    (ur, nr), (uc, nc) = _runs(np.minimum(r, my - 1)), _runs(np.minimum(c, mx - 1))
    return np.repeat(np.repeat(np.asarray(mask, bool)[ur][:, uc], nr, axis=0), nc, axis=1)


def _runs(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A non-decreasing index array as its distinct values and how many times each comes."""
    starts = np.flatnonzero(np.concatenate(([True], index[1:] != index[:-1])))
    return index[starts], np.diff(np.append(starts, len(index)))


def mask_over(
    mask: np.ndarray, image_shape: tuple[int, int], rows: tuple[int, int], cols: tuple[int, int]
) -> np.ndarray:
    """The ``mask`` (covering the extent of an image of ``image_shape``, at any resolution) over
    the pixels ``rows × cols`` (half-open), which may reach beyond the image (a padded
    block's halo): False there.

    Returns
    -------
    numpy.ndarray of bool, shape (rows[1] - rows[0], cols[1] - cols[0])
    """
    out = np.zeros((rows[1] - rows[0], cols[1] - cols[0]), bool)
    r0, r1 = max(rows[0], 0), min(rows[1], image_shape[0])
    c0, c1 = max(cols[0], 0), min(cols[1], image_shape[1])
    if r1 > r0 and c1 > c0:
        inside = mask_at_samples(mask, image_shape, 1, (r0, r1), (c0, c1))
        out[r0 - rows[0] : r1 - rows[0], c0 - cols[0] : c1 - cols[0]] = inside
    return out


def _scaled(index: int, mask_n: int, image_n: int, up: bool) -> int:
    value = index * mask_n / image_n
    return min(mask_n, max(0, math.ceil(value) if up else math.floor(value)))


class MaskFootprint:
    """A foreground mask laid over an image: which blocks and samples it covers.

    Parameters
    ----------
    mask : numpy.ndarray of bool, shape (my, mx)
        The foreground, covering the whole image's extent at any resolution.
    image_shape : (int, int)
        The image's (ny, nx).
    """

    def __init__(self, mask: np.ndarray, image_shape: tuple[int, int]) -> None:
        self.mask = np.ascontiguousarray(mask, dtype=bool)
        self.image_shape = (int(image_shape[0]), int(image_shape[1]))
        my, mx = self.mask.shape
        self._table = np.zeros((my + 1, mx + 1), np.int64)  # summed-area table: O(1) per block
        self._table[1:, 1:] = self.mask.cumsum(0).cumsum(1)

    def covering(
        self, rows: tuple[int, int], cols: tuple[int, int]
    ) -> tuple[tuple[int, int], tuple[int, int]]:
        """The half-open ranges of mask rows and columns whose pixels cover a pixel of the
        image's ``rows × cols`` (half-open)."""
        (my, mx), (ny, nx) = self.mask.shape, self.image_shape
        return (
            (_scaled(rows[0], my, ny, False), _scaled(rows[1], my, ny, True)),
            (_scaled(cols[0], mx, nx, False), _scaled(cols[1], mx, nx, True)),
        )

    def touches(self, rows: tuple[int, int], cols: tuple[int, int]) -> bool:
        """Whether any foreground mask pixel covers a pixel of ``rows × cols`` (half-open)."""
        (r0, r1), (c0, c1) = self.covering(rows, cols)
        t = self._table
        return bool(t[r1, c1] - t[r0, c1] - t[r1, c0] + t[r0, c0] > 0)

    def background(self, rows: tuple[int, int], cols: tuple[int, int]) -> bool:
        """The ``skip`` of :func:`xfskde.lazy.map_haloed`: no foreground on these pixels."""
        return not self.touches(rows, cols)

    def samples(self, stride: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
        """:func:`mask_at_samples` of this mask."""
        return mask_at_samples(self.mask, self.image_shape, stride, rows, cols)
