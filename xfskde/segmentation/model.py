"""ORTSEG with FS-KDE features: fit pure texture features once, unmix every block (section 5.3).

The pipeline for an image of any size:

1. Local features (:mod:`.features`) of a few randomly chosen cells of the image (the blocks
   :func:`xfskde.lazy.plan_chunks` cuts it into by default, whatever its chunks), or of a tile
   of each, sampled at ``sample`` pixels.
2. Feature groups scaled: colour histograms sum to one per pixel; gradient groups ("hist",
   "fskde") are divided by their mean mass on the sample (the mean local |g|), then every group is
   multiplied by its weight.
3. Pure texture features (endmembers) fitted on the sample (:func:`.unmixing.fit_endmembers`),
   and with the stable fit the within-texture metric the abundances are solved in
   (:func:`.unmixing.fit_within_metric`: the unmixing vectors ``E M``), both then re-estimated
   from the labels they give the sample (:func:`.unmixing.refine_by_labels`), the two
   closest textures' samples split anew, and those two merged and a third split where that
   fits far better (:func:`.unmixing.resplit_closest`).
4. Every block: :func:`_project_block` projects each pixel's votes on the endmembers (on the
   unmixing vectors, in the within-texture metric; with
   the short halo the votes read: the filter bank's 34 px), then :func:`_unmix_block` windows
   those m planes (with the window's halo), solves the exact fully-constrained abundances
   (:func:`.unmixing.abundances_from_projections`) on the stride grid and labels every pixel
   by arg-max. Where the window's halo is wide the two run as two passes (:func:`_two_passes`),
   so that the filter bank's transforms run on a 512² block plus 34 px, not plus the window's
   100 or so as well; else in one task per block.

Steps 1 and 4 run on the package's one block engine (step 1 by its sparse counterpart
:func:`xfskde.lazy.map_regions`, step 4 by :func:`xfskde.lazy.map_haloed`): the halo is the
window's depth (step 4: the votes' reach, then the window's radius), chunks come from
:func:`xfskde.lazy.plan_chunks`, neighbours lend their pixels and beyond the true image edge the
window is truncated (:func:`_padded`); each task runs single-threaded. NumPy inputs run the
same graph with the threaded scheduler. Neither the endmembers nor the labels depend on the
chunking. DataArray results keep the input's coordinates and attrs (:mod:`xfskde._labels`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import dask
import dask.array as da
import numba
import numpy as np
import xarray as xr
from dask.base import tokenize
from scipy import ndimage

from .._cells import NO_MASK, cell_means, compiled_view, kept, marked, missing_marker
from .._grid import MaskFootprint, mask_at_samples, mask_over, sample_count, sample_offset
from .._labels import (
    channel_names,
    crs_wkt,
    ground_pixel_size,
    image_dims,
    image_layout,
    image_nodata,
    label_result,
    nodata_value,
    plane_dims,
    refuse_dataset,
    stored_integer_dtype,
)
from .._memory import release_free_memory
from .._pictures import is_picture
from .._scheduling import compute as compute_collections
from .._validation import check_within_image
from ..api import Nodata, _checks_the_image, check_nodata
from ..exceptions import DimensionError, ParameterError, PixelSizeWarning, find_stack_level
from ..gradients import compiled_dtype
from ..io.images import length_pixel_size_um, open_image
from ..lazy import dask_view, map_haloed, map_regions, oversized, plan_chunks, safe_chunks
from ..masks import METHODS as MASK_METHODS
from ..masks import _mask_attrs, resolve_mask
from ..metrics import rand_index
from ..windows import Window
from ._bank import BANK_FILTERS, BANK_RADIUS, forget_spectra, measured_bank_ranges
from ._filters import interpolate
from ._lbp import LBP_BINS, LBP_SCALES, LBP_SMOOTHING
from .defaults import (
    AGREEMENT,
    AUTO_GRADIENT_SCALES,
    BOUNDARY_RATIO,
    CHANNEL_SPAN,
    CHECK_SIZE,
    EXTREME,
    FINE_SIZE,
    GREY_CHROMA,
    IDLE_SHARE,
    LABEL_FRACTION,
    LEVEL_SPANS,
    MASK_MARGIN,
    REGION_CROP,
    REGION_FLOOR,
    REGION_FRACTION,
    REGION_WIDER,
    TILE,
    TILES,
    auto_features,
    auto_resolution,
    auto_stride,
    auto_weights,
    boundary_share,
    bounded_window,
    channel_ranges,
    chroma_ratio,
    data_bounds,
    gradient_unit,
    group_columns,
    group_signal,
    idle_groups,
    keeps_grey_levels,
    label_window,
    region_scale,
    scale_window,
    signal_weights,
    texture_scale,
    value_levels,
)
from .features import (
    FeatureSpec,
    channel_mean,
    feature_depth,
    grid_features,
    pixel_projections,
    present_pixels,
    vote_reach,
    voting_pixels,
    windowed_projections,
)
from .unmixing import (
    ENDMEMBER_METHODS,
    MAX_TEXTURES,
    REFINE_ROUNDS,
    abundances_from_projections,
    blas_on_one_thread,
    fit_endmembers,
    fit_stable_endmembers,
    fit_within_metric,
    refine_by_labels,
    resplit_closest,
    stable_samples,
    unmixing_gram,
)

__all__ = [
    "BACKGROUND",
    "DEFAULT_WEIGHTS",
    "TextureModel",
    "feature_chunk",
    "fit_textures",
    "segment",
]

#: Weights of the feature groups named explicitly (the paper's ORTSEG settings); the groups
#: that ``features="auto"`` chooses are weighted by :func:`.defaults.auto_weights`.
DEFAULT_WEIGHTS = {"color": 1.0, "bank": 1.0, "lbp": 1.0, "hist": 1.0, "fskde": 1.0}
#: How the endmembers are fitted: :data:`.unmixing.ENDMEMBER_METHODS`, "stable" (pixels away
#: from boundaries) or "auto" (stable for windows wider than the paper's, else k-means).
FIT_METHODS = (*ENDMEMBER_METHODS, "stable", "auto")
AUTO = "auto"
#: The ``color_ranges`` choices: measured on the image, or [0, 1] (the paper's).
COLOR_RANGES = (AUTO, "unit")
#: The metrics the abundances are solved in: Euclidean (the paper's), the within-texture
#: covariance's (:func:`.unmixing.fit_within_metric`), or "auto": within-texture with the
#: stable fit, Euclidean with k-means or NMF.
METRICS = (AUTO, "euclidean", "within")

#: Target chunk side of segmentation, in pixels: smaller than the coefficient field's because a
#: block holds a few dozen float32 feature planes per pixel while it is unmixed.
FEATURE_CHUNK = 512
#: The target chunk side for images of at least :data:`LARGE_IMAGE_BLOCKS` such blocks
#: (:func:`feature_chunk`).
LARGE_FEATURE_CHUNK = 1024
#: How many blocks of :data:`LARGE_FEATURE_CHUNK`² an image must hold to be cut into them:
#: four tasks per core on a 16-core machine.
LARGE_IMAGE_BLOCKS = 64
#: An image whose values span this many times more or less than the model's is refused.
RANGE_RATIO = 4.0
#: An image whose pixels are this many times larger or smaller than those of the image a model
#: was fitted on is refused by the model (its windows would see the textures at another scale).
PIXEL_RATIO = 1.25
#: The label of pixels outside the mask (or of no texture): textures are labelled 1 .. m, as
#: scikit-image's segmentations, napari's label layers and OME-NGFF label images expect.
BACKGROUND = 0
_MAX_FIT_BLOCKS = 16
#: Side of the tile of each drawn cell whose features the fit computes, on images of more
#: than ``_MAX_FIT_BLOCKS`` such tiles (smaller images are sampled from whole cells: the
#: blocks of the image's default plan, :func:`_fit_prepared`): the whole 512² cell where
#: the plan's cells are 512² (images under 8192²), a 512² part of each 1024² cell beyond.
#: Tiles of 256² (until 2026-11-30) read a quarter of a 2048² image, a random quarter: the 30
#: held-out mosaics at 2048² scored 0.9400 / 0.9435 at seeds 0 / 1 (one image 0.763 at one
#: seed, 0.956 at the other), whole cells 0.9517 / 0.9532; at 1536² (9 tiles, the fewest
#: pixels of any size) 0.947 / 0.939 / 0.926 at seeds 0-2, whole cells 0.949 / 0.949 / 0.947.
FIT_TILE = 512
#: A prediction runs in two passes when a block with the whole halo holds this many times the
#: pixels of the block with the votes' reach only (:func:`_two_passes`). Measured on 512²
#: blocks (2 cores): σ 17.6 (ratio 1.58) predict 0.68 -> 0.54 s on a 2048² RGB image; σ 6
#: (ratio 1.14) 3.39 -> 3.63 s, one thread, on 4096² of a tiled TIFF, and 1.5x the memory.
TWO_PASS_AREA = 1.4
_LONG_NAMES = {"labels": "texture label", "abundances": "texture abundances"}


#: What each feature group is, in the words of the result's ``method`` attr.
_GROUP_WORDS = {
    "color": "colour histograms",
    "bank": "filter-bank spectral histograms",
    "lbp": "local binary pattern histograms",
    "hist": "gradient-angle histograms",
    "fskde": "cos^2K FS-KDEs of gradient angles",
}


def _lbp_settings() -> list[float]:
    """The ``"lbp"`` group's codes as a model's attrs record them (``lbp_scales``): each
    (P, R) of :data:`._lbp.LBP_SCALES`, then :data:`._lbp.LBP_SMOOTHING`."""
    return [float(v) for pair in LBP_SCALES for v in pair] + [float(LBP_SMOOTHING)]


def _method_description(features: Sequence[str]) -> str:
    """The ``method`` a result records: ORTSEG (the paper's section 5.3, the Occlusion of Random
    Textures SEGmenter) and the local features its model unmixes — those it kept, not those
    the rule left out (:func:`.defaults.idle_groups`)."""
    return "ORTSEG (occlusion of random textures) unmixing local " + ", ".join(
        _GROUP_WORDS.get(name, name) for name in features
    )


@dataclass(frozen=True)
class TextureModel:
    """Fitted pure texture features and the feature parameters that produced them.

    A model is what its :meth:`attrs` record: :func:`fit_textures` returns the model read back
    from them (:meth:`from_attrs`), so every result carries the model that made it, and
    :func:`read_model` rebuilds it from a stored result to segment other images alike.

    Attributes
    ----------
    spec : FeatureSpec
        Which features, which window.
    scales : dict
        Multiplier of each feature group (its weight over its mean mass on the sample).
    endmembers : numpy.ndarray, shape (n_textures, D)
        Pure texture features in the scaled feature space.
    fit_method : str
        How the endmembers were fitted (one of :data:`FIT_METHODS` but ``"auto"``).
    weights : dict
        The weight of each feature group (``scales`` is the weight over the group's mass).
    resolution : int
        The side of the pixel cells the image is averaged over before its features are computed
        (:func:`.defaults.auto_resolution`); ``spec``'s window size and stride are in such
        cells. 1: every pixel, as the paper.
    choices : dict
        What the fit chose and why (:mod:`.defaults`): the texture scale, the window rule, the
        endmember fit; recorded in the results' attrs.
    value_range : (float, float), optional
        The 0.1th and 99.9th percentiles of the values of the image it was fitted on (after
        integers are divided by their dtype's maximum): an image whose values span a range
        :data:`RANGE_RATIO` times wider or narrower (another bit depth, another unit) is
        refused by :meth:`predict`, whose features would not be those the model knows.
    channel_levels : tuple of (float, float), optional
        The same percentiles of each channel on its own (the attrs' ``channel_levels``): what
        ``match_levels="channels"`` maps an image's channels onto, one by one. None: not
        recorded (a model read from a result that predates it).
    pixel_size : (float, float), optional
        The pixel size (y, x) in µm of the image it was fitted on, when that image's
        coordinates are lengths (an OME-TIFF, SVS or OME-Zarr opened by
        :func:`xfskde.open_image`) or it has a CRS (a GeoTIFF: the size on the ground,
        :func:`xfskde._labels.ground_pixel_size`, so 10 m is 1e7): an image whose pixels are
        :data:`PIXEL_RATIO` times larger or smaller is refused by :meth:`predict` (another
        magnification or resolution).
    seed, sample : int, optional
        The ``seed`` and ``sample`` of the fit that made it (:func:`fit_textures`): with the
        image and the other parameters they reproduce the fit (``fit_seed``, ``fit_sample`` in
        the results' attrs; None for a model built otherwise, or read from a result that
        predates them).
    unmixing_vectors : numpy.ndarray, shape (n_textures, D), optional
        ``E M``, the endmembers in the within-texture metric M the abundances are solved in
        (:func:`.unmixing.fit_within_metric`; the attrs' ``unmixing_vectors``, with
        ``metric = "within"``); None: the Euclidean metric, the paper's.
    fit_size : float, optional
        The window size (in ``spec``'s unit, cells of ``resolution``) the endmembers were
        fitted at, when it is not ``spec.size``, the window the labels are drawn through: the
        automatic rule fits the stable fit at a wider window than it labels
        (:func:`.defaults.label_window`; the attrs' ``fit_size``). None: the same window.
    channels : int, optional
        The channels of the image it was fitted on (the attrs' ``fit_channels``):
        :meth:`predict` refuses an image of other channels, whichever groups the model kept
        (a model without the colour group reads the channels' mean and their largest
        gradient, which an image of other channels gives otherwise). None: not recorded (a
        model read from a result that predates it, or built otherwise), when only the colour
        group's size tells.
    channel_names : tuple of str, optional
        The names of those channels, when the image gave them (an OME-TIFF's or OME-Zarr's
        channel names, a DataArray's ``c`` coordinate of strings; the attrs'
        ``fit_channel_names``): :meth:`predict` takes an image whose named channels are the
        same in another order in the model's order, and refuses one of other names.

    """

    spec: FeatureSpec
    scales: dict[str, float]
    endmembers: np.ndarray = field(repr=False)
    fit_method: str = "kmeans"
    weights: dict[str, float] = field(default_factory=dict)
    resolution: int = 1
    choices: dict[str, Any] = field(default_factory=dict, compare=False)
    value_range: tuple[float, float] | None = None
    channel_levels: tuple[tuple[float, float], ...] | None = None
    pixel_size: tuple[float, float] | None = None
    seed: int | None = None
    sample: int | None = None
    unmixing_vectors: np.ndarray | None = field(default=None, repr=False)
    fit_size: float | None = None
    channels: int | None = None
    channel_names: tuple[str, ...] | None = None

    @property
    def n_textures(self) -> int:
        """The number of textures: the rows of :attr:`endmembers`."""
        return int(self.endmembers.shape[0])

    @property
    def metric(self) -> str:
        """``"within"`` (abundances in the within-texture metric) or ``"euclidean"``."""
        return "euclidean" if self.unmixing_vectors is None else "within"

    def pixel_ratio(self, image: Any) -> float | None:
        """How many times larger the pixels of ``image`` (a DataArray whose coords are lengths,
        or with a CRS) are than those of the image the model was fitted on: the ratio of the
        geometric means of their (y, x) sizes; None when either is not known.

        Parameters
        ----------
        image : Any
            The image to compare; only an xarray.DataArray records its pixel size.

        Returns
        -------
        float or None
            The ratio (above 1: the image's pixels are larger), or None.
        """
        seen = _pixel_size_um(image)
        if self.pixel_size is None or seen is None:
            return None
        return math.sqrt(seen[0] * seen[1] / (self.pixel_size[0] * self.pixel_size[1]))

    def attrs(self) -> dict[str, Any]:
        """The parameters and the fitted model, for DataArray attrs and Zarr metadata: strings,
        numbers and flat lists of numbers (netCDF stores nothing else; pairs of ranges are
        given low, high, low, high, ...), exact, so that :meth:`from_attrs` rebuilds the
        model.

        Returns
        -------
        dict of str to Any
            The attrs; :meth:`from_attrs` of them is an equal model.
        """
        s = self.spec
        return {
            "method": _method_description(s.features),
            "n_textures": self.n_textures,
            "features": ",".join(s.features),
            "window": s.window,
            "size": s.size,
            "color_bins": s.color_bins,
            "angle_bins": s.angle_bins,
            "n_coefficients": s.n_coefficients,
            "stride": s.stride,
            **({"fit_size": self.fit_size} if self.fit_size is not None else {}),
            "gradient_scales": list(s.gradient_scales),
            "gradient_unit": s.gradient_unit,
            **self._range_attrs(),
            "resolution": self.resolution,
            "fit_method": self.fit_method,
            **({"fit_seed": self.seed} if self.seed is not None else {}),
            **({"fit_sample": self.sample} if self.sample is not None else {}),
            **{f"weight_{k}": float(v) for k, v in self.weights.items()},
            **{f"scale_{k}": float(v) for k, v in self.scales.items()},
            **{f"chose_{k}": v for k, v in self.choices.items()},
            # the fitted pure-texture features, row after row (n_textures rows): with the
            # parameters above they are the model (exact floats: from_attrs rebuilds it), and a
            # resumed write checks them
            "endmembers": np.asarray(self.endmembers, dtype=float).ravel().tolist(),
            "metric": self.metric,
            **self._metric_attrs(),
        }

    def _metric_attrs(self) -> dict[str, Any]:
        """The unmixing vectors ``E M`` of a within-texture metric, row after row."""
        if self.unmixing_vectors is None:
            return {}
        return {"unmixing_vectors": np.asarray(self.unmixing_vectors, float).ravel().tolist()}

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any], *, source: Any = None) -> TextureModel:
        """The model recorded in the attrs of a result (:meth:`attrs`).

        Parameters
        ----------
        attrs : mapping
            The attrs of labels or abundances made by :func:`segment` or the ``xfskde
            segment`` command, as a Zarr store, an OME-Zarr image, a GeoTIFF's metadata (values
            as text) or netCDF (lists as arrays) give them back.
        source : optional
            Where the attrs were read, named in the errors.

        Returns
        -------
        TextureModel
            The model that made the result: its labels of the same image are the result's.

        Raises
        ------
        ParameterError
            If the attrs record no fitted model (no ``endmembers``) or a damaged one.
        """
        values = {str(k): _decoded(v) for k, v in attrs.items()}
        missing = [k for k in _MODEL_KEYS if k not in values]
        what = "the attrs" if source is None else str(source)
        if missing:
            raise ParameterError(
                f"{what} records no fitted texture model (no {', '.join(map(repr, missing))} "
                "attrs): give a result of xfskde.segment or of `xfskde segment`"
            )
        try:
            n = int(values["n_textures"])
            endmembers = np.asarray(values["endmembers"], dtype=np.float64).reshape(n, -1)
            spec = FeatureSpec(
                features=tuple(str(values["features"]).split(",")),
                window=str(values["window"]),
                size=float(values["size"]),
                color_bins=int(values["color_bins"]),
                angle_bins=int(values["angle_bins"]),
                n_coefficients=int(values["n_coefficients"]),
                stride=int(values["stride"]),
                gradient_scales=tuple(np.atleast_1d(np.asarray(values["gradient_scales"], float))),
                bank_bins=int(values.get("bank_bins", FeatureSpec.bank_bins)),
                bank_ranges=_pairs(values.get("bank_ranges")),
                color_ranges=_pairs(values.get("color_ranges")),
                gradient_unit=float(values.get("gradient_unit", 1.0)),  # 1 before 2026-11-29
            )
            groups = _group_slices(spec, _channels(spec, endmembers.shape[1]))
            model = cls(
                spec=spec,
                scales={g: float(values[f"scale_{g}"]) for g in groups},
                endmembers=endmembers,
                fit_method=str(values["fit_method"]),
                weights={g: float(values[f"weight_{g}"]) for g in groups},
                resolution=int(values.get("resolution", 1)),
                choices={k[6:]: v for k, v in values.items() if k.startswith("chose_")},
                value_range=_pair(values.get("value_range")),
                channel_levels=_pairs(values.get("channel_levels")),
                pixel_size=_pair(values.get("fit_pixel_size_um")),
                seed=_integer(values.get("fit_seed")),
                sample=_integer(values.get("fit_sample")),
                unmixing_vectors=_vectors(values, endmembers.shape),
                fit_size=float(values["fit_size"]) if "fit_size" in values else None,
                channels=_integer(values.get("fit_channels")),
                channel_names=_names(values.get("fit_channel_names")),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ParameterError(f"{what} records a damaged texture model: {error}") from None
        recorded = values.get("lbp_scales")
        if "lbp" in spec.features and recorded is not None:
            recorded = [float(v) for v in np.atleast_1d(np.asarray(recorded, float))]
            if recorded != _lbp_settings():
                raise ParameterError(
                    f"{what} records local binary patterns of (P, R) pairs and smoothing "
                    f"{recorded}, this xfskde computes {_lbp_settings()}: its features would be "
                    "others; fit the model again with this version"
                )
        return model

    def _range_attrs(self) -> dict[str, Any]:
        """The ranges measured at fit time: the image's values and pixel size, the colour
        channels' (unless [0, 1]) and the filter bank's, with its bins and filters."""
        s, out = self.spec, {}
        if self.pixel_size is not None:
            out["fit_pixel_size_um"] = [float(v) for v in self.pixel_size]
        if self.channels is not None:
            out["fit_channels"] = int(self.channels)
        if self.channel_names is not None:  # JSON text: attrs hold no lists of strings
            out["fit_channel_names"] = json.dumps(list(self.channel_names))
        if self.value_range is not None:
            out["value_range"] = [float(v) for v in self.value_range]
        if self.channel_levels is not None:
            out["channel_levels"] = [float(v) for pair in self.channel_levels for v in pair]
        if s.color_ranges is not None:
            out["color_ranges"] = [float(v) for pair in s.color_ranges for v in pair]
        if "lbp" in s.features:  # what the group's codes were: (P, R) pairs, the smoothing
            out["lbp_scales"] = _lbp_settings()
        if s.bank_ranges is None:
            return out
        ranges = [float(v) for pair in s.bank_ranges for v in pair]
        return {**out, "bank_bins": s.bank_bins, "bank_filters": ",".join(BANK_FILTERS),
                "bank_ranges": ranges}  # fmt: skip

    @_checks_the_image("segmentation")
    def abundances(
        self,
        image: Any,
        *,
        chunks: int | None = None,
        mask: Any = None,
        nodata: Nodata = "auto",
        match_levels: bool | str = False,
    ) -> Any:
        """Per-pixel abundances of the textures: each texture's share of the pixel's window.

        Parameters
        ----------
        image : numpy.ndarray, dask.array.Array, xarray.DataArray or PIL picture
            As in :func:`segment`, of the channels of the image the model was fitted on.
        chunks : int, optional
            As in :func:`segment`.
        mask : "auto", path, array or DataArray, optional
            As in :func:`segment`.
        nodata : "auto", number or None, optional
            As in :func:`segment`.
        match_levels : bool or "channels", optional
            As in :meth:`predict`.

        Returns
        -------
        numpy.ndarray, dask.array.Array or xarray.DataArray of float32, shape (y, x, n_textures)
            Following the input kind: in [0, 1], summing to 1 over the textures; NaN outside
            ``mask`` and at missing pixels (as in :func:`segment`). Texture i (from 0) has
            label i + 1.
        """
        return _apply(image, self, "abundances", chunks, mask, nodata, match_levels)

    @_checks_the_image("segmentation")
    def predict(
        self,
        image: Any,
        *,
        chunks: int | None = None,
        mask: Any = None,
        nodata: Nodata = "auto",
        match_levels: bool | str = False,
    ) -> Any:
        """Labels 1 .. n_textures (arg-max abundance), :data:`BACKGROUND` (0) outside ``mask``
        and at missing pixels (as in :func:`segment`), following the input kind.

        Parameters
        ----------
        image : numpy.ndarray, dask.array.Array, xarray.DataArray or PIL picture
            As in :func:`segment`, of the channels of the image the model was fitted on.
        chunks : int, optional
            As in :func:`segment`.
        mask : "auto", path, array or DataArray, optional
            As in :func:`segment`.
        nodata : "auto", number or None, optional
            As in :func:`segment`.
        match_levels : bool or "channels", optional
            Map the image's levels onto the model's first (below); default False.

        Returns
        -------
        numpy.ndarray, dask.array.Array or xarray.DataArray of uint8, shape (y, x)
            As :func:`segment` returns its labels.

        Notes
        -----
        With ``match_levels=True`` the image's values are first mapped linearly so that its
        black and white levels (0.1th and 99.9th percentiles of all channels on 16 random
        tiles, or on the image cut into tiles where 16 would cover it) are those the model was
        fitted on (:attr:`value_range`; the image's are
        recorded as the result's ``matched_levels`` attr): for images of another exposure,
        stain intensity or bit depth. ``match_levels="channels"`` maps each channel's own
        levels onto those of the same channel of the model's image
        (:attr:`channel_levels`): for fluorescence, whose channels each have their own
        exposure (one channel twice as bright: the labels of a section agree with those of
        its original at Rand 0.999 matched channel by channel, 0.899 matched together, 0.958
        not matched). Not for images that lack the darkest or brightest texture, whose levels
        are not those of the same textures (measured in the segmentation docs).
        """
        return _apply(image, self, "labels", chunks, mask, nodata, match_levels)


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
    value: float = np.nan,
) -> np.ndarray:
    """The block with a full halo on every side: beyond the true image edges, missing pixels
    (``value``: NaN for pixel values, 0 for the projection planes of the first of two passes).

    The engine gives a block its neighbours' pixels only where it has neighbours; beyond the
    image edge there is nothing, and the features treat it as missing (NaN): the window is
    truncated to the image and renormalised (:mod:`.features`). Mirroring the image instead
    would turn oriented textures at the edge into their mirror images (a 45° texture mixed with
    a 135° one) and label them as another texture.
    """
    pads = (*_pads(block.shape, halo, src_origin, rows, cols), (0, 0))
    if not any(p for pair in pads for p in pair):
        return block
    return np.pad(block, pads, mode="constant", constant_values=value)


def _pads(
    shape: tuple[int, ...],
    halo: int,
    src_origin: tuple[int, int],
    rows: tuple[int, int],
    cols: tuple[int, int],
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (before, after) rows and columns :func:`_padded` adds to a block of ``shape``."""
    top = halo - (rows[0] - src_origin[0])
    left = halo - (cols[0] - src_origin[1])
    bottom = halo - (src_origin[0] + shape[0] - rows[1])
    right = halo - (src_origin[1] + shape[1] - cols[1])
    return (top, bottom), (left, right)


def _inside(
    shape: tuple[int, ...],
    halo: int,
    src_origin: tuple[int, int],
    rows: tuple[int, int],
    cols: tuple[int, int],
) -> np.ndarray:
    """The pixels present in :func:`_padded` of a block of ``shape`` whose every pixel is:
    all but the padding beyond the image's edges."""
    (top, bottom), (left, right) = _pads(shape, halo, src_origin, rows, cols)
    present = np.zeros((shape[0] + top + bottom, shape[1] + left + right), bool)
    present[top : top + shape[0], left : left + shape[1]] = True
    return present


def halo_of(spec: FeatureSpec) -> int:
    """Pixels a block needs around its own: the features' depth, and on a stride grid the
    reach of the samples just beyond the block that its pixels are interpolated from."""
    return feature_depth(spec) + (spec.stride if spec.stride > 1 else 0)


def _axis_samples(a: int, b: int, n_pixels: int, stride: int) -> tuple[np.ndarray, ...]:
    """The grid samples that pixels ``a .. b-1`` of an axis of ``n_pixels`` are interpolated
    from: their global indices, and per pixel the positions (in that list) of the samples
    before and after it and the weight of the one after (0 at stride 1: the pixel's own).
    Pixels before the first sample or after the last take that sample (no extrapolation). A
    pixel on a sample has that sample as both: the list reaches no further than the pixels
    need (a block's halo holds the windows of these samples, not of one beyond them)."""
    n = sample_count(n_pixels, stride)
    t = np.clip((np.arange(a, b) - sample_offset(stride)) / stride, 0, n - 1)
    before = np.floor(t).astype(np.int64)
    after = np.where(t > before, np.minimum(before + 1, n - 1), before)
    first = int(before.min())
    samples = np.arange(first, int(after.max()) + 1)
    return samples, before - first, after - first, (t - before).astype(np.float32)


def _tables(model: TextureModel, channels: int) -> dict[str, np.ndarray]:
    """Group name -> (D_group, m) rows of the endmembers (of the unmixing vectors, in a
    within-texture metric), the group's scale folded in: what each group's votes are projected
    on (:func:`.features.pixel_projections`)."""
    V = model.endmembers if model.unmixing_vectors is None else model.unmixing_vectors
    E = np.asarray(V, dtype=np.float64)
    return {
        name: (E[:, columns] * model.scales[name]).T
        for name, columns in _group_slices(model.spec, channels).items()
    }


class _Projected(NamedTuple):
    """A block's projections before the window (:func:`_project_block`)."""

    u: np.ndarray  # (h, w, m): every group's votes but the patterns' where ``voting`` is given
    valid: np.ndarray  # (h, w) bool: the pixels present
    patterns: np.ndarray | None = None  # (h, w, m): the local binary patterns' votes apart
    voting: np.ndarray | None = None  # (h, w) bool: the pixels that vote in the patterns


def _project_block(
    block: np.ndarray,
    model: TextureModel,
    reach: int,
    valid: np.ndarray | None = None,
    origin: tuple[int, int] = (0, 0),
) -> _Projected:
    """The first step of a prediction: a padded block → the (h, w, m) float32 projections of
    its votes on the m endmembers (:func:`.features.pixel_projections`, before the window) and
    the (h, w) pixels present, for its pixels but the ``reach`` (:func:`.features.vote_reach`:
    the filter bank's and the gradients' stencils, the local binary patterns' circles) on
    every side; where the model has the local binary patterns, their projections apart and
    the pixels that vote in them (:func:`.features.voting_pixels`): windowed apart in every
    block, even where every pixel present votes in them, so that the sum of the windows is
    the same whatever the block. A block with
    ``reach`` pixels of halo gives those of its own pixels (the first of two passes); one with
    the whole halo, those of its pixels and of the window's halo (one pass). ``valid``: the
    pixels present, where the caller knows them (:func:`present_pixels` of the block
    without). ``origin``: the image position of the block's pixel (0, 0)
    (:func:`.features.block_votes`)."""
    valid = present_pixels(block) if valid is None else valid
    spec, tables = model.spec, _tables(model, block.shape[-1])
    voting = voting_pixels(valid, spec)
    inner = (slice(reach, block.shape[0] - reach), slice(reach, block.shape[1] - reach))
    if "lbp" not in spec.features:  # every pixel present votes in every group
        u = pixel_projections(block, spec, tables, valid, voting=None, origin=origin)
        return _Projected(np.ascontiguousarray(u[inner]), valid[inner])
    u, patterns = pixel_projections(block, spec, tables, valid, apart=True, voting=voting,
                                    origin=origin)  # fmt: skip
    voting = valid if voting is None else voting
    return _Projected(np.ascontiguousarray(u[inner]), valid[inner],
                      np.ascontiguousarray(patterns[inner]), voting[inner])  # fmt: skip


def _unmix_block(
    projected: _Projected,
    model: TextureModel,
    what: str,
    origin: tuple[int, int],
    shape: tuple[int, int],
    image_shape: tuple[int, int],
) -> np.ndarray:
    """The second step: :func:`_project_block`'s projections and pixels present of a block and
    its halo (:func:`_window_halo`; none beyond the image) → abundances or labels of its
    ``shape`` pixels at global ``origin``.

    1. The projections through the window at the stride grid's samples around the block
       (:func:`.features.windowed_projections`: m windowed planes, whatever the number of
       features; the feature stack is never built; the local binary patterns' apart where
       they are, renormalised to the pixels that vote in them).
    2. The exact fully-constrained abundances at those samples
       (:func:`.unmixing.abundances_from_projections`).
    3. Bilinear interpolation of the abundances to every pixel (at stride 1 each pixel's own),
       then the arg-max. The grid is the image's, so the result does not depend on the
       chunking. Labels are 1 .. m.
    4. Pixels not present (missing, or outside a foreground mask: :func:`_apply`) are
       :data:`BACKGROUND` (label) or NaN (abundances).
    """
    spec, halo = model.spec, _window_halo(model.spec)
    E = np.asarray(model.endmembers, dtype=np.float64)
    s, o = spec.stride, sample_offset(spec.stride)
    ys, y0, y1, fy = _axis_samples(origin[0], origin[0] + shape[0], image_shape[0], s)
    xs, x0, x1, fx = _axis_samples(origin[1], origin[1] + shape[1], image_shape[1], s)
    rows = ys * s + o - (origin[0] - halo)  # the samples' centres in the padded block
    cols = xs * s + o - (origin[1] - halo)
    corner = (origin[0] - halo, origin[1] - halo)  # the image position of the block's (0, 0)
    valid = projected.valid
    b = windowed_projections(projected.u, valid, spec, rows, cols, corner)
    if projected.patterns is not None:
        b += windowed_projections(projected.patterns, projected.voting, spec, rows, cols, corner)
    gram = unmixing_gram(E, model.unmixing_vectors)
    a = abundances_from_projections(b.reshape(-1, E.shape[0]).astype(np.float64), gram)
    a = a.reshape(len(ys), len(xs), -1)
    out = interpolate(a, (y0, y1, fy), (x0, x1, fx), labels=what == "labels")
    missing = ~valid[halo : halo + shape[0], halo : halo + shape[1]]
    if missing.any():
        out[missing] = BACKGROUND if what == "labels" else np.nan
    return out


def _window_halo(spec: FeatureSpec) -> int:
    """The second pass's halo: :func:`halo_of` less the votes' reach (the first pass's)."""
    return halo_of(spec) - vote_reach(spec.features, spec.gradient_scales)


def _two_passes(chunks: tuple[tuple[int, ...], ...], reach: int, outer: int) -> bool:
    """Whether a prediction runs in two passes (:func:`_project_block`, then
    :func:`_unmix_block` on the projections with their own halo) rather than in one task per
    block: when a typical block with the whole halo holds :data:`TWO_PASS_AREA` times the
    pixels of the block with the votes' reach only, so that the filter bank's transforms and the
    votes save more than the second pass costs (the projections' halo, m + 1 float32 planes
    held for the neighbours)."""
    side = [max(c) for c in chunks]
    whole = (side[0] + 2 * (reach + outer)) * (side[1] + 2 * (reach + outer))
    short = (side[0] + 2 * reach) * (side[1] + 2 * reach)
    return whole >= TWO_PASS_AREA * short


def _sample_block(
    block: np.ndarray,
    spec: FeatureSpec,
    halo: int,
    n: int,
    seed: int,
    origin: tuple[int, int],
    image_shape: tuple[int, int],
    mask: np.ndarray | None = None,
    shift: int = 0,
    valid: np.ndarray | None = None,
    beside: bool = False,
):
    """Exact features at ``n`` points of a grid over the interior of a fully haloed block whose
    first interior pixel is the image's ``origin``.

    The grid's spacing is chosen so that it holds at least ``n`` points (every pixel for small
    blocks); ``n`` of them are drawn, among those on the foreground ``mask`` when one is given,
    whose outside is missing pixels: it votes nothing, and each window is renormalised to the
    foreground it covers.
    Only the grid's samples are windowed (:func:`.features.grid_features`), so a coarse grid
    costs a fraction of the block. With ``shift`` d > 0 (the block's halo then holds d more
    pixels) each point's features are followed by how much each group's features change across
    it, two columns per group of ``spec.features``: ‖F(p + d' e_y) - F(p - d' e_y)‖² and
    ‖F(p + d' e_x) - F(p - d' e_x)‖² over the group's features (the fit weighs and sums them
    into how steady the point is, :func:`_change`), read off
    the same grid: its step is d' / k for the smallest k that gives at least n / 5 points,
    d' = k ⌊d / k⌋ ≤ d, and the grid reaches k steps beyond the interior on every side, so
    that one windowed grid holds every point and its four neighbours (one vertical pass over
    about n / 5 + 2k rows' worth of points, where five separate grids took three times as
    many). ``valid``: the block's pixels present, where the caller knows them
    (:func:`present_pixels` without). ``beside``: the work shared with a second thread
    (:func:`.features.grid_features`: the fit's only block).
    """
    height, width = block.shape[0] - 2 * halo, block.shape[1] - 2 * halo
    corner = (origin[0] - halo, origin[1] - halo)  # the image position of the block's (0, 0)
    valid = present_pixels(block) if valid is None else valid
    if mask is not None:  # what lies outside the foreground is no texture: missing pixels
        rows_px = (corner[0], corner[0] + block.shape[0])
        valid &= mask_over(mask, image_shape, rows_px, (corner[1], corner[1] + block.shape[1]))
    k, step = _grid_step(height, width, n, shift)
    rows = np.arange(step // 2, height, step)
    cols = np.arange(step // 2, width, step)
    reach = np.arange(-k, k + 1) * step  # the grid, k steps further on every side
    grid_rows = np.concatenate([rows[0] + reach[:k], rows, rows[-1] + reach[k + 1 :]])
    grid_cols = np.concatenate([cols[0] + reach[:k], cols, cols[-1] + reach[k + 1 :]])
    groups = grid_features(block, spec, grid_rows + halo, grid_cols + halo, corner, valid=valid,
                           beside=beside)  # fmt: skip
    F = np.concatenate([groups[name] for name in spec.features], axis=-1)
    ny, nx = len(rows), len(cols)
    X = F[k : k + ny, k : k + nx]
    if shift:
        # squared differences per feature, summed per group along y and along x
        dy = (F[2 * k :, k : k + nx] - F[:ny, k : k + nx]) ** 2
        dx = (F[k : k + ny, 2 * k :] - F[k : k + ny, :nx]) ** 2
        changes = [
            part
            for columns in _group_slices(spec, block.shape[-1]).values()
            for part in (dy[..., columns].sum(axis=-1), dx[..., columns].sum(axis=-1))
        ]
        X = np.concatenate([X, np.stack(changes, axis=-1)], axis=-1)
    present = valid[rows + halo][:, cols + halo]
    if not present.all():  # no texture at a missing pixel, nor outside the foreground
        X = np.where(present[..., None], X, np.nan)
    X = X.reshape(-1, X.shape[-1])
    X = X[np.isfinite(X).all(axis=1)]
    if X.shape[0] > n:
        X = X[np.random.default_rng(seed).choice(X.shape[0], n, replace=False)]
    return X


def _grid_step(height: int, width: int, n: int, shift: int = 0) -> tuple[int, int]:
    """The sample grid of :func:`_sample_block` over a block's ``height`` × ``width``
    interior: how many steps k it reaches beyond the interior, and its step in pixels."""
    if shift:  # at least n / 5 points, spaced by d / k
        spacing = np.sqrt(height * width / max(n // 5, 1))
        # at most d steps of one pixel: the grid then reaches d pixels beyond the interior, all
        # inside the halo (a block of fewer pixels than n / 5 gave k > d, and the windows read
        # and wrote past the block: a crash, or memory corrupted, on images under ~64²)
        k = min(int(shift), max(1, math.ceil(int(shift) / spacing)))
        return k, max(1, int(shift) // k)
    return 0, max(1, int(np.sqrt(height * width / max(n, 1))))  # at least n points


def _fit_tile(
    rows: tuple[int, int],
    cols: tuple[int, int],
    seed: int,
    side: int | None = None,
    centre: tuple[int, int] | None = None,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """A random ``side``² part (by default :data:`FIT_TILE`²) of the block of pixel ranges
    ``rows`` × ``cols``, as half-open pixel ranges of the image: the fit computes the features
    of this part only (a side of the block shorter than the tile's is kept whole). With
    ``centre`` (image pixels), the part about it, within the block, instead of a random one."""
    side = FIT_TILE if side is None else side
    height, width = rows[1] - rows[0], cols[1] - cols[0]
    th, tw = min(side, height), min(side, width)
    if centre is None:
        rng = np.random.default_rng([seed, 2])
        top, left = int(rng.integers(0, height - th + 1)), int(rng.integers(0, width - tw + 1))
    else:
        top = int(np.clip(centre[0] - int(rows[0]) - th // 2, 0, height - th))
        left = int(np.clip(centre[1] - int(cols[0]) - tw // 2, 0, width - tw))
    top, left = int(rows[0]) + top, int(cols[0]) + left
    return (top, top + th), (left, left + tw)


def _placed_tiles(
    present: np.ndarray,
    shape: tuple[int, int],
    cells: tuple[tuple[int, ...], tuple[int, ...]],
    read: int,
) -> dict[tuple[int, int], tuple[int, int]]:
    """Where in each cell of the grid ``cells`` (row and column sizes) of an image of
    ``shape`` a tile of :func:`_fit_prepared`'s ``read`` holds the most of ``present`` (a
    boolean map covering the image's extent: a mask's foreground, or the pixels present), as
    the tile's centre in image pixels (:func:`_crop_centre`); cells that hold none are left
    out, and the tiles of the others share the ``read`` pixels."""
    footprint = MaskFootprint(present, shape)  # the cells it touches, as the fit's grid
    (my, mx), (height, width) = footprint.mask.shape, shape
    starts = [np.cumsum([0, *c]).tolist() for c in cells]
    spans = {}
    for i, j in np.ndindex(len(cells[0]), len(cells[1])):
        rows, cols = tuple(starts[0][i : i + 2]), tuple(starts[1][j : j + 2])
        if footprint.touches(rows, cols):
            spans[(i, j)] = (rows, cols, *footprint.covering(rows, cols))
    side = max(1, math.isqrt(int(read) // max(1, len(spans))))
    centres = {}
    for cell, ((r0, r1), (c0, c1), (a0, a1), (b0, b1)) in spans.items():
        part = footprint.mask[a0:a1, b0:b1]
        extent = (round((a1 - a0) * height / my), round((b1 - b0) * width / mx))
        cy, cx = _crop_centre(part, extent, (min(side, r1 - r0), min(side, c1 - c0)))
        centres[cell] = (round(a0 * height / my) + cy, round(b0 * width / mx) + cx)
    return centres


def _group_slices(spec: FeatureSpec, channels: int) -> dict[str, slice]:
    """Each group's columns in the stacked features of an image of ``channels`` channels, in
    the order of ``spec.features`` (the last group's stop is the number of features)."""
    ell, n_scales = spec.n_coefficients, len(spec.gradient_scales)
    sizes = {
        "color": spec.color_bins * channels,
        "bank": spec.bank_bins * len(BANK_FILTERS),
        "lbp": LBP_BINS,
        "hist": spec.angle_bins * n_scales,
        "fskde": (2 * ell - 1) * n_scales,
    }
    slices, start = {}, 0
    for name in spec.features:
        slices[name] = slice(start, start + sizes[name])
        start += sizes[name]
    return slices


def _channels(spec: FeatureSpec, n_features: int) -> int:
    """The channels of the images a model of ``spec`` with ``n_features`` features reads."""
    if "color" not in spec.features:
        return 1
    others = _group_slices(spec, 0)
    rest = n_features - sum(sl.stop - sl.start for sl in others.values())
    if rest <= 0 or rest % spec.color_bins:
        raise ValueError(
            f"{n_features} features are not {spec.color_bins} colour bins per channel and the "
            "other groups' features"
        )
    return rest // spec.color_bins


#: The attrs without which a result records no model (:meth:`TextureModel.from_attrs`).
_MODEL_KEYS = ("endmembers", "n_textures", "features", "window", "size", "stride", "fit_method")


def _decoded(value: Any) -> Any:
    """An attr as written: numbers and lists from a GeoTIFF's text metadata, lists from arrays."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _vectors(values: Mapping[str, Any], shape: tuple[int, int]) -> np.ndarray | None:
    """The unmixing vectors of a within-texture metric from the attrs (None: the Euclidean
    metric, as in results that predate the attr), checked against their ``metric``."""
    metric, vectors = str(values.get("metric", "euclidean")), values.get("unmixing_vectors")
    if metric == "euclidean" and vectors is None:
        return None
    if metric != "within" or vectors is None:
        given = "without" if vectors is None else "with"
        raise ValueError(f"metric {metric!r} {given} unmixing_vectors")
    return np.asarray(vectors, dtype=np.float64).reshape(shape)


def _integer(value: Any) -> int | None:
    """An optional integer attr (a GeoTIFF's metadata gives it as text)."""
    return None if value is None else int(value)


def _pair(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    low, high = (float(v) for v in np.asarray(value, dtype=float).ravel())
    return low, high


def _pairs(value: Any) -> tuple[tuple[float, float], ...] | None:
    if value is None:
        return None
    return tuple((float(a), float(b)) for a, b in np.asarray(value, dtype=float).reshape(-1, 2))


def _names(value: Any) -> tuple[str, ...] | None:
    """Channel names recorded as JSON text (or a list, as netCDF may give them back)."""
    if value is None:
        return None
    names = _decoded(value)
    return tuple(str(n) for n in (names if isinstance(names, list) else [names]))


def _in_model_order(prepared: _Prepared, model: TextureModel) -> tuple[_Prepared, dict]:
    """``prepared`` with the model's named channels, in the model's order, and what the result
    records of it. A cohort's multiplexed panels are not always acquired in one order, and a
    model applied to channels in another order reads one marker's signal as another's; an
    image of more channels than the model's (a 12-marker panel, a model of DAPI and CD3; a
    scene of 13 bands) gives the model's by their names. One lacking any of them is refused
    in one line."""
    names, fitted = channel_names(prepared.source), model.channel_names
    if names is None and fitted is not None and prepared.raw.shape[2] > 1:
        # bands written without their descriptions, an array of them: in another order
        # they were taken silently (a scene's reversed bands: 75 % of the labels the same)
        warnings.warn(
            f"the model was fitted on channels named {', '.join(fitted)}; this image's "
            "channels have no names, so they are taken in that order unchecked: name them (a "
            "DataArray's channel coordinate, a GeoTIFF's band descriptions) to have them "
            "checked and put in the model's order",
            UserWarning,
            stacklevel=4,
        )
    if names is None or fitted is None or names == fitted:
        return prepared, {}
    dim = image_dims(prepared.source)[2]  # named channels: a colour dim with a coordinate
    missing = [name for name in fitted if name not in names]
    if missing:
        raise ParameterError(
            f"the image's channels are {', '.join(names)}; the model was fitted on "
            f"{', '.join(fitted)}, and {', '.join(missing)} is not among them: segment images "
            "of the model's channels (or fit a model on these)"
        )
    repeated = sorted({name for name in fitted if names.count(name) > 1})
    if repeated:  # which of the channels of that name is the model's is not known
        raise ParameterError(
            f"the image's channels are {', '.join(names)}: {', '.join(repeated)} names more "
            f"than one, so the model's channels ({', '.join(fitted)}) are not taken by name; "
            "pick them by index (channels= of open_image, --channels 0,1)"
        )
    order = [names.index(name) for name in fitted]
    raw = prepared.raw[..., order]
    source = prepared.source.isel({dim: order})
    how = "channels_reordered" if len(names) == len(fitted) else "channels_selected"
    return prepared._replace(raw=raw, source=source), {how: json.dumps(names)}


def _pixel_size_um(source: Any) -> tuple[float, float] | None:
    """The pixel size (y, x) in µm of a DataArray: from coords that are lengths (a slide), else
    on the ground from its CRS (a scene: :func:`xfskde._labels.ground_pixel_size`, m × 10⁶);
    None for other inputs and for images that record neither."""
    if not isinstance(source, xr.DataArray):
        return None
    sizes = length_pixel_size_um(source)
    if sizes is not None:
        return sizes
    ground = ground_pixel_size(source)
    return None if ground is None else (ground[0] * 1e6, ground[1] * 1e6)


def _length(um: float) -> str:
    """A length given in µm, in the unit a reader expects: µm, mm or m."""
    if um >= 1e5:  # a scene's pixels: their ground size is known to a few parts in 10⁴
        return f"{um / 1e6:.3g} m"
    return f"{um / 1e3:.4g} mm" if um >= 1e3 else f"{um:.4g} µm"


def _check_pixel_size(model: TextureModel, source: Any) -> None:
    """Refuse an image whose pixels are :data:`PIXEL_RATIO` times larger or smaller than those
    of the image the model was fitted on (:attr:`TextureModel.pixel_size`); warn
    (:class:`~xfskde.exceptions.PixelSizeWarning`) where only one of the two records its
    pixel size, so that the two cannot be compared."""
    ratio = model.pixel_ratio(source)
    if ratio is None:
        seen = _pixel_size_um(source)
        if (model.pixel_size is None) != (seen is None):
            known = model.pixel_size or seen
            size = _length(math.sqrt(known[0] * known[1]))
            what = (
                f"the model was fitted on pixels of {size}, and this image records no pixel size"
                if seen is None
                else f"this image's pixels are {size}, and the model's image recorded none"
            )
            warnings.warn(
                f"{what}: the labels hold only if both images' pixels are the same size (the "
                "features are measured in pixels); open the image from a file that records "
                "its pixel size, or fit a model on this image",
                PixelSizeWarning,
                stacklevel=find_stack_level(),
            )
        return
    if 1 / PIXEL_RATIO <= ratio <= PIXEL_RATIO:
        return
    fitted = math.sqrt(model.pixel_size[0] * model.pixel_size[1])
    seen, modelled = _length(fitted * ratio), _length(fitted)
    if crs_wkt(source) is not None:  # a scene
        metres = f"{fitted / 1e6:.3g}"
        raise ParameterError(
            f"the image's pixels are {seen} on the ground, those the model was fitted on "
            f"{modelled} (another resolution): resample the image to the model's (rioxarray: "
            f"image.rio.reproject(image.rio.crs, resolution={metres}) in a metre CRS; GDAL: "
            f"gdalwarp -tr {metres} {metres}), or fit a model on it"
        )
    raise ParameterError(
        f"the image's pixels are {seen}, those the model was fitted on {modelled} (another "
        f"magnification): open the image at the model's pixel size (open_image(..., "
        f"mpp={fitted:.4g}), `xfskde segment --mpp {fitted:.4g}`), or fit a model on this image"
    )


class _Prepared(NamedTuple):
    """An input made ready for the engine (:func:`_prepare`)."""

    raw: da.Array  # (y, x, c) in the input's dtype, chunked by the one planner
    kind: str  # "numpy", "dask" or "dataarray"
    source: Any  # the DataArray, or None
    attrs: dict[str, Any]  # the nodata attrs
    nodata: float | int | None  # the value of missing pixels, for :func:`_unit_float`

    @property
    def unit(self) -> da.Array:
        """The image as float32 values in [0, 1] with NaN at missing pixels, block by block.

        The engine's consumers take :attr:`raw` and convert each haloed block themselves: the
        halos Dask copies and the chunks it holds for the next row of blocks then stay in the
        input's dtype (a byte per channel for 8-bit images, not four)."""
        token = tokenize(self.raw.name, self.nodata)
        return self.raw.map_blocks(_unit_float, self.nodata, dtype=np.float32,
                                   name=f"xfskde-unit-float-{token}")  # fmt: skip


def feature_chunk(shape: tuple[int, ...]) -> int:
    """The target block side of segmentation for an image of ``shape`` (rows, columns, ...)
    when none is given: :data:`LARGE_FEATURE_CHUNK` for images of at least
    :data:`LARGE_IMAGE_BLOCKS` blocks of it (8192² and larger), else :data:`FEATURE_CHUNK`.

    A block is computed with its halo (the filter bank's 34 px and the window's radius: a 512²
    block reads 628² pixels at σ = 6, 1.5 times its own; a 1024² block 1.24 times), so larger
    blocks waste less; smaller ones keep every core of a machine busy on smaller images. An
    8192² RGB slide (σ 6, stride 2, 2 cores): 29.8 / 28.7 s in blocks of 512², 23.3 / 21.5 s
    in blocks of 1024², peak RSS 0.79 → 1.10 GiB (labels agreed to Rand 0.9993: the fit then
    drew its sample from the blocks; it draws it from this plan's cells now, whatever the
    chunks: :func:`_fit_prepared`).

    Parameters
    ----------
    shape : tuple of int
        The image's shape; its first two entries are its rows and columns.

    Returns
    -------
    int
        The block side in pixels: 1024 or 512.
    """
    h, w = shape[0], shape[1]
    large = h * w >= LARGE_IMAGE_BLOCKS * LARGE_FEATURE_CHUNK**2
    return LARGE_FEATURE_CHUNK if large else FEATURE_CHUNK


def _prepare(image: Any, chunks: int | None, halo: int, nodata: Nodata = "auto") -> _Prepared:
    """The input as a Dask (y, x, c) array chunked by the one planner, with its kind, source,
    nodata attrs and nodata value (:class:`_Prepared`).

    NumPy data, any input when ``chunks`` is given, and Dask inputs with chunks more than
    :data:`xfskde.lazy.LARGE_CHUNK` times :data:`FEATURE_CHUNK` on a side, are cut by
    :func:`xfskde.lazy.plan_chunks` with a target of ``chunks`` or :func:`feature_chunk`; Dask
    inputs otherwise keep their spatial chunks (the engine merges any smaller than the halo).
    The channels are always one chunk: a pixel is missing when every channel is. The
    conversion runs in the tasks, block by block.
    """
    if chunks is not None and (
        isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral) or chunks < 1
    ):  # 0, -5 and 1.5 ran (-5 made a Dask image one chunk); "abc" failed inside int()
        raise ParameterError(
            f"chunks must be a block's side in pixels, an integer >= 1, or None (the planner's "
            f"choice), got {chunks!r}"
        )
    check_nodata(nodata)
    refuse_dataset(image)
    source = None
    if isinstance(image, xr.DataArray):
        if stack := plane_dims(image):  # one model for every plane: their labels alike
            plane = ", ".join(f"{d}=0" for d in stack)
            raise DimensionError(
                f"the image is a stack (dims {tuple(image.dims)}): segment one plane at a time, "
                f"with one model so that every plane's textures get the same labels — model = "
                f"xfskde.fit_textures(image.isel({plane}), n); model.predict(image.isel(...))"
            )
        source = image
        image, _ = image_layout(image)
        kind = "dataarray"
    elif isinstance(image, da.Array):
        kind = "dask"
    elif is_picture(image):  # as its file opens: RGB, not palette indices; no alpha
        source = open_image(image)  # its transparent pixels NaN, its integer dtype recorded
        image, kind = np.asarray(image_layout(source)[0]), "numpy"  # a GDAL palette: refused
    elif isinstance(image, np.ndarray | list | tuple) or hasattr(image, "__array__"):
        image = np.asarray(image)
        kind = "numpy"
    else:
        raise TypeError(
            "image must be a numpy, dask or xarray array (or a PIL picture), got "
            f"{type(image).__name__}"
        )
    if image.ndim not in (2, 3):
        raise DimensionError(f"image must be (y, x) or (y, x, c), got shape {image.shape}")
    if image.dtype.kind not in "uifb":
        raise TypeError(f"image must hold real numbers, got dtype {image.dtype}")
    if compiled_dtype(image.dtype) != image.dtype:
        # half floats (a network's output), long doubles, big-endian values (FITS): the
        # compiled checks and features take the nearest native type (float16's exactly)
        image = image.astype(compiled_dtype(image.dtype))
    if image.ndim == 3 and source is None and 0 < min(image.shape[:2]) <= image.shape[2]:
        # (3, 512, 512) read as 3 rows of 512 "channels" segments without a complaint
        raise DimensionError(
            f"image of shape {image.shape} would be read as (y, x, c) with {image.shape[2]} "
            f"channels, no fewer than its {min(image.shape[:2])} rows or columns: if its "
            "channels come first (as tifffile reads a multichannel TIFF), pass "
            "np.moveaxis(image, 0, -1); if they are channels, pass an xarray DataArray with dims "
            "('y', 'x', 'c')"
        )
    if isinstance(nodata, str):  # "auto": what the image's metadata say
        value, where = image_nodata(source) if source is not None else (None, "none")
    elif nodata is None:
        value, where = None, "nodata=None"
    else:
        value, where = (
            nodata_value(nodata, image.dtype, "nodata", must_match=True),
            "nodata argument",
        )
    if image.ndim == 2:
        image = image[..., None]
    # Dask chunks much larger than segmentation's are split (a 4096² chunk is one task, one
    # thread, and its feature planes: 9.6 s and +2.1 GiB to predict a 4096² RGB image, against
    # 1.6 s and +0 at 512²)
    large = isinstance(image, da.Array) and oversized(image, FEATURE_CHUNK)
    if not isinstance(image, da.Array) or chunks is not None or large:
        target = chunks or feature_chunk(image.shape)
        rows, cols = plan_chunks(image.shape[:2], target=target, halo=halo)
        if isinstance(image, da.Array):
            image = image.rechunk((rows, cols, -1))
        else:  # in place: neither copied nor hashed (dask_view)
            image = dask_view(image, (rows, cols, -1))
    # a pixel is missing when every channel is (nodata), and its features read every channel:
    # blockwise steps must see them all (a Dask image in one chunk per channel fitted another
    # model: each channel's zeros counted as missing pixels)
    image = image.rechunk({2: -1})
    attrs = {"input_nodata": "none" if value is None else value, "input_nodata_source": where}
    if isinstance(value, tuple):  # each band its own: a pixel with any band missing is missing
        from .._labels import nodata_record, pixel_nodata

        attrs["input_nodata"] = nodata_record(value)
        image, value = pixel_nodata(image, value)
    stored = None if source is None else stored_integer_dtype(source)
    if stored is not None:  # floats that hold stored integers: read as those integers are
        top = np.float32(np.iinfo(stored).max)
        image = image.map_blocks(np.divide, top, dtype=np.result_type(image.dtype, np.float32))
        if value is not None and np.isfinite(value):  # compared with the divided blocks
            value = (np.asarray(value, image.dtype) / top).item()
        attrs["input_integer_dtype"] = stored.name
    return _Prepared(image, kind, source, attrs, value)


def _remainder_merged(image: da.Array, halo: int) -> da.Array:
    """``image`` (the blocks the engine runs on) with a last chunk shorter than ``halo`` along
    y or x (the image's remainder after chunks that are wide enough) merged with the one
    before, as :func:`plan_chunks` plans it. The halo is known only once the window is chosen,
    after the image was chunked (the command line chunks it for the paper's window): the
    engine would merge it with a :class:`~xfskde.exceptions.ChunkSizeWarning` asking for
    chunks the image already has. Chunks narrower than the halo elsewhere are the caller's,
    and still warned of."""
    chunks = (*(_last_merged(c, halo) for c in image.chunks[:2]), *image.chunks[2:])
    return image if chunks == image.chunks else image.rechunk(chunks)


def _last_merged(chunks: tuple[int, ...], halo: int) -> tuple[int, ...]:
    """One axis's ``chunks`` with a last chunk shorter than ``halo``, after chunks that are wide
    enough, merged with the one before (:func:`_remainder_merged`)."""
    if len(chunks) > 1 and chunks[-1] < halo and min(chunks[:-1]) >= halo:
        return (*chunks[:-2], chunks[-2] + chunks[-1])
    return tuple(chunks)


def _foreground(prepared: _Prepared, mask: Any) -> tuple[np.ndarray | None, dict]:
    """The mask a caller gave, resolved against the image (:func:`xfskde.masks.resolve_mask`),
    as a boolean array covering the image's extent (None for no mask), and what the labels
    record of it (:func:`xfskde.masks._mask_attrs`, and the background label). An array is
    seen in its own dtype, with its nodata value: ``mask="auto"`` tells a slide (8-bit RGB)
    from other images by it."""
    resolved = resolve_mask(mask, _mask_view(prepared), margin=MASK_MARGIN)  # no glass ring
    attrs = {**_mask_attrs(resolved, mask), "background_label": BACKGROUND}
    return (None if resolved is None else np.asarray(resolved.values, bool)), attrs


def _mask_view(prepared: _Prepared) -> Any:
    """The image a mask is resolved against: its source, or an array in its own dtype with
    its nodata value."""
    if prepared.source is not None:
        return prepared.source
    value = prepared.nodata
    attrs = {} if value is None else {"nodata": value}
    return xr.DataArray(prepared.raw, dims=("y", "x", "c"), attrs=attrs)


def _made_once(image: Any, mask: Any, chunks: int | None, nodata: Nodata) -> Any:
    """A mask named by a method of :func:`xfskde.masks.tissue_mask` (``"auto"``,
    ``"fluorescence"``, ...) made from the image once, for :func:`segment`'s fit and labels
    both (each made it again: a slide's low level read twice); any other ``mask`` as given."""
    if not (isinstance(mask, str) and mask in MASK_METHODS):
        return mask
    return resolve_mask(mask, _mask_view(_prepare(image, chunks, 0, nodata)), margin=MASK_MARGIN)


def _apply(
    image: Any,
    model: TextureModel,
    output: str,
    chunks: int | None,
    mask: Any = None,
    nodata: Nodata = "auto",
    match_levels: bool | str = False,
    fitted_here: bool = False,
) -> Any:
    """The labels or abundances (``output``) of ``model`` over an image, on the one block
    engine. ``fitted_here``: the model was fitted on this image and mask a moment ago
    (:func:`segment`), whose fit measured the image's levels and checked its values on its
    probe tiles: the image's levels are the model's, and its tiles are not drawn and measured
    again (0.1 s of a 2048² image's 2.5)."""
    per_channel = _matching(match_levels)
    halo = halo_of(model.spec)
    is_dask = isinstance(getattr(image, "data", image), da.Array)
    prepared = _prepare(image, chunks, halo, nodata)
    prepared, reordered = _in_model_order(prepared, model)
    channels = prepared.raw.shape[2]
    stop = list(_group_slices(model.spec, channels).values())[-1].stop
    if model.channels not in (None, channels) or stop != model.endmembers.shape[1]:
        fitted = "those" if model.channels is None else f"the {model.channels}"
        raise ParameterError(
            f"the image has {channels} channel(s), not {fitted} of the image the model was "
            "fitted on: fit a model on an image of the same channels"
        )
    kind, source = prepared.kind, prepared.source
    full, f = prepared.unit, model.resolution
    foreground, mask_attrs = _foreground(prepared, mask)
    _check_pixel_size(model, source)
    # values far beyond the levels the model was fitted on are refused (.defaults.data_bounds):
    # each block's, in the pass that finds its pixels present (or over its raw pixels, where
    # they are averaged over cells), and the probe tiles'
    checked = _levels_checked(prepared.raw.dtype)
    probing = {"check": prepared.raw.dtype.kind == "f", "nodata": prepared.nodata}
    if per_channel:
        measured = _image_levels(full, foreground, per_channel=True, **probing)
        gain, offset = _channel_map(model, measured)
    else:
        wanted = (model.value_range or match_levels) and not fitted_here
        measured = _image_levels(full, foreground, **probing) if wanted else None
        gain, offset = _level_map(model, measured) if match_levels else (1.0, 0.0)
    if not match_levels:
        _check_range(model, measured)
    bounds = data_bounds(model.value_range) if checked else (-math.inf, math.inf)
    arr, value = prepared.raw, prepared.nodata
    if f > 1:  # the features of coarse textures, on the image averaged over f × f cells
        # (the cells hold the foreground's pixels only: a cell without any is missing)
        cells = _cell_blocks(prepared.raw, f, chunks)
        if checked:  # each pixel, before the cells' means dilute it
            cells = _check_blocks(cells, prepared.nodata, bounds, model.value_range, foreground,
                                  gain, offset)  # fmt: skip
        arr, value = cell_means(cells, f, prepared.nodata, foreground), None
    # the votes' projections need only the votes' reach around a pixel, the window its own
    # radius: where the window's halo is wide, two passes run the filter bank's transforms on
    # blocks with the short halo (:func:`_two_passes`); else one task does both
    reach = vote_reach(model.spec.features, model.spec.gradient_scales)
    outer = _window_halo(model.spec)
    merged = _remainder_merged(arr, halo)
    two = _two_passes(merged.chunks[:2], reach, outer)
    # the image's remainder merged as each pass's halo needs it: by the whole halo, chunks of
    # 64 px left a 5-px remainder to the engine, which merged it with a warning asking for
    # chunks of 34 px, the halo of the pass, which they had
    arr = _remainder_merged(arr, max(reach, outer)) if two else merged
    footprint = None if foreground is None else MaskFootprint(foreground, arr.shape[:2])
    pixel_mask = foreground if f == 1 else None  # the blocks' pixels present are on it

    token = (model.attrs(), model.spec, gain, offset)
    labels = output == "labels"

    # 8- and 16-bit integers with no nodata value: every pixel of the image is present, those
    # of a block's padding beyond its edges only are not (no pass over each block to find its
    # NaN, nor values beyond the levels: _levels_checked)
    whole = _every_pixel_present(arr.dtype, value) and not checked
    # the pass over the pixels present refuses values beyond the levels (as mapped onto the
    # model's by match_levels); those averaged over cells were checked before
    low, high = bounds if f == 1 else (-math.inf, math.inf)

    def values_of(x: np.ndarray) -> np.ndarray:
        values = _unit_float(x, value)
        if match_levels:  # the image's levels onto the model's (each channel's, or all's)
            values = values * np.asarray(gain, np.float32) + np.asarray(offset, np.float32)
        return values

    def present(values: np.ndarray, x: np.ndarray, pad: int, src_origin, rows, cols, mask):
        """The pixels present in a padded block of ``values`` (from the block ``x``): on the
        foreground ``mask`` only, what lies outside it being no texture (it votes nothing and
        the windows are renormalised to the foreground, as at missing pixels). A value of a
        pixel present beyond the levels (``low``, ``high``) is refused, found in the same
        pass (:func:`_present_within`)."""
        keep = NO_MASK
        if mask is not None:
            grown = (rows[0] - pad, rows[1] + pad), (cols[0] - pad, cols[1] + pad)
            keep = mask_over(mask, arr.shape[:2], *grown)
        if whole:
            valid = _inside(x.shape, pad, src_origin, rows, cols)
            return valid & keep if mask is not None else valid
        return _present_beyond(values, x, keep, (low, high), pad, src_origin, rows, cols,
                               model.value_range, value)  # fmt: skip

    def unmix(projected: _Projected, rows, cols, image_shape) -> np.ndarray:
        shape = (rows[1] - rows[0], cols[1] - cols[0])
        return _unmix_block(projected, model, output, (rows[0], cols[0]), shape, image_shape)

    m = model.n_textures
    apart = "lbp" in model.spec.features  # the patterns' projections in planes of their own

    def project(x: np.ndarray, *, src_origin, rows, cols, shared=None, **_: Any) -> np.ndarray:
        """The first of two passes: the projections (with the local binary patterns: the
        others', then the patterns') and, last, 1 where a pixel is present (with the
        patterns: 1 where it votes in them, 0.5 where it does not)."""
        padded = _padded(values_of(x), reach, src_origin, rows, cols)
        valid = present(padded, x, reach, src_origin, rows, cols, shared)
        p = _project_block(padded, model, reach, valid, (rows[0] - reach, cols[0] - reach))
        last = p.valid.astype(np.float32)[..., None]
        if not apart:
            return np.concatenate([p.u, last], axis=-1)
        last = last * np.float32(0.5) + p.voting[..., None] * np.float32(0.5)
        return np.concatenate([p.u, p.patterns, last], axis=-1)

    def windowed(x: np.ndarray, *, src_origin, rows, cols, image_shape, **_: Any):
        planes = _padded(x, outer, src_origin, rows, cols, value=0.0)  # none beyond the image
        last = planes[..., -1]
        u = np.ascontiguousarray(planes[..., :m])
        projected = _Projected(u, last > 0)
        if apart:  # windowed apart, even where every pixel present votes in them: a sum of
            # the windows, the same whatever the block (the window of the sum differs from
            # it in the last bits, and blocks with and without such pixels summed each way)
            patterns = np.ascontiguousarray(planes[..., m : 2 * m])
            projected = _Projected(u, last > 0, patterns, last > 0.75)
        return unmix(projected, rows, cols, image_shape)

    def both(x: np.ndarray, *, src_origin, rows, cols, image_shape, shared=None, **_: Any):
        padded = _padded(values_of(x), halo, src_origin, rows, cols)
        valid = present(padded, x, halo, src_origin, rows, cols, shared)
        corner = (rows[0] - halo, cols[0] - halo)  # the image position of padded's (0, 0)
        return unmix(_project_block(padded, model, reach, valid, corner), rows, cols, image_shape)

    def unread(rows: tuple[int, int], cols: tuple[int, int]) -> bool:
        """True (skip) for a block of projections that no computed block reads: no foreground
        within the window's halo of it."""
        h, w = arr.shape[:2]
        grown = (max(0, rows[0] - outer), min(h, rows[1] + outer))
        return footprint.background(grown, (max(0, cols[0] - outer), min(w, cols[1] + outer)))

    source_blocks, block_function, block_halo = arr, both, halo
    if two:
        source_blocks = map_haloed(
            project,
            arr,
            halo=reach,
            trailing=((2 if apart else 1) * model.n_textures + 1,),
            dtype=np.float32,
            name="xfskde-segment-projections",
            token=token,
            skip=None if footprint is None else unread,
            fill=0.0,
            shared=pixel_mask,
        )
        block_function, block_halo = windowed, outer
    result = map_haloed(
        block_function,
        source_blocks,
        halo=block_halo,
        trailing=() if labels else (model.n_textures,),
        dtype=np.uint8 if labels else np.float32,
        name=f"xfskde-segment-{output}",
        token=token,
        skip=None if footprint is None else footprint.background,
        fill=BACKGROUND if labels else np.nan,
        shared=pixel_mask if block_function is both else None,  # else in the planes present
    )
    if f > 1:
        result = _repeated(result, cells, full, f, BACKGROUND if labels else np.nan,
                           prepared.nodata, foreground)  # fmt: skip
    elif is_dask and result.chunks[:2] != prepared.raw.chunks[:2]:
        # the remainder merged for the engine (:func:`_remainder_merged`) cut off again: the
        # result in the image's chunks, which Zarr takes (xarray's to_zarr refused labels of
        # x chunks (77, 77, 102): "Final chunk ... must be the same size or smaller")
        result = result.rechunk((*prepared.raw.chunks[:2], *result.chunks[2:]))
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
            **mask_attrs,
            **prepared.attrs,
            **({"matched_levels": _flat(measured or model.value_range)} if match_levels else {}),
            **reordered,
            "long_name": _LONG_NAMES[output],
            **({"units": "1"} if output == "abundances" else {}),  # a share: QGIS shows it
            # the background as the labels' nodata where rioxarray reads it (rio.nodata,
            # rio.to_raster); not as a _FillValue, which xarray would decode to float and NaN
            **({"nodata": BACKGROUND} if labels else {}),
        },
    )


def _coarse(
    arr: da.Array,
    f: int,
    chunks: int | None,
    nodata: float | int | None = None,
    mask: np.ndarray | None = None,
    origin: tuple[int, int] = (0, 0),
    image_shape: tuple[int, int] | None = None,
) -> da.Array:
    """An image (values, or an input with its ``nodata`` for :func:`_unit_float`) averaged
    over f × f cells, lazily: :func:`xfskde._cells.cell_means` of the blocks of
    :func:`_cell_blocks`, over the foreground ``mask``'s pixels only when one is given (it
    covers the extent of an image of ``image_shape``, of which ``arr`` is the part from pixel
    ``origin``; by default ``arr`` itself): a cell without foreground is NaN."""
    return cell_means(_cell_blocks(arr, f, chunks), f, nodata, mask, origin, image_shape)


def _coarse_plan(
    shape: tuple[int, int], f: int, chunks: int | None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The row and column chunks, in pixels, that :func:`_cell_blocks` cuts an image of ``shape``
    (padded to whole f × f cells) into: sides multiple of f near ``f`` × the target."""
    h, w = shape
    target = max(256 * f, min(2048, f * (chunks or feature_chunk((h // f, w // f)))))
    return plan_chunks((h + -h % f, w + -w % f), target=target, stride=f)


def _cell_blocks(raw: da.Array, f: int, chunks: int | None) -> da.Array:
    """The blocks an image is averaged over f × f cells in, in its own dtype: cut by
    :func:`_coarse_plan` into chunks of whole cells (but the last row and column, cut at the
    image's edge), so every cell lies in one block and the result does not depend on the
    input's chunks.

    Each block is averaged as it is (:func:`xfskde._cells.block_cells`: its values in [0, 1]
    and its missing pixels read in the same pass), so no block of the image is ever held as
    float32: Dask holds the pieces of the image's blocks it splits for the plan until each
    block of the plan is whole, a byte a channel for 8-bit images, not four (a 16384² RGB
    slide at f = 5: 0.34 GiB of float32 pieces held, when the blocks were converted before
    they were averaged)."""
    h, w = raw.shape[:2]
    rows, cols = _coarse_plan((h, w), f, chunks)
    inside = ((*rows[:-1], rows[-1] - (-h % f)), (*cols[:-1], cols[-1] - (-w % f)))
    return raw.rechunk((*inside, -1))


def _every_pixel_present(dtype: np.dtype, nodata: float | int | None) -> bool:
    """Whether every pixel of an input of ``dtype`` with ``nodata`` is present: integers (no
    NaN) that no pixel can mark as missing."""
    return dtype.kind in "uib" and not missing_marker(dtype, nodata)[1]


def _present_block(
    block: np.ndarray,
    nodata: float | int | None,
    plan: tuple[tuple[int, ...], tuple[int, ...]],
    mask: np.ndarray | None = None,
    image_shape: tuple[int, int] | None = None,
    block_info: dict | None = None,
) -> np.ndarray:
    """:func:`present_pixels` of :func:`_unit_float` of a block of :func:`_cell_blocks`, in one
    compiled pass, padded with absent pixels to its block of the ``plan`` (whole cells); with a
    foreground ``mask`` (over an image of ``image_shape``), on it only."""
    values, top, marker, has_marker = compiled_view(block, nodata)
    where = block_info[0]["chunk-location"] if block_info else (0, 0)
    out = np.zeros((plan[0][where[0]], plan[1][where[1]]), bool)
    _raw_present(values, top, marker, has_marker, kept(mask, (0, 0), image_shape, block_info),
                 out)  # fmt: skip
    return out


@numba.njit(nogil=True, cache=True)
def _raw_present(block, top, marker, has_marker, keep, out):
    """``out[y, x]``: pixel (y, x) is not missing, inside ``keep`` (unless it has no rows), and
    float32(value) / ``top`` is finite in every channel (``out`` may be larger than the block:
    the rest is left as it is)."""
    h, w, channels = block.shape
    masked = keep.shape[0] > 0
    for y in range(h):
        for x in range(w):
            present = not (has_marker and marked(block, y, x, marker))
            if masked and not keep[y, x]:
                present = False
            if present:
                for c in range(channels):
                    if not np.isfinite(np.float32(block[y, x, c]) / top):
                        present = False
                        break
            out[y, x] = present


def _repeated(
    result: da.Array,
    blocks: da.Array,
    full: da.Array,
    f: int,
    fill: float | int,
    nodata: float | int | None,
    mask: np.ndarray | None = None,
) -> da.Array:
    """Labels or abundances of f × f cells given to each of their pixels, missing (``fill``)
    at the image's missing pixels and outside the foreground ``mask``, in the image's
    (``full``, the prepared image's) chunks.

    Each chunk of the image takes the cells its pixels lie in (gathered by index: a cell that
    two chunks share goes to both) and repeats them, so the pixels are made in the image's
    chunks: repeated in the cells' blocks and then rechunked, the pieces of the repeated blocks
    that the image's chunks cut across were held until each chunk was whole (an OME-Zarr
    image's three float32 abundance planes of a 16384² slide at f = 5: the write peaked at
    1.42–1.57 GiB, now 1.18–1.19).

    Which pixels are missing is read from ``blocks``, the blocks the cells were averaged from
    (:func:`_cell_blocks`, with the input's ``nodata``): the same tasks, so each block of the
    image is read once and its pixels tested as it is, a byte a pixel rechunked to the image's
    chunks. Testing ``full``'s own blocks instead held 0.7 GiB of pieces of the image's blocks
    and of their tests, waiting for the cells of their neighbourhood (a 16384² slide at f = 5).
    An integer image without a nodata value has no missing pixel, and is not tested."""
    starts = [np.cumsum((0, *axis[:-1])).tolist() for axis in full.chunks[:2]]
    cells = result
    for axis, (first, sides) in enumerate(zip(starts, full.chunks[:2], strict=True)):
        taken = [np.arange(a // f, -(-(a + n) // f)) for a, n in zip(first, sides, strict=True)]
        cells = da.take(cells, np.concatenate(taken), axis=axis)
        cells = cells.rechunk({axis: tuple(len(t) for t in taken)})
    chunks = (*full.chunks[:2], *result.chunks[2:])
    up = cells.map_blocks(_repeat_cells, f, starts, full.chunks[:2], chunks=chunks,
                          dtype=result.dtype)  # fmt: skip
    if mask is None and _every_pixel_present(blocks.dtype, nodata):
        return up
    plan = tuple(
        (*axis[:-1], axis[-1] + -n % f)
        for axis, n in zip(blocks.chunks[:2], blocks.shape[:2], strict=True)
    )
    where = () if mask is None else (dask.delayed(mask, pure=True), blocks.shape[:2])
    present = blocks.map_blocks(_present_block, nodata, plan, *where, chunks=plan, drop_axis=2,
                                dtype=bool)  # fmt: skip
    present = present[: full.shape[0], : full.shape[1]].rechunk(full.chunks[:2])
    if up.ndim == 3:
        present = present[..., None]
    return da.where(present, up, np.asarray(fill, dtype=up.dtype))


def _repeat_cells(
    block: np.ndarray,
    f: int,
    starts: list[list[int]],
    chunks: tuple[tuple[int, ...], ...],
    block_info: dict | None = None,
) -> np.ndarray:
    """The pixels of one chunk of the image (``starts`` and ``chunks``: the image's chunks'
    first pixels and sides) from the cells its pixels lie in (:func:`_repeated`): each cell
    given to its f × f pixels, those of the chunk cut out."""
    i, j = block_info[None]["chunk-location"][:2] if block_info else (0, 0)
    y, x = starts[0][i] % f, starts[1][j] % f  # the chunk's first pixel in its first cell
    pixels = np.repeat(np.repeat(block, f, axis=0), f, axis=1)
    return pixels[y : y + chunks[0][i], x : x + chunks[1][j]]


class _Tiles(list):
    """Probe tiles (:func:`_probe_tiles`), their :func:`.defaults.value_levels` computed once:
    the check of their values and the levels recorded read the same (a sort of their values,
    16 ms for 16 RGB tiles of 128²)."""

    @functools.cached_property
    def levels(self) -> tuple[float, float, float, float] | None:
        return value_levels(self)


def _tile_levels(tiles: list[np.ndarray]) -> tuple[float, float, float, float] | None:
    """:func:`.defaults.value_levels` of ``tiles``, computed once for :class:`_Tiles`."""
    return tiles.levels if isinstance(tiles, _Tiles) else value_levels(tiles)


def _probe_tiles(
    arr: da.Array,
    foreground: np.ndarray | None,
    seed: int,
    count: int = TILES,
    fit: bool = True,
    check: bool = True,
    nodata: float | int | None = None,
) -> list[np.ndarray]:
    """``count`` (:data:`.defaults.TILES`) random square tiles (side :data:`.defaults.TILE`,
    or the image's shorter side) of the prepared image, each reaching the foreground when there
    is a mask — on an image that many tiles would cover, the image cut into tiles
    (:func:`_draw_tiles`) —: what the texture scale and the filter bank's ranges are measured
    on. Reads only
    those pixels. When fewer than half of them hold a present pixel (an image mostly missing),
    16 times as many are drawn and the fullest kept (:func:`_present_tiles`); when none of
    those holds one either, the image is refused. A pixel is present when every channel is (a
    pixel missing in one channel is missing in all: :func:`.features.present_pixels`), so a
    channel missing throughout — a band outside the scene, a detector that failed — is named,
    with the channels to fit on or, where a model is applied (not ``fit``), said to be needed.
    With ``check`` (a float image's tiles, which hold its values as stored, so that the one line
    names its ``nodata`` value), tiles that hold a value far beyond their own levels are
    refused (:func:`_refuse_beyond_levels`).
    """
    tiles = _Tiles(_present_tiles(arr, foreground, seed, count))
    if check:
        _refuse_beyond_levels(tiles, nodata)
    if tiles and not any(present_pixels(t).any() for t in tiles):
        held = np.any([np.isfinite(t).any(axis=(0, 1)) for t in tiles], axis=0)
        if held.any() and not held.all():
            gone, kept = np.flatnonzero(~held).tolist(), np.flatnonzero(held).tolist()
            them = "them" if len(gone) > 1 else "it"
            remedy = (
                f"leave {them} out (image.isel(c={kept}); --channels)"
                if fit
                else f"the model reads every channel of the image it was fitted on: give {them}"
            )
            raise ParameterError(
                f"channel{'s' * (len(gone) > 1)} {', '.join(map(str, gone))} (of "
                f"{held.size}, from 0) {'are' if len(gone) > 1 else 'is'} missing (NaN or "
                f"the nodata value) at every pixel of {16 * count} random tiles, and a pixel "
                f"missing in one channel is missing in all: nothing to segment; {remedy}"
            )
        if foreground is not None:  # the mask's regions lie on missing data: say so
            raise ParameterError(
                f"no pixel is present in every channel inside the mask, in {16 * count} random "
                "tiles of its regions (all NaN, or all the nodata value there): nothing to "
                "segment; give a mask over the data, or check nodata"
            )
        raise ParameterError(
            f"no pixel is present in every channel in {16 * count} random tiles of the image "
            "(all NaN, or all the nodata value): nothing to segment; check nodata, or give a "
            "mask of where the data are"
        )
    return tiles


def _present_tiles(
    arr: da.Array, foreground: np.ndarray | None, seed: int, count: int
) -> list[np.ndarray]:
    """``count`` tiles (:func:`_draw_tiles`). When fewer than half of them hold a
    present pixel, 16 times as many are drawn and the fullest ``count`` of those that hold one
    kept (a 128² patch of
    texture in a 768² image otherwise missing was measured on the 9 % of it that one tile of 16
    held: its texture scale 3.9 px, where alone it is 6.9); the first tiles if none does."""
    tiles = _draw_tiles(arr, foreground, seed, count)
    if tiles and sum(bool(present_pixels(t).any()) for t in tiles) < len(tiles) / 2:
        # random, not the image cut into tiles: those would cut a small patch of data apart
        more = _draw_tiles(arr, foreground, seed + 1, 16 * count, cover=False)
        shares = [(float(present_pixels(t).mean()), t) for t in more]  # each read once
        held = [(share, t) for share, t in shares if share > 0]
        if held:  # fullest first
            tiles = [t for _, t in sorted(held, key=lambda pair: -pair[0])[:count]]
    return tiles


def _levels_checked(dtype: np.dtype) -> bool:
    """Whether an image of ``dtype`` is checked for values beyond its levels
    (:func:`.defaults.data_bounds`): floats and integers of 32 bits or more. The values of
    8- and 16-bit integers are a detector's counts: a hot or saturated pixel is data, and no
    value lies beyond the dtype's range."""
    return not (dtype.kind in "uib" and dtype.itemsize <= 2)


#: A value held by at least this share of the tiles' values is a level of its own (the
#: 0.1th percentile is it from 0.1 %): :func:`_refuse_beyond_levels` measures the levels
#: without it.
MARKER_SHARE = 5e-4


def _refuse_beyond_levels(tiles: list[np.ndarray], nodata: float | int | None = None) -> None:
    """Refuse probe tiles that hold a value beyond :func:`.defaults.data_bounds` of their own
    levels: a float raster's nodata marker that its metadata do not name (-9999 in an image
    in [0, 1]; -3.4028235e38, float32's lowest, which overflowed the filters: "fill must be
    finite, got -inf"). A marker of a hole larger than :data:`MARKER_SHARE` of the tiles is
    their black (or white) level itself, so their lowest (highest) value, when it is held by
    that many, is set against the levels of the other values (a 50 × 60 hole of -9999 in a
    256² image in [0, 1] is 4.6 % of it: levels -9999 to 0.90, which hold it; without it 0 to
    0.91), and refused when it lies beyond their bounds and apart from them all (a saturated
    level of 1 above levels of 0.01 to 0.02 is the end of the values that lead up to it).
    Blocks beyond the tiles are checked as they are computed (:func:`_check_blocks`,
    and :func:`_apply`'s pass over the pixels present)."""
    levels = _tile_levels(tiles)
    if levels is None:
        return
    lowest, black, white, highest = levels
    where = " (in the tiles the levels are measured on)"
    low, high = data_bounds((black, white))
    if lowest < low or highest > high:
        value = lowest if lowest < low else highest
        _refuse_value(value, value, (black, white), nodata, where)
    values = np.concatenate([np.asarray(t, np.float32).reshape(-1) for t in tiles])
    values = values[np.isfinite(values)]
    least = MARKER_SHARE * values.size
    ends = [v for v in {lowest, highest} if np.count_nonzero(values == np.float32(v)) >= least]
    if not ends:
        return
    rest = values[~np.isin(values, np.asarray(ends, np.float32))]
    if not rest.size:  # the tiles hold one or two values: no levels beside them
        return
    # beyond the others' levels, and apart from all of them: a saturated level is the end of
    # the values that lead up to it (a cell's rim), a marker's hole has no such values
    nearest = data_bounds((float(rest.min()), float(rest.max())))
    rest = rest[:: max(1, rest.size // 200_000)]  # the levels to a few thousandths of a span
    others = tuple(np.percentile(rest.astype(np.float64), [0.1, 99.9]).tolist())
    low, high = data_bounds(others)
    for value in sorted(ends, key=lambda v: -abs(v)):
        if (value < low and value < nearest[0]) or (value > high and value > nearest[1]):
            _refuse_value(value, value, others, nodata, where)


def _value_text(value: float) -> str:
    """A value as a user gives it back as ``nodata``: -9999, -3.4028235e+38 (as a float32
    raster holds it, where it does), 1.5."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    single = np.float32(value)
    return str(single) if float(single) == value else repr(value)


def _refuse_value(
    raw: float,
    unit: float,
    levels: tuple[float, float] | None,
    nodata: float | int | None,
    where: str,
    scale: float = 1.0,
) -> None:
    """Raise the one line that refuses an image holding ``raw`` (its value as stored; ``unit``:
    as the features read it, beside the black and white ``levels`` in that unit, which
    ``scale`` turns into the stored unit) beyond :func:`.defaults.data_bounds`."""
    text = _value_text(float(raw))
    remedy = f"give it as nodata={text} (--nodata={text}) if it marks missing pixels"
    if nodata is not None and float(raw) == float(nodata):
        raise ParameterError(
            f"the image holds its nodata value {text}{where} in some channels "
            "but not all: a pixel is missing only where every channel holds it, and this one "
            "would be read as data far beyond the image's levels; set its other channels to "
            "NaN (a NaN in any channel makes a pixel missing), or give a mask without it"
        )
    if levels is None or abs(unit) > EXTREME:
        raise ParameterError(
            f"the image holds values as large as {text}{where} (beyond ±{EXTREME:g}: most "
            f"likely a nodata marker that its metadata do not name): {remedy}, or scale the "
            "image"
        )
    black, white = levels
    span = max(white - black, max(abs(black), abs(white)) / LEVEL_SPANS)
    spans = (black - unit if unit < black else unit - white) / span
    raise ParameterError(
        f"the image holds the value {text}{where}, {spans:.3g} spans beyond the levels it is "
        f"read in ({black * scale:.4g} to {white * scale:.4g}: the 0.1th and 99.9th "
        f"percentiles of the probe tiles), more than {LEVEL_SPANS:g}: most likely a nodata "
        f"marker that its metadata do not name; {remedy}; if it is data, clip or rescale the "
        "image (a value so far out outweighs every texture's gradients)"
    )


@numba.njit(nogil=True, cache=True)
def _first_beyond(block, top, marker, has_marker, keep, low, high):
    """The flat index of the first value of a (h, w, c) block whose float32(value) / ``top``
    lies beyond [``low[c]``, ``high[c]``] (its channel's), among the pixels present (not
    ``marker`` in every channel, with ``has_marker``; finite in every channel; inside
    ``keep``, unless it has no rows); -1 if none."""
    h, w, channels = block.shape
    masked = keep.shape[0] > 0
    for y in range(h):
        for x in range(w):
            if (has_marker and marked(block, y, x, marker)) or (masked and not keep[y, x]):
                continue
            beyond = -1
            present = True
            for c in range(channels):
                v = np.float32(block[y, x, c]) / top
                if not np.isfinite(v):
                    present = False
                    break
                if beyond < 0 and (v < low[c] or v > high[c]):
                    beyond = (y * w + x) * channels + c
            if present and beyond >= 0:
                return beyond
    return -1


@numba.njit(nogil=True, cache=True)
def _present_within(block, keep, low, high, out):
    """:func:`.features.present_pixels` of a (h, w, c) float block inside ``keep`` (unless it
    has no rows) into ``out``, in the same pass the flat index of the first value of a pixel
    present beyond [``low``, ``high``] (finite: a value within them is finite, so one test
    serves both where every value is) or -1 if none."""
    h, w, channels = block.shape
    masked = keep.shape[0] > 0
    first = -1
    for y in range(h):
        for x in range(w):
            within = True
            for c in range(channels):
                v = block[y, x, c]
                if not (v >= low and v <= high):  # NaN, ±inf or beyond the bounds
                    within = False
            present = within
            if not within:  # missing, or present and beyond
                present = True
                beyond = -1
                for c in range(channels):
                    v = block[y, x, c]
                    if not np.isfinite(v):
                        present = False
                    elif beyond < 0 and (v < low or v > high):
                        beyond = (y * w + x) * channels + c
                if present and first < 0 and not (masked and not keep[y, x]):
                    first = beyond
            if masked and not keep[y, x]:
                present = False
            out[y, x] = present
    return first


def _present_beyond(
    values: np.ndarray,
    x: np.ndarray,
    keep: np.ndarray,
    bounds: tuple[float, float],
    pad: int,
    src_origin: tuple[int, int],
    rows: tuple[int, int],
    cols: tuple[int, int],
    levels: tuple[float, float] | None,
    nodata: float | int | None,
) -> np.ndarray:
    """The pixels present in ``values``, a block ``x`` (its first pixel the image's
    ``src_origin``; ``rows`` × ``cols`` its own pixels) as values (:func:`_unit_float`) padded
    with ``pad`` pixels beyond the image's edges (:func:`_padded`), inside ``keep`` (unless it
    has no rows); a pixel present that holds a value beyond ``bounds`` refused, named as ``x``
    holds it (:func:`_refuse_value`). One pass (:func:`_present_within`)."""
    finite = float(np.finfo(np.float32).max)  # ±inf are missing: beyond these, not within
    low, high = max(bounds[0], -finite), min(bounds[1], finite)
    valid = np.empty(values.shape[:2], bool)
    found = _present_within(np.ascontiguousarray(values), keep, low, high, valid)
    if found >= 0:  # the value as stored, and where
        y, x_, c = (int(i) for i in np.unravel_index(found, values.shape))
        (top, _), (left, _) = _pads(x.shape, pad, src_origin, rows, cols)
        raw = x[y - top, x_ - left, c].item()
        where = f" at pixel (y {src_origin[0] + y - top}, x {src_origin[1] + x_ - left})"
        scale = np.iinfo(x.dtype).max if x.dtype.kind in "ui" else 1.0
        _refuse_value(raw, float(values[y, x_, c]), levels, nodata, where, float(scale))
    return valid


def _channel_bounds(
    bounds: tuple[float, float], channels: int, gain: Any = 1.0, offset: Any = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per channel, the values (as :func:`_unit_float` reads them) that ``value * gain +
    offset`` (``match_levels``' map; gain > 0) takes into ``bounds``, as float32."""
    g = np.broadcast_to(np.asarray(gain, np.float64), (channels,))
    o = np.broadcast_to(np.asarray(offset, np.float64), (channels,))
    low, high = (bounds[0] - o) / g, (bounds[1] - o) / g
    return low.astype(np.float32), high.astype(np.float32)


def _check_values(
    block: np.ndarray,
    nodata: float | int | None,
    low: np.ndarray,
    high: np.ndarray,
    levels: tuple[float, float] | None,
    keep: np.ndarray,
    origin: tuple[int, int],
) -> None:
    """Refuse (:func:`_refuse_value`) a block of an image in its own dtype (its first pixel
    the image's ``origin``) that holds, at a pixel present (not missing; inside ``keep``
    unless it has no rows), a value beyond its channel's ``low`` and ``high``
    (:func:`_channel_bounds`)."""
    values, top, marker, has_marker = compiled_view(block, nodata)
    found = _first_beyond(values, top, marker, has_marker, keep, low, high)
    if found >= 0:
        y, x, c = (int(i) for i in np.unravel_index(found, block.shape))
        raw = block[y, x, c].item()
        where = f" at pixel (y {origin[0] + y}, x {origin[1] + x})"
        _refuse_value(raw, float(np.float32(raw) / top), levels, nodata, where, float(top))


def _check_block(
    block: np.ndarray,
    nodata: float | int | None,
    low: np.ndarray,
    high: np.ndarray,
    levels: tuple[float, float] | None,
    mask: np.ndarray | None = None,
    image_shape: tuple[int, int] | None = None,
    block_info: dict | None = None,
) -> np.ndarray:
    """A block of a Dask image (``block_info`` places it) as it is, once :func:`_check_values`
    finds nothing beyond ``low`` and ``high`` at its pixels on the foreground ``mask`` (over
    an image of ``image_shape``)."""
    (r0, _), (c0, _) = block_info[0]["array-location"][:2] if block_info else ((0, 0), (0, 0))
    keep = kept(mask, (0, 0), image_shape, block_info)
    _check_values(block, nodata, low, high, levels, keep, (r0, c0))
    return block


def _check_blocks(
    arr: da.Array,
    nodata: float | int | None,
    bounds: tuple[float, float],
    levels: tuple[float, float] | None,
    mask: np.ndarray | None = None,
    gain: Any = 1.0,
    offset: Any = 0.0,
) -> da.Array:
    """``arr`` (an image's (y, x, c) blocks in their own dtype, or its values) with every
    block checked as it is computed (:func:`_check_block`): blocks averaged over cells, or
    whose parts are cropped, whose values would otherwise reach no check whole. ``gain`` and
    ``offset``: the map of ``match_levels`` that the values pass before ``bounds``."""
    low, high = _channel_bounds(bounds, arr.shape[2], gain, offset)
    where = () if mask is None else (dask.delayed(mask, pure=True), arr.shape[:2])
    token = tokenize(arr.name, nodata, low, high, mask)
    return arr.map_blocks(_check_block, nodata, low, high, levels, *where, dtype=arr.dtype,
                          name=f"xfskde-checked-{token}")  # fmt: skip


def _draw_tiles(
    arr: da.Array, foreground: np.ndarray | None, seed: int, count: int, cover: bool = True
) -> list[np.ndarray]:
    """``count`` random tiles of :func:`_probe_tiles`, read (those reaching the foreground) —
    or, on an image that ``count`` tiles would cover (a 512² image, with 16 tiles of 128²), the
    image cut into tiles (:func:`_covering`): every pixel measured, whatever the ``seed``
    (unless not ``cover``).

    Random tiles there measured a random part of the image, overlapping, and the texture scale
    and the bank's ranges moved with the seed: on the 30 held-out mosaics at 512², seeds 0–3
    gave means 0.9414 / 0.9310 / 0.9355 / 0.9340, each seed losing one mosaic to a wrong
    partition (0.647–0.732; a different mosaic each time); the image cut into tiles gives 0.9409
    at every seed (lowest 0.78), random textures and dead leaves 512² 0.9782–0.9806 → 0.9804
    (2026-11-30)."""
    height, width = arr.shape[:2]
    side = min(TILE, height, width)
    footprint = None if foreground is None else MaskFootprint(foreground, (height, width))
    if cover and count * side * side >= height * width:
        corners = [(t, c) for t in _covering(height, side) for c in _covering(width, side)]
        if footprint is not None:
            corners = [(t, c) for t, c in corners
                       if footprint.touches((t, t + side), (c, c + side))]  # fmt: skip
    else:
        rng = np.random.default_rng([seed, 1])
        tops = rng.integers(0, height - side + 1, 64 * count)
        lefts = rng.integers(0, width - side + 1, 64 * count)
        if footprint is not None:
            inside = [
                footprint.touches((t, t + side), (c, c + side))
                for t, c in zip(tops, lefts, strict=True)
            ]
            tops, lefts = tops[inside], lefts[inside]
        corners = list(zip(tops[:count].tolist(), lefts[:count].tolist(), strict=True))
    tiles = [arr[t : t + side, c : c + side] for t, c in corners]
    tiles = compute_collections(tiles) if tiles else []
    if foreground is None:
        return tiles
    # the foreground's pixels only: what lies outside the mask (a slide's glass) is no texture
    # to measure, and it halved the texture scale of tissue on glass
    return [
        _on_foreground(tile, foreground, (height, width), corner)
        for tile, corner in zip(tiles, corners, strict=True)
    ]


def _covering(n: int, side: int) -> list[int]:
    """The starts of the fewest tiles of ``side`` pixels that cover ``n`` pixels, spread evenly
    from 0 to ``n - side`` (the last ones overlapping where ``side`` does not divide ``n``)."""
    return np.unique(np.round(np.linspace(0, n - side, -(-n // side)))).astype(int).tolist()


def _on_foreground(
    values: np.ndarray,
    foreground: np.ndarray,
    image_shape: tuple[int, int],
    corner: tuple[int, int],
) -> np.ndarray:
    """A window of an image's values (its first pixel at ``corner`` of an image of
    ``image_shape``) with NaN outside the ``foreground`` mask, which covers the image."""
    (top, left), (h, w) = corner, values.shape[:2]
    inside = mask_at_samples(foreground, image_shape, 1, (top, top + h), (left, left + w))
    return np.where(inside[..., None], values, np.float32(np.nan))


def _value_range(tiles: list[np.ndarray]) -> tuple[float, float] | None:
    """The black and white levels of :func:`.defaults.value_levels` (None without values)."""
    levels = _tile_levels(tiles)
    return None if levels is None else (levels[1], levels[2])


def _channel_levels(tiles: list[np.ndarray]) -> tuple[tuple[float, float], ...] | None:
    """The black and white levels of each channel of (y, x, c) ``tiles`` on its own (None
    where a channel has no value present, or there are no tiles)."""
    if not tiles:
        return None
    levels = [_value_range([t[..., c] for t in tiles]) for c in range(tiles[0].shape[-1])]
    return None if any(v is None for v in levels) else tuple(levels)


def _image_levels(
    arr: da.Array,
    foreground: np.ndarray | None,
    per_channel: bool = False,
    check: bool = True,
    nodata: float | int | None = None,
) -> Any:
    """The black and white levels of an image to predict (:func:`_value_range`, or with
    ``per_channel`` each channel's, :func:`_channel_levels`, of :data:`.defaults.TILES` probe
    tiles, drawn with seed 0, those of an image mostly missing as the fit draws them, and an
    image without a pixel present, or with ``check`` one whose tiles hold a value far beyond
    their levels, refused as the fit refuses it: :func:`_probe_tiles`), None without
    values."""
    tiles = _probe_tiles(arr, foreground, 0, fit=False, check=check, nodata=nodata)
    if not tiles:
        return None
    return _channel_levels(tiles) if per_channel else _value_range(tiles)


def _matching(match_levels: Any) -> bool:
    """Whether ``match_levels`` asks for each channel's levels (``"channels"``); refuses what
    it cannot be (False, True or ``"channels"``)."""
    if match_levels is True or match_levels is False:
        return False
    if match_levels == "channels":
        return True
    raise ParameterError(
        f"match_levels must be False, True (all channels' levels together) or 'channels' "
        f"(each channel's own), got {match_levels!r}"
    )


def _channel_map(model: TextureModel, measured: Any) -> tuple[tuple[float, ...], ...]:
    """Per channel, the gain and offset (:func:`_gain_offset`) that map its levels
    (``measured``, :func:`_channel_levels`) onto those of the same channel of the model's
    image (:attr:`TextureModel.channel_levels`)."""
    if model.channel_levels is None:
        raise ParameterError(
            "match_levels='channels' needs each channel's levels in the image the model was "
            "fitted on, which this model does not record (an earlier version's, or one fitted "
            "with its window given and no filter bank, which measures nothing on the image): "
            "fit it again with this version of xfskde, or pass match_levels=True"
        )
    if measured is None:
        channels = len(model.channel_levels)
        return (1.0,) * channels, (0.0,) * channels
    maps = []
    for c, (fitted, seen) in enumerate(zip(model.channel_levels, measured, strict=True)):
        if not seen[1] > seen[0]:
            raise ParameterError(
                f"channel {c} of the image is flat (its black and white levels both "
                f"{seen[0]:.4g}): it has no levels to match; pass match_levels=True"
            )
        maps.append(_gain_offset(fitted, seen))
    gains, offsets = zip(*maps, strict=True)
    return tuple(gains), tuple(offsets)


def _flat(levels: Any) -> list[float]:
    """Levels as a flat list: (black, white), or per channel black, white, black, ..."""
    return [float(v) for v in np.ravel(np.asarray(levels, dtype=float))]


def _check_range(model: TextureModel, measured: tuple[float, float] | None) -> None:
    """Refuse an image whose values (``measured`` levels) span :data:`RANGE_RATIO` times more
    or less than those of the image the model was fitted on (:attr:`TextureModel.value_range`)."""
    if model.value_range is None or measured is None:
        return
    fitted, seen = model.value_range[1] - model.value_range[0], measured[1] - measured[0]
    if fitted > 0 and seen > 0 and not 1 / RANGE_RATIO <= seen / fitted <= RANGE_RATIO:
        raise ParameterError(
            f"the image's values span {measured[0]:.4g} to {measured[1]:.4g}, those the model was "
            f"fitted on {model.value_range[0]:.4g} to {model.value_range[1]:.4g} (another bit "
            "depth or unit?): fit a model on images like this one, or pass match_levels=True "
            "(--match-levels) to map its levels onto the model's"
        )


def _level_map(model: TextureModel, measured: tuple[float, float] | None) -> tuple[float, float]:
    """The gain and offset that map an image's black and white levels (``measured``) onto
    those the model was fitted on: ``value * gain + offset``."""
    if model.value_range is None:
        raise ParameterError(
            "match_levels needs the value range the model was fitted on, which this model does "
            "not record: fit it again with this version of xfskde"
        )
    if measured is None:
        return 1.0, 0.0
    if not measured[1] > measured[0]:
        raise ParameterError(
            f"the image's black and white levels are both {measured[0]:.4g} (a flat image?): "
            "there are no levels to match; drop match_levels"
        )
    return _gain_offset(model.value_range, measured)


def _gain_offset(fitted: tuple[float, float], seen: tuple[float, float]) -> tuple[float, float]:
    """The gain and offset of ``value * gain + offset`` that map the black and white levels
    ``seen`` (white above black) onto ``fitted``."""
    (black0, white0), (black, white) = fitted, seen
    gain = (white0 - black0) / (white - black)
    return gain, black0 - gain * black


def _remeasured(spec_args: dict[str, Any], tiles: list[np.ndarray]) -> dict[str, Any]:
    """``spec_args`` with the ranges it measures (the bank's filters', and the colour
    channels' and the gradients' unit unless they are the unit range) measured again on
    ``tiles``."""
    out = dict(spec_args)
    if out.get("bank_ranges") is not None:
        out["bank_ranges"] = _measured_ranges(tiles)
    if out.get("color_ranges") is not None:  # not [0, 1] on the full image: measured again
        out["color_ranges"] = channel_ranges(tiles) or out["color_ranges"]
    if out.get("gradient_unit", 1.0) != 1.0:
        out["gradient_unit"] = gradient_unit(tiles)
    return out


def _measured_ranges(tiles: list[np.ndarray]) -> tuple[tuple[float, float], ...]:
    """Each filter's (1st, 99th) percentile of its response over the tiles' present pixels,
    those of their interiors (where the responses are exact) unless no present pixel is
    there."""
    greys = [channel_mean(tile) for tile in tiles]
    present = [np.isfinite(grey) for grey in greys]
    fills = [float(g[p].mean()) if p.any() else 0.5 for g, p in zip(greys, present, strict=True)]
    inner = []
    for grey, p in zip(greys, present, strict=True):
        m = min(BANK_RADIUS, max(0, (min(grey.shape) - 1) // 2 - 1))
        inside = np.zeros_like(p)
        inside[m : grey.shape[0] - m, m : grey.shape[1] - m] = True
        inner.append(inside & p)
    if not any(mask.any() for mask in inner):  # present pixels only near the tiles' edges
        inner = present
    return measured_bank_ranges(greys, fills, inner)


def _equivalent_size(window: str, sigma: float) -> float | int:
    """The ``size`` of a window of the same spread as a Gaussian of σ ``sigma``: itself, a box
    of side σ√12 (odd), a disk of radius 2σ (the same variance per axis)."""
    if window == "box":
        return int(2 * round(sigma * math.sqrt(3)) + 1)
    if window == "disk":
        return float(2 * sigma)
    return float(sigma)


def _crop(arr: da.Array, foreground: np.ndarray | None, side: int = 512, f: int = 1) -> np.ndarray:
    """A crop of at most ``side``² pixels, averaged over f × f cells (:func:`_coarse`) block by
    block before it is gathered: a crop of a coarse texture is up to 2048 cells of f pixels on
    a side, which at full resolution held 1.4 GiB of a slide (6006² RGB pixels, f = 5) where its
    cells hold 17 MB. ``arr`` holds values (:func:`_prepare`'s ``unit``); outside the
    ``foreground`` they are NaN, and the crop is where it holds the most foreground
    (:func:`_crop_centre`). Without a foreground the crop is central, unless it holds no pixel
    present: then it is where the image holds the most (:func:`_presence`; the data of a scene
    in one corner, the rest nodata, failed with "only 0 pixels could be sampled")."""
    height, width = arr.shape[:2]
    hy, hx = min(side, height), min(side, width)
    centre = (height // 2, width // 2)
    if foreground is not None and foreground.any():
        centre = _crop_centre(foreground, (height, width), (hy, hx))
    crop = _crop_at(arr, foreground, centre, (hy, hx), f)
    if foreground is None and not np.isfinite(crop).any():
        where = _presence(arr)
        if where.any():
            centre = _crop_centre(where, (height, width), (hy, hx))
            crop = _crop_at(arr, None, centre, (hy, hx), f)
    return crop


def _crop_at(
    arr: da.Array,
    foreground: np.ndarray | None,
    centre: tuple[int, int],
    sides: tuple[int, int],
    f: int,
) -> np.ndarray:
    """The crop of :func:`_crop` of ``sides`` pixels about ``centre``, within the image."""
    height, width = arr.shape[:2]
    (cy, cx), (hy, hx) = centre, sides
    top = int(np.clip(cy - hy // 2, 0, height - hy))
    left = int(np.clip(cx - hx // 2, 0, width - hx))
    crop = arr[top : top + hy, left : left + hx]
    # outside the foreground (a slide's glass) is no texture: missing pixels (cells averaged
    # over the foreground's pixels only)
    if f > 1:
        crop = _coarse(crop, f, None, mask=foreground, origin=(top, left),
                       image_shape=(height, width))  # fmt: skip
    (values,) = compute_collections([crop])
    if f > 1 or foreground is None:
        return values
    return _on_foreground(values, foreground, (height, width), (top, left))


def _presence(arr: da.Array, side: int = 1024) -> np.ndarray:
    """Where an image (values, NaN at missing pixels) has pixels present, at most ``side``
    samples on a side: each block's :func:`present_pixels` at every s-th pixel of its own. A
    pass over the whole image, which :func:`_crop` makes only when its central crop holds
    nothing."""
    step = max(1, -(-max(arr.shape[:2]) // side))
    chunks = tuple(tuple(-(-n // step) for n in axis) for axis in arr.chunks[:2])
    sampled = arr.map_blocks(lambda b: present_pixels(b)[::step, ::step], drop_axis=2,
                             chunks=chunks, dtype=bool)  # fmt: skip
    return sampled.compute(scheduler="threads")


def _crop_centre(
    foreground: np.ndarray, shape: tuple[int, int], crop: tuple[int, int]
) -> tuple[int, int]:
    """The centre (image pixels) of a ``crop`` of an image of ``shape`` that holds the most
    of the ``foreground`` mask (covering the image's extent), the nearest to the foreground's
    centre of mass among the fullest. At the centre of mass itself, a slide of two sections
    side by side had its crop on the glass between them: nothing to fit the window check on
    ("only 0 pixels could be sampled")."""
    fg = np.asarray(foreground, dtype=np.float32)
    my, mx = fg.shape
    size = (max(1, round(crop[0] * my / shape[0])), max(1, round(crop[1] * mx / shape[1])))
    cover = ndimage.uniform_filter(fg, size=size, mode="constant")
    ys, xs = np.nonzero(foreground)
    best = np.argwhere(cover >= cover.max() - 1e-6)
    mass = np.array([ys.mean(), xs.mean()])
    i, j = best[np.argmin(((best - mass) ** 2).sum(axis=1))]
    return int((i + 0.5) * shape[0] / my), int((j + 0.5) * shape[1] / mx)


def _shift(spec: FeatureSpec, method: str, signal: bool = False, metric: str = "euclidean") -> int:
    """How far a fit looks before and after each sample: 1.5 window sigmas for the stable fit,
    for the within-texture metric, and for k-means when the groups are weighed by their signal
    (which needs each sample's change); 0 otherwise. The fit's blocks need this much more
    halo."""
    looks = method == "stable" or metric == "within" or (signal and method == "kmeans")
    return max(1, round(1.5 * spec.window_obj.sigma)) if looks else 0


def _fit_prepared(
    arr: da.Array,
    foreground: np.ndarray | None,
    spec: FeatureSpec,
    n_textures: int,
    weights: dict[str, float],
    method: str,
    sample: int,
    seed: int,
    nodata: float | int | None,
    signal: bool = False,
    flat_ok: bool = False,
    metric: str = "euclidean",
    cells: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    masked: bool = False,
    trial: tuple[str, ...] = (),
    bounds: tuple[float, float] | None = None,
    levels: tuple[float, float] | None = None,
    beside: bool = False,
    measured: dict[str, float] | None = None,
    read: int | None = None,
    centres: dict[tuple[int, int], tuple[int, int]] | None = None,
) -> TextureModel:
    """The fit of :func:`fit_textures` on an image already prepared (:func:`_prepare`, with the
    halo of the features and the fit's :func:`_shift`), whose blocks :func:`_unit_float` turns
    into values in [0, 1] with ``nodata``. The sample is drawn from ``cells`` (row and column
    sizes), by default the blocks :func:`xfskde.lazy.plan_chunks` cuts the image into for
    :func:`feature_chunk` — a grid of the image's own, not its chunks, so that the model does
    not depend on how the image is chunked (each drawn cell, or tile of it, is read with its
    halo by :func:`xfskde.lazy.map_regions`). With ``signal`` (automatic weights) and the stable
    fit or k-means, each group's weight is scaled by :func:`.defaults.signal_weights`, and
    the groups' S / N are recorded in the model's ``choices``; each group then counts in how
    steady a sample is (:func:`_change`) as its weight is scaled, and the steady samples and
    the S / N are measured again with those counts: a group that is mostly noise on this image
    (the local binary patterns of flat grey discs under noise, S / N 0.3-0.5) no longer
    decides which samples are steady (grey random textures 512², seeds 100-105: 0.888 ->
    0.912, seed 104 0.770 -> 0.914; held out, seeds 200-239: 0.9228 -> 0.9232; the 87 mosaics
    of real textures, whose groups all reach S / N 1, unchanged). A sample whose features are the
    same everywhere (a flat image) is refused, unless ``flat_ok`` (the window check's crop,
    which may fall in a blank part of an image). With ``metric="within"`` the model's
    abundances are solved in the within-texture metric (:func:`.unmixing.fit_within_metric`),
    and it and the endmembers are re-estimated from the labels they give the sample
    (:func:`.unmixing.refine_by_labels`, its rounds recorded in ``choices``), the closest two
    textures' samples then split anew, or merged and a third split
    (:func:`.unmixing.resplit_closest`); when the sample
    cannot estimate the metric the fit keeps the Euclidean one and says why in its
    ``choices``. The blocks sampled are those reaching the ``foreground``, whose outside is
    missing pixels to the samples' windows, unless ``masked`` (the image's values are missing
    there already: cells averaged over the foreground's pixels only). The groups on ``trial``
    (a grey image's grey levels, with ``signal``) are sampled but left out of how steady each
    sample is, and kept where :func:`.defaults.keeps_grey_levels` says so from the groups'
    S / N: their weight is 0 otherwise, and they are then dropped as idle. With ``bounds``
    (:func:`.defaults.data_bounds` of the image's ``levels``), a sampled block holding a value
    beyond them is refused (:func:`_check_values`). ``beside``: where the sample is one block
    (one task, the second core waiting), its features are computed with a second thread
    (:func:`.features.grid_features` with ``beside``; not for the window check's two fits,
    which run side by side already). ``measured``, a dict given with ``signal``: filled with
    each group's S / N (:func:`.defaults.group_signal`). ``read``: the sample is drawn from a
    random tile of each drawn cell, of side √(``read`` / cells), about ``read`` pixels in
    all (the window check's fits on an image larger than their crop, :func:`_auto_size`);
    None: whole cells, or tiles of :data:`FIT_TILE` on images of more than
    ``_MAX_FIT_BLOCKS`` of them. ``centres``, with ``read``: each cell's tile about its
    centre given (:func:`_placed_tiles`), not at random, and only the cells given sampled."""
    shift = _shift(spec, method, signal, metric)
    fit_halo = feature_depth(spec) + shift
    groups = _group_slices(spec, arr.shape[2])
    n_groups = len(groups)
    n_features = list(groups.values())[-1].stop + (2 * n_groups if shift else 0)
    # the cells (those smaller than the halo merged, as the engine merges blocks): draw the
    # cells to sample, among those with foreground
    rng = np.random.default_rng(seed)
    if cells is None:
        cells = plan_chunks(arr.shape[:2], target=feature_chunk(arr.shape), halo=fit_halo)
    row_chunks, col_chunks = (safe_chunks(_last_merged(c, fit_halo), fit_halo) for c in cells)
    grid = list(np.ndindex(len(row_chunks), len(col_chunks)))
    starts = [[0, *np.cumsum(c).tolist()] for c in (row_chunks, col_chunks)]  # Python ints
    if foreground is not None:
        footprint = MaskFootprint(foreground, arr.shape[:2])
        grid = [
            (i, j)
            for i, j in grid
            if footprint.touches((starts[0][i], starts[0][i + 1]), (starts[1][j], starts[1][j + 1]))
        ]
        if not grid:
            raise ParameterError("the mask has no foreground: there is nothing to segment")
    if centres is not None:
        grid = [cell for cell in grid if cell in centres]
        if not grid:
            raise ParameterError("no cell holds pixels present: there is nothing to sample")
    picked = rng.permutation(len(grid))[:_MAX_FIT_BLOCKS]
    per_block = -(-int(sample) // len(picked))
    seeds = rng.integers(0, 2**32, len(picked))
    seed_of = {grid[i]: int(s) for i, s in zip(sorted(picked), seeds, strict=True)}
    # a large image: the features of one random tile per drawn cell, not of the whole cell;
    # with ``read``, tiles of that many pixels in all
    tiled = read is not None or arr.shape[0] * arr.shape[1] > _MAX_FIT_BLOCKS * FIT_TILE**2
    side = FIT_TILE if read is None else max(1, math.isqrt(int(read) // len(picked)))

    def tile(x: np.ndarray, *, src_origin, rows, cols, extra, image_shape, shared=None):
        full = _padded(_unit_float(x, nodata), fit_halo, src_origin, rows, cols)
        valid = None
        if bounds is not None:  # the pixels present, and any value beyond the levels, at once
            keep = NO_MASK  # on the foreground only: outside it is no texture
            if shared is not None:
                top, left = rows[0] - fit_halo, cols[0] - fit_halo
                keep = mask_over(shared, image_shape, (top, top + full.shape[0]),
                                 (left, left + full.shape[1]))  # fmt: skip
            valid = _present_beyond(full, x, keep, bounds, fit_halo, src_origin, rows, cols,
                                    levels, nodata)  # fmt: skip
            shared = None  # on valid already
        out = np.full((held, n_features), np.nan, np.float32)
        part = _sample_block(full, spec, fit_halo, per_block, extra, (rows[0], cols[0]),
                             image_shape, shared, shift, valid, alone)  # fmt: skip
        out[: part.shape[0]] = part
        return out

    picks = sorted(seed_of)
    regions = [
        ((starts[0][i], starts[0][i + 1]), (starts[1][j], starts[1][j + 1])) for i, j in picks
    ]
    if tiled:
        regions = [_fit_tile(*region, seed_of[b], side, (centres or {}).get(b))
                   for region, b in zip(regions, picks, strict=True)]  # fmt: skip
    # a region gives at most one sample a pixel: sample=10**9 had each task allocate 723 GiB
    held = min(per_block, max((r[1] - r[0]) * (c[1] - c[0]) for r, c in regions))
    alone = beside and len(regions) == 1  # one task: its work shared with a second thread
    # each task reads its cell or tile and the halo only, and returns its sampled rows
    samples = map_regions(tile, arr, regions, halo=fit_halo,
                          trailing=(held, n_features), dtype=np.float32,
                          name="xfskde-segment-sample",
                          token=(spec, seed, int(sample), shift),
                          shared=None if masked else foreground,
                          extra=[seed_of[b] for b in picks])  # fmt: skip
    (X,) = compute_collections([samples])
    X = X.reshape(-1, n_features)
    X = X[~np.isnan(X[:, 0])]
    if X.shape[0] < n_textures:
        _refuse_few_samples(X.shape[0], int(n_textures), arr, regions, value=nodata,
                            foreground=None if masked else foreground,
                            steps=[_grid_step(r[1] - r[0], c[1] - c[0], per_block, shift)[1]
                                   for r, c in regions], tile=side if tiled else None)  # fmt: skip
    if X.shape[0] > sample:
        X = X[rng.choice(X.shape[0], sample, replace=False)]
    change = None
    choices: dict[str, Any] = {}
    if shift:
        X, squares = X[:, : -2 * n_groups], X[:, -2 * n_groups :].reshape(-1, n_groups, 2)
        counts = {name: 0.0 if name in trial else 1.0 for name in groups}
        change = _change(squares, counts)
        if signal:
            signals = _signals(X, squares, groups, change)
            # the groups that are mostly noise here count as little in how steady a sample
            # is as they weigh in the fit: the steady samples and the S / N measured again
            recounted = signal_weights(counts, {k: v for k, v in signals.items() if k not in trial})
            if recounted != counts:
                change = _change(squares, recounted)
                signals = _signals(X, squares, groups, change)
                choices["steady"] = (
                    "samples steady in "
                    + ", ".join(f"{g} x {c:.2f}" for g, c in recounted.items() if c > 0)
                    + ": each group counted as min(1, S/N)² of the first steady samples"
                )
            if measured is not None:
                measured.update(signals)
            weighed = signals
            if trial:
                kept, choices["grey_levels"] = keeps_grey_levels(signals)
                if not kept:  # weight 0, and no say in the others' weights
                    weights = {**weights, **{name: 0.0 for name in trial}}
                    weighed = {k: v for k, v in signals.items() if k not in trial}
            weights = signal_weights(weights, weighed)
            choices["signal"] = (
                "S/N "
                + ", ".join(f"{name} {v:.2f}" for name, v in signals.items())
                + ": each weight times min(1, S/N)², over the largest of them"
            )
    if trial and "grey_levels" not in choices:  # not measured: not kept
        weights = {**weights, **{name: 0.0 for name in trial}}
    scales: dict[str, float] = {}
    for name, columns in groups.items():
        part = X[:, columns]
        mass = 1.0 if name in ("color", "bank", "lbp") else float(part.sum(axis=1).mean())
        scales[name] = weights[name] / mass if mass > 0 else weights[name]
        X[:, columns] = part * np.float32(scales[name])
    if not flat_ok:
        _refuse_too_few_distinct(X, int(n_textures))
    if method != "stable":
        endmembers = fit_endmembers(X, int(n_textures), method=method, seed=seed)
    else:
        endmembers = fit_stable_endmembers(X, change, int(n_textures), seed=seed)
    vectors = None
    if metric == "within":
        vectors = fit_within_metric(X, change, endmembers, seed=seed)
        if vectors is not None:
            endmembers, vectors, rounds = refine_by_labels(X, endmembers, vectors)
            choices["refine"] = (
                f"{rounds} rounds: endmembers and metric re-estimated from the labels of every "
                f"sample, until none changes (at most {REFINE_ROUNDS})"
            )
            windows = _sampled_windows(regions, foreground, arr.shape[:2], spec)
            endmembers, vectors, resplit = resplit_closest(
                X, endmembers, vectors, seed=seed, windows=windows
            )
            third = ", nor the two merged and a third split" if n_textures > 2 else ""
            choices["resplit"] = resplit or (
                f"none kept: no new split of the closest two textures fits the sample better"
                f"{third}, nor a part of one texture given to another"
            )
        if vectors is None:
            choices["metric"] = (
                "euclidean: the sample cannot estimate the within-texture covariance (too few "
                "pure samples)"
            )
    model = TextureModel(spec=spec, scales=scales, endmembers=endmembers, fit_method=method,
                         weights={name: float(weights[name]) for name in groups},
                         choices=choices, unmixing_vectors=vectors)  # fmt: skip
    return _without_idle(model, X, groups) if signal else model


def _sampled_windows(
    regions: Sequence[tuple[tuple[int, int], tuple[int, int]]],
    foreground: np.ndarray | None,
    shape: tuple[int, int],
    spec: FeatureSpec,
) -> float:
    """How many independent windows the fit's samples were drawn from: the pixels of the
    ``regions`` it read (of the ``foreground``, if any, over an image of ``shape``) over the
    effective area of ``spec``'s window (:attr:`xfskde.windows.Window.effective_area`, about
    4πσ² for a Gaussian). The samples lie closer than a window apart, so they are not as many
    independent ones; this is what :func:`.unmixing.resplit_closest` weighs a fall of
    log |W| by."""
    if foreground is None:
        covered = sum((r[1] - r[0]) * (c[1] - c[0]) for r, c in regions)
    else:
        covered = sum(int(mask_over(foreground, shape, r, c).sum()) for r, c in regions)
    return max(covered, 1) / Window(spec.window, spec.size).effective_area


def _change(squares: np.ndarray, counts: dict[str, float]) -> np.ndarray:
    """How much each sample's features change across it, ‖ΔF_y‖ + ‖ΔF_x‖ over the groups
    with each group's squared differences ``squares`` (n, groups, 2: along y, along x; as
    :func:`_sample_block` returns them) times its ``counts`` (0: left out)."""
    a = np.array(list(counts.values()), dtype=np.float64)
    return np.sqrt(np.einsum("ngd,g->nd", squares.astype(np.float64), a)).sum(axis=1)


def _signals(
    X: np.ndarray, squares: np.ndarray, groups: dict[str, slice], change: np.ndarray
) -> dict[str, float]:
    """Each group's S / N (:func:`.defaults.group_signal`) at the samples steady by
    ``change`` (:func:`.unmixing.stable_samples`), from its own change across them."""
    stable = stable_samples(change)
    own = np.sqrt(squares[stable].astype(np.float64)).sum(axis=-1)  # (n, groups)
    return {
        name: group_signal(X[stable, columns], own[:, i])
        for i, (name, columns) in enumerate(groups.items())
    }


def _refuse_few_samples(
    found: int,
    n_textures: int,
    arr: da.Array,
    regions: list[tuple[tuple[int, int], tuple[int, int]]],
    *,
    value: float | int | None,
    foreground: np.ndarray | None,
    steps: list[int],
    tile: int | None,
) -> None:
    """Refuse a fit whose sample holds fewer than ``n_textures`` pixels (``found``), saying how
    many pixels present (not missing, on the ``foreground``) the ``regions`` it read of ``arr``
    hold and how many its sample grid (every ``steps``-th pixel of each region) needs: the
    pixels present are counted here, a pass over those regions only."""

    def count(x: np.ndarray, *, src_origin, rows, cols, image_shape, shared=None, **_: Any):
        inner = x[rows[0] - src_origin[0] : rows[1] - src_origin[0],
                  cols[0] - src_origin[1] : cols[1] - src_origin[1]]  # fmt: skip
        present = present_pixels(np.ascontiguousarray(_unit_float(inner, value)))
        if shared is not None:
            present &= mask_over(shared, image_shape, rows, cols)
        return np.array([present.sum()], np.int64)

    counts = map_regions(count, arr, regions, halo=0, trailing=(1,), dtype=np.int64,
                         name="xfskde-segment-count", token=(value, len(regions)),
                         shared=foreground)  # fmt: skip
    (counted,) = compute_collections([counts])
    pixels, step = int(counted.sum()), max(steps)
    read = f" in the {len(regions)} tiles of {tile}² px the fit read" if tile else ""
    raise ParameterError(
        f"only {found} pixel{'s' * (found != 1)} could be sampled, fewer than n_textures = "
        f"{n_textures}: the image has {pixels} pixel{'s' * (pixels != 1)} present (not "
        f"missing, and inside the mask if one is given){read}, and the fit samples one pixel "
        f"in {step}² there, so it needs at "
        f"least about {n_textures * step * step} (n_textures × {step}²): give a larger mask, or "
        "an image with more pixels present"
    )


def _without_idle(model: TextureModel, X: np.ndarray, groups: dict[str, slice]) -> TextureModel:
    """The automatic model without the feature groups its labels do not need
    (:func:`.defaults.idle_groups` on the fit's scaled samples ``X``): their endmembers' and
    unmixing vectors' columns, scales, weights and ranges left out, so that predicting neither
    computes their votes nor reads their halo; what was measured is recorded in the model's
    ``choices`` (``groups``)."""
    dropped, changed = idle_groups(X, model.endmembers, model.unmixing_vectors, groups)
    tried = ", ".join(f"{g} {100 * changed[g]:.2f} %" for g in groups if g in changed)
    if not dropped:
        if changed:
            model.choices["groups"] = (
                f"all kept: left out, each changes the labels of more of the fit's "
                f"{X.shape[0]} samples than {100 * IDLE_SHARE:g} % ({tried})"
            )
        return model
    kept = [g for g in groups if g not in dropped]
    cols = group_columns(groups, kept)
    s = model.spec
    spec = dataclasses.replace(s, **_only_groups(kept, s.bank_ranges, s.color_ranges))
    vectors = model.unmixing_vectors
    model.choices["groups"] = (
        f"{', '.join(kept)}: {', '.join(dropped)} left out, which changes the labels of "
        f"{100 * changed[dropped[-1]]:.2f} % of the fit's {X.shape[0]} samples (at most "
        f"{100 * IDLE_SHARE:g} %; each group left out: {tried})"
    )
    return dataclasses.replace(
        model, spec=spec, endmembers=np.asarray(model.endmembers)[:, cols],
        unmixing_vectors=None if vectors is None else np.asarray(vectors)[:, cols],
        scales={g: model.scales[g] for g in kept}, weights={g: model.weights[g] for g in kept},
    )  # fmt: skip


def _only_groups(
    kept: list[str] | tuple[str, ...],
    bank_ranges: tuple[tuple[float, float], ...] | None,
    color_ranges: tuple[tuple[float, float], ...] | None,
) -> dict[str, Any]:
    """The settings of a :class:`.features.FeatureSpec` that hold only the groups ``kept``:
    those groups, and the ranges of the bank and the colour bins where they are kept."""
    return {
        "features": tuple(kept),
        "bank_ranges": bank_ranges if "bank" in kept else None,
        "color_ranges": color_ranges if "color" in kept else None,
    }


def _refuse_too_few_distinct(X: np.ndarray, n_textures: int) -> None:
    """Refuse a fit whose weighed samples take fewer distinct values than ``n_textures``:
    some endmembers would be the same vector, the textures they stand for told apart by
    nothing (k-means only warns). One value where no feature spreads over more than a
    millionth of the largest; else the values on a grid of a thousandth of it."""
    largest = max(float(np.abs(X).max()), 1e-30)
    distinct = 1
    if np.ptp(X, axis=0).max() > 1e-6 * largest:
        grid = np.round(X * np.float32(1e3 / largest))
        others = np.ones(len(grid), bool)
        first = grid[0]
        while distinct < n_textures:  # a value per pass, up to n_textures (not a sort of all)
            others &= (grid != first).any(axis=1)
            if not others.any():
                break
            first, distinct = grid[np.argmax(others)], distinct + 1
    if distinct >= n_textures:
        return
    if distinct == 1:
        raise ParameterError(
            f"the image's features are the same at all {X.shape[0]} sampled pixels (a flat "
            "image, or one too small for the window?): there are no textures to tell apart"
        )
    raise ParameterError(
        f"the image's features take only {distinct} distinct values at the {X.shape[0]} "
        f"sampled pixels, fewer than n_textures = {n_textures}: ask for at most {distinct} "
        "textures, or give a larger image"
    )


@blas_on_one_thread()  # small products and one-core tasks: BLAS's threads only wait
@_checks_the_image("segmentation")
def fit_textures(
    image: Any,
    n_textures: int,
    *,
    features: tuple[str, ...] | str = AUTO,
    window: str = "gaussian",
    size: float | str = AUTO,
    color_bins: int = 16,
    color_ranges: str = AUTO,
    angle_bins: int = 16,
    n_coefficients: int = 8,
    stride: int | str = AUTO,
    gradient_scales: tuple[float, ...] | str = AUTO,
    bank_bins: int = 11,
    weights: dict[str, float] | None = None,
    method: str = AUTO,
    resolution: int | str = AUTO,
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
    mask: Any = None,
    nodata: Nodata = "auto",
    metric: str = AUTO,
) -> TextureModel:
    """Fit the pure texture features of an image on a sample of its pixels.

    What :func:`segment` does before it labels the image, with the same parameters; every
    ``"auto"`` is decided here, by the rule of :mod:`xfskde.segmentation.defaults`, and
    recorded in the model's ``choices`` (:meth:`TextureModel.predict` then labels any image of
    the same channels with it).

    Parameters
    ----------
    image : numpy.ndarray, dask.array.Array, xarray.DataArray or PIL picture
        The image to fit on. As in :func:`segment`.
    n_textures : int
        Number of textures (at most 12).
    features : "auto" or tuple of {"color", "bank", "lbp", "hist", "fskde"}, optional
        Feature groups. As in :func:`segment`.
    window : {"gaussian", "box", "disk"}, optional
        Window φ shared by every feature. As in :func:`segment`.
    size : "auto" or float, optional
        The window's size, in pixels. As in :func:`segment`.
    color_bins : int, optional
        Histogram bins per colour channel. As in :func:`segment`.
    color_ranges : {"auto", "unit"}, optional
        The range each colour channel's bins cover. As in :func:`segment`.
    angle_bins : int, optional
        Bins of the gradient-angle histograms. As in :func:`segment`.
    n_coefficients : int, optional
        ℓ, complex FS-KDE coefficients. As in :func:`segment`.
    stride : "auto" or int, optional
        The grid the abundances are solved on, recorded in the model. As in :func:`segment`.
    gradient_scales : "auto" or tuple of float, optional
        Gradients of the ``"hist"`` and ``"fskde"`` groups. As in :func:`segment`.
    bank_bins : int, optional
        Bins per filter of the ``"bank"`` group. As in :func:`segment`.
    weights : dict, optional
        Weight per feature group. As in :func:`segment`.
    method : {"auto", "stable", "kmeans", "nmf"}, optional
        How the pure texture features are fitted. As in :func:`segment`.
    resolution : "auto" or int, optional
        Side of the cells the image is averaged over first. As in :func:`segment`.
    sample : int, optional
        Pixels sampled to fit the pure features (at least ``n_textures``). As in
        :func:`segment`.
    seed : int, optional
        Seed of the sampling and of the fit. As in :func:`segment`.
    chunks : int, optional
        Block side for the computation; the fit does not depend on it. As in :func:`segment`.
    mask : "auto", path, array or DataArray, optional
        The foreground to fit on. As in :func:`segment`.
    nodata : "auto", number or None, optional
        The value that marks missing pixels. As in :func:`segment`.
    metric : {"auto", "within", "euclidean"}, optional
        The metric of the least-squares unmixing. As in :func:`segment`.

    Returns
    -------
    TextureModel
    """
    if (
        isinstance(n_textures, bool)
        or int(n_textures) != n_textures
        or not 1 <= n_textures <= MAX_TEXTURES
    ):
        raise ParameterError(
            f"n_textures must be an integer from 1 to {MAX_TEXTURES}, got {n_textures!r}"
        )
    if isinstance(sample, bool) or int(sample) != sample or sample < n_textures:
        raise ParameterError(f"sample must be an integer >= n_textures, got {sample!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**32:
        raise ParameterError(f"seed must be an integer from 0 to 2**32 - 1, got {seed!r}")
    _check_weights(weights)
    if method not in FIT_METHODS:
        raise ParameterError(f"method must be one of {FIT_METHODS}, got {method!r}")
    if metric not in METRICS:
        raise ParameterError(f"metric must be one of {METRICS}, got {metric!r}")
    asked = metric
    auto_groups = isinstance(features, str) and features == AUTO
    signal = auto_groups and not weights  # automatic weights follow each group's signal
    # a first view of the image, to measure it: chunked for the paper's window
    first = _prepare(image, chunks, Window(window, FINE_SIZE).depth, nodata)
    arr = first.unit
    if not isinstance(size, str) or not isinstance(stride, str):
        _check_within(arr.shape[:2], window, size, stride)
    foreground = _foreground(first, mask)[0]
    feats = auto_features(arr.shape[2]) if auto_groups else features
    if isinstance(gradient_scales, str):
        if gradient_scales != AUTO:
            raise ParameterError(
                f"gradient_scales must be numbers or 'auto', got {gradient_scales!r}"
            )
        gradient_scales = AUTO_GRADIENT_SCALES if auto_groups else (0.0,)
    w = auto_weights(feats) if auto_groups else dict(DEFAULT_WEIGHTS)
    if weights:
        unknown = set(weights) - set(w)
        if unknown:
            raise ParameterError(f"weights has unknown feature groups {sorted(unknown)}")
        w.update({k: float(v) for k, v in weights.items()})
    feats = (feats,) if isinstance(feats, str) else tuple(feats)
    if weights and not any(w.get(g, 0.0) for g in feats):  # the fit blamed a flat image
        raise ParameterError(
            f"weights give every feature group of this image ({', '.join(feats)}) the weight 0: "
            "nothing is left to segment by; give at least one a positive weight"
        )
    choices: dict[str, Any] = {}
    if color_ranges not in COLOR_RANGES:
        raise ParameterError(f"color_ranges must be one of {COLOR_RANGES}, got {color_ranges!r}")
    measured = "color" in feats and color_ranges == AUTO
    unit_measured = color_ranges == AUTO and bool({"hist", "fskde"} & set(feats))
    probe = "bank" in feats or size == AUTO or measured or unit_measured
    dtype = first.raw.dtype
    tiles = (
        _probe_tiles(arr, foreground, seed, check=dtype.kind == "f", nodata=first.nodata)
        if probe
        else []
    )
    if ("bank" in feats or measured) and not tiles:
        raise ParameterError("the mask has no foreground: there is nothing to segment")
    # values far beyond the tiles' levels are refused wherever the fit reads the image: the
    # crops of the window check and the region scale, and the fit's sample
    black_white = _value_range(tiles)
    bounds = data_bounds(black_white) if _levels_checked(dtype) else None
    if bounds is not None:
        verified = _check_blocks(first.raw, first.nodata, bounds, black_white, foreground)
        arr = verified.map_blocks(_unit_float, first.nodata, dtype=np.float32)
    if auto_groups and "color" in feats and "color" not in (weights or {}):
        chroma = chroma_ratio(tiles)
        if chroma <= GREY_CHROMA:  # a grey image in colour channels: segmented as grey
            feats = auto_features(1)
            w = {**auto_weights(feats), **(weights or {})}
            choices["features"] = (
                f"{', '.join(feats)}: the image is grey in {arr.shape[2]} channels (chroma "
                f"{chroma:.3f} of its grey spread <= {GREY_CHROMA})"
            )
    grey = signal and "color" not in feats  # a grey image (one channel, or channels found grey)
    spec_args = dict(
        features=feats, window=window, color_bins=color_bins, angle_bins=angle_bins,
        n_coefficients=n_coefficients, gradient_scales=gradient_scales, bank_bins=bank_bins,
        bank_ranges=_measured_ranges(tiles) if "bank" in feats else None,
        color_ranges=channel_ranges(tiles) if "color" in feats and measured else None,
        gradient_unit=gradient_unit(tiles) if unit_measured else 1.0,
    )  # fmt: skip
    size_auto = isinstance(size, str)
    checked = None  # the groups the window check left out before the fit, and why
    if isinstance(size, str):
        if size != AUTO:
            raise ParameterError(f"size must be a number of pixels or 'auto', got {size!r}")
        extent = _extent(first, foreground)
        size, needed = _auto_size(arr, foreground, tiles, n_textures, spec_args, w, seed,
                                  choices, signal, extent)  # fmt: skip
        release_free_memory()  # what the window check's crops freed: not kept for the fit
        spec_args, checked = _with_groups(spec_args, needed)
    trial: tuple[str, ...] = ()
    if grey:  # its grey levels tried (defaults.keeps_grey_levels)
        trial = ("color",)
        levels = channel_ranges(tiles) if color_ranges == AUTO else None
        spec_args = {**spec_args, "features": ("color", *spec_args["features"]),
                     "color_ranges": levels}  # fmt: skip
    sigma = Window(window, size).sigma  # in pixels
    f = _resolution(resolution, size_auto, sigma, choices)
    if f > min(arr.shape[:2]):
        raise ParameterError(
            f"resolution {f} is larger than the image's shorter side ({min(arr.shape[:2])} px): "
            "give a resolution of at most that, or 'auto'"
        )
    if f > 1:  # the window, and a stride given in pixels, in cells of f × f pixels
        size = _equivalent_size(window, sigma / f)
        stride = stride if isinstance(stride, str) else max(1, round(stride / f))
        if spec_args["bank_ranges"] or spec_args["color_ranges"] or spec_args["gradient_unit"] != 1:
            coarse = _probe_tiles(_coarse(arr, f, chunks, mask=foreground), foreground, seed)
            spec_args = _remeasured(spec_args, coarse)
    if method == AUTO:
        wide = sigma > FINE_SIZE
        method = "stable" if wide else "kmeans"
        choices["fit"] = (
            f"{method}: the window is {'wider than' if wide else 'as narrow as'} the paper's "
            f"(sigma {FINE_SIZE:g})"
        )
    if metric == AUTO:
        metric = "within" if method == "stable" else "euclidean"
        choices["metric"] = (
            "within: the stable fit's samples give the textures' within-texture covariance"
            if metric == "within"
            else f"euclidean: the {method} fit (the within-texture metric lost Rand at sigma 6)"
        )
    narrow = size_auto and method == "stable"  # the labels through a narrower window
    labels_sigma = _labels_window(sigma / f, f, choices) if narrow else sigma / f
    if isinstance(stride, str):
        if stride != AUTO:
            raise ParameterError(f"stride must be a positive integer or 'auto', got {stride!r}")
        stride = auto_stride(labels_sigma)
        whose = "labels' window" if narrow else "window"
        choices["stride"] = f"{stride}: the {whose}'s sigma / 4"
    spec = FeatureSpec(size=size, stride=stride, **spec_args)  # the fit's window
    halo = (feature_depth(spec) + _shift(spec, method, signal, metric)) * f
    prepared = _prepare(image, chunks, halo, nodata)
    arr, value, cells, sampled = prepared.raw, prepared.nodata, None, bounds
    if f > 1:  # the cells: the coarse image's blocks for no chunks given, whatever the chunks
        raw = prepared.raw  # each pixel checked before the cells' means dilute it
        if bounds is not None:
            raw = _check_blocks(raw, prepared.nodata, bounds, black_white, foreground)
        arr, value, sampled = _coarse(raw, f, chunks, prepared.nodata, foreground), None, None
        plan = _coarse_plan(prepared.raw.shape[:2], f, None)
        cells = tuple(tuple(c // f for c in axis) for axis in plan)
    model = _fit_prepared(arr, foreground, spec, int(n_textures), w, method, sample, seed, value,
                          signal=signal, metric=metric, cells=cells, masked=f > 1,
                          trial=trial, bounds=sampled, levels=black_white,
                          beside=True)  # fmt: skip
    if asked == "within" and model.metric != "within":
        raise ParameterError(
            "metric='within' needs the within-texture covariance, which this image's sample "
            "cannot estimate (too few pixels inside one texture): give a larger sample= or "
            "metric='euclidean'"
        )
    if narrow:  # the fit's window kept as fit_size, the labels' in the spec
        labels_spec = dataclasses.replace(model.spec, size=_equivalent_size(window, labels_sigma))
        model = dataclasses.replace(model, spec=labels_spec, fit_size=spec.size)
    if checked:  # what the window check left out, then what the fit did
        fitted = model.choices.get("groups", f"{', '.join(model.spec.features)} kept")
        model.choices["groups"] = f"{checked}; then {fitted}"
    choices.update(_unit_choices(model.spec, channel_names(first.source)))
    model = dataclasses.replace(model, choices={**choices, **model.choices}, resolution=f,
                                value_range=black_white,
                                channel_levels=_channel_levels(tiles),
                                pixel_size=_pixel_size_um(first.source), seed=int(seed),
                                channels=int(first.raw.shape[2]),
                                channel_names=channel_names(first.source),
                                sample=int(sample))  # fmt: skip
    forget_spectra()  # the filters' spectra of the crops' and tiles' shapes: not the labels'
    release_free_memory()  # what the crops, tiles and features freed: not kept for the labels
    return TextureModel.from_attrs(model.attrs())  # the model its results record, exactly


def _check_weights(weights: dict[str, float] | None) -> None:
    """Refuse weights that are not finite numbers >= 0 (NaN reached scikit-learn's k-means,
    a negative weight was taken)."""
    if not weights:
        return
    values = {}
    for name, value in weights.items():
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            values[name] = math.nan
    bad = {k: weights[k] for k, v in values.items() if not (math.isfinite(v) and v >= 0)}
    if bad:
        raise ParameterError(f"weights must be finite numbers >= 0, got {bad}")


def _check_within(
    shape: tuple[int, int], window: str, size: float | str, stride: int | str
) -> None:
    """Refuse a ``size`` and ``stride`` given that do not fit the image
    (:func:`xfskde._validation.check_within_image`: ``size=1e6`` asked for petabytes, a stride
    beyond the image labelled it all one texture)."""
    step = 1 if isinstance(stride, str) else stride
    if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 1:
        raise ParameterError(f"stride must be a positive integer or 'auto', got {stride!r}")
    if not isinstance(size, str | numbers.Real) or isinstance(size, bool):  # None, [3, 4]
        raise ParameterError(f"size must be a number of pixels or 'auto', got {size!r}")
    sigma = 0.0 if isinstance(size, str) else Window(window, size).sigma
    check_within_image(tuple(shape), int(step), sigma, size, ("stride", "size"))


def _unit_choices(spec: FeatureSpec, names: tuple[str, ...] | None) -> dict[str, str]:
    """Why the model's colour ranges and gradient unit are not the paper's (``chose_...``):
    the channels binned over ranges of their own, and the unit of the gradients."""
    out = {}
    ranges = spec.color_ranges if "color" in spec.features else None
    if ranges is not None and len(set(ranges)) > 1:
        spans = [high - low for low, high in ranges]
        top = max(spans)
        narrow = [i for i, span in enumerate(spans) if span < top * (1 - 1e-9)]
        common = top if narrow else top / CHANNEL_SPAN  # else every channel is narrow
        which = ", ".join(names[i] if names else str(i) for i in narrow or range(len(ranges)))
        out["color_ranges"] = (
            f"channel(s) {which} span under {CHANNEL_SPAN:g} of the common range's "
            f"{common:.4g}: each binned over that share of it, centred on its values"
        )
    if spec.gradient_unit != 1.0 and {"hist", "fskde"} & set(spec.features):
        out["gradient_unit"] = (
            f"{spec.gradient_unit:.4g}: the span of the colour range, the image's values not "
            "being in [0, 1]: gradients read as on the image in [0, 1]"
        )
    return out


def _labels_window(sigma: float, f: int, choices: dict[str, Any]) -> float:
    """The σ (in the analysed image's cells of f × f pixels) of the window the stable fit's
    labels are drawn through, :func:`.defaults.label_window` of the fit's ``sigma``, and why,
    in ``choices``."""
    narrow = label_window(sigma)
    unit = f" cells of {f} px" if f > 1 else ""
    choices["labels"] = (
        f"sigma {narrow:g}{unit}: {LABEL_FRACTION:g} of the fit's sigma {sigma:g}, the "
        "endmembers and metric fitted at the wider window"
    )
    return narrow


def _resolution(resolution: int | str, size_auto: bool, sigma: float, choices: dict) -> int:
    """The side of the cells averaged before the features: :func:`.defaults.auto_resolution`
    when both it and the window size are chosen, 1 for a window given in pixels."""
    if isinstance(resolution, str):
        if resolution != AUTO:
            raise ParameterError(
                f"resolution must be a positive integer or 'auto', got {resolution!r}"
            )
        if not size_auto:
            return 1
        scale = choices["texture_scale_px"]
        f = auto_resolution(scale, sigma)
        choices["resolution"] = (
            f"{f}: the image averaged over {f} x {f} cells"
            if f > 1
            else "1: every pixel (the texture scale or the window is too fine to average)"
        )
        return f
    if isinstance(resolution, bool) or int(resolution) != resolution or resolution < 1:
        raise ParameterError(f"resolution must be a positive integer or 'auto', got {resolution!r}")
    return int(resolution)


def _bounded(
    arr: da.Array,
    foreground: np.ndarray | None,
    spec_args: dict[str, Any],
    sigma: float,
    rule: str,
    choices: dict[str, Any],
    scale: float,
) -> tuple[float, str]:
    """σ bounded by the regions' scale R (:func:`.defaults.region_scale`): the features at
    window σ on a grid of σ/2 over a crop of side max(512, 16σ) (at the foreground's centre),
    averaged over the cells of :func:`.defaults.auto_resolution` for texture scale ``scale``
    (the filters' ranges then measured on the averaged crop). While R stays below
    :data:`.defaults.REGION_WIDER` σ the crop held one texture, or parts of a few regions only
    (below :data:`.defaults.REGION_FLOOR` σ its features decorrelate within the window
    itself), so a crop of twice the side is measured, up to the image or
    :data:`.defaults.REGION_CROP` analysed pixels. When the largest crop is still smaller than
    the image and R stays below :data:`.defaults.REGION_FLOOR` σ, it holds no region: the
    regions are larger than it and nothing is bounded; R of the whole image bounds σ whatever
    its value."""
    if sigma <= FINE_SIZE:
        return sigma, rule
    window, f = spec_args["window"], auto_resolution(scale, sigma)
    side = max(512, int(16 * sigma))
    while True:
        region = _region_scale(arr, foreground, spec_args, window, sigma, f, side)
        whole = side >= max(arr.shape[:2]) or side * 2 > REGION_CROP * f
        if region >= REGION_WIDER * sigma or whole:
            break
        side *= 2
    choices["region_scale_px"] = round(region, 1) if np.isfinite(region) else "inf"
    crop = "x".join(str(min(side, n)) for n in arr.shape[:2])  # the crop is within the image
    if region < REGION_FLOOR * sigma and side < max(arr.shape[:2]):
        rule = (
            f"{rule}; no region boundary in a {crop} px crop (region scale {region:.0f} px "
            f"< {REGION_FLOOR:g} sigma): not bounded"
        )
        return sigma, rule
    bounded = bounded_window(sigma, region)
    if bounded < sigma:
        rule = (
            f"{rule}, bounded by the region scale {region:.0f} px (crop {crop} px) / "
            f"{REGION_FRACTION:g}: sigma {bounded:g}"
        )
    return bounded, rule


def _region_scale(
    arr: da.Array,
    foreground: np.ndarray | None,
    spec_args: dict[str, Any],
    window: str,
    sigma: float,
    f: int,
    side: int,
) -> float:
    """R (px) of :func:`.defaults.region_scale` on a central crop of ``side`` pixels averaged
    over f × f cells, with the features at window σ on a grid of σ/2."""
    crop = _crop(arr, foreground, side, f)
    if f > 1:
        spec_args = _remeasured(spec_args, [crop])
    spec = FeatureSpec(size=_equivalent_size(window, sigma / f), stride=1, **spec_args)
    depth = feature_depth(spec)
    block = np.pad(crop, ((depth, depth), (depth, depth), (0, 0)), constant_values=np.nan)
    spacing = max(1, round(sigma / f / 2))
    rows = np.arange(0, crop.shape[0], spacing) + depth
    cols = np.arange(0, crop.shape[1], spacing) + depth
    # one block, computed by this thread alone: its work shared with a second (bit for bit)
    groups = grid_features(block, spec, rows, cols, beside=True)
    features = np.concatenate(list(groups.values()), axis=-1)
    # a sample at a missing pixel (outside the mask) is no texture: the features of its window
    # (zero, or its present neighbours' renormalised) read as one wide region (a 128² patch of
    # texture in a crop of 512² otherwise missing: R 75 px, where alone it is 20)
    here = np.isfinite(block[np.ix_(rows, cols)]).all(axis=-1)
    features[~here] = np.nan
    return region_scale(features, spacing) * f


def _with_groups(
    spec_args: dict[str, Any], needed: tuple[str, ...] | None
) -> tuple[dict[str, Any], str | None]:
    """``spec_args`` with the feature groups the window check's labels need only (``needed``,
    from :func:`_auto_size`; None: all), their ranges with them, and why (None where none is
    left out).

    Each of the check's two fits leaves out the groups its own labels do not need
    (:func:`.defaults.idle_groups`); where they were fitted on the whole image (with a mask
    too: outside it the crop is missing pixels, which they do not sample), or on a tile of
    each of its quadrants (an image larger than their crop, since 2026-12-01), a group that
    neither needs is not computed by the fit either. Measured on the 23 colour images of the
    benchmark's dead leaves (16–128 px bars) and random textures (512² and Table 1's 256²):
    every group the full fit kept was kept by one of the check's fits (the bank, half of a
    block's time, left out of the fit of six of them). Not on a crop of a larger image: where
    the crop held one texture, the fits split it by colour alone, and the fit without the
    gradients could not tell apart two textures of the same colours in other orientations
    (Rand 0.9987 -> 0.7499 on such a 2048² image)."""
    features = tuple(spec_args["features"])
    if needed is None or set(features) <= set(needed):
        return spec_args, None
    kept = tuple(g for g in features if g in needed)
    left = [g for g in features if g not in needed]
    why = (
        f"{', '.join(left)} left out before the fit: the labels of neither of the window "
        f"check's fits (sigma {FINE_SIZE:g} and {CHECK_SIZE:g}) needed "
        f"{'it' if len(left) == 1 else 'them'}"
    )
    ranges = _only_groups(kept, spec_args["bank_ranges"], spec_args["color_ranges"])
    return {**spec_args, **ranges}, why


def _extent(prepared: _Prepared, foreground: np.ndarray | None) -> tuple[int, int]:
    """The (height, width) in pixels of the box that holds an image's foreground: that of the
    mask's pixels, or, for an image held in memory that can have missing pixels, that of its
    pixels present; else the image's shape (finding the missing pixels of an image on disk
    would read it whole). The window's upper bound (:func:`.defaults.scale_window`) is a
    share of it: a 128² patch of texture in a 768² image without data around it is as small
    as the same patch alone, whose window that bound keeps narrow."""
    arr = prepared.raw
    height, width = arr.shape[:2]
    if foreground is not None:
        mask = np.asarray(foreground, bool)
        across, down = mask.any(axis=1), mask.any(axis=0)
    elif _every_pixel_present(arr.dtype, prepared.nodata):
        return height, width
    elif prepared.kind == "numpy" or (
        prepared.kind == "dataarray" and not isinstance(prepared.source.data, da.Array)
    ):
        present = prepared.unit.map_blocks(present_pixels, drop_axis=2, dtype=bool)
        across, down = dask.compute(present.any(axis=1), present.any(axis=0),
                                    scheduler="threads")  # fmt: skip
    else:
        return height, width
    rows, cols = np.flatnonzero(across), np.flatnonzero(down)
    if not rows.size:
        return height, width
    my, mx = len(across), len(down)
    spans = (
        math.ceil((rows[-1] + 1) * height / my) - (rows[0] * height) // my,
        math.ceil((cols[-1] + 1) * width / mx) - (cols[0] * width) // mx,
    )
    return min(height, int(spans[0])), min(width, int(spans[1]))


def _auto_size(
    arr: da.Array,
    foreground: np.ndarray | None,
    tiles: list[np.ndarray],
    n_textures: int,
    spec_args: dict[str, Any],
    weights: dict[str, float],
    seed: int,
    choices: dict[str, Any],
    signal: bool = False,
    extent: tuple[int, int] | None = None,
) -> tuple[float | int, tuple[str, ...] | None]:
    """The window size of the rule in :mod:`.defaults`: from the texture scale λ of the tiles
    and the ``extent`` of the foreground (:func:`_extent`; by default the image's shape),
    unless, for colour images, a crop's labels at the paper's σ = 6 agree with those at
    σ = 12 (both fitted by k-means, their groups weighed by their signal with ``signal``; on
    an image larger than the crop, fitted on a tile of each quadrant of the image, as many
    pixels in all as the crop, placed where the quadrant holds the most of the ``foreground``
    or of the pixels present where the crop misses some (:func:`_placed_tiles`): a central
    crop can hold fewer textures than ``n_textures``, which both fits then split along
    whatever varies there, and they disagree). With
    ``signal``, also the feature groups that the labels of either of those two fits need
    when they were fitted on the whole image or on its quadrants' tiles (None otherwise,
    and when there was no check): :func:`_with_groups`. The
    check's figures are those of the crop's pixels present (on the foreground), which both
    fits label."""
    window = spec_args["window"]
    scale = texture_scale(tiles)
    extent = extent or arr.shape[:2]
    sigma = scale_window(scale, extent)
    choices["texture_scale_px"] = round(scale, 2)
    bound = "min(H, W)"
    if tuple(extent) != arr.shape[:2]:
        bound = f"min of the foreground's extent {extent[0]}x{extent[1]} px"
    rule = (
        f"sigma {sigma:g} from the texture scale {scale:.2f} px: 8 x scale within "
        f"[8, {bound} / 12 = {min(extent) / 12:.1f}], at least {FINE_SIZE:g}"
    )
    if "color" not in spec_args["features"]:
        sigma, rule = _bounded(arr, foreground, spec_args, sigma, rule, choices, scale)
        choices["size"] = rule
        return _equivalent_size(window, sigma), None
    # labelled as what it is: a crop of a few rows or columns would otherwise be refused as
    # an array whose channels might come first (a 3 x 500 RGB image)
    crop = xr.DataArray(_crop(arr, foreground), dims=("y", "x", "c"))

    signals: dict[float, dict[str, float]] = {FINE_SIZE: {}, CHECK_SIZE: {}}  # S / N per group

    # a crop of part of the image may hold fewer textures than n_textures, which both fits
    # then split along whatever varies there, and disagree: their sample is drawn from a
    # tile of each quadrant of the image instead, as many pixels in all as the crop
    # (:func:`_fit_prepared`'s ``read``: four 256² tiles for a 512² crop), and their labels
    # compared on the crop. The tiles lie at random where the crop has every pixel; where
    # it misses some (outside a mask, or missing data) each lies where its quadrant holds the
    # most of the foreground or of the pixels present (since 2026-12-02; the crop was kept
    # there before, and held fewer textures on a slide than on the whole section), and the
    # quadrants holding none are not read
    spread = crop.shape[:2] != arr.shape[:2]
    quadrants = tuple((n // 2, n - n // 2) for n in arr.shape[:2])
    centres = None
    if spread and (foreground is not None or not present_pixels(crop).all()):
        # the pixels present of an image without a mask: one more pass over it, as
        # :func:`_crop` makes where its central crop holds nothing
        where = foreground if foreground is not None else _presence(arr)
        centres = _placed_tiles(where, arr.shape[:2], quadrants, crop[..., 0].size)

    def fitted(spec: FeatureSpec, candidate: float, tiles: bool) -> TextureModel:
        if tiles:
            halo = feature_depth(spec) + _shift(spec, "kmeans", signal)
            view, where, read = _prepare(arr, None, halo, None).raw, foreground, crop[..., 0].size
        else:
            view, where, read = _prepare(crop, None, feature_depth(spec), None).raw, None, None
        return _fit_prepared(view, where, spec, n_textures, weights, "kmeans", 5000, seed, None,
                             signal=signal, flat_ok=True, measured=signals[candidate],
                             read=read, cells=quadrants if tiles else None,
                             centres=centres if tiles else None)  # fmt: skip

    def labelled(candidate: float) -> tuple[np.ndarray, tuple[str, ...], bool]:
        spec = FeatureSpec(size=_equivalent_size(window, candidate), stride=1, **spec_args)
        try:
            model, tiles = fitted(spec, candidate, spread), spread
        except ParameterError:  # the tiles missed the data (a thin strip of it): the crop
            model, tiles = fitted(spec, candidate, False), False
        return np.asarray(model.predict(crop, nodata=None)), model.spec.features, tiles

    # the crop is one block, one task: the two windows' fits and labels run side by side (BLAS
    # on one thread, the whole fit's: blas_on_one_thread)
    with ThreadPoolExecutor(2) as pool:
        labels, kept, tiled = zip(*pool.map(labelled, (FINE_SIZE, CHECK_SIZE)), strict=True)
    # the groups either fit needed, where it was fitted on the whole image or on tiles of its
    # quadrants: a crop of part of it may hold one texture, which the fits split along
    # whatever varies there (outside a mask the crop is missing pixels, which the fits do not
    # sample) (without signal the fits leave no group out)
    whole = signal and (crop.shape[:2] == arr.shape[:2] or all(tiled))
    # nor where no group's signal was measured by either fit (each S / N 0 or infinite: the
    # stable samples all alike, as on an image blank but for a corner of texture, where the
    # fits kept one group by chance, and the fit with it alone drew one label everywhere)
    whole = whole and any(0 < v < math.inf for fit in signals.values() for v in fit.values())
    needed = tuple(g for g in spec_args["features"] if any(g in k for k in kept)) if whole else None
    # on the crop's pixels present only: outside a mask, or at missing pixels, both label
    # BACKGROUND, which would count as agreement and draw the same edge in both
    present = (labels[0] != BACKGROUND) & (labels[1] != BACKGROUND)
    agreement = rand_index(labels[0][present], labels[1][present])
    fine, check = (boundary_share(lab, present) for lab in labels)
    ratio = fine / check if check > 0 else (1.0 if fine == 0 else math.inf)
    choices["size_agreement"] = round(float(agreement), 4)
    choices["size_boundaries"] = round(ratio, 3)
    compared = f"sigma {FINE_SIZE:g} and {CHECK_SIZE:g}"
    if all(tiled):
        compared += (
            f" (fitted on tiles across the image, compared on a {crop.shape[0]}x"
            f"{crop.shape[1]} px crop)"
        )
    if agreement >= AGREEMENT and ratio <= BOUNDARY_RATIO:
        sigma = FINE_SIZE
        choices["size"] = (
            f"sigma {FINE_SIZE:g}: labels at {compared} agree (Rand {agreement:.3f} >= "
            f"{AGREEMENT}) and draw alike boundaries ({ratio:.2f} <= {BOUNDARY_RATIO} times)"
        )
    else:
        sigma, rule = _bounded(arr, foreground, spec_args, sigma, rule, choices, scale)
        why = (
            f"disagree: Rand {agreement:.3f}"
            if agreement < AGREEMENT
            else f"agree, but sigma {FINE_SIZE:g} draws {ratio:.2f} times the boundaries"
        )
        choices["size"] = f"{rule} (labels at {compared} {why})"
    return _equivalent_size(window, sigma), needed


#: The settings of :func:`segment` that are the fit's: with ``model=`` they are the model's.
_FIT_SETTINGS = ("features", "window", "size", "color_bins", "color_ranges", "angle_bins",
                 "n_coefficients", "stride", "gradient_scales", "bank_bins", "weights", "method",
                 "resolution", "sample", "seed", "metric")  # fmt: skip


def _refuse_fit_settings(given: dict[str, Any]) -> None:
    """Refuse settings of the fit (:data:`_FIT_SETTINGS`) given to :func:`segment` beside a
    ``model``, other than their defaults: the labels follow the model's own, and a ``size``
    or ``seed`` passed with it was ignored without a word."""
    defaults = inspect.signature(segment).parameters
    other = [f"{name}={given[name]!r}" for name in _FIT_SETTINGS
             if given[name] is not defaults[name].default
             and not _same_setting(given[name], defaults[name].default)]  # fmt: skip
    if other:
        raise ParameterError(
            f"{', '.join(other)} cannot be given with model=: the fit's settings are the "
            "model's (drop them, or drop model= to fit a new model)"
        )


def _same_setting(value: Any, default: Any) -> bool:
    """Whether a setting given equals its default (a tuple for a list, 6 for 6.0)."""
    try:
        return bool(value == default) if not isinstance(value, list) else tuple(value) == default
    except (TypeError, ValueError):
        return False


@_checks_the_image("segmentation")
def segment(
    image: Any,
    n_textures: int,
    *,
    features: tuple[str, ...] | str = AUTO,
    window: str = "gaussian",
    size: float | str = AUTO,
    color_bins: int = 16,
    color_ranges: str = AUTO,
    angle_bins: int = 16,
    n_coefficients: int = 8,
    stride: int | str = AUTO,
    gradient_scales: tuple[float, ...] | str = AUTO,
    bank_bins: int = 11,
    weights: dict[str, float] | None = None,
    method: str = AUTO,
    resolution: int | str = AUTO,
    sample: int = 20000,
    seed: int = 0,
    chunks: int | None = None,
    model: TextureModel | None = None,
    return_model: bool = False,
    mask: Any = None,
    nodata: Nodata = "auto",
    match_levels: bool | str = False,
    metric: str = AUTO,
) -> Any:
    """Segment an image into textures by unmixing local features (ORTSEG, section 5.3).

    Local histograms (colour, filter-bank responses, gradient angles) and cos^2K FS-KDEs of
    gradients (eqs. 1, 4-8; not canonicalised, so textures that differ only in orientation stay
    apart) are computed with one window; pure texture features are fitted once on a sample of
    pixels; every pixel's abundances (non-negative, summing to one) come from exact
    fully-constrained least squares, block by block, and its label is the texture of largest
    abundance.

    With no other argument every setting is chosen from the image by the rule of
    :mod:`xfskde.segmentation.defaults` (feature groups by the number of channels, the window
    from the texture's scale, the stride from the window, endmembers fitted away from
    boundaries), and the choices are recorded in the result's attrs (``chose_*``). The paper's
    ORTSEG is ``features=("color", "fskde"), size=6, stride=1, method="kmeans",
    color_ranges="unit"``.

    Parameters
    ----------
    image : numpy.ndarray, dask.array.Array, xarray.DataArray or PIL picture
        ``(y, x)`` or ``(y, x, c)`` (DataArrays by dim name; a PIL picture, or anything else
        NumPy reads, as :func:`xfskde.local_fskde` reads it), of any dtype: integers are
        divided by their dtype's maximum, floats read as they are, but for DataArrays of floats
        that still hold stored integers (an RGBA image's colour as
        :func:`xfskde.open_image` reads it, rioxarray's ``masked=True``), divided by that
        integer dtype's maximum (recorded as ``input_integer_dtype``); the features' ranges are
        measured on the image (``color_ranges``, the filter bank's). An array with no fewer
        channels than rows or columns is refused (a ``(c, y, x)`` array, as tifffile reads a
        multichannel TIFF: ``np.moveaxis(image, 0, -1)``, or a DataArray with named dims).
    n_textures : int
        Number of textures (at most 12).
    features : "auto" or tuple of {"color", "bank", "lbp", "hist", "fskde"}, optional
        Feature groups (see :mod:`xfskde.segmentation.features`). ``"auto"``: the filter bank,
        the local binary patterns and the FS-KDE on grey images; colour, the bank and the
        FS-KDE on images of two channels or more whose colour goes beyond their grey
        (:mod:`xfskde.segmentation.defaults`). ``("color",)`` is the basic ORTSEG,
        ``("color", "hist")`` the histogram baseline, ``("color", "fskde")`` ORTSEG-FS-KDE.
    window : {"gaussian", "box", "disk"}, optional
        Window φ shared by every feature.
    size : "auto" or float, optional
        Gaussian sigma, box side or disk radius, in pixels; ``"auto"`` chooses it from the
        texture's scale (:mod:`xfskde.segmentation.defaults`) and, for the stable fit, draws
        the labels through a window of 0.7 times it (:func:`.defaults.label_window`; the
        model's ``fit_size`` is the fit's). A size given is the window of both.
    color_bins : int, optional
        Histogram bins per colour channel.
    color_ranges : {"auto", "unit"}, optional
        The range each colour channel's bins cover: ``"auto"`` measures it at fit time on the
        texture-scale tiles (:func:`.defaults.channel_ranges`, recorded in the attrs'
        ``color_ranges``): [0, 1] for an image whose values lie in it and whose 99.9th
        percentile reaches 0.5, else one range for every channel, from min(0, its 0.1th
        percentile) (the 0.1th percentile itself when that lies farther above 0 than the values
        span) to its 99.9th percentile (all channels pooled), and a channel spanning
        less than a quarter of that over a quarter of it, centred on its values; so that 12-bit
        data in uint16, floats in any unit and dim channels are binned over the values they
        hold. ``"unit"``: [0, 1] for every channel, the paper's (8-bit images fill it).
    angle_bins : int, optional
        Bins of the gradient-angle histograms over (-π, π].
    n_coefficients : int, optional
        ℓ, complex FS-KDE coefficients (the sharpest cos^2K kernel of that length at ε = 1e-5).
    stride : "auto" or int, optional
        The abundances are solved at the pixels ``i * stride + (stride - 1) // 2`` of the image
        and interpolated bilinearly to every pixel in between (1: at every pixel, exactly;
        ``"auto"``: the sigma of the window the labels are drawn through / 4, at least 1,
        :func:`.defaults.auto_stride`: 0.7 times the fit's for the stable fit with ``size``
        chosen, in the analysed image's cells when ``resolution`` is above 1).
    gradient_scales : "auto" or tuple of float, optional
        Gradients of the ``"hist"`` and ``"fskde"`` groups: 0 the paper's central differences,
        s > 0 Gaussian derivatives of σ = s px. ``"auto"``: (0,) (measured: scales 1, 2, 4 did
        worse, :data:`.defaults.AUTO_GRADIENT_SCALES`).
    bank_bins : int, optional
        Bins per filter of the ``"bank"`` group (their ranges are measured on the image).
    weights : dict, optional
        Weight per group, e.g. ``{"fskde": 1.0}``; default :func:`.defaults.auto_weights` with
        ``features="auto"``, else :data:`DEFAULT_WEIGHTS`.
    method : {"auto", "stable", "kmeans", "nmf"}, optional
        How the pure texture features are fitted: ``"stable"`` k-means on the samples away
        from texture boundaries (:func:`.unmixing.fit_stable_endmembers`), ``"kmeans"`` /
        ``"nmf"`` on every sample (:func:`.unmixing.fit_endmembers`), ``"auto"`` the stable
        fit for windows wider than the paper's σ = 6, k-means at σ = 6 (the rule of
        :mod:`xfskde.segmentation.defaults`).
    resolution : "auto" or int, optional
        The features of coarse textures are computed on the image averaged over cells of
        ``resolution`` × ``resolution`` pixels (the window and stride then in cells), and each
        cell's label given to its pixels. ``"auto"``: ⌊λ / 4⌋ at most ⌊σ / 8⌋ when the
        window size is chosen too (:func:`.defaults.auto_resolution`), else 1 (every pixel).
    sample : int, optional
        Pixels sampled (from at most 16 random cells of the image's own grid, whatever its
        chunks) to fit the pure features.
    seed : int, optional
        Seed of the sampling and of the fit.
    chunks : int, optional
        Block side for the computation; NumPy inputs default to 512 (1024 for images of
        64 Mpx, 8192², or more: :func:`feature_chunk`), Dask inputs keep theirs unless they
        are over 1024 on a side (then cut as NumPy inputs are: a block's feature planes cost
        memory, and one large block is one thread). Neither the fit nor the labels depend on
        it.
    model : TextureModel, optional
        Use these fitted pure features instead of fitting. The labels then follow the model's
        own settings: ``features`` through ``seed`` (the signature's order) and ``metric``
        are the fit's, and one given other than its default beside a model is refused.
    return_model : bool, optional
        Also return the :class:`TextureModel`.
    mask : "auto", path, array or DataArray, optional
        The foreground to segment (:mod:`xfskde.masks`: ``"auto"`` finds tissue or signal, a
        path names a mask image, an array, DataArray or nested list of rows
        (``[[False, True], ...]``) covers the image's extent at any resolution): blocks beyond
        the window's reach of any foreground are neither read nor computed, pixels outside it
        are missing pixels to the fit and to the labels (they vote for nothing; the windows
        are renormalised to the foreground, so what lies outside changes nothing inside) and
        get the label :data:`BACKGROUND`.
    nodata : "auto", number or None, optional
        The value that marks missing pixels (a pixel whose every channel equals it): ``"auto"``
        reads it from a DataArray's metadata as :func:`xfskde.local_fskde` does, None uses every
        pixel. Missing pixels, and pixels with a NaN channel, vote for no feature (nor do the
        gradients whose stencils touch them) and get the label :data:`BACKGROUND`. A float
        (or 32-bit integer) image holding a value far beyond its levels — a marker its
        metadata do not name, as -9999 in an image in [0, 1] — is refused, the value named
        (:func:`.defaults.data_bounds`).
    match_levels : bool or "channels", optional
        With ``model``: map the image's black and white levels onto the model's first
        (:meth:`TextureModel.predict`), for an image of another exposure or stain intensity;
        ``"channels"``: each channel's onto the same channel's, for fluorescence.
    metric : {"auto", "within", "euclidean"}, optional
        The metric of the least-squares unmixing: ``"euclidean"`` the paper's; ``"within"``
        the textures' within-texture covariance, estimated on the fit's sample
        (:func:`.unmixing.fit_within_metric`: directions in which a texture's features vary
        within it count less), it and the endmembers then re-estimated from the labels they
        give the sample (:func:`.unmixing.refine_by_labels`); ``"auto"`` within-texture with
        the stable fit, Euclidean with k-means or NMF (the rule of
        :mod:`xfskde.segmentation.defaults`).

    Returns
    -------
    labels : numpy.ndarray, dask.array.Array or xarray.DataArray of uint8, shape (y, x)
        Textures 1 .. n_textures (the arg-max abundance; texture i is row i - 1 of the
        model's endmembers) and :data:`BACKGROUND` = 0 outside ``mask``, as scikit-image's
        segmentations, napari's label layers and OME-NGFF label images number them. Following
        the input kind; a DataArray keeps the spatial dims and coords and carries the
        parameters as attrs, and the background label as its ``nodata`` attr (rioxarray's
        ``labels.rio.nodata``, which ``rio.to_raster`` writes; xarray keeps the labels uint8
        through netCDF-4 and Zarr, as it would not with a ``_FillValue``; netCDF-3, scipy's
        engine, has no unsigned bytes and gives them back as int8).
    model : TextureModel
        Only with ``return_model=True``.
    """
    if match_levels and model is None:
        raise ParameterError(
            "match_levels maps the image's levels onto those of a given model: pass model= (a "
            "model fitted on this image has its levels already)"
        )
    if model is not None:
        _refuse_fit_settings(locals())
    mask = _made_once(image, mask, chunks, nodata)
    if model is None:
        model = fit_textures(
            image, n_textures, features=features, window=window, size=size,
            color_bins=color_bins, color_ranges=color_ranges, angle_bins=angle_bins,
            n_coefficients=n_coefficients,
            stride=stride, gradient_scales=gradient_scales, bank_bins=bank_bins, weights=weights,
            method=method, resolution=resolution, sample=sample, seed=seed, chunks=chunks,
            mask=mask, nodata=nodata, metric=metric,
        )  # fmt: skip
        labels = _apply(image, model, "labels", chunks, mask, nodata, fitted_here=True)
    elif model.n_textures != n_textures:
        raise ParameterError(f"model has {model.n_textures} textures, n_textures is {n_textures}")
    else:
        labels = model.predict(image, chunks=chunks, mask=mask, nodata=nodata,
                               match_levels=match_levels)  # fmt: skip
    return (labels, model) if return_model else labels
