"""Local texture features of one image block, all through one window φ (paper, sections 2.3, 5.3).

Feature groups, each a set of non-negative planes that is *linear in the image's texture
mixture*: under the occlusion-of-random-textures model the expected feature at a pixel is the
convex combination of the textures' own features, weighted by the window-blurred indicators of
their regions (McCann et al., IEEE TIP 2014). That is what lets ORTSEG unmix them.

``"color"``
    The local histogram transform of each colour channel: the channel is quantised into
    ``color_bins`` equal bins over its range (``color_ranges``: measured on the image when a
    model is fitted, or [0, 1] as the paper's 8-bit images fill it) and every bin's indicator
    image is filtered with φ. Each channel's histogram sums to one; the group is divided by the
    number of channels, so it sums to one at every pixel.
``"bank"``
    Spectral histograms (Liu & Wang 2002; Yuan, Wang & Li 2015): the local histograms of the
    responses of a small fixed filter bank on the grey image (:mod:`._bank`: intensity, three
    Laplacians of Gaussian, twelve real Gabor filters of three frequencies at four
    orientations: sixteen filters), ``bank_bins`` equal-width bins over each
    filter's range fixed at fit time (``bank_ranges``). Each filter's histogram sums to one;
    the group is divided by the number of filters, so it sums to one at every pixel. What
    natural grey textures (brick, grass, gravel) need and colour histograms cannot see.
``"lbp"``
    Local histograms of rotation-invariant uniform local binary patterns (Ojala, Pietikäinen &
    Mäenpää, IEEE TPAMI 2002) of the grey image smoothed by a Gaussian of
    :data:`._lbp.LBP_SMOOTHING` px, at each (P, R) of :data:`._lbp.LBP_SCALES`:
    every pixel's code (which of its P neighbours on a circle of radius R are at least as
    bright as itself, as one of P + 2 classes, :func:`._lbp.lbp_codes`) votes for its bin.
    Each scale's histogram sums to one; the group is divided by the number of scales, so it
    sums to one at every pixel. The codes do not change under any increasing map of the grey
    levels, nor (but for the sampling) under rotation: what the photographs' shading,
    perspective and turned textures change, they keep.
``"hist"`` (the baseline)
    Local gradient-angle histograms: the angle Θ = arg g of :func:`xfskde.gradient` is binned
    into ``angle_bins`` equal bins over (-π, π] and each bin's |g|-weighted indicator is filtered
    with φ.
``"fskde"``
    The local cos^2K FS-KDE of the gradients, :func:`xfskde.local_fskde` (eqs. 1, 4-8), not
    canonicalised, with ℓ = ``n_coefficients`` complex coefficients (the sharpest kernel of that
    length, :meth:`xfskde.Cos2KKernel.for_length`), given as its density f(x, θ_j) sampled at
    M = 2ℓ - 1 equally spaced angles (:func:`xfskde.evaluate`) times 2π / M. The density is
    band-limited to ℓ - 1, so the samples hold the coefficients exactly, stay non-negative
    (h >= 0), stay linear in the mixture, and sum to ∫ f = the local mean of |g|: the same mass
    as the ``"hist"`` group, so the two are scaled alike.

The gradient groups are computed at each of ``gradient_scales``: 0 is the paper's central
difference, s > 0 Gaussian derivatives of σ = s (:func:`xfskde.gradient`), so coarse textures
are seen at their own scale; the group holds the scales' planes one after the other.

Every group is computed on a block that already holds its halo (the caller pads it); only
pixels at least :func:`feature_depth` from the block edge are exact.
"""

from __future__ import annotations

import math
import numbers
import queue
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numba
import numpy as np

from ..exceptions import ParameterError
from ..gradients import GradientOperator, angle_bins, gradient
from ..kernel import Cos2KKernel
from ..windows import Window, make_window
from ._bank import BANK_FILTERS, BANK_RADIUS, bank_bin_planes
from ._filters import (
    Lattice,
    disk_sums,
    phasor_powers,
    project_binned,
    project_phasors,
    separable_binned,
    separable_dense,
)
from ._lbp import LBP_REACH, LBP_SCALES, lbp_codes, lbp_voting, smoothed_grey

__all__ = [
    "FEATURE_GROUPS",
    "FeatureSpec",
    "block_votes",
    "channel_mean",
    "color_bins",
    "density_basis",
    "feature_depth",
    "grid_features",
    "grid_projections",
    "pixel_projections",
    "vote_reach",
    "vote_step",
    "voting_pixels",
    "windowed_projections",
]

#: The feature groups, in the order their planes are stacked.
FEATURE_GROUPS: tuple[str, ...] = ("color", "bank", "lbp", "hist", "fskde")


@dataclass(frozen=True)
class FeatureSpec:
    """Which local features to compute, and with which window.

    Parameters
    ----------
    features : tuple of {"color", "bank", "lbp", "hist", "fskde"}
        Feature groups, stacked in the order of :data:`FEATURE_GROUPS`.
    window : {"gaussian", "box", "disk"}
        The window φ shared by every group.
    size : float
        Gaussian sigma, box side or disk radius, in pixels.
    color_bins, angle_bins : int
        Bins per colour channel; bins of the gradient-angle histogram on (-π, π].
    n_coefficients : int
        ℓ, the number of complex FS-KDE coefficients (>= 2).
    stride : int
        Features are computed at the pixels ``i * stride + (stride - 1) // 2`` of the image
        (the library's stride grid, :mod:`xfskde._grid`); 1 computes them at every pixel.
    gradient_scales : tuple of float
        The gradients of the ``"hist"`` and ``"fskde"`` groups: 0 the paper's central
        differences, s > 0 Gaussian derivatives of σ = s pixels; one set of planes per scale.
    bank_bins : int
        Bins per filter of the ``"bank"`` group.
    bank_ranges : tuple of (low, high), optional
        The range binned for each filter of :data:`._bank.BANK_FILTERS` (values beyond it fall
        in the end bins), fixed when a model is fitted; required with ``"bank"``.
    color_ranges : tuple of (low, high), optional
        The range binned for each colour channel, in the values the features read (integers
        divided by their dtype's maximum; values beyond it fall in the end bins), fixed when a
        model is fitted. None: [0, 1] for every channel, the paper's.
    gradient_unit : float
        The value that counts as 1 in the ``"hist"`` and ``"fskde"`` groups, whose gradients
        are divided by it: the white level of an image not in [0, 1] (a float image of 0-255,
        12-bit counts), measured when a model is fitted, so that |g| reads as on the image in
        [0, 1]. 1: the values as they are, the paper's.
    """

    features: tuple[str, ...] = ("color", "fskde")
    window: str = "gaussian"
    size: float = 6.0
    color_bins: int = 16
    angle_bins: int = 16
    n_coefficients: int = 8
    stride: int = 1
    gradient_scales: tuple[float, ...] = (0.0,)
    bank_bins: int = 11
    bank_ranges: tuple[tuple[float, float], ...] | None = None
    color_ranges: tuple[tuple[float, float], ...] | None = None
    gradient_unit: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _groups(self.features))
        object.__setattr__(self, "window", make_window(self.window, self.size).kind)
        object.__setattr__(self, "size", make_window(self.window, self.size).size)
        # the most bins or coefficients a pixel's features hold (n_coefficients=10000: 20 000
        # features a pixel, the process killed for memory)
        checks = (("color_bins", 2, 256), ("angle_bins", 2, 256), ("n_coefficients", 2, 64),
                  ("stride", 1, None), ("bank_bins", 2, 256))  # fmt: skip
        for name, low, high in checks:
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not math.isfinite(value)
                or int(value) != value
                or value < low
                or (high is not None and value > high)
            ):
                most = f" and <= {high}" if high is not None else ""
                raise ParameterError(f"{name} must be an integer >= {low}{most}, got {value!r}")
            object.__setattr__(self, name, int(value))
        object.__setattr__(self, "gradient_scales", _scales(self.gradient_scales))
        if self.bank_ranges is not None:
            ranges = _pairs(self.bank_ranges)
            if ranges is None or len(ranges) != len(BANK_FILTERS):
                raise ParameterError(
                    f"bank_ranges must be {len(BANK_FILTERS)} finite (low, high) pairs with "
                    f"low < high, one per filter of the bank, got {self.bank_ranges!r}"
                )
            object.__setattr__(self, "bank_ranges", ranges)
        if self.color_ranges is not None:
            ranges = _pairs(self.color_ranges)
            if not ranges:
                raise ParameterError(
                    "color_ranges must be one finite (low, high) pair per channel, low < high, "
                    f"got {self.color_ranges!r}"
                )
            object.__setattr__(self, "color_ranges", ranges)
        unit = _number(self.gradient_unit)
        if not (math.isfinite(unit) and unit > 0):
            raise ParameterError(
                f"gradient_unit must be a finite number > 0 (the value that counts as 1 in the "
                f"gradients; 1: the values as they are), got {self.gradient_unit!r}"
            )
        object.__setattr__(self, "gradient_unit", unit)
        if self.bank_ranges is None and "bank" in self.features:
            raise ParameterError(
                'the "bank" group needs bank_ranges (each filter\'s binned range): fit a model '
                "with fit_textures, which measures them on the image, or give bank_ranges "
                f"({len(BANK_FILTERS)} (low, high) pairs)"
            )

    @property
    def window_obj(self) -> Window:
        """The window φ, a :class:`xfskde.Window` of ``window`` and ``size``."""
        return Window(self.window, self.size)

    @property
    def kernel(self) -> Cos2KKernel:
        """The sharpest cos^2K kernel with ``n_coefficients`` coefficients at the paper's ε."""
        return Cos2KKernel.for_length(self.n_coefficients)


def _groups(features: Any) -> tuple[str, ...]:
    """The feature groups named by ``features`` (one name, or a sequence of names), in the
    order of :data:`FEATURE_GROUPS`; refused when none or an unknown one is named."""
    try:
        feats = (features,) if isinstance(features, str) else tuple(features)
    except TypeError:  # not a sequence: a number, None
        feats = ()
    if not feats or any(not isinstance(f, str) or f not in FEATURE_GROUPS for f in feats):
        raise ParameterError(
            f"features must be a non-empty subset of {FEATURE_GROUPS}, got {features!r}"
        )
    return tuple(f for f in FEATURE_GROUPS if f in feats)


def _scales(gradient_scales: Any) -> tuple[float, ...]:
    """The gradient scales as a tuple of floats (one number is one scale); refused unless one
    or more finite numbers >= 0."""
    try:
        scales = np.atleast_1d(np.asarray(gradient_scales, dtype=float))
    except (TypeError, ValueError):  # not numbers
        scales = np.zeros((0, 0))
    if scales.ndim != 1 or not len(scales) or not np.all(np.isfinite(scales) & (scales >= 0)):
        raise ParameterError(
            "gradient_scales must be one or more numbers >= 0 (0: central differences), "
            f"got {gradient_scales!r}"
        )
    return tuple(float(v) for v in scales)


def _number(value: Any) -> float:
    """``value`` as a float; NaN when it is no number (the caller's check refuses NaN)."""
    if isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _pairs(ranges: Any) -> tuple[tuple[float, float], ...] | None:
    """``ranges`` as (low, high) pairs of floats, low < high, both finite; None when it is not
    a sequence of such pairs."""
    try:
        pairs = tuple((_number(lo), _number(hi)) for lo, hi in ranges)
    except (TypeError, ValueError):  # not a sequence, or an item not a pair
        return None
    if any(not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) for lo, hi in pairs):
        return None
    return pairs


def _operator(scale: float) -> GradientOperator:
    return GradientOperator("gaussian", scale) if scale > 0 else GradientOperator()


#: Windows up to this σ (px) read every pixel; wider ones every ⌊σ / VOTE_SPACING⌋-th pixel
#: along each axis (:class:`._filters.Lattice`), so that a window's cost stops growing with it.
VOTE_SPACING = 16


def vote_step(spec: FeatureSpec) -> int:
    """The lattice step of the pixels that vote: ⌊σ / 16⌋ for separable windows of σ >= 32 px
    (σ = side / √12 for a box), else 1 (every pixel: features exact, as the paper's). At that
    spacing a window still reads about 16² pixels per σ², and its weights are sampled 16 times
    per σ; the disk, summed from prefix sums, always reads every pixel.

    Parameters
    ----------
    spec : FeatureSpec
        The features and their window.

    Returns
    -------
    int
        The step, at least 1.

    Raises
    ------
    TypeError
        For a ``spec`` that is not a :class:`FeatureSpec`.
    """
    if not isinstance(spec, FeatureSpec):
        raise TypeError(
            f"spec must be a FeatureSpec (the features and their window, e.g. "
            f"FeatureSpec(size=32.0) or a model's .spec), got {spec!r:.60}"
        )
    if spec.window == "disk":
        return 1
    return max(1, int(spec.window_obj.sigma // VOTE_SPACING))


def vote_reach(
    features: str | Sequence[str], gradient_scales: float | Sequence[float] = (0.0,)
) -> int:
    """How far from a pixel its votes read: the widest stencil of the groups ``features`` (the
    gradients' operators at ``gradient_scales``, the filter bank's
    :data:`._bank.BANK_RADIUS`), at least 1.

    Parameters
    ----------
    features : str or sequence of str
        The feature groups (one or more of :data:`FEATURE_GROUPS`).
    gradient_scales : float or sequence of float, optional
        The gradient scales of the ``"hist"`` and ``"fskde"`` groups; (0.0,), the paper's
        central differences, by default.

    Returns
    -------
    int
        The reach in pixels, at least 1.

    Raises
    ------
    ParameterError
        When ``features`` names no group or an unknown one, or ``gradient_scales`` (with a
        gradient group) is not one or more finite numbers >= 0.
    """
    features = _groups(features)
    reach = 1
    if "hist" in features or "fskde" in features:
        reach = max(reach, *(_operator(s).radius for s in _scales(gradient_scales)))
    if "bank" in features:
        reach = max(reach, BANK_RADIUS)
    if "lbp" in features:
        reach = max(reach, LBP_REACH)
    return reach


def feature_depth(spec: FeatureSpec) -> int:
    """Halo in pixels that a block needs for features at its own pixels: the window's radius
    and the widest stencil a vote reads (:func:`vote_reach`), :meth:`xfskde.Window.halo`.

    Parameters
    ----------
    spec : FeatureSpec
        The features and their window.

    Returns
    -------
    int
        The halo, in pixels.
    """
    return spec.window_obj.halo(vote_reach(spec.features, spec.gradient_scales))


# ------------------------------------------------------------------------------------ votes
#
# Every feature plane is φ * v, the window over a per-pixel vote. A vote is one of two kinds:
# a bin index with a weight (a one-hot vector: the histograms), or the phasor powers
# |g| conj(z)^k, k = 0 .. ℓ-1 of the gradient g = |g| z, which a fixed complex matrix turns into
# the FS-KDE's density samples. Both are linear, so the features at a sample, and their
# projections on the endmembers, are the window over the votes, or over their projections.


class _Binned(NamedTuple):
    """Each pixel votes ``weight`` for bin ``bins`` of ``n``; with bins of shape (P, h, w),
    for bin ``bins[p]`` of ``n`` in each of P histograms (a group's channels or filters, held
    together so that their projection is one pass, :func:`._filters.project_binned`)."""

    bins: np.ndarray
    weight: np.ndarray | np.float32
    n: int

    @property
    def length(self) -> int:
        """The number of features the vote holds: n, or P·n."""
        return self.n * (self.bins.shape[0] if self.bins.ndim == 3 else 1)

    def histograms(self) -> Iterator[_Binned]:
        """One (h, w) vote per histogram."""
        if self.bins.ndim == 2:
            yield self
        else:
            for bins in self.bins:
                yield _Binned(bins, self.weight, self.n)

    def planes(self) -> np.ndarray:
        """The (h, w, length) one-hot planes."""
        parts = []
        for vote in self.histograms():
            out = np.zeros((*vote.bins.shape, vote.n), np.float32)
            votes = np.broadcast_to(np.asarray(vote.weight, np.float32), vote.bins.shape)
            np.put_along_axis(out, vote.bins[..., None], votes[..., None], axis=-1)
            parts.append(out)
        return np.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]

    def project(self, table: np.ndarray, out: np.ndarray) -> None:
        """Add the vote's dot products with the columns of ``table`` (length, m) to ``out``."""
        project_binned(self.bins, self.weight, table, out)


class _Phasors:
    """Each pixel votes the FS-KDE density samples of its gradient g = |g| z:
    ``Re(powers @ basis)`` with the phasor powers ``|g| conj(z)^k``, k = 0 .. ℓ-1."""

    def __init__(self, g: np.ndarray, basis: np.ndarray) -> None:
        self.g = g  # (h, w) complex gradients
        self.basis = basis  # (ℓ, M) complex128: density sample j of coefficient k
        self.n = basis.shape[1]

    @property
    def length(self) -> int:
        """The number of features the vote holds: the M density samples."""
        return self.n

    def powers(self) -> np.ndarray:
        """The (h, w, ℓ) complex64 phasor powers."""
        return phasor_powers(self.g, self.basis.shape[0])

    def project(self, table: np.ndarray, out: np.ndarray) -> None:
        """Add the vote's dot products with the columns of ``table`` (M, m) to ``out``: the
        density samples and the projection folded into one (ℓ, m) matrix first."""
        project_phasors(self.g, self.basis @ table, out)


def density_basis(spec: FeatureSpec) -> np.ndarray:
    """The (ℓ, M) matrix from the windowed phasor powers to the density samples of the group.

    With :math:`F_k = H_k\\,(|g| \\bar z^k * φ)` (eqs. 1, 4-8), the sample at
    :math:`θ_j = -π + (2j + 1)π/M` of :math:`f(θ) = \\mathrm{Re}\\,F_0 + 2\\,\\mathrm{Re}
    \\sum_{k \\ge 1} F_k e^{ikθ}` (:func:`xfskde.evaluate`), times 2π/M, is
    :math:`\\mathrm{Re}\\sum_k (|g|\\bar z^k * φ)\\,B_{kj}` with
    :math:`B_{kj} = (2π/M)\\,c_k H_k e^{ikθ_j}`, c_0 = 1 and c_k = 2.

    Parameters
    ----------
    spec : FeatureSpec
        The features; its :attr:`FeatureSpec.kernel` gives H_k and ℓ.

    Returns
    -------
    numpy.ndarray, shape (ℓ, 2ℓ - 1), complex128
        B.
    """
    H = spec.kernel.coefficients
    ell = H.shape[0]
    m = 2 * ell - 1
    theta = np.linspace(-np.pi, np.pi, m, endpoint=False) + np.pi / m
    k = np.arange(ell)[:, None]
    factor = np.where(k == 0, 1.0, 2.0) * H[:, None] * (2 * np.pi / m)
    return factor * np.exp(1j * k * theta[None, :])


def channel_mean(block: np.ndarray) -> np.ndarray:
    """The (h, w) mean of a (h, w, C) block's channels: the grey image the bank filters.

    The channels are added one after the other, as NumPy's ``mean(axis=-1)`` adds fewer than
    eight (so the values are the same), without its reduction along a short last axis, which
    took 5.7 ms of a 730² RGB block where this takes 0.4 ms.

    Parameters
    ----------
    block : numpy.ndarray, shape (h, w, C)
        The block, float (the mean is in its dtype).

    Returns
    -------
    numpy.ndarray, shape (h, w)
        The mean; for C = 1 the block's one channel itself (a view, not a copy).

    Raises
    ------
    ParameterError
        When ``block`` is not (h, w, C).
    """
    block = _block(block)
    if block.shape[-1] == 1:
        return block[..., 0]
    total = block[..., 0] + block[..., 1]  # then in place: one plane allocated, not C + 1
    for c in range(2, block.shape[-1]):
        total += block[..., c]
    total /= np.asarray(block.shape[-1], dtype=total.dtype)
    return total


def _block(block: Any) -> np.ndarray:
    """``block`` as an array (array_like accepted), refused unless it is (h, w, C)."""
    array = np.asarray(block)
    if array.ndim != 3:
        raise ParameterError(
            f"block must be (h, w, C), channels last, got shape {array.shape}: give a grey "
            "block as block[..., None]"
        )
    return array


def _sample_centres(
    shape: tuple[int, ...], window: Window, rows: Any, cols: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` and ``cols`` as arrays of int64, refused unless each is 1-D, of integers, and
    every sample's window lies inside the block of ``shape`` (beyond it the compiled windows
    would read and write outside their arrays)."""
    centres = []
    for name, given, side in (("rows", rows, shape[0]), ("cols", cols, shape[1])):
        array = np.asarray(given)
        if array.size == 0 and array.ndim == 1:
            array = array.astype(np.int64)
        if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
            raise ParameterError(
                f"{name} must be a 1-D array of integers (the samples' centres in the block), "
                f"got {given!r}"
            )
        if array.size and (array.min() < window.before or array.max() > side - 1 - window.after):
            raise ParameterError(
                f"{name} must lie within [{window.before}, {side - 1 - window.after}] for the "
                f"window ({window.before} px before a sample, {window.after} after) in a block "
                f"of {side} px along that axis, got {array.min()}..{array.max()}: pad the "
                "block with the halo feature_depth gives"
            )
        centres.append(array.astype(np.int64, copy=False))
    return centres[0], centres[1]


def present_pixels(block: np.ndarray) -> np.ndarray:
    """The (h, w) pixels of a (h, w, C) block finite in every channel (one pass; NumPy's
    ``isfinite(block).all(axis=-1)`` reduces a short last axis slowly)."""
    return _present(np.ascontiguousarray(block))


@numba.njit(nogil=True, cache=True)
def _present(block):
    h, w, channels = block.shape
    out = np.ones((h, w), np.bool_)
    for y in range(h):
        for x in range(w):
            for c in range(channels):
                if not np.isfinite(block[y, x, c]):
                    out[y, x] = False
                    break
    return out


#: ``voting="find"``: the pixels that vote in the local binary patterns are found from ``valid``.
_FIND = "find"


def block_votes(
    block: np.ndarray,
    spec: FeatureSpec,
    valid: np.ndarray | None = None,
    *,
    voting: np.ndarray | str | None = _FIND,
    origin: tuple[int, int] = (0, 0),
) -> Iterator[tuple[str, Any]]:
    """The votes of one (h, w, C) block of values in [0, 1], group by group in stacking order.

    Yields ``(group, vote)``: one binned vote holding a histogram per colour channel
    (``color_bins`` bins each, weight 1/C, so the group sums to one), one holding a histogram
    per filter of the bank (weight 1/16), the ``"hist"`` group's |g|-weighted angle bins and
    the ``"fskde"`` group's phasor powers, once per gradient scale. Each scale's gradient
    (:func:`xfskde.gradient`, the channel of largest |g|, divided by ``spec.gradient_unit``)
    is computed once for both gradient groups. Missing pixels (NaN in any channel) vote
    nothing, and neither do the gradients whose stencils touch them. ``valid``: the block's
    :func:`present_pixels`, if the caller has them; ``voting``: its :func:`voting_pixels`, if
    the caller has them.

    Parameters
    ----------
    block : numpy.ndarray, shape (h, w, C)
        The block's values (read as float32), with its halo.
    spec : FeatureSpec
        The features.
    valid : numpy.ndarray of bool, shape (h, w), optional
        The pixels present in every channel; None (the default): found on the block.
    voting : numpy.ndarray of bool, shape (h, w), None or "find", optional
        The pixels that vote in the ``"lbp"`` group, :func:`voting_pixels` of ``valid`` (None:
        every pixel present); "find" (the default): found here.
    origin : (int, int), optional
        The image position of the block's pixel (0, 0), (0, 0) by default: the local binary
        patterns' interpolation weights are taken at each pixel's position in the image, so
        that its codes do not depend on how the image is cut (:func:`._lbp.lbp_codes`).

    Yields
    ------
    group : str
        The group's name, in ``spec.features``' order (a gradient group once per scale).
    vote : object
        The group's vote (private types, read by :func:`grid_features` and the projections).
    """
    block = np.ascontiguousarray(block, dtype=np.float32)
    if valid is None:
        valid = present_pixels(block)
    complete = bool(valid.all())
    if not complete:  # a pixel missing in any channel is missing in all
        block = np.where(valid[..., None], block, np.float32(np.nan))
    gradients: dict[float, np.ndarray] = {}
    for name in spec.features:
        if name == "color":
            bins, weight = spec.color_bins, np.float32(1.0 / block.shape[-1])
            votes = weight if complete else valid * weight
            yield name, _Binned(color_bins(block, bins, spec.color_ranges), votes, bins)
            continue
        if name == "bank":
            yield from _bank_votes(block, valid, complete, spec)
            continue
        if name == "lbp":
            if isinstance(voting, str):
                voting = voting_pixels(valid, spec)
            yield from _lbp_votes(block, valid, voting, origin)
            continue
        for scale in spec.gradient_scales:
            g = gradients.get(scale)
            if g is None:  # missing pixels give no gradient to any stencil that touches them
                op = _operator(scale)
                g = gradients[scale] = gradient(
                    block, channel_axis=-1, nan_policy="raise" if complete else "omit",
                    gradient=op.kind, gradient_scale=op.scale,
                )  # fmt: skip
                if spec.gradient_unit != 1.0:
                    g /= np.float32(spec.gradient_unit)
            if name == "hist":
                weight = np.abs(g).astype(np.float32)
                yield name, _Binned(angle_bins(g, spec.angle_bins), weight, spec.angle_bins)
            else:
                basis = density_basis(spec)
                yield name, _Phasors(g, basis)


def color_bins(
    block: np.ndarray, n_bins: int, ranges: tuple[tuple[float, float], ...] | None = None
) -> np.ndarray:
    """Each channel's colour bin at every pixel of a (h, w, C) float32 block: (C, h, w).

    ``clip(floor(v · n_bins), 0, n_bins - 1)`` in float32, with v the value, or with
    ``ranges`` (one (low, high) per channel) ``(value - low) / (high - low)``; NaN is read as
    0 and ±inf as the largest finite float32 (:func:`numpy.nan_to_num`; such pixels vote
    nothing). uint8 for up to 256 bins, else int64. One compiled pass, without the five
    temporary planes of the same arithmetic in NumPy (each faulted in afresh where a Dask
    worker's allocator returns memory at once: :mod:`._bank`).

    Parameters
    ----------
    block : numpy.ndarray, shape (h, w, C)
        The values, read as float32.
    n_bins : int
        Bins per channel.
    ranges : tuple of (float, float), optional
        One (low, high) per channel; None (the default): [0, 1] for every channel.

    Returns
    -------
    numpy.ndarray, shape (C, h, w)
        Each pixel's bin, in [0, ``n_bins`` - 1], uint8 (int64 above 256 bins).

    Raises
    ------
    ValueError
        When ``ranges`` holds another number of channels than the block.
    ParameterError
        When ``block`` is not (h, w, C) or ``n_bins`` is not an integer >= 1.
    """
    block = _block(block)
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ParameterError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    channels = block.shape[-1]
    if ranges is None:
        low, span = np.zeros(channels, np.float32), np.ones(channels, np.float32)
    else:
        if len(ranges) != channels:
            raise ValueError(
                f"color_ranges has {len(ranges)} channels' ranges, the image {channels} "
                "channels: fit the model on an image of the same channels"
            )
        low = np.array([r[0] for r in ranges], np.float32)
        span = np.array([r[1] - r[0] for r in ranges], np.float32)
    out = np.empty((channels, *block.shape[:2]), np.uint8 if n_bins <= 256 else np.int64)
    _color_bins(np.ascontiguousarray(block, np.float32), low, span, n_bins, out)
    return out


@numba.njit(nogil=True, cache=True)
def _color_bins(block, low, span, n_bins, out):
    h, w, channels = block.shape
    scale, top = np.float32(n_bins), np.float32(n_bins - 1)
    big = np.float32(np.finfo(np.float32).max)
    for c in range(channels):
        lo, width = low[c], span[c]
        for y in range(h):
            for x in range(w):
                v = block[y, x, c]
                if np.isnan(v):
                    v = np.float32(0)
                elif v > big:
                    v = big
                elif v < -big:
                    v = -big
                q = np.floor((v - lo) / width * scale)
                out[c, y, x] = min(max(q, np.float32(0)), top)


def _bank_votes(
    block: np.ndarray, valid: np.ndarray, complete: bool, spec: FeatureSpec
) -> Iterator[tuple[str, _Binned]]:
    """The binned votes of the bank's filters (one histogram each), on the channels' mean:
    weight 1/16 at every pixel present. Missing pixels are read by the filters as the middle
    of the intensity range (a constant, so the responses do not depend on how the image is
    cut)."""
    ranges = spec.bank_ranges
    assert ranges is not None  # FeatureSpec refuses "bank" without them
    grey = channel_mean(block)
    bins = bank_bin_planes(grey, 0.5 * (ranges[0][0] + ranges[0][1]), ranges, spec.bank_bins)
    weight = np.float32(1.0 / len(BANK_FILTERS))
    votes = weight if complete else valid * weight
    yield "bank", _Binned(bins, votes, spec.bank_bins)


def _lbp_votes(
    block: np.ndarray, valid: np.ndarray, voting: np.ndarray | None, origin: tuple[int, int]
) -> Iterator[tuple[str, _Binned]]:
    """The binned votes of the local binary patterns (one histogram per scale of
    :data:`._lbp.LBP_SCALES`), on the channels' mean smoothed by a Gaussian of
    :data:`._lbp.LBP_SMOOTHING` px (:func:`._lbp.smoothed_grey`): weight 1 / (number of
    scales) at every pixel whose circles of samples read no missing pixel nor a smoothed value
    that did, at every scale (``voting``, :func:`voting_pixels`; None: every pixel present;
    the others get code P + 2 from :func:`._lbp.lbp_codes` at one scale or more, and vote
    nothing at any)."""
    grey = smoothed_grey(channel_mean(block), None if voting is None else valid)
    weight = np.float32(1.0 / len(LBP_SCALES))
    for points, radius in LBP_SCALES:
        codes = lbp_codes(grey, points, radius, origin=origin)
        votes: np.ndarray | np.float32 = weight
        if voting is not None:
            codes[~voting] = 0  # any bin: its weight is 0
            votes = voting * weight
        yield "lbp", _Binned(codes, votes, points + 2)


def voting_pixels(valid: np.ndarray, spec: FeatureSpec) -> np.ndarray | None:
    """The pixels that vote in the ``"lbp"`` group of ``spec``, where they are not all the
    pixels present: those whose local binary patterns read no missing pixel
    (:func:`._lbp.lbp_voting`: about 5 px from a missing pixel or the image's edge); None
    without the group or when every pixel is present.

    The group's windows are renormalised to these pixels, every other group's to the pixels
    present (:func:`grid_features`, :func:`grid_projections`): each group's features are then
    the mean of its votes over the pixels that vote in it, a mixture of the textures there, as
    the unmixing model needs. Renormalised to the pixels present, as the other groups, the
    patterns' histograms summed to less than 1 within a window of a missing region or the
    image's edge: a flat grey image's patterns changed with the distance from its edge, and
    one of 128² or more was cut into three labels by it instead of refused.

    Parameters
    ----------
    valid : numpy.ndarray of bool, shape (h, w)
        The block's pixels present, with the halo the votes read (:func:`vote_reach`).
    spec : FeatureSpec
        The features.

    Returns
    -------
    numpy.ndarray of bool, shape (h, w), or None
        The pixels that vote in the patterns.
    """
    if "lbp" not in spec.features or valid.all():
        return None
    return lbp_voting(valid)


def _windowed(
    vote: Any, window: Window, rows: np.ndarray, cols: np.ndarray, lattice: Lattice | None = None
) -> np.ndarray:
    """φ * v at the samples centred on ``rows × cols`` (block coordinates), for a vote or
    dense planes (h, w, n), from the pixels of ``lattice``. The FS-KDE's phasor powers are
    windowed as they are (their real and imaginary parts: 2ℓ planes) and turned into density
    samples at the samples only."""
    if isinstance(vote, _Phasors):
        parts = vote.powers().view(np.float32)  # (h, w, 2ℓ): re, im of each power
        windowed = _windowed(parts, window, rows, cols, lattice).view(np.complex64)
        return np.ascontiguousarray((windowed @ vote.basis.astype(np.complex64)).real)
    if window.kind == "disk":
        planes = vote.planes() if isinstance(vote, _Binned) else vote
        return disk_sums(planes, window.half_widths(), window.sum_scale, rows, cols)
    profile = window.profile()
    first_rows, first_cols = rows - window.before, cols - window.before
    if isinstance(vote, _Binned):
        parts = [
            separable_binned(v.bins, v.weight, v.n, profile, first_rows, first_cols, lattice)
            for v in vote.histograms()
        ]
        return np.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]
    return separable_dense(vote, profile, first_rows, first_cols, lattice)


def grid_features(
    block: np.ndarray,
    spec: FeatureSpec,
    rows: np.ndarray,
    cols: np.ndarray,
    origin: tuple[int, int] = (0, 0),
    valid: np.ndarray | None = None,
    beside: bool = False,
) -> dict[str, np.ndarray]:
    """The feature groups at the samples centred on ``rows × cols`` of a padded block.

    Parameters
    ----------
    block : numpy.ndarray, shape (h, w, C)
        Values in [0, 1], holding every pixel the samples' windows and gradients read.
    spec : FeatureSpec
        The features and their window.
    rows, cols : numpy.ndarray of int
        The samples' centres, in the block's coordinates.
    origin : (int, int), optional
        The image position of the block's pixel (0, 0): wide windows read the pixels of the
        image's lattice (:func:`vote_step`).
    valid : numpy.ndarray of bool, optional
        The block's pixels present in every channel, if the caller has them;
        None (the default): found on the block.
    beside : bool, optional
        Share the work with a second thread: this one computes the filter bank's votes (its
        transforms) while the second computes the other groups, then both window the bank's
        histograms, one at a time (without the bank, this thread computes the votes and the
        second windows them as they come). For a block that its thread computes alone (a
        region scale's crop, a fit of one block: the second core would wait): each vote and
        window is the same computation, so the features are the same bit for bit.

    Returns
    -------
    dict
        Group name -> (len(rows), len(cols), D_group) float32 features, for each group in
        ``spec.features``.

    Raises
    ------
    ParameterError
        When ``block`` is not (h, w, C), or ``rows`` or ``cols`` are not 1-D integers whose
        windows lie inside the block.
    """
    window, lattice = spec.window_obj, Lattice(vote_step(spec), origin)
    block = _block(block)
    rows, cols = _sample_centres(block.shape, window, rows, cols)
    if valid is None:
        valid = present_pixels(block)
    voting = voting_pixels(valid, spec)  # the patterns' windows renormalised to their own
    pieces: dict[str, list[np.ndarray]] = {}
    if beside:
        pieces = _windowed_beside(block, spec, valid, voting, rows, cols, lattice)
    else:
        for name, vote in block_votes(block, spec, valid, voting=voting, origin=origin):
            pieces.setdefault(name, []).append(_windowed(vote, window, rows, cols, lattice))
    scale = _coverage_scale(valid, window, rows, cols, lattice)
    scales = {}
    if voting is not None:
        scales["lbp"] = _coverage_scale(voting, window, rows, cols, lattice)
    return {
        name: (np.concatenate(p, axis=-1) if len(p) > 1 else p[0]) * scales.get(name, scale)
        for name, p in pieces.items()
    }


def _windowed_beside(
    block: np.ndarray,
    spec: FeatureSpec,
    valid: np.ndarray,
    voting: np.ndarray | None,
    rows: np.ndarray,
    cols: np.ndarray,
    lattice: Lattice,
) -> dict[str, list[np.ndarray]]:
    """The windowed votes of :func:`grid_features` with ``beside``, group by group (a group's
    in the order of its votes and histograms, to be concatenated). This thread computes the
    filter bank's votes (its transforms) and queues their windows, one histogram at a time,
    while a second thread computes the other groups, votes and windows; then both take the
    bank's windows left. Without the bank (or with it alone) this thread computes the votes
    and the second windows them as they come."""
    window = spec.window_obj
    others = tuple(g for g in spec.features if g != "bank")
    split = "bank" in spec.features and bool(others)
    queued: queue.SimpleQueue[tuple[int, Any] | None] = queue.SimpleQueue()
    done: dict[int, np.ndarray] = {}

    def take() -> None:
        while (task := queued.get()) is not None:
            done[task[0]] = _windowed(task[1], window, rows, cols, lattice)

    def second() -> dict[str, list[np.ndarray]]:
        pieces: dict[str, list[np.ndarray]] = {}
        if split:
            rest = replace(spec, features=others, bank_ranges=None)
            for name, vote in block_votes(block, rest, valid, voting=voting,
                                          origin=lattice.origin):  # fmt: skip
                pieces.setdefault(name, []).append(_windowed(vote, window, rows, cols, lattice))
        take()
        return pieces

    names: list[str] = []
    own = replace(spec, features=("bank",), color_ranges=None) if split else spec
    with ThreadPoolExecutor(1) as pool:
        beside = pool.submit(second)
        try:
            for name, vote in block_votes(block, own, valid, origin=lattice.origin):
                # a histogram at a time; the disk sums a vote's planes whole
                whole = window.kind == "disk" or not isinstance(vote, _Binned)
                for part in [vote] if whole else vote.histograms():
                    queued.put((len(names), part))
                    names.append(name)
        finally:
            queued.put(None)  # one end for each thread that takes
            queued.put(None)
        take()
        pieces = beside.result()
    for i, name in enumerate(names):
        pieces.setdefault(name, []).append(done[i])
    return {name: pieces[name] for name in spec.features}


def grid_projections(
    block: np.ndarray,
    spec: FeatureSpec,
    tables: dict[str, np.ndarray],
    rows: np.ndarray,
    cols: np.ndarray,
    origin: tuple[int, int] = (0, 0),
    valid: np.ndarray | None = None,
) -> np.ndarray:
    """The features' dot products with m vectors, at the samples centred on ``rows × cols``.

    Each group's vote is projected on its rows of ``tables`` *before* the window (the window is
    linear), so only m planes are filtered, however many features there are: the unmixing
    needs nothing else (:func:`.unmixing.abundances_from_projections`). The composition of
    :func:`pixel_projections` and :func:`windowed_projections`, which a caller may also run on
    different blocks (the votes need only :func:`vote_reach` around a pixel, the window its own
    radius): where some pixel present does not vote in the local binary patterns, their
    projections are windowed apart, renormalised to the pixels that vote in them
    (:func:`voting_pixels`), as :func:`grid_features` renormalises their features.

    Parameters
    ----------
    block, spec
        As in :func:`grid_features`.
    tables : dict
        Group name -> (D_group, m) array: the group's part of the m vectors, its scale folded in.
    rows, cols : numpy.ndarray of int
        As in :func:`grid_features`.
    origin : (int, int), optional
        As in :func:`grid_features`; (0, 0) by default.
    valid : numpy.ndarray of bool, optional
        As in :func:`grid_features`.

    Returns
    -------
    numpy.ndarray, shape (len(rows), len(cols), m), float32
    """
    if valid is None:
        valid = present_pixels(block)
    voting = voting_pixels(valid, spec)
    if voting is None:  # every pixel present votes in every group: one renormalisation
        u = pixel_projections(block, spec, tables, valid, voting=None, origin=origin)
        return windowed_projections(u, valid, spec, rows, cols, origin)
    u, patterns = pixel_projections(block, spec, tables, valid, apart=True, voting=voting,
                                    origin=origin)  # fmt: skip
    b = windowed_projections(u, valid, spec, rows, cols, origin)
    return b + windowed_projections(patterns, voting, spec, rows, cols, origin)


def pixel_projections(
    block: np.ndarray,
    spec: FeatureSpec,
    tables: dict[str, np.ndarray],
    valid: np.ndarray | None = None,
    *,
    apart: bool = False,
    voting: np.ndarray | str | None = _FIND,
    origin: tuple[int, int] = (0, 0),
) -> np.ndarray | tuple[np.ndarray, np.ndarray | None]:
    """Every pixel's votes projected on m vectors, before the window: (h, w, m) float32.

    A pixel's value is exact when the block holds the :func:`vote_reach` pixels around it
    (the bank's filters, the gradients' stencils, the local binary patterns' circles); missing
    pixels project to 0.

    Parameters
    ----------
    block, spec
        As in :func:`grid_features`.
    tables : dict
        As in :func:`grid_projections`; every group of ``spec.features`` needs its table.
    valid : numpy.ndarray of bool, optional
        As in :func:`grid_features`.
    apart : bool, optional
        Give the ``"lbp"`` group's projections apart from the others': where some pixel
        present does not vote in it (:func:`voting_pixels`), its windows are renormalised to
        the pixels that vote in it (:func:`windowed_projections` of each, summed). False (the
        default): all groups' together, which window as the features do where every pixel
        present votes in every group.
    voting : numpy.ndarray of bool, None or "find", optional
        As in :func:`block_votes`.
    origin : (int, int), optional
        As in :func:`block_votes`.

    Returns
    -------
    numpy.ndarray, shape (h, w, m), float32, or a pair
        Each pixel's projections; with ``apart``, those of the groups but the patterns' and
        the patterns' (None without the group).
    """
    block = _block(block)
    tables = {name: np.asarray(table) for name, table in tables.items()}
    shapes = {name: np.shape(tables.get(name)) for name in spec.features}
    m = shapes[spec.features[0]][-1] if shapes[spec.features[0]] else 0
    if m < 1 or any(len(shape) != 2 or shape[1] != m for shape in shapes.values()):
        raise ParameterError(
            f"tables must hold a (D_group, m) array for each group of {spec.features}, with "
            f"the same m >= 1, got shapes {shapes}"
        )
    u = np.zeros((*block.shape[:2], m), np.float32)
    start: dict[str, int] = {}
    if valid is None:
        valid = present_pixels(block)
    patterns = np.zeros_like(u) if apart and "lbp" in spec.features else None
    for name, vote in block_votes(block, spec, valid, voting=voting, origin=origin):
        offset = start.get(name, 0)
        if offset + vote.length > shapes[name][0]:
            raise ParameterError(
                f"the table of {name!r} has {shapes[name][0]} rows, fewer than the group's "
                f"features (at least {offset + vote.length}): give one row per feature"
            )
        into = patterns if name == "lbp" and patterns is not None else u
        vote.project(tables[name][offset : offset + vote.length], into)
        start[name] = offset + vote.length
    rows = {name: shape[0] for name, shape in shapes.items()}
    if any(start.get(name, 0) != rows[name] for name in spec.features):
        raise ParameterError(
            f"the tables have {rows} rows and the groups {start} features: give one row per feature"
        )
    return (u, patterns) if apart else u


def windowed_projections(
    projections: np.ndarray,
    valid: np.ndarray,
    spec: FeatureSpec,
    rows: np.ndarray,
    cols: np.ndarray,
    origin: tuple[int, int] = (0, 0),
) -> np.ndarray:
    """:func:`pixel_projections` through the window at the samples centred on ``rows × cols``:
    (len(rows), len(cols), m) float32, each sample's window renormalised to the pixels
    present (``valid``) where it reaches a missing one, as the features are.

    Parameters
    ----------
    projections : numpy.ndarray, shape (h, w, m)
        :func:`pixel_projections` of the block.
    valid : numpy.ndarray of bool, shape (h, w)
        The block's pixels present in every channel.
    spec : FeatureSpec
        The features and their window.
    rows, cols : numpy.ndarray of int
        The samples' centres, in the block's coordinates.
    origin : (int, int), optional
        The image position of the block's pixel (0, 0); (0, 0) by default.

    Returns
    -------
    numpy.ndarray, shape (len(rows), len(cols), m), float32
        The windowed projections.

    Raises
    ------
    ParameterError
        When ``projections`` is not (h, w, m) with ``valid`` (h, w), or ``rows`` or ``cols``
        are not 1-D integers whose windows lie inside the block.
    """
    window, lattice = spec.window_obj, Lattice(vote_step(spec), origin)
    projections = np.asarray(projections)
    if projections.ndim != 3 or np.shape(valid) != projections.shape[:2]:
        raise ParameterError(
            f"projections must be (h, w, m) and valid (h, w), got shapes {projections.shape} "
            f"and {np.shape(valid)}: give pixel_projections' result and the block's pixels present"
        )
    valid = np.asarray(valid, dtype=bool)
    rows, cols = _sample_centres(projections.shape, window, rows, cols)
    scale = _coverage_scale(valid, window, rows, cols, lattice)
    return _windowed(projections, window, rows, cols, lattice) * scale


def _coverage_scale(
    valid: np.ndarray,
    window: Window,
    rows: np.ndarray,
    cols: np.ndarray,
    lattice: Lattice,
) -> np.ndarray | np.float32:
    """1 / the window's weight on the pixels present (``valid``), at each sample whose window
    reaches a missing pixel (or beyond the image's edge); 1 elsewhere. The features there are
    the window's mean over the pixels present: a mixture of the textures present, as the
    unmixing model needs. Windows that miss nothing are left exactly as they are."""
    if valid.all():
        return np.float32(1)
    coverage = _windowed(valid.astype(np.float32)[..., None], window, rows, cols, lattice)
    partial = (coverage < 1 - 1e-5) & (coverage > 0)
    return np.where(partial, 1 / np.where(partial, coverage, 1), 1).astype(np.float32)
