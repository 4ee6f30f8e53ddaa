"""Spatial windows φ for local FS-KDEs (paper, section 2.3): box, Gaussian and disk.

A window is positive and sums to one. Each kind is described so that the block core can filter
with a cost that does not grow with the window where possible:

* ``"box"`` of side ``size`` (an integer): separable, filtered by running sums — O(1) per pixel;
  an even side covers offsets ``-(size-1)//2 .. size//2`` (one more pixel after the centre).
* ``"gaussian"`` with standard deviation ``size`` (pixels): separable, truncated at radius
  ``ceil(4 * size)`` (as ``scipy.ndimage.gaussian_filter``'s default) and renormalised to sum 1.
* ``"disk"`` of radius ``size``: the pixels with dy² + dx² <= size², equal weights; filtered as
  one horizontal segment per row through prefix sums — O(radius) per pixel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import _check_choice
from .exceptions import ParameterError

__all__ = ["GAUSSIAN_TRUNCATE", "WINDOW_KINDS", "Window", "make_window"]

WINDOW_KINDS: tuple[str, ...] = ("box", "gaussian", "disk")

#: Gaussian windows are cut at ``GAUSSIAN_TRUNCATE`` standard deviations.
GAUSSIAN_TRUNCATE = 4.0


@dataclass(frozen=True)
class Window:
    """A window φ: its kind, size and the offsets it covers around its centre pixel.

    Parameters
    ----------
    kind : {"box", "gaussian", "disk"}
        The window's shape: a square of equal weights, a Gaussian truncated at
        :data:`GAUSSIAN_TRUNCATE` sigmas, or a disk of equal weights.
    size : float
        Box side (integer), Gaussian sigma, or disk radius, in pixels, > 0; a box's is stored
        as an int.

    Raises
    ------
    ParameterError
        For a ``kind`` not in the list, a ``size`` that is not a positive finite number, and
        a box ``size`` that is not whole.
    TypeError
        For a ``size`` that is not a number (a bool included).
    """

    kind: str
    size: float

    def __post_init__(self) -> None:
        _check_choice("window", self.kind, WINDOW_KINDS)
        if isinstance(self.size, bool | np.bool_):  # True is not the number 1 here
            raise TypeError(f"size must be a positive number of pixels, got {self.size!r}")
        try:
            size = float(self.size)
        except (TypeError, ValueError):
            raise TypeError(f"size must be a positive number, got {self.size!r}") from None
        if not np.isfinite(size) or size <= 0:
            raise ParameterError(f"size must be a positive number of pixels, got {self.size!r}")
        if self.kind == "box" and not size.is_integer():
            raise ParameterError(
                f"size of a box window is its side in pixels, an integer; got {size}"
            )
        object.__setattr__(self, "size", int(size) if self.kind == "box" else size)

    @property
    def sigma(self) -> float:
        """The window's standard deviation along each axis, in pixels: a Gaussian's σ, a box's
        side / √12, a disk's radius / 2 (for comparing windows of different kinds)."""
        if self.kind == "box":
            return self.size / math.sqrt(12)
        if self.kind == "disk":
            return self.size / 2
        return float(self.size)

    @property
    def before(self) -> int:
        """How many pixels the window reaches before (above / left of) its centre."""
        if self.kind == "box":
            return (int(self.size) - 1) // 2
        return self.radius

    @property
    def after(self) -> int:
        """How many pixels the window reaches after (below / right of) its centre."""
        if self.kind == "box":
            return int(self.size) // 2
        return self.radius

    @property
    def radius(self) -> int:
        """The largest offset from the centre that the window touches, in pixels."""
        if self.kind == "box":
            return int(self.size) // 2
        if self.kind == "gaussian":
            return max(1, math.ceil(GAUSSIAN_TRUNCATE * self.size))
        return math.floor(self.size)

    def halo(self, stencil_radius: int) -> int:
        """The halo a block needs on each side for gradients of stencil radius ``stencil_radius``.

        The window around a sample reaches :attr:`radius` pixels, and the gradient at its last
        pixel reads ``stencil_radius`` more. This is the one place the halo is formed.

        Parameters
        ----------
        stencil_radius : int
            The pixels the gradient operator reads beyond the pixel it is computed at: 1 for
            central differences and Scharr, ⌈4σ⌉ for Gaussian derivatives
            (:attr:`xfskde.gradients.GradientOperator.radius`).

        Returns
        -------
        int
            ``radius + stencil_radius``, in pixels.
        """
        return self.radius + int(stencil_radius)

    @property
    def depth(self) -> int:
        """The halo a block needs beyond its own pixels on each side: ``radius + 1``.

        The extra pixel is the gradient's central-difference stencil (the paper's gradient and
        the default): the window around a sample reaches ``radius`` pixels, and the gradient at
        its last pixel reads one more. Wider gradient operators need :meth:`halo`.
        """
        return self.halo(1)

    def profile(self) -> np.ndarray:
        """1-D weights over offsets ``-before .. after`` (separable windows; sums to one).

        Returns
        -------
        numpy.ndarray of float64, shape (before + after + 1,)
            ``size`` equal weights for a box; the truncated, renormalised Gaussian over
            ``-radius .. radius`` for a Gaussian.

        Raises
        ------
        ValueError
            For a disk, which is not separable (:meth:`half_widths`).
        """
        if self.kind == "box":
            return np.full(int(self.size), 1.0 / self.size)
        if self.kind == "gaussian":
            x = np.arange(-self.radius, self.radius + 1, dtype=np.float64)
            w = np.exp(-0.5 * (x / self.size) ** 2)
            return w / w.sum()
        raise ValueError("a disk window is not separable; use half_widths()")

    def half_widths(self) -> np.ndarray:
        """For each row offset dy = -r .. r, the half-width of the disk's row segment.

        Returns
        -------
        numpy.ndarray of int64, shape (2r + 1,)
            ``floor(sqrt(size² - dy²))``: the row dy covers dx = -w .. w (r = :attr:`radius`;
            meant for disks, whose radius is ``floor(size)``).
        """
        r = self.radius
        dy = np.arange(-r, r + 1)
        return np.floor(np.sqrt(np.maximum(self.size**2 - dy**2, 0.0)) + 1e-9).astype(np.int64)

    def weights(self) -> np.ndarray:
        """The full 2-D window over offsets ``(-before .. after)²``; it sums to one.

        Returns
        -------
        numpy.ndarray of float64, shape (before + after + 1, before + after + 1)
            Rows are dy, columns dx: the outer product of :meth:`profile` with itself, or the
            disk's equal weights (zero outside it).
        """
        if self.kind == "disk":
            hw = self.half_widths()
            r = self.radius
            dx = np.arange(-r, r + 1)
            w = (np.abs(dx)[None, :] <= hw[:, None]).astype(np.float64)
            return w / w.sum()
        p = self.profile()
        return np.outer(p, p)

    @property
    def effective_area(self) -> float:
        """1 / Σ φ², in pixels: the area of equal weights whose mean is as steady as this
        window's weighted mean (of values independent from pixel to pixel, its variance is
        theirs times Σ φ²): ``size``² for a box, the disk's pixels for a disk, about 4πσ² for
        a Gaussian."""
        if self.kind == "disk":
            return float(1.0 / np.sum(self.weights() ** 2))
        return float(1.0 / np.sum(self.profile() ** 2) ** 2)  # separable: Σφ² = (Σp²)²

    @property
    def sum_scale(self) -> float:
        """1 / (number of pixels) for equal-weight windows (box, disk); 1 for the Gaussian."""
        if self.kind == "box":
            return 1.0 / float(self.size) ** 2
        if self.kind == "disk":
            return 1.0 / float(self.half_widths().sum() * 2 + len(self.half_widths()))
        return 1.0


def make_window(window: str | Window, size: float | None = None) -> Window:
    """Return a :class:`Window` from a kind name and a size (or pass a Window through).

    Parameters
    ----------
    window : {"box", "gaussian", "disk"} or Window
        The window's kind; a Window is returned as it is.
    size : float, optional
        Box side, Gaussian sigma or disk radius, in pixels; needed with a kind, ignored with
        a Window.

    Returns
    -------
    Window
        ``window`` itself, or ``Window(window, size)``.

    Raises
    ------
    ParameterError
        For a kind not in the list, and a size that is not positive (or, for a box, whole).
    TypeError
        For a kind without a ``size`` (None), or a size that is not a number.
    """
    if isinstance(window, Window):
        return window
    return Window(window, size)
