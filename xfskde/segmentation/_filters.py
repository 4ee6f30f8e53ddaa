"""Separable window filtering of feature-plane stacks (compiled with numba).

The colour and gradient-histogram groups filter tens of indicator planes with the window φ.
``scipy.ndimage.correlate1d`` on an (h, w, n) float32 stack took 1.6 s per megapixel for 48
planes and a Gaussian of σ = 4 (33 taps), twenty times the whole FS-KDE of the same block. These
loops compute the same correlation (scipy's ``"reflect"`` boundary: d c b a | a b c d) with the n
planes innermost, so every tap is one contiguous, vectorised multiply-add over a row (0.5 s).
Histogram planes are one-hot, so :func:`correlate_binned` makes the vertical pass from the bin
indices directly, one multiply-add per tap and pixel rather than per tap, pixel and plane.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["correlate_binned"]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _columns(src, index, profile, out):
    """``out[y, x, c] = Σ_t profile[t] · src[y, index[x + t], c]`` for (h, w, n) arrays.

    Each row is first gathered into a padded buffer, so that every tap is one contiguous
    multiply-add over the whole row (w·n values).
    """
    h, w, n = out.shape
    padded = np.empty((index.shape[0], n), dtype=src.dtype)
    flat = padded.reshape(-1)
    for y in range(h):
        for x in range(index.shape[0]):
            padded[x] = src[y, index[x]]
        row = out[y].reshape(-1)
        row[:] = 0
        for t in range(profile.shape[0]):
            p = profile[t]
            shifted = flat[t * n : t * n + w * n]
            for j in range(w * n):
                row[j] += p * shifted[j]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _binned_rows(bins, weight, index, profile, out):
    """Vertical pass of one-hot planes, gathered: ``out[i, x, bins[g, x]] += p_t · weight[g, x]``
    for the source rows ``g = index[i + t]``: one multiply-add per tap and pixel, whatever the
    number of planes."""
    for i in range(out.shape[0]):
        row = out[i]
        row[:, :] = 0
        for t in range(profile.shape[0]):
            p = profile[t]
            g = index[i + t]
            for x in range(row.shape[0]):
                row[x, bins[g, x]] += p * weight[g, x]


def _reflect_index(n: int, radius: int) -> np.ndarray:
    """Source index of positions -radius .. n + radius - 1 under scipy's ``"reflect"`` mode."""
    return np.pad(np.arange(n, dtype=np.int64), radius, mode="symmetric")


def correlate_binned(
    bins: np.ndarray, weight: np.ndarray, n_bins: int, profile: np.ndarray
) -> np.ndarray:
    """Correlate the one-hot planes of a binned image along y then x, without building them.

    Plane ``k`` holds ``weight`` where ``bins == k`` and 0 elsewhere (a local histogram's bin
    indicators). The vertical pass gathers straight from the bin indices, one multiply-add per
    tap and pixel instead of one per tap, pixel and plane; the horizontal pass is the dense one.

    Parameters
    ----------
    bins : numpy.ndarray of int, shape (h, w)
        Bin of every pixel, in 0 .. n_bins - 1.
    weight : numpy.ndarray, shape (h, w)
        Each pixel's weight (its vote).
    n_bins : int
    profile : numpy.ndarray, shape (2r + 1,)

    Returns
    -------
    numpy.ndarray, shape (h, w, n_bins), float32
        Equal to ``scipy.ndimage.correlate1d`` of the planes along axis 0 then 1 with
        ``mode="reflect"``, to float32 rounding.
    """
    bins = np.ascontiguousarray(bins, dtype=np.int64)
    weight = np.ascontiguousarray(np.broadcast_to(weight, bins.shape), dtype=np.float32)
    profile = np.ascontiguousarray(profile, dtype=np.float32)
    h, w = bins.shape
    r = (profile.shape[0] - 1) // 2
    vertical = np.empty((h, w, n_bins), dtype=np.float32)
    _binned_rows(bins, weight, _reflect_index(h, r), profile, vertical)
    out = np.empty_like(vertical)
    _columns(vertical, _reflect_index(w, r), profile, out)
    return out
