"""Axial orientation, coherence and energy of the structures in an image, from its FS-KDE field.

The local FS-KDE of an image (paper, section 2.3) holds, at every pixel,

.. math:: F_k = H_k \\sum_n \\varphi_n\\, w_n\\, e^{-ik\\theta_n}

(eq. 1 with the window φ, which sums to one, in place of 1/N), where :math:`w_n = |g_n|` and
:math:`\\theta_n = \\arg g_n` are the magnitude and angle of the gradient
:math:`g = I_x + i I_y` of the n-th pixel in the window, and :math:`H_k` the cos^2K kernel's
coefficients (eqs. 4–7). Three numbers per pixel follow from F_0 and F_2 alone (ℓ >= 3):

* **energy** :math:`E = F_0 / H_0 = \\sum_n \\varphi_n |g_n|`, the window's mean gradient
  magnitude. :math:`H_0 = 1/(2\\pi)` for every cos^2K kernel (exact, eq. 6, or normal, eq. 7),
  so :math:`E = 2\\pi F_0`. Units: the image's intensity per pixel.
* **coherence** :math:`C = |\\sum_n \\varphi_n w_n e^{2i\\theta_n}| / \\sum_n \\varphi_n w_n
  = (|F_2| / H_2) / (F_0 / H_0)`, the weighted mean resultant length of the *doubled* angles, in
  [0, 1]: 1 when every gradient in the window lies on one axis (θ or θ + π: both sides of a
  line, both flanks of a fibre), near 0 for isotropic texture or noise. The kernel's smoothing
  is divided out by :math:`H_2 / H_0` (exact: :math:`K(K-1) / ((K+1)(K+2))`; normal:
  :math:`e^{-4/K}`), so C does not depend on the order K.
* **orientation** :math:`\\omega = (-\\arg F_2 / 2 + \\pi / 2) \\bmod \\pi`. :math:`-\\arg F_2 / 2`
  is the weighted mean *axis* of the gradients (the doubled-angle mean, halved); the structures —
  edges, lines, fibres, stripes — run perpendicular to their gradients, so ω is the axis *along*
  them, in [0, π).

**Convention** (that of the gradient, :mod:`xfskde.gradients`): x runs along columns to the
right, y along rows *downwards*, and angles turn from +x towards +y, i.e. **clockwise on the
screen**. So ω = 0 is a horizontal structure (a row-wise stripe), ω = π/2 a vertical one,
ω = π/4 a diagonal running from top-left to bottom-right and ω = 3π/4 one running from
bottom-left to top-right. Tools that measure counter-clockwise with y up (a mathematical
frame) report :math:`-\\omega \\bmod \\pi`: check a tool's sense on a test image first.
``np.rot90(image)`` (90° counter-clockwise on screen) gives ω - π/2 (mod π) at the rotated
pixel.

**Accuracy.** The maps inherit the bias of the field's gradient operator (``gradient=`` of
:func:`xfskde.local_fskde`): on a grating of period P pixels the paper's central differences
pull ω by up to 94°/P² towards the nearer diagonal (1.5° at P = 8), Scharr's operator by about
a tenth of that (0.16°) and Gaussian derivatives of σ = 1 by about a thousandth (0.001°);
docs/orientation.md tabulates them. The field's ``gradient`` attr records which was used.

**Relation to the structure tensor.** With :math:`J = \\varphi * \\begin{pmatrix} I_x^2 & I_xI_y
\\\\ I_xI_y & I_y^2\\end{pmatrix}` (OrientationJ, scikit-image's ``structure_tensor``),
:math:`g^2 = (I_x^2 - I_y^2) + 2i I_xI_y = |g|^2 e^{2i\\theta}`, hence

.. math:: \\varphi * g^2 = (J_{xx} - J_{yy}) + 2i J_{xy},\\qquad \\varphi * |g|^2 = J_{xx} + J_{yy},

the structure tensor's orientation is :math:`\\tfrac12 \\arg(\\varphi * g^2) + \\pi/2` and its
coherence :math:`(\\lambda_1 - \\lambda_2)/(\\lambda_1 + \\lambda_2) = |\\varphi * g^2| /
(\\varphi * |g|^2)`: the same doubled-angle mean, **weighted by** :math:`|g|^2`. The FS-KDE weighs
each gradient by :math:`W = |g|` instead: :math:`\\overline{F_2}/H_2 = \\varphi * (g^2/|g|)` is the
structure tensor of the gradient rescaled to magnitude :math:`\\sqrt{|g|}`. The two agree exactly
when the window holds one axis (a grating, a straight edge); in a window that mixes directions
the structure tensor leans further towards the strongest edges, and on noise its coherence floor
is about :math:`\\sqrt{\\pi/2}` times higher (:math:`E|g|^4/(E|g|^2)^2 = 2` against
:math:`E|g|^2/(E|g|)^2 = 4/\\pi` for a complex Gaussian gradient). Likewise OrientationJ's energy
is the trace of J, the mean of :math:`|g|^2`; ours is the mean of :math:`|g|`.

Each function takes a coefficient array ``F[..., k]`` (NumPy or Dask, k = 0 .. ℓ-1 along the
last axis) or a labelled ``(y, x, k)`` field (:func:`xfskde.local_fskde` on a DataArray: read by
its ``k`` coordinate, which must hold k = 0 .. ℓ-1, :func:`xfskde.fields.check_field`), and
returns the same kind: a DataArray keeps the field's dims, coords and attrs, gets a name,
``units`` and ``long_name``, and stays lazy on Dask. The ``.fskde`` accessor offers them as
:meth:`~xfskde.accessor.FskdeAccessor.orientation`, ``.coherence()`` and ``.energy()``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

from .density import _apply_k
from .exceptions import DimensionError, ParameterError
from .fields import check_field
from .kernel import Cos2KKernel

__all__ = ["coherence", "energy", "h2_over_h0", "kernel_of", "orientation"]

#: The angle convention of :func:`orientation`, recorded in the DataArray's attrs.
ORIENTATION_CONVENTION = (
    "axial orientation of the structures (along edges, lines, fibres; perpendicular to the mean "
    "gradient axis), radians in [0, pi); x along columns, y along rows (downwards), clockwise on "
    "screen: 0 = horizontal, pi/2 = vertical, pi/4 = top-left to bottom-right"
)


def kernel_of(field: xr.DataArray) -> Cos2KKernel:
    """The cos^2K kernel recorded in a coefficient field's attrs (order, approximation, eps).

    :func:`xfskde.local_fskde` and the Zarr stores write these attrs.

    Parameters
    ----------
    field : xarray.DataArray
        A ``(y, x, k)`` coefficient field.

    Returns
    -------
    Cos2KKernel
        Of the recorded ``order``, ``approximation`` (default ``"auto"``) and ``eps`` (None
        when absent or ``"none"``).

    Raises
    ------
    ParameterError
        When the attrs do not record the kernel (pass ``kernel=`` to :func:`coherence` then).
    DimensionError
        For a ``field`` that is not a coefficient field (:func:`xfskde.fields.check_field`).
    """
    attrs = check_field(field).attrs
    if attrs.get("kernel", "cos^2K") != "cos^2K" or "order" not in attrs:
        raise ParameterError(
            "this field's attrs do not record a cos^2K kernel (no 'order' attr): pass the kernel "
            "used to compute it, e.g. coherence(field, kernel=xfskde.Cos2KKernel(8))"
        )
    eps = attrs.get("eps", "none")
    return Cos2KKernel(
        int(attrs["order"]),
        approximation=attrs.get("approximation", "auto"),
        eps=None if eps in (None, "none") else float(eps),
    )


def h2_over_h0(kernel: Cos2KKernel | float) -> float:
    """The ratio :math:`H_2 / H_0` of a cos^2K kernel (eqs. 4–7) that :func:`coherence` divides out.

    Parameters
    ----------
    kernel : Cos2KKernel or float
        The kernel (exact: :math:`K(K-1)/((K+1)(K+2))`, eq. 6; normal: :math:`e^{-4/K}`, eq. 7),
        or the ratio itself, a number in (0, 1].

    Returns
    -------
    float
        :math:`H_2 / H_0` in (0, 1].

    Raises
    ------
    ParameterError
        For a kernel that keeps no F_2 (ℓ < 3), and a ratio that is not a number in (0, 1].
    TypeError
        For a bool (no ratio).
    """
    if isinstance(kernel, Cos2KKernel):
        if kernel.length < 3:
            raise ParameterError(
                f"{kernel!r} keeps no F_2 (ℓ = {kernel.length}): coherence and orientation need "
                "ℓ >= 3, i.e. order >= 2 and eps <= exp(-4/order)"
            )
        h = kernel.coefficients
        ratio = float(h[2] / h[0])
    else:
        if isinstance(kernel, bool | np.bool_):
            raise TypeError(
                f"kernel must be a Cos2KKernel or the ratio H_2/H_0 in (0, 1], got {kernel!r}"
            )
        try:
            ratio = float(kernel)
        except (TypeError, ValueError):
            raise ParameterError(
                f"kernel must be a Cos2KKernel or the ratio H_2/H_0, got {kernel!r}"
            ) from None
    if not (math.isfinite(ratio) and 0 < ratio <= 1):
        raise ParameterError(f"H_2/H_0 must be in (0, 1], got {ratio!r}")
    return ratio


# --- NumPy kernels: one FS-KDE per row of F[..., k] --------------------------------------------


def _orientation(F: np.ndarray) -> np.ndarray:
    F2 = F[..., 2]
    real = np.float32 if F.dtype == np.complex64 else np.float64
    gradient_axis = -0.5 * np.angle(F2).astype(np.float64)  # (-π/2, π/2]
    out = np.mod(gradient_axis + 0.5 * np.pi, np.pi).astype(real)
    # [0, π) in the output's precision: float32(π) > π, and rounding may reach it
    out = np.where(out >= real(np.pi), real(0.0), out)
    return np.where(np.abs(F2) > 0, out, real(np.nan))


def _energy(F: np.ndarray) -> np.ndarray:
    return (2 * np.pi) * F[..., 0].real  # F_0 / H_0 with H_0 = 1/(2π)


def _coherence(F: np.ndarray, ratio: float) -> np.ndarray:
    F0 = F[..., 0].real
    positive = F0 > 0
    c = np.abs(F[..., 2]) / (ratio * np.where(positive, F0, 1))
    # |Σ φ w e^{2iθ}| <= Σ φ w for a non-negative window: only rounding can exceed 1
    c = np.where(positive, np.minimum(c, 1), 0)
    return np.where(np.isnan(F0), np.nan, c).astype(F0.dtype)  # a missing pixel: no value


# --- the faces: NumPy, Dask, xarray --------------------------------------------------------------


def _check_length(length: int, needed: int) -> None:
    if length < needed:
        raise DimensionError(
            f"orientation and coherence need F_0 and F_2: at least 3 coefficients along k, got "
            f"{length}; compute the field with order >= 2 (and eps <= exp(-4/order))"
        )


def _apply(
    func: Callable[[np.ndarray], np.ndarray],
    F: Any,
    *,
    name: str,
    long_name: str,
    units: str,
    extra_attrs: dict[str, Any] | None = None,
    needed: int = 3,
) -> Any:
    """``func`` on every FS-KDE of a NumPy, Dask or labelled array, returning the same kind."""
    if isinstance(F, xr.DataArray | xr.Dataset):
        field = check_field(F)  # its k coordinate 0 .. ℓ-1, in k order
        _check_length(field.sizes["k"], needed)
        out = _apply_k(func, field, out_dim=None, name=name, long_name=long_name)
        out.attrs["units"] = units
        out.attrs.update(extra_attrs or {})
        return out
    if type(F).__module__.startswith("dask"):
        _check_length(F.shape[-1], needed)
        F = F.rechunk({F.ndim - 1: -1})
        probe = func(np.zeros((1, F.shape[-1]), F.dtype))
        return F.map_blocks(func, drop_axis=F.ndim - 1, dtype=probe.dtype, meta=probe[:0])
    F = np.asarray(F)
    if F.ndim == 0 or F.dtype.kind not in "cfiu":
        raise DimensionError(
            f"F must be a numeric array of FS-KDEs along its last axis, got "
            f"{'a scalar' if F.ndim == 0 else f'an array of {F.dtype}'}"
        )
    _check_length(F.shape[-1], needed)
    return func(F)


def orientation(F: Any) -> Any:
    """Axial orientation of the structures per FS-KDE, from F_2 (eq. 1, doubled angles).

    .. math:: \\omega = \\Big(-\\tfrac12 \\arg F_2 + \\tfrac{\\pi}{2}\\Big) \\bmod \\pi

    :math:`F_2 = H_2 \\sum_n \\varphi_n w_n e^{-2i\\theta_n}` with :math:`H_2 > 0`, so
    :math:`-\\tfrac12 \\arg F_2` is the weighted mean axis of the gradient angles (θ and θ + π
    count alike); the structures run perpendicular to it. The result is the axis *along* the
    edges, lines or fibres: that of the structure tensor's second eigenvector and of
    OrientationJ, up to the weighting (|g| here, |g|² there: see :mod:`xfskde.orientation`)
    and the sense of rotation.

    Angles, as displayed (x to the right along columns, y **down** along rows, turning from +x
    towards +y, i.e. clockwise on the screen):

    ======  ==================================================
    ω       the structures run
    ======  ==================================================
    0       horizontally (left–right), e.g. rows of a stripe
    π/4     from top-left down to bottom-right
    π/2     vertically (top–bottom)
    3π/4    from bottom-left up to top-right
    ======  ==================================================

    For counter-clockwise angles with y up (a mathematical frame), take ``-ω mod π``; for the mean
    gradient axis, ``(ω + π/2) mod π``.

    Parameters
    ----------
    F : numpy.ndarray, dask.array.Array or xarray.DataArray
        FS-KDE coefficients k = 0 .. ℓ-1 along the last axis (ℓ >= 3), or a labelled
        ``(y, x, k)`` field.

    Returns
    -------
    numpy.ndarray, dask.array.Array or xarray.DataArray, float
        Radians in [0, π), shape ``F.shape[:-1]``, float32 for complex64 coefficients; NaN where
        F_2 = 0 (no axis: a flat window, or perfectly isotropic gradients). A DataArray is named
        ``"orientation"`` (``units="rad"``) and keeps the field's dims, coords and attrs.

    Raises
    ------
    DimensionError
        For fewer than 3 coefficients along k, an array that holds no numbers, and
        labelled input that is not a coefficient field (:func:`xfskde.fields.check_field`).
    """
    return _apply(
        _orientation,
        F,
        name="orientation",
        long_name="axial orientation of structures (along edges and fibres)",
        units="rad",
        extra_attrs={"orientation_convention": ORIENTATION_CONVENTION},
    )


def coherence(F: Any, kernel: Cos2KKernel | float | None = None) -> Any:
    """Coherence per FS-KDE: the weighted mean resultant length of the doubled angles, in [0, 1].

    .. math:: C = \\frac{|\\sum_n \\varphi_n w_n e^{2i\\theta_n}|}{\\sum_n \\varphi_n w_n}
              = \\frac{|F_2| / H_2}{F_0 / H_0}

    (eq. 1; :math:`H_k` from eqs. 4–7). 1 when all the window's gradients lie on one axis, 0
    when their doubled angles balance out (isotropic texture; on white noise the floor is about
    :math:`\\sqrt{\\sum \\varphi^2}` for a window φ). It is the structure tensor's
    :math:`(\\lambda_1 - \\lambda_2)/(\\lambda_1 + \\lambda_2)` with weights |g| instead of
    |g|² (see :mod:`xfskde.orientation`).

    Parameters
    ----------
    F : numpy.ndarray, dask.array.Array or xarray.DataArray
        FS-KDE coefficients k = 0 .. ℓ-1 along the last axis (ℓ >= 3), or a labelled
        ``(y, x, k)`` field.
    kernel : Cos2KKernel or float, optional
        The kernel the coefficients were computed with, or its ratio :math:`H_2/H_0`
        (:func:`h2_over_h0`). Required for arrays; for a DataArray, None (default) reads it from
        the field's attrs (:func:`kernel_of`).

    Returns
    -------
    numpy.ndarray, dask.array.Array or xarray.DataArray, float
        Values in [0, 1] (rounding above 1 is clipped), shape ``F.shape[:-1]``; 0 where
        F_0 = 0 (no gradient in the window), NaN where F is (a missing pixel); float32 for
        complex64 coefficients. A DataArray is named ``"coherence"`` (``units="1"``, the
        ratio used in its ``h2_over_h0`` attr).

    Raises
    ------
    ParameterError
        For an array without ``kernel``, a DataArray whose attrs record no kernel, and a
        ``kernel`` that keeps no F_2 or a ratio outside (0, 1] (:func:`h2_over_h0`).
    DimensionError
        For fewer than 3 coefficients along k, an array that holds no numbers, and
        labelled input that is not a coefficient field (:func:`xfskde.fields.check_field`).
    TypeError
        For a bool ``kernel`` (no ratio).
    """
    if isinstance(F, xr.Dataset):
        check_field(F)  # refused, with which variable to pass
    if kernel is None:
        if not isinstance(F, xr.DataArray):
            raise ParameterError(
                "coherence of a coefficient array needs the kernel it was computed with: "
                "coherence(F, xfskde.Cos2KKernel(order, eps=...)) (a labelled field records it)"
            )
        kernel = kernel_of(F)
    ratio = h2_over_h0(kernel)

    def func(values: np.ndarray) -> np.ndarray:
        return _coherence(values, ratio)

    return _apply(
        func,
        F,
        name="coherence",
        long_name="coherence of gradient axes (|g|-weighted mean resultant length of 2*theta)",
        units="1",
        extra_attrs={"h2_over_h0": ratio},
    )


def energy(F: Any, image_units: str | None = None) -> Any:
    """Energy per FS-KDE: the window's mean gradient magnitude, :math:`F_0 / H_0 = 2\\pi F_0`.

    .. math:: E = \\sum_n \\varphi_n |g_n| = F_0 / H_0,\\qquad H_0 = \\frac{1}{2\\pi}

    (eq. 1 at k = 0; :math:`H_0 = 1/(2\\pi)` for every cos^2K kernel, eqs. 6–7; the window sums
    to one). This is the mean of :math:`|g|`, in intensity per pixel — OrientationJ's energy is
    the structure tensor's trace, the mean of :math:`|g|^2`. Gradients are central differences
    of the pixel values as they are (a uint8 step of 10 gives |g| = 5) by default, and every
    other ``gradient=`` operator is scaled to the same units (a unit ramp gives |g| = 1), per
    *pixel* whatever the field's coordinates; under ``nan_policy="omit"`` omitted gradients
    count as zeros.

    A field of an image whose values are stored scaled (a GeoTIFF of reflectance × 10 000
    with a GDAL scale of 0.0001: the field records ``input_scale_factor``) gives the energy
    of the decoded values, times that scale: gradients of reflectance, not of the stored
    integers.

    Parameters
    ----------
    F : numpy.ndarray, dask.array.Array or xarray.DataArray
        FS-KDE coefficients k = 0 .. ℓ-1 along the last axis (any ℓ >= 1: only F_0 is read), or
        a labelled ``(y, x, k)`` field.
    image_units : str, optional
        The units of the image's values, for a DataArray's ``units`` attr:
        ``f"{image_units}/pixel"``. Default: those the field records (``input_units``: a
        GeoTIFF band's unit), else ``"1/pixel"`` (intensities as plain numbers).

    Returns
    -------
    numpy.ndarray, dask.array.Array or xarray.DataArray, float
        Non-negative, shape ``F.shape[:-1]`` (NaN where F_0 is: a missing pixel); float32
        for complex64 coefficients. A DataArray is named ``"energy"``, in the units above.

    Raises
    ------
    DimensionError
        For fewer than 1 coefficient along k, an array that holds no numbers, and
        labelled input that is not a coefficient field (:func:`xfskde.fields.check_field`).
    TypeError
        For ``image_units`` that are not text.
    """
    if image_units is not None and not isinstance(image_units, str):
        raise TypeError(
            f"image_units must be the image's units as text (for example 'm'), got {image_units!r}"
        )
    labelled = isinstance(F, xr.DataArray)
    scale = float(F.attrs.get("input_scale_factor", 1.0)) if labelled else 1.0
    named = image_units if image_units is not None else (
        F.attrs.get("input_units") if labelled else None
    )  # fmt: skip
    units = "1/pixel" if named is None else f"{named}/pixel"
    out = _apply(
        _energy,
        F,
        name="energy",
        long_name="local mean gradient magnitude (image intensity per pixel)",
        units=units,
        needed=1,
    )
    if scale == 1.0:
        return out
    return (out * scale).assign_attrs(out.attrs, input_scale_factor=scale)
