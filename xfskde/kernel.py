"""The band-limited, Gaussian-like cos^2K kernel (paper, section 3).

The kernel of order K is

.. math:: h(\\theta) = C_K \\cos^{2K}(\\theta / 2)                                  (eq. 3)

with :math:`C_K = 2^{2K-1} / (\\binom{2K}{K} \\pi)` (eq. 5). It is real, even, non-negative,
integrates to one over a period and vanishes at :math:`\\pi`. Its Fourier series stops at
:math:`|k| = K`:

.. math:: H_k = \\frac{C_K}{2^{2K}} \\binom{2K}{K+k}
              = \\frac{(K!)^2}{2\\pi (K-k)!\\,(K+k)!}                                  (eqs. 4–6)

and for large K it is close to :math:`e^{-k^2/K} / (2\\pi)` (eq. 7). Truncation (eq. 8) keeps the
coefficients with :math:`e^{-k^2/K} \\ge \\varepsilon`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from ._validation import _check_choice, _check_eps, _check_order, _check_positive_int

__all__ = ["PAPER_EPS", "Cos2KKernel", "truncated_length"]

Approximation = Literal["auto", "exact", "normal"]

#: The truncation threshold ε of eq. 8 that the paper uses in every experiment (section 5).
PAPER_EPS = 1e-5

#: The paper switches to the normal approximation when 2K >= 80 (section 3.3.2).
NORMAL_APPROXIMATION_FROM_2K = 80


def truncated_length(order: int, eps: float | None) -> int:
    """Number of coefficients kept by truncation at ``eps`` (eq. 8).

    Parameters
    ----------
    order : int
        Kernel order K >= 1.
    eps : float or None
        Truncation threshold in (0, 1); None keeps all K + 1 coefficients.

    Returns
    -------
    int
        ℓ, the number of k in 0..K with :math:`e^{-k^2/K} \\ge \\varepsilon` (at least 1:
        F_0 is always kept).

    Raises
    ------
    ParameterError
        For an ``order`` below 1 or an ``eps`` outside (0, 1) (TypeError for values that are
        not numbers; an order must be an integer).
    """
    order = _check_order(order)
    eps = _check_eps(eps)
    if eps is None:
        return order + 1
    bound = -order * math.log(eps)  # k^2 <= bound
    k = math.isqrt(int(bound)) if bound < 2**52 else int(math.sqrt(bound))
    # Guard against rounding on either side of the exact boundary.
    while k + 1 <= order and math.exp(-((k + 1) ** 2) / order) >= eps:
        k += 1
    while k > 0 and math.exp(-(k**2) / order) < eps:
        k -= 1
    return min(order, k) + 1


def _single_precision(*dtypes: np.typing.DTypeLike) -> bool:
    """Whether results computed from data of ``dtypes`` are single precision: the library's
    precision rule, NumPy's promotion with complex64 — complex64, float32, float16, bool, 8-
    and 16-bit integers stay single; anything wider (float64, 32- and 64-bit integers, long
    doubles) is double, never wider (the work is done in float64 and rounded once)."""
    return np.result_type(*dtypes, np.complex64) == np.complex64


def _angle_dtype(theta: np.ndarray) -> type[np.floating]:
    """The dtype of values at angles ``theta``: float32 for single-precision real angles
    (:func:`_single_precision`), else float64."""
    single = theta.dtype.kind in "biuf" and _single_precision(theta.dtype)
    return np.float32 if single else np.float64


def _central_binomial_ratio(order: int) -> float:
    """binom(2K, K) / 4^K without overflow, to about one unit in the last place.

    Up to K = 2048 it is exp(Σ_j log1p(-1/(2j))) with an exactly rounded sum; beyond, the
    asymptotic series of Γ(K + 1/2) / (√π Γ(K + 1)), whose K^-6 term is below 1e-19 there.
    """
    if order <= 2048:
        j = np.arange(1, order + 1, dtype=np.float64)
        return math.exp(math.fsum(np.log1p(-0.5 / j)))
    x = 1.0 / order
    series = 1 - x / 8 + x**2 / 128 + 5 * x**3 / 1024 - 21 * x**4 / 32768 - 399 * x**5 / 262144
    return series / math.sqrt(math.pi * order)


class Cos2KKernel:
    """The cos^2K kernel of a given order, with its Fourier coefficients.

    Parameters
    ----------
    order : int
        The order K >= 1; larger is sharper. The kernel has 2K + 1 non-zero Fourier coefficients.
    approximation : {"auto", "exact", "normal"}, optional
        How :attr:`coefficients` are computed. ``"exact"`` uses eqs. 4–5 for any order;
        ``"normal"`` uses the paper's eq. 7, :math:`H_k = e^{-k^2/K} / (2\\pi)`;
        ``"auto"`` (default) switches to ``"normal"`` when 2K >= 80, as the paper does.
    eps : float in (0, 1), optional
        Truncation threshold of eq. 8. None (default) keeps all K + 1 coefficients.

    Attributes
    ----------
    order : int
        The order K.
    approximation : str
        The approximation in use, ``"exact"`` or ``"normal"`` (``"auto"`` is resolved).
    eps : float or None
        The truncation threshold, as a float.
    length : int
        ℓ, the number of stored coefficients k = 0 .. ℓ-1 (:func:`truncated_length`).

    Raises
    ------
    ParameterError
        For an ``approximation`` not in the list, an ``order`` below 1 or an ``eps`` outside
        (0, 1) (TypeError for values that are not numbers; an order must be an integer).

    Examples
    --------
    >>> kernel = Cos2KKernel(8)
    >>> kernel.length
    9
    >>> round(float(kernel.coefficients[0] * 2 * np.pi), 12)
    1.0
    >>> Cos2KKernel(64, eps=1e-5).length
    28
    """

    def __init__(
        self, order: int, *, approximation: Approximation = "auto", eps: float | None = None
    ):
        self.order = _check_order(order)
        _check_choice("approximation", approximation, ("auto", "exact", "normal"))
        if approximation == "auto":
            approximation = "normal" if 2 * self.order >= NORMAL_APPROXIMATION_FROM_2K else "exact"
        self.approximation: str = approximation
        self.eps = _check_eps(eps)
        self.length = truncated_length(self.order, self.eps)

    def __repr__(self) -> str:
        return (
            f"Cos2KKernel(order={self.order}, approximation={self.approximation!r}, "
            f"eps={self.eps!r}, length={self.length})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cos2KKernel):
            return NotImplemented
        return (self.order, self.approximation, self.eps) == (
            other.order,
            other.approximation,
            other.eps,
        )

    def __hash__(self) -> int:
        return hash((self.order, self.approximation, self.eps))

    @property
    def coefficients(self) -> np.ndarray:
        """H_k for k = 0 .. ℓ-1 as float64 (eqs. 4–7); H_{-k} = H_k.

        The exact values are computed as :math:`H_0 \\prod_{j=1}^{k} (K-j+1)/(K+j)`, a product of
        numbers in (0, 1): it cannot overflow for any order, underflows gracefully to 0, and its
        relative error grows only like k times the machine epsilon (log-gamma differences lose
        about log10(K) digits instead).
        """
        k = np.arange(self.length, dtype=np.float64)
        if self.approximation == "normal":
            return np.exp(-(k**2) / self.order) / (2 * np.pi)
        ratios = (self.order - k[1:] + 1) / (self.order + k[1:])
        out = np.empty(self.length, dtype=np.float64)
        out[0] = 1.0
        np.cumprod(ratios, out=out[1:])
        return out / (2 * np.pi)

    @property
    def normalization(self) -> float:
        """C_K of eq. 5, as 1 / (2π binom(2K, K) 4^-K): accurate and finite for any order."""
        return 1.0 / (2.0 * math.pi * _central_binomial_ratio(self.order))

    def __call__(self, theta: np.typing.ArrayLike) -> np.ndarray:
        """Evaluate h(θ) = C_K cos^{2K}(θ/2) (eq. 3) at any array of angles in radians.

        The values, the shape of ``theta``, are in its precision: float32 for float32 angles,
        else float64 (computed in float64 and rounded once).
        """
        raw = np.asarray(theta)
        theta = np.asarray(raw, dtype=np.float64)
        values = self.normalization * np.cos(theta / 2.0) ** (2 * self.order)
        return values.astype(_angle_dtype(raw), copy=False)

    def series(self, theta: np.typing.ArrayLike) -> np.ndarray:
        """Evaluate the kernel from its coefficients, :math:`\\sum_{|k|<ℓ} H_k e^{ik\\theta}`.

        Equals :meth:`__call__` for the exact, untruncated kernel; otherwise it is the kernel that
        the FS-KDE actually uses after truncation (eq. 8, Figure 3) or the normal approximation.

        Parameters
        ----------
        theta : array_like
            Angles in radians, any shape.

        Returns
        -------
        numpy.ndarray, the shape of ``theta``
            :math:`H_0 + 2\\sum_{k=1}^{ℓ-1} H_k \\cos k\\theta`, in the precision of
            ``theta``: float32 for float32 angles, else float64 (computed in float64 and
            rounded once).
        """
        raw = np.asarray(theta)
        theta = np.asarray(raw, dtype=np.float64)
        h = self.coefficients
        k = np.arange(1, self.length)
        values = h[0] + 2.0 * np.cos(np.multiply.outer(theta, k)) @ h[1:]
        return values.astype(_angle_dtype(raw), copy=False)

    @classmethod
    def for_length(
        cls, n_coefficients: int, eps: float = PAPER_EPS, *, approximation: Approximation = "auto"
    ) -> Cos2KKernel:
        """The sharpest kernel (largest order) whose truncated length is ``n_coefficients``.

        Parameters
        ----------
        n_coefficients : int
            The wanted ℓ, the number of complex coefficients k = 0 .. ℓ-1 (a descriptor of
            ``2 ℓ`` real numbers once the always-zero imaginary part of F_0 is counted).
        eps : float in (0, 1), optional
            Truncation threshold of eq. 8 (default :data:`PAPER_EPS`, the paper's 1e-5).
        approximation : {"auto", "exact", "normal"}, optional
            Passed to the constructor (default ``"auto"``).

        Returns
        -------
        Cos2KKernel
            Of the largest order K whose :func:`truncated_length` at ``eps`` is
            ``n_coefficients``, truncated at ``eps``.

        Raises
        ------
        ValueError
            For ``n_coefficients`` below 2 (a ParameterError below 1), and ``eps=None``.
        ParameterError
            For an ``eps`` outside (0, 1).

        Notes
        -----
        ℓ(K) = min(K + 1, ⌊√(−K ln ε)⌋ + 1) is non-decreasing in K and takes every integer value,
        so the largest K with ℓ(K) = n is found by bisection.
        """
        n = _check_positive_int("n_coefficients", n_coefficients)
        eps = _check_eps(eps)
        if eps is None:
            raise ValueError("eps must be a number in (0, 1) for for_length, got None")
        if n < 2:
            raise ValueError(f"n_coefficients must be >= 2 (order >= 1 keeps k = 0 and 1), got {n}")
        lo, hi = 1, 2
        while truncated_length(hi, eps) <= n:
            lo, hi = hi, hi * 2
        # invariant: length(lo) <= n < length(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if truncated_length(mid, eps) <= n:
                lo = mid
            else:
                hi = mid
        if truncated_length(lo, eps) != n:  # pragma: no cover - ℓ(K) takes every integer value
            raise ValueError(f"no order gives n_coefficients={n} at eps={eps}")
        return cls(lo, approximation=approximation, eps=eps)
