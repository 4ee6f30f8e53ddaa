"""Rotation-invariant (canonical) FS-KDEs and distances (paper, section 4).

Canonicalization rotates an FS-KDE to a standard position so that every rotation of an angle set
has the same canonical form. :math:`F_1` canonicalization (eq. 9) rotates so that :math:`F_1` is
real and positive; :math:`F_\\ell` canonicalization continues recursively, each step taking the
smallest rotation that makes the next :math:`F_m` real (section 4.3). The canonical distance is the
distance minimised over all rotations; eq. 10 approximates it by the best of the ℓ-canonical
distances, and :func:`canonical_distance` also computes it exactly.

Rotation angles follow :func:`xfskde.rotate`: ``rotate(F, phi)`` multiplies :math:`F_k` by
:math:`e^{-ik\\phi}`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ._validation import _check_choice, _check_positive_int
from .density import (
    _BATCH_ELEMENTS,
    _apply_k,
    _check_field,
    _coefficients,
    _conj_times,
    _field_pair,
    _is_labelled,
    _leading_shape,
    _maximise,
    _pad_pair,
    _result_dtypes,
    _times_powers,
    _wrap_angle,
    distance,
    rotate,
)
from .exceptions import ParameterError

__all__ = ["canonical_distance", "canonicalize"]

# Pairs per batch in the exact canonical distance (keeps the FFT work arrays small).
_PAIRS_PER_BATCH = 8192


def _safe_angle(z: np.ndarray) -> np.ndarray:
    """arg(z) in float64, with 0 where z == 0 (so a zero coefficient leaves the FS-KDE where it
    is). In float64 for complex64 z too: a float32 angle would turn F_k by k times its error."""
    z = np.asarray(z, dtype=np.result_type(z, np.complex128))
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
            G = _times_powers(G, np.exp(-1j * step))  # each pixel rounded alone
            alpha = alpha + step
        yield m, G, alpha


def canonicalize(F: Any, ell: int = 1, *, return_angle: bool = False) -> Any:
    """Canonical form of FS-KDEs: F_1 (eq. 9) or recursive F_ℓ canonicalization (section 4.3).

    .. math:: \\tilde F^1_k = e^{-ik\\arg F_1} F_k, \\qquad
              \\tilde F^m_k = e^{-ik \\arg(\\tilde F^{m-1}_m)/m}\\, \\tilde F^{m-1}_k

    with arg in (-π, π], so each step is the smallest rotation that makes :math:`F_m` real.

    Parameters
    ----------
    F : array_like, complex, shape (..., ℓ), or xarray.DataArray
        FS-KDE coefficients along the last axis, or a labelled field with a ``k`` dim (read by
        name, as ``F.fskde.canonicalize(ell)``).
    ell : int, optional
        The canonicalization level, >= 1 (default 1: F_1 canonicalization). ``F`` of ℓ
        coefficients has no F_m beyond m = ℓ-1: a higher level gives the F_{ℓ-1} form.
    return_angle : bool, optional
        Also return α, the rotation applied, in radians: the result equals ``rotate(F, α)``
        (default False).

    Returns
    -------
    numpy.ndarray, or (numpy.ndarray, numpy.ndarray) with ``return_angle``
        The canonical coefficients, shape of ``F``, in its precision: complex64 for complex64
        (or float32) ``F``, else complex128, as :func:`xfskde.rotate`. The rotations are
        computed in complex128 and rounded once: a complex64 result is the complex128 result
        of the same coefficients rounded to nearest (half a unit in float32's last place).
        With ``return_angle`` also α, float64 whatever ``F`` is (float32 holds no [-π, π):
        float32(π) > π), shape ``F.shape[:-1]``, in [-π, π). A labelled field gives
        DataArrays: the canonical field (dims, coords and attrs kept, k last; the
        ``canonical`` attr records the level done, ``"F{max(1, min(ell, ℓ-1))}"``) and α on
        the field's dims without k, named ``"canonical_angle"`` (units ``rad``).

    Raises
    ------
    ParameterError
        For ``ell`` < 1.
    TypeError
        For an ``ell`` that is not an integer, and an ``F`` that is not numbers.
    DimensionError
        For an xarray.Dataset, or a DataArray that is not a coefficient field
        (:func:`xfskde.fields.check_field`), and a plain ``F`` that is a scalar or has no
        coefficient (an empty last axis).

    Notes
    -----
    When :math:`F_m = 0` (a flat, empty or symmetric distribution) the m-th step is the identity:
    the result is always finite and still rotation-invariant whenever :math:`F_m` is zero for every
    rotation of the angle set. The stability of the form near such points is the subject of
    Theorem 1.
    """
    ell = _check_positive_int("ell", ell)
    if _is_labelled(F):
        field = _check_field(F, plain="xfskde.canonicalize(F, ell)")
        out = _apply_k(lambda G: canonicalize(G, ell), field)
        out.attrs["canonical"] = f"F{max(1, min(ell, field.sizes['k'] - 1))}"
        if not return_angle:
            return out
        angle = _apply_k(
            lambda G: canonicalize(G, ell, return_angle=True)[1],
            field,
            out_dim=None,
            name="canonical_angle",
            long_name=f"rotation to the F{ell} canonical form",
        )
        angle.attrs["units"] = "rad"
        return out, angle
    F = _coefficients("F", F)
    length = F.shape[-1]
    # the steps beyond m = ℓ-1 are the identity: stop there (a huge ell kept every step)
    top = min(ell, max(1, length - 1))
    rows = F.reshape(-1, length)
    out = np.empty(rows.shape, dtype=_result_dtypes(F.dtype)[0])
    alpha = np.empty(rows.shape[0])
    step = max(1, _BATCH_ELEMENTS // length)  # complex128 work arrays of at most 64 MiB
    for a in range(0, rows.shape[0], step):
        *_, (_, G, angle) = _canonical_steps(rows[a : a + step], top)
        out[a : a + step] = G  # rounded once, into F's precision
        alpha[a : a + step] = angle
    out = out.reshape(F.shape)
    return (out, _wrap_angle(alpha.reshape(F.shape[:-1]))) if return_angle else out


def _exact_angles(F: np.ndarray, G: np.ndarray) -> np.ndarray:
    """The rotation φ maximising Re Σ_k conj(F_k) e^{-ikφ} G_k, for 2-D (pairs, L) inputs."""
    length = F.shape[-1]
    b = _conj_times(F, G)  # not np.conj(F) * G: see xfskde.density._times_powers
    b[:, 1:] *= 2.0  # the k and -k terms have equal real parts
    return _maximise(b, max(64, 1 << int(np.ceil(np.log2(16 * length)))))


def canonical_distance(
    F: Any,
    G: Any,
    method: Literal["exact", "fk"] = "exact",
    *,
    ells: int | None = None,
    return_angle: bool = False,
) -> Any:
    """Rotation-invariant distance between FS-KDEs (section 4.3).

    ``method="exact"`` returns :math:`\\min_\\phi \\|f - g_\\phi\\|`, the distance of
    :func:`xfskde.distance` minimised over every rotation of ``G``. It is found, batched over all
    pairs, as the maximum of the trigonometric polynomial
    :math:`c(\\phi) = \\mathrm{Re}\\sum_{k=-K}^{K}\\overline{F_k} G_k e^{-ik\\phi}`: an FFT samples
    c at 16ℓ angles (rounded up to a power of two), the best three local maxima are polished by
    Newton steps to machine precision, and the distance is recomputed directly at the winner.

    ``method="fk"`` is the paper's eq. 10: the smallest of the ℓ-canonical distances
    :math:`\\|\\tilde f^\\ell - \\tilde g^\\ell\\|` for ℓ = 1 .. ``ells``.

    Parameters
    ----------
    F, G : array_like, complex, shape (..., ℓ), or xarray.DataArray
        Coefficients along the last axis; leading axes broadcast (all pairs at once). Either may
        be a labelled field (a DataArray with a ``k`` dim, read by name); the other is then a
        field on the same grid, or one FS-KDE (1-D).
    method : {"exact", "fk"}, optional
        ``"exact"`` (default): minimised over every rotation; ``"fk"``: the paper's eq. 10, the
        best of the F_ℓ-canonical distances.
    ells : int, optional
        Highest level for ``method="fk"``; default ℓ-1 (= K without truncation), at least 1,
        ℓ the longer of the two lengths (the shorter is padded with zeros). The exact distance
        minimises over every rotation and has no levels: ``ells`` with ``method="exact"`` is
        refused.
    return_angle : bool, optional
        Also return φ, the rotation of ``G`` that attains the distance, in radians: the
        distance equals ``distance(F, rotate(G, φ))`` (default False).

    Returns
    -------
    numpy.ndarray, real, or (distances, angles) with ``return_angle``
        Shape of the broadcast leading axes. The distances are float32 when both ``F`` and
        ``G`` are single precision (complex64, float32), else float64, as
        :func:`xfskde.distance`; they are computed in float64 and rounded once. The angles are
        float64 whatever the inputs (float32 holds no [-π, π)), in [-π, π). Labelled input
        gives DataArrays on the fields' dims without k, named ``"canonical_distance"`` and
        ``"canonical_angle"`` (units ``rad``).

    Raises
    ------
    ParameterError
        For a ``method`` not in the list, ``ells`` with ``method="exact"``, and ``ells`` < 1.
    TypeError
        For ``ells`` that is not an integer, and coefficients that are not numbers.
    DimensionError
        For labelled input that is not a coefficient field, a plain partner of more than
        one axis (which of its axes is k it does not say), plain arrays that are scalars or
        have no coefficient, and leading axes that do not broadcast.

    Notes
    -----
    The paper writes the canonical distance as :math:`2\\pi\\min_\\phi\\|F - e^{-jk\\phi}G\\|`; here
    it is in the same units as :func:`xfskde.distance` (Parseval), so that a pair that is an exact
    rotation has distance 0 and an already-aligned pair keeps its ordinary distance. Zero
    coefficients give finite results (any rotation is then optimal).
    """
    _check_choice("method", method, ("exact", "fk"))
    if method == "exact" and ells is not None:
        raise ParameterError(
            f"ells={ells!r} sets the highest level of method='fk' (eq. 10); method='exact' "
            "minimises over every rotation and has no levels: drop ells, or pass method='fk'"
        )
    if _is_labelled(F) or _is_labelled(G):
        return _labelled_canonical_distance(F, G, method, ells, return_angle)
    F, G = _pad_pair(_coefficients("F", F), _coefficients("G", G))
    real_dtype = _result_dtypes(F.dtype, G.dtype)[1]
    shape = _leading_shape(F, G, ("F", "G"))
    F = np.broadcast_to(F, (*shape, F.shape[-1]))
    G = np.broadcast_to(G, (*shape, G.shape[-1]))
    length = F.shape[-1]
    if method == "fk":
        top = length - 1 if ells is None else _check_positive_int("ells", ells)
        top = max(min(top, length - 1), 1)  # the steps beyond ℓ-1 are the identity
        best = np.full(shape, np.inf)
        angle = np.zeros(shape)
        for (_, Fc, aF), (_, Gc, aG) in zip(
            _canonical_steps(F, top), _canonical_steps(G, top), strict=True
        ):
            d = distance(Fc, Gc)
            better = d < best
            best = np.where(better, d, best)
            angle = np.where(better, aG - aF, angle)
        best = best.astype(real_dtype, copy=False)
        return (best, _wrap_angle(angle)) if return_angle else best
    flatF = F.reshape(-1, length).astype(np.complex128)
    flatG = G.reshape(-1, length).astype(np.complex128)
    phi = np.empty(flatF.shape[0])
    for start in range(0, flatF.shape[0], _PAIRS_PER_BATCH):
        sl = slice(start, start + _PAIRS_PER_BATCH)
        phi[sl] = _exact_angles(flatF[sl], flatG[sl])
    phi = _wrap_angle(phi)
    dist = distance(flatF, rotate(flatG, phi)).reshape(shape).astype(real_dtype, copy=False)
    phi = phi.reshape(shape)
    return (dist, phi) if return_angle else dist


def _labelled_canonical_distance(
    F: Any, G: Any, method: Literal["exact", "fk"], ells: int | None, return_angle: bool
) -> Any:
    """:func:`canonical_distance` of labelled fields: one pass, distance and angle together."""
    F, G = _field_pair(F, G, ("F", "G"))

    def both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d, phi = canonical_distance(a, b, method, ells=ells, return_angle=True)
        return np.stack([d, phi], axis=-1)

    pair = _apply_k(both, F, G, out_dim="result", out_size=2)  # float64: the angles' dtype
    real_dtype = _result_dtypes(F.dtype, G.dtype)[1]  # the plain distances' dtype
    dist = pair.isel(result=0, drop=True).astype(real_dtype).rename("canonical_distance")
    dist.attrs["long_name"] = f"rotation-invariant L2 distance ({method})"
    if not return_angle:
        return dist
    angle = pair.isel(result=1, drop=True).rename("canonical_angle")
    angle.attrs.update(long_name="rotation of G that attains the distance", units="rad")
    return dist, angle
