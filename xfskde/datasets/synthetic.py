"""Seeded synthetic texture-segmentation images: dead leaves and random textures (section 5.3).

Both data sets are *occlusions of random textures* (McCann et al., IEEE TIP 2014): every image
holds three textures in three regions, with a ground-truth label per pixel.

Dead leaves
    Three seed points split the plane into three Voronoi regions. Shapes of uniformly random RGB
    colour are placed at uniformly random locations until every pixel is covered; a shape whose
    location falls in region 0, 1 or 2 is a vertical, a horizontal or a diagonal (45°) bar. A
    pixel's label is the region of the shape that covered it last. The textures share their colour
    distribution and differ only in the orientation of their edges.
Random textures
    Three textures with different colour distributions and no orientation information: each is a
    dead-leaves pattern of disks whose colours are drawn from a per-texture palette of three colours
    (plus a little noise), lightly smoothed. A random three-region layout (the arg-max of three
    smooth random fields, evaluated pixel by pixel from random Fourier modes) says which texture
    each pixel shows; it is the ground truth.

How the shapes are drawn
    The placement sequence is generated from its *end*: the shape placed last is drawn first and
    each pixel keeps the first (i.e. latest-placed) shape that covers it; coverage is tracked and
    the drawing stops once every pixel is covered. This is the same picture as placing shapes
    forward in time until coverage, read from the top, and it lets any tile of a huge image be
    generated on its own: shapes are drawn per 64×64-pixel *cell* of the plane and per *layer* of
    time from a random generator seeded by ``(seed, layer, cell)``, so a shape straddling two tiles
    is the same shape in both. :func:`dead_leaves` is :func:`dead_leaves_lazy` computed as one
    tile, so the two give identical pixels; likewise :func:`random_textures` and
    :func:`random_textures_lazy`.

Bar sizes scale with the image: the bar length is ``L = max(7, round(min(H, W) / 16))`` pixels
(16 on a 256×256 image) and its width ``max(2, round(L / 4))``; pass ``bar_length`` to fix it (for
example to keep small bars on a huge image).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import ndimage

from ..exceptions import ParameterError

__all__ = ["dead_leaves", "dead_leaves_lazy", "random_textures", "random_textures_lazy"]

_CELL = 64
_OFFSET = 1 << 24  # keeps cell indices of seeds non-negative
_COVERAGE_PER_LAYER = 1.5  # expected number of shapes per pixel in one layer of time
_STREAM_LEAVES, _STREAM_SEEDS, _STREAM_DISKS = 1, 2, 3


def _check_shape(shape: Any, minimum: int = 8) -> tuple[int, int]:
    """``shape`` as (height, width), each at least ``minimum`` pixels."""
    try:
        h, w = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be (height, width), got {shape!r}") from None
    if h < minimum or w < minimum:
        raise ValueError(f"shape must be at least ({minimum}, {minimum}) pixels, got {shape!r}")
    return h, w


def _bar_sizes(shape: tuple[int, int], bar_length: int | None) -> tuple[int, int]:
    length = max(7, round(min(shape) / 16)) if bar_length is None else int(bar_length)
    if length < 3:
        raise ValueError(f"bar_length must be at least 3 pixels, got {bar_length!r}")
    return length, max(2, round(length / 4))


def _bar_stamps(length: int, width: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pixel offsets (dy, dx) of a vertical, a horizontal and a diagonal bar."""
    r = length  # generous box for the diagonal
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    half_l, half_w = (length - 1) / 2, (width - 1) / 2
    vertical = (np.abs(dy + 0.25) <= half_l + 0.01) & (np.abs(dx + 0.25) <= half_w + 0.01)
    horizontal = vertical.T
    u, v = (dx + dy) / math.sqrt(2), (dx - dy) / math.sqrt(2)
    diagonal = (np.abs(u) <= half_l + 0.5) & (np.abs(v) <= half_w + 0.5)
    return [(dy[m].ravel(), dx[m].ravel()) for m in (vertical, horizontal, diagonal)]


def _disk_stamps(radii: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    stamps = []
    for r in radii:
        dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
        m = dy**2 + dx**2 <= r * r + r
        stamps.append((dy[m].ravel(), dx[m].ravel()))
    return stamps


def _region_seeds(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Three seed points, at least a quarter of the smaller side apart (rejection sampling)."""
    rng = np.random.default_rng([seed, _STREAM_SEEDS])
    h, w = shape
    for _ in range(1000):
        pts = rng.random((3, 2)) * (h, w)
        d = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
        if d[np.triu_indices(3, 1)].min() >= min(h, w) / 4:
            return pts
    return pts


def _voronoi(y: np.ndarray, x: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    d = (y[..., None] - seeds[:, 0]) ** 2 + (x[..., None] - seeds[:, 1]) ** 2
    return np.argmin(d, axis=-1)


def _paint_tile(
    rows: tuple[int, int],
    cols: tuple[int, int],
    *,
    seed: int,
    stream: int,
    stamps: list[tuple[np.ndarray, np.ndarray]],
    choose: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Top-most shape index of every pixel of a tile, and the drawn shapes' attributes.

    Shapes come per (layer, cell) from ``default_rng([seed, stream, layer, cy, cx])``; within the
    tile the shape with the smallest time (``layer + u``) that covers a pixel is its top shape.
    """
    r0, r1 = rows
    c0, c1 = cols
    h, w = r1 - r0, c1 - c0
    reach = max(int(max(np.abs(s[0]).max(), np.abs(s[1]).max())) for s in stamps)
    area = float(np.mean([s[0].size for s in stamps]))
    mu = _COVERAGE_PER_LAYER * _CELL * _CELL / area
    cy = np.arange((r0 - reach) // _CELL, (r1 - 1 + reach) // _CELL + 1)
    cx = np.arange((c0 - reach) // _CELL, (c1 - 1 + reach) // _CELL + 1)
    top = np.full(h * w, -1, dtype=np.int64)
    parts: dict[str, list[np.ndarray]] = {"y": [], "x": [], "t": [], "u": [], "rgb": []}
    n_total = 0
    layer = 0
    while True:
        ys, xs, ts, us, rgbs = [], [], [], [], []
        for y_cell in cy:
            for x_cell in cx:
                rng = np.random.default_rng(
                    [seed, stream, layer, int(y_cell) + _OFFSET, int(x_cell) + _OFFSET]
                )
                n = rng.poisson(mu)
                ys.append((y_cell + rng.random(n)) * _CELL)
                xs.append((x_cell + rng.random(n)) * _CELL)
                ts.append(layer + rng.random(n))
                us.append(rng.random(n))
                rgbs.append(rng.random((n, 3)))
        y, x, t = np.concatenate(ys), np.concatenate(xs), np.concatenate(ts)
        u, rgb = np.concatenate(us), np.concatenate(rgbs)
        order = np.argsort(t, kind="stable")
        y, x, t, u, rgb = y[order], x[order], t[order], u[order], rgb[order]
        kind = choose(y, x, u)
        uncovered = top < 0
        best = np.full(h * w, np.iinfo(np.int64).max, dtype=np.int64)
        for k, (dy, dx) in enumerate(stamps):
            idx = np.flatnonzero(kind == k)
            if idx.size == 0:
                continue
            py = np.floor(y[idx])[:, None].astype(np.int64) + dy[None, :] - r0
            px = np.floor(x[idx])[:, None].astype(np.int64) + dx[None, :] - c0
            inside = (py >= 0) & (py < h) & (px >= 0) & (px < w)
            flat = (py * w + px)[inside]
            rank = np.broadcast_to(idx[:, None], py.shape)[inside]
            keep = uncovered[flat]
            np.minimum.at(best, flat[keep], rank[keep])
        hit = best < np.iinfo(np.int64).max
        top[hit] = best[hit] + n_total
        n_total += y.size
        for name, value in zip(parts, (y, x, t, u, rgb), strict=True):
            parts[name].append(value)
        if (top >= 0).all():
            break
        layer += 1
    return top.reshape(h, w), {k: np.concatenate(v) for k, v in parts.items()}


def _dead_leaves_tile(
    rows: tuple[int, int], cols: tuple[int, int], shape: tuple[int, int], seed: int,
    bar_length: int | None,
) -> np.ndarray:  # fmt: skip
    """Dead leaves pixels of one tile as float32 (h, w, 4): RGB and the label."""
    seeds = _region_seeds(shape, seed)
    stamps = _bar_stamps(*_bar_sizes(shape, bar_length))
    top, shapes = _paint_tile(
        rows, cols, seed=seed, stream=_STREAM_LEAVES, stamps=stamps,
        choose=lambda y, x, u: _voronoi(y, x, seeds),
    )  # fmt: skip
    out = np.empty((*top.shape, 4), dtype=np.float32)
    out[..., :3] = shapes["rgb"][top]
    out[..., 3] = _voronoi(shapes["y"][top], shapes["x"][top], seeds)
    return out


def dead_leaves(
    shape: tuple[int, int], *, seed: int, bar_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A dead-leaves image of three bar orientations and its ground truth (paper, section 5.3).

    Parameters
    ----------
    shape : (int, int)
        Height and width in pixels (at least 8 × 8).
    seed : int
        Seed of every random choice; the same seed gives the same image.
    bar_length : int, optional
        Bar length in pixels; default ``max(7, round(min(shape) / 16))``. The width is
        ``max(2, round(bar_length / 4))``.

    Returns
    -------
    image : numpy.ndarray of float64, shape (H, W, 3), values in [0, 1]
    labels : numpy.ndarray of int64, shape (H, W), values in {0, 1, 2}
        The Voronoi region (0: vertical bars, 1: horizontal, 2: diagonal) of the shape that
        covers the pixel last.
    """
    shape = _check_shape(shape)
    tile = _dead_leaves_tile((0, shape[0]), (0, shape[1]), shape, int(seed), bar_length)
    return tile[..., :3].astype(np.float64), tile[..., 3].astype(np.int64)


def dead_leaves_lazy(
    shape: tuple[int, int], *, seed: int, chunks: int | tuple[int, int] = 2048,
    bar_length: int | None = None,
) -> tuple[Any, Any]:  # fmt: skip
    """:func:`dead_leaves` of any size as Dask arrays generated chunk by chunk.

    Every chunk is generated on its own from ``seed`` and its position; the result equals
    :func:`dead_leaves` with the same arguments (in float32), whatever ``chunks``.

    Parameters
    ----------
    shape : (int, int)
        Height and width, e.g. ``(32768, 32768)`` (at least 8 × 8).
    seed : int
        Seed of every random choice, as in :func:`dead_leaves`.
    chunks : int or (int, int), optional
        Chunk side(s) in pixels, >= 1 (default 2048).
    bar_length : int, optional
        As in :func:`dead_leaves`. On huge images the default bars are huge too (1/16 of the
        side); pass e.g. ``bar_length=16`` for the 256×256 look at any size.

    Returns
    -------
    image : dask.array.Array of float32, shape (H, W, 3)
    labels : dask.array.Array of int64, shape (H, W)
        Both slice one (H, W, 4) array, so computing them together generates each chunk once.

    Raises
    ------
    ParameterError
        For ``chunks`` that are not one or two whole numbers of pixels >= 1.
    """
    shape = _check_shape(shape)
    seed = int(seed)
    _bar_sizes(shape, bar_length)
    return _lazy_tiles(
        shape, chunks, lambda rows, cols: _dead_leaves_tile(rows, cols, shape, seed, bar_length)
    )


def _lazy_tiles(shape: tuple[int, int], chunks, make_tile: Callable) -> tuple[Any, Any]:
    """(image, labels) Dask arrays whose chunks are ``make_tile(rows, cols)`` → (h, w, 4)."""
    import dask.array as da

    ch = (chunks, chunks) if np.isscalar(chunks) else tuple(chunks)
    if len(ch) != 2 or not all(
        isinstance(c, numbers.Integral) and not isinstance(c, bool) and c >= 1 for c in ch
    ):
        raise ParameterError(
            f"chunks must be a whole number of pixels >= 1, or two (rows, columns), got {chunks!r}"
        )

    def block(block_info: dict | None = None) -> np.ndarray:
        (r0, r1), (c0, c1), _ = block_info[None]["array-location"]
        return make_tile((r0, r1), (c0, c1))

    tiles = da.map_blocks(
        block, dtype=np.float32, chunks=da.core.normalize_chunks((*ch, 4), (*shape, 4)),
        meta=np.empty((0, 0, 0), np.float32),
    )  # fmt: skip
    return tiles[..., :3], tiles[..., 3].astype(np.int64)


_LAYOUT_MODES = 16  # random Fourier modes per layout field
_PATTERN_SIGMA = 1.0  # smoothing of the disk patterns
_PATTERN_HALO = 4  # = ceil(4 σ): scipy's Gaussian radius at truncate=4


def _layout_modes(shape: tuple[int, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Frequencies (3, M, 2) and phases (3, M) of three smooth random fields.

    Random Fourier features (Rahimi & Recht, 2007) of a Gaussian covariance of length
    σ = min(shape) / 8: white noise blurred by that Gaussian, but evaluated at any pixel on its
    own, so a tile of a huge image needs nothing from its neighbours.
    """
    sigma = min(shape) / 8
    freqs = rng.standard_normal((3, _LAYOUT_MODES, 2)) / (2 * np.pi * sigma)
    phases = rng.uniform(0, 2 * np.pi, (3, _LAYOUT_MODES))
    return freqs, phases


def _layout_tile(rows: tuple[int, int], cols: tuple[int, int], modes) -> np.ndarray:
    """Arg-max of the three fields over a tile; cos(a + b) is split so no pixel needs a cosine."""
    freqs, phases = modes
    a = 2 * np.pi * freqs[..., 0, None] * np.arange(*rows) + phases[..., None]  # (3, M, h)
    b = 2 * np.pi * freqs[..., 1, None] * np.arange(*cols)  # (3, M, w)
    fields = np.einsum("fmh,fmw->hwf", np.cos(a), np.cos(b))
    fields -= np.einsum("fmh,fmw->hwf", np.sin(a), np.sin(b))
    return np.argmax(fields, axis=-1)


def _palettes(rng: np.random.Generator) -> np.ndarray:
    """Three palettes of three colours, each spread ±0.25 around a base colour; the bases are
    at least 0.5 apart (rejection sampling) so that the textures' colour distributions differ."""
    for _ in range(1000):
        bases = 0.25 + 0.5 * rng.random((3, 3))
        d = np.linalg.norm(bases[:, None] - bases[None], axis=-1)[np.triu_indices(3, 1)]
        if d.min() >= 0.5:
            break
    return np.clip(bases[:, None, :] + rng.uniform(-0.25, 0.25, (3, 3, 3)), 0.0, 1.0)


def _random_textures_tile(
    rows: tuple[int, int], cols: tuple[int, int], shape: tuple[int, int], seed: int
) -> np.ndarray:
    """Random-texture pixels of one tile as float32 (h, w, 4): RGB and the label."""
    rng = np.random.default_rng([seed, _STREAM_SEEDS])
    modes = _layout_modes(shape, rng)
    palettes = _palettes(rng)
    labels = _layout_tile(rows, cols, modes)
    # the patterns are smoothed, so paint them with a halo, mirrored at the image's true edges
    # exactly as scipy's "reflect" mode would mirror the whole image
    halo = _PATTERN_HALO
    (r0, r1), (c0, c1) = rows, cols
    ext_r, ext_c = (
        (max(0, r0 - halo), min(shape[0], r1 + halo)),
        (max(0, c0 - halo), min(shape[1], c1 + halo)),
    )
    pad = (
        (halo - (r0 - ext_r[0]), halo - (ext_r[1] - r1)),
        (halo - (c0 - ext_c[0]), halo - (ext_c[1] - c1)),
    )
    stamps = _disk_stamps((1, 2, 3, 4))
    out = np.empty((r1 - r0, c1 - c0, 4), dtype=np.float32)
    out[..., 3] = labels
    for texture in range(3):
        inside = labels == texture
        if not inside.any():
            continue
        top, shapes = _paint_tile(
            ext_r, ext_c, seed=seed, stream=_STREAM_DISKS + texture, stamps=stamps,
            choose=lambda y, x, u: np.minimum((u * 4).astype(np.int64), 3),
        )  # fmt: skip
        colour_index = np.minimum((shapes["rgb"][:, 0] * 3).astype(np.int64), 2)
        colours = palettes[texture][colour_index] + 0.1 * (shapes["rgb"][:, 1:2] - 0.5)
        painted = np.pad(colours[top], (*pad, (0, 0)), mode="symmetric")
        smooth = ndimage.gaussian_filter(painted, (_PATTERN_SIGMA, _PATTERN_SIGMA, 0))
        out[..., :3][inside] = smooth[halo:-halo, halo:-halo][inside]
    np.clip(out[..., :3], 0.0, 1.0, out=out[..., :3])
    return out


def random_textures(shape: tuple[int, int], *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three textures that differ only in their colour distributions, in a random layout.

    Each texture is a dead-leaves pattern of disks (radii 1, 2, 3 and 4 pixels: no preferred
    orientation) coloured from the texture's own palette of three colours (spread ±0.25 around
    a base colour; bases at least 0.5 apart) plus uniform noise of ±0.05, smoothed by a Gaussian
    of σ = 1. The layout is the arg-max of three smooth random fields (Gaussian covariance of
    length min(shape) / 8, as random Fourier features), so regions are blobs of random shape.
    :func:`random_textures_lazy` builds the same pixels chunk by chunk.

    Parameters
    ----------
    shape : (int, int)
        Height and width in pixels (at least 8 × 8).
    seed : int
        Seed of every random choice (palettes, patterns, layout); the same seed gives the
        same image.

    Returns
    -------
    image : numpy.ndarray of float64, shape (H, W, 3), values in [0, 1]
    labels : numpy.ndarray of int64, shape (H, W), values in {0, 1, 2}
        The texture of each pixel.

    Raises
    ------
    ValueError
        For a ``shape`` below 8 × 8 (TypeError for one that is not two integers).
    """
    shape = _check_shape(shape)
    tile = _random_textures_tile((0, shape[0]), (0, shape[1]), shape, int(seed))
    return tile[..., :3].astype(np.float64), tile[..., 3].astype(np.int64)


def random_textures_lazy(
    shape: tuple[int, int], *, seed: int, chunks: int | tuple[int, int] = 2048
) -> tuple[Any, Any]:
    """:func:`random_textures` of any size as Dask arrays generated chunk by chunk.

    Every chunk is generated on its own from ``seed`` and its position; the result equals
    :func:`random_textures` with the same arguments (in float32), whatever ``chunks``.

    Parameters
    ----------
    shape : (int, int)
        Height and width, e.g. ``(32768, 32768)`` (at least 8 × 8).
    seed : int
        Seed of every random choice, as in :func:`random_textures`.
    chunks : int or (int, int), optional
        Chunk side(s) in pixels, >= 1 (default 2048).

    Returns
    -------
    image : dask.array.Array of float32, shape (H, W, 3)
    labels : dask.array.Array of int64, shape (H, W)

    Raises
    ------
    ParameterError
        For ``chunks`` that are not one or two whole numbers of pixels >= 1.
    """
    shape = _check_shape(shape)
    return _lazy_tiles(
        shape, chunks, lambda rows, cols: _random_textures_tile(rows, cols, shape, int(seed))
    )
