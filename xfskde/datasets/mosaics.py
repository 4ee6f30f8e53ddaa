"""Seeded mosaics of real textures, with ground truth, from the photographs scikit-image ships.

A mosaic is a grey (or, with ``color=True``, an RGB) image split into ``n_regions`` regions,
each filled with one real texture:

Textures
    By default scikit-image's ``brick``, ``grass`` and ``gravel`` photographs (512 × 512 grey).
    They are installed with scikit-image itself (no download, no network); :func:`local_textures`
    lists those present. Any 2-D array can be passed instead of a name.
Covering any shape
    A texture is tiled by mirroring (the tile, then its reflection, …: a triangle wave of the
    coordinates), so the tiling has no seams however large the mosaic is.
Layouts
    ``"voronoi"``: the Voronoi cells of ``n_regions`` random seeds at least 0.7/n of the side
    apart; ``"stripes"``: ``n_regions`` parallel bands of random direction; ``"blobs"``: the
    arg-max of ``n_regions`` smooth random fields (a region may be in several pieces). In every
    layout the pixel positions are first displaced by a smooth random field (about 4 % of the
    side), so boundaries are smooth but irregular. Fields are random Fourier features in
    coordinates relative to the shorter side, so a seed gives the same layout at every size.
    Every region covers at least half of an equal share of the image.
Transforms
    Per region, the texture is rotated by a random angle in [0°, 180°) (``"rotate"``), rescaled
    by a random factor in [0.7, 1.4] (``"rescale"``; blurred first when shrunk, against
    aliasing), or both (``"both"``), about a random position of the mirrored tiling
    (:func:`skimage.transform.warp`, bilinear). ``"perspective"`` rotates it and shows it as a
    plane seen at an angle, tilted in a random direction (a homography): its elements are
    :data:`PERSPECTIVE_RATIO` times larger on one edge of the image than on the opposite one
    and foreshortened along the tilt, a texture whose look drifts across its region, which a
    segmentation must not split (sampled 2 × 2 per pixel against aliasing). Without a
    transform the texture is only shifted.
    ``scale`` zooms every texture on top (default 1: the photographs' native resolution, where
    a brick is about 30 × 100 px and a gravel stone 20–30 px across).
Grey levels
    Each texture is normalised on its whole transformed canvas (not only the region) before it
    is cut out: ``normalize="meanstd"`` (default) gives every texture the mean 0.5 and standard
    deviation 0.15 (then clipped to [0, 1]), so that neither mean grey nor contrast alone tells
    the textures apart; ``"histogram"`` equalises every texture's histogram
    (:func:`skimage.exposure.equalize_hist`), so that *no* first-order grey statistic does;
    ``None`` keeps the photographs' grey levels.
Colour
    With ``color=True`` RGB textures keep their colours (a grey texture is repeated in the three
    channels) and the mosaic is (H, W, 3): tiles of stained tissue, for instance, make mosaics
    of histology textures whose truth is known. Each channel is transformed exactly as the grey
    texture would be (the same layout, offsets, angles and scales) and normalised on its own
    (``"meanstd"`` then removes the mean colour as well; ``None`` keeps the stain's colours).

Tuning and held-out images are told apart by seed: :data:`MOSAIC_CONFIGS` names a fixed list of
configurations for each split (seeds below 1000 for ``"tuning"``, from 1000 for ``"held_out"``);
:func:`texture_mosaic_set` builds them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .synthetic import _check_shape

__all__ = [
    "LAYOUTS",
    "MOSAIC_CONFIGS",
    "PERSPECTIVE_RATIO",
    "TEXTURES",
    "TRANSFORMS",
    "MosaicConfig",
    "class_tiles",
    "local_textures",
    "texture_mosaic",
    "texture_mosaic_set",
]

#: The real textures scikit-image installs with itself (grey 512 × 512 photographs).
TEXTURES: tuple[str, ...] = ("brick", "grass", "gravel")
#: Region layouts of :func:`texture_mosaic`.
LAYOUTS: tuple[str, ...] = ("voronoi", "stripes", "blobs")
#: Per-region texture transforms of :func:`texture_mosaic`.
TRANSFORMS: tuple[str | None, ...] = (None, "rotate", "rescale", "both", "perspective")

_SCALE_RANGE = (0.7, 1.4)
#: "perspective": the texture's elements on the near edge of the image's shorter side are this
#: many times as large as on the far edge (across the tilt; along it, foreshortened further).
PERSPECTIVE_RATIO = 2.0
_TARGET_MEAN, _TARGET_STD = 0.5, 0.15
_MODES = 16  # random Fourier modes per smooth field
_WARP_LENGTH = 0.08  # correlation length of the boundary displacement, in units of the short side
_WARP_AMPLITUDE = 0.04  # its standard deviation, same unit
_BLOB_LENGTH = 0.15  # correlation length of the "blobs" fields
_STREAM_LAYOUT, _STREAM_TEXTURE = 11, 12
_MIN_SHARE = 0.5  # every region covers at least this fraction of an equal share
_CHECK_SIDE = 96  # side of the coarse grid on which region areas are checked


def _skimage_data_dir() -> Path:
    import skimage.data

    return Path(skimage.data.__file__).parent


def local_textures() -> tuple[str, ...]:
    """The names in :data:`TEXTURES` whose files scikit-image has installed locally.

    Returns
    -------
    tuple of str
        Usable texture names; none of them needs a download.
    """
    folder = _skimage_data_dir()
    return tuple(name for name in TEXTURES if (folder / f"{name}.png").is_file())


@functools.cache
def _named_texture(name: str) -> np.ndarray:
    if name not in TEXTURES:
        raise ValueError(f"unknown texture {name!r}; the local ones are {TEXTURES}")
    if not (_skimage_data_dir() / f"{name}.png").is_file():
        raise FileNotFoundError(f"scikit-image's {name!r} image is not installed locally")
    import skimage.data

    image = getattr(skimage.data, name)()
    out = _as_grey(image)
    out.flags.writeable = False
    return out


#: File suffixes :func:`class_tiles` reads.
TILE_SUFFIXES = (".tif", ".tiff", ".png", ".jpg", ".jpeg")


def class_tiles(folder: str | Path) -> dict[str, np.ndarray]:
    """One image per class from a folder of labelled tiles, to build mosaics of them.

    The class of a file is the name of its sub-folder (``folder/TUM/a.tif``) or, for files
    directly in ``folder``, the part of its name before the first ``-`` (``TUM-AACHEHDV.tif``,
    as in Kather et al.'s NCT-CRC-HE-100K tissue tiles); each class gets its first file by
    path. Files ending in :data:`TILE_SUFFIXES` are read with :func:`skimage.io.imread`.

    Parameters
    ----------
    folder : str or Path
        Where the tiles are (searched recursively).

    Returns
    -------
    dict of str to numpy.ndarray
        Class name to its tile, as read (grey (h, w) or colour (h, w, 3); an alpha channel is
        dropped), classes in sorted order.

    Raises
    ------
    FileNotFoundError
        When ``folder`` is not a folder or holds no tile.

    Examples
    --------
    >>> tiles = class_tiles("NCT-CRC-HE-100K-sample")  # doctest: +SKIP
    >>> image, truth = texture_mosaic((768, 768), textures=(tiles["TUM"], tiles["STR"],
    ...     tiles["ADI"]), normalize=None, color=True, scale=0.5)  # doctest: +SKIP
    """
    import skimage.io

    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder of tiles")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in TILE_SUFFIXES)
    tiles: dict[str, np.ndarray] = {}
    for path in files:
        name = path.parent.name if path.parent != root else path.stem.split("-")[0]
        if name not in tiles:
            image = np.asarray(skimage.io.imread(path))
            tiles[name] = image[..., :3] if image.ndim == 3 else image
    if not tiles:
        raise FileNotFoundError(f"no tile ({', '.join(TILE_SUFFIXES)}) in {root}")
    return dict(sorted(tiles.items()))


def _as_grey(image: Any, color: bool = False) -> np.ndarray:
    """A texture as float32 in [0, 1]: (h, w) grey, or with ``color`` (h, w, 3) RGB (a grey
    texture repeated in the three channels)."""
    from skimage.color import rgb2gray
    from skimage.util import img_as_float32

    arr = np.asarray(image)
    rgb = arr.ndim == 3 and arr.shape[-1] in (3, 4)
    if rgb:
        arr = arr[..., :3] if color else rgb2gray(arr[..., :3])
    if arr.ndim != (3 if rgb and color else 2) or min(arr.shape[:2]) < 2:
        raise ValueError(f"a texture must be a 2-D grey (or RGB) image, got shape {arr.shape}")
    arr = img_as_float32(arr) if arr.dtype.kind in "ui" else arr.astype(np.float32)
    if color and arr.ndim == 2:
        arr = np.repeat(arr[..., None], 3, axis=-1)
    return np.ascontiguousarray(arr)


def _texture(source: str | np.ndarray, color: bool = False) -> np.ndarray:
    return _as_grey(_named_texture(source) if isinstance(source, str) else source, color)


def _fold(t: np.ndarray, n: int) -> np.ndarray:
    """Coordinates folded into [0, n - 1]: the mirrored tiling (a triangle wave of period
    2(n - 1)), continuous, so interpolation across a fold makes no seam."""
    period = 2.0 * (n - 1)
    t = np.mod(t, period)
    return np.where(t > n - 1, period - t, t)


def _smooth_fields(
    rng: np.random.Generator, count: int, length: float, y: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """``count`` smooth random fields (Gaussian covariance of ``length``) at the grid ``y × x``.

    Random Fourier features with unit variance; ``y`` and ``x`` are 1-D coordinates, so
    cos(a + b) is split into products and no (H, W, M) array is formed.
    """
    freqs = rng.standard_normal((count, _MODES, 2)) / (2 * np.pi * length)
    phases = rng.uniform(0, 2 * np.pi, (count, _MODES))
    a = 2 * np.pi * freqs[..., 0, None] * y + phases[..., None]  # (count, M, H)
    b = 2 * np.pi * freqs[..., 1, None] * x  # (count, M, W)
    fields = np.einsum("fmh,fmw->fhw", np.cos(a), np.cos(b))
    fields -= np.einsum("fmh,fmw->fhw", np.sin(a), np.sin(b))
    return fields * math.sqrt(2.0 / _MODES)


@dataclass(frozen=True)
class _Layout:
    """The random parameters of a layout; :meth:`labels` evaluates it on any grid."""

    kind: str
    n: int
    seed_words: tuple[int, ...]
    points: np.ndarray  # Voronoi seeds (n, 2) or the stripes' direction (1, 2)
    aspect: tuple[float, float]  # (H, W) / min(H, W)

    def labels(self, rows: int, cols: int) -> np.ndarray:
        unit = min(rows, cols)
        y = (np.arange(rows) + 0.5) / unit
        x = (np.arange(cols) + 0.5) / unit
        rng = np.random.default_rng(list(self.seed_words))
        dy, dx = _smooth_fields(rng, 2, _WARP_LENGTH, y, x) * _WARP_AMPLITUDE
        yy = y[:, None] + dy
        xx = x[None, :] + dx
        if self.kind == "voronoi":
            d = [(yy - py) ** 2 + (xx - px) ** 2 for py, px in self.points]
            return np.argmin(np.stack(d), axis=0).astype(np.uint8)
        if self.kind == "stripes":
            cy, cx = self.points[0]
            h, w = self.aspect
            corners = np.array([0.0, h * cy, w * cx, h * cy + w * cx])
            u = (yy * cy + xx * cx - corners.min()) / np.ptp(corners)
            return np.clip((u * self.n).astype(np.int64), 0, self.n - 1).astype(np.uint8)
        fields = _smooth_fields(rng, self.n, _BLOB_LENGTH, y, x)
        return np.argmax(fields, axis=0).astype(np.uint8)


def _draw_layout(kind: str, n: int, shape: tuple[int, int], seed: int) -> _Layout:
    """A layout whose every region covers at least half an equal share (rejection sampling)."""
    unit = min(shape)
    aspect = (shape[0] / unit, shape[1] / unit)
    scale = _CHECK_SIDE / unit
    coarse = (max(8, round(shape[0] * scale)), max(8, round(shape[1] * scale)))
    rng = np.random.default_rng([seed, _STREAM_LAYOUT])
    layout = None
    for _ in range(200):
        words = (int(seed), _STREAM_LAYOUT, int(rng.integers(2**31)))
        if kind == "voronoi":
            points = rng.random((n, 2)) * aspect
            d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
            if d[np.triu_indices(n, 1)].min() < 0.7 / n:
                continue
        elif kind == "stripes":
            theta = rng.uniform(0, np.pi)
            points = np.array([[math.sin(theta), math.cos(theta)]])
        else:
            points = np.zeros((0, 2))
        layout = _Layout(kind, n, words, points, aspect)
        counts = np.bincount(layout.labels(*coarse).ravel(), minlength=n)
        if counts.min() >= _MIN_SHARE * counts.sum() / n:
            return layout
    if layout is None:  # pragma: no cover - 200 rejections of the seed spacing
        raise RuntimeError("could not place the Voronoi seeds")
    return layout


def _canvas(
    texture: np.ndarray,
    shape: tuple[int, int],
    rng: np.random.Generator,
    transform: str | None,
    zoom: float = 1.0,
) -> np.ndarray:
    """The texture, mirrored-tiled, rotated, rescaled or seen in perspective (times ``zoom``),
    over ``shape`` (a (h, w, c) texture gives (*shape, c), every channel moved alike)."""
    from skimage.filters import gaussian
    from skimage.transform import AffineTransform, warp

    turned = transform in ("rotate", "both", "perspective")
    angle = rng.uniform(0.0, np.pi) if turned else 0.0
    scale = rng.uniform(*_SCALE_RANGE) if transform in ("rescale", "both") else 1.0
    scale *= zoom
    h, w = texture.shape[:2]
    shift = rng.uniform(0, 2 * (h - 1)), rng.uniform(0, 2 * (w - 1))
    tilt = None
    if transform == "perspective":
        # a plane seen at an angle: output (col, row) v about the centre maps to v / (1 + p·v),
        # a homography whose magnification 1 + p·v runs from 1 - a/2 to 1 + a/2 across the
        # shorter side along p (and falls faster along it: foreshortening)
        a = 2.0 * (PERSPECTIVE_RATIO - 1.0) / (PERSPECTIVE_RATIO + 1.0)
        direction = rng.uniform(0.0, 2.0 * np.pi)
        tilt = a * np.array([math.cos(direction), math.sin(direction)]) / min(shape)
    elif scale < 1.0:  # shrinking: blur first, as skimage.transform.rescale's anti-aliasing does
        channels = -1 if texture.ndim == 3 else None
        sigma = (1.0 / scale - 1.0) / 2.0
        texture = gaussian(texture, sigma=sigma, mode="reflect", channel_axis=channels)
    # output (col, row) -> about the centre, rotate, divide by the scale, move to the shift
    centre = np.array([(shape[1] - 1) / 2, (shape[0] - 1) / 2])
    turn = AffineTransform(rotation=angle, scale=1.0 / scale, translation=(shift[1], shift[0]))
    step = 1 if tilt is None else 2  # perspective shrinks parts: sampled 2 x 2 per pixel

    def folded(cr: np.ndarray) -> np.ndarray:
        v = (cr + 0.5) / step - 0.5 - centre
        if tilt is not None:
            v = v / (1.0 + v @ tilt)[:, None]
        src = turn(v)
        return np.stack([_fold(src[:, 0], w), _fold(src[:, 1], h)], axis=1)

    fine = (shape[0] * step, shape[1] * step)
    out = warp(texture, folded, output_shape=fine, order=1, mode="reflect", preserve_range=True)
    if step > 1:
        out = out.reshape(shape[0], step, shape[1], step, *out.shape[2:]).mean(axis=(1, 3))
    return out.astype(np.float32)


def _normalized(canvas: np.ndarray, normalize: str | None) -> np.ndarray:
    if normalize is None:
        return canvas
    if canvas.ndim == 3:  # colour: every channel on its own
        planes = [_normalized(canvas[..., c], normalize) for c in range(canvas.shape[-1])]
        return np.stack(planes, axis=-1)
    if normalize == "meanstd":
        std = float(canvas.std())
        z = (canvas - float(canvas.mean())) / (std if std > 0 else 1.0)
        return (_TARGET_MEAN + _TARGET_STD * z).astype(np.float32)
    from skimage.exposure import equalize_hist

    return equalize_hist(canvas, nbins=1024).astype(np.float32)


def texture_mosaic(
    shape: tuple[int, int],
    *,
    n_regions: int = 3,
    layout: str = "voronoi",
    transform: str | None = None,
    textures: tuple[str | np.ndarray, ...] = TEXTURES,
    normalize: str | None = "meanstd",
    scale: float = 1.0,
    seed: int = 0,
    color: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A mosaic of real textures in ``n_regions`` regions, and its ground truth.

    See the module's docstring for how textures are tiled, laid out, transformed and
    normalised. The same arguments always give the same image.

    Parameters
    ----------
    shape : (int, int)
        Height and width in pixels (at least 16 × 16).
    n_regions : int, optional
        Number of regions (2 .. ``len(textures)``; default 3); region ``k`` shows
        ``textures[k]``.
    layout : {"voronoi", "stripes", "blobs"}, optional
        How the image is split into regions (default ``"voronoi"``).
    transform : {None, "rotate", "rescale", "both", "perspective"}, optional
        Per-region transform of the texture: a random rotation in [0°, 180°), a random scale
        factor in [0.7, 1.4], both, or a rotation and a perspective view whose magnification
        changes :data:`PERSPECTIVE_RATIO` times across the image. ``None`` only shifts each
        texture by a random offset (the default).
    textures : tuple of str or array, optional
        Names among :data:`TEXTURES` (scikit-image's local photographs) or 2-D arrays (grey or
        RGB, converted to grey unless ``color``); at least ``n_regions`` of them (default
        ``("brick", "grass", "gravel")``).
    normalize : {"meanstd", "histogram", None}, optional
        Per texture (and per channel with ``color``): mean 0.5 and standard deviation 0.15
        (default), histogram equalisation, or the photographs' own levels.
    scale : float, optional
        Zoom of every texture before its transform: 0.5 shows the photographs at half size
        (twice as many bricks per region), 1 (default) at their native resolution.
    seed : int, optional
        Seed of every random choice (layout, offsets, angles, scales; default 0).
    color : bool, optional
        Keep RGB textures' colours: the mosaic is (H, W, 3), laid out and transformed exactly
        as the grey one of the same arguments (default False: grey).

    Returns
    -------
    image : numpy.ndarray of float32, shape (H, W) or (H, W, 3), values in [0, 1]
    labels : numpy.ndarray of uint8, shape (H, W)
        The region, i.e. the index in ``textures``, of every pixel; all of 0 .. n_regions - 1
        occur.

    Raises
    ------
    ValueError
        For a ``shape`` below 16 × 16, an ``n_regions`` outside 2 .. ``len(textures)``, a
        ``layout``, ``transform`` or ``normalize`` not in the lists, a ``scale`` outside
        [0.05, 20], an unknown texture name, and a texture array that is not a grey or RGB
        image.
    TypeError
        For ``textures`` given as one name or one array instead of a tuple.
    FileNotFoundError
        For a texture name whose photograph scikit-image has not installed
        (:func:`local_textures`).

    Examples
    --------
    >>> image, labels = texture_mosaic((128, 128), layout="stripes", transform="rotate", seed=1)
    >>> image.shape, image.dtype.name, sorted(set(labels.ravel().tolist()))
    ((128, 128), 'float32', [0, 1, 2])
    """
    h, w = _check_shape(shape, minimum=16)
    if isinstance(textures, str | np.ndarray):
        raise TypeError("textures must be a tuple of names or arrays")
    sources = tuple(textures)
    n = int(n_regions)
    if n != n_regions or not 2 <= n <= len(sources):
        raise ValueError(
            f"n_regions must be an integer in 2..{len(sources)} (the number of textures), "
            f"got {n_regions!r}"
        )
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if not (np.isfinite(scale) and 0.05 <= scale <= 20):
        raise ValueError(f"scale must be in [0.05, 20], got {scale!r}")
    if normalize not in ("meanstd", "histogram", None):
        raise ValueError(f"normalize must be 'meanstd', 'histogram' or None, got {normalize!r}")
    labels = _draw_layout(layout, n, (h, w), int(seed)).labels(h, w)
    image = np.empty((h, w, 3) if color else (h, w), dtype=np.float32)
    for k in range(n):
        rng = np.random.default_rng([int(seed), _STREAM_TEXTURE, k])
        canvas = _canvas(_texture(sources[k], bool(color)), (h, w), rng, transform, float(scale))
        canvas = _normalized(canvas, normalize)
        inside = labels == k
        image[inside] = canvas[inside]
    np.clip(image, 0.0, 1.0, out=image)
    return image, labels


@dataclass(frozen=True)
class MosaicConfig:
    """One named mosaic: arguments of :func:`texture_mosaic` other than shape and textures."""

    layout: str
    transform: str | None
    seed: int

    @property
    def name(self) -> str:
        """``"{layout}-{transform or 'plain'}-s{seed}"``, e.g. ``"voronoi-rotate-s1000"``."""
        return f"{self.layout}-{self.transform or 'plain'}-s{self.seed}"


def _configs(seeds: tuple[int, ...]) -> tuple[MosaicConfig, ...]:
    return tuple(
        MosaicConfig(layout, transform, seed)
        for layout in LAYOUTS
        for transform in TRANSFORMS
        for seed in seeds
    )


#: Named configurations: every layout × transform with two seeds per split. Tune on
#: ``"tuning"`` (seeds 0, 1) and report on ``"held_out"`` (seeds 1000, 1001), never the reverse.
MOSAIC_CONFIGS: dict[str, tuple[MosaicConfig, ...]] = {
    "tuning": _configs((0, 1)),
    "held_out": _configs((1000, 1001)),
}


def texture_mosaic_set(
    split: str = "held_out",
    shape: tuple[int, int] = (512, 512),
    *,
    n_regions: int = 3,
    textures: tuple[str | np.ndarray, ...] = TEXTURES,
    normalize: str | None = "meanstd",
    scale: float = 1.0,
    layouts: tuple[str, ...] | None = None,
    transforms: tuple[str | None, ...] | None = None,
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The mosaics of one split of :data:`MOSAIC_CONFIGS`.

    Parameters
    ----------
    split : {"tuning", "held_out"}, optional
        Which list of configurations (the two share no seed; default ``"held_out"``).
    shape : (int, int), optional
        Image shape, (height, width) in pixels (default (512, 512)).
    n_regions, textures, normalize, scale : optional
        As in :func:`texture_mosaic`, with its defaults.
    layouts, transforms : tuple, optional
        Keep only these layouts / transforms (default: all).

    Returns
    -------
    list of (name, image, labels)
        ``name`` is ``"{layout}-{transform or 'plain'}-s{seed}"`` (:attr:`MosaicConfig.name`);
        ``image`` and ``labels`` as :func:`texture_mosaic` returns them.

    Raises
    ------
    ValueError
        For a ``split`` not in the list, and the refusals of :func:`texture_mosaic`.
    """
    if split not in MOSAIC_CONFIGS:
        raise ValueError(f"split must be one of {tuple(MOSAIC_CONFIGS)}, got {split!r}")
    out = []
    for config in MOSAIC_CONFIGS[split]:
        if layouts is not None and config.layout not in layouts:
            continue
        if transforms is not None and config.transform not in transforms:
            continue
        image, labels = texture_mosaic(
            shape, n_regions=n_regions, layout=config.layout, transform=config.transform,
            textures=textures, normalize=normalize, scale=scale, seed=config.seed,
        )  # fmt: skip
        out.append((config.name, image, labels))
    return out
