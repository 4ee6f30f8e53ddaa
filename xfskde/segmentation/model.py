"""ORTSEG with FS-KDE features: fit pure texture features once, unmix every block (section 5.3).

The pipeline for an image of any size:

1. Local features (:mod:`.features`) of a few randomly chosen blocks, sampled at ``sample`` pixels.
2. Feature groups scaled: colour histograms sum to one per pixel; gradient groups ("hist",
   "fskde") are divided by their mean mass on the sample (the mean local |g|), then every group is
   multiplied by its weight.
3. Pure texture features (endmembers) fitted on the sample (:func:`.unmixing.fit_endmembers`).
4. For every block, the one block function :func:`_unmix_block` computes the features of the
   block plus its halo, the exact fully-constrained abundances (:func:`.unmixing.abundances`) and
   the labels by arg-max. Dask runs it by ``map_overlap`` (only the spatial axes overlap, the halo
   is the window radius + 1, the true image edge is mirrored); NumPy inputs run the same graph
   with the threaded scheduler. Once the endmembers are fixed the labels do not depend on the
   chunking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..lazy import safe_chunks
from .features import FeatureSpec, block_features, feature_depth, feature_pieces
from .unmixing import abundances_from_projections, fit_endmembers

__all__ = ["DEFAULT_WEIGHTS", "TextureModel", "fit_textures", "segment"]

#: Weights of the feature groups, chosen on training images (see docs/segmentation.md).
DEFAULT_WEIGHTS = {"color": 1.0, "hist": 1.0, "fskde": 1.0}

_DEFAULT_CHUNK = 512
_MAX_FIT_BLOCKS = 16


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
            **{f"scale_{k}": float(v) for k, v in self.scales.items()},
            # the fitted pure-texture features: with the parameters above they reproduce the
            # labels, and a resumed write checks them
            "endmembers": np.asarray(self.endmembers, dtype=float).round(7).tolist(),
        }

    def features(self, block: np.ndarray) -> np.ndarray:
        """Scaled, stacked features of a block (with its halo) as (h, w, D) float32."""
        groups = block_features(block, self.spec)
        return np.concatenate(
            [groups[name] * np.float32(self.scales[name]) for name in self.spec.features], axis=-1
        )

    def abundances(self, image: Any, *, chunks: int | None = None) -> Any:
        """Per-pixel abundances (y, x, n_textures) of the textures, following the input kind."""
        return _apply(image, self, "abundances", chunks)

    def predict(self, image: Any, *, chunks: int | None = None) -> Any:
        """Labels 0 .. n_textures-1 (arg-max abundance), following the input kind."""
        return _apply(image, self, "labels", chunks)


def _as_float(block: np.ndarray) -> np.ndarray:
    if block.dtype.kind in "ui":
        return block.astype(np.float32) / np.float32(np.iinfo(block.dtype).max)
    if block.dtype == np.bool_:
        return block.astype(np.float32)
    return block.astype(np.float32, copy=False)


def _unmix_block(block: np.ndarray, model: TextureModel, halo: int, what: str) -> np.ndarray:
    """THE block function: features of a haloed block → abundances or labels of its interior.

    The abundances need the features only through their projections on the endmembers
    (:func:`.unmixing.abundances_from_projections`), so each feature piece is projected as soon
    as it is made, on the interior pixels only, with its group's scale folded into the
    endmembers: the (h, w, D) stack is never built.
    """
    E = np.asarray(model.endmembers, dtype=np.float64)
    inner = (slice(halo, -halo or None), slice(halo, -halo or None))
    b = None
    start = 0
    for name, planes in feature_pieces(_as_float(block), model.spec):
        n = planes.shape[-1]
        basis = (E[:, start : start + n] * model.scales[name]).T.astype(np.float32)
        part = np.ascontiguousarray(planes[inner]).reshape(-1, n) @ basis
        b = part.astype(np.float64) if b is None else b + part
        start += n
    height, width = block.shape[0] - 2 * halo, block.shape[1] - 2 * halo
    a = abundances_from_projections(b, E @ E.T).reshape(height, width, -1)
    if what == "abundances":
        return a
    return np.argmax(a, axis=-1).astype(np.uint8)


def _sample_block(block: np.ndarray, spec: FeatureSpec, halo: int, n: int, seed: int):
    """Features of ``n`` random interior pixels of a haloed block (all when it has fewer).

    The pixels are drawn first and each feature piece is gathered at them as soon as it is
    made, so the block's full feature stack is never held.
    """
    inner = (slice(halo, -halo or None), slice(halo, -halo or None))
    size = (block.shape[0] - 2 * halo) * (block.shape[1] - 2 * halo)
    pick = slice(None) if size <= n else np.random.default_rng(seed).choice(size, n, replace=False)
    parts = [
        np.ascontiguousarray(planes[inner]).reshape(size, -1)[pick]
        for _, planes in feature_pieces(_as_float(block), spec)
    ]
    return np.concatenate(parts, axis=1)


def _group_sizes(spec: FeatureSpec, channels: int) -> dict[str, int]:
    ell = spec.n_coefficients
    sizes = {"color": spec.color_bins * channels, "hist": spec.angle_bins, "fskde": 2 * ell - 1}
    return {name: sizes[name] for name in spec.features}


def _to_dask(image: Any, chunks: int | None, depth: int) -> tuple[Any, str, Any]:
    """(dask (y, x, c) array, input kind, the DataArray or None)."""
    import dask.array as da
    import xarray as xr

    source = None
    if isinstance(image, xr.DataArray):
        from ..accessor import image_dims

        y, x, c = image_dims(image)
        source = image
        image = image.transpose(y, x, *([c] if c else [])).data
        kind = "dataarray"
    elif isinstance(image, da.Array):
        kind = "dask"
    elif isinstance(image, np.ndarray) or hasattr(image, "__array__"):
        image = np.asarray(image)
        kind = "numpy"
    else:
        raise TypeError(f"image must be a numpy, dask or xarray array, got {type(image).__name__}")
    if image.ndim not in (2, 3):
        raise ValueError(f"image must be (y, x) or (y, x, c), got shape {image.shape}")
    if image.dtype.kind not in "uifb":
        raise TypeError(f"image must hold real numbers, got dtype {image.dtype}")
    if image.ndim == 2:
        image = image[..., None]
    if kind == "numpy" or chunks is not None:
        side = chunks or _DEFAULT_CHUNK
        image = da.asarray(image).rechunk((side, side, -1))
    else:
        image = da.asarray(image).rechunk({2: -1})
    fixed = tuple(safe_chunks(image.chunks[a], depth) for a in (0, 1))
    if fixed != image.chunks[:2]:
        image = image.rechunk((*fixed, -1))
    return image, kind, source


def _wrap(result: Any, kind: str, source: Any, model: TextureModel, output: str) -> Any:
    if kind == "numpy":
        return result.compute(scheduler="threads")
    if kind == "dask":
        return result
    import xarray as xr

    from ..accessor import image_dims

    y, x, _ = image_dims(source)
    coords = {name: source.coords[name] for name in (y, x) if name in source.coords}
    dims = (y, x) if output == "labels" else (y, x, "texture")
    return xr.DataArray(result, dims=dims, coords=coords, name=output, attrs=model.attrs())


def _apply(image: Any, model: TextureModel, output: str, chunks: int | None) -> Any:
    depth = feature_depth(model.spec)
    arr, kind, source = _to_dask(image, chunks, depth)
    out_chunks = arr.chunks[:2] + (((model.n_textures,),) if output == "abundances" else ())
    result = arr.map_overlap(
        _unmix_block, depth={0: depth, 1: depth, 2: 0}, boundary="reflect", trim=False,
        dtype=np.float32 if output == "abundances" else np.uint8,
        chunks=out_chunks, drop_axis=[] if output == "abundances" else [2],
        model=model, halo=depth, what=output,
        meta=np.empty((0,) * len(out_chunks), np.float32 if output == "abundances" else np.uint8),
    )  # fmt: skip
    return _wrap(result, kind, source, model, output)


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
    weights: dict[str, float] | None = None,
    method: str = "kmeans",
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
) -> TextureModel:
    """Fit the pure texture features of an image on a sample of its pixels.

    Parameters are those of :func:`segment`.

    Returns
    -------
    TextureModel
    """
    import dask
    import dask.array as da

    if int(n_textures) != n_textures or n_textures < 1:
        raise ValueError(f"n_textures must be a positive integer, got {n_textures!r}")
    if int(sample) != sample or sample < n_textures:
        raise ValueError(f"sample must be an integer >= n_textures, got {sample!r}")
    spec = FeatureSpec(
        features=features, window=window, size=size, color_bins=color_bins,
        angle_bins=angle_bins, n_coefficients=n_coefficients,
    )  # fmt: skip
    w = dict(DEFAULT_WEIGHTS)
    if weights:
        unknown = set(weights) - set(w)
        if unknown:
            raise ValueError(f"weights has unknown feature groups {sorted(unknown)}")
        w.update({k: float(v) for k, v in weights.items()})
    depth = feature_depth(spec)
    arr, _, _ = _to_dask(image, chunks, depth)
    sizes = _group_sizes(spec, arr.shape[2])
    haloed = da.overlap.overlap(arr, depth={0: depth, 1: depth, 2: 0}, boundary="reflect")
    rng = np.random.default_rng(seed)
    grid = list(np.ndindex(*haloed.numblocks[:2]))
    picked = rng.permutation(len(grid))[:_MAX_FIT_BLOCKS]
    per_block = -(-int(sample) // len(picked))
    seeds = rng.integers(0, 2**32, len(picked))
    rows = [
        dask.delayed(_sample_block)(haloed.blocks[grid[i]], spec, depth, per_block, int(s))
        for i, s in zip(sorted(picked), seeds, strict=True)
    ]  # each task returns only its sampled rows: memory stays per block
    X = np.concatenate(dask.compute(*rows))
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
    weights: dict[str, float] | None = None,
    method: str = "kmeans",
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
    model: TextureModel | None = None,
    return_model: bool = False,
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

    Returns
    -------
    labels : numpy.ndarray, dask.array.Array or xarray.DataArray of uint8, shape (y, x)
        Following the input kind; a DataArray keeps the spatial dims and coords and carries the
        parameters as attrs.
    model : TextureModel
        Only with ``return_model=True``.
    """
    if model is None:
        model = fit_textures(
            image, n_textures, features=features, window=window, size=size,
            color_bins=color_bins, angle_bins=angle_bins, n_coefficients=n_coefficients,
            weights=weights, method=method, sample=sample, seed=seed, chunks=chunks,
        )  # fmt: skip
    elif model.n_textures != n_textures:
        raise ValueError(f"model has {model.n_textures} textures, n_textures is {n_textures}")
    labels = model.predict(image, chunks=chunks)
    return (labels, model) if return_model else labels
