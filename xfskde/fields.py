"""Operations on labelled coefficient fields ``(y, x, k)``, per pixel and lazily.

Each function here applies one NumPy function of :mod:`xfskde.density` or
:mod:`xfskde.canonical` to every pixel's FS-KDE of a field (``xarray.apply_ufunc`` with
``dask="parallelized"``: block by block on Dask-backed fields, nothing loaded as a whole) and
keeps the field's dims, coords and attrs. The ``.fskde`` accessor (:mod:`xfskde.accessor`)
delegates to them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import xarray as xr

from . import canonical as _canonical
from . import density as _density
from ._validation import _check_positive_int
from .density import mean_direction, mode_direction
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
    if isinstance(field, xr.Dataset):
        names = list(field.data_vars)
        first = repr(names[0]) if names else "'fskde'"
        raise DimensionError(
            f"got an xarray.Dataset (variables {names}); pass its coefficient field, a "
            f"DataArray with a 'k' dim, e.g. ds[{first}]"
        )
    if not isinstance(field, xr.DataArray):
        instead = (
            f"; for plain NumPy coefficients (k along the last axis) use {plain}" if plain else ""
        )
        raise DimensionError(
            f"expected a labelled coefficient field (an xarray.DataArray with a 'k' dim), got "
            f"{type(field).__module__}.{type(field).__name__}{instead}"
        )
    if "k" not in field.dims:
        raise DimensionError(
            f"this array (dims {tuple(field.dims)}) has no 'k' dim: it is not an FS-KDE "
            "coefficient field; compute one with xfskde.local_fskde or "
            ".fskde.coefficients(order=...) first"
        )
    return _in_k_order(field)


def _listed(values: Any, most: int = 8) -> str:
    """Integers as ``0, 2, 4`` (the first ``most`` of them, then how many more)."""
    values = [str(v) for v in values]
    more = f", … ({len(values) - most} more)" if len(values) > most else ""
    return ", ".join(values[:most]) + more


def _in_k_order(field: xr.DataArray) -> xr.DataArray:
    """The field reordered so that position k holds F_k (:func:`check_field` says the rule)."""
    if "k" not in field.coords:
        return field
    labels = np.asarray(field["k"].values)
    n = field.sizes["k"]
    if labels.shape == (n,) and labels.dtype.kind in "iu" and np.array_equal(labels, range(n)):
        return field
    integral = labels.dtype.kind in "iu" or (
        labels.dtype.kind == "f" and bool(np.all(np.isfinite(labels) & (labels % 1 == 0)))
    )
    if labels.shape != (n,) or not integral or (labels.size and labels.min() < 0):
        raise DimensionError(
            f"the field's k coordinate must be the coefficients' indices 0 .. ℓ-1, got "
            f"{_listed(labels.ravel().tolist())}; drop it (.drop_vars('k')) if the "
            "coefficients are in k order"
        )
    ks = labels.astype(np.int64)
    unique, counts = np.unique(ks, return_counts=True)
    if (counts > 1).any():
        raise DimensionError(
            f"the field's k coordinate holds k = {_listed(unique[counts > 1].tolist())} more "
            "than once: each coefficient F_k may appear once"
        )
    missing = sorted(set(range(int(ks.max()) + 1)) - set(ks.tolist()))
    if missing:
        rest = f" and k = {_listed(missing[1:])}" if missing[1:] else ""
        what = f"F_0 (k = 0){rest}" if missing[0] == 0 else f"k = {_listed(missing)}"
        why = (
            "the density needs F_0, its mean level (and so do distances, energy and "
            "coherence), and "
            if missing[0] == 0
            else ""
        )
        raise DimensionError(
            f"the field lacks {what}: its k coordinate holds {_listed(ks.tolist())}; {why}an "
            "FS-KDE field holds every coefficient k = 0 .. ℓ-1 (missing ones are not zeros): "
            "select a prefix of the whole field instead, e.g. .isel(k=slice(0, 3))"
        )
    return field.isel(k=np.argsort(ks))  # a permutation of 0 .. ℓ-1: put back in k order


def _whole_k(array: xr.DataArray) -> xr.DataArray:
    """One Dask chunk along k (the functions below need every coefficient of a pixel)."""
    return array.chunk({"k": -1}) if array.chunks is not None else array


def _apply_k(
    func: Callable[..., np.ndarray],
    *arrays: xr.DataArray,
    out_dim: str | None = "k",
    out_size: int = 0,
    name: str | None = None,
    long_name: str | None = None,
) -> xr.DataArray:
    """Apply a NumPy function of ``(..., ℓ)`` arrays per pixel, blockwise on Dask.

    ``out_dim`` is the output's core dim: ``"k"`` (same length), a new dim of ``out_size`` or
    None (k reduced). Every array is checked and put in k order here (:func:`check_field`), so
    no function of a field reads a coefficient by its position alone. Dims, coords and the first
    array's attrs are kept; the output dtype is the function's own (found on one pixel), so
    lazy and computed dtypes agree.
    """
    arrays = tuple(_whole_k(check_field(a)) for a in arrays)
    probe = func(*(np.zeros((1,) * (a.ndim - 1) + (a.sizes["k"],), a.dtype) for a in arrays))
    core = [] if out_dim is None else [out_dim]
    new_dim = out_dim not in (None, "k")
    out = xr.apply_ufunc(
        func,
        *arrays,
        input_core_dims=[["k"]] * len(arrays),
        output_core_dims=[core],
        exclude_dims={"k"} if (new_dim or len(arrays) > 1) else set(),
        join="exact",
        dask="parallelized",
        keep_attrs=True,
        dask_gufunc_kwargs={
            "meta": np.empty((0,) * (arrays[0].ndim - 1 + len(core)), probe.dtype),
            **({"output_sizes": {out_dim: out_size}} if new_dim else {}),
        },
    )
    if name is not None:
        out.name = name
    if long_name is not None:
        out.attrs["long_name"] = long_name
    return out


def density(field: xr.DataArray, theta: Any) -> xr.DataArray:
    """The density :math:`f(x, \\theta)` (eq. 1) at angles ``theta`` → dims (y, x, theta).

    ``theta`` (radians, any 1-D sequence or a scalar) becomes the float ``theta`` coord.
    """
    field = check_field(field, plain="xfskde.evaluate(F, theta)")
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    if theta.ndim != 1:
        raise ParameterError(f"theta must be a scalar or 1-D, got shape {theta.shape}")
    out = _apply_k(
        lambda F: _density.evaluate(F, theta),
        field,
        out_dim="theta",
        out_size=theta.size,
        name="density",
        long_name="FS-KDE density of gradient angles",
    )
    return out.assign_coords(theta=("theta", theta, {"units": "rad"}))


def canonicalize(field: xr.DataArray, ell: int = 1) -> xr.DataArray:
    """F_ℓ-canonical form of every pixel's FS-KDE (eq. 8; section 4.3).

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field.
    ell : int
        The canonicalization level (default 1: F_1 canonicalization, eq. 8). A field of ℓ
        coefficients has no F_m beyond m = ℓ-1 (they are truncated to zero), so levels beyond
        ℓ-1 leave the form as it is: the result is then the F_{ℓ-1} form.

    Returns
    -------
    xarray.DataArray
        The canonical coefficients, dims, coords and attrs of the field, k in order; the
        ``canonical`` attr records the level done, ``"F{min(ell, ℓ-1)}"`` (``"F1"`` for ℓ <= 2).
    """
    ell = _check_positive_int("ell", ell)
    field = check_field(field, plain="xfskde.canonicalize(F, ell)")
    out = _apply_k(lambda F: _canonical.canonicalize(F, ell), field)
    out.attrs["canonical"] = f"F{max(1, min(ell, field.sizes['k'] - 1))}"
    return out


def rotate(field: xr.DataArray, phi: float) -> xr.DataArray:
    """Rotate every FS-KDE by ``phi`` radians (eq. 2): :math:`F_k e^{-ik\\phi}`.

    ``phi`` is one angle for every pixel (a number, or a 0-d array or DataArray); per-pixel
    angles are refused (on NumPy coefficients, :func:`xfskde.rotate` takes them).
    """
    field = check_field(field, plain="xfskde.rotate(F, phi)")
    if np.ndim(phi) != 0:
        raise ParameterError(
            f"phi must be one angle in radians (a number), got an array of shape "
            f"{np.shape(phi)}; to turn each pixel by its own angle use "
            "xfskde.rotate(F.values, angles) on the NumPy coefficients"
        )
    try:
        phi = float(phi)
    except (TypeError, ValueError):
        raise ParameterError(f"phi must be an angle in radians (a number), got {phi!r}") from None
    return _apply_k(lambda F: _density.rotate(F, phi), field)


def distance(field: xr.DataArray, other: xr.DataArray | np.ndarray) -> xr.DataArray:
    """Parseval distance (section 2.2) per pixel to ``other`` → dims (y, x).

    ``other`` is one FS-KDE (a 1-D array or DataArray along k, e.g. ``F.isel(y=3, x=2)``) or
    a field on the same grid (its y/x coords must equal this field's). Different lengths ℓ
    are allowed, as in :func:`xfskde.distance`.
    """
    field = check_field(field, plain="xfskde.distance(F, G)")
    if not isinstance(other, xr.DataArray):
        other = np.asarray(other)
        if other.ndim != 1:
            raise DimensionError(
                f"other must be one FS-KDE (1-D along k) or a DataArray field, got shape "
                f"{other.shape}"
            )
        other = xr.DataArray(other, dims=("k",))
    elif "k" not in other.dims:
        raise DimensionError(f"other has no 'k' dim (dims {tuple(other.dims)})")
    if other.ndim == 1:
        other = other.reset_coords(drop=True)  # a pixel picked with isel keeps scalar y, x
    return _apply_k(
        _density.distance, field, other, out_dim=None, name="distance", long_name="L2 distance"
    )


def dominant_orientation(
    field: xr.DataArray, *, method: Literal["mean", "argmax"] = "mean", n_angles: int = 360
) -> xr.DataArray:
    """Dominant gradient angle per pixel of a coefficient field → dims ``(y, x)``, radians.

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field with ℓ >= 2.
    method : {"mean", "argmax"}
        ``"mean"`` (default): :math:`-\\arg F_1`, the |g|-weighted circular mean of the gradient
        angles (F_1 is proportional to :math:`\\sum_n w_n e^{-i\\theta_n}`, eq. 1), exactly the
        angle by which F_1 canonicalization turns the FS-KDE back (eq. 8). One coefficient per
        pixel, no sampling. ``"argmax"``: the angle of the density's maximum, max over θ of
        :math:`f(x, \\theta)`, found on ``n_angles`` equally spaced angles and refined by a
        parabola through the best sample and its neighbours. The two agree for a unimodal,
        symmetric density; they differ when the density is skewed or multimodal (for two equal
        opposite modes, as across a thin line, F_1 vanishes and "mean" gives NaN).
    n_angles : int
        Angles sampled by ``"argmax"`` (default 360: one degree before the refinement).

    Returns
    -------
    xarray.DataArray
        Angles in [-π, π), dims ``(y, x)``, named ``"dominant_orientation"`` (not
        ``"orientation"``: that is the axial structure orientation of
        :func:`xfskde.orientation.orientation`, a different quantity, so the two merge into one
        Dataset); NaN where the density is flat (F_1 = 0 for "mean"; every F_k, k >= 1, zero
        for "argmax").
    """
    field = check_field(field, plain="xfskde.density.mean_direction(F)")
    if field.sizes["k"] < 2:
        raise DimensionError(
            "the field needs at least 2 coefficients (k = 0, 1) for an orientation"
        )
    if method == "mean":
        func: Callable[[np.ndarray], np.ndarray] = mean_direction
    elif method == "argmax":
        if int(n_angles) != n_angles or n_angles < 3:
            raise ParameterError(f"n_angles must be an integer >= 3, got {n_angles!r}")
        func = functools.partial(mode_direction, n_angles=int(n_angles))
    else:
        raise ParameterError(f"method must be 'mean' or 'argmax', got {method!r}")
    out = _apply_k(
        func,
        field,
        out_dim=None,
        name="dominant_orientation",
        long_name="dominant gradient angle",
    )
    out.attrs["units"] = "rad"
    out.attrs["orientation_method"] = method
    return out
