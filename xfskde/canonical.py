"""Rotation-invariant (canonical) FS-KDEs and distances (paper, section 4).

Canonicalization rotates an FS-KDE to a standard position so that every rotation of an angle set
has the same canonical form. :math:`F_1` canonicalization (eq. 8) rotates so that :math:`F_1` is
real and positive; :math:`F_\\ell` canonicalization continues recursively, each step taking the
smallest rotation that makes the next :math:`F_m` real (section 4.3). The canonical distance is the
distance minimised over all rotations; eq. 9 approximates it by the best of the ℓ-canonical
distances, and :func:`canonical_distance` also computes it exactly.

Rotation angles follow :func:`xfskde.rotate`: ``rotate(F, phi)`` multiplies :math:`F_k` by
:math:`e^{-ik\\phi}`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._validation import _check_choice, _check_positive_int
from .density import _pad_pair, distance, rotate, unit_phasor_powers

__all__ = ["canonical_distance", "canonicalize"]

# Pairs per batch in the exact canonical distance (keeps the FFT work arrays small).
_PAIRS_PER_BATCH = 8192
_NEWTON_STEPS = 12
_CANDIDATES = 3


def _safe_angle(z: np.ndarray) -> np.ndarray:
    """arg(z), with 0 where z == 0 (so a zero coefficient leaves the FS-KDE where it is)."""
    return np.where(np.abs(z) > 0, np.angle(z), 0.0)


def _canonical_steps(F: np.ndarray, ell: int):
    """Yield (m, F̃^m, α_m) for m = 1 .. ell, where F̃^m = rotate(F, α_m)."""
    F = np.asarray(F)
    G = F.astype(np.result_type(F.dtype, np.complex64), copy=True)
    alpha = np.zeros(F.shape[:-1], dtype=np.float64)
    length = F.shape[-1]
    for m in range(1, ell + 1):
        if m < length:
            step = _safe_angle(G[..., m]) / m
            G = G * unit_phasor_powers(np.exp(-1j * step), length)
            alpha = alpha + step
        yield m, G, alpha


def canonicalize(
    F: np.typing.ArrayLike, ell: int = 1, *, return_angle: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Canonical form of FS-KDEs: F_1 (eq. 8) or recursive F_ℓ canonicalization (section 4.3).

    .. math:: \\tilde F^1_k = e^{-ik\\arg F_1} F_k, \\qquad
              \\tilde F^m_k = e^{-ik \\arg(\\tilde F^{m-1}_m)/m}\\, \\tilde F^{m-1}_k

    with arg in (-π, π], so each step is the smallest rotation that makes :math:`F_m` real.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ)
        FS-KDE coefficients along the last axis.
    ell : int, optional
        The canonicalization level ℓ >= 1 (default 1: F_1 canonicalization). Levels beyond the
        stored length leave the form unchanged.
    return_angle : bool, optional
        Also return α, the rotation applied: the result equals ``rotate(F, α)``.

    Returns
    -------
    numpy.ndarray, or (numpy.ndarray, numpy.ndarray) with ``return_angle``

    Notes
    -----
    When :math:`F_m = 0` (a flat, empty or symmetric distribution) the m-th step is the identity:
    the result is always finite and still rotation-invariant whenever :math:`F_m` is zero for every
    rotation of the angle set. The stability of the form near such points is the subject of
    Theorem 1.
    """
    ell = _check_positive_int("ell", ell)
    *_, (_, out, alpha) = _canonical_steps(F, ell)
    return (out, alpha) if return_angle else out


def _trig_poly(b: np.ndarray, k: np.ndarray, phi: np.ndarray) -> tuple[np.ndarray, ...]:
    """c(φ), c'(φ), c''(φ) of c(φ) = Re Σ_k b_k e^{-ikφ}, for b (P, L) and candidates φ (P, C)."""
    terms = b[:, None, :] * np.exp(-1j * phi[..., None] * k)  # (P, C, L)
    c0 = np.real(terms.sum(axis=-1))
    c1 = np.imag((terms * k).sum(axis=-1))  # Re(-ik z) = Im(k z)
    c2 = -np.real((terms * (k * k)).sum(axis=-1))
    return c0, c1, c2


def _exact_angles(F: np.ndarray, G: np.ndarray) -> np.ndarray:
    """The rotation φ maximising Re Σ_k conj(F_k) e^{-ikφ} G_k, for 2-D (pairs, L) inputs."""
    length = F.shape[-1]
    b = np.conj(F) * G
    b[:, 1:] *= 2.0  # the k and -k terms have equal real parts
    k = np.arange(length, dtype=np.float64)
    n_grid = max(64, 1 << int(np.ceil(np.log2(16 * length))))
    h = 2 * np.pi / n_grid
    values = np.real(np.fft.fft(b, n=n_grid, axis=-1))  # c(2πm/M)
    peaks = (values >= np.roll(values, 1, axis=-1)) & (values >= np.roll(values, -1, axis=-1))
    ranked = np.where(peaks, values, -np.inf)
    n_cand = min(_CANDIDATES, n_grid)
    idx = np.argpartition(-ranked, n_cand - 1, axis=-1)[:, :n_cand]
    phi = idx * h
    for _ in range(_NEWTON_STEPS):
        _, d1, d2 = _trig_poly(b, k, phi)
        concave = d2 < 0
        step = np.where(concave, -d1 / np.where(concave, d2, -1.0), np.sign(d1) * h)
        phi = phi + np.clip(step, -h, h)
    best = np.argmax(_trig_poly(b, k, phi)[0], axis=-1)
    return np.take_along_axis(phi, best[:, None], axis=-1)[:, 0]


def canonical_distance(
    F: np.typing.ArrayLike,
    G: np.typing.ArrayLike,
    method: Literal["exact", "fk"] = "exact",
    *,
    ells: int | None = None,
    return_angle: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Rotation-invariant distance between FS-KDEs (section 4.3).

    ``method="exact"`` returns :math:`\\min_\\phi \\|f - g_\\phi\\|`, the distance of
    :func:`xfskde.distance` minimised over every rotation of ``G``. It is found, batched over all
    pairs, as the maximum of the trigonometric polynomial
    :math:`c(\\phi) = \\mathrm{Re}\\sum_{k=-K}^{K}\\overline{F_k} G_k e^{-ik\\phi}`: an FFT samples
    c at 16ℓ angles (rounded up to a power of two), the best three local maxima are polished by
    Newton steps to machine precision, and the distance is recomputed directly at the winner.

    ``method="fk"`` is the paper's eq. 9: the smallest of the ℓ-canonical distances
    :math:`\\|\\tilde f^\\ell - \\tilde g^\\ell\\|` for ℓ = 1 .. ``ells``.

    Parameters
    ----------
    F, G : array_like, complex, shape (..., ℓ)
        Coefficients along the last axis; leading axes broadcast (all pairs at once).
    method : {"exact", "fk"}
    ells : int, optional
        Highest level for ``method="fk"``; default ℓ-1 (= K without truncation).
    return_angle : bool, optional
        Also return φ, the rotation of ``G`` that attains the distance: the distance equals
        ``distance(F, rotate(G, φ))``.

    Returns
    -------
    numpy.ndarray of float64, or (distances, angles) with ``return_angle``

    Notes
    -----
    The paper writes the canonical distance as :math:`2\\pi\\min_\\phi\\|F - e^{-jk\\phi}G\\|`; here
    it is in the same units as :func:`xfskde.distance` (Parseval), so that a pair that is an exact
    rotation has distance 0 and an already-aligned pair keeps its ordinary distance. Zero
    coefficients give finite results (any rotation is then optimal).
    """
    _check_choice("method", method, ("exact", "fk"))
    F, G = _pad_pair(np.asarray(F), np.asarray(G))
    shape = np.broadcast_shapes(F.shape[:-1], G.shape[:-1])
    F = np.broadcast_to(F, (*shape, F.shape[-1]))
    G = np.broadcast_to(G, (*shape, G.shape[-1]))
    length = F.shape[-1]
    if method == "fk":
        top = length - 1 if ells is None else _check_positive_int("ells", ells)
        top = max(top, 1)
        best = np.full(shape, np.inf)
        angle = np.zeros(shape)
        for (_, Fc, aF), (_, Gc, aG) in zip(
            _canonical_steps(F, top), _canonical_steps(G, top), strict=True
        ):
            d = distance(Fc, Gc)
            better = d < best
            best = np.where(better, d, best)
            angle = np.where(better, aG - aF, angle)
        return (best, np.mod(angle + np.pi, 2 * np.pi) - np.pi) if return_angle else best
    flatF = F.reshape(-1, length).astype(np.complex128)
    flatG = G.reshape(-1, length).astype(np.complex128)
    phi = np.empty(flatF.shape[0])
    for start in range(0, flatF.shape[0], _PAIRS_PER_BATCH):
        sl = slice(start, start + _PAIRS_PER_BATCH)
        phi[sl] = _exact_angles(flatF[sl], flatG[sl])
    phi = np.mod(phi + np.pi, 2 * np.pi) - np.pi
    dist = distance(flatF, rotate(flatG, phi)).reshape(shape)
    phi = phi.reshape(shape)
    return (dist, phi) if return_angle else dist
