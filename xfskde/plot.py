"""Pictures of FS-KDEs with matplotlib (an optional extra: ``pip install 'xfskde[plot]'``).

- :func:`polar` — one FS-KDE as a density on the circle (eq. 1 evaluated from its coefficients),
  optionally over the histogram of the angles it came from (Figure 1).
- :func:`glyphs` — a field of FS-KDEs (the ``(y, x, k)`` output of :func:`xfskde.local_fskde`)
  as a star at each sample, one spoke per sampled angle with length ∝ f(θ), like scikit-image's
  HOG visualisation.
- :func:`kernel` — cos^2K kernels of several orders, exact or truncated (Figures 2 and 4).
- :func:`orientation_rgb` — a dominant-orientation map as an RGB array (NumPy and scikit-image
  only, no matplotlib): hue = orientation over 2π, brightness = coherence.
- :func:`orientation_map` — the *axial* orientation of the structures (:mod:`xfskde.orientation`,
  from F_2) beside the image: hue over [0, π) from a cyclic colour map, brightness (or opacity)
  = coherence, with the colour wheel of :func:`orientation_wheel` as its legend; colours from
  :func:`axial_rgb`.
- :func:`rose` — a rose diagram: the density f(θ) (eq. 1) of the mean coefficients over a region
  of a field, with its axial reading.
- :func:`segmentation` — a segmentation beside its image: the input, the labels as a categorical
  colour image (:func:`label_rgb`: label 0 the background) and their boundaries over the input
  (scikit-image's ``find_boundaries``), with a ground truth's boundaries in another colour.

Angles follow :mod:`xfskde.gradients`: θ is measured from the +x (column) axis towards the +y
(row) axis, so on an image shown with ``imshow`` (origin at the top left) a spoke points the way
the gradient points, angles turn clockwise on the screen, and the wheel of
:func:`orientation_wheel` and the polar axes of :func:`rose` are drawn the same way.
matplotlib is imported only when a function is called, so ``import xfskde.plot`` works without
it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from . import orientation as _orientation
from ._grid import sample_count, sample_offset
from ._palette import BACKGROUND_COLOUR, label_name, label_palette
from ._pictures import is_picture, picture_values
from ._scheduling import compute as compute_collections
from .density import evaluate
from .exceptions import DimensionError, ParameterError
from .fields import check_field
from .kernel import Cos2KKernel

__all__ = [
    "OrientationAxes",
    "SegmentationAxes",
    "axial_rgb",
    "glyphs",
    "kernel",
    "label_rgb",
    "orientation_map",
    "orientation_rgb",
    "orientation_wheel",
    "polar",
    "rose",
    "segmentation",
]

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
    bins : int, optional
        Bins of that histogram over [-π, π) (default 20, as in Figure 1).
    n_points : int, optional
        Angles at which f is evaluated, evenly over [-π, π] (default 721).
    fill : bool, optional
        Shade the area under the density (default True).
    **plot_kwargs
        Passed to ``ax.plot`` for the density curve.

    Returns
    -------
    matplotlib Axes
        ``ax``, or the one created; its first line is f (labelled ``"FS-KDE"``).

    Raises
    ------
    TypeError
        For ``F`` that holds neither complex nor real numbers.
    ValueError
        For ``F`` that is not one FS-KDE, shape (ℓ,) with ℓ >= 1.
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


def _grid_pixels(n: int, stride: int) -> np.ndarray:
    """The pixel of each of ``n`` samples on the stride grid: ``i*stride + sample_offset``."""
    return (np.arange(n) * stride + sample_offset(stride)).astype(float)


class _Frame(NamedTuple):
    """Where a field's samples (or a map's cells) and the image under them are drawn.

    One frame for both: the DataArrays' coordinates when the field and the image both have
    them (or the field has them and there is no image), else the image's pixels, pixel (i, j)
    at (x, y) = (j, i) with rows downwards. ``x``, ``y`` are the centres of the samples' cells
    (:mod:`xfskde._labels`: sample i of a stride-s grid stands for the pixels
    ``i*s .. i*s + s - 1`` and sits at ``i*s + (s - 1)/2``); ``cell`` and ``pixel`` the signed
    (y, x) sizes of a cell and of an image pixel in frame units (negative along a descending
    coordinate: a north-up ``y``).
    """

    x: np.ndarray
    y: np.ndarray
    cell: tuple[float, float]
    pixel: tuple[float, float]
    image_extent: tuple[float, float, float, float] | None

    def extent(self) -> tuple[float, float, float, float]:
        """``imshow``'s (left, right, bottom, top) of the cells: the outer edges of the first and
        last; with a descending ``y``, bottom < top and row 0 is drawn on top (north-up)."""
        (cy, cx), x, y = self.cell, self.x, self.y
        left, right = float(x[0] - cx / 2), float(x[-1] + cx / 2)
        return left, right, float(y[-1] + cy / 2), float(y[0] - cy / 2)


def _coord_values(array: Any, dims: Sequence[str]) -> list[np.ndarray | None]:
    """A DataArray's 1-D coordinate along each of ``dims`` (None where it has none)."""
    return [np.asarray(array[d].values) if d in array.coords else None for d in dims]


def _image_grid(image: Any) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """An image's values (y, x[, colour]), computed, and its (y, x) coordinates (None for
    arrays, and for a DataArray's dims without one)."""
    if getattr(image, "dims", None) is not None:
        spatial = ["y", "x"] if {"y", "x"} <= set(image.dims) else list(image.dims[:2])
        rest = [d for d in image.dims if d not in spatial]
        image = image.transpose(*spatial, *rest)
        pixels = np.asarray(image.values)
        coords = _coord_values(image, spatial)
    else:
        pixels, coords = _values(image), [None, None]
    if pixels.ndim not in (2, 3):
        raise DimensionError(f"image must be (y, x) or (y, x, colour), got shape {pixels.shape}")
    return pixels, coords


def _signed_step(values: np.ndarray, per: int) -> float | None:
    """The step between neighbours of regularly spaced ``values`` divided by ``per``; None for
    one value."""
    if values.size < 2:
        return None
    return float(values[-1] - values[0]) / ((values.size - 1) * per)


def _pixel_indices(coord: np.ndarray | None, pixels: int | None) -> bool:
    """Whether a field's coordinate holds the image's pixel indices, as the labelled result of
    an image without coordinates has them (:mod:`xfskde._labels`): integers, ascending,
    within the image."""
    if coord is None or coord.dtype.kind not in "iu" or coord.size == 0:
        return False
    if coord.size > 1 and not np.all(np.diff(coord.astype(np.int64)) > 0):
        return False
    return pixels is None or (int(coord.min()) >= 0 and int(coord.max()) < pixels)


def _grid_stride(
    samples: tuple[int, int], pixels: tuple[int, int], stride: int | None, what: str
) -> int:
    """The stride of a ``samples`` field of a ``pixels`` image, by the library's sample count
    (:func:`xfskde._grid.sample_count`): ``stride`` checked against the shapes, or, None,
    inferred from them when exactly one stride gives them; refused otherwise."""
    (sy, sx), (ny, nx) = samples, pixels
    if (sy, sx) == (ny, nx):
        fits = [1]  # the image's own shape: unstrided (a 1-pixel image fits stride 2 too)
    else:
        fits = [s for s in range(1, 2 * max(ny, nx) + 2)
                if sample_count(ny, s) == sy and sample_count(nx, s) == sx]  # fmt: skip
    sizes = f"{what} has {sy}×{sx} samples"
    if stride is not None and stride not in fits:
        gives = f"{sample_count(ny, stride)}×{sample_count(nx, stride)}"
        hint = f" (its shape says stride={fits[0]})" if len(fits) == 1 else ""
        raise ParameterError(
            f"{sizes} but stride={stride} gives {gives} on the {ny}×{nx} image: pass the stride "
            f"it was computed with{hint}"
        )
    if stride is not None:
        return stride
    if len(fits) == 1:
        return fits[0]
    if not fits:
        raise ParameterError(
            f"{sizes}, which no stride gives on the {ny}×{nx} image: pass the image it was "
            "computed from and its stride="
        )
    which = f"{fits[0]} and {fits[1]} both" if len(fits) == 2 else f"{fits[0]} to {fits[-1]} all"
    raise ParameterError(
        f"{sizes}, as strides {which} give on the {ny}×{nx} image: pass stride= (the one it "
        "was computed with)"
    )


def _frame(
    image: tuple[np.ndarray, list[np.ndarray | None]] | None,
    placed: Any,
    stride: int | None,
    what: str,
) -> _Frame:
    """The frame (:class:`_Frame`) a field or map ``placed`` and an image (what
    :func:`_image_grid` read, or None) are drawn in.

    A labelled field's ``stride`` attr is its stride; an array's is ``stride``, checked against
    the image's shape, or inferred from it (None); without an image, None means 1.
    """
    if getattr(placed, "dims", None) is not None:
        dims = _spatial_dims(placed)
        samples = (placed.sizes[dims[0]], placed.sizes[dims[1]])
        coords = _coord_values(placed, dims)
        if "stride" in placed.attrs:
            stride = int(placed.attrs["stride"])
    else:
        samples, coords = tuple(np.shape(placed)[:2]), [None, None]
    if 0 in samples:
        raise DimensionError(f"{what} has no samples: its shape is {samples}")
    image_coords: list[np.ndarray | None] = [None, None]
    pixels: tuple[int, int] | None = None
    image_extent = None
    if image is not None:
        values, image_coords = image
        pixels = values.shape[:2]
    in_coords = all(c is not None for c in coords) and (
        image is None or all(c is not None for c in image_coords)
    )
    if in_coords:
        s = stride or 1
        centres = [_cell_centres(c, s) for c in coords]
        pixel = [
            _signed_step(np.asarray(ic, np.float64), 1) if ic is not None else None
            for ic in image_coords
        ]
        pixel = [
            p if p is not None else _signed_step(c, s) for p, c in zip(pixel, centres, strict=True)
        ]
        if image is not None:
            (top, bottom), (left, right) = (
                _cell_edges(c, n, 1) for c, n in zip(image_coords, pixels, strict=True)
            )
            image_extent = (left, right, bottom, top)
    else:
        indices = all(_pixel_indices(c, n) for c, n in zip(coords, pixels or (None, None),
                                                            strict=True))  # fmt: skip
        if indices:  # pixel indices, as an image without coordinates gives: crops too
            # the sampled pixels; with a known even stride, the cells' centres half a pixel on
            centres = [_cell_centres(c, stride or 1) for c in coords]
            if stride is None:
                steps = [_signed_step(c, 1) for c in centres if c.size > 1]
                stride = max(1, round(steps[0] or 1)) if steps else 1
        else:
            if pixels is not None:
                stride = _grid_stride(samples, pixels, stride, what)
            stride = stride or 1
            centres = [_cell_centres(None, stride, n) for n in samples]
        s = stride
        pixel = [1.0, 1.0]
        if pixels is not None:
            image_extent = (-0.5, pixels[1] - 0.5, pixels[0] - 0.5, -0.5)
    known = [abs(p) for p in pixel if p]
    pixel = [p if p else (known[0] if known else 1.0) for p in pixel]
    cell = [_signed_step(c, 1) for c in centres]
    cell = [c if c is not None else s * p for c, p in zip(cell, pixel, strict=True)]
    if image_extent is not None:
        left, right, bottom, top = image_extent
        for name, c, (a, b) in (("y", centres[0], (bottom, top)), ("x", centres[1], (left, right))):
            low, high = min(a, b), max(a, b)
            if c.max() < low or c.min() > high:
                where = "coordinates" if in_coords else "pixel indices"
                raise ParameterError(
                    f"{what}'s {name} {where} ({c.min():g} .. {c.max():g}) lie outside the "
                    f"image's ({low:g} .. {high:g}): draw it over the image it was computed from, "
                    "both with their coordinates (or both without: pixels)"
                )
    return _Frame(centres[1], centres[0], (cell[0], cell[1]), (pixel[0], pixel[1]), image_extent)


def _field_values(F_field: Any) -> tuple[np.ndarray, Any]:
    """A coefficient field's values (ny, nx, ℓ) and what places it: the DataArray, transposed to
    (y, x, k), or the array itself."""
    dims = getattr(F_field, "dims", None)
    if dims is not None:  # xarray.DataArray: read by name, placed by its coordinates
        if "k" not in dims or len(dims) != 3:
            raise ValueError(f"F_field must have dims (y, x, k), got {dims}")
        placed = F_field.transpose(*_spatial_dims(F_field), "k")
        return _coefficients(placed.values, "F_field"), placed
    F = _coefficients(F_field, "F_field")
    if F.ndim != 3:
        raise ValueError(f"F_field must have shape (ny, nx, ℓ), got {F.shape}")
    return F, F


def glyphs(
    F_field: Any,
    ax: Any = None,
    *,
    image: Any = None,
    step: int = 1,
    stride: int | None = None,
    n_angles: int = 16,
    scale: float | None = None,
    edges: bool = False,
    color: Any = "tab:red",
    linewidth: float = 1.0,
    cmap: str = "gray",
) -> Any:
    """Glyph plot of a coefficient field: at each sample a star of spokes of length ∝ f(θ).

    Like scikit-image's HOG visualisation: the density of each FS-KDE is evaluated (eq. 1) at
    ``n_angles`` angles and a line segment is drawn from the sample's cell centre in each
    direction θ (or, with ``edges=True``, perpendicular to it, along the edges as HOG draws
    them), its length proportional to f(θ) (negative values of a truncated FS-KDE count as
    zero). Samples without a value (NaN: a missing pixel, or outside a mask) get no glyph.

    The glyphs and the image are drawn in one frame: the DataArrays' ``y``/``x`` coordinates
    when the field and the image both have them (or the field has them and there is no image;
    the image's extent is the outer edges of its first and last pixels, a descending ``y``, as
    a north-up GeoTIFF has, drawn north-up as ``imshow(extent=...)`` draws it), pixel indices
    otherwise. θ is an angle on the image's pixel grid (from its columns towards its rows), so a
    spoke points the way the gradient points over the image in either frame.

    Parameters
    ----------
    F_field : numpy.ndarray (ny, nx, ℓ) or xarray.DataArray with dims (y, x, k)
        A local FS-KDE field, e.g. ``xfskde.local_fskde(image, ..., stride=8)``. A DataArray's
        ``x``/``y`` coordinates give the positions (integer coordinates of a field of an image
        without coordinates are its pixel indices).
    ax : matplotlib Axes, optional
        None creates one.
    image : array_like or xarray.DataArray, optional
        Drawn underneath (``imshow``), the axes' limits its frame.
    step : int, optional
        Draw every ``step``-th sample along each axis (default 1).
    stride : int, optional
        For a NumPy field: the stride it was computed with, so that sample (i, j) stands for
        the cell of pixels ``i*stride .. i*stride + stride - 1`` (and columns alike) and its
        glyph sits at the cell's centre, ``(i*stride + (stride - 1)/2, j*stride + (stride -
        1)/2)`` (:mod:`xfskde._grid`). None (default): inferred from the shapes of the field and
        the image when one stride gives them (:func:`xfskde._grid.sample_count`), 1 without an
        image; a stride the shapes do not agree with is refused. A DataArray's own ``stride``
        attr is used instead.
    n_angles : int, optional
        Spokes per glyph over the full circle, evenly from -π (default 16).
    scale : float, optional
        Image pixels per unit of density; default: the largest spoke is 0.45 × the glyph
        spacing.
    edges : bool, optional
        Turn the spokes by 90° (clockwise as displayed) to show edge directions instead of
        gradient directions (default False).
    color : colour, optional
        Of the spokes (any matplotlib colour; default ``"tab:red"``).
    linewidth : float, optional
        Of the spokes, in points (default 1).
    cmap : str, optional
        Colour map of a one-channel ``image`` (default ``"gray"``).

    Returns
    -------
    matplotlib Axes
        ``ax``, or the one created; the spokes are its last ``LineCollection``.

    Raises
    ------
    ParameterError
        When a NumPy field's shape is no stride grid of the image's (or not the one ``stride``
        gives), or the field's coordinates lie outside the image's.
    ValueError
        For ``step``, ``stride`` or ``n_angles`` that is not a positive integer, and a field
        that is not (ny, nx, ℓ) (or a DataArray without dims (y, x, k)).
    DimensionError
        For a field without samples, or an image that is not (y, x) or (y, x, colour).
    """
    plt = _pyplot()
    from matplotlib.collections import LineCollection

    for name, value in (("step", step), ("stride", stride), ("n_angles", n_angles)):
        if value is not None and (int(value) != value or value < 1):
            raise ValueError(f"{name} must be a positive int, got {value}")
    F, placed = _field_values(F_field)
    shown = _image_grid(image) if image is not None else None
    frame = _frame(shown, placed, None if stride is None else int(stride), "F_field")
    F, xs, ys = F[::step, ::step], frame.x[::step], frame.y[::step]
    (py, px), (cy, cx) = frame.pixel, frame.cell
    if ax is None:
        _, ax = plt.subplots()
    if shown is not None:
        ax.imshow(shown[0], cmap=cmap, extent=frame.image_extent, origin="upper")
    theta = np.linspace(-np.pi, np.pi, int(n_angles), endpoint=False)
    f = np.clip(evaluate(F, theta), 0, None)  # (ny, nx, n_angles)
    drawn = np.isfinite(f).all(axis=-1)  # samples with no value get no glyph
    f = np.where(drawn[..., None], f, 0.0)
    # the glyphs' spacing in image pixels: the nearest neighbours', or a cell's for one sample
    spacing = min(
        (np.min(np.abs(np.diff(c))) if c.size > 1 else abs(cell) * step) / abs(pixel)
        for c, cell, pixel in ((xs, cx, px), (ys, cy, py))
    )
    peak = float(f.max())
    if scale is None:
        scale = 0.45 * spacing / peak if peak > 0 else 0.0
    direction = theta + (np.pi / 2 if edges else 0.0)
    X, Y = np.meshgrid(xs, ys)
    # a spoke in image pixels (+y down the rows), then in the frame's units: a descending
    # coordinate (north-up y) turns it round, as the image is turned
    dx = scale * f * np.cos(direction) * px
    dy = scale * f * np.sin(direction) * py
    start = np.stack([np.broadcast_to(X[..., None], f.shape),
                      np.broadcast_to(Y[..., None], f.shape)], axis=-1)  # fmt: skip
    end = start + np.stack([dx, dy], axis=-1)
    segments = np.stack([start, end], axis=-2)[drawn].reshape(-1, 2, 2)
    ax.add_collection(LineCollection(segments, colors=color, linewidths=linewidth))
    if image is None:
        pad = 0.5 * spacing  # pixels
        left, right = xs[0] - pad * px, xs[-1] + pad * px
        bottom, top = ys[-1] + pad * py, ys[0] - pad * py  # row 0 on top, like an image
        ax.set_aspect("equal")
    else:
        left, right, bottom, top = frame.image_extent
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
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
    orders : sequence of int, optional
        Orders K, one curve each (default 4, 8, 16, 32, as Figure 2).
    ax : matplotlib Axes, optional
        The Axes to draw into (θ along x); None creates one in a new figure.
    eps : float, optional
        When given, draw the truncated kernel Σ_{|k|<ℓ} H_k e^{ikθ} that an FS-KDE truncated at
        ``eps`` uses (eq. 8) instead of the exact one.
    length : int, optional
        When given, keep only the first ``length`` coefficients H_0 .. H_{ℓ-1} (Figure 3's ℓ);
        a ``length`` above K keeps them all (the exact kernel).
    n_points : int, optional
        Angles at which h is evaluated, evenly over [-π, π] (default 721).
    **plot_kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib Axes
        ``ax``, or the one created: one line per order, labelled ``"K = ..."`` (with
        ``", ℓ = ..."`` when truncated), x from -π to π.
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
        How strongly each pixel is oriented, e.g. ``|F_1| / F_0``; same shape. NaN (no value:
        a missing pixel, or outside a mask) is drawn black.
    white : float, optional
        The coherence drawn at full brightness; default the 99th percentile of its finite
        values. Brightness is ``coherence / white`` clipped to [0, 1].

    Returns
    -------
    numpy.ndarray of float64, shape ``orientation.shape + (3,)``
        RGB in [0, 1]: full saturation, hue ``orientation / 2π`` modulo 1 (red at 0),
        value the clipped ``coherence / white``.
    """
    from skimage.color import hsv2rgb

    orientation = np.nan_to_num(np.asarray(orientation, dtype=np.float64))
    coherence = np.asarray(coherence, dtype=np.float64)
    known = np.isfinite(coherence)
    if white is None:
        white = float(np.quantile(coherence[known], 0.99)) if known.any() else 1.0
    hue = np.mod(orientation, 2 * np.pi) / (2 * np.pi)
    value = np.clip(np.where(known, coherence, 0.0) / max(white, 1e-12), 0, 1)
    return hsv2rgb(np.stack([hue, np.ones_like(hue), value], axis=-1))


# --- axial orientation: colours, the colour wheel, the map beside the image, rose diagrams -----

#: Levels at which a matplotlib colour map other than the exact HSV circle is sampled (0.18°).
_CMAP_LEVELS = 1024


class OrientationAxes(NamedTuple):
    """The Axes that :func:`orientation_map` drew into.

    Attributes
    ----------
    image : matplotlib Axes or None
        The image's own panel; None when it has none (no image, or one Axes given).
    map : matplotlib Axes
        The orientation map; its last ``AxesImage`` holds the RGB(A) picture of
        :func:`axial_rgb`, placed by the field's coordinates.
    legend : matplotlib Axes or None
        The colour wheel (:func:`orientation_wheel`); None with ``legend=False``.
    """

    image: Any
    map: Any
    legend: Any


def _hues(fraction: Any, cmap: Any) -> np.ndarray:
    """RGB ``(..., 3)`` of a cyclic colour map at ``fraction`` (taken modulo 1)."""
    fraction = np.mod(np.asarray(fraction, dtype=np.float64), 1.0)
    if isinstance(cmap, str) and cmap == "hsv":  # the exact hue circle: red at 0 and at 1
        from skimage.color import hsv2rgb  # matplotlib's hsv_to_rgb to the last bit, no extra

        ones = np.ones_like(fraction)
        return hsv2rgb(np.stack([fraction, ones, ones], axis=-1))
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError(_INSTALL) from error
    colormap = matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap
    return np.asarray(colormap.resampled(_CMAP_LEVELS)(fraction), dtype=np.float64)[..., :3]


def axial_rgb(
    orientation: Any,
    coherence: Any,
    *,
    white: float = 1.0,
    cmap: Any = "hsv",
    shade: Literal["value", "alpha"] = "value",
) -> np.ndarray:
    """Colours of an axial orientation map: hue over [0, π), brightness or opacity = coherence.

    The colour map goes once round over **π**, not 2π: ω and ω + π are one axis and share a
    colour, and ω → π meets ω = 0. So both flanks of one line — whose gradients point in opposite
    directions, θ and θ + π — get one colour, which a hue of the gradient *direction*
    (:func:`orientation_rgb` of −arg F_1) cannot give.

    Parameters
    ----------
    orientation : array_like
        Axial orientation ω in radians, taken modulo π: :func:`xfskde.orientation.orientation`
        (from F_2, the doubled angles of eq. 1). NaN (no axis) is drawn black (``"value"``) or
        transparent (``"alpha"``).
    coherence : array_like
        Coherence in [0, 1] (:func:`xfskde.orientation.coherence`), the same shape; NaN is
        drawn as 0.
    white : float, optional
        The coherence drawn at full brightness, > 0 (default 1); brightness is
        ``clip(coherence / white, 0, 1)``.
    cmap : str or matplotlib Colormap, optional
        A cyclic colour map, sampled at ω/π. ``"hsv"`` (default) is the exact HSV hue circle
        (red at 0 and π, yellow at π/6, green at π/3, cyan at π/2, blue at 2π/3, magenta at
        5π/6): every hue has full value, so brightness says coherence and nothing else.
        ``"twilight"`` is perceptually uniform but codes the angle partly by lightness (white at
        0, dark at π/2), which then mixes with the coherence shading: use it with ``"alpha"``.
    shade : {"value", "alpha"}, optional
        ``"value"`` (default): the colour times the brightness (the HSV value, for ``"hsv"``),
        so low coherence is dark. ``"alpha"``: RGBA with the brightness as opacity, to lay over
        the image, which then shows through where coherence is low.

    Returns
    -------
    numpy.ndarray of float64, shape ``orientation.shape + (3,)`` (``+ (4,)`` for ``"alpha"``)
        Values in [0, 1].

    Raises
    ------
    ParameterError
        For a ``shade`` not in the list, or a ``white`` that is not a positive number.
    DimensionError
        For ``orientation`` and ``coherence`` of different shapes.
    """
    if shade not in ("value", "alpha"):
        raise ParameterError(f"shade must be 'value' or 'alpha', got {shade!r}")
    white = float(white)
    if not (np.isfinite(white) and white > 0):
        raise ParameterError(f"white must be a positive number, got {white!r}")
    omega = np.asarray(orientation, dtype=np.float64)
    strength = np.asarray(coherence, dtype=np.float64)
    if omega.shape != strength.shape:
        raise DimensionError(
            f"orientation and coherence must have one shape, got {omega.shape} and {strength.shape}"
        )
    missing = ~np.isfinite(omega)
    rgb = _hues(np.where(missing, 0.0, omega) / np.pi, cmap)
    value = np.clip(np.nan_to_num(strength) / white, 0.0, 1.0)
    value[missing] = 0.0
    if shade == "alpha":
        return np.concatenate([rgb, value[..., None]], axis=-1)
    return rgb * value[..., None]


def _wheel_rgba(size: int, white: float, cmap: Any, shade: str) -> np.ndarray:
    """A ``size``×``size`` RGBA disc in image layout (row 0 on top, y down the rows).

    The pixel at offset (dx, dy) from the centre has the direction atan2(dy, dx) — the library's
    angle as displayed — and the colour of that axis, with coherence ``white`` × its distance
    from the centre over the radius; outside the disc it is transparent.
    """
    centre = (size - 1) / 2
    dy, dx = np.mgrid[0:size, 0:size] - centre
    radius = np.hypot(dx, dy) / centre
    colours = axial_rgb(np.arctan2(dy, dx), white * np.minimum(radius, 1.0), white=white,
                        cmap=cmap, shade=shade)  # fmt: skip
    if shade == "value":
        colours = np.concatenate([colours, np.ones((size, size, 1))], axis=-1)
    colours[radius > 1.0, 3] = 0.0
    return colours


def orientation_wheel(
    ax: Any = None,
    *,
    white: float = 1.0,
    cmap: Any = "hsv",
    shade: Literal["value", "alpha"] = "value",
    size: int = 201,
    labels: bool = True,
    caption: bool = True,
    fontsize: float = 7.0,
) -> Any:
    """The colour wheel of :func:`orientation_map`: its legend, drawn as the image is shown.

    The pixel of the disc that lies in the direction θ from its centre — θ in the library's
    convention (:mod:`xfskde.gradients`): from +x (right) towards +y (**down**), clockwise on the
    screen — has the colour of the axis ω = θ mod π. So a structure that runs at +30° on the
    screen (down to the right) has the colour the wheel shows 30° clockwise from its right-hand
    end, and again at 210°: an axis has no sense, so the wheel is symmetric through its centre.
    The distance from the centre is the coherence: 0 at the centre (black; transparent with
    ``shade="alpha"``), ``white`` and above at the rim (full colour). The angles 0°, 45°, 90° and
    135° are written round the lower half.

    Parameters
    ----------
    ax : matplotlib Axes, optional
        A Cartesian Axes to draw into; None creates one in a new figure.
    white : float, optional
        The coherence at the rim, as for :func:`axial_rgb` (default 1).
    cmap : str or matplotlib Colormap, optional
        The map's colour map (:func:`axial_rgb`; default ``"hsv"``).
    shade : {"value", "alpha"}, optional
        The map's shading (:func:`axial_rgb`; default ``"value"``).
    size : int, optional
        Side of the disc's picture in pixels, >= 3 (default 201).
    labels : bool, optional
        Write the angles 0°, 45°, 90°, 135° round the rim (default True).
    caption : bool, optional
        Say above and below the wheel what the angle and the radius mean (default True).
    fontsize : float, optional
        Of the labels and the captions, in points (default 7; the caption below the wheel
        0.9 times it).

    Returns
    -------
    matplotlib Axes
        Its data coordinates are the unit disc with x to the right and y **down** (the y axis is
        inverted, as for an image), so the point at angle θ and radius r is (r cos θ, r sin θ).

    Raises
    ------
    ParameterError
        For a ``size`` that is not an integer >= 3, and the errors of :func:`axial_rgb`.
    """
    if int(size) != size or size < 3:
        raise ParameterError(f"size must be an int >= 3, got {size!r}")
    size = int(size)
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(2.0, 2.0))
    rgba = _wheel_rgba(size, float(white), cmap, shade)
    half = 1.0 + 1.0 / (size - 1)  # the pixel centres span [-1, 1]; their edges half a pixel more
    ax.imshow(rgba, extent=(-half, half, half, -half), origin="upper", interpolation="nearest")
    ax.set_xlim(-1.4, 1.4)
    # y downwards, as an image is shown; room for the labels and captions
    ax.set_ylim(*((1.75, -1.35) if caption else (1.4, -1.2)))
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    if labels:
        places = {0: ("left", "center"), 45: ("left", "top"), 90: ("center", "top"),
                  135: ("right", "top")}  # fmt: skip
        for degrees, (ha, va) in places.items():
            c, s = np.cos(np.deg2rad(degrees)), np.sin(np.deg2rad(degrees))
            ax.plot([c, 1.1 * c], [s, 1.1 * s], color="0.2", linewidth=0.8)
            ax.text(1.13 * c, 1.13 * s, f"{degrees}°", ha=ha, va=va, fontsize=fontsize)
    if caption:
        rim = "1" if float(white) == 1.0 else f"{float(white):g}"
        ax.text(0.0, -1.12, "ω, clockwise from →", ha="center", va="bottom", fontsize=fontsize)
        ax.text(0.0, 1.42, f"coherence: 0 (centre)\nto {rim} (rim)", ha="center", va="top",
                fontsize=0.9 * fontsize)  # fmt: skip
    return ax


def _cell_centres(coord: Any, stride: int, n: int = 0) -> np.ndarray:
    """The centres of a stride grid's cells along one axis, float64.

    None (an array) means the ``n`` cells of :mod:`xfskde._grid` in pixels: sample i stands for
    the pixels ``i*s .. i*s + s - 1``, centred at ``i*s + (s - 1)/2``. Otherwise ``coord``
    holds the cells' centres (:mod:`xfskde._labels`), except integer coords of an even-stride
    field, which name the sampled pixel ``i*s + o`` of an image without coordinates: the centre
    is half a pixel on.
    """
    if coord is None:
        return np.arange(n) * float(stride) + (stride - 1) / 2
    values = np.asarray(coord)
    centres = values.astype(np.float64)
    if values.dtype.kind in "iu" and stride % 2 == 0:
        centres = centres + 0.5
    return centres


def _cell_edges(coord: Any, n: int, stride: int) -> tuple[float, float]:
    """The outer edges of ``n`` cells along one axis (:func:`_cell_centres`): the first's
    leading, the last's trailing."""
    centres = _cell_centres(coord, stride, n)
    step = (centres[-1] - centres[0]) / (n - 1) if n > 1 else float(stride)
    return float(centres[0] - step / 2), float(centres[-1] + step / 2)


def _spatial_dims(array: Any) -> list[str]:
    dims = [d for d in array.dims if d != "k"]
    if {"y", "x"} <= set(dims):
        return ["y", "x"]
    if len(dims) != 2:
        raise DimensionError(f"expected two spatial dims (y, x), got dims {tuple(array.dims)}")
    return dims


def _extent(array: Any, stride: int) -> tuple[float, float, float, float]:
    """``imshow``'s (left, right, bottom, top) of a (y, x[, k]) DataArray or array."""
    dims = getattr(array, "dims", None)
    if dims is None:
        ny, nx = np.shape(array)[:2]
        (top, bottom), (left, right) = _cell_edges(None, ny, stride), _cell_edges(None, nx, stride)
    else:
        stride = int(array.attrs.get("stride", stride))
        ydim, xdim = _spatial_dims(array)
        edges = [
            _cell_edges(array[d].values if d in array.coords else None, array.sizes[d], stride)
            for d in (ydim, xdim)
        ]
        (top, bottom), (left, right) = edges
    return left, right, bottom, top


def _yx_values(array: Any) -> np.ndarray:
    """The values of a computed map, (y, x) for a DataArray."""
    if getattr(array, "dims", None) is not None:
        return np.asarray(array.transpose(*_spatial_dims(array)).values)
    return np.asarray(array)


def _orientation_maps(field_or_maps: Any, kernel: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """Orientation and coherence as NumPy (y, x) arrays, and what places them (the orientation
    map as it came: a DataArray with the field's coordinates and attrs, or an array)."""

    if isinstance(field_or_maps, (tuple, list)):
        if len(field_or_maps) != 2:
            raise ParameterError(
                "field_or_maps must be a coefficient field or a pair (orientation, coherence), "
                f"got a sequence of {len(field_or_maps)}"
            )
        omega, strength = field_or_maps
    else:
        field = field_or_maps
        if getattr(field, "dims", None) is not None:
            field = check_field(field)
            if field.sizes["k"] > 3 and (
                "k" not in field.coords or np.array_equal(field["k"].values[:3], range(3))
            ):
                field = field.isel(k=slice(0, 3))  # F_0 and F_2 are all the maps read
            if kernel is None:
                try:
                    kernel = _orientation.kernel_of(field)
                except ParameterError as error:
                    raise ParameterError(
                        "this field's attrs do not record its kernel: pass the kernel it was "
                        "computed with, orientation_map(..., kernel=xfskde.Cos2KKernel(order, "
                        "eps=...))"
                    ) from error
        elif np.ndim(field) != 3:
            raise DimensionError(
                f"a coefficient field must be (ny, nx, ℓ), got shape {np.shape(field)}; pass "
                "precomputed maps as a pair (orientation, coherence)"
            )
        elif kernel is None:
            raise ParameterError(
                "a coefficient array does not record its kernel: pass the kernel it was computed "
                "with, orientation_map(..., kernel=xfskde.Cos2KKernel(order, eps=...)) (a "
                "labelled field records it)"
            )
        omega = _orientation.orientation(field)
        strength = _orientation.coherence(field, kernel)
    placed = omega
    omega, strength = compute_collections([omega, strength])  # one pass over a lazy field
    omega, strength = _yx_values(omega), _yx_values(strength)
    if omega.ndim != 2 or omega.shape != strength.shape:
        raise DimensionError(
            f"orientation and coherence must be 2-D maps of one shape, got {omega.shape} and "
            f"{strength.shape}"
        )
    if getattr(placed, "dims", None) is None:
        placed = omega
    return omega, strength, placed


def _values(image: Any) -> np.ndarray:
    """An array's values as they are, a PIL picture's as it is shown: a palette one's colours
    (not its indices), an alpha channel kept (``imshow`` draws it)."""
    return picture_values(image)[0] if is_picture(image) else np.asarray(image)


def orientation_map(
    image: Any,
    field_or_maps: Any,
    ax: Any = None,
    *,
    kernel: Cos2KKernel | float | None = None,
    stride: int | None = None,
    white: float = 1.0,
    cmap: Any = "hsv",
    shade: Literal["value", "alpha"] = "value",
    legend: Any = True,
    image_cmap: str = "gray",
    interpolation: str | None = None,
) -> OrientationAxes:
    """The axial orientation of the structures beside the image, coloured over [0, π).

    Hue is the orientation ω along the edges, lines and fibres (:func:`xfskde.orientation.
    orientation`: −½ arg F_2 + π/2 mod π, eq. 1 with doubled angles), brightness (or opacity) the
    coherence C = (|F_2|/H_2)/(F_0/H_0) (:func:`xfskde.orientation.coherence`), colours from
    :func:`axial_rgb`: both flanks of a thin line share one colour, and isotropic texture or noise
    is dark. The colour wheel of :func:`orientation_wheel` is the legend, drawn as the picture is
    displayed (y down, angles clockwise), so the hue a structure has is the wheel's in the
    direction it runs on the screen.

    Parameters
    ----------
    image : array_like, xarray.DataArray or None
        The image, (y, x) or (y, x, colour), shown in its own panel (and under the colours with
        ``shade="alpha"``). Image and map are drawn in one frame: the DataArrays' ``y``/``x``
        coordinates when both have them (the outer edges of the first and last pixels, and of
        the first and last cells; a descending ``y``, as a north-up GeoTIFF has, drawn north-up
        as ``imshow(extent=...)`` draws it), pixel indices otherwise. Its computed values are
        drawn: pass a downsampled copy of a slide.
    field_or_maps : coefficient field or (orientation, coherence)
        A ``(y, x, k)`` coefficient field (ℓ >= 3) — a labelled DataArray from
        :func:`xfskde.local_fskde`, ``.fskde.coefficients`` or :func:`xfskde.open_coefficients`,
        or a NumPy or Dask array ``(ny, nx, ℓ)`` — whose orientation and coherence are computed
        here (only F_0 and F_2 are read; a Dask field is computed once for both maps); or the two
        maps already computed, each a NumPy, Dask or DataArray (y, x).
    ax : matplotlib Axes or pair of Axes, optional
        None: a new figure with the image, the map and the wheel side by side (the image and map
        panels share their axes: zoom one, the other follows). A pair ``(image_ax, map_ax)``: the
        two panels, the wheel inset in the map's lower right corner. One Axes: the map alone (over
        the image with ``shade="alpha"``), the wheel inset.
    kernel : Cos2KKernel or float, optional
        The kernel of a NumPy or Dask field (:func:`xfskde.orientation.coherence`), required
        for those; a labelled field records its own.
    stride : int, optional
        For NumPy or Dask fields and maps (and DataArrays drawn in pixels): the stride they were
        computed with; sample i then covers the pixels ``i*stride .. i*stride + stride - 1``
        (:mod:`xfskde._grid`). None (default): inferred from the shapes of the map and the
        image when one stride gives them (:func:`xfskde._grid.sample_count`), 1 without an
        image; a stride the shapes do not agree with is refused. A DataArray's ``stride`` attr
        is used instead, and in coordinates it is placed by them (cells centred on them).
    white : float, optional
        The coherence drawn at full brightness (default 1).
    cmap : str or matplotlib Colormap, optional
        A cyclic colour map over [0, π): ``"hsv"`` (default, the exact hue circle; see
        :func:`axial_rgb` for why) or e.g. ``"twilight"``.
    shade : {"value", "alpha"}, optional
        Coherence as brightness (dark where low; default) or as opacity over the image.
    legend : bool or matplotlib Axes, optional
        Draw the colour wheel: True (default) where the layout puts it, an Axes to draw it into,
        or False.
    image_cmap : str, optional
        Colour map of a one-channel image (default ``"gray"``).
    interpolation : str, optional
        ``imshow``'s interpolation of the map; ``"nearest"`` shows strided cells as blocks.

    Returns
    -------
    OrientationAxes
        The named tuple ``(image, map, legend)`` of the Axes drawn into.

    Raises
    ------
    ParameterError
        When a NumPy or Dask field comes without ``kernel=`` (or a labelled one records none),
        when the map's shape is no stride grid of the image's (or not the one ``stride`` gives,
        or that of several strides), or when its coordinates lie outside the image's; for a
        ``shade`` not in the list, a ``stride`` that is not a positive integer, and an ``ax``
        or ``field_or_maps`` sequence that is not a pair.
    DimensionError
        For a NumPy field that is not (ny, nx, ℓ), maps that are not 2-D of one shape, and an
        image that is not (y, x) or (y, x, colour).

    Examples
    --------
    >>> import numpy as np, xfskde
    >>> from xfskde import plot
    >>> y, x = np.mgrid[0:64, 0:64]
    >>> stripes = np.cos(2 * np.pi * (y - x * np.tan(np.pi / 6)) / 16)  # run at +30°
    >>> F = xfskde.local_fskde(stripes, order=8, window="gaussian", size=3)
    >>> axes = plot.orientation_map(stripes, F, kernel=xfskde.Cos2KKernel(8))  # doctest: +SKIP
    """
    plt = _pyplot()
    if shade not in ("value", "alpha"):
        raise ParameterError(f"shade must be 'value' or 'alpha', got {shade!r}")
    if stride is not None and (int(stride) != stride or stride < 1):
        raise ParameterError(f"stride must be a positive int, got {stride!r}")
    omega, strength, placed = _orientation_maps(field_or_maps, kernel)
    shown = _image_grid(image) if image is not None else None
    frame = _frame(shown, placed, None if stride is None else int(stride), "the map")
    colours = axial_rgb(omega, strength, white=white, cmap=cmap, shade=shade)

    legend_ax = legend if legend not in (True, False, None) else None
    inset = legend is True
    if ax is None:
        panels = 2 if image is not None else 1
        widths = [1.0] * panels + ([0.42] if legend is True else [])
        width = 4.3 * panels + (1.9 if legend is True else 0.3)
        fig = plt.figure(figsize=(width, 4.6), layout="constrained")
        grid = fig.add_gridspec(1, len(widths), width_ratios=widths)
        image_ax = fig.add_subplot(grid[0, 0]) if image is not None else None
        map_ax = fig.add_subplot(grid[0, panels - 1], sharex=image_ax, sharey=image_ax)
        if legend is True:
            legend_ax, inset = fig.add_subplot(grid[0, panels]), False
        map_ax.set_title("orientation (hue), coherence (brightness)", fontsize=10)
        if image_ax is not None:
            image_ax.set_title("image", fontsize=10)
    elif isinstance(ax, (tuple, list)):
        if len(ax) != 2:
            raise ParameterError(f"ax must be one Axes or a pair (image, map), got {len(ax)}")
        image_ax, map_ax = ax
    else:
        image_ax, map_ax = None, ax

    image_extent = frame.image_extent
    if shown is not None:
        pixels = shown[0]
        grey = image_cmap if pixels.ndim == 2 else None
        for panel in (image_ax, map_ax if shade == "alpha" else None):
            if panel is not None:
                panel.imshow(pixels, cmap=grey, extent=image_extent, origin="upper")
    elif shade == "alpha":
        map_ax.set_facecolor("0.5")
    map_ax.imshow(colours, extent=frame.extent(), origin="upper", interpolation=interpolation)
    if image_extent is not None:  # the image's frame: a last, partial cell may overhang it
        left, right, bottom, top = image_extent
        map_ax.set_xlim(left, right)
        map_ax.set_ylim(bottom, top)
    for panel in (image_ax, map_ax):
        if panel is not None:
            panel.set_xticks([])
            panel.set_yticks([])

    if inset:
        legend_ax = map_ax.inset_axes([0.76, 0.01, 0.23, 0.23])
        legend_ax.set_facecolor((1.0, 1.0, 1.0, 0.8))
    if legend_ax is not None:
        orientation_wheel(legend_ax, white=white, cmap=cmap, shade=shade, caption=not inset,
                          fontsize=6.0 if inset else 8.0)  # fmt: skip
    return OrientationAxes(image_ax, map_ax, legend_ax)


def _region_mean(field: Any, region: Any, stride: int) -> tuple[np.ndarray, int]:
    """The mean coefficients (ℓ,) over a region of a field, and how many samples it averaged.

    Samples whose F_0 is not finite (no-data under ``nan_policy="propagate"``) are left out.
    """
    import xarray as xr

    if isinstance(field, xr.DataArray):
        field = check_field(field)
        F = field.transpose(*_spatial_dims(field), "k")
        if _spatial_dims(field) != ["y", "x"]:
            F = F.rename(dict(zip(_spatial_dims(field), ("y", "x"), strict=True)))
    else:
        if np.ndim(field) != 3:
            raise DimensionError(f"field must be (ny, nx, ℓ), got shape {np.shape(field)}")
        ny, nx = np.shape(field)[:2]
        coords = {"y": _grid_pixels(ny, stride), "x": _grid_pixels(nx, stride)}
        F = xr.DataArray(field, dims=("y", "x", "k"), coords=coords)
    if np.dtype(F.dtype).kind not in "cfiu":
        raise DimensionError(f"field must hold FS-KDE coefficients, got dtype {F.dtype}")
    if isinstance(region, Mapping):
        unknown = sorted(set(region) - {"y", "x"})
        if unknown:
            raise ParameterError(
                f"region's keys must be 'y' and/or 'x' (coordinate slices), got {unknown}"
            )
        F = F.sel(dict(region))
        keep = xr.ones_like(F.isel(k=0).real, dtype=bool)
    elif region is None:
        keep = xr.ones_like(F.isel(k=0).real, dtype=bool)
    else:
        if isinstance(region, xr.DataArray):
            mask = region.transpose(*_spatial_dims(region))
            mask = mask.rename(dict(zip(mask.dims, ("y", "x"), strict=True)))
            # no coordinates: pixel indices, as the field of an image without them has
            mask = mask.assign_coords({d: np.arange(mask.sizes[d]) for d in ("y", "x")
                                       if d not in mask.coords})  # fmt: skip
            if mask.shape != F.shape[:2] or not all(
                d in mask.coords and d in F.coords and np.array_equal(mask[d], F[d])
                for d in ("y", "x")
            ):  # a mask on another grid (the image's): the value nearest each sample
                mask = mask.sel(y=F["y"], x=F["x"], method="nearest")
            mask = mask.drop_vars([c for c in mask.coords if c not in ("y", "x")])
        else:
            mask = np.asarray(region)
            if mask.shape != F.shape[:2]:
                raise DimensionError(
                    f"a region mask must have the field's spatial shape {F.shape[:2]}, got "
                    f"{mask.shape} (a DataArray mask on the image's grid is resampled instead)"
                )
            mask = xr.DataArray(mask, dims=("y", "x"), coords={"y": F["y"], "x": F["x"]})
        if mask.dtype != bool:
            raise ParameterError(f"a region mask must be boolean, got dtype {mask.dtype}")
        keep = mask
    keep = keep & np.isfinite(F.isel(k=0))
    total = F.astype(np.complex128).where(keep, 0).sum(("y", "x"))
    total, count = compute_collections([total.data, keep.sum().data])  # one pass for both
    count = int(count)
    if count == 0:
        raise ParameterError(
            "the region selects no sample of the field (or only no-data ones): check its "
            "slices against the field's coordinates (field.y, field.x)"
        )
    return np.asarray(total) / count, count


def rose(
    field: Any,
    region: Any = None,
    ax: Any = None,
    *,
    stride: int = 1,
    axial: bool = True,
    orientation: bool = True,
    normalize: bool = False,
    n_points: int = 721,
    cmap: Any = "hsv",
    fill: bool = True,
    **plot_kwargs: Any,
) -> Any:
    """Rose diagram of a region of a field: the FS-KDE density of its gradients' angles.

    The coefficients are **averaged over the region first** and the density of the mean is
    drawn, f(θ) = Σ_k F̄_k e^{ikθ} (eq. 1, :func:`xfskde.evaluate`). The FS-KDE is linear in its
    weights, so F̄ is itself the FS-KDE of every gradient in the region's windows, each weighted
    by |g| times the window weights that cover it (for ``window="box", size=s, stride=s`` cells:
    exactly the region's gradients, pooled) — not an average of pictures, and cheap on a slide:
    a Dask field is reduced to ℓ numbers before anything is drawn.

    The polar axes turn **clockwise** from the right (+x), as the image is displayed (y down the
    rows, :mod:`xfskde.gradients`): a petal points the way the gradients point on the screen.
    The radius is the density in gradient magnitude per radian (it integrates to the mean
    |g| of the region's windows, 2π F̄_0), or per unit with ``normalize=True``.

    Parameters
    ----------
    field : xarray.DataArray (y, x, k), or NumPy or Dask array (ny, nx, ℓ)
        A coefficient field.
    region : dict of slices, boolean mask, or None, optional
        Which samples to average. A dict ``{"y": slice(a, b), "x": slice(c, d)}`` selects by the
        field's coordinates (``DataArray.sel``: both ends included; for arrays, the sampled
        pixels ``i*stride + (stride-1)//2``). A boolean mask of the field's spatial shape, or a
        boolean DataArray (y, x) — one on another grid, e.g. the image's, is read at the sample
        nearest each of the field's. None: the whole field. Samples whose F_0 is NaN are left
        out.
    ax : matplotlib Axes, optional
        A polar Axes (its direction is set clockwise, zero at the right) or a Cartesian one
        (θ along x). None creates a polar Axes in a new figure.
    stride : int, optional
        For an array field: the stride it was computed with (to place its samples in pixels;
        default 1).
    axial : bool, optional
        Also draw (default True) the axial reading (dashed), ½(f(θ) + f(θ + π)) =
        Σ_{k even} F̄_k e^{ikθ}: the density of the gradient *axes*, θ and θ + π alike, whose
        two opposite petals are what the orientation and coherence (F_0, F_2) summarise.
    orientation : bool, optional
        Draw (default True) the region's axial orientation ω
        (:func:`xfskde.orientation.orientation` of F̄: the axis *along* the structures,
        perpendicular to the petals) as a line through the centre, in its colour on the wheel
        of :func:`orientation_wheel`; drawn only where the mean has F_2 and F_2 is not zero.
    normalize : bool, optional
        Divide by 2π F̄_0 so that the curve integrates to 1 over the circle (default False).
    n_points : int, optional
        Angles at which f is evaluated, evenly over [-π, π] (default 721: every half degree).
    cmap : str or matplotlib Colormap, optional
        The orientation map's colour map, for the ω line (default ``"hsv"``).
    fill : bool, optional
        Shade the area under the density (default True).
    **plot_kwargs
        Passed to ``ax.plot`` for the density curve.

    Returns
    -------
    matplotlib Axes
        ``ax.lines[0]`` is f, ``ax.lines[1]`` the axial reading (with ``axial=True``), then the
        ω line.

    Raises
    ------
    ParameterError
        For a ``region`` dict with keys other than ``"y"`` and ``"x"``, a region mask that is
        not boolean, a region that selects no sample with a finite F_0, and ``normalize=True``
        where F̄_0 is not positive.
    DimensionError
        For an array field that is not (ny, nx, ℓ), a field that holds no numbers, and an
        array mask of another shape than the field's (y, x).
    """
    mean, count = _region_mean(field, region, int(stride))
    if mean.size < 1:
        raise DimensionError("the field has no coefficients along k")
    if ax is None:
        _, ax = _pyplot().subplots(subplot_kw={"projection": "polar"})
    polar_axes = getattr(ax, "name", "") == "polar"
    if polar_axes:
        ax.set_theta_zero_location("E")
        ax.set_theta_direction(-1)  # clockwise: y points down the rows, as displayed
    theta = np.linspace(-np.pi, np.pi, int(n_points))
    scale = 1.0
    if normalize:
        if not mean[0].real > 0:
            raise ParameterError("normalize=True needs F_0 > 0: the region holds no gradient")
        scale = 1.0 / (2 * np.pi * mean[0].real)
    f = scale * evaluate(mean, theta)
    label = f"mean FS-KDE of {count} sample{'s' if count != 1 else ''}"
    (line,) = ax.plot(theta, f, **{"label": label, **plot_kwargs})
    if fill:
        ax.fill_between(theta, 0, np.clip(f, 0, None), color=line.get_color(), alpha=0.2)
    top = float(np.max(f)) if f.size else 1.0
    if axial:
        even = mean.copy()
        even[1::2] = 0  # ½(f(θ) + f(θ + π)): the odd terms cancel
        ax.plot(theta, scale * evaluate(even, theta), "--", color=line.get_color(),
                linewidth=1.0, label="axial: ½(f(θ) + f(θ + π))")  # fmt: skip
    if orientation and mean.size >= 3 and abs(mean[2]) > 0:
        omega = float(_orientation.orientation(mean[None])[0])
        reach = 1.05 * top
        colour = _hues(omega / np.pi, cmap)
        ax.plot([omega, omega, omega + np.pi], [reach, 0.0, reach], color=colour, linewidth=2.0,
                label=f"structures: ω = {np.rad2deg(omega):.1f}°")  # fmt: skip
    if polar_axes and top > 0:
        ax.set_ylim(0, 1.1 * top)
    return ax


# --- segmentations: label colours, the input beside its labels and their boundaries ----------

#: Most textures the legend names one by one; more are summed up in one entry.
_LEGEND_TEXTURES = 12


class SegmentationAxes(NamedTuple):
    """The Axes that :func:`segmentation` drew into (None for a panel not drawn).

    Attributes
    ----------
    image : matplotlib Axes or None
        The input image (its ``AxesImage`` is labelled ``"input"``).
    labels : matplotlib Axes or None
        The labels as a categorical colour image (:func:`label_rgb`; labelled ``"labels"``).
    overlay : matplotlib Axes or None
        The input with the labels' boundaries over it: ``AxesImage`` layers labelled
        ``"input"``, ``"labels"`` (the tint, with ``alpha > 0``), ``"truth boundaries"`` (with
        ``truth``) and ``"boundaries"``, in that order, the boundaries last (on top).
    """

    image: Any
    labels: Any
    overlay: Any


def _rgb(colour: Any, name: str) -> np.ndarray:
    """A colour as three floats in [0, 1]: an RGB(A) tuple, or any matplotlib colour string."""
    if isinstance(colour, str):
        try:
            from matplotlib.colors import to_rgb
        except ImportError as error:
            raise ImportError(_INSTALL) from error
        try:
            return np.asarray(to_rgb(colour), dtype=np.float64)
        except ValueError as error:
            raise ParameterError(f"{name} must be a colour, got {colour!r}") from error
    values = np.asarray(colour, dtype=np.float64).ravel()
    if values.size not in (3, 4) or not np.all((values >= 0) & (values <= 1)):
        raise ParameterError(
            f"{name} must be a colour: a name or an RGB(A) tuple in [0, 1], got {colour!r}"
        )
    return values[:3]


def _label_palette(n: int, colors: Any = None) -> np.ndarray:
    """RGB ``(n + 1, 3)``: row i is the colour of label i (row 0, the background, unused): the
    library's label colours (:func:`xfskde._palette.label_palette`, as in GeoTIFF colour tables
    and NGFF label images), or ``colors`` cycled."""
    if colors is None:
        return label_palette(n)
    if isinstance(colors, str) or len(colors) == 0:
        raise ParameterError(f"colors must be a sequence of colours, got {colors!r}")
    palette = [_rgb(c, "colors") for c in colors]
    cycle = np.arange(max(n, 0)) % len(palette)  # given colours cycle, as in scikit-image
    return np.concatenate([np.zeros((1, 3)), np.asarray(palette)[cycle].reshape(-1, 3)])


def _label_values(labels: Any, name: str = "labels") -> np.ndarray:
    """Integer labels as a NumPy (y, x) array; a DataArray by its spatial dims, Dask computed."""
    if getattr(labels, "dims", None) is not None:
        labels = labels.transpose(*_spatial_dims(labels)).values
    values = np.asarray(labels)
    if values.ndim != 2:
        raise DimensionError(f"{name} must be a 2-D (y, x) label image, got shape {values.shape}")
    if values.dtype.kind not in "biu":
        raise ParameterError(
            f"{name} must hold integer labels (0 = background), got dtype {values.dtype}; "
            f"pass {name}.astype(int) if its values are whole numbers"
        )
    return values.astype(np.int64, copy=False)


def label_rgb(
    labels: Any,
    *,
    colors: Sequence[Any] | None = None,
    background: Any = BACKGROUND_COLOUR,
    alpha: float = 1.0,
) -> np.ndarray:
    """Labels as a categorical RGBA picture: a colour per label, label 0 the background.

    Label i (1, 2, ...) always gets the i-th colour, whichever labels are present — unlike
    scikit-image's ``label2rgb``, which colours the labels present in turn — so two label images
    of one scene (a segmentation and its ground truth, or two runs) can be compared colour for
    colour. The labels :func:`xfskde.segment` returns (1 .. n, 0 outside the mask) are the
    numbering scikit-image's segmentations and napari's label layers use.

    Parameters
    ----------
    labels : array_like, Dask array or xarray.DataArray, integer, (y, x)
        The label image; 0 is the background. A DataArray is read by its spatial dims (``y``
        and ``x``, else its two dims), a Dask array computed.
    colors : sequence of colours, optional
        Colours of labels 1, 2, ... (matplotlib colour names or RGB tuples in [0, 1]), cycled
        when there are more labels. Default: matplotlib's "tab10" without its grey, then the
        light halves of "tab20", then hues spaced by the golden angle: distinct for any number
        of labels.
    background : colour or None, optional
        The colour of label 0: a neutral light grey (default, RGB 0.85), or None for
        transparent.
    alpha : float, optional
        Opacity of the labels' colours, in [0, 1] (default 1: opaque; lower to lay them over
        an image).

    Returns
    -------
    numpy.ndarray of float64, shape ``labels.shape + (4,)``
        RGBA in [0, 1]; the background's alpha is 1, or 0 with ``background=None``.

    Raises
    ------
    ParameterError
        For labels that are not integers or are negative, an ``alpha`` outside [0, 1], and a
        colour that matplotlib does not know or that is not RGB(A) in [0, 1].
    DimensionError
        For labels that are not 2-D.

    Examples
    --------
    >>> import numpy as np
    >>> from xfskde import plot
    >>> rgba = plot.label_rgb(np.array([[0, 1], [2, 1]]))
    >>> rgba.shape, rgba[0, 0].tolist()
    ((2, 2, 4), [0.85, 0.85, 0.85, 1.0])
    """
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ParameterError(f"alpha must lie in [0, 1], got {alpha!r}")
    values = _label_values(labels)
    if values.size and values.min() < 0:
        raise ParameterError(
            f"labels must be >= 0 (0 = background), got a minimum of {values.min()}"
        )
    palette = _label_palette(int(values.max()) if values.size else 0, colors)
    rgba = np.empty((*values.shape, 4), dtype=np.float64)
    rgba[..., :3] = palette[values]
    rgba[..., 3] = alpha
    outside = values == 0
    if background is None:
        rgba[outside] = 0.0
    else:
        rgba[outside] = (*_rgb(background, "background"), 1.0)
    return rgba


#: The colours channels are added in when an image is shown as a composite (:func:`_shown`):
#: napari's magenta and green for two channels, its cycle for four or more.
_TWO_CHANNELS = ((1.0, 0.0, 1.0), (0.0, 1.0, 0.0))
_CHANNEL_CYCLE = (
    (0.0, 1.0, 1.0), (1.0, 1.0, 0.0), (1.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
    (0.0, 0.0, 1.0),
)  # fmt: skip
#: An image in [0, 1] whose 99.9th percentile reaches this is shown as its values say (RGB).
_UNIT_WHITE = 0.5


def _stretched(plane: np.ndarray) -> np.ndarray:
    """A channel between its 0.1th and 99.9th percentiles (of its finite values) as 0 and 1,
    clipped; missing values 0."""
    finite = plane[np.isfinite(plane)]
    if not finite.size:
        return np.zeros(plane.shape)
    low, high = np.percentile(finite, [0.1, 99.9])
    scaled = (plane - low) / (high - low if high > low else 1.0)
    return np.clip(np.nan_to_num(scaled, nan=0.0), 0.0, 1.0)


def _shown(pixels: np.ndarray) -> np.ndarray:
    """A colour image (y, x, channels) as ``imshow`` should show it.

    Three or four channels of 8 bits, or whose values lie in [0, 1] (integers as a share of
    their dtype's maximum, a full-range 16-bit RGB) and reach half of it: RGB or RGBA, as their
    values say. Any other — a fluorescence image's counts (12 or 16 bits, mostly dark), a
    satellite's reflectances, two or five channels — is shown as napari shows channels: each
    stretched between its own 0.1th and 99.9th percentiles, three as red, green and blue,
    any other number added in colours (two in magenta and green). Before 2026-11-29 a 16-bit
    fluorescence image was divided by 65 535 (shown black: its nuclei at 4 % of it) and an
    image of two or five channels refused.
    """
    channels = pixels.shape[-1]
    if channels in (3, 4) and pixels.dtype == np.uint8:
        return pixels  # as it is: no float copy of an RGB image
    if pixels.dtype.kind in "iu":
        unit = pixels.astype(np.float64) / np.iinfo(pixels.dtype).max
    else:
        unit = pixels.astype(np.float64)
    if channels in (3, 4):
        finite = unit[np.isfinite(unit)]
        if finite.size and finite.min() >= 0 and finite.max() <= 1:
            if np.percentile(finite, 99.9) >= _UNIT_WHITE:
                return np.nan_to_num(unit, nan=0.0)
    planes = [_stretched(unit[..., c]) for c in range(channels)]
    if channels == 3:
        return np.stack(planes, axis=-1)
    colours = _TWO_CHANNELS if channels == 2 else _CHANNEL_CYCLE
    shown = np.zeros((*pixels.shape[:2], 3))
    for i, plane in enumerate(planes):
        shown += plane[..., None] * np.asarray(colours[i % len(colours)])
    return np.clip(shown, 0.0, 1.0)


def _segmentation_image(image: Any) -> tuple[np.ndarray, Any]:
    """The image's values (y, x[, colour]) ready for ``imshow`` (:func:`_shown`), and the
    image for extents. A DataArray is read by its dims' names
    (:func:`xfskde._labels.image_dims`: a colour dim at either end)."""
    from ._labels import image_dims

    if getattr(image, "dims", None) is not None:
        y, x, colour = image_dims(image)
        image = image.transpose(y, x, *([colour] if colour else []))
        placed = image.isel({colour: 0}) if colour else image
        pixels = np.asarray(image.values)
    else:
        pixels = _values(image)
        placed = pixels
    if pixels.ndim == 3 and pixels.shape[-1] == 1:
        pixels = pixels[..., 0]
    if pixels.ndim == 3:
        pixels = _shown(pixels)
    elif pixels.ndim != 2:
        raise DimensionError(
            f"image must be grey (y, x) or colour (y, x, 3 or 4), got shape {pixels.shape}"
        )
    return pixels, placed


def _boundary_rgba(boundaries: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """RGBA: ``colour`` where ``boundaries`` is True, transparent elsewhere."""
    rgba = np.zeros((*boundaries.shape, 4), dtype=np.float64)
    rgba[boundaries] = (*colour, 1.0)
    return rgba


def _axis_label(placed: Any, dim: str) -> str | None:
    """``"x (µm)"``: a DataArray coordinate's name and units, when it has units."""
    if getattr(placed, "dims", None) is None or dim not in placed.coords:
        return None
    units = placed[dim].attrs.get("units")
    return f"{dim} ({units})" if units else None


def segmentation(
    image: Any,
    labels: Any,
    *,
    truth: Any = None,
    ax: Any = None,
    boundary_color: Any = (1.0, 1.0, 0.0),
    truth_color: Any = (0.0, 1.0, 1.0),
    alpha: float = 0.3,
    mode: Literal["thick", "inner", "outer"] = "thick",
    colors: Sequence[Any] | None = None,
    background: Any = BACKGROUND_COLOUR,
    legend: Any = True,
    image_cmap: str = "gray",
) -> SegmentationAxes:
    """A segmentation beside its image: the input, the labels, and their boundaries over it.

    Three panels, side by side: (a) the input image; (b) the labels as a categorical colour
    image (:func:`label_rgb`: label i in the i-th colour, the background 0 in a neutral grey);
    (c) the input with the labels' colours over it at opacity ``alpha`` and the boundaries
    between labels drawn in ``boundary_color`` — the pixels scikit-image's
    :func:`skimage.segmentation.find_boundaries` marks, as its ``mark_boundaries`` paints them —
    and, given ``truth``, the ground truth's boundaries in ``truth_color`` under them. A legend
    names the colours: "texture 1" .. "texture n", "background", the boundaries.

    Every panel is placed by the image's coordinates (``imshow``'s extent: the outer edges of
    the first and last pixels): a DataArray's ``y``/``x`` coords — µm, or CRS units such as
    metres with ``y`` descending, the axes then labelled with the coords' ``units`` attr — or,
    for a NumPy image, pixel indices (then a DataArray's labels give the coordinates).

    Parameters
    ----------
    image : array_like, Dask array or xarray.DataArray
        The segmented image: grey (y, x), any dtype, shown with ``image_cmap``, or colour
        (y, x, channels): RGB or RGBA as its values say when it has 3 or 4 channels of 8 bits
        or in [0, 1] (floats, or integers as a share of their dtype's maximum, reaching half of
        it); any other (a fluorescence image's counts, a satellite's bands, 2 or 5 channels)
        each channel stretched between its 0.1th and 99.9th percentiles, 3 of them shown as
        RGB and any other number added in colours, as napari shows channels (two: magenta
        and green). A DataArray may have a colour dim at either end (``band``, ``c``, ...).
        Its computed values are drawn: pass a downsampled copy of a slide (and its labels
        downsampled alike).
    labels : array_like, Dask array or xarray.DataArray, integer, (y, x)
        Its labels, at the image's resolution (the same y, x shape): e.g. what
        :func:`xfskde.segment` returns, 1 .. n with 0 the background outside a mask.
    truth : array_like, Dask array or xarray.DataArray, integer, (y, x), optional
        A ground truth of the same shape, whose boundaries are drawn in panel (c) too (any
        integer numbering: only where it changes matters).
    ax : matplotlib Axes or sequence of three, optional
        None: a new figure with the three panels side by side, sharing their axes (zoom one, the
        others follow) and the legend below. Three Axes ``(image, labels, overlay)``, any of
        them None to leave that panel out; the legend then goes under the labels' (or the
        overlay's) Axes. One Axes: the overlay alone.
    boundary_color, truth_color : colour, optional
        Of the labels' boundaries (default yellow, as ``mark_boundaries`` draws them) and of the
        truth's (default cyan): a matplotlib colour name or an RGB tuple in [0, 1].
    alpha : float, optional
        Opacity of the labels' colours over the image in panel (c), in [0, 1]; 0 draws the
        boundaries alone (default 0.3, as ``skimage.color.label2rgb``).
    mode : {"thick", "inner", "outer"}, optional
        :func:`skimage.segmentation.find_boundaries`' mode: "thick" (default) marks the pixels
        on both sides of a change of label, symmetric between the two; "inner" those inside
        each label's region, "outer" those outside it (as ``mark_boundaries`` does).
    colors : sequence of colours, optional
        Colours of labels 1, 2, ... (:func:`label_rgb`).
    background : colour or None, optional
        Colour of label 0 in panel (b) (default a neutral light grey; None: transparent). In
        panel (c) the background is never tinted.
    legend : bool or matplotlib Axes, optional
        Draw the legend: True (default) where the layout puts it, an Axes to draw it into, or
        False.
    image_cmap : str, optional
        Colour map of a grey image (default ``"gray"``).

    Returns
    -------
    SegmentationAxes
        The named tuple ``(image, labels, overlay)`` of the Axes drawn into; the figure is
        ``axes.overlay.figure``.

    Raises
    ------
    ParameterError
        When the labels (or the truth) do not have the image's (y, x) shape or are not
        integers, the labels are negative, a colour or ``alpha`` is out of range, ``mode``
        is not in the list, or ``ax`` is a sequence of other than three Axes.
    DimensionError
        For labels that are not 2-D, and an image that is neither (y, x) nor (y, x, channels).

    Examples
    --------
    >>> import numpy as np, xfskde
    >>> from xfskde import plot
    >>> from xfskde.datasets import dead_leaves
    >>> image, truth = dead_leaves((96, 96), seed=1)
    >>> labels = xfskde.segment(image, 3, features=("color", "fskde"), size=4)  # doctest: +SKIP
    >>> axes = plot.segmentation(image, labels, truth=truth)  # doctest: +SKIP
    >>> axes.overlay.figure.savefig("segmentation.png")  # doctest: +SKIP
    """
    plt = _pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from skimage.segmentation import find_boundaries

    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:
        raise ParameterError(f"alpha must lie in [0, 1], got {alpha!r}")
    if mode not in ("thick", "inner", "outer"):
        raise ParameterError(f"mode must be 'thick', 'inner' or 'outer', got {mode!r}")
    pixels, placed = _segmentation_image(image)
    shape = pixels.shape[:2]
    given: dict[str, np.ndarray] = {}
    for name, value in (("labels", labels), ("truth", truth)):
        if value is None:
            continue
        values = _label_values(value, name)
        if values.shape != shape:
            raise ParameterError(
                f"{name} have shape {values.shape} but the image is {shape} pixels: pass {name} "
                "at the image's resolution (or downsample both alike, e.g. [::s, ::s])"
            )
        given[name] = values
    values = given["labels"]
    if getattr(placed, "dims", None) is None and getattr(labels, "dims", None) is not None:
        placed = labels  # a NumPy image: the labels' coordinates place it
    extent = _extent(placed, 1)
    line_colour = _rgb(boundary_color, "boundary_color")
    truth_colour = _rgb(truth_color, "truth_color")
    colours = label_rgb(values, colors=colors, background=background)

    if ax is None:
        # three panels ~3.1 in wide, as tall as the image's aspect says, plus the titles, the
        # legend below and, for coordinates, the tick labels
        ticks = getattr(placed, "dims", None) is not None
        height = float(np.clip(3.1 * abs(extent[2] - extent[3]) / abs(extent[1] - extent[0]),
                               1.0, 8.0))  # fmt: skip
        height += 0.45 + (0.4 if legend is True else 0.0) + (0.45 if ticks else 0.0)
        fig = plt.figure(figsize=(10.0, height), layout="constrained")
        axes = fig.subplots(1, 3, sharex=True, sharey=True)
        image_ax, labels_ax, overlay_ax = axes
        image_ax.set_title("input", fontsize=10)
        labels_ax.set_title("labels", fontsize=10)
        overlay_ax.set_title("boundaries" + (" vs truth" if truth is not None else ""), fontsize=10)
    elif isinstance(ax, (tuple, list, np.ndarray)):  # an array: what plt.subplots returns
        ax = list(np.ravel(np.asarray(ax, dtype=object)))
        if len(ax) != 3:
            raise ParameterError(
                f"ax must be one Axes or three (image, labels, overlay), got {len(ax)}"
            )
        image_ax, labels_ax, overlay_ax = ax
    else:
        image_ax, labels_ax, overlay_ax = None, None, ax

    grey = image_cmap if pixels.ndim == 2 else None
    for panel in (image_ax, overlay_ax):
        if panel is not None:
            panel.imshow(pixels, cmap=grey, extent=extent, origin="upper", label="input")
    if labels_ax is not None:
        labels_ax.imshow(colours, extent=extent, origin="upper", interpolation="nearest",
                         label="labels")  # fmt: skip
    if overlay_ax is not None:
        if alpha > 0:
            tint = label_rgb(values, colors=colors, background=None, alpha=alpha)
            overlay_ax.imshow(tint, extent=extent, origin="upper", interpolation="nearest",
                              label="labels")  # fmt: skip
        layers = [("truth boundaries", given.get("truth"), truth_colour),
                  ("boundaries", values, line_colour)]  # fmt: skip
        for name, layer, colour in layers:
            if layer is None:
                continue
            edges = find_boundaries(layer, mode=mode)
            overlay_ax.imshow(_boundary_rgba(edges, colour), extent=extent, origin="upper",
                              interpolation="nearest", label=name)  # fmt: skip
    xlabel, ylabel = (_axis_label(placed, d) for d in _xy_dims(placed))
    drawn = [panel for panel in (image_ax, labels_ax, overlay_ax) if panel is not None]
    for i, panel in enumerate(drawn):
        panel.set_xlim(extent[0], extent[1])
        panel.set_ylim(extent[2], extent[3])
        if xlabel:
            panel.set_xlabel(xlabel, fontsize=8)
        if ylabel and i == 0:
            panel.set_ylabel(ylabel, fontsize=8)
        if xlabel is None and ylabel is None and getattr(placed, "dims", None) is None:
            panel.set_xticks([])  # pixel indices: no ticks, as the other pictures
            panel.set_yticks([])

    if legend is not False and legend is not None:
        present = np.unique(values)
        textures = [int(v) for v in present if v > 0]
        palette = _label_palette(max(textures, default=0), colors)
        handles = [Patch(facecolor=palette[v], label=label_name(v))
                   for v in textures[:_LEGEND_TEXTURES]]  # fmt: skip
        if len(textures) > _LEGEND_TEXTURES:
            more = len(textures) - _LEGEND_TEXTURES
            handles.append(Patch(facecolor="none", edgecolor="none", label=f"+ {more} more"))
        if present.size and present[0] == 0:
            face = "none" if background is None else _rgb(background, "background")
            handles.append(Patch(facecolor=face, edgecolor="0.5", label="background"))
        if overlay_ax is not None:
            handles.append(Line2D([], [], color=line_colour, linewidth=2, label="boundaries"))
            if "truth" in given:
                handles.append(Line2D([], [], color=truth_colour, linewidth=2,
                                      label="truth boundaries"))  # fmt: skip
        options = {"handles": handles, "fontsize": 8, "ncols": min(len(handles), 6)}
        if legend is True and ax is None:
            fig.legend(loc="outside lower center", frameon=False, **options)
        elif legend is True:
            host = next(p for p in (labels_ax, overlay_ax, image_ax) if p is not None)
            host.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), frameon=False,
                        **{**options, "ncols": min(len(handles), 3)})  # fmt: skip
        else:  # an Axes of its own
            legend.legend(loc="center", frameon=False, **{**options, "ncols": 1})
            legend.set_axis_off()
    return SegmentationAxes(image_ax, labels_ax, overlay_ax)


def _xy_dims(placed: Any) -> tuple[str, str]:
    """The (x, y) dim names of a DataArray (for axis labels); ("x", "y") otherwise."""
    if getattr(placed, "dims", None) is None:
        return "x", "y"
    ydim, xdim = _spatial_dims(placed)
    return xdim, ydim
