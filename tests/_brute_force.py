"""Brute-force references for the tests: explicit loops over every angle–weight pair."""

from __future__ import annotations

import numpy as np

from xfskde import Cos2KKernel, Window
from xfskde.local import sample_count, sample_offset

NUMPY_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap"}


def gradient_reference(image: np.ndarray, boundary: str = "reflect", cval: float = 0.0):
    """Central differences of a np.pad-ed float64 image: (gx, gy) of the original's shape."""
    if boundary == "constant":
        P = np.pad(image.astype(np.float64), 1, mode="constant", constant_values=cval)
    else:
        P = np.pad(image.astype(np.float64), 1, mode=NUMPY_MODE[boundary])
    gx = 0.5 * (P[1:-1, 2:] - P[1:-1, :-2])
    gy = 0.5 * (P[2:, 1:-1] - P[:-2, 1:-1])
    return gx, gy


def local_fskde_reference(image, order, window, size, stride=1, boundary="reflect", eps=None):
    """F_k(x) = H_k Σ_y φ(x - y) W(y) e^{-ikΘ(y)}, one pixel and one pair at a time."""
    win = Window(window, size)
    d = win.radius + 1
    if boundary == "constant":
        P = np.pad(image.astype(np.float64), d, mode="constant")
    else:
        P = np.pad(image.astype(np.float64), d, mode=NUMPY_MODE[boundary])
    gx = 0.5 * (P[1:-1, 2:] - P[1:-1, :-2])
    gy = 0.5 * (P[2:, 1:-1] - P[:-2, 1:-1])
    theta = np.arctan2(gy, gx)
    weight = np.hypot(gx, gy)
    H = Cos2KKernel(order, eps=eps).coefficients
    phi = win.weights()
    b, a = win.before, win.after
    o = sample_offset(stride)
    ny, nx = sample_count(image.shape[0], stride), sample_count(image.shape[1], stride)
    out = np.zeros((ny, nx, len(H)), dtype=np.complex128)
    for i in range(ny):
        for j in range(nx):
            y, x = i * stride + o, j * stride + o
            for dy in range(-b, a + 1):
                for dx in range(-b, a + 1):
                    w = phi[dy + b, dx + b]
                    if w == 0:
                        continue
                    yy, xx = y + dy + d - 1, x + dx + d - 1
                    for k in range(len(H)):
                        out[i, j, k] += H[k] * w * weight[yy, xx] * np.exp(-1j * k * theta[yy, xx])
    return out
