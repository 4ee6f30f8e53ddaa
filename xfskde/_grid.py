"""The stride grid: which pixels a strided result samples, and where a block's samples begin.

With ``stride = s`` a local FS-KDE samples the pixels ``(i*s + o, j*s + o)`` with
``o = (s - 1) // 2``: the centres (rounded down) of the s×s cells of a grid anchored at pixel
(0, 0) of the *image*, never of a chunk. Every module that needs the grid (the block core, the
Dask engine, the labelled coordinates, the plots) asks this module, so the rule lives once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["first_sample", "sample_chunks", "sample_count", "sample_offset"]


def sample_offset(stride: int) -> int:
    """Row/column of the first sample: the centre (rounded down) of the first stride×stride cell."""
    return (stride - 1) // 2


def first_sample(start: int, stride: int) -> int:
    """Index of the first sample at or after pixel ``start``: ``ceil((start - o) / s)``, >= 0.

    Sample ``i`` sits at pixel ``i*s + o``; the samples of the pixels ``[a, b)`` are therefore
    ``first_sample(a, s) .. first_sample(b, s) - 1``.
    """
    return max(0, -(-(int(start) - sample_offset(stride)) // stride))


def sample_count(n: int, stride: int) -> int:
    """Number of samples along an axis of ``n`` pixels: ``ceil((n - o) / stride)``."""
    return first_sample(n, stride)


def sample_chunks(chunks: tuple[int, ...], stride: int) -> tuple[int, ...]:
    """Number of samples that fall in each chunk of an axis cut into ``chunks`` pixels.

    Chunks whose sides are multiples of the stride give ``side / stride`` samples each (the
    last one possibly fewer): regular output chunks.
    """
    edges = np.concatenate([[0], np.cumsum(chunks)])
    firsts = [first_sample(int(e), stride) for e in edges]
    return tuple(int(v) for v in np.diff(firsts))
