"""Image gradients as complex numbers, and the conventions of angles and boundaries.

**Angle convention.** For an image ``I[y, x]`` (y along rows, downwards; x along columns, to the
right) the complex gradient is

.. math:: g = I_x + i\\,I_y,\\qquad I_x = \\tfrac12(I[y, x+1] - I[y, x-1]),\\quad
          I_y = \\tfrac12(I[y+1, x] - I[y-1, x]),

its weight is :math:`W = |g|` and its angle :math:`\\Theta = \\arg g \\in (-\\pi, \\pi]`,
measured from the +x (column) axis towards the +y (row) axis — clockwise as an image is
displayed with its origin at the top left. Rotating an image by ``np.rot90`` (90°
counter-clockwise as displayed) subtracts π/2 from every angle: the FS-KDE of the rotated
image at the rotated pixel equals
``rotate(F, -np.pi / 2)`` of the original's.

**Colour.** With a channel axis, each pixel uses the channel with the largest gradient magnitude,
as HOG does (Dalal & Triggs 2005; scikit-image ``hog(channel_axis=...)``).

**Integers.** Integer images are converted to floating point before differencing, so ``uint8``
never wraps around; 8- and 16-bit images give float32 results, wider integers float64.

**Boundaries.** Pixels outside the image are read with ``scipy.ndimage``'s modes: ``"reflect"``
(d c b a | a b c d | d c b a, the default), ``"mirror"`` (d c b | a b c d | c b a),
``"nearest"``, ``"wrap"`` and ``"constant"`` (``cval``). The gradient of a pixel near the edge is
the operator applied to the image extended by the mode — also for pixels *beyond* the edge that
a window reaches, so a block's result never depends on where the block lies.

**Operators** (:class:`GradientOperator`, ``gradient=`` of :func:`gradient` and
:func:`xfskde.local_fskde`). Each is separable, ``I_x = s(y) ⊗ d(x)`` and ``I_y = d(y) ⊗ s(x)``
(correlation taps over offsets ``-radius .. radius``), with a derivative ``d`` whose response to
a unit ramp is exactly 1 (Σ t·d(t) = 1) and a smoothing ``s`` that sums to 1, so |g| is in
image units per pixel whichever operator is used:

* ``"central"`` (default; the paper's gradient, section 2.3): d = (-1, 0, 1)/2, no smoothing;
  radius 1. Computed inside the compiled core (:mod:`xfskde._core`), row by row.
* ``"scharr"``: d = (-1, 0, 1)/2, s = (3, 10, 3)/16 — Scharr's operator divided by 32; radius 1.
* ``"gaussian"``: derivatives of a Gaussian of standard deviation σ = ``gradient_scale``
  pixels, sampled at the integers within radius ⌈4σ⌉ (as the Gaussian window): s ∝ e^{-t²/2σ²}
  summing to 1, d ∝ t·e^{-t²/2σ²} with Σ t·d(t) = 1 (``scipy.ndimage.gaussian_filter``'s
  ``order=1`` taps, rescaled so that a linear ramp's gradient is exact).

Central differences are the most anisotropic (on a grating of period P the angle is biased by
up to 94°/P², 1.5° at P = 8); Scharr cuts that tenfold and Gaussian derivatives a thousandfold,
at the price of a wider stencil (a larger halo for blocks, and more pixels lost around a missing
one) and of smoothing the image (docs/orientation.md, "Accuracy").

**Missing pixels.** Under ``nan_policy="omit"`` a gradient *touches* every pixel of its stencil
that has a non-zero tap in I_x or I_y: the 4 neighbours for central differences, the 8
neighbours for Scharr, the (2r+1)² square less its centre for Gaussian derivatives (r the
radius). A gradient that touches a non-finite pixel is omitted (zero weight); with several
channels only the channels it touches are skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import ndimage

from . import _core
from ._pictures import pixels
from ._validation import _check_choice
from .exceptions import DimensionError, ParameterError
from .windows import GAUSSIAN_TRUNCATE

__all__ = [
    "BOUNDARY_MODES",
    "GRADIENT_OPERATORS",
    "NAN_POLICIES",
    "GradientOperator",
    "angle_bins",
    "gradient",
    "result_float_dtype",
]

Boundary = Literal["reflect", "mirror", "nearest", "wrap", "constant"]
BOUNDARY_MODES: tuple[str, ...] = ("reflect", "mirror", "nearest", "wrap", "constant")
NAN_POLICIES: tuple[str, ...] = ("raise", "omit")
Operator = Literal["central", "scharr", "gaussian"]
#: The gradient operators, ``central`` (the paper's, the default) first.
GRADIENT_OPERATORS: tuple[str, ...] = ("central", "scharr", "gaussian")


@dataclass(frozen=True)
class GradientOperator:
    """A gradient operator: its kind, its scale and the radius of its stencil.

    Parameters
    ----------
    kind : {"central", "scharr", "gaussian"}
        See the module docstring; ``"central"`` is the paper's gradient (section 2.3).
    scale : float
        σ of ``"gaussian"`` in pixels (default 1). The other operators have no scale and take
        only the default, 1.
    """

    kind: str = "central"
    scale: float = 1.0

    def __post_init__(self) -> None:
        _check_choice("gradient", self.kind, GRADIENT_OPERATORS)
        try:
            scale = float(self.scale)
        except (TypeError, ValueError):
            raise ParameterError(
                f"gradient_scale must be a positive number of pixels, got {self.scale!r}"
            ) from None
        if not math.isfinite(scale) or scale <= 0:
            raise ParameterError(
                f"gradient_scale must be a positive number of pixels, got {self.scale!r}"
            )
        if self.kind != "gaussian" and scale != 1.0:
            raise ParameterError(
                f"gradient_scale is the sigma of gradient='gaussian'; gradient={self.kind!r} has "
                f"no scale: drop gradient_scale={self.scale!r} or pass gradient='gaussian'"
            )
        object.__setattr__(self, "scale", scale)

    @property
    def radius(self) -> int:
        """How far the stencil reaches from its pixel: 1, or ⌈4σ⌉ (at least 1) for Gaussians.

        A block needs the window's radius plus this many pixels of its neighbours
        (:meth:`xfskde.Window.halo`).
        """
        if self.kind == "gaussian":
            return max(1, math.ceil(GAUSSIAN_TRUNCATE * self.scale))
        return 1

    def taps(self) -> tuple[np.ndarray, np.ndarray]:
        """The 1-D correlation taps ``(d, s)`` over offsets ``-radius .. radius``.

        ``I_x = s(y) ⊗ d(x)``, ``I_y = d(y) ⊗ s(x)``: ``d`` differentiates (Σ t·d(t) = 1, so a
        unit ramp gives 1) and ``s`` smooths across (Σ s = 1). Central differences smooth with
        (0, 1, 0).

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            ``d`` and ``s``, float64, each of length ``2 * radius + 1`` (3 for ``"central"``
            and ``"scharr"``).
        """
        if self.kind == "gaussian":
            t = np.arange(-self.radius, self.radius + 1, dtype=np.float64)
            bell = np.exp(-0.5 * (t / self.scale) ** 2)
            return t * bell / np.sum(t * t * bell), bell / bell.sum()
        d = np.array([-0.5, 0.0, 0.5])
        if self.kind == "scharr":
            return d, np.array([3.0, 10.0, 3.0]) / 16.0
        return d, np.array([0.0, 1.0, 0.0])

    def describe(self) -> str:
        """How the gradient was computed, in words (the result's ``angle_convention``).

        Returns
        -------
        str
            ``"central differences"``, ``"Scharr derivatives (...)"`` or ``"Gaussian
            derivatives, sigma = <scale> pixels"``.
        """
        if self.kind == "gaussian":
            return f"Gaussian derivatives, sigma = {self.scale:g} pixels"
        if self.kind == "scharr":
            return "Scharr derivatives ((3, 10, 3)/16-smoothed central differences)"
        return "central differences"


_NUMPY_PAD_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap"}


def angle_bins(g: np.ndarray, n_bins: int) -> np.ndarray:
    """Histogram bin of each gradient angle arg g: THE angle-bin rule of xfskde.

    The bins are (-π + 2πj/n, -π + 2π(j+1)/n], j = 0 .. n-1, over (-π, π]. The angle -π (arg of
    a gradient whose imaginary part is -0.0) is the angle π and falls in the last bin.

    Where n is a multiple of 4, each quarter of the circle holds n/4 bins, and a gradient's
    quarter is told from the signs of its components, exactly; the gradient is turned into
    the quarter (0, π/2] by swapping and negating them (exact too), and only there is its
    angle measured. So turning an image by 90° (:func:`numpy.rot90`: every g times ±i)
    moves every gradient by exactly n/4 bins — one on a bin's edge (|Ix| = |Iy|) included,
    which ``atan2`` of the turned components would put on either side.

    Parameters
    ----------
    g : numpy.ndarray, complex
        Gradients (:func:`gradient`).
    n_bins : int
        The number of bins n >= 1 over the circle, each 2π/n radians wide.

    Returns
    -------
    numpy.ndarray of int64, the shape of ``g``
        The bin j in 0 .. n-1 of each angle. A zero gradient, of weight 0, falls in bin 0
        where n is a multiple of 4, else in the bin of the angle 0, ⌈n/2⌉ - 1.
    """
    width = 2 * np.pi / n_bins
    if n_bins % 4:
        j = np.ceil((np.angle(g) + np.pi) / width).astype(np.int64) - 1
        return np.mod(j, n_bins)
    x, y = np.real(g), np.imag(g)
    # the quarters (-π, -π/2], (-π/2, 0], (0, π/2], (π/2, π]: 0 .. 3 (0 for g = 0); turned
    # into (0, π/2], g's components there are |Ix|, |Iy| (even quarters) or |Iy|, |Ix| (odd)
    upper = (y > 0) | ((y == 0) & (x < 0))
    quarter = np.where(upper, 2 + (x < 0), x > 0).astype(np.int64)
    odd = (quarter & 1).astype(bool)
    ax, ay = np.abs(x), np.abs(y)
    per_quarter = n_bins // 4
    within = np.ceil(np.arctan2(np.where(odd, ax, ay), np.where(odd, ay, ax)) / width)
    return quarter * per_quarter + np.clip(within.astype(np.int64) - 1, 0, per_quarter - 1)


def result_float_dtype(dtype: np.typing.DTypeLike) -> np.dtype:
    """Floating dtype of the computation for an image dtype: float32 or float64.

    float32 (and smaller floats, booleans and integers of up to 16 bits) → float32; float64,
    wider integers and wider floats (longdouble) → float64: the compiled core computes in at
    most float64 (a long double image's values are rounded to it).

    Parameters
    ----------
    dtype : numpy.dtype or anything :class:`numpy.dtype` takes
        The image's dtype.

    Returns
    -------
    numpy.dtype
        float32 or float64.

    Raises
    ------
    TypeError
        For complex, object, string or other dtypes that do not hold real numbers.
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf":
        raise TypeError(f"image must hold real numbers (bool, integer or float), got dtype {dtype}")
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    if dtype.kind == "f" and dtype.itemsize > 8:
        return np.dtype(np.float64)
    return np.promote_types(dtype, np.float32)


def boundary_index_map(
    n: int, lo: int, hi: int, mode: str, src_start: int = 0, src_len: int | None = None
) -> np.ndarray:
    """Where global indices ``lo .. hi-1`` of an axis of length ``n`` live in a source array.

    The source holds global indices ``src_start .. src_start + src_len - 1`` (default: the whole
    axis). Indices it holds are read directly (so a Dask block's halo is used as is); the others
    are mapped into the image by the boundary ``mode`` and then into the source. ``-1`` marks a
    pixel outside the image in ``constant`` mode.
    """
    _check_choice("boundary", mode, BOUNDARY_MODES)
    if src_len is None:
        src_len = n
    g = np.arange(lo, hi, dtype=np.int64)
    inside = (g >= src_start) & (g < src_start + src_len)
    if mode == "constant":
        mapped = np.where((g >= 0) & (g < n), g, -1)
    else:
        # np.pad applies the mode repeatedly, so pads wider than the image are handled too
        pad_lo, pad_hi = max(0, -lo), max(0, hi - n)
        padded = np.pad(np.arange(n, dtype=np.int64), (pad_lo, pad_hi), _NUMPY_PAD_MODE[mode])
        mapped = padded[g + pad_lo]
    local = np.where(inside, g - src_start, np.where(mapped >= 0, mapped - src_start, -1))
    outside_source = ~inside & (mapped >= 0) & ((local < 0) | (local >= src_len))
    if np.any(outside_source):
        raise ValueError(
            "the block does not hold the pixels its boundary needs; chunks must be at least as "
            "large as the overlap depth"
        )
    return local


def compiled_dtype(dtype: np.typing.DTypeLike) -> np.dtype:
    """The dtype in which the compiled code reads an image of ``dtype``: half floats as
    float32 and long doubles as float64 (the nearest it takes, float16's values exactly),
    any dtype stored in the other byte order (big-endian FITS or raw data, ``">u2"``) in the
    machine's own; others as they are.

    Parameters
    ----------
    dtype : numpy.dtype or anything :class:`numpy.dtype` takes
        The image's dtype.

    Returns
    -------
    numpy.dtype
    """
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    if dtype.kind == "f" and dtype.itemsize > 8:
        return np.dtype(np.float64)
    return dtype


def readable(image: np.ndarray) -> np.ndarray:
    """The image as the compiled core reads it: in :func:`compiled_dtype`, booleans viewed as
    uint8."""
    wanted = compiled_dtype(image.dtype)
    if wanted != image.dtype:
        image = image.astype(wanted)
    if image.dtype.kind == "b":
        return image.view(np.uint8)
    return image


def as_channels_first(image: np.ndarray, channel_axis: int | None) -> np.ndarray:
    """View an image as (C, H, W): (H, W) gains a length-1 channel axis."""
    image = readable(np.asarray(image))
    if channel_axis is None:
        if image.ndim != 2:
            raise DimensionError(
                f"image must be 2-D (y, x) when channel_axis is None, got shape {image.shape}; "
                "pass channel_axis=-1 (or 0) for a colour image"
            )
        return image[None]
    if image.ndim != 3:
        raise DimensionError(
            f"image must be 3-D with channel_axis={channel_axis}, got shape {image.shape}"
        )
    return np.moveaxis(image, channel_axis, 0)


def check_finite(image: np.ndarray, nan_policy: str) -> None:
    """Apply the NaN policy: ``"raise"`` refuses NaN/inf pixels, ``"omit"`` lets them through."""
    _check_choice("nan_policy", nan_policy, NAN_POLICIES)
    if nan_policy == "raise" and image.dtype.kind == "f" and not np.isfinite(image).all():
        raise ParameterError(
            "image contains NaN or infinite pixels; pass nan_policy='omit' to give every "
            "gradient that touches them zero weight, or fill them first"
        )


def _take(a: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """``np.take(a, index, axis)``, as a view where ``index`` is a run of consecutive indices."""
    first = int(index[0])
    if first >= 0 and np.array_equal(index, np.arange(first, first + index.size)):
        return a[(slice(None),) * axis + (slice(first, first + index.size),)]
    return np.take(a, np.maximum(index, 0), axis=axis)


def gather(src: np.ndarray, rowmap: np.ndarray, colmap: np.ndarray, cval: float) -> np.ndarray:
    """The pixels of ``src`` (C, h, w) at rows ``rowmap`` × columns ``colmap``, in its dtype.

    The maps come from :func:`boundary_index_map`; ``-1`` (outside the image in ``constant``
    mode) reads ``cval`` (the result is then float64). Where both maps are runs of consecutive
    indices (inside the image, or a Dask block's halo) the result is a view of ``src``.
    """
    out = _take(_take(src, rowmap, 1), colmap, 2)
    if np.any(rowmap < 0) or np.any(colmap < 0):
        out = out.astype(np.float64)
        out[:, rowmap < 0, :] = cval
        out[:, :, colmap < 0] = cval
    return out


def stencil_gradient(padded: np.ndarray, operator: GradientOperator) -> np.ndarray:
    """``(I_x, I_y)`` float64 of a (C, h + 2r, w + 2r) block on its (h, w) interior (r: radius).

    ``scipy.ndimage.correlate1d`` with the operator's :meth:`~GradientOperator.taps` — ``I_x``
    smooths along y then differentiates along x, ``I_y`` differentiates along y then smooths
    along x — keeping only the outputs whose whole stencil lies in ``padded``: the caller extends
    the image by its boundary mode first. A gradient whose stencil touches a non-finite pixel is
    NaN; with several channels each pixel takes the channel of largest |g|² (the first on
    ties), passing over NaN ones unless every channel's is — the rule of the compiled core
    (:func:`xfskde._core._gradient_row`).

    Returns
    -------
    numpy.ndarray, (2, h, w) float64
        ``I_x`` then ``I_y`` (a view of a (2, h, w + 2r) array).
    """
    r = operator.radius
    d, s = operator.taps()
    _, height, width = padded.shape
    best = out = None
    for channel in padded:
        bad = ~np.isfinite(channel)
        missing = bool(bad.any())
        if missing:
            channel = np.where(bad, 0.0, channel)
        planes = np.empty((2, height - 2 * r, width), dtype=np.float64)
        across = ndimage.correlate1d(channel, s, axis=0, output=np.float64)[r:-r]
        ndimage.correlate1d(across, d, axis=1, output=planes[0])
        down = ndimage.correlate1d(channel, d, axis=0, output=np.float64)[r:-r]
        ndimage.correlate1d(down, s, axis=1, output=planes[1])
        planes = planes[:, :, r:-r]
        if missing:
            footprint = np.ones((2 * r + 1, 2 * r + 1), dtype=bool)
            footprint[r, r] = False  # the centre has a zero tap in both I_x and I_y
            touched = ndimage.binary_dilation(bad, structure=footprint)[r:-r, r:-r]
            planes[:, touched] = np.nan
        if len(padded) == 1:
            return planes
        with np.errstate(over="ignore", invalid="ignore"):
            m = planes[0] * planes[0] + planes[1] * planes[1]
        if out is None:
            out, best = planes, m
        else:
            take = (m > best) | np.isnan(best)
            out = np.where(take, planes, out)
            best = np.where(take, m, best)
    return out


def gradient(
    image: np.typing.ArrayLike,
    *,
    channel_axis: int | None = None,
    boundary: Boundary = "reflect",
    cval: float = 0.0,
    nan_policy: Literal["raise", "omit"] = "raise",
    gradient: Operator = "central",
    gradient_scale: float = 1.0,
) -> np.ndarray:
    """Complex image gradient :math:`g = I_x + i I_y` (section 2.3; see the module conventions).

    Parameters
    ----------
    image : array_like, (y, x) or with a channel axis
        Any real dtype (bool, integer or float); integers are converted to float first. A
        PIL picture is read as its file's readers read it, its transparent pixels missing.
    channel_axis : int, optional
        Axis of colour channels (default None: a 2-D image); each pixel takes the channel
        with the largest |g|.
    boundary : {"reflect", "mirror", "nearest", "wrap", "constant"}, optional
        How pixels beyond the edge are read (``scipy.ndimage`` modes; default ``"reflect"``).
    cval : float, optional
        Value outside the image for ``boundary="constant"`` (default 0).
    nan_policy : {"raise", "omit"}, optional
        ``"omit"`` gives gradients that touch a NaN pixel the value 0. With several channels a
        channel whose stencil touches NaN is skipped, and the gradient is 0 only when every
        channel's is (a band missing at one pixel does not erase the others). For wider
        operators the stencil is the operator's whole square less its centre (module docstring).
        Default ``"raise"``.
    gradient : {"central", "scharr", "gaussian"}, optional
        The operator (module docstring, :class:`GradientOperator`). ``"central"`` (default):
        the paper's central differences; ``"scharr"``: Scharr's 3×3 operator, ten times less
        anisotropic; ``"gaussian"``: Gaussian derivatives of σ = ``gradient_scale``, the most
        isotropic, which also smooth the image. All give |g| in image units per pixel.
    gradient_scale : float, optional
        σ of ``gradient="gaussian"``, in pixels (default 1); the other operators take only 1.

    Returns
    -------
    numpy.ndarray, shape (y, x)
        complex64 for bool, 8- and 16-bit integer and float16/float32 input, else complex128
        (:func:`result_float_dtype`). ``np.abs`` gives the weight W in image units per pixel,
        ``np.angle`` the angle Θ in radians, in (-π, π], clockwise as displayed (module
        docstring).

    Raises
    ------
    ParameterError
        For an empty image, NaN or infinite pixels under ``nan_policy="raise"``, a ``boundary``,
        ``nan_policy`` or ``gradient`` not in the lists, and a ``gradient_scale`` that is not
        a positive number or is given to another operator than ``"gaussian"``.
    DimensionError
        For an image that is not 2-D without ``channel_axis``, or not 3-D with one.
    TypeError
        For an image of complex, object or string values.
    """
    image = pixels(image)
    ftype = result_float_dtype(image.dtype)
    src = as_channels_first(image, channel_axis)
    check_finite(src, nan_policy)
    operator = GradientOperator(gradient, gradient_scale)
    _, h, w = src.shape
    if h == 0 or w == 0:
        raise ParameterError(f"image is empty ({h} x {w} pixels): there is no gradient to compute")
    _check_choice("boundary", boundary, BOUNDARY_MODES)
    r = operator.radius
    rowmap = boundary_index_map(h, -r, h + r, boundary)
    colmap = boundary_index_map(w, -r, w + r, boundary)
    if operator.kind == "central":  # differenced in float64, stored in the result's precision
        out = np.empty((h, w), dtype=np.result_type(ftype, np.complex64))
        _core.gradient_image(src, rowmap, colmap, 1, float(cval), out)
    else:
        gx, gy = stencil_gradient(gather(src, rowmap, colmap, float(cval)), operator)
        out = gx + 1j * gy
    if nan_policy == "omit":
        out[~np.isfinite(out)] = 0
    return out.astype(np.result_type(ftype, np.complex64), copy=False)
