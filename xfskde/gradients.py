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
``"nearest"``, ``"wrap"`` and ``"constant"`` (``cval``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from . import _core
from ._validation import _check_choice
from .exceptions import DimensionError, ParameterError

__all__ = [
    "BOUNDARY_MODES",
    "NAN_POLICIES",
    "angle_bins",
    "gradient",
    "result_float_dtype",
]

Boundary = Literal["reflect", "mirror", "nearest", "wrap", "constant"]
BOUNDARY_MODES: tuple[str, ...] = ("reflect", "mirror", "nearest", "wrap", "constant")
NAN_POLICIES: tuple[str, ...] = ("raise", "omit")
_NUMPY_PAD_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap"}


def angle_bins(g: np.ndarray, n_bins: int) -> np.ndarray:
    """Histogram bin of each gradient angle arg g: THE angle-bin rule of xfskde.

    The bins are (-π + 2πj/n, -π + 2π(j+1)/n], j = 0 .. n-1, over (-π, π]. The angle -π (arg of
    a gradient whose imaginary part is -0.0) is the angle π and falls in the last bin.

    Parameters
    ----------
    g : numpy.ndarray, complex
        Gradients (:func:`gradient`).
    n_bins : int

    Returns
    -------
    numpy.ndarray of int64, the shape of ``g``
    """
    width = 2 * np.pi / n_bins
    j = np.ceil((np.angle(g) + np.pi) / width).astype(np.int64) - 1
    return np.mod(j, n_bins)


def result_float_dtype(dtype: np.typing.DTypeLike) -> np.dtype:
    """Floating dtype of the computation for an image dtype: float32 or float64.

    float32 (and smaller floats, and integers of up to 16 bits) → float32; float64 and wider
    integers → float64. Complex, object or string images are refused.
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf":
        raise TypeError(f"image must hold real numbers (bool, integer or float), got dtype {dtype}")
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
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


def readable(image: np.ndarray) -> np.ndarray:
    """Half floats as float32 and booleans as uint8: the narrowest types the compiled core reads."""
    if image.dtype.kind == "f" and image.dtype.itemsize < 4:
        return image.astype(np.float32)
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


def gradient(
    image: np.typing.ArrayLike,
    *,
    channel_axis: int | None = None,
    boundary: Boundary = "reflect",
    cval: float = 0.0,
    nan_policy: Literal["raise", "omit"] = "raise",
) -> np.ndarray:
    """Complex image gradient :math:`g = I_x + i I_y` (section 2.3; see the module conventions).

    Parameters
    ----------
    image : array_like, (y, x) or with a channel axis
        Any real dtype; integers are converted to float first.
    channel_axis : int, optional
        Axis of colour channels; each pixel takes the channel with the largest |g|.
    boundary : {"reflect", "mirror", "nearest", "wrap", "constant"}
        How pixels beyond the edge are read (``scipy.ndimage`` modes).
    cval : float
        Value outside the image for ``boundary="constant"``.
    nan_policy : {"raise", "omit"}
        ``"omit"`` gives gradients that touch a NaN pixel the value 0. With several channels a
        channel whose stencil touches NaN is skipped, and the gradient is 0 only when every
        channel's is (a band missing at one pixel does not erase the others).

    Returns
    -------
    numpy.ndarray, complex64 for float32/8-16-bit input, else complex128, shape (y, x)
        ``np.abs`` gives the weight W, ``np.angle`` the angle Θ.
    """
    image = np.asarray(image)
    ftype = result_float_dtype(image.dtype)
    src = as_channels_first(image, channel_axis)
    check_finite(src, nan_policy)
    _, h, w = src.shape
    _check_choice("boundary", boundary, BOUNDARY_MODES)
    rowmap = boundary_index_map(h, -1, h + 1, boundary)
    colmap = boundary_index_map(w, -1, w + 1, boundary)
    out = np.empty((h, w), dtype=np.complex128)
    _core.gradient_image(src, rowmap, colmap, 1, float(cval), out)
    if nan_policy == "omit":
        out[~np.isfinite(out)] = 0
    return out.astype(np.result_type(ftype, np.complex64), copy=False)
