"""Brute-force references for the tests: np.pad-ed images and explicit loops over every pair.

Nothing here calls the FS-KDE code under test; the only things taken from xfskde are the kernel
coefficients H_k (tested on their own in test_kernel.py), the window weights φ (a 2-D table) and
the stride grid's anchor, so that a wrong core cannot agree with its own reference.

Importable from any test module as ``from _brute_force import ...`` (pytest puts ``tests/`` on
``sys.path`` because it holds a ``conftest.py`` and no ``__init__.py``).
"""

from __future__ import annotations

import numpy as np

from xfskde import Cos2KKernel, Window
from xfskde.local import sample_count, sample_offset

__all__ = [
    "NUMPY_MODE",
    "direct_kde",
    "gradient_reference",
    "local_fskde_reference",
    "missing_at_samples",
    "padded",
    "padded_gradient",
]

#: scipy.ndimage boundary modes → the np.pad modes that read the same pixels.
NUMPY_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap"}


def padded(image: np.ndarray, pad: int, boundary: str = "reflect", cval: float = 0.0):
    """The image as float64, padded by ``pad`` pixels on both spatial axes with ``boundary``."""
    image = np.asarray(image).astype(np.float64)
    width = [(pad, pad), (pad, pad)] + [(0, 0)] * (image.ndim - 2)
    if boundary == "constant":
        return np.pad(image, width, mode="constant", constant_values=cval)
    return np.pad(image, width, mode=NUMPY_MODE[boundary])


def padded_gradient(
    image: np.ndarray,
    pad: int,
    boundary: str = "reflect",
    cval: float = 0.0,
    omit_nan: bool = False,
    channel_axis: int | None = None,
):
    """Central differences (gx, gy) on the image padded by ``pad - 1`` pixels (pad >= 1).

    ``gx = (P[y, x+1] - P[y, x-1]) / 2`` along columns and ``gy = (P[y+1, x] - P[y-1, x]) / 2``
    along rows. With ``channel_axis`` each pixel keeps the channel of largest |g| (the first on
    ties). With ``omit_nan`` every gradient that is not finite (its stencil touches a NaN or
    infinite pixel) is set to 0.
    """
    image = np.asarray(image)
    if channel_axis is not None:
        image = np.moveaxis(image, channel_axis, -1)
    P = padded(image, pad, boundary, cval)
    with np.errstate(invalid="ignore"):
        gx = 0.5 * (P[1:-1, 2:] - P[1:-1, :-2])
        gy = 0.5 * (P[2:, 1:-1] - P[:-2, 1:-1])
    if channel_axis is not None:
        pick = np.argmax(gx**2 + gy**2, axis=-1)[..., None]
        gx = np.take_along_axis(gx, pick, axis=-1)[..., 0]
        gy = np.take_along_axis(gy, pick, axis=-1)[..., 0]
    if omit_nan:
        bad = ~(np.isfinite(gx) & np.isfinite(gy))
        gx[bad] = 0.0
        gy[bad] = 0.0
    return gx, gy


def gradient_reference(image: np.ndarray, boundary: str = "reflect", cval: float = 0.0):
    """Central differences of a np.pad-ed float64 image: (gx, gy) of the original's shape."""
    return padded_gradient(image, 1, boundary, cval)


def direct_kde(angles, weights, kernel: Cos2KKernel, theta, *, series: bool = False):
    """(1/N) Σ_n w_n h(θ - θ_n) for one angle set: the KDE as a sum of kernels (eq. 1).

    ``series=True`` sums the kernel's (truncated or approximated) Fourier series instead of
    h(θ) = C_K cos^{2K}(θ/2).
    """
    h = kernel.series if series else kernel
    angles = np.asarray(angles, dtype=np.float64)
    weights = np.ones_like(angles) if weights is None else np.asarray(weights, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    total = np.zeros(theta.shape)
    for a, w in zip(angles, weights, strict=True):
        total += w * h(theta - a)
    return total / len(angles)


def local_fskde_reference(
    image,
    order,
    window,
    size,
    stride=1,
    boundary="reflect",
    eps=None,
    *,
    cval=0.0,
    approximation="auto",
    omit_nan=False,
    channel_axis=None,
):
    """F_k(x) = H_k Σ_y φ(x - y) W(y) e^{-ikΘ(y)}, one sampled pixel and one pair at a time.

    The image is padded with np.pad by the window radius + 1, differenced, and every angle–weight
    pair (Θ = arctan2(gy, gx), W = hypot(gx, gy)) of every window is added explicitly. Samples sit
    at ``(i*stride + o, j*stride + o)``, ``o = (stride - 1) // 2``.
    """
    win = Window(window, size)
    d = win.radius + 1
    # pixel (y, x) of the image sits at (y + d - 1, x + d - 1) of the padded gradient
    gx, gy = padded_gradient(image, d, boundary, cval, omit_nan, channel_axis)
    theta = np.arctan2(gy, gx)
    weight = np.hypot(gx, gy)
    H = Cos2KKernel(order, eps=eps, approximation=approximation).coefficients
    k = np.arange(len(H))
    # every pixel's pair as its ℓ terms W e^{-ikΘ} (one exp per pixel and k, no recurrences)
    terms = weight[..., None] * np.exp(-1j * k * theta[..., None])
    phi = win.weights()
    b, a = win.before, win.after
    o = sample_offset(stride)
    shape = np.shape(image) if channel_axis is None else np.delete(np.shape(image), channel_axis)
    ny, nx = sample_count(shape[0], stride), sample_count(shape[1], stride)
    out = np.zeros((ny, nx, len(H)), dtype=np.complex128)
    for i in range(ny):
        for j in range(nx):
            y, x = i * stride + o, j * stride + o
            # every pair of the window (dy, dx in [-b, a]) weighed by φ and added
            pairs = terms[y - b + d - 1 : y + a + d, x - b + d - 1 : x + a + d]
            out[i, j] = H * np.einsum("yx,yxk->k", phi, pairs)
    if omit_nan:
        out[missing_at_samples(image, stride, channel_axis)] = np.nan
    return out


def missing_at_samples(image, stride, channel_axis=None):
    """Whether each sample's own pixel is missing: not finite in any channel (the field is NaN
    there under ``nan_policy="omit"``: no value, not "no gradients")."""
    pixels = np.asarray(image, dtype=np.float64)
    if channel_axis is None:
        pixels = pixels[..., None]
    else:
        pixels = np.moveaxis(pixels, channel_axis, -1)
    o = sample_offset(stride)
    return ~np.isfinite(pixels[o::stride, o::stride]).any(axis=-1)
