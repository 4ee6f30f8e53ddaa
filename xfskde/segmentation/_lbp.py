"""Rotation-invariant uniform local binary patterns (LBP), as scikit-image computes them, and the
settings of the segmentation's ``"lbp"`` feature group (:data:`LBP_SCALES`,
:data:`LBP_SMOOTHING`, :func:`smoothed_grey`, :data:`LBP_REACH`).

The ``riu2`` operator of Ojala, Pietikäinen & Mäenpää ("Multiresolution gray-scale and rotation
invariant texture classification with local binary patterns", IEEE TPAMI 24(7), 2002): around
each pixel, ``P`` samples on a circle of radius ``R``, each thresholded against the centre
(1 where the sample is >= the centre); a pattern with at most two 0/1 transitions is
*uniform* and coded by its number of ones (0..P), every other pattern by ``P + 1``.

:func:`lbp_codes` gives exactly the codes of
``skimage.feature.local_binary_pattern(grey, P, R, method="uniform")`` (scikit-image 0.26's
``_local_binary_pattern``), on every pixel, edges included, 20-30 times faster:

* sample ``p`` lies at the offset ``(rp, cp) = (round(-R sin 2πp/P, 5), round(R cos 2πp/P, 5))``
  (rows counted downwards, ``numpy.round`` to 5 decimals), computed with skimage's own NumPy
  expressions;
* its value is skimage's bilinear interpolation, evaluated in the same float64 operations in the
  same order: ``top = (1 - dc) tl + dc tr``, ``bottom = (1 - dc) bl + dc br``,
  ``(1 - dr) top + dr bottom``, with ``dr = (r + rp) - floor(r + rp)`` and likewise ``dc``,
  which depend (in their last bits) on the pixel's row and column, not just on the offset: the
  column weights are tabulated once per call, the row weights once per row. The row and column
  are the pixel's in the image (a block is given its ``origin``), so a block's codes are the
  whole image's, however it is cut: these bits decide a sample that ties with its centre.
  Pixels outside the image read 0 (skimage's constant mode with ``cval=0``), here through a
  zero border of :func:`lbp_reach` pixels;
* the bit is ``sample - centre >= 0``, and the transitions are counted along ``p = 0..P-1``
  without wrapping around, as skimage counts them (equivalent: a circular 0/1 sequence has an
  even number of transitions, so it has at most two exactly when the open chain has at most
  two).

The input is read as float32 (a float64 image is rounded to float32 first) and every
computation is done in float64, as skimage does it on the float32 values.

**Missing pixels.** A pixel whose centre, or any of the four pixels of any of its samples'
interpolations, is NaN gets the code ``P + 2``, which no pattern gives: callers give it no
weight. (An infinite input that makes an interpolation undefined, inf * 0 or inf - inf, gets
it too; skimage would give such a pixel some code.) :func:`lbp_voting` finds, from the pixels
present alone, those that get a code at every scale of :data:`LBP_SCALES`: the segmentation
renormalises the group's windows to them.

**Speed.** One pass over the rows; for each row and each sample, one loop along the row's
columns reads the two image rows that the sample's interpolation needs (the row slices shifted
by the sample's column offsets, so the loads are contiguous and the loop is vectorised) and
updates three counts per pixel (ones, transitions, NaN seen). On one core of an AMD EPYC
(AVX-512), a 1024² float32 image, best of 3 after a warm-up call: 290-320 / 165 / 105-110
Mpx/s for (P, R) = (8, 1) / (16, 2) / (24, 3), where skimage gives 9-12 / 7-8 / 5 Mpx/s. The
kernel releases the GIL: threads can run it on several blocks at once.
"""

from __future__ import annotations

import math
import numbers

import numba
import numpy as np
from scipy import ndimage

from ..exceptions import ParameterError

__all__ = [
    "LBP_BINS",
    "LBP_REACH",
    "LBP_SCALES",
    "LBP_SMOOTHING",
    "lbp_codes",
    "lbp_reach",
    "lbp_voting",
    "smoothed_grey",
]

#: The (P, R) of the segmentation's ``"lbp"`` feature group (:mod:`.features`): 8 samples at
#: radius 1 and 16 at radius 2, 10 + 18 bins. Chosen on the 30 tuning mosaics (2026-11-30,
#: beside the bank and the FS-KDE, codes of the grey in 8 bits, not smoothed): (8, 1),
#: (16, 2) 0.9500 at 512², 0.9726 at 1024²; with
#: (24, 3) as well 0.9491 / 0.9718; (16, 2) alone 0.9501 at 512²; (8, 1), (8, 2), (8, 3)
#: 0.9407; without the group 0.9240 / 0.9456.
LBP_SCALES: tuple[tuple[int, float], ...] = ((8, 1.0), (16, 2.0))
#: The bins of the ``"lbp"`` group: P + 2 codes at each scale.
LBP_BINS = sum(points + 2 for points, _ in LBP_SCALES)
#: σ (px) of the Gaussian that smooths the grey image before its codes
#: (:func:`smoothed_grey`). A code compares single pixels, so it follows noise and
#: quantisation in flat parts of an image: a model fitted on a GIF (56 colours) labelled the
#: same photograph as a PNG at 0.890 Rand with codes of the raw grey, 0.957 with these (the
#: group then left out, as the bank was); the tuning mosaics 0.9520 / 0.9728 (512² / 1024²,
#: below 0.95: 7 / 3) raw, 0.9489 / 0.9712 (10 / 1) smoothed (2026-11-30).
LBP_SMOOTHING = 0.7
#: Pixels the smoothing reads on each side: 4σ rounded, as scipy's default truncation gives;
#: passed to the filter as its radius, so the filter and :data:`LBP_REACH` read one number.
_SMOOTHING_RADIUS = int(4.0 * LBP_SMOOTHING + 0.5)

_MAX_POINTS = 253  # codes 0..P+2 must fit in uint8: P + 2 <= 255


def _check_radius(radius: float) -> float:
    if (
        isinstance(radius, bool)
        or not isinstance(radius, numbers.Real)
        or not math.isfinite(radius)
        or radius <= 0
    ):
        raise ParameterError(f"radius must be a finite number > 0, got {radius!r}")
    return float(radius)


def _check_points(points: int) -> int:
    if (
        isinstance(points, bool)
        or not isinstance(points, numbers.Integral)
        or not 1 <= points <= _MAX_POINTS
    ):
        raise ParameterError(
            f"points must be an integer from 1 to {_MAX_POINTS} (its codes and the no-vote code "
            f"points + 2 fit in uint8), got {points!r}"
        )
    return int(points)


def _offsets(points: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """The samples' (row, column) offsets, as skimage's ``_local_binary_pattern`` computes them."""
    angles = 2 * np.pi * np.arange(points, dtype=np.float64) / points
    rr = -radius * np.sin(angles)
    cc = radius * np.cos(angles)
    return np.round(rr, 5), np.round(cc, 5)


def lbp_reach(radius: float) -> int:
    """How far from a pixel, in pixels, its LBP samples read the image, for any ``points``.

    Every pixel that the bilinear interpolation of a sample of a pixel ``(r, c)`` reads lies in
    the square ``|row - r| <= reach``, ``|column - c| <= reach``, and some does at that
    distance: a block padded by ``reach`` pixels on every side gives every pixel of its interior
    the codes it has in the whole image.

    ``reach = ceil(round(radius, 5))`` (NumPy's rounding to 5 decimals). Why: a sample's offset
    is ``(round(-R sin θ, 5), round(R cos θ, 5))``; ``|sin θ|, |cos θ| <= 1`` and a rounded
    product and ``numpy.round`` are monotone and odd, so ``|offset| <= round(R, 5)`` along
    each axis, and the interpolation reads the rows ``floor`` and ``ceil`` of ``r + offset``,
    which are ``r + floor(offset)`` and ``r + ceil(offset)`` (an offset is an integer or at
    least 1e-5 from one, and ``r + offset`` is rounded by less than that for any array shape
    below 2**32), at most ``ceil(round(R, 5))`` from ``r``. Sample 0 (θ = 0, ``cos θ = 1``)
    has the column offset ``round(R, 5)`` itself, so the bound is reached whatever ``points``.

    Parameters
    ----------
    radius : float
        The radius of the circle of samples, > 0.

    Returns
    -------
    int
        The halo the samples need, >= 0 (0 only for a radius of at most 5e-6, whose samples all
        read the centre pixel).

    Raises
    ------
    xfskde.exceptions.ParameterError
        If ``radius`` is not a finite number > 0.
    """
    radius = _check_radius(radius)
    return math.ceil(float(np.round(np.array([radius], np.float64), 5)[0]))


def lbp_codes(
    grey: np.ndarray,
    points: int,
    radius: float,
    out: np.ndarray | None = None,
    origin: tuple[int, int] = (0, 0),
) -> np.ndarray:
    """The rotation-invariant uniform LBP code of every pixel, exactly as scikit-image's.

    The codes of ``skimage.feature.local_binary_pattern(grey, points, radius,
    method="uniform")`` on ``grey`` read as float32, edges included (pixels outside the image
    read 0): ``k`` in 0..points for a uniform pattern (at most two 0/1 transitions around the
    circle) with ``k`` samples >= the centre, ``points + 1`` for any other pattern. A pixel
    whose centre or any pixel read by its samples' interpolations is NaN gets ``points + 2``
    (no pattern gives it: such a pixel gets no vote). Only pixels at least
    :func:`lbp_reach` ``(radius)`` from every edge have the codes they have in a larger image.

    Parameters
    ----------
    grey : numpy.ndarray, shape (h, w)
        The grey image, of a real dtype, read as float32.
    points : int
        ``P``, the number of samples on the circle, 1 to 253.
    radius : float
        ``R``, the circle's radius in pixels, finite and > 0.
    out : numpy.ndarray of uint8, shape (h, w), optional
        A C-contiguous array to write the codes into; None (the default): a new one.
    origin : (int, int), optional
        The position of ``grey``'s pixel (0, 0) in the image it is a block of; (0, 0) by
        default. skimage's interpolation weights depend in their last bits on the pixel's row
        and column, which decide the bit of a sample that ties with its centre (flat patches):
        taken at the pixel's position in the image, a block's codes at least
        :func:`lbp_reach` from its edges are those of the whole image, however it is cut (at
        the block's own positions, five labels of a 512² image of dead leaves changed with
        128² chunks).

    Returns
    -------
    numpy.ndarray of uint8, shape (h, w)
        The codes, in 0..points + 2 (``out`` if given).

    Raises
    ------
    xfskde.exceptions.ParameterError
        If ``grey`` is not a 2-D array of a real dtype, ``points`` not an integer from 1 to 253,
        ``radius`` not a finite number > 0, or ``out`` not a C-contiguous writeable uint8 array
        of ``grey``'s shape.
    """
    if not isinstance(grey, np.ndarray) or grey.ndim != 2:
        raise ParameterError(
            "grey must be a 2-D numpy array, got "
            + (f"one of shape {grey.shape}" if isinstance(grey, np.ndarray) else repr(type(grey)))
        )
    if grey.dtype.kind not in "fiub":
        raise ParameterError(f"grey must be of a real dtype, got {grey.dtype}")
    points = _check_points(points)
    radius = _check_radius(radius)
    if out is None:
        out = np.empty(grey.shape, np.uint8)
    elif (
        not isinstance(out, np.ndarray)
        or out.dtype != np.uint8
        or out.shape != grey.shape
        or not out.flags.c_contiguous
        or not out.flags.writeable
    ):
        raise ParameterError(
            f"out must be a C-contiguous writeable uint8 array of shape {grey.shape}, got "
            + (
                f"{out.dtype} of shape {out.shape}"
                if isinstance(out, np.ndarray)
                else repr(type(out))
            )
        )
    rows, cols = grey.shape
    if rows == 0 or cols == 0:
        return out
    halo = lbp_reach(radius)
    rp, cp = _offsets(points, radius)
    # the offsets of the pixels read, which lbp_reach bounds (checked, as the kernel trusts them)
    lows_r, highs_r = np.floor(rp).astype(np.int64), np.ceil(rp).astype(np.int64)
    lows_c, highs_c = np.floor(cp).astype(np.int64), np.ceil(cp).astype(np.int64)
    assert max(np.abs(lows_r).max(), np.abs(highs_r).max()) <= halo
    assert max(np.abs(lows_c).max(), np.abs(highs_c).max()) <= halo
    padded = np.zeros((rows + 2 * halo, cols + 2 * halo), np.float32)
    padded[halo : halo + rows, halo : halo + cols] = grey
    first_row, first_column = (int(v) for v in origin)
    near, far = _column_weights(cp, cols, first_column)
    _lbp_rows(padded, halo, rp, lows_c, highs_c, near, far, first_row, out)
    return out


@numba.njit(nogil=True, cache=True)
def _column_weights(cp, cols, left):
    """skimage's ``1 - dc`` and ``dc`` of every sample (rows) at every column: ``dc`` is
    ``(c + cp) - floor(c + cp)`` in float64, whose last bits depend on ``c``, the column in
    the image (``left`` that of the block's first)."""
    n = cp.shape[0]
    near = np.empty((n, cols), np.float64)
    far = np.empty((n, cols), np.float64)
    for i in range(n):
        for c in range(cols):
            position = (left + c) + cp[i]
            dc = position - np.floor(position)
            near[i, c] = 1 - dc
            far[i, c] = dc
    return near, far


@numba.njit(nogil=True, cache=True)
def _lbp_rows(padded, halo, rp, lows_c, highs_c, near, far, first_row, out):
    """The codes of every row of ``out`` from the zero-bordered image ``padded`` (its row
    ``halo`` the image's row ``first_row``: the rows' interpolation weights are those of the
    image's rows).

    For each row and each sample, one loop along the columns interpolates the sample (the two
    padded rows it reads, columns shifted by the sample's column offsets), thresholds it against
    the centres and updates the row's counts: ones, transitions since the previous sample, and
    NaN seen.
    """
    rows, cols = out.shape
    points = rp.shape[0]
    ones = np.zeros(cols, np.int32)
    changes = np.zeros(cols, np.int32)
    previous = np.zeros(cols, np.int32)
    missing = np.zeros(cols, np.int32)
    for r in range(rows):
        centre = padded[r + halo, halo : halo + cols]
        ones[:] = 0
        changes[:] = 0
        missing[:] = 0
        for i in range(points):
            position = (first_row + r) + rp[i]
            low = np.floor(position)
            dr = position - low
            keep = 1 - dr
            counted = np.int32(1 if i > 0 else 0)  # sample 0 has no previous sample
            top_row = padded[int(low) - first_row + halo]
            bottom_row = padded[int(np.ceil(position)) - first_row + halo]
            left = lows_c[i] + halo
            right = highs_c[i] + halo
            top_left = top_row[left : left + cols]
            top_right = top_row[right : right + cols]
            bottom_left = bottom_row[left : left + cols]
            bottom_right = bottom_row[right : right + cols]
            w_near = near[i]
            w_far = far[i]
            for c in range(cols):
                top = w_near[c] * np.float64(top_left[c]) + w_far[c] * np.float64(top_right[c])
                bottom = w_near[c] * np.float64(bottom_left[c]) + w_far[c] * np.float64(
                    bottom_right[c]
                )
                difference = (keep * top + dr * bottom) - np.float64(centre[c])
                bit = np.int32(difference >= 0)
                missing[c] |= np.int32(difference != difference)
                ones[c] += bit
                changes[c] += (bit ^ previous[c]) & counted
                previous[c] = bit
        for c in range(cols):
            if missing[c]:
                out[r, c] = points + 2
            elif changes[c] <= 2:
                out[r, c] = ones[c]
            else:
                out[r, c] = points + 1


#: How far the ``"lbp"`` group's votes read: the smoothing's radius and the widest circle's
#: (:func:`lbp_reach`).
LBP_REACH = _SMOOTHING_RADIUS + max(lbp_reach(radius) for _, radius in LBP_SCALES)


def _read_footprint() -> np.ndarray:
    """The pixels, about a centre, that the codes of every scale of :data:`LBP_SCALES` read:
    the centre and the four (or fewer) pixels of each sample's interpolation; (2 r + 1)² bool
    with r the widest :func:`lbp_reach`."""
    reach = max(lbp_reach(radius) for _, radius in LBP_SCALES)
    footprint = np.zeros((2 * reach + 1, 2 * reach + 1), bool)
    footprint[reach, reach] = True
    for points, radius in LBP_SCALES:
        rp, cp = _offsets(points, radius)
        for r in (np.floor(rp), np.ceil(rp)):
            for c in (np.floor(cp), np.ceil(cp)):
                footprint[r.astype(int) + reach, c.astype(int) + reach] = True
    return footprint


def lbp_voting(valid: np.ndarray) -> np.ndarray:
    """The pixels whose codes at every scale of :data:`LBP_SCALES` read no missing pixel: those
    that vote in the ``"lbp"`` group, to which its windows are renormalised
    (:func:`xfskde.segmentation.features.voting_pixels`).

    A pixel's smoothed value (:func:`smoothed_grey`) is missing where the smoothing's
    (2 × radius + 1)² square reaches a missing pixel, and its code is ``P + 2`` (no vote) where
    its centre or any pixel of its samples' interpolations is such a value
    (:func:`lbp_codes`): ``valid`` eroded by that square, then by the pixels the codes read
    (the footprint is symmetric: the samples of an even number of points come in opposite
    pairs). Pixels beyond the array's edge count as present, as the smoothing counts them: the
    caller's halo holds the pixels that decide.

    Parameters
    ----------
    valid : numpy.ndarray of bool, shape (h, w)
        The pixels present.

    Returns
    -------
    numpy.ndarray of bool, shape (h, w)
        The pixels that vote.
    """
    valid = np.asarray(valid, dtype=bool)
    side = 2 * _SMOOTHING_RADIUS + 1
    smoothed = ndimage.minimum_filter(valid, size=side, mode="constant", cval=True)
    return ndimage.minimum_filter(smoothed, footprint=_READ_FOOTPRINT, mode="constant", cval=True)


_READ_FOOTPRINT = _read_footprint()
assert np.array_equal(_READ_FOOTPRINT, _READ_FOOTPRINT[::-1, ::-1])  # as lbp_voting says


def smoothed_grey(grey: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """The grey image the ``"lbp"`` group codes: ``grey`` filtered by a Gaussian of
    :data:`LBP_SMOOTHING` px (:func:`scipy.ndimage.gaussian_filter`, radius 4σ rounded), in
    float32, NaN wherever the filter read a missing pixel (not ``valid``; None: every pixel
    present), so that :func:`lbp_codes` gives such pixels, and those whose circles read them,
    no vote. Pixels within the filter's radius of the array's edge read its reflection: the
    caller's halo holds them.

    Parameters
    ----------
    grey : numpy.ndarray, shape (h, w)
        The grey values (missing pixels NaN, or any value where ``valid`` is False).
    valid : numpy.ndarray of bool, shape (h, w), optional
        The pixels present.

    Returns
    -------
    numpy.ndarray, shape (h, w), float32
        The smoothed values.
    """
    grey = np.asarray(grey, np.float32)
    if valid is None:
        return ndimage.gaussian_filter(grey, LBP_SMOOTHING, radius=_SMOOTHING_RADIUS)
    smooth = ndimage.gaussian_filter(np.where(valid, grey, np.float32(0)), LBP_SMOOTHING,
                                     radius=_SMOOTHING_RADIUS)  # fmt: skip
    side = 2 * _SMOOTHING_RADIUS + 1
    smooth[~ndimage.minimum_filter(valid, size=side, mode="constant", cval=True)] = np.nan
    return smooth
