"""Operations on labelled coefficient fields ``(y, x, k)``, per pixel and lazily.

Each function here applies one function of :mod:`xfskde.density` or :mod:`xfskde.canonical`
to every pixel's FS-KDE of a field (``xarray.apply_ufunc`` with ``dask="parallelized"``: block
by block on Dask-backed fields, nothing loaded as a whole) and keeps the field's dims, coords
and attrs. Those functions take labelled fields themselves (``xfskde.rotate(field, phi)`` is
``field.fskde.rotate(phi)``); the ones here take nothing else, and say so. The ``.fskde``
accessor (:mod:`xfskde.accessor`) delegates to them.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import xarray as xr

from . import canonical as _canonical
from . import density as _density
from ._validation import _check_positive_int
from .exceptions import DimensionError, ParameterError

__all__ = [
    "canonicalize",
    "check_field",
    "density",
    "distance",
    "dominant_orientation",
    "rotate",
]


def check_field(field: Any, *, plain: str | None = None) -> xr.DataArray:
    """The coefficient field with its coefficients in k order, or a DimensionError saying why
    it is not one.

    Every function of a labelled field reads F_k at *position* k along the ``k`` dim, so the
    ``k`` coordinate (where there is one: without one, position is k) must name the
    coefficients k = 0 .. ℓ-1, each once, without gaps. In another order (``F.sortby("k",
    ascending=False)``) they are put back in k order: the labels say unambiguously which
    coefficient each is, and xarray reads labels, not positions. Missing values (a field
    sliced ``.isel(k=[0, 2, 4])``, or ``.isel(k=slice(1, None))`` without F_0) are refused,
    named: missing coefficients are not zeros, and a value computed without them would be
    silently wrong.

    Parameters
    ----------
    field : xarray.DataArray
        A coefficient field: a ``k`` dim (``(y, x, k)``, or one FS-KDE along ``k``).
    plain : str, optional
        The NumPy function that does the same on plain coefficient arrays, named in the
        refusal of anything that is not a DataArray (e.g. ``"xfskde.evaluate(F, theta)"``).

    Returns
    -------
    xarray.DataArray
        ``field`` itself when its k coordinate is 0 .. ℓ-1 in order (or absent), else the
        field reordered by k.

    Raises
    ------
    DimensionError
        For an xarray.Dataset, a NumPy array or any other non-DataArray, a DataArray without a
        ``k`` dim, and a ``k`` coordinate that is not the integers 0 .. ℓ-1 once each.
    """
    return _density._check_field(field, plain)


def density(field: xr.DataArray, theta: Any) -> xr.DataArray:
    """The density :math:`f(x, \\theta)` (eq. 1) at angles ``theta`` → dims (y, x, theta).

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field (or one FS-KDE along ``k``).
    theta : float or 1-D array_like
        Angles in radians; a scalar is taken as one angle (a ``theta`` dim of length 1).

    Returns
    -------
    xarray.DataArray
        The field's dims without k, then ``theta`` with the angles as its float coord
        (units ``rad``); named ``"density"``.

    Raises
    ------
    ParameterError
        For ``theta`` of more than one dimension.
    """
    field = check_field(field, plain="xfskde.evaluate(F, theta)")
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    if theta.ndim != 1:
        raise ParameterError(f"theta must be a scalar or 1-D, got shape {theta.shape}")
    return _density.evaluate(field, theta)


def canonicalize(field: xr.DataArray, ell: int = 1) -> xr.DataArray:
    """F_ℓ-canonical form of every pixel's FS-KDE (eq. 9; section 4.3).

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field.
    ell : int, optional
        The canonicalization level, >= 1 (default 1: F_1 canonicalization, eq. 9). A field of ℓ
        coefficients has no F_m beyond m = ℓ-1 (they are truncated to zero), so levels beyond
        ℓ-1 leave the form as it is: the result is then the F_{ℓ-1} form.

    Returns
    -------
    xarray.DataArray
        The canonical coefficients, dims, coords and attrs of the field, k in order; the
        ``canonical`` attr records the level done, ``"F{min(ell, ℓ-1)}"`` (``"F1"`` for ℓ <= 2).

    Raises
    ------
    ParameterError
        For ``ell`` < 1 (TypeError for an ``ell`` that is not an integer).
    DimensionError
        For a ``field`` that is not a coefficient field (:func:`check_field`).
    """
    ell = _check_positive_int("ell", ell)
    return _canonical.canonicalize(check_field(field, plain="xfskde.canonicalize(F, ell)"), ell)


def rotate(field: xr.DataArray, phi: float) -> xr.DataArray:
    """Rotate every FS-KDE by ``phi`` radians (eq. 2): :math:`F_k e^{-ik\\phi}`.

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field (or one FS-KDE along ``k``).
    phi : float
        One angle in radians for every pixel (a number, or a 0-d array or DataArray).
        Per-pixel angles are refused here: :func:`xfskde.rotate` takes them, as a DataArray
        on the field's dims.

    Returns
    -------
    xarray.DataArray
        The rotated field, with the field's dims, coords and attrs, k in order.

    Raises
    ------
    ParameterError
        For ``phi`` of one or more dimensions.
    """
    field = check_field(field, plain="xfskde.rotate(F, phi)")
    if np.ndim(phi) != 0:
        raise ParameterError(
            f"phi must be one angle in radians (a number), got an array of shape "
            f"{np.shape(phi)}; to turn each pixel by its own angle use "
            "xfskde.rotate(field, angles) with the angles a DataArray on the field's dims"
        )
    return _density.rotate(field, phi)


def distance(field: xr.DataArray, other: xr.DataArray | np.ndarray) -> xr.DataArray:
    """Parseval distance (section 2.2) per pixel to ``other`` → dims (y, x).

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field.
    other : xarray.DataArray or numpy.ndarray
        One FS-KDE (a 1-D array or DataArray along k, e.g. ``F.isel(y=3, x=2)``), or a field
        on the same grid (its y/x coords must equal this field's). Different lengths ℓ are
        allowed, as in :func:`xfskde.distance` (the shorter is zero-padded).

    Returns
    -------
    xarray.DataArray
        The distances, the fields' dims without k, named ``"distance"``.

    Raises
    ------
    DimensionError
        For a plain ``other`` of more than one axis.
    """
    field = check_field(field, plain="xfskde.distance(F, G)")
    field, other = _density._field_pair(field, other, ("field", "other"))
    return _density.distance(field, other)


def dominant_orientation(
    field: xr.DataArray,
    *,
    method: Literal["mean", "argmax"] = "mean",
    n_angles: int | None = None,
) -> xr.DataArray:
    """Dominant gradient angle per pixel of a coefficient field → dims ``(y, x)``, radians.

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field with ℓ >= 2.
    method : {"mean", "argmax"}, optional
        ``"mean"`` (default): :math:`-\\arg F_1`, the |g|-weighted circular mean of the gradient
        angles (F_1 is proportional to :math:`\\sum_n w_n e^{-i\\theta_n}`, eq. 1), exactly the
        angle by which F_1 canonicalization turns the FS-KDE back (eq. 9). One coefficient per
        pixel, no sampling (:func:`xfskde.density.mean_direction`). ``"argmax"``: the angle of
        the density's maximum, max over θ of :math:`f(x, \\theta)`, sampled at ``n_angles``
        equally spaced angles and refined by Newton steps on f
        (:func:`xfskde.density.mode_direction`). The two agree for a unimodal, symmetric
        density; they differ when the density is skewed or multimodal (for two equal opposite
        modes, as across a thin line, F_1 vanishes and "mean" gives NaN).
    n_angles : int, optional
        Angles sampled by ``"argmax"``: at least 2ℓ (fewer can miss the maximum, and are
        refused); default ``max(64, 4ℓ)``. ``"mean"`` samples nothing: given with it, it is
        refused.

    Returns
    -------
    xarray.DataArray
        Angles in [-π, π), dims ``(y, x)``, named ``"dominant_orientation"`` (not
        ``"orientation"``: that is the axial structure orientation of
        :func:`xfskde.orientation.orientation`, a different quantity, so the two merge into one
        Dataset); NaN where the density is flat (F_1 = 0 for "mean"; every F_k, k >= 1, zero
        for "argmax").

    Raises
    ------
    DimensionError
        For a ``field`` that is not a coefficient field, or holds fewer than 2 coefficients.
    ParameterError
        For a ``method`` not in the list, an ``n_angles`` below 2ℓ with ``"argmax"``, and an
        ``n_angles`` with ``"mean"``.
    """
    field = check_field(field, plain="xfskde.density.mean_direction(F)")
    if field.sizes["k"] < 2:
        raise DimensionError(
            "the field needs at least 2 coefficients (k = 0, 1) for an orientation"
        )
    if method == "mean":
        if n_angles is not None:
            raise ParameterError(
                f"n_angles={n_angles} samples the density for method='argmax'; the mean "
                "direction (method='mean') reads F_1 alone: drop n_angles, or pass "
                "method='argmax'"
            )
        out = _density.mean_direction(field)
    elif method == "argmax":
        out = _density.mode_direction(field, n_angles)
    else:
        raise ParameterError(f"method must be 'mean' or 'argmax', got {method!r}")
    out = out.rename("dominant_orientation")
    out.attrs.update(long_name="dominant gradient angle", orientation_method=method)
    return out
