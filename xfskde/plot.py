"""Pictures of FS-KDEs with matplotlib (an optional extra: ``pip install 'xfskde[plot]'``).

- :func:`polar` — one FS-KDE as a density on the circle (eq. 1 evaluated from its coefficients),
  optionally over the histogram of the angles it came from (Figure 1).
- :func:`glyphs` — a field of FS-KDEs (the ``(y, x, k)`` output of :func:`xfskde.local_fskde`)
  as a star at each sample, one spoke per sampled angle with length ∝ f(θ), like scikit-image's
  HOG visualisation.
- :func:`kernel` — cos^2K kernels of several orders, exact or truncated (Figures 2 and 4).
- :func:`orientation_rgb` — a dominant-orientation map as an RGB array (NumPy and scikit-image
  only, no matplotlib): hue = orientation, brightness = coherence.

Angles follow :mod:`xfskde.gradients`: θ is measured from the +x (column) axis towards the +y
(row) axis, so on an image shown with ``imshow`` (origin at the top left) a spoke points the way
the gradient points. matplotlib is imported only when a function is called, so ``import
xfskde.plot`` works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._grid import sample_offset
from .density import evaluate
from .kernel import Cos2KKernel

__all__ = ["glyphs", "kernel", "orientation_rgb", "polar"]

_INSTALL = "xfskde.plot needs matplotlib: pip install 'xfskde[plot]' (or pip install matplotlib)"


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(_INSTALL) from error
    return plt


def _coefficients(F: Any, name: str) -> np.ndarray:
    F = np.asarray(F)
    if not np.iscomplexobj(F) and F.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold FS-KDE coefficients (complex), got dtype {F.dtype}")
    if F.ndim == 0 or F.shape[-1] < 1:
        raise ValueError(f"{name} must have its coefficients k along the last axis, got {F.shape}")
    return F


def polar(
    F: Any,
    ax: Any = None,
    *,
    angles: Any = None,
    weights: Any = None,
    bins: int = 20,
    n_points: int = 721,
    fill: bool = True,
    **plot_kwargs: Any,
) -> Any:
    """Polar plot of one FS-KDE, f(θ) = Σ_k F_k e^{ikθ} (eq. 1), optionally over a histogram.

    Parameters
    ----------
    F : array_like, complex, shape (ℓ,)
        The coefficients F_0 .. F_{ℓ-1} of one FS-KDE.
    ax : matplotlib Axes, optional
        A polar Axes (``subplot_kw={"projection": "polar"}``) or a Cartesian one (then θ runs
        along x). None creates a polar Axes in a new figure.
    angles, weights : array_like, optional
        The angle set (radians) the FS-KDE came from and its weights; when given, their
        ``bins``-bin histogram, scaled like the FS-KDE (weight per radian / N), is drawn as bars.
    bins : int
        Bins of that histogram (default 20, as in Figure 1).
    n_points : int
        Angles at which f is evaluated (default 721).
    fill : bool
        Shade the area under the density.
    **plot_kwargs
        Passed to ``ax.plot`` for the density curve.

    Returns
    -------
    matplotlib Axes
    """
    F = _coefficients(F, "F")
    if F.ndim != 1:
        raise ValueError(f"F must be one FS-KDE, shape (ℓ,), got {F.shape}; use glyphs for fields")
    if ax is None:
        _, ax = _pyplot().subplots(subplot_kw={"projection": "polar"})
    theta = np.linspace(-np.pi, np.pi, int(n_points))
    if angles is not None:
        angles = np.ravel(angles)
        w = np.ones_like(angles, dtype=float) if weights is None else np.ravel(weights)
        wrapped = (angles + np.pi) % (2 * np.pi) - np.pi
        counts, edges = np.histogram(wrapped, int(bins), range=(-np.pi, np.pi), weights=w)
        width = 2 * np.pi / int(bins)
        style = {"color": "0.8", "edgecolor": "0.5", "linewidth": 0.5}
        label = f"{bins}-bin histogram"
        ax.bar(
            edges[:-1], counts / (angles.size * width), width, align="edge", label=label, **style
        )
    f = evaluate(F, theta)
    (line,) = ax.plot(theta, f, **{"label": "FS-KDE", **plot_kwargs})
    if fill:
        ax.fill_between(theta, 0, np.clip(f, 0, None), color=line.get_color(), alpha=0.2)
    return ax


def _field_positions(F_field: Any, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coefficients (ny, nx, ℓ) and the pixel x, y of each sample.

    A DataArray's ``y``/``x`` coordinates are used when it has them; otherwise the samples sit
    on the stride grid of :mod:`xfskde._grid`, with the stride read from the field's ``stride``
    attr (a DataArray) or given (a NumPy field).
    """
    dims = getattr(F_field, "dims", None)
    if dims is not None:  # xarray.DataArray: read by name, use its coordinates
        if "k" not in dims or len(dims) != 3:
            raise ValueError(f"F_field must have dims (y, x, k), got {dims}")
        spatial = ["y", "x"] if {"y", "x"} <= set(dims) else [d for d in dims if d != "k"]
        data = F_field.transpose(*spatial, "k")
        stride = int(F_field.attrs.get("stride", stride))
        F = np.asarray(data.values)
        ys, xs = (
            np.asarray(data[d].values, float) if d in data.coords else _grid_pixels(n, stride)
            for d, n in zip(spatial, F.shape[:2], strict=True)
        )
        return F, xs, ys
    F = _coefficients(F_field, "F_field")
    if F.ndim != 3:
        raise ValueError(f"F_field must have shape (ny, nx, ℓ), got {F.shape}")
    return F, _grid_pixels(F.shape[1], stride), _grid_pixels(F.shape[0], stride)


def _grid_pixels(n: int, stride: int) -> np.ndarray:
    """The pixel of each of ``n`` samples on the stride grid: ``i*stride + sample_offset``."""
    return (np.arange(n) * stride + sample_offset(stride)).astype(float)


def glyphs(
    F_field: Any,
    ax: Any = None,
    *,
    image: Any = None,
    step: int = 1,
    stride: int = 1,
    n_angles: int = 16,
    scale: float | None = None,
    edges: bool = False,
    color: Any = "tab:red",
    linewidth: float = 1.0,
    cmap: str = "gray",
) -> Any:
    """Glyph plot of a coefficient field: at each sample a star of spokes of length ∝ f(θ).

    Like scikit-image's HOG visualisation: the density of each FS-KDE is evaluated (eq. 1) at
    ``n_angles`` angles and a line segment is drawn from the sample's pixel in each direction θ
    (or, with ``edges=True``, perpendicular to it, along the edges as HOG draws them), its length
    proportional to f(θ) (negative values of a truncated FS-KDE count as zero).

    Parameters
    ----------
    F_field : numpy.ndarray (ny, nx, ℓ) or xarray.DataArray with dims (y, x, k)
        A local FS-KDE field, e.g. ``xfskde.local_fskde(image, ..., stride=8)``. A DataArray's
        ``x``/``y`` coordinates give the positions.
    ax : matplotlib Axes, optional
        None creates one.
    image : array_like, optional
        Drawn underneath (``imshow``) in pixel coordinates.
    step : int
        Draw every ``step``-th sample along each axis (default 1).
    stride : int
        For a NumPy field: the stride it was computed with, so that sample (i, j) sits at pixel
        (i*stride + (stride-1)//2, j*stride + (stride-1)//2) as in :func:`xfskde.local_fskde`.
        A DataArray's own ``stride`` attr is used instead.
    n_angles : int
        Spokes per glyph over the full circle (default 16).
    scale : float, optional
        Pixels per unit of density; default: the largest spoke is 0.45 × the glyph spacing.
    edges : bool
        Turn the spokes by 90° to show edge directions instead of gradient directions.
    color, linewidth
        Of the spokes.
    cmap : str
        Colour map of ``image``.

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot()
    from matplotlib.collections import LineCollection

    for name, value in (("step", step), ("stride", stride), ("n_angles", n_angles)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value}")
    F, xs, ys = _field_positions(F_field, int(stride))
    F, xs, ys = F[::step, ::step], xs[::step], ys[::step]
    if ax is None:
        _, ax = plt.subplots()
    if image is not None:
        ax.imshow(np.asarray(image), cmap=cmap)
    theta = np.linspace(-np.pi, np.pi, int(n_angles), endpoint=False)
    f = np.clip(evaluate(F, theta), 0, None)  # (ny, nx, n_angles)
    spacing = min(
        np.min(np.diff(xs)) if xs.size > 1 else np.inf,
        np.min(np.diff(ys)) if ys.size > 1 else np.inf,
    )
    spacing = 1.0 if not np.isfinite(spacing) else float(spacing)
    peak = float(f.max())
    if scale is None:
        scale = 0.45 * spacing / peak if peak > 0 else 0.0
    direction = theta + (np.pi / 2 if edges else 0.0)
    X, Y = np.meshgrid(xs, ys)
    dx = scale * f * np.cos(direction)
    dy = scale * f * np.sin(direction)  # +y is down the rows, as imshow shows them
    start = np.stack([np.broadcast_to(X[..., None], f.shape),
                      np.broadcast_to(Y[..., None], f.shape)], axis=-1)  # fmt: skip
    end = start + np.stack([dx, dy], axis=-1)
    segments = np.stack([start, end], axis=-2).reshape(-1, 2, 2)
    ax.add_collection(LineCollection(segments, colors=color, linewidths=linewidth))
    if image is None:
        pad = 0.5 * spacing
        ax.set_xlim(xs.min() - pad, xs.max() + pad)
        ax.set_ylim(ys.max() + pad, ys.min() - pad)  # rows downwards, like an image
        ax.set_aspect("equal")
    return ax


def kernel(
    orders: Sequence[int] = (4, 8, 16, 32),
    ax: Any = None,
    *,
    eps: float | None = None,
    length: int | None = None,
    n_points: int = 721,
    **plot_kwargs: Any,
) -> Any:
    """The cos^2K kernel h(θ) = C_K cos^{2K}(θ/2) (eq. 3) of several orders on [-π, π].

    Parameters
    ----------
    orders : sequence of int
        Orders K (Figure 2 uses 4, 8, 16, 32).
    ax : matplotlib Axes, optional
    eps : float, optional
        When given, draw the truncated kernel Σ_{|k|<ℓ} H_k e^{ikθ} that an FS-KDE truncated at
        ``eps`` uses (eq. 7) instead of the exact one.
    length : int, optional
        When given, keep only the first ``length`` coefficients H_0 .. H_{ℓ-1} (Figure 4's ℓ).
    n_points : int
    **plot_kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib Axes
    """
    if ax is None:
        _, ax = _pyplot().subplots()
    theta = np.linspace(-np.pi, np.pi, int(n_points))
    for order in orders:
        h = Cos2KKernel(int(order), eps=eps)
        H = h.coefficients[:length]
        exact = eps is None and (length is None or length > h.order)
        values = h(theta) if exact else evaluate(H, theta)
        label = f"K = {order}" if exact else f"K = {order}, ℓ = {H.size}"
        ax.plot(theta, values, **{"label": label, **plot_kwargs})
    ax.set_xlim(-np.pi, np.pi)
    ax.set_xlabel("θ (radians)")
    ax.set_ylabel("h(θ)")
    return ax


def orientation_rgb(orientation: Any, coherence: Any, *, white: float | None = None) -> np.ndarray:
    """An orientation map as RGB: hue = orientation, brightness = coherence.

    Parameters
    ----------
    orientation : array_like
        Angles in radians, e.g. ``-arg F_1`` (:meth:`DataArray.fskde.dominant_orientation`,
        section 4.1); NaN (no dominant orientation) is drawn with hue 0.
    coherence : array_like
        How strongly each pixel is oriented, e.g. ``|F_1| / F_0``; same shape.
    white : float, optional
        The coherence drawn at full brightness; default its 99th percentile. Brightness is
        ``coherence / white`` clipped to [0, 1].

    Returns
    -------
    numpy.ndarray, float, shape ``orientation.shape + (3,)``, values in [0, 1]
    """
    from skimage.color import hsv2rgb

    orientation = np.nan_to_num(np.asarray(orientation, dtype=np.float64))
    coherence = np.asarray(coherence, dtype=np.float64)
    if white is None:
        white = float(np.quantile(coherence, 0.99))
    hue = np.mod(orientation, 2 * np.pi) / (2 * np.pi)
    value = np.clip(coherence / max(white, 1e-12), 0, 1)
    return hsv2rgb(np.stack([hue, np.ones_like(hue), value], axis=-1))
