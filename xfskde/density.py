"""FS-KDEs of weighted angle sets (paper, section 2).

An FS-KDE is stored as its non-negative Fourier coefficients ``F[..., k]``, k = 0 .. ℓ-1, along
the last axis; the negative ones follow from :math:`F_{-k} = \\overline{F_k}` (the density is real).

Every function here that takes coefficients also takes a labelled coefficient field (an
``xarray.DataArray`` with a ``k`` dim, in any position: :func:`xfskde.local_fskde` on a
DataArray), read by its ``k`` dim and coordinate, never by position: the result is then a
DataArray that keeps the field's other dims, coords and attrs, and stays lazy on Dask, as the
``.fskde`` accessor's methods (:mod:`xfskde.fields`) do.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import xarray as xr

from ._validation import _finite_array
from .exceptions import DimensionError, ParameterError
from .kernel import Approximation, Cos2KKernel, _single_precision

__all__ = [
    "distance",
    "evaluate",
    "fskde",
    "mean_direction",
    "mode_direction",
    "rotate",
    "unit_phasor_powers",
]

# Angles processed per batch in fskde, so that temporaries stay around 64 MiB.
_BATCH_ELEMENTS = 1 << 22
# FS-KDEs per slab when densities are sampled to find their maxima (bounds the temporaries).
_SLAB_PIXELS = 4096


def _result_dtypes(*dtypes: Any) -> tuple[np.dtype, np.dtype]:
    """The complex and real dtypes of results computed from data of ``dtypes``: complex64 /
    float32 where the kernel's precision rule says single (:func:`.kernel._single_precision`),
    else complex128 / float64 — long doubles included, which NumPy's promotion alone kept as
    complex256 —, as :func:`xfskde.local_fskde` chooses its coefficients' dtype. The work
    itself may be done in double precision and rounded once at the end.
    """
    if _single_precision(*dtypes):
        return np.dtype(np.complex64), np.dtype(np.float32)
    return np.dtype(np.complex128), np.dtype(np.float64)


def unit_phasor_powers(z: np.ndarray, length: int) -> np.ndarray:
    """Return ``z**k`` for k = 0 .. length-1 along a new last axis, by repeated multiplication.

    One complex multiplication per power and no trigonometric function: this is how every
    :math:`e^{-ik\\theta}` in xfskde is formed. The products are spelled out in real
    arithmetic, one phasor at a time, so a phasor's powers are the same bits whatever the shape
    of ``z`` (NumPy's complex product rounds one element differently from many).

    Parameters
    ----------
    z : numpy.ndarray
        Unit phasors (e.g. ``exp(-1j * theta)``), any shape.
    length : int
        ℓ, the number of powers.

    Returns
    -------
    numpy.ndarray, shape ``z.shape + (length,)``
        Complex, at least complex64 (the precision of ``z``).
    """
    z = np.asarray(z)
    dtype = np.result_type(z, np.complex64)
    flat = np.ascontiguousarray(z, dtype=dtype).reshape(-1)
    out = np.empty((flat.size, length), dtype=dtype)
    _powers_rows(flat, out)
    return out.reshape(*z.shape, length)


# --- compiled per-pixel loops --------------------------------------------------------------------
#
# A value per pixel must not depend on how many pixels are computed together (a Dask chunk of
# one pixel, of seven, or the whole image). NumPy's complex multiplication does not hold this:
# its loops for contiguous arrays and single elements round a*b with fused multiply-adds, its
# strided loop does not, and it is not commutative (a*b and b*a differ in the last bit), while
# NumPy computes ``a * temporary`` as ``temporary *= a`` once arrays pass 256 KiB; a matrix
# product's rounding (BLAS) depends on the number of rows. These loops spell every complex
# product out in real arithmetic, (ar br - ai bi, ar bi + ai br), and every sum in k order, one
# pixel at a time: each value then has one rounding, whatever its neighbours.


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _powers_rows(z: np.ndarray, out: np.ndarray) -> None:
    """``out[i, k] = z[i]**k`` by repeated multiplication (z: (N,), out: (N, L))."""
    if out.shape[1] == 0:
        return
    for i in range(z.size):
        zr = z[i].real
        zi = z[i].imag
        out[i, 0] = 1
        pr = out[i, 0].real  # 1 and 0 in z's precision
        pi = out[i, 0].imag
        for k in range(1, out.shape[1]):
            pr, pi = pr * zr - pi * zi, pr * zi + pi * zr
            out[i, k] = complex(pr, pi)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _times_powers_rows(F: np.ndarray, z: np.ndarray, out: np.ndarray) -> None:
    """``out[i, k] = F[i, k] * z[i]**k`` in float64 (F: (N, L), z: (N,) complex128)."""
    for i in range(F.shape[0]):
        zr = z[i].real
        zi = z[i].imag
        pr = 1.0
        pi = 0.0
        for k in range(F.shape[1]):
            if k > 0:
                pr, pi = pr * zr - pi * zi, pr * zi + pi * zr
            fr = np.float64(F[i, k].real)
            fi = np.float64(F[i, k].imag)
            out[i, k] = complex(fr * pr - fi * pi, fr * pi + fi * pr)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _evaluate_rows(F: np.ndarray, br: np.ndarray, bi: np.ndarray, out: np.ndarray) -> None:
    """``out[p, t] = Σ_k Re(F[p, k] B[k, t])`` summed in k order (F: (P, L); B = br + i bi:
    (L, T); out: (P, T) float64)."""
    for p in range(F.shape[0]):
        for t in range(out.shape[1]):
            out[p, t] = 0.0
        for k in range(F.shape[1]):
            fr = np.float64(F[p, k].real)
            fi = np.float64(F[p, k].imag)
            for t in range(out.shape[1]):
                out[p, t] += fr * br[k, t] - fi * bi[k, t]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _trig_poly_rows(
    b: np.ndarray, z: np.ndarray, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray
) -> None:
    """c(φ), c'(φ), c''(φ) of c(φ) = Re Σ_k b_k e^{-ikφ} for b (P, L) and z = e^{-iφ} (P, C)."""
    for p in range(b.shape[0]):
        for c in range(z.shape[1]):
            zr = z[p, c].real
            zi = z[p, c].imag
            pr = 1.0
            pi = 0.0
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            for k in range(b.shape[1]):
                if k > 0:
                    pr, pi = pr * zr - pi * zi, pr * zi + pi * zr
                tr = b[p, k].real * pr - b[p, k].imag * pi
                ti = b[p, k].real * pi + b[p, k].imag * pr
                s0 += tr
                s1 += k * ti  # Re(-ik t) = k Im(t)
                s2 += (k * k) * tr
            c0[p, c] = s0
            c1[p, c] = s1
            c2[p, c] = -s2


def _times_powers(F: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``F * unit_phasor_powers(z, ℓ)`` in complex128, each pixel rounded alone.

    ``F`` (..., ℓ) and the phasors ``z`` broadcast against ``F.shape[:-1]``.
    """
    F = np.asarray(F)
    if F.dtype not in (np.complex64, np.complex128):
        F = F.astype(np.complex128)
    z = np.asarray(z, dtype=np.complex128)
    shape = np.broadcast_shapes(F.shape[:-1], z.shape)
    length = F.shape[-1]
    rows = np.ascontiguousarray(np.broadcast_to(F, (*shape, length))).reshape(-1, length)
    phasors = np.ascontiguousarray(np.broadcast_to(z, shape)).reshape(-1)
    out = np.empty(rows.shape, dtype=np.complex128)
    _times_powers_rows(rows, phasors, out)
    return out.reshape(*shape, length)


def _conj_times(F: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``conj(F) * G`` of complex128 arrays of one shape, in real arithmetic (see above)."""
    out = np.empty(F.shape, dtype=np.complex128)
    out.real = F.real * G.real + F.imag * G.imag
    out.imag = F.real * G.imag - F.imag * G.real
    return out


def fskde(
    angles: np.typing.ArrayLike,
    weights: np.typing.ArrayLike | None = None,
    *,
    order: int,
    axis: int = -1,
    eps: float | None = None,
    approximation: Approximation = "auto",
) -> np.ndarray:
    """FS-KDE coefficients of weighted angle sets (eqs. 1 and 6).

    .. math:: F_k = \\frac{H_k}{N} \\sum_{n=0}^{N-1} w_n e^{-ik\\theta_n},\\quad k = 0 .. ℓ-1

    Parameters
    ----------
    angles : array_like
        Angles in radians; the sets run along ``axis``, every other axis is a batch axis.
    weights : array_like, optional
        Non-negative weights broadcastable to ``angles``; None gives every angle weight 1.
    order : int
        Order K of the cos^2K kernel.
    axis : int, optional
        The axis that holds each set (default: the last).
    eps : float in (0, 1), optional
        Truncation threshold (eq. 8); None keeps K + 1 coefficients.
    approximation : {"auto", "exact", "normal"}, optional
        How H_k is computed: exact binomials (eqs. 4–5) or the normal approximation (eq. 7);
        ``"auto"`` (default) switches to the normal one at 2K >= 80, as the paper does. See
        :class:`~xfskde.Cos2KKernel`.

    Returns
    -------
    numpy.ndarray, complex, shape ``batch_shape + (ℓ,)``
        The batch shape is ``angles.shape`` without ``axis``. complex64 when the angles (and
        the weights, if given) are single precision (float32, float16, 8- and 16-bit
        integers), else complex128; computed in complex128 either way, rounded once.

    Raises
    ------
    ParameterError
        For NaN or infinite angles or weights, negative weights, weights that do not broadcast
        to the angles, an empty set, an ``axis`` out of range, and the refusals of
        :class:`~xfskde.Cos2KKernel` (an ``order`` below 1, an ``eps`` outside (0, 1)).
    TypeError
        For angles or weights that are not real numbers (complex, text), and an ``axis`` that
        is not an integer.

    Examples
    --------
    >>> F = fskde([0.0, np.pi / 2], order=4)
    >>> F.shape
    (5,)
    >>> float(F[0].real) == 1 / (2 * np.pi)
    True
    """
    kernel = Cos2KKernel(order, approximation=approximation, eps=eps)
    theta = _finite_array("angles", angles)
    given = [np.asarray(angles).dtype]
    if weights is None:
        w = np.ones_like(theta)
    else:
        w = _finite_array("weights", weights)
        given.append(np.asarray(weights).dtype)
        if np.any(w < 0):
            raise ParameterError(
                "weights must be non-negative (the KDE weights each angle's kernel)"
            )
        try:
            shape = np.broadcast_shapes(w.shape, theta.shape)
        except ValueError:
            raise ParameterError(
                f"weights of shape {w.shape} do not broadcast to the angles' shape "
                f"{theta.shape}: give one weight per angle (or a shape that broadcasts)"
            ) from None
        w = np.broadcast_to(w, shape)
        theta = np.broadcast_to(theta, w.shape)
    if theta.ndim == 0:
        raise ParameterError("angles must have at least one axis holding the angle set")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(
            f"axis must be an integer, the axis of angles holding each set, got {axis!r}"
        )
    if not -theta.ndim <= axis < theta.ndim:
        raise ParameterError(
            f"axis {axis} is out of range for angles of {theta.ndim} axes: give an axis in "
            f"{-theta.ndim} .. {theta.ndim - 1}"
        )
    theta = np.moveaxis(theta, axis, -1)
    w = np.moveaxis(w, axis, -1)
    n = theta.shape[-1]
    if n == 0:
        raise ParameterError(f"the angle sets along axis={axis} are empty: give at least one angle")
    batch_shape = theta.shape[:-1]
    theta = theta.reshape(-1, n)
    w = w.reshape(-1, n)
    out = np.empty((theta.shape[0], kernel.length), dtype=np.complex128)
    rows = max(1, _BATCH_ELEMENTS // n)
    for start in range(0, theta.shape[0], rows):
        sl = slice(start, start + rows)
        z = np.exp(-1j * theta[sl])  # one complex exponential per angle
        p = w[sl].astype(np.complex128)
        out[sl, 0] = p.sum(axis=-1)
        for k in range(1, kernel.length):
            p *= z
            out[sl, k] = p.sum(axis=-1)
    out *= kernel.coefficients / n
    return out.reshape(*batch_shape, kernel.length).astype(_result_dtypes(*given)[0], copy=False)


# --- labelled coefficient fields: read by their k dim, never by position -------------------------


def _is_labelled(value: Any) -> bool:
    return isinstance(value, xr.DataArray | xr.Dataset)


def _listed(values: Any, most: int = 8) -> str:
    """Integers as ``0, 2, 4`` (the first ``most`` of them, then how many more)."""
    values = [str(v) for v in values]
    more = f", … ({len(values) - most} more)" if len(values) > most else ""
    return ", ".join(values[:most]) + more


def _check_field(field: Any, plain: str | None = None) -> xr.DataArray:
    """The labelled field in k order, or a DimensionError saying why it is not one: the rule
    of :func:`xfskde.fields.check_field`, which documents it."""
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


def _in_k_order(field: xr.DataArray) -> xr.DataArray:
    """The field reordered so that position k holds F_k (:func:`_check_field` says the rule)."""
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
    angles: xr.DataArray | None = None,
) -> xr.DataArray:
    """Apply a NumPy function of ``(..., ℓ)`` arrays per pixel, blockwise on Dask.

    ``out_dim`` is the output's core dim: ``"k"`` (same length), a new dim of ``out_size`` or
    None (k reduced). Every array is checked and put in k order here (:func:`_check_field`), so
    no function of a field reads a coefficient by its position alone. ``angles``, a DataArray
    without k whose dims are among the first array's, is passed last, one value per pixel.
    Dims, coords and the first array's attrs are kept; the output dtype is the function's own
    (found on one pixel), so lazy and computed dtypes agree.
    """
    arrays = tuple(_whole_k(_check_field(a)) for a in arrays)
    inputs: tuple[xr.DataArray, ...] = arrays
    probe_args = [np.zeros((1,) * (a.ndim - 1) + (a.sizes["k"],), a.dtype) for a in arrays]
    if angles is not None:
        inputs = (*arrays, angles)
        probe_args.append(np.zeros((1,) * (arrays[0].ndim - 1), angles.dtype))
    probe = func(*probe_args)
    core = [] if out_dim is None else [out_dim]
    new_dim = out_dim not in (None, "k")
    out = xr.apply_ufunc(
        func,
        *inputs,
        input_core_dims=[["k"]] * len(arrays) + [[]] * (angles is not None),
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


def _field_pair(F: Any, G: Any, names: tuple[str, str]) -> tuple[xr.DataArray, xr.DataArray]:
    """Two FS-KDE arguments, one at least labelled, as DataArrays with a ``k`` dim.

    A plain array is taken as one FS-KDE (1-D, along k); a plain array of more axes is refused:
    which of its axes is k, and which field dims the others are, it does not say. A single
    FS-KDE picked from a field (``field.isel(y=3, x=2)``) loses its scalar coords, which would
    otherwise clash with the field's.
    """
    out = []
    for value, name in zip((F, G), names, strict=True):
        if not _is_labelled(value):
            array = np.asarray(value)
            if array.ndim != 1:
                raise DimensionError(
                    f"{name} must be one FS-KDE (1-D along k) or a DataArray with a 'k' dim when "
                    f"the other argument is a labelled field, got a plain array of shape "
                    f"{array.shape}"
                )
            value = xr.DataArray(array, dims=("k",))
        value = _check_field(value)
        out.append(value.reset_coords(drop=True) if value.ndim == 1 else value)
    return out[0], out[1]


def _angles_of(phi: Any, field: xr.DataArray) -> float | xr.DataArray:
    """``phi`` for a labelled field: one angle, or a DataArray of angles on some of its dims."""
    if isinstance(phi, xr.DataArray) and phi.ndim > 0:
        extra = [d for d in phi.dims if d == "k" or d not in field.dims]
        if extra:
            raise DimensionError(
                f"phi has dims {tuple(phi.dims)}: per-pixel angles must be on the field's own "
                f"dims {tuple(d for d in field.dims if d != 'k')} (not {tuple(extra)})"
            )
        return phi.astype(np.float64)
    if np.ndim(phi) != 0:
        raise ParameterError(
            f"phi for a labelled field must be one angle or a DataArray of angles with the "
            f"field's dims, got a plain array of shape {np.shape(phi)}: its axes name no dims"
        )
    try:
        return float(phi)
    except (TypeError, ValueError):
        raise ParameterError(f"phi must be an angle in radians (a number), got {phi!r}") from None


def _wrap_angle(x: np.typing.ArrayLike) -> np.ndarray:
    """Angles in radians brought into [-π, π), in float64 (np.mod may round up to 2π)."""
    x = np.mod(np.asarray(x, dtype=np.float64) + np.pi, 2 * np.pi) - np.pi
    return np.where(x >= np.pi, x - 2 * np.pi, x)


def _need_f1(length: int) -> None:
    if length < 2:
        raise DimensionError(
            f"a direction needs F_1: at least 2 coefficients (k = 0, 1) along k, got {length}"
        )


# --- the maximum of a trigonometric polynomial ---------------------------------------------------

_NEWTON_STEPS = 12
_CANDIDATES = 3


def _trig_poly(b: np.ndarray, k: np.ndarray, phi: np.ndarray) -> tuple[np.ndarray, ...]:
    """c(φ), c'(φ), c''(φ) of c(φ) = Re Σ_k b_k e^{-ikφ}, for b (P, L) and candidates φ (P, C).

    Each candidate's values are rounded alone (:func:`_trig_poly_rows`), whatever P and C.
    """
    z = np.ascontiguousarray(np.exp(-1j * phi), dtype=np.complex128)
    rows = np.ascontiguousarray(b, dtype=np.complex128)
    c0, c1, c2 = (np.empty(phi.shape) for _ in range(3))
    _trig_poly_rows(rows[:, : k.size], z, c0, c1, c2)  # k = 0 .. ℓ-1, every coefficient
    return c0, c1, c2


def _maximise(b: np.ndarray, n_grid: int) -> np.ndarray:
    """The φ in [0, 2π) that maximises c(φ) = Re Σ_k b_k e^{-ikφ}, per row of b (P, L).

    An FFT samples c at ``n_grid`` >= L angles; the best three local maxima of the samples are
    polished by Newton steps (each at most one grid step) to machine precision, and the best
    polished one wins. Two near-equal peaks are thus told apart by c itself, not by the grid.
    NaN where a row has no finite sample (NaN coefficients).
    """
    length = b.shape[-1]
    k = np.arange(length, dtype=np.float64)
    h = 2 * np.pi / n_grid
    values = np.real(np.fft.fft(b, n=n_grid, axis=-1))  # c(2πm/M)
    peaks = (values >= np.roll(values, 1, axis=-1)) & (values >= np.roll(values, -1, axis=-1))
    ranked = np.where(peaks, values, -np.inf)
    n_cand = min(_CANDIDATES, n_grid)
    idx = np.argpartition(-ranked, n_cand - 1, axis=-1)[:, :n_cand]
    peak = np.isfinite(np.take_along_axis(ranked, idx, axis=-1))  # fewer than 3 peaks: the rest
    phi = np.where(peak, idx * h, np.nan)  # are not candidates (nor is anything in a NaN row)
    active = peak.copy()  # candidates still moving
    for _ in range(_NEWTON_STEPS):
        rows, cols = np.nonzero(active)
        if rows.size == 0:
            break
        _, d1, d2 = _trig_poly(b[rows], k, phi[rows, cols][:, None])
        concave = d2[:, 0] < 0
        step = np.where(
            concave, -d1[:, 0] / np.where(concave, d2[:, 0], -1.0), np.sign(d1[:, 0]) * h
        )
        step = np.clip(step, -h, h)
        phi[rows, cols] += step
        # Newton converges quadratically: after a step under 1e-10 the next is under 1e-20
        active[rows, cols] = np.abs(step) > 1e-10
    value = np.where(peak, _trig_poly(b, k, np.where(peak, phi, 0.0))[0], -np.inf)
    best = np.argmax(value, axis=-1)
    return np.take_along_axis(phi, best[:, None], axis=-1)[:, 0]


# --- angle sets ----------------------------------------------------------------------------------


def evaluate(F: Any, theta: np.typing.ArrayLike) -> Any:
    """Evaluate the density :math:`f(\\theta) = \\sum_{k=-K}^{K} F_k e^{ik\\theta}` (eq. 1).

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), or xarray.DataArray
        Coefficients k = 0 .. ℓ-1 along the last axis, or a labelled field with a ``k`` dim.
    theta : array_like
        Angles in radians; for a labelled field a scalar or a 1-D sequence.

    Returns
    -------
    numpy.ndarray, real, shape ``F.shape[:-1] + theta.shape``, or xarray.DataArray
        :math:`f = \\mathrm{Re}\\,F_0 + 2\\,\\mathrm{Re}\\sum_{k\\ge1} F_k e^{ik\\theta}`, in
        the precision of ``F`` (the angles are coordinates and do not count): float32 for
        complex64 (or float32) coefficients, else float64; summed in float64 and rounded once.
        For a labelled field: the field's dims without k, then a ``theta`` dim and coord (a
        scalar ``theta`` coord for one angle), named ``"density"``, as
        ``F.fskde.density(theta)``.

    Raises
    ------
    ParameterError
        For a labelled field and a ``theta`` of more than one dimension.
    DimensionError
        For labelled input that is not a coefficient field (:func:`xfskde.fields.check_field`),
        and a plain ``F`` that is a scalar or has no coefficient (an empty last axis).
    TypeError
        For ``F`` or ``theta`` that are not numbers (text, ``None``; a complex ``theta``).
    """
    if _is_labelled(F):
        field = _check_field(F)
        angles = _real_angles("theta", theta)
        if angles.ndim > 1:
            raise ParameterError(
                f"theta for a labelled field must be a scalar or 1-D, got shape {angles.shape}"
            )
        grid = np.atleast_1d(angles)
        out = _apply_k(
            lambda G: evaluate(G, grid),
            field,
            out_dim="theta",
            out_size=grid.size,
            name="density",
            long_name="FS-KDE density of gradient angles",
        )
        out = out.assign_coords(theta=("theta", grid, {"units": "rad"}))
        return out.squeeze("theta") if angles.ndim == 0 else out
    F = _coefficients("F", F)
    theta = _real_angles("theta", theta)
    length = F.shape[-1]
    basis = unit_phasor_powers(np.exp(1j * theta), length)  # theta.shape + (ℓ,)
    basis[..., 1:] *= 2.0
    flat = basis.reshape(-1, length).T.astype(np.complex128)  # (ℓ, angles)
    rows = F.reshape(-1, length)
    if rows.dtype not in (np.complex64, np.complex128):
        rows = rows.astype(np.complex128)
    rows = np.ascontiguousarray(rows)
    br, bi = np.ascontiguousarray(flat.real), np.ascontiguousarray(flat.imag)
    # Σ_k Re(F_k B_k) per pixel in k order, not a matrix product: BLAS rounds a row differently
    # with the number of rows, so a Dask chunk's densities would depend on its size
    if _result_dtypes(F.dtype)[1] != np.float32:
        values = np.empty((rows.shape[0], flat.shape[1]))
        _evaluate_rows(rows, br, bi, values)
    else:  # summed in float64 slab by slab, each value rounded once into the float32 result
        values = np.empty((rows.shape[0], flat.shape[1]), dtype=np.float32)
        for a in range(0, rows.shape[0], _SLAB_PIXELS):
            part = np.empty((min(_SLAB_PIXELS, rows.shape[0] - a), flat.shape[1]))
            _evaluate_rows(rows[a : a + _SLAB_PIXELS], br, bi, part)
            values[a : a + part.shape[0]] = part
    return values.reshape(F.shape[:-1] + theta.shape)


def mean_direction(F: Any) -> Any:
    """The weighted circular mean of the angles, :math:`-\\arg F_1`, per FS-KDE (eq. 9).

    F_1 is proportional to :math:`\\sum_n w_n e^{-i\\theta_n}` (eq. 1) with a positive H_1, so
    :math:`-\\arg F_1` is the mean direction: the angle by which F_1 canonicalization turns the
    FS-KDE back.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), ℓ >= 2, or xarray.DataArray
        Coefficients along the last axis, or a labelled field with a ``k`` dim.

    Returns
    -------
    numpy.ndarray of float64, shape ``F.shape[:-1]``, or xarray.DataArray
        Radians in [-π, π) (an angle of exactly ±π, a mean pointing to -x, is -π, whatever the
        sign of F_1's zero imaginary part); NaN where F_1 = 0 (no mean direction). float64 for
        complex64 coefficients too: float32 holds no [-π, π) (float32(π) > π and
        float32(-π) < -π), and the angles have no k axis. A labelled field gives the field's
        dims without k, named ``"mean_direction"`` (units ``rad``).

    Raises
    ------
    DimensionError
        For fewer than 2 coefficients along k (no F_1), and labelled input that is not a
        coefficient field.
    """
    if _is_labelled(F):
        field = _check_field(F)
        _need_f1(field.sizes["k"])
        out = _apply_k(
            mean_direction, field, out_dim=None, name="mean_direction", long_name="mean angle"
        )
        out.attrs["units"] = "rad"
        return out
    F = np.asarray(F)
    _need_f1(F.shape[-1] if F.ndim else 0)
    F1 = F[..., 1].astype(np.complex128)  # arg in float64: float32(π) exceeds π
    angle = -np.angle(F1)  # [-π, π]
    angle = np.where(angle >= np.pi, angle - 2 * np.pi, angle)
    return np.where(np.abs(F1) > 0, angle, np.nan).astype(np.float64)


def _least_mode_angles(length: int) -> int:
    """The fewest angles :func:`mode_direction` samples for FS-KDEs of ``length`` coefficients.

    2ℓ: f is a trigonometric polynomial of degree ℓ-1, which 2ℓ - 1 equally spaced samples
    determine; fewer leave whole peaks between two samples (with 16 samples of an ℓ = 65 density
    the best sample lay up to 55° from the maximum).
    """
    return 2 * int(length)


def mode_direction(F: Any, n_angles: int | None = None) -> Any:
    """The angle of the density's maximum, :math:`\\arg\\max_\\theta f(\\theta)` (eq. 1), per set.

    f is sampled at ``n_angles`` equally spaced angles (one FFT per FS-KDE); the three best
    local maxima of the samples are refined by Newton steps on f itself to machine precision,
    and the highest wins, so two modes of nearly equal height are told apart by f, not by the
    grid. For densities (non-negative weights, as every FS-KDE of xfskde has) this finds the
    maximum; for arbitrary coefficients, whose peaks may be narrower than the samples' step,
    sample more angles.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), ℓ >= 2, or xarray.DataArray
        Coefficients along the last axis, or a labelled field with a ``k`` dim.
    n_angles : int, optional
        Angles sampled, at least 2ℓ, which determine f (a trigonometric polynomial of
        degree ℓ-1): fewer are refused. Default: ``max(64, 4ℓ)``.

    Returns
    -------
    numpy.ndarray of float64, shape ``F.shape[:-1]``, or xarray.DataArray
        Radians in [-π, π); NaN where the density is flat (every F_k, k >= 1, zero) or F is NaN.
        float64 for complex64 coefficients too (float32 holds no [-π, π), see
        :func:`mean_direction`). A labelled field gives the field's dims without k, named
        ``"mode_direction"`` (units ``rad``).

    Raises
    ------
    ParameterError
        For an ``n_angles`` that is not an integer, or below 2ℓ.
    DimensionError
        For fewer than 2 coefficients along k (no F_1), and labelled input that is not a
        coefficient field.
    """
    if _is_labelled(F):
        field = _check_field(F)
        _need_f1(field.sizes["k"])
        n = _mode_angles(field.sizes["k"], n_angles)
        out = _apply_k(
            lambda G: mode_direction(G, n),
            field,
            out_dim=None,
            name="mode_direction",
            long_name="angle of the density's maximum",
        )
        out.attrs["units"] = "rad"
        return out
    F = np.asarray(F)
    length = F.shape[-1] if F.ndim else 0
    _need_f1(length)
    n = _mode_angles(length, n_angles)
    flat = F.reshape(-1, length).astype(np.complex128)
    b = np.conj(flat)
    b[:, 1:] *= 2.0  # c(φ) = Re Σ b_k e^{-ikφ} is f(φ)
    out = np.empty(flat.shape[0], dtype=np.float64)
    rows = max(1, min(_SLAB_PIXELS, _BATCH_ELEMENTS // n))
    with np.errstate(invalid="ignore"):  # NaN coefficients (missing pixels) give NaN
        for a in range(0, flat.shape[0], rows):
            out[a : a + rows] = _maximise(b[a : a + rows], n)
    out = _wrap_angle(out)
    flat_density = ~(np.abs(flat[:, 1:]) > 0).any(axis=-1)
    out[flat_density] = np.nan
    return out.reshape(F.shape[:-1])


def _mode_angles(length: int, n_angles: Any) -> int:
    """``n_angles`` checked against :func:`_least_mode_angles`, or its default."""
    least = _least_mode_angles(length)
    if n_angles is None:
        return max(64, 2 * least)
    if isinstance(n_angles, bool) or not isinstance(n_angles, numbers.Integral):
        if not (isinstance(n_angles, float | np.floating) and float(n_angles).is_integer()):
            raise ParameterError(f"n_angles must be an integer, got {n_angles!r}")
    if int(n_angles) < least:
        raise ParameterError(
            f"n_angles must be at least 2ℓ = {least} for FS-KDEs of ℓ = {length} coefficients "
            f"(fewer samples can miss the maximum), got {n_angles!r}; leave it unset for "
            f"max(64, 4ℓ)"
        )
    return int(n_angles)


def _coefficients(name: str, F: Any) -> np.ndarray:
    """``F`` as a plain array of FS-KDEs along its last axis; refuse what has no k axis to read
    (a scalar, text) or no coefficient on it, instead of an IndexError or reshape error."""
    F = np.asarray(F)
    if F.dtype == object:
        try:
            F = F.astype(np.complex128)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric FS-KDE coefficients, got objects") from None
    if F.dtype.kind not in "biufc":
        raise TypeError(f"{name} must be numeric FS-KDE coefficients, got an array of {F.dtype}")
    if F.ndim == 0:
        raise DimensionError(
            f"{name} must hold FS-KDEs along its last axis (k = 0 .. ℓ-1), got a scalar"
        )
    if F.shape[-1] == 0:
        raise DimensionError(
            f"{name} has no coefficients: its last axis (k) is empty, shape {F.shape}"
        )
    return F


def _real_angles(name: str, values: Any) -> np.ndarray:
    """Angles in radians as float64; refuse text, None and complex values (cast silently to NaN
    or stripped of their imaginary parts)."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be angles in radians (real numbers), got {values!r:.60}")
    return raw.astype(np.float64)


def _leading_shape(F: np.ndarray, G: np.ndarray, names: tuple[str, str]) -> tuple[int, ...]:
    """The broadcast shape of two coefficient arrays' leading (non-k) axes, or a refusal."""
    try:
        return np.broadcast_shapes(F.shape[:-1], G.shape[:-1])
    except ValueError:
        raise DimensionError(
            f"{names[0]} of shape {F.shape} and {names[1]} of shape {G.shape} do not broadcast: "
            "their leading axes (all but k, the last) must match or be 1"
        ) from None


def _pad_pair(F: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zero-pad the shorter of two coefficient arrays along k (truncated terms are zero)."""
    lf, lg = F.shape[-1], G.shape[-1]
    if lf < lg:
        F = np.concatenate([F, np.zeros((*F.shape[:-1], lg - lf), F.dtype)], axis=-1)
    elif lg < lf:
        G = np.concatenate([G, np.zeros((*G.shape[:-1], lf - lg), G.dtype)], axis=-1)
    return F, G


def _norm_squared(F: np.ndarray) -> np.ndarray:
    """Σ_{k=-K..K} |F_k|² from the stored k >= 0 half."""
    sq = np.abs(F) ** 2
    return sq[..., 0] + 2.0 * sq[..., 1:].sum(axis=-1)


def distance(F: Any, G: Any) -> Any:
    """L2 distance between two FS-KDEs by Parseval's equality (section 2.2).

    .. math:: \\|f - g\\| = \\sqrt{2\\pi \\sum_{k=-K}^{K} |F_k - G_k|^2}

    Parameters
    ----------
    F, G : array_like, complex, shape (..., ℓ), or xarray.DataArray
        Coefficients along the last axis; leading axes broadcast. Different lengths are allowed
        (the shorter is zero-padded, as truncation sets the missing coefficients to zero). Either
        may be a labelled field (a DataArray with a ``k`` dim, read by name); the other is then a
        field on the same grid, or one FS-KDE (1-D, e.g. ``field.isel(y=3, x=2)``).

    Returns
    -------
    numpy.ndarray, real, or xarray.DataArray
        The distances, shape ``broadcast(F.shape[:-1], G.shape[:-1])``: float32 when both
        ``F`` and ``G`` are single precision (complex64, float32), computed in it, else
        float64. For labelled input the fields' dims without k, named ``"distance"``.

    Raises
    ------
    DimensionError
        For labelled input that is not a coefficient field, a plain partner of more than
        one axis (which of its axes is k it does not say), plain arrays that are scalars or
        have no coefficient, and leading axes that do not broadcast.
    TypeError
        For coefficients that are not numbers.
    """
    if _is_labelled(F) or _is_labelled(G):
        F, G = _field_pair(F, G, ("F", "G"))
        return _apply_k(distance, F, G, out_dim=None, name="distance", long_name="L2 distance")
    F, G = _pad_pair(_coefficients("F", F), _coefficients("G", G))
    _leading_shape(F, G, ("F", "G"))
    complex_dtype, real_dtype = _result_dtypes(F.dtype, G.dtype)
    diff = F.astype(complex_dtype, copy=False) - G.astype(complex_dtype, copy=False)
    return np.sqrt(real_dtype.type(2.0 * np.pi) * _norm_squared(diff))


def rotate(F: Any, phi: Any) -> Any:
    """Rotate an FS-KDE by ``phi`` radians (eq. 2): :math:`F_{\\phi,k} = e^{-ik\\phi} F_k`.

    The result is the FS-KDE of the angle set with ``phi`` added to every angle, i.e. the density
    circularly shifted: :math:`f_\\phi(\\theta) = f(\\theta - \\phi)`.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), or xarray.DataArray
        Coefficients along the last axis, or a labelled field with a ``k`` dim.
    phi : array_like
        Angles in radians, broadcastable to ``F.shape[:-1]``. For a labelled field: one angle,
        or a DataArray of angles on the field's dims (without k), matched by name.

    Returns
    -------
    numpy.ndarray, complex, the broadcast shape of ``F``; or xarray.DataArray
        complex64 for complex64 (or float32) ``F``, else complex128 (the angles do not count):
        computed in complex128, rounded once. A labelled field gives a field with its dims,
        coords and attrs, k last and in order.

    Raises
    ------
    DimensionError
        For labelled input that is not a coefficient field (:func:`xfskde.fields.check_field`),
        a plain ``F`` that is a scalar or has no coefficient, and a ``phi`` that does not
        broadcast to ``F.shape[:-1]``.
    TypeError
        For ``F`` or ``phi`` that are not numbers (text, ``None``; a complex ``phi``).
    """
    if _is_labelled(F):
        field = _check_field(F, plain="xfskde.rotate(F, phi)")
        angles = _angles_of(phi, field)
        if isinstance(angles, xr.DataArray):
            return _apply_k(rotate, field, angles=angles)
        return _apply_k(lambda G: rotate(G, angles), field)
    F = _coefficients("F", F)
    phi = _real_angles("phi", phi)
    try:
        np.broadcast_shapes(phi.shape, F.shape[:-1])
    except ValueError:
        raise DimensionError(
            f"phi of shape {phi.shape} does not broadcast to F's FS-KDEs, shape {F.shape[:-1]} "
            "(F's shape without k, its last axis): give one angle, or one per FS-KDE"
        ) from None
    out = _times_powers(F, np.exp(-1j * phi))  # F_k e^{-ikφ}, each pixel rounded alone
    return out.astype(_result_dtypes(F.dtype)[0], copy=False)
