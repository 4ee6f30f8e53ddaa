"""Local FS-KDE coefficient fields of images: the block core (paper, section 2.3).

At every sampled pixel x the local FS-KDE is

.. math:: F_k(x) = H_k\\,\\big(W\\,e^{-ik\\Theta} * \\varphi\\big)(x), \\qquad k = 0 .. ℓ-1,

with :math:`W = |g|`, :math:`\\Theta = \\arg g` (see :mod:`xfskde.gradients`), φ a window that
sums to one (:mod:`xfskde.windows`) and :math:`H_k` the cos^2K coefficients (:mod:`xfskde.kernel`).
Because :math:`W e^{-ik\\Theta} = |g|\\,(\\bar g/|g|)^k`, the ℓ planes need complex multiplications
only.

**Sampling grid.** With ``stride = s`` the output samples the pixels
``(i*s + o, j*s + o)`` with ``o = (s - 1) // 2``: the centres (rounded down) of the s×s cells of a
grid anchored at pixel (0, 0) (:mod:`xfskde._grid` holds the rule). An axis of n pixels gives
``ceil((n - o) / s)`` samples, so with ``window="box", size=8, stride=8`` every output is the
FS-KDE of one 8×8 cell (the last cell may extend past the edge, read through ``boundary``), the
analogue of HOG's cells.

**Gradients.** ``gradient="central"`` (the paper's, the default) is computed by the compiled
core from the image, row by row. The wider operators (``"scharr"``, ``"gaussian"``;
:class:`~xfskde.gradients.GradientOperator`) are computed per tile with ``scipy.ndimage`` from
the tile's pixels extended by the boundary mode (:func:`xfskde.gradients.stencil_gradient`),
and the core reads those gradient planes instead of differencing the image: the windows and
sums are the same code either way.

**Blocks.** :func:`local_fskde_block` computes any rectangle of that grid from any block of the
image that holds the samples' windows plus :func:`overlap_depth` pixels on every side that is not
an image edge (the window's radius plus the gradient's: :meth:`xfskde.Window.halo`). This is
what the Dask engine runs on every chunk (:func:`xfskde.lazy.map_haloed`, one thread per task);
:func:`local_fskde_numpy` runs it on the whole image, in cache-sized tiles on all cores.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from . import _core
from ._grid import mask_at_samples, sample_count, sample_offset
from ._validation import _check_choice, _check_positive_int
from .exceptions import ParameterError
from .gradients import (
    BOUNDARY_MODES,
    NAN_POLICIES,
    Boundary,
    GradientOperator,
    Operator,
    as_channels_first,
    boundary_index_map,
    check_finite,
    gather,
    readable,
    result_float_dtype,
    stencil_gradient,
)
from .kernel import Approximation, Cos2KKernel
from .windows import Window, make_window

__all__ = [
    "LocalParameters",
    "local_fskde_block",
    "local_fskde_numpy",
    "missing_pixels",
    "overlap_depth",
    "sample_count",
    "sample_offset",
]

#: Least output rows of a tile, in image pixels (amortises filling the ring of phasor rows).
TILE_ROWS = 256
#: Least and most columns of a tile, in image pixels.
MIN_TILE_COLS, MAX_TILE_COLS = 64, 1024
#: The rows a tile holds are kept within this many bytes where they can be (about half an L2).
CACHE_BYTES = 1 << 19
#: Tiles are this many windows tall, and as wide where :data:`RING_BYTES` allows.
HALO_SHARE = 4
#: The most bytes a tile's rows are given to make a wide window's tile that wide.
RING_BYTES = 1 << 25


def overlap_depth(
    window: str | Window,
    size: float | None = None,
    *,
    gradient: Operator = "central",
    gradient_scale: float = 1.0,
) -> int:
    """Pixels a block needs beyond its own on each side: :meth:`Window.halo <xfskde.Window.halo>`.

    The window radius plus the gradient's stencil radius: + 1 for central differences (the
    default; :attr:`Window.depth <xfskde.Window.depth>`) and Scharr, + ⌈4σ⌉ for Gaussian
    derivatives. The Dask engine overlaps its chunks by this depth (section 2.3 computes F_k(x)
    from the window around x, and each gradient in it from its stencil).

    Parameters
    ----------
    window : {"gaussian", "box", "disk"} or Window
        The window, as in :func:`xfskde.local_fskde`.
    size : float, optional
        The window size, as in :func:`xfskde.local_fskde` (not needed for a Window).
    gradient : {"central", "scharr", "gaussian"}, optional
        The gradient operator, as in :func:`xfskde.local_fskde` (default ``"central"``).
    gradient_scale : float, optional
        σ of Gaussian derivatives, in pixels, as in :func:`xfskde.local_fskde` (default 1).

    Returns
    -------
    int
        :attr:`Window.radius <xfskde.Window.radius>` + the operator's stencil radius, in
        pixels.

    Raises
    ------
    ParameterError
        For a window, size, gradient or gradient_scale that :class:`~xfskde.Window` or
        :class:`~xfskde.gradients.GradientOperator` refuses.
    """
    return make_window(window, size).halo(GradientOperator(gradient, gradient_scale).radius)


class LocalParameters:
    """Checked parameters of a local FS-KDE, shared by every face (NumPy, Dask, xarray, CLI).

    Parameters
    ----------
    order : int or Cos2KKernel
        As in :func:`xfskde.local_fskde`; kept as :attr:`kernel`, a Cos2KKernel.
    window : {"gaussian", "box", "disk"} or Window, optional
        As in :func:`xfskde.local_fskde` (default ``"gaussian"``); kept as :attr:`window`, a
        Window.
    size : float, optional
        As in :func:`xfskde.local_fskde` (default 4).
    stride : int, optional
        As in :func:`xfskde.local_fskde` (default 1).
    eps : float, optional
        As in :func:`xfskde.local_fskde` (with an integer ``order`` only; default None).
    boundary : {"reflect", "mirror", "nearest", "wrap", "constant"}, optional
        As in :func:`xfskde.local_fskde` (default ``"reflect"``).
    cval : float, optional
        As in :func:`xfskde.local_fskde` (default 0).
    approximation : {"auto", "exact", "normal"}, optional
        As in :func:`xfskde.local_fskde` (with an integer ``order`` only; default ``"auto"``).
    nan_policy : {"raise", "omit"}, optional
        As in :func:`xfskde.local_fskde` (default ``"raise"``).
    gradient : {"central", "scharr", "gaussian"}, optional
        As in :func:`xfskde.local_fskde` (default ``"central"``); the operator is kept as
        :attr:`gradient`, a :class:`~xfskde.gradients.GradientOperator`.
    gradient_scale : float, optional
        As in :func:`xfskde.local_fskde` (default 1).

    Raises
    ------
    ParameterError
        For ``eps`` or ``approximation`` with a Cos2KKernel ``order``, and every value that
        the kernel, the window, the gradient operator or the lists refuse (a ``stride``
        below 1 among them).
    """

    def __init__(
        self,
        *,
        order: int | Cos2KKernel,
        window: str | Window = "gaussian",
        size: float = 4,
        stride: int = 1,
        eps: float | None = None,
        boundary: Boundary = "reflect",
        cval: float = 0.0,
        approximation: Approximation = "auto",
        nan_policy: Literal["raise", "omit"] = "raise",
        gradient: Operator = "central",
        gradient_scale: float = 1.0,
    ):
        if isinstance(order, Cos2KKernel):
            if eps is not None or approximation != "auto":
                raise ParameterError(
                    "order is a Cos2KKernel, which carries its own eps and approximation: drop "
                    "eps= and approximation=, or pass the order as an integer"
                )
            self.kernel = order
        else:
            self.kernel = Cos2KKernel(order, approximation=approximation, eps=eps)
        self.window = make_window(window, size)
        self.stride = _check_positive_int("stride", stride)
        _check_choice("boundary", boundary, BOUNDARY_MODES)
        self.boundary = boundary
        self.cval = float(cval)
        _check_choice("nan_policy", nan_policy, NAN_POLICIES)
        self.nan_policy = nan_policy
        self.gradient = GradientOperator(gradient, gradient_scale)

    @property
    def length(self) -> int:
        """ℓ, the number of coefficients k = 0 .. ℓ-1 each sample gets (the kernel's)."""
        return self.kernel.length

    @property
    def depth(self) -> int:
        """Overlap depth a block needs: the window's radius + the gradient's (Window.halo)."""
        return self.window.halo(self.gradient.radius)

    def scale(self) -> np.ndarray:
        """H_k times the window's normalisation (equal-weight windows sum unit weights).

        Returns
        -------
        numpy.ndarray of float64, shape (ℓ,)
            ``kernel.coefficients * window.sum_scale``: H_k / (pixels in the window) for a box
            or disk, H_k for a Gaussian (whose :meth:`profile` sums to one).
        """
        return self.kernel.coefficients * self.window.sum_scale

    def profile(self) -> np.ndarray:
        """The 1-D weights the compiled core applies along each axis: the Gaussian's profile
        (summing to one), ones for a box (:meth:`scale` normalises its sum), and ones for a
        disk, which the core does not read (it takes :meth:`half_widths`).

        Returns
        -------
        numpy.ndarray of float64
            ``size`` ones for a box, the Gaussian's ``2 * radius + 1`` weights, or
            ``2 * radius + 1`` ones for a disk.
        """
        if self.window.kind == "box":
            return np.ones(int(self.window.size))
        if self.window.kind == "gaussian":
            return self.window.profile()
        return np.ones(2 * self.window.radius + 1)

    def half_widths(self) -> np.ndarray:
        """The disk's half-width for each row offset (:meth:`Window.half_widths`); ``[0]``
        for a box or Gaussian, which the compiled core does not read.

        Returns
        -------
        numpy.ndarray of int64
            ``2 * radius + 1`` half-widths for a disk, else one zero.
        """
        if self.window.kind == "disk":
            return self.window.half_widths()
        return np.zeros(1, dtype=np.int64)

    def kind_code(self) -> int:
        """The window's kind as the compiled core numbers it: box, separable (Gaussian) or
        disk.

        Returns
        -------
        int
            ``_core.BOX``, ``_core.SEPARABLE`` or ``_core.DISK``.
        """
        return {"box": _core.BOX, "gaussian": _core.SEPARABLE, "disk": _core.DISK}[self.window.kind]

    def attrs(self) -> dict[str, object]:
        """Everything needed to reproduce and interpret a coefficient field.

        Returns
        -------
        dict
            The attrs of a labelled result: the kernel (``kernel``, ``order``,
            ``approximation``, ``eps`` — ``"none"`` untruncated — ``n_coefficients``), the
            window (``window``, ``size``), the grid (``stride``, ``sample_offset``), the
            gradient (``boundary``, ``cval``, ``nan_policy``, ``gradient``,
            ``gradient_scale``) and the conventions in words (``weight``,
            ``angle_convention``, ``coefficient_convention``);
            :func:`xfskde.orientation.kernel_of` reads the kernel back from them.
        """
        return {
            "kernel": "cos^2K",
            "order": self.kernel.order,
            "approximation": self.kernel.approximation,
            "eps": "none" if self.kernel.eps is None else self.kernel.eps,
            "n_coefficients": self.length,
            "window": self.window.kind,
            "size": self.window.size,
            "stride": self.stride,
            "sample_offset": sample_offset(self.stride),
            "boundary": self.boundary,
            "cval": self.cval,
            "nan_policy": self.nan_policy,
            "gradient": self.gradient.kind,
            "gradient_scale": self.gradient.scale,
            "weight": "gradient magnitude |g|",
            "angle_convention": (
                "theta = arg(Ix + i*Iy), radians; x along columns, y along rows (downwards); "
                + self.gradient.describe()
            ),
            "coefficient_convention": (
                "F_k = H_k (W exp(-i k theta) * window), k >= 0; F_-k = conj(F_k)"
            ),
        }


def _tile_shape(path: int, n_taps: int, stride: int, length: int, itemsize: int) -> tuple[int, int]:
    """Samples (rows, columns) of one tile of the core's routine ``path`` (``_core.PATHS``)
    for a window ``n_taps`` pixels wide.

    The rows a routine holds, each of the tile's width (its own columns and the window's) in
    ``length`` complex planes, are kept in cache where they can be: tiles are as wide as keeps
    them within :data:`CACHE_BYTES` (between :data:`MIN_TILE_COLS` and :data:`MAX_TILE_COLS`
    columns). The running box, the stride-1 Gaussian and the disk hold
    ``n_taps + stride`` rows, the strided Gaussian ``ceil(n_taps / stride)`` sums and four
    phasor rows, cells one row. But a tile also reads the window's ``n_taps - 1`` pixels
    around its samples, so narrow tiles of a wide window compute the same phasor rows many
    times over: a tile narrower than :data:`HALO_SHARE` windows is widened towards that as far
    as :data:`RING_BYTES` allows, and tiles are at least as many windows tall (a tile's height
    costs no memory).
    """
    if path == _core.PATH_SEPARABLE_STRIDED:
        held = -(-n_taps // stride) + 4
    elif path == _core.PATH_CELLS:
        held = 1
    else:
        held = n_taps + stride
    column_bytes = held * length * 2 * itemsize
    cols = min(MAX_TILE_COLS, max(MIN_TILE_COLS, CACHE_BYTES // column_bytes))
    if cols < HALO_SHARE * n_taps:
        cols = max(cols, min(HALO_SHARE * n_taps, RING_BYTES // column_bytes - n_taps))
    rows = max(TILE_ROWS, HALO_SHARE * n_taps)
    return max(1, -(-rows // stride)), max(1, min(cols, MAX_TILE_COLS) // stride)


def _tile_ranges(n: int, step: int) -> list[tuple[int, int]]:
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def local_fskde_block(
    src: np.ndarray,
    params: LocalParameters,
    *,
    image_shape: tuple[int, int],
    src_origin: tuple[int, int] = (0, 0),
    rows: tuple[int, int],
    cols: tuple[int, int],
    out_dtype: np.typing.DTypeLike = np.complex128,
    threads: int = 1,
    inside: np.ndarray | None = None,
) -> np.ndarray:
    """The one numerical core: local FS-KDE samples ``rows × cols`` of the grid, from one block.

    Parameters
    ----------
    src : numpy.ndarray, (C, h, w)
        A block of the image (channels first) holding global rows ``src_origin[0] ..`` and columns
        ``src_origin[1] ..``. It must contain every pixel within :attr:`LocalParameters.depth` of
        the requested samples that lies inside the image; pixels beyond the image edge are read
        through the boundary mode, so a block at the edge needs no padding.
    params : LocalParameters
        The checked parameters (window, stride, kernel, boundary, gradient, nan_policy).
    image_shape : (int, int)
        Shape (H, W) of the whole image (where its true edges are).
    src_origin : (int, int), optional
        Global (row, column) index of ``src[:, 0, 0]`` (default (0, 0): the image's first
        pixel).
    rows, cols : (int, int)
        Half-open ranges of *sample* indices i, j to compute (sample i sits at row i*s + o).
    out_dtype : complex dtype, optional
        The dtype of the coefficients returned (default complex128; complex64 computes in
        float32).
    threads : int, optional
        Tiles are spread over this many threads (numba releases the GIL; default 1).
    inside : numpy.ndarray of bool, (rows, cols), optional
        The samples to compute (a foreground mask on the grid,
        :func:`xfskde._grid.mask_at_samples`): the others are NaN — not computed, so no value
        (0 would claim "no gradient" of an area that may hold many) — and a tile of the core
        without any of them is not computed at all, so glass inside a block costs nothing but
        its fill. Samples inside are the same as without ``inside``.

    Returns
    -------
    numpy.ndarray of ``out_dtype``, (rows, cols, ℓ)
        NaN outside ``inside`` and, under ``nan_policy="omit"``, at the samples whose pixel is
        missing (not finite in any channel).

    Raises
    ------
    ValueError
        For an ``inside`` of another shape than (rows, cols), and a block that does not hold
        the pixels the samples' windows need (:func:`xfskde.gradients.boundary_index_map`).
    """
    src = readable(src)
    s, o = params.stride, sample_offset(params.stride)
    height, width = image_shape
    i0, i1 = rows
    j0, j1 = cols
    out = np.empty((max(0, i1 - i0), max(0, j1 - j0), params.length), dtype=out_dtype)
    if out.size == 0:
        return out
    if inside is not None:
        inside = np.asarray(inside, bool)
        if inside.shape != out.shape[:2]:
            raise ValueError(f"inside must have shape {out.shape[:2]}, got {inside.shape}")
        if not inside.any():
            out[...] = np.nan
            return out
    # The core's frame starts `frame` pixels before the first sample (the window, plus the
    # central difference's pixel): sample (0, 0) of `out` sits at (frame, frame) there.
    frame = params.window.depth
    prow0, pcol0 = i0 * s + o, j0 * s + o
    lo_r, hi_r = prow0 - frame, (i1 - 1) * s + o + frame + 1
    lo_c, hi_c = pcol0 - frame, (j1 - 1) * s + o + frame + 1
    kind, before, after = params.kind_code(), params.window.before, params.window.after
    profile, half_widths, scale = params.profile(), params.half_widths(), params.scale()
    work = np.zeros(0, dtype=np.float32 if out.dtype == np.complex64 else np.float64)
    n_taps = before + after + 1
    path = _core.tile_path(kind, n_taps, s)
    tile_rows, tile_cols = _tile_shape(path, n_taps, s, params.length, work.itemsize)
    tiles = [
        (a, b, c, d)
        for a, b in _tile_ranges(out.shape[0], tile_rows)
        for c, d in _tile_ranges(out.shape[1], tile_cols)
    ]
    if inside is not None:  # tiles of background only: no value, not computed
        for a, b, c, d in tiles:
            if not inside[a:b, c:d].any():
                out[a:b, c:d] = np.nan
        tiles = [(a, b, c, d) for a, b, c, d in tiles if inside[a:b, c:d].any()]
    planes = params.gradient.kind != "central"
    if planes:
        # the image pixels the gradients at frame rows 1 .. n-2 read: `params.depth` around
        # the samples (the window's radius plus the operator's)
        r = params.gradient.radius
        image_rows = boundary_index_map(
            height, lo_r + 1 - r, hi_r - 1 + r, params.boundary, src_origin[0], src.shape[1]
        )
        image_cols = boundary_index_map(
            width, lo_c + 1 - r, hi_c - 1 + r, params.boundary, src_origin[1], src.shape[2]
        )
    else:
        # the pixels themselves: the core differences them through these maps
        rowmap = boundary_index_map(
            height, lo_r, hi_r, params.boundary, src_origin[0], src.shape[1]
        )
        colmap = boundary_index_map(width, lo_c, hi_c, params.boundary, src_origin[1], src.shape[2])

    def tile_gradients(t: tuple[int, int, int, int]) -> tuple[np.ndarray, ...]:
        """Gradient planes (2, h, w) of the frame rows and columns tile ``t`` reads, with the
        maps from the core's frame into them."""
        a, b, c, d = t
        r0, r1 = frame + a * s - before, frame + (b - 1) * s + after + 1
        c0, c1 = frame + c * s - before, frame + (d - 1) * s + after + 1
        pixels = gather(
            src,
            image_rows[r0 - 1 : r1 - 1 + 2 * r],
            image_cols[c0 - 1 : c1 - 1 + 2 * r],
            params.cval,
        )
        tile_rowmap = np.arange(-r0, hi_r - lo_r - r0, dtype=np.int64)
        tile_colmap = np.arange(-c0, hi_c - lo_c - c0, dtype=np.int64)
        return stencil_gradient(pixels, params.gradient), tile_rowmap, tile_colmap

    def run(t: tuple[int, int, int, int]) -> None:
        a, b, c, d = t
        if planes:
            source, rmap, cmap = tile_gradients(t)
        else:
            source, rmap, cmap = src, rowmap, colmap
        _core.fskde_tile(
            source, rmap, cmap, params.cval, work, out,
            a, b, c, d, frame, frame, s,
            kind, before, after, profile, half_widths, scale, planes,
        )  # fmt: skip

    if threads > 1 and len(tiles) > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(tiles))) as pool:
            list(pool.map(run, tiles))
    else:
        for t in tiles:
            run(t)
    if params.nan_policy == "omit":
        out[_missing_samples(src, src_origin, s, rows, cols)] = np.nan
    if inside is not None:
        out[~inside] = np.nan
    return out


def missing_pixels(pixels: Any, channel_axis: int) -> Any:
    """Whether each pixel is missing: not finite in any channel (NaN, ±inf; nodata is NaN by
    then).

    The one rule for a sample's own pixel: the field is NaN there (:func:`local_fskde_block`
    under ``nan_policy="omit"``), and :func:`xfskde.api.present_samples` says so from the
    image. Its window may hold gradients of the pixels around, but the sample itself has no
    value (as GDAL and rioxarray leave nodata pixels nodata), so every map drawn from it —
    orientation, coherence, energy, a density — says so instead of reading a missing area as
    one without gradients (where the coefficients are 0).

    Parameters
    ----------
    pixels : numpy.ndarray or dask.array.Array
        The image's pixels, the channels along ``channel_axis``.
    channel_axis : int
        The axis of the channels (of length 1 for a single-channel image).

    Returns
    -------
    numpy.ndarray or dask.array.Array of bool
        ``pixels``' shape without ``channel_axis``.
    """
    return ~np.isfinite(pixels).any(axis=channel_axis)


def _missing_samples(
    src: np.ndarray, src_origin: tuple[int, int], stride: int, rows: tuple[int, int],
    cols: tuple[int, int],
) -> np.ndarray:  # fmt: skip
    """Whether the pixel of each sample ``rows × cols`` of a block is missing
    (:func:`missing_pixels`)."""
    o = sample_offset(stride)
    r0, c0 = rows[0] * stride + o - src_origin[0], cols[0] * stride + o - src_origin[1]
    r1, c1 = r0 + (rows[1] - rows[0] - 1) * stride + 1, c0 + (cols[1] - cols[0] - 1) * stride + 1
    return missing_pixels(src[:, r0:r1:stride, c0:c1:stride], 0)


def local_fskde_numpy(
    image: np.ndarray,
    params: LocalParameters,
    *,
    channel_axis: int | None = None,
    threads: int | None = None,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """The in-memory face: the block core on the whole image, tiled over ``threads`` threads.

    Parameters
    ----------
    image : numpy.ndarray
        ``(y, x)``, or 3-D with the channels along ``channel_axis``.
    params : LocalParameters
        The checked parameters; NaN pixels are refused unless ``params.nan_policy`` is
        ``"omit"``.
    channel_axis : int, optional
        The axis of a 3-D ``image`` that holds the channels; None for a 2-D image.
    threads : int, optional
        Threads to tile over; default every core. Code that runs inside Dask tasks passes 1
        (Dask owns the parallelism there).
    mask : numpy.ndarray of bool, optional
        A foreground covering the image's extent at any resolution: samples outside it are
        NaN and tiles without foreground are not computed (``inside`` of
        :func:`local_fskde_block`).

    Returns
    -------
    numpy.ndarray, complex, shape (samples along y, samples along x, ℓ)
        The coefficients at the stride's samples: complex64 for images of float32 (or
        smaller floats) and integers of up to 16 bits, else complex128
        (:func:`xfskde.gradients.result_float_dtype`).

    Raises
    ------
    ParameterError
        For NaN or infinite pixels under ``nan_policy="raise"``.
    DimensionError
        For an image that is not 2-D without ``channel_axis``, or not 3-D with one.
    TypeError
        For an image of complex, object or string values.
    """
    image = np.asarray(image)
    ftype = result_float_dtype(image.dtype)
    src = as_channels_first(image, channel_axis)
    check_finite(src, params.nan_policy)
    _, height, width = src.shape
    rows = (0, sample_count(height, params.stride))
    cols = (0, sample_count(width, params.stride))
    inside = None
    if mask is not None:
        inside = mask_at_samples(mask, (height, width), params.stride, rows, cols)
    return local_fskde_block(
        src,
        params,
        image_shape=(height, width),
        rows=rows,
        cols=cols,
        out_dtype=np.result_type(ftype, np.complex64),
        threads=threads or os.cpu_count() or 1,
        inside=inside,
    )
