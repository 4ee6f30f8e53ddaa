"""The textbook dense local FS-KDE, written the way a NumPy/SciPy user would: a timing anchor.

F_k(x) = H_k (W e^{-ikΘ} * φ)(x) (paper, section 2.3, with eqs. 1 and 4–5), computed plane by
plane: central differences (``np.gradient``), angles by ``np.arctan2``, one ``cos`` and one
``sin`` per coefficient k, and ``scipy.ndimage.uniform_filter`` on the real and imaginary parts,
times H_k. It is a reference for speed and a cross-check for values; xfskde never calls it.

Boundary: the image is first padded by the overlap depth (window radius + 1) in scipy's
``"reflect"`` mode (``np.pad(mode="symmetric")``), so the gradient and the window see the same
extended image that ``xfskde.local_fskde(boundary="reflect")`` reads, and the two agree on every
pixel, edges included. Filtering the unpadded gradient planes with ``uniform_filter(mode=
"reflect")`` instead would reflect the *gradient* (whose component normal to the edge should
change sign) and use one-sided differences on the edge rows: it differs from xfskde in the outer
``radius + 1`` rows and columns only. Padding costs about ``4 * depth / side`` extra work (under
2 % at 2048²).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from xfskde import Cos2KKernel

__all__ = ["gradient_polar", "naive_dense"]


def gradient_polar(image: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """Angle Θ (``arctan2``) and weight W = |g| (``hypot``) of the central differences
    (``np.gradient``) of the image padded by ``pad`` in scipy's ``"reflect"`` mode; y along rows,
    x along columns. The planes are the padded image's shape."""
    padded = np.pad(image, pad, mode="symmetric")
    gy, gx = np.gradient(padded)  # central differences / 2
    return np.arctan2(gy, gx), np.hypot(gx, gy)


def naive_dense(image: np.ndarray, *, order: int, size: int) -> np.ndarray:
    """Dense (stride 1) box-window local FS-KDE by atan2, cos/sin per k and scipy filters.

    Parameters
    ----------
    image : numpy.ndarray, (H, W)
        Grey image; float32 stays float32 throughout (as xfskde computes it).
    order : int
        Kernel order K (eq. 3); coefficients k = 0..K are returned (no truncation).
    size : int
        Side of the box window, odd (so that it is centred as in ``uniform_filter``).

    Returns
    -------
    numpy.ndarray, (H, W, order + 1), complex64
        F_k at every pixel, to compare with ``xfskde.local_fskde(image, order=order,
        window="box", size=size)``.
    """
    if size % 2 != 1:
        raise ValueError(f"size must be odd so the box is centred on its pixel, got {size}")
    pad = size // 2 + 1
    theta, weight = gradient_polar(image, pad)
    inner = np.s_[pad:-pad, pad:-pad]
    coefficients = Cos2KKernel(order).coefficients
    out = np.empty((*image.shape, order + 1), dtype=np.complex64)
    for k in range(order + 1):
        re = ndimage.uniform_filter(weight * np.cos(k * theta), size)[inner]
        im = ndimage.uniform_filter(-weight * np.sin(k * theta), size)[inner]
        out[..., k].real = coefficients[k] * re
        out[..., k].imag = coefficients[k] * im
    return out
