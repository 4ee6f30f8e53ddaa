"""ORTSEG with FS-KDE features: fit pure texture features once, unmix every block (section 5.3).

The pipeline for an image of any size:

1. Local features (:mod:`.features`) of a few randomly chosen blocks, sampled at ``sample`` pixels.
2. Feature groups scaled: colour histograms sum to one per pixel; gradient groups ("hist",
   "fskde") are divided by their mean mass on the sample (the mean local |g|), then every group is
   multiplied by its weight.
3. Pure texture features (endmembers) fitted on the sample (:func:`.unmixing.fit_endmembers`).
4. For every block, :func:`_unmix_block` computes the features of the block plus its halo, the
   exact fully-constrained abundances (:func:`.unmixing.abundances`) and the labels by arg-max.

Steps 1 and 4 run on the package's one block engine, :func:`xfskde.lazy.map_haloed`: the halo
is the window's depth, chunks come from :func:`xfskde.lazy.plan_chunks`, neighbours lend their
pixels and beyond the true image edge the window is truncated (:func:`_padded`); each task runs
single-threaded. NumPy inputs run the same graph with the threaded scheduler. Once the
endmembers are fixed the labels do not depend on the chunking. DataArray results keep the
input's coordinates and attrs (:mod:`xfskde._labels`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dask
import dask.array as da
import numpy as np
import xarray as xr
from dask.base import tokenize

from .._grid import MaskFootprint, mask_at_samples, sample_count, sample_offset
from .._labels import image_layout, image_nodata, label_result, nodata_value
from ..api import Nodata, check_nodata
from ..exceptions import DimensionError, ParameterError
from ..lazy import map_haloed, plan_chunks, safe_chunks
from ..masks import resolve_mask
from ._filters import interpolate
from .features import FeatureSpec, feature_depth, grid_features, grid_projections
from .unmixing import abundances_from_projections, fit_endmembers

__all__ = ["BACKGROUND", "DEFAULT_WEIGHTS", "TextureModel", "fit_textures", "segment"]

#: Weights of the feature groups, chosen on training images (see docs/segmentation.md).
DEFAULT_WEIGHTS = {"color": 1.0, "hist": 1.0, "fskde": 1.0}

#: Target chunk side of segmentation, in pixels: smaller than the coefficient field's because a
#: block holds a few dozen float32 feature planes per pixel while it is unmixed.
FEATURE_CHUNK = 512
#: The label of pixels outside the mask (or of no texture): textures are labelled 1 .. m, as
#: scikit-image's segmentations, napari's label layers and OME-NGFF label images expect.
BACKGROUND = 0
_MAX_FIT_BLOCKS = 16
_LONG_NAMES = {"labels": "texture label", "abundances": "texture abundances"}


@dataclass(frozen=True)
class TextureModel:
    """Fitted pure texture features and the feature parameters that produced them.

    Attributes
    ----------
    spec : FeatureSpec
        Which features, which window.
    scales : dict
        Multiplier of each feature group (its weight over its mean mass on the sample).
    endmembers : numpy.ndarray, shape (n_textures, D)
        Pure texture features in the scaled feature space.
    """

    spec: FeatureSpec
    scales: dict[str, float]
    endmembers: np.ndarray = field(repr=False)

    @property
    def n_textures(self) -> int:
        return int(self.endmembers.shape[0])

    def attrs(self) -> dict[str, Any]:
        """The parameters, for DataArray attrs and Zarr metadata."""
        s = self.spec
        return {
            "method": "ORTSEG (occlusion of random textures) with cos^2K FS-KDE features",
            "n_textures": self.n_textures,
            "features": ",".join(s.features),
            "window": s.window,
            "size": s.size,
            "color_bins": s.color_bins,
            "angle_bins": s.angle_bins,
            "n_coefficients": s.n_coefficients,
            "stride": s.stride,
            **{f"scale_{k}": float(v) for k, v in self.scales.items()},
            # the fitted pure-texture features: with the parameters above they reproduce the
            # labels, and a resumed write checks them
            "endmembers": np.asarray(self.endmembers, dtype=float).round(7).tolist(),
        }

    def abundances(
        self, image: Any, *, chunks: int | None = None, mask: Any = None, nodata: Nodata = "auto"
    ) -> Any:
        """Per-pixel abundances (y, x, n_textures) of the textures, following the input kind;
        NaN outside ``mask`` and at missing pixels (as in :func:`segment`). Texture i has
        label i + 1."""
        return _apply(image, self, "abundances", chunks, mask, nodata)

    def predict(
        self, image: Any, *, chunks: int | None = None, mask: Any = None, nodata: Nodata = "auto"
    ) -> Any:
        """Labels 1 .. n_textures (arg-max abundance), :data:`BACKGROUND` (0) outside ``mask``
        and at missing pixels (as in :func:`segment`), following the input kind."""
        return _apply(image, self, "labels", chunks, mask, nodata)


def _unit_float(block: np.ndarray, nodata: float | int | None) -> np.ndarray:
    """A block as float32 values in [0, 1] (integers divided by their dtype's maximum), with
    NaN at its missing pixels: a pixel whose every channel equals ``nodata``, or any NaN."""
    if block.dtype.kind in "ui":
        out = block.astype(np.float32) / np.float32(np.iinfo(block.dtype).max)
    else:
        out = block.astype(np.float32)
    if nodata is not None and not (isinstance(nodata, float) and np.isnan(nodata)):
        out[(block == nodata).all(axis=-1)] = np.nan
    return out


def _padded(
    block: np.ndarray,
    halo: int,
    src_origin: tuple[int, int],
    rows: tuple[int, int],
    cols: tuple[int, int],
) -> np.ndarray:
    """The block with a full halo on every side: beyond the true image edges, missing pixels.

    The engine gives a block its neighbours' pixels only where it has neighbours; beyond the
    image edge there is nothing, and the features treat it as missing (NaN): the window is
    truncated to the image and renormalised (:mod:`.features`). Mirroring the image instead
    would turn oriented textures at the edge into their mirror images (a 45° texture mixed with
    a 135° one) and label them as another texture.
    """
    top = halo - (rows[0] - src_origin[0])
    left = halo - (cols[0] - src_origin[1])
    bottom = halo - (src_origin[0] + block.shape[0] - rows[1])
    right = halo - (src_origin[1] + block.shape[1] - cols[1])
    pads = ((top, bottom), (left, right), (0, 0))
    if not any(p for pair in pads for p in pair):
        return block
    return np.pad(block, pads, mode="constant", constant_values=np.nan)


def halo_of(spec: FeatureSpec) -> int:
    """Pixels a block needs around its own: the features' depth, and on a stride grid the
    reach of the samples just beyond the block that its pixels are interpolated from."""
    return feature_depth(spec) + (spec.stride if spec.stride > 1 else 0)


def _axis_samples(a: int, b: int, n_pixels: int, stride: int) -> tuple[np.ndarray, ...]:
    """The grid samples that pixels ``a .. b-1`` of an axis of ``n_pixels`` are interpolated
    from: their global indices, and per pixel the positions (in that list) of the samples
    before and after it and the weight of the one after (0 at stride 1: the pixel's own).
    Pixels before the first sample or after the last take that sample (no extrapolation)."""
    n = sample_count(n_pixels, stride)
    t = np.clip((np.arange(a, b) - sample_offset(stride)) / stride, 0, n - 1)
    before = np.floor(t).astype(np.int64)
    after = np.minimum(before + 1, n - 1)
    first = int(before.min())
    samples = np.arange(first, int(after.max()) + 1)
    return samples, before - first, after - first, (t - before).astype(np.float32)


def _unmix_block(
    block: np.ndarray,
    model: TextureModel,
    what: str,
    origin: tuple[int, int],
    shape: tuple[int, int],
    image_shape: tuple[int, int],
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """A fully haloed block → abundances or labels of its ``shape`` pixels at global ``origin``.

    1. The features' projections on the endmembers at the stride grid's samples around the
       block (:func:`.features.grid_projections`: m windowed planes, whatever the number of
       features; the feature stack is never built).
    2. The exact fully-constrained abundances at those samples
       (:func:`.unmixing.abundances_from_projections`).
    3. Bilinear interpolation of the abundances to every pixel (at stride 1 each pixel's own),
       then the arg-max. The grid is the image's, so the result does not depend on the
       chunking. Labels are 1 .. m.
    4. Pixels outside the foreground ``mask`` (covering the image's extent, at any
       resolution) are :data:`BACKGROUND` (label) or NaN (abundances).
    """
    spec, halo = model.spec, halo_of(model.spec)
    E = np.asarray(model.endmembers, dtype=np.float64)
    tables, start = {}, 0
    for name, n in _group_sizes(spec, block.shape[-1]).items():
        tables[name] = (E[:, start : start + n] * model.scales[name]).T
        start += n
    s, o = spec.stride, sample_offset(spec.stride)
    ys, y0, y1, fy = _axis_samples(origin[0], origin[0] + shape[0], image_shape[0], s)
    xs, x0, x1, fx = _axis_samples(origin[1], origin[1] + shape[1], image_shape[1], s)
    rows = ys * s + o - (origin[0] - halo)  # the samples' centres in the padded block
    cols = xs * s + o - (origin[1] - halo)
    b = grid_projections(block, spec, tables, rows, cols)
    a = abundances_from_projections(b.reshape(-1, E.shape[0]).astype(np.float64), E @ E.T)
    a = a.reshape(len(ys), len(xs), -1)
    out = interpolate(a, (y0, y1, fy), (x0, x1, fx), labels=what == "labels")
    own = block[halo : halo + shape[0], halo : halo + shape[1]]
    missing = ~np.isfinite(own).all(axis=-1)
    if missing.any():
        out[missing] = BACKGROUND if what == "labels" else np.nan
    if mask is not None:
        rows_px = (origin[0], origin[0] + shape[0])
        inside = mask_at_samples(mask, image_shape, 1, rows_px, (origin[1], origin[1] + shape[1]))
        out[~inside] = BACKGROUND if what == "labels" else np.nan
    return out


def _sample_block(
    block: np.ndarray,
    spec: FeatureSpec,
    halo: int,
    n: int,
    seed: int,
    origin: tuple[int, int],
    image_shape: tuple[int, int],
    mask: np.ndarray | None = None,
):
    """Exact features at ``n`` points of a grid over the interior of a fully haloed block whose
    first interior pixel is the image's ``origin``.

    The grid's spacing is chosen so that it holds at least ``n`` points (every pixel for small
    blocks); ``n`` of them are drawn, among those on the foreground ``mask`` when one is given.
    Only the grid's samples are windowed (:func:`.features.grid_features`), so a coarse grid
    costs a fraction of the block.
    """
    height, width = block.shape[0] - 2 * halo, block.shape[1] - 2 * halo
    step = max(1, int(np.sqrt(height * width / max(n, 1))))
    rows = np.arange(step // 2, height, step)
    cols = np.arange(step // 2, width, step)
    groups = grid_features(block, spec, rows + halo, cols + halo)
    X = np.concatenate([groups[name] for name in spec.features], axis=-1)
    present = np.isfinite(block[rows + halo][:, cols + halo]).all(axis=-1)
    if not present.all():  # no texture at a missing pixel
        X = np.where(present[..., None], X, np.nan)
    if mask is not None:
        r = (origin[0] + rows[0], origin[0] + rows[-1] + 1)
        c = (origin[1] + cols[0], origin[1] + cols[-1] + 1)
        X = X[mask_at_samples(mask, image_shape, 1, r, c)[::step, ::step]]
    X = X.reshape(-1, X.shape[-1])
    X = X[np.isfinite(X).all(axis=1)]
    if X.shape[0] > n:
        X = X[np.random.default_rng(seed).choice(X.shape[0], n, replace=False)]
    return X


def _group_sizes(spec: FeatureSpec, channels: int) -> dict[str, int]:
    ell = spec.n_coefficients
    sizes = {"color": spec.color_bins * channels, "hist": spec.angle_bins, "fskde": 2 * ell - 1}
    return {name: sizes[name] for name in spec.features}


def _prepare(
    image: Any, chunks: int | None, halo: int, nodata: Nodata = "auto"
) -> tuple[da.Array, str, Any, dict[str, Any]]:
    """(Dask (y, x, c) float32 array in [0, 1] with NaN at missing pixels, input kind, the
    DataArray or None, the nodata attrs), chunked by the one planner.

    NumPy data, and any input when ``chunks`` is given, are cut by
    :func:`xfskde.lazy.plan_chunks` with a target of ``chunks`` or :data:`FEATURE_CHUNK`; Dask
    inputs otherwise keep their chunks (the engine merges any smaller than the halo). The
    conversion runs in the tasks, block by block.
    """
    check_nodata(nodata)
    source = None
    if isinstance(image, xr.DataArray):
        source = image
        image, _ = image_layout(image)
        kind = "dataarray"
    elif isinstance(image, da.Array):
        kind = "dask"
    elif isinstance(image, np.ndarray) or hasattr(image, "__array__"):
        image = np.asarray(image)
        kind = "numpy"
    else:
        raise TypeError(f"image must be a numpy, dask or xarray array, got {type(image).__name__}")
    if image.ndim not in (2, 3):
        raise DimensionError(f"image must be (y, x) or (y, x, c), got shape {image.shape}")
    if image.dtype.kind not in "uifb":
        raise TypeError(f"image must hold real numbers, got dtype {image.dtype}")
    if isinstance(nodata, str):  # "auto": what the image's metadata say
        value, where = image_nodata(source) if source is not None else (None, "none")
    elif nodata is None:
        value, where = None, "nodata=None"
    else:
        value, where = nodata_value(nodata, image.dtype, "nodata"), "nodata argument"
    if image.ndim == 2:
        image = image[..., None]
    if not isinstance(image, da.Array) or chunks is not None:
        rows, cols = plan_chunks(image.shape[:2], target=chunks or FEATURE_CHUNK, halo=halo)
        image = da.asarray(image).rechunk((rows, cols, -1))
    unit = image.map_blocks(_unit_float, value, dtype=np.float32,
                            name=f"xfskde-unit-float-{tokenize(image.name, value)}")  # fmt: skip
    attrs = {"input_nodata": "none" if value is None else value, "input_nodata_source": where}
    return unit, kind, source, attrs


def _mask_attrs(foreground: np.ndarray | None, mask: Any) -> dict[str, Any]:
    if foreground is None:
        return {"background_label": BACKGROUND}
    what = mask if isinstance(mask, str) else "an array"
    return {"mask": what, "mask_foreground": float(foreground.mean()),
            "background_label": BACKGROUND}  # fmt: skip


def _foreground(arr: da.Array, source: Any, mask: Any) -> np.ndarray | None:
    """The mask a caller gave, resolved against the image (:func:`xfskde.masks.resolve_mask`),
    as a boolean array covering the image's extent; None for no mask."""
    view = source if source is not None else xr.DataArray(arr, dims=("y", "x", "c"))
    foreground = resolve_mask(mask, view)
    return None if foreground is None else np.asarray(foreground.values, bool)


def _apply(
    image: Any,
    model: TextureModel,
    output: str,
    chunks: int | None,
    mask: Any = None,
    nodata: Nodata = "auto",
) -> Any:
    halo = halo_of(model.spec)
    is_dask = isinstance(getattr(image, "data", image), da.Array)
    arr, kind, source, nodata_attrs = _prepare(image, chunks, halo, nodata)
    foreground = _foreground(arr, source, mask)
    footprint = None if foreground is None else MaskFootprint(foreground, arr.shape[:2])

    def block(x: np.ndarray, *, src_origin, rows, cols, image_shape, shared=None, **_: Any):
        full = _padded(x, halo, src_origin, rows, cols)
        shape = (rows[1] - rows[0], cols[1] - cols[0])
        return _unmix_block(full, model, output, (rows[0], cols[0]), shape, image_shape, shared)

    labels = output == "labels"
    result = map_haloed(
        block,
        arr,
        halo=halo,
        trailing=() if labels else (model.n_textures,),
        dtype=np.uint8 if labels else np.float32,
        name=f"xfskde-segment-{output}",
        token=(model.attrs(), model.spec),
        skip=None if footprint is None else footprint.background,
        fill=BACKGROUND if labels else np.nan,
        shared=foreground,
    )
    if kind == "dask":
        return result
    if not is_dask:  # NumPy in, NumPy out: the same graph, run on local threads
        result = result.compute(scheduler="threads")
    if kind == "numpy":
        return result
    return label_result(
        result,
        source,
        extra_dims={} if labels else {"texture": None},
        name=output,
        attrs={
            **model.attrs(),
            **_mask_attrs(foreground, mask),
            **nodata_attrs,
            "long_name": _LONG_NAMES[output],
        },
    )


def fit_textures(
    image: Any,
    n_textures: int,
    *,
    features: tuple[str, ...] = ("color", "fskde"),
    window: str = "gaussian",
    size: float = 6.0,
    color_bins: int = 16,
    angle_bins: int = 16,
    n_coefficients: int = 8,
    stride: int = 1,
    weights: dict[str, float] | None = None,
    method: str = "kmeans",
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
    mask: Any = None,
    nodata: Nodata = "auto",
) -> TextureModel:
    """Fit the pure texture features of an image on a sample of its pixels.

    Parameters are those of :func:`segment`.

    Returns
    -------
    TextureModel
    """
    if int(n_textures) != n_textures or n_textures < 1:
        raise ParameterError(f"n_textures must be a positive integer, got {n_textures!r}")
    if int(sample) != sample or sample < n_textures:
        raise ParameterError(f"sample must be an integer >= n_textures, got {sample!r}")
    spec = FeatureSpec(
        features=features, window=window, size=size, color_bins=color_bins,
        angle_bins=angle_bins, n_coefficients=n_coefficients, stride=stride,
    )  # fmt: skip
    w = dict(DEFAULT_WEIGHTS)
    if weights:
        unknown = set(weights) - set(w)
        if unknown:
            raise ParameterError(f"weights has unknown feature groups {sorted(unknown)}")
        w.update({k: float(v) for k, v in weights.items()})
    halo = feature_depth(spec)
    arr, _, source, _ = _prepare(image, chunks, halo, nodata)
    foreground = _foreground(arr, source, mask)
    sizes = _group_sizes(spec, arr.shape[2])
    n_features = sum(sizes.values())
    # the engine's blocks (chunks smaller than the halo merged): draw the blocks to sample,
    # among those with foreground
    rng = np.random.default_rng(seed)
    row_chunks, col_chunks = (safe_chunks(c, halo) for c in arr.chunks[:2])
    grid = list(np.ndindex(len(row_chunks), len(col_chunks)))
    if foreground is not None:
        footprint = MaskFootprint(foreground, arr.shape[:2])
        starts = [np.concatenate([[0], np.cumsum(c)]) for c in (row_chunks, col_chunks)]
        grid = [
            (i, j)
            for i, j in grid
            if footprint.touches((starts[0][i], starts[0][i + 1]), (starts[1][j], starts[1][j + 1]))
        ]
        if not grid:
            raise ParameterError("the mask has no foreground: there is nothing to segment")
    picked = rng.permutation(len(grid))[:_MAX_FIT_BLOCKS]
    per_block = -(-int(sample) // len(picked))
    seeds = rng.integers(0, 2**32, len(picked))
    seed_of = {grid[i]: int(s) for i, s in zip(sorted(picked), seeds, strict=True)}

    def block(x: np.ndarray, *, src_origin, rows, cols, block_id, image_shape, shared=None,
              **_: Any) -> np.ndarray:  # fmt: skip
        out = np.full((1, 1, per_block, n_features), np.nan, np.float32)
        if block_id in seed_of:  # only picked blocks are computed (the others are culled)
            full = _padded(x, halo, src_origin, rows, cols)
            part = _sample_block(full, spec, halo, per_block, seed_of[block_id],
                                 (rows[0], cols[0]), image_shape, shared)  # fmt: skip
            out[0, 0, : part.shape[0]] = part
        return out

    samples = map_haloed(
        block,
        arr,
        halo=halo,
        per_block=True,
        trailing=(per_block, n_features),
        dtype=np.float32,
        name="xfskde-segment-sample",
        token=(spec, seed, int(sample)),
        shared=foreground,
    )  # each task returns only its sampled rows: memory stays per block
    parts = dask.compute(*(samples.blocks[b] for b in sorted(seed_of)))
    X = np.concatenate([p.reshape(per_block, n_features) for p in parts])
    X = X[~np.isnan(X[:, 0])]
    if X.shape[0] < n_textures:
        raise ParameterError(
            f"only {X.shape[0]} pixels could be sampled (inside the mask, not missing), fewer "
            f"than n_textures = {n_textures}: give an image or a mask with more foreground"
        )
    if X.shape[0] > sample:
        X = X[rng.choice(X.shape[0], sample, replace=False)]
    scales: dict[str, float] = {}
    start = 0
    for name, n in sizes.items():
        part = X[:, start : start + n]
        mass = 1.0 if name == "color" else float(part.sum(axis=1).mean())
        scales[name] = w[name] / mass if mass > 0 else w[name]
        X[:, start : start + n] = part * np.float32(scales[name])
        start += n
    endmembers = fit_endmembers(X, int(n_textures), method=method, seed=seed)
    return TextureModel(spec=spec, scales=scales, endmembers=endmembers)


def segment(
    image: Any,
    n_textures: int,
    *,
    features: tuple[str, ...] = ("color", "fskde"),
    window: str = "gaussian",
    size: float = 6.0,
    color_bins: int = 16,
    angle_bins: int = 16,
    n_coefficients: int = 8,
    stride: int = 1,
    weights: dict[str, float] | None = None,
    method: str = "kmeans",
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
    model: TextureModel | None = None,
    return_model: bool = False,
    mask: Any = None,
    nodata: Nodata = "auto",
) -> Any:
    """Segment an image into textures by unmixing local features (ORTSEG, section 5.3).

    Local colour histograms, gradient-angle histograms and cos^2K FS-KDEs of gradients (eqs. 1,
    4-7; not canonicalised, so textures that differ only in orientation stay apart) are computed
    with one window; pure texture features are fitted once on a sample of pixels; every pixel's
    abundances (non-negative, summing to one) come from exact fully-constrained least squares,
    block by block, and its label is the texture of largest abundance.

    Parameters
    ----------
    image : numpy.ndarray, dask.array.Array or xarray.DataArray
        ``(y, x)`` or ``(y, x, c)`` (DataArrays by dim name). Floats are read as values in
        [0, 1] (outside values fall in the end colour bins); integers are divided by their
        dtype's maximum.
    n_textures : int
        Number of textures (at most 12).
    features : tuple of {"color", "hist", "fskde"}
        Feature groups (see :mod:`xfskde.segmentation.features`). ``("color",)`` is the basic
        ORTSEG, ``("color", "hist")`` the histogram baseline.
    window : {"gaussian", "box", "disk"}
        Window φ shared by every feature.
    size : float
        Gaussian sigma (default 6), box side or disk radius, in pixels.
    color_bins : int
        Histogram bins per colour channel.
    angle_bins : int
        Bins of the gradient-angle histograms over (-π, π].
    n_coefficients : int
        ℓ, complex FS-KDE coefficients (the sharpest cos^2K kernel of that length at ε = 1e-5).
    stride : int
        The abundances are solved at the pixels ``i * stride + (stride - 1) // 2`` of the image
        and interpolated bilinearly to every pixel in between (1: at every pixel, exactly).
    weights : dict, optional
        Weight per group, e.g. ``{"fskde": 1.0}``; default :data:`DEFAULT_WEIGHTS`.
    method : {"nmf", "kmeans"}
        How the pure texture features are fitted (:func:`.unmixing.fit_endmembers`).
    sample : int
        Pixels sampled (from at most 16 random blocks) to fit the pure features.
    seed : int
        Seed of the sampling and of the fit.
    chunks : int, optional
        Block side for the computation; NumPy inputs default to 512, Dask inputs keep theirs.
    model : TextureModel, optional
        Use these fitted pure features instead of fitting (labels then do not depend on the
        chunking).
    return_model : bool
        Also return the :class:`TextureModel`.
    mask : "auto", path, array or DataArray, optional
        The foreground to segment (:mod:`xfskde.masks`: ``"auto"`` finds tissue or signal, a
        path names a mask image, an array or DataArray covers the image's extent at any
        resolution): blocks without foreground are neither read nor computed, the fit samples
        the foreground only, and pixels outside it get the label :data:`BACKGROUND`.
    nodata : "auto", number or None
        The value that marks missing pixels (a pixel whose every channel equals it): ``"auto"``
        reads it from a DataArray's metadata as :func:`xfskde.local_fskde` does, None uses every
        pixel. Missing pixels, and pixels with a NaN channel, vote for no feature (nor do the
        gradients whose stencils touch them) and get the label :data:`BACKGROUND`.

    Returns
    -------
    labels : numpy.ndarray, dask.array.Array or xarray.DataArray of uint8, shape (y, x)
        Textures 1 .. n_textures (the arg-max abundance; texture i is row i - 1 of the
        model's endmembers) and :data:`BACKGROUND` = 0 outside ``mask``, as scikit-image's
        segmentations, napari's label layers and OME-NGFF label images number them. Following
        the input kind; a DataArray keeps the spatial dims and coords and carries the
        parameters as attrs.
    model : TextureModel
        Only with ``return_model=True``.
    """
    if model is None:
        model = fit_textures(
            image, n_textures, features=features, window=window, size=size,
            color_bins=color_bins, angle_bins=angle_bins, n_coefficients=n_coefficients,
            stride=stride, weights=weights, method=method, sample=sample, seed=seed, chunks=chunks,
            mask=mask, nodata=nodata,
        )  # fmt: skip
    elif model.n_textures != n_textures:
        raise ParameterError(f"model has {model.n_textures} textures, n_textures is {n_textures}")
    labels = model.predict(image, chunks=chunks, mask=mask, nodata=nodata)
    return (labels, model) if return_model else labels
