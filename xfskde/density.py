"""FS-KDEs of weighted angle sets (paper, section 2).

An FS-KDE is stored as its non-negative Fourier coefficients ``F[..., k]``, k = 0 .. ℓ-1, along
the last axis; the negative ones follow from :math:`F_{-k} = \\overline{F_k}` (the density is real).
"""

from __future__ import annotations

import numpy as np

from ._validation import _finite_array
from .kernel import Approximation, Cos2KKernel

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


def unit_phasor_powers(z: np.ndarray, length: int) -> np.ndarray:
    """Return ``z**k`` for k = 0 .. length-1 along a new last axis, by repeated multiplication.

    One complex multiplication per power and no trigonometric function: this is how every
    :math:`e^{-ik\\theta}` in xfskde is formed.
    """
    out = np.empty((*np.shape(z), length), dtype=np.result_type(z, np.complex64))
    out[..., 0] = 1.0
    for k in range(1, length):
        np.multiply(out[..., k - 1], z, out=out[..., k])
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
    """FS-KDE coefficients of weighted angle sets (eqs. 1 and 5).

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
        Truncation threshold (eq. 7); None keeps K + 1 coefficients.
    approximation : {"auto", "exact", "normal"}
        See :class:`~xfskde.Cos2KKernel`.

    Returns
    -------
    numpy.ndarray of complex128, shape ``batch_shape + (ℓ,)``
        The batch shape is ``angles.shape`` without ``axis``.

    Raises
    ------
    ValueError
        For NaN or infinite angles or weights, negative weights, or an empty set.

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
    if weights is None:
        w = np.ones_like(theta)
    else:
        w = _finite_array("weights", weights)
        if np.any(w < 0):
            raise ValueError("weights must be non-negative (the KDE weights each angle's kernel)")
        w = np.broadcast_to(w, np.broadcast_shapes(w.shape, theta.shape))
        theta = np.broadcast_to(theta, w.shape)
    if theta.ndim == 0:
        raise ValueError("angles must have at least one axis holding the angle set")
    theta = np.moveaxis(theta, axis, -1)
    w = np.moveaxis(w, axis, -1)
    n = theta.shape[-1]
    if n == 0:
        raise ValueError(f"the angle sets along axis={axis} are empty")
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
    return out.reshape(*batch_shape, kernel.length)


def evaluate(F: np.typing.ArrayLike, theta: np.typing.ArrayLike) -> np.ndarray:
    """Evaluate the density :math:`f(\\theta) = \\sum_{k=-K}^{K} F_k e^{ik\\theta}` (eq. 1).

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ)
        Coefficients k = 0 .. ℓ-1 along the last axis.
    theta : array_like
        Angles in radians.

    Returns
    -------
    numpy.ndarray of float64, shape ``F.shape[:-1] + theta.shape``
        :math:`f = \\mathrm{Re}\\,F_0 + 2\\,\\mathrm{Re}\\sum_{k\\ge1} F_k e^{ik\\theta}`.
    """
    F = np.asarray(F)
    theta = np.asarray(theta, dtype=np.float64)
    length = F.shape[-1]
    basis = unit_phasor_powers(np.exp(1j * theta), length)  # theta.shape + (ℓ,)
    basis[..., 1:] *= 2.0
    flat = basis.reshape(-1, length)
    values = (F.reshape(-1, length) @ flat.T).real
    return values.reshape(F.shape[:-1] + theta.shape)


def mean_direction(F: np.typing.ArrayLike) -> np.ndarray:
    """The weighted circular mean of the angles, :math:`-\\arg F_1`, per FS-KDE (eq. 8).

    F_1 is proportional to :math:`\\sum_n w_n e^{-i\\theta_n}` (eq. 1) with a positive H_1, so
    :math:`-\\arg F_1` is the mean direction: the angle by which F_1 canonicalization turns the
    FS-KDE back.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), ℓ >= 2

    Returns
    -------
    numpy.ndarray of float64, shape ``F.shape[:-1]``
        Radians in [-π, π); NaN where F_1 = 0 (no mean direction).
    """
    F1 = np.asarray(F)[..., 1]
    return np.where(np.abs(F1) > 0, -np.angle(F1), np.nan).astype(np.float64)


def mode_direction(F: np.typing.ArrayLike, n_angles: int = 360) -> np.ndarray:
    """The angle of the density's maximum, :math:`\\arg\\max_\\theta f(\\theta)` (eq. 1), per set.

    f is sampled at ``n_angles`` equally spaced angles (:func:`evaluate`) and the best sample is
    refined by the vertex of the parabola through it and its two neighbours.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ)
    n_angles : int
        Angles sampled (>= 3; default 360: one degree before the refinement).

    Returns
    -------
    numpy.ndarray of float64, shape ``F.shape[:-1]``
        Radians in [-π, π); NaN where the density is flat (every F_k, k >= 1, zero).
    """
    F = np.asarray(F)
    flat = F.reshape(-1, F.shape[-1])
    theta = np.linspace(-np.pi, np.pi, n_angles, endpoint=False)
    step = 2 * np.pi / n_angles
    out = np.empty(flat.shape[0], dtype=np.float64)
    for a in range(0, flat.shape[0], _SLAB_PIXELS):
        f = evaluate(flat[a : a + _SLAB_PIXELS], theta)
        j = np.argmax(f, axis=-1)
        rows = np.arange(f.shape[0])
        f0, fm, fp = f[rows, j], f[rows, j - 1], f[rows, (j + 1) % n_angles]
        curvature = fm - 2 * f0 + fp
        shift = np.where(curvature < 0, 0.5 * (fm - fp) / np.where(curvature < 0, curvature, 1), 0)
        out[a : a + f.shape[0]] = theta[j] + step * shift
    out = np.mod(out + np.pi, 2 * np.pi) - np.pi
    flat_density = ~(np.abs(flat[:, 1:]) > 0).any(axis=-1)
    out[flat_density] = np.nan
    return out.reshape(F.shape[:-1])


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


def distance(F: np.typing.ArrayLike, G: np.typing.ArrayLike) -> np.ndarray:
    """L2 distance between two FS-KDEs by Parseval's equality (section 2.2).

    .. math:: \\|f - g\\| = \\sqrt{2\\pi \\sum_{k=-K}^{K} |F_k - G_k|^2}

    Parameters
    ----------
    F, G : array_like, complex, shape (..., ℓ)
        Coefficients along the last axis; leading axes broadcast. Different lengths are allowed
        (the shorter is zero-padded, as truncation sets the missing coefficients to zero).

    Returns
    -------
    numpy.ndarray of float64
        The distances, shape ``broadcast(F.shape[:-1], G.shape[:-1])``.
    """
    F, G = _pad_pair(np.asarray(F), np.asarray(G))
    return np.sqrt(2.0 * np.pi * _norm_squared(F - G))


def rotate(F: np.typing.ArrayLike, phi: np.typing.ArrayLike) -> np.ndarray:
    """Rotate an FS-KDE by ``phi`` radians (eq. 2): :math:`F_{\\phi,k} = e^{-ik\\phi} F_k`.

    The result is the FS-KDE of the angle set with ``phi`` added to every angle, i.e. the density
    circularly shifted: :math:`f_\\phi(\\theta) = f(\\theta - \\phi)`.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ)
    phi : array_like
        Angles in radians, broadcastable to ``F.shape[:-1]``.

    Returns
    -------
    numpy.ndarray, complex, the broadcast shape of ``F``.
    """
    F = np.asarray(F)
    phi = np.asarray(phi, dtype=np.float64)
    phasors = unit_phasor_powers(np.exp(-1j * phi), F.shape[-1])
    return (F * phasors).astype(np.result_type(F.dtype, np.complex64), copy=False)
