"""Local texture features of one image block, all through one window φ (paper, sections 2.3, 5.3).

Three feature groups, each a set of non-negative planes that is *linear in the image's texture
mixture*: under the occlusion-of-random-textures model the expected feature at a pixel is the
convex combination of the textures' own features, weighted by the window-blurred indicators of
their regions (McCann et al., IEEE TIP 2014). That is what lets ORTSEG unmix them.

``"color"``
    The local histogram transform of each colour channel: the channel is quantised into
    ``color_bins`` bins on [0, 1] and every bin's indicator image is filtered with φ. Each
    channel's histogram sums to one; the group is divided by the number of channels, so it sums
    to one at every pixel.
``"hist"`` (the baseline)
    Local gradient-angle histograms: the angle Θ = arg g of :func:`xfskde.gradient` is binned
    into ``angle_bins`` equal bins over (-π, π] and each bin's |g|-weighted indicator is filtered
    with φ.
``"fskde"``
    The local cos^2K FS-KDE of the gradients, :func:`xfskde.local_fskde` (eqs. 1, 4-7), not
    canonicalised, with ℓ = ``n_coefficients`` complex coefficients (the sharpest kernel of that
    length, :meth:`xfskde.Cos2KKernel.for_length`), given as its density f(x, θ_j) sampled at
    M = 2ℓ - 1 equally spaced angles (:func:`xfskde.evaluate`) times 2π / M. The density is
    band-limited to ℓ - 1, so the samples hold the coefficients exactly, stay non-negative
    (h >= 0), stay linear in the mixture, and sum to ∫ f = the local mean of |g|: the same mass
    as the ``"hist"`` group, so the two are scaled alike.

Every group is computed on a block that already holds its halo (the caller pads it); only
pixels at least :func:`feature_depth` from the block edge are exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from ..density import evaluate
from ..gradients import angle_bins, gradient
from ..kernel import Cos2KKernel
from ..local import LocalParameters, local_fskde_numpy
from ..windows import Window, make_window
from ._filters import correlate_binned

__all__ = ["FEATURE_GROUPS", "FeatureSpec", "block_features", "feature_depth", "feature_pieces"]

#: The feature groups, in the order their planes are stacked.
FEATURE_GROUPS: tuple[str, ...] = ("color", "hist", "fskde")

_ROWS = 64


@dataclass(frozen=True)
class FeatureSpec:
    """Which local features to compute, and with which window.

    Parameters
    ----------
    features : tuple of {"color", "hist", "fskde"}
        Feature groups, stacked in the order of :data:`FEATURE_GROUPS`.
    window : {"gaussian", "box", "disk"}
        The window φ shared by every group.
    size : float
        Gaussian sigma, box side or disk radius, in pixels.
    color_bins, angle_bins : int
        Bins per colour channel on [0, 1]; bins of the gradient-angle histogram on (-π, π].
    n_coefficients : int
        ℓ, the number of complex FS-KDE coefficients (>= 2).
    """

    features: tuple[str, ...] = ("color", "fskde")
    window: str = "gaussian"
    size: float = 6.0
    color_bins: int = 16
    angle_bins: int = 16
    n_coefficients: int = 8

    def __post_init__(self) -> None:
        feats = (self.features,) if isinstance(self.features, str) else tuple(self.features)
        bad = [f for f in feats if f not in FEATURE_GROUPS]
        if bad or not feats:
            raise ValueError(
                f"features must be a non-empty subset of {FEATURE_GROUPS}, got {self.features!r}"
            )
        object.__setattr__(self, "features", tuple(f for f in FEATURE_GROUPS if f in feats))
        object.__setattr__(self, "window", make_window(self.window, self.size).kind)
        object.__setattr__(self, "size", make_window(self.window, self.size).size)
        for name, low in (("color_bins", 2), ("angle_bins", 2), ("n_coefficients", 2)):
            value = getattr(self, name)
            if int(value) != value or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
            object.__setattr__(self, name, int(value))

    @property
    def window_obj(self) -> Window:
        return Window(self.window, self.size)

    @property
    def kernel(self) -> Cos2KKernel:
        """The sharpest cos^2K kernel with ``n_coefficients`` coefficients at the paper's ε."""
        return Cos2KKernel.for_length(self.n_coefficients)


def feature_depth(spec: FeatureSpec) -> int:
    """Halo in pixels that a block needs: the window's :attr:`~xfskde.Window.depth`."""
    return spec.window_obj.depth


def _centred_profile(window: Window) -> np.ndarray:
    """The window's 1-D profile on offsets -r..r (zeros where an even box does not reach)."""
    r = max(window.before, window.after)
    out = np.zeros(2 * r + 1)
    out[r - window.before : r + window.after + 1] = window.profile()
    return out


def _filter_binned(bins: np.ndarray, weight, n_bins: int, window: Window) -> np.ndarray:
    """Filter the one-hot planes of a binned image (each pixel votes ``weight`` for its bin).

    Box and Gaussian windows are separable: :func:`._filters.correlate_binned` works from the
    bin indices. A disk is not: its planes are built and correlated in 2-D.
    """
    if window.kind != "disk":
        return correlate_binned(bins, weight, n_bins, _centred_profile(window))
    votes = np.broadcast_to(np.asarray(weight, dtype=np.float32), bins.shape)
    planes = np.zeros((*bins.shape, n_bins), dtype=np.float32)
    np.put_along_axis(planes, bins[..., None], votes[..., None], axis=-1)
    w = window.weights()
    return np.stack(
        [ndimage.correlate(planes[..., i], w, mode="reflect") for i in range(n_bins)], axis=-1
    )


def _color(block: np.ndarray, spec: FeatureSpec, channel: int) -> np.ndarray:
    """The local histogram of one colour channel, scaled by 1/C so the group sums to one."""
    bins = spec.color_bins
    q = np.clip(np.floor(block[..., channel] * bins), 0, bins - 1).astype(np.int64)
    return _filter_binned(q, np.float32(1.0 / block.shape[-1]), bins, spec.window_obj)


def _angle_hist(block: np.ndarray, spec: FeatureSpec) -> np.ndarray:
    g = gradient(block, channel_axis=-1)
    weight = np.abs(g).astype(np.float32)
    return _filter_binned(angle_bins(g, spec.angle_bins), weight, spec.angle_bins, spec.window_obj)


def _fskde(block: np.ndarray, spec: FeatureSpec) -> np.ndarray:
    F = local_fskde_numpy(
        block,
        LocalParameters(order=spec.kernel, window=spec.window_obj),
        channel_axis=-1,
        threads=1,
    )  # one thread: this runs inside Dask tasks
    ell = F.shape[-1]
    m = 2 * ell - 1
    theta = np.linspace(-np.pi, np.pi, m, endpoint=False) + np.pi / m
    out = np.empty((*F.shape[:-1], m), dtype=np.float32)
    for r in range(0, F.shape[0], _ROWS):  # row slabs bound evaluate's complex128 temporaries
        out[r : r + _ROWS] = evaluate(F[r : r + _ROWS], theta) * (2 * np.pi / m)
    return out


def feature_pieces(block: np.ndarray, spec: FeatureSpec) -> Iterator[tuple[str, np.ndarray]]:
    """The feature planes of one (h, w, C) block, piece by piece, in stacking order.

    Yields ``(group, planes)``: one piece per colour channel (``color_bins`` planes each), then
    the ``"hist"`` and ``"fskde"`` groups whole. Consumers that only need linear maps of the
    features (the unmixing projections) use one piece at a time and never hold the whole
    (h, w, D) stack, which for 48 colour planes and a 1024² block is over a quarter of a GB.
    """
    block = np.ascontiguousarray(block, dtype=np.float32)
    for name in spec.features:
        if name == "color":
            for channel in range(block.shape[-1]):
                yield name, _color(block, spec, channel)
        elif name == "hist":
            yield name, _angle_hist(block, spec)
        else:
            yield name, _fskde(block, spec)


def block_features(block: np.ndarray, spec: FeatureSpec) -> dict[str, np.ndarray]:
    """The feature groups of one (h, w, C) block of values in [0, 1], as float32 planes.

    Parameters
    ----------
    block : numpy.ndarray, shape (h, w, C)
        Image block including its halo of :func:`feature_depth` pixels.
    spec : FeatureSpec

    Returns
    -------
    dict
        Group name -> (h, w, D_group) float32 array, for each group in ``spec.features``.
    """
    pieces: dict[str, list[np.ndarray]] = {}
    for name, planes in feature_pieces(block, spec):
        pieces.setdefault(name, []).append(planes)
    return {name: np.concatenate(p, axis=-1) if len(p) > 1 else p[0] for name, p in pieces.items()}
