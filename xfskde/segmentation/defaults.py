"""The rule that chooses segmentation's settings from the image (``segment(image, n)``).

Every choice below is made when a model is fitted, recorded in the result's attrs
(``choices``), and measured in ``docs/segmentation.md`` on images the rule was not tuned on.

Feature groups (:func:`auto_features`)
    The spectral histograms of the filter bank (``"bank"``) for the grey structure every
    texture has; the colour histograms (``"color"``) when the image has two channels or more
    and colour beyond their grey (:func:`chroma_ratio` above :data:`GREY_CHROMA`: a grey image
    stored as RGB, or one channel shown through a linear colour map, is segmented as grey; its
    colour histograms would repeat the bank's intensity and outweigh it: eight held-out mosaics
    of real grey textures stored as RGB scored 0.70 with them, 0.946 without);
    on a grey image the colour group of its one channel, its grey levels, is tried and kept
    when they tell the textures apart far beyond what the bank sees (:func:`keeps_grey_levels`:
    regions of flat grey, whose only structure is their boundaries);
    on grey images the local histograms of rotation-invariant uniform local binary patterns
    (``"lbp"``, since 2026-11-30), whose codes no increasing map of the grey levels changes
    (the photographs' shading and contrast): the 30 tuning mosaics 0.9240 -> 0.9489 at 512²
    (below 0.95: 16 -> 10) and 0.9456 -> 0.9712 at 1024² (10 -> 1); not on colour images,
    where they cost random textures and colour dead leaves 0.003-0.005 at 1024² and 2048²
    (random textures 2048² 0.9933 -> 0.9884, a window twice as wide chosen for one);
    the cos^2K FS-KDE of the paper's central-difference gradients (``"fskde"``) for orientation,
    at a fifth of the groups' summed weights (:func:`auto_weights`, :data:`FSKDE_SHARE`): 0.5
    beside the bank and the local binary patterns on grey images (0.25 beside the bank alone
    before them), 0.5 beside the bank and colour. On six held-out mosaics of
    real grey textures (first bank) the FS-KDE alone scored 0.893 Rand and the two together
    0.940; at weight 1 the FS-KDE's planes outweighed the bank (0.900). On colour dead leaves a
    fixed 0.25 left the FS-KDE an eighth of the weight: Table 1's images 0.971 (0.980 at 0.5),
    four 512² images of seeds 100-103 0.917 with one at 0.772 (0.981 at 0.5, worst 0.979), while
    random textures kept their score at 0.5 (0.965 / 0.972 against 0.964 / 0.972) and lost at 1
    (0.953 / 0.969).
Colour ranges (:func:`color_range`)
    The colour histograms' bins cover [0, 1], the paper's, for images whose values lie in it
    and reach at least half of it (:data:`UNIT_WHITE`: 8-bit and full-range 16-bit images,
    floats in [0, 1]); any other image's bins cover [min(0, black), white] (its 0.1th and
    99.9th percentiles over all channels): 12-bit data in uint16, whose values end at 0.0625 of
    the dtype's range (random textures 256²: 0.845 Rand with [0, 1] bins, 0.944 as floats in
    [0, 1]), and floats in camera or reflectance units (0-4095: 0.647). The same range for
    every channel, a white level, as [0, 1] is: measuring each channel's own 1st-99th
    percentiles instead spreads every channel over all 16 bins, which changed the balance of
    the groups on H&E mosaics (tuning seeds: 0.929 / 0.932 with [0, 1], 0.920 / 0.917 with each
    channel's range, 0.928 / 0.918 with [0, max]), so images that fill [0, 1] keep it.
    But a channel whose own 0.1th-99.9th percentiles span less than :data:`CHANNEL_SPAN` of
    that common range (under 4 of its 16 bins) is binned over that share of it, centred on
    its values (:func:`channel_ranges`): the blue band of a scene in reflectance (0.02-0.06)
    beside its near infrared (0.25-0.55), a dim fluorescence channel beside a bright one.
    Random textures 512² (seeds 100-105) as four bands of such reflectances, in uint16 ×
    10 000 / in float: 0.972 / 0.961 with the common range, 0.980 / 0.981 with this; as counts
    of gains 1 : 0.1 : 0.01 0.962 → 0.974 (with a fourth channel of camera noise alone 0.957
    → 0.973); a channel of noise beside equal gains 0.9783 → 0.9782. Each narrow channel over
    its own percentiles instead (bins as fine as its span makes them): 0.978 / 0.978, 0.974,
    0.969, 0.9781. No channel of an 8-bit colour image measured spans less than half of
    [0, 1] (scikit-image's IHC, astronaut, coffee, chelsea, random textures, dead leaves, the
    synthetic slide: 0.53-1.0): those keep the common range.
Weights from the signal (:func:`group_signal`, :func:`signal_weights`)
    With the automatic groups, each group's S / N is measured on the fit's sample (the spread
    of its features between samples over its noise within textures; each sample's neighbours
    1.5σ away give its noise, for the k-means fit at σ = 6 as for the stable fit) and its
    weight multiplied by min(1, S / N)²: colour on dead leaves, whose bars all draw their
    colours from one distribution, falls to 0.1-0.2, and so does the FS-KDE on random
    textures, whose disks have no orientation; the groups of real-texture mosaics keep their
    weights (on 23 of the 24 held-out mosaics). The S / N are recorded (``chose_signal``).
Window size (:func:`texture_scale`, :func:`scale_window`)
    λ, the lag at which the mean radial autocorrelation of grey tiles drops to 1/e, measures
    how large the texture's elements are; the window's σ is 8λ, within [8, min(H, W) / 12]
    (a window must hold several elements to see their statistics, and no more than a small
    part of the image). Colour textures often separate through a much smaller window than
    their elements' size suggests (random textures of 256²: λ ≈ 9 px, σ = 21 scores 0.85, the
    paper's σ = 6 scores 0.97), so for images with the colour group a crop of at most 512² is
    segmented at σ = 6 and at σ = 12 (on an image larger than the crop, both fitted on a
    256² tile of each of its quadrants, where the quadrant holds the most foreground when
    the crop misses pixels: a central crop can hold fewer textures than asked for, which
    both fits then split, and they disagree) and, when the labels agree (Rand
    index >= 0.9, :data:`AGREEMENT`) and the wider window removes few of the finer one's
    boundaries (:func:`boundary_share`, at most :data:`BOUNDARY_RATIO` times as many at
    σ = 6), the finer window is kept. Grey images skip
    the check: there both windows can agree on the same wrong answer (4 of 6 held-out mosaics,
    0.67-0.73 at σ = 6 against 0.92-0.97 at 8λ). So can colour ones whose regions are made of
    coarser elements, as tissue is of glands, lumen and fat (mosaics of H&E tiles: σ = 6
    follows the elements; doubling the window there removes 25-62 % of the boundaries it
    draws, on random textures and dead leaves 1-17 %).
Bounded by the regions (:func:`region_scale`)
    A window wider than the regions mixes them everywhere. R, the lag at which the
    autocorrelation of the local features (at the chosen window, on a crop) falls to 1/e,
    measures how far one texture's features stay alike; the window's σ is at most R / 5
    (:data:`REGION_FRACTION`). On the tuning mosaics R/σ was 4.8-5.8 for Voronoi and stripe
    layouts (kept) and 2.9-3.5 for blobs, whose narrow regions scored 0.66-0.87 at σ = 8λ.
    A crop whose R reads below :data:`REGION_WIDER` (3) σ holds one texture, or parts of a
    few regions, and is measured again at twice the side: held-out mosaics at 1024² 0.9757 ->
    0.9795 (none below 0.95), at 2048² 0.9850 -> 0.9888.
Labels' window (:func:`label_window`)
    With the stable fit the labels are drawn through a window of :data:`LABEL_FRACTION` (0.7)
    times the fit's σ. The fit needs the wider window: its steady samples, the textures' means
    and their within-texture covariance (fitted at 0.7σ instead, the 24 tuning mosaics without
    perspective lost 0.009 Rand, one stripe layout 0.951 -> 0.856); the labels' boundaries
    follow the regions' more closely in the narrower one (on the 24 held-out mosaics without
    perspective 72 % of the wrong pixels lay within 0.5σ of a true boundary, 90 % or more on
    14 of them). The
    endmembers are the textures' means, which do not depend on the window, so the fitted
    model holds at either. Chosen on the tuning mosaics
    (0.6 / 0.7 / 0.8 / 1: Voronoi 0.965 / 0.966 / 0.965 / 0.963, stripes 0.949 / 0.949 / 0.948
    / 0.944, blobs 0.875 / 0.879 / 0.880 / 0.879), measured on held-out images in
    ``docs/segmentation.md``.
Stride (:func:`auto_stride`)
    The abundances are smooth at the window's scale, so they are solved every σ / 4 pixels (of
    the labels' window) and interpolated in between.
Resolution (:func:`auto_resolution`)
    Coarse textures are analysed on a coarser image: the input averaged over f × f cells,
    f = min(⌊λ / 4⌋, ⌊σ / 8⌋) (at least four cells per texture element, eight per window σ),
    the window and stride divided by f, the labels repeated back to every pixel. Dead leaves
    with 64- and 128-px bars (λ 9.5-19 px): the same Rand (0.971-0.975 against 0.970-0.977)
    in 1/4 to 1/20 of the time. Real grey textures lose their fine structure when averaged
    (held-out mosaics at f = ⌊σ / 8⌋ = 2-3, λ ≈ 3.7: 0.67-0.85 against 0.89-0.95), hence the
    bound by λ: there f = 1.
Endmembers
    With a window wider than the paper's, fitted on the pixels away from boundaries
    (:func:`.unmixing.fit_stable_endmembers`): a wide window makes wide bands of mixed
    features along every boundary, which plain k-means spends clusters on (held-out mosaics:
    0.91 against 0.75 Rand). At σ = 6 the bands are narrow and the features noisier than
    their change across a region, so plain k-means on every sampled pixel is kept (dead
    leaves 256²: 0.95-0.97 against 0.73-0.90 for the stable fit).
Metric (``metric``)
    With the stable fit the abundances are solved in the within-texture metric
    (:func:`.unmixing.fit_within_metric`), with k-means in the paper's Euclidean one: held-out
    mosaics 0.904 -> 0.917 Rand; with k-means at σ = 6 the metric lost (Table 1's random
    textures 0.965 -> 0.950, dead leaves of 32-px bars 0.981 -> 0.970). The metric and the
    endmembers are then re-estimated from the labels they give the fit's samples, until none
    changes (:func:`.unmixing.refine_by_labels`, at most
    :data:`~.unmixing.REFINE_ROUNDS` rounds): held-out mosaics 0.917 -> 0.925; then the two
    closest textures' samples are split anew and the split whose labels fit better kept
    (:func:`.unmixing.resplit_closest`, up to three times): held-out mosaics 0.947 -> 0.952,
    in perspective 0.858 -> 0.890; and the two merged and a third split, where log |W| falls
    by more than :data:`~.unmixing.MERGE_SPLIT_MARGIN` (a texture in perspective fitted as
    its near and far parts): held-out mosaics 0.9412 -> 0.9568, in perspective 0.860 -> 0.938;
    and a part of one texture given back from another's label, where log |W| falls by more than
    :data:`~.unmixing.TRANSFER_EVIDENCE` over the number of independent windows the fit read
    (35 / 219 = 0.16 on a 1024² mosaic at σ 19.5 px): held-out mosaics at 2048² 0.9745 ->
    0.9850, at 1024² and 1536² (the windows weighed) 0.9701 -> 0.9757 and 0.9768 -> 0.9826.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from .unmixing import abundances

__all__ = [
    "AGREEMENT",
    "AUTO_GRADIENT_SCALES",
    "AUTO_WEIGHTS",
    "BOUNDARY_RATIO",
    "CHANNEL_SPAN",
    "EXTREME",
    "FINE_SIZE",
    "FSKDE_SHARE",
    "GREY_CHROMA",
    "GREY_LEVELS_RATIO",
    "IDLE_SHARE",
    "LABEL_FRACTION",
    "LEVEL_SPANS",
    "MASK_MARGIN",
    "UNIT_WHITE",
    "auto_features",
    "auto_resolution",
    "auto_stride",
    "auto_weights",
    "boundary_share",
    "bounded_window",
    "channel_ranges",
    "chroma_ratio",
    "color_range",
    "data_bounds",
    "gradient_unit",
    "group_columns",
    "group_signal",
    "idle_groups",
    "keeps_grey_levels",
    "label_window",
    "region_scale",
    "scale_window",
    "signal_weights",
    "texture_scale",
    "value_levels",
]

#: Weights of the feature groups chosen by :func:`auto_features` but the FS-KDE's, which
#: :func:`auto_weights` derives from them (:data:`FSKDE_SHARE` of the total).
AUTO_WEIGHTS = {"color": 1.0, "bank": 1.0, "lbp": 1.0, "hist": 1.0}
#: The FS-KDE group's share of the automatic groups' summed weights.
FSKDE_SHARE = 0.2
#: Gradient scales of the FS-KDE group chosen by the rule: the paper's central differences
#: (Gaussian derivatives at 1, 2 and 4 px lost 0.17 Rand on held-out mosaics and 0.09 on dead
#: leaves: the finest scale is where natural textures differ).
AUTO_GRADIENT_SCALES = (0.0,)
#: The paper's window (σ = 6 px), and the wider one it is checked against.
FINE_SIZE, CHECK_SIZE = 6.0, 12.0
#: Rand index between the labels at :data:`FINE_SIZE` and at CHECK_SIZE above which the
#: finer window is kept.
AGREEMENT = 0.9
#: An image whose colour beyond its grey is at most this share of the grey's spread is grey
#: (:func:`chroma_ratio`).
GREY_CHROMA = 0.05
#: The most boundaries the labels at :data:`FINE_SIZE` may draw, relative to those at
#: CHECK_SIZE, for the finer window to be kept (:func:`boundary_share`).
BOUNDARY_RATIO = 1.4
#: The window's σ is at most the region scale divided by this.
REGION_FRACTION = 5.0
#: With the stable fit, the labels' window σ over the fit's (:func:`label_window`).
LABEL_FRACTION = 0.7
#: A region scale below this many window σ is the window's own: the features of one texture,
#: windowed, decorrelate within about 2σ; the crop saw no region boundary.
REGION_FLOOR = 2.5
#: A region scale below this many window σ on a crop smaller than the image is measured again
#: on a crop of twice the side: a crop that holds only parts of a few regions reads R low, near
#: the window's own scale. On the 30 tuning mosaics at 1024², the four whose central crop gave
#: R of 2.65-2.86 σ (so bounded σ to R / 5) scored 0.954-0.967 bounded, 0.971-0.984 measured on
#: the whole image; those at 3.06-4.21 σ gained less, or lost (a blob mosaic in perspective at
#: 4.21 σ: 0.961 -> 0.804).
REGION_WIDER = 3.0
#: The largest crop side (in analysed pixels) the region scale is measured on.
REGION_CROP = 2048
#: The margin (in mask pixels) of the tissue that ``mask="auto"`` finds for segmentation
#: (:func:`xfskde.masks.tissue_mask`'s ``margin``; 2 for the coefficient field, whose windows at
#: the tissue's edge it computes whole). Outside the mask is missing pixels to segmentation, so
#: its windows need no margin, and a margin is glass inside the mask, labelled as a texture:
#: on 12 synthetic slides of tissue on glass (1024², the mask at 4 px a mask pixel; Rand inside
#: the true tissue) 0.950 without it, 0.941 with 2, glass labelled 0.2-0.9 % of the tissue's
#: area without it, 3.5-4.7 % with 2, and on two mosaics the ring a texture of its own.
MASK_MARGIN = 0
#: The least white level (99.9th percentile, as a share of the dtype's range for integers)
#: of an image in [0, 1] whose colour bins cover [0, 1] (:func:`color_range`).
UNIT_WHITE = 0.5
#: A colour channel whose values (0.1th to 99.9th percentile) span less than this share of
#: the common colour range is binned over this share of it, centred on its values
#: (:func:`channel_ranges`).
CHANNEL_SPAN = 0.25
#: A feature group whose removal changes the labels of at most this share of the fit's sample
#: is dropped from an automatic model (:func:`idle_groups`).
IDLE_SHARE = 0.001
#: A grey image's grey levels (the colour group of its one channel) join the fit when their
#: S / N is at least this many times the filter bank's (:func:`keeps_grey_levels`).
GREY_LEVELS_RATIO = 5.0
#: Side of the tiles whose autocorrelation measures the texture scale, and how many.
TILE, TILES = 128, 16
#: Values beyond this are no image's: the filters' float32 sums overflow near 3.4e38.
EXTREME = 1e30
#: A value more than this many spans of the image's levels beyond them is no data of the
#: image (:func:`data_bounds`).
LEVEL_SPANS = 50.0


def _tile_list(tiles: Any) -> list[np.ndarray]:
    """``tiles`` as a list of arrays (each array_like); refused when it is one array (whose
    rows would be read as tiles) or no sequence at all."""
    if isinstance(tiles, (np.ndarray, str, bytes)) or not isinstance(tiles, Iterable):
        raise ParameterError(
            f"tiles must be a list of arrays (one tile: [tile]), got {type(tiles).__name__}"
        )
    return [np.asarray(t) for t in tiles]


def _tile_channels(tiles: list[np.ndarray]) -> list[int]:
    """Each (y, x) or (y, x, c) tile's channels (1 for (y, x)); refused for other shapes."""
    odd = [np.shape(t) for t in tiles if np.ndim(t) not in (2, 3)]
    if odd:
        raise ParameterError(f"tiles must be (y, x) or (y, x, c) arrays, got one of shape {odd[0]}")
    return [np.shape(t)[-1] if np.ndim(t) == 3 else 1 for t in tiles]


def _finite(name: str, value: Any, positive: bool = False) -> float:
    """``value`` as a float, refused unless a finite real number (and > 0 with
    ``positive``)."""
    number = (
        float(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool)
        else math.nan
    )
    if not math.isfinite(number) or (positive and number <= 0):
        what = "a finite number > 0" if positive else "a finite number"
        raise ParameterError(f"{name} must be {what}, got {value!r}")
    return number


def auto_features(channels: int) -> tuple[str, ...]:
    """The feature groups for an image of ``channels`` channels.

    Parameters
    ----------
    channels : int
        The image's channels (1 for a grey image).

    Returns
    -------
    tuple of str
        ``("color", "bank", "fskde")`` for two channels or more, else
        ``("bank", "lbp", "fskde")``.

    Raises
    ------
    ParameterError
        When ``channels`` is not an integer >= 1.
    """
    if isinstance(channels, bool) or not isinstance(channels, numbers.Integral) or channels < 1:
        raise ParameterError(f"channels must be an integer >= 1, got {channels!r}")
    return ("color", "bank", "fskde") if channels >= 2 else ("bank", "lbp", "fskde")


def value_levels(tiles: list[np.ndarray]) -> tuple[float, float, float, float] | None:
    """The tiles' present values (all channels; NaN ignored) at their 0th, 0.1th, 99.9th and
    100th percentiles: lowest, black, white, highest. None when no value is present.

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Tiles of the image, any shape and dtype (every channel's values are pooled).

    Returns
    -------
    tuple of four float or None
        ``(lowest, black, white, highest)``, in the tiles' unit; None when no value is finite.
    """
    tiles = _tile_list(tiles)
    values = np.concatenate([np.asarray(t, np.float64).reshape(-1) for t in tiles] or [[]])
    values = values[np.isfinite(values)]
    if not values.size:
        return None
    lowest, black, white, highest = np.percentile(values, [0, 0.1, 99.9, 100]).tolist()
    return lowest, black, white, highest


def data_bounds(levels: tuple[float, float] | None) -> tuple[float, float]:
    """The least and the greatest value an image whose black and white levels are ``levels``
    (:func:`value_levels`' 0.1th and 99.9th percentiles; None: unknown) holds as data: those
    :data:`LEVEL_SPANS` spans below black and above white, the span white - black but at
    least 1 / :data:`LEVEL_SPANS` of the levels' magnitude (so that 0 and twice the levels are
    always within, on tiles nearly flat); never beyond ±:data:`EXTREME`.

    A value beyond them is no data of this image but a nodata marker its metadata do not
    name (-9999, float32's lowest), and it would rule the fit: the gradients are read in the
    levels' unit and the FS-KDE's votes weighted by |g|, so the few samples whose windows hold
    it get FS-KDE features far from all others, on which k-means spends textures, while the
    group's scale (the samples' mean mass) shrinks everyone else's. On random textures of 512²
    in [0, 1] (seed 8, Rand 0.989 against the truth) a 16² patch 100 spans beyond the levels
    gave 0.976 at one of two places, 300 spans 0.43-0.44 at both; a 2 × 2 patch 1000 spans
    beyond 0.954-0.965, 3000 spans 0.38-0.96; at 10 and 30 spans both kept 0.988-0.989.
    Real outliers lie far within the bound: the 55 benchmark images reach 0.09 spans beyond
    their levels; HDR highlights, clouds, saturated spots, background-subtracted dips and hot
    pixels 10-11 spans beyond are segmented as before (``docs/segmentation.md``).

    Parameters
    ----------
    levels : (float, float) or None
        The black and white levels (:func:`value_levels`' second and third values); None when
        unknown.

    Returns
    -------
    low, high : float
        The least and the greatest value held as data, within ±:data:`EXTREME`; (-EXTREME,
        EXTREME) when ``levels`` is None or both levels are 0.
    """
    if levels is None:
        return -EXTREME, EXTREME
    if isinstance(levels, (str, bytes)) or np.shape(levels) != (2,):
        raise ParameterError(f"levels must be (black, white), two numbers, or None, got {levels!r}")
    black, white = levels
    span = max(white - black, max(abs(black), abs(white)) / LEVEL_SPANS)
    if not span > 0:  # all tiles one value, 0: nothing to measure a span on
        return -EXTREME, EXTREME
    return max(black - LEVEL_SPANS * span, -EXTREME), min(white + LEVEL_SPANS * span, EXTREME)


def color_range(tiles: list[np.ndarray]) -> tuple[float, float] | None:
    """The range the colour histograms bin, from the values of the tiles (all channels; NaN
    ignored): None for [0, 1], when the values lie in it and their 99.9th percentile reaches
    :data:`UNIT_WHITE`; else (low, 99.9th percentile), widened where the two meet (a flat
    image). ``low`` is min(0, 0.1th percentile) — black is 0, the dark pixels of an image and
    a camera's dark offset included — unless the 0.1th percentile lies farther above 0 than
    the values span (an offset larger than the signal: elevations, counts stored as 10 000 +
    the values): then it. From 0 there, the values of 10 000 + 0-255 fell in 1 or 2 of the 16
    bins (random textures, seeds 100-105: 0.979 as uint8, 0.974 so offset, 0.977 from
    the 0.1th percentile).

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Tiles of the image, (y, x) or (y, x, c), any dtype, in the image's own unit.

    Returns
    -------
    (float, float) or None
        ``(low, white)`` in the tiles' unit, or None for [0, 1] (also when no value is finite).
    """
    levels = value_levels(tiles)
    if levels is None:
        return None
    lowest, black, white, highest = levels
    if 0.0 <= lowest and highest <= 1.0 and white >= UNIT_WHITE:
        return None
    low = min(0.0, black) if black <= white - black else black
    if not white > low:
        d = 0.5e-3 * max(1.0, abs(low))
        low, white = low - d, white + d
    return float(low), float(white)


def channel_ranges(tiles: list[np.ndarray]) -> tuple[tuple[float, float], ...] | None:
    """Each colour channel's binned range (one (low, high) per channel of the (y, x, c)
    tiles), or None for [0, 1] for every channel.

    The common range of :func:`color_range`, but for a channel whose own 0.1th-99.9th
    percentiles (NaN ignored) span less than :data:`CHANNEL_SPAN` of it: that share of it,
    centred on the channel's percentiles — its bins at most 1 / :data:`CHANNEL_SPAN` times
    finer than the others', so that a channel of faint noise is not spread over all of them.

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Tiles of the image, (y, x, c) or (y, x) (one channel), in the image's own unit; at least
        one.

    Returns
    -------
    tuple of (float, float) or None
        One ``(low, high)`` per channel, in the tiles' unit; None when every channel is binned
        over [0, 1].

    Raises
    ------
    ParameterError
        When there is no tile (the channels are counted on them), or the tiles differ in
        their channels.
    """
    tiles = _tile_list(tiles)
    counts = set(_tile_channels(tiles))
    if len(counts) != 1:
        raise ParameterError(
            "channel_ranges needs one or more tiles of the same channels, got "
            + (f"tiles of {sorted(counts)} channels" if counts else "none")
        )
    channels = counts.pop()
    common = color_range(tiles)
    low, high = common if common is not None else (0.0, 1.0)
    values = np.concatenate([np.asarray(t, np.float64).reshape(-1, channels) for t in tiles])
    ranges = []
    for column in values.T:
        present = column[np.isfinite(column)]
        black, white = np.percentile(present, [0.1, 99.9]).tolist() if present.size else (0, 0)
        half = 0.5 * CHANNEL_SPAN * (high - low)
        if 0.0 < white - black < 2.0 * half:
            middle = 0.5 * (black + white)
            ranges.append((float(middle - half), float(middle + half)))
        else:
            ranges.append((low, high))
    if common is None and all(r == (0.0, 1.0) for r in ranges):
        return None
    return tuple(ranges)


def gradient_unit(tiles: list[np.ndarray]) -> float:
    """The value that counts as 1 in the gradient groups (``FeatureSpec.gradient_unit``): the
    span of :func:`color_range` — 1 for an image in [0, 1] (the paper's; every benchmark
    image), the white level of any other (249 for a float image of 0-255, 0.06 for 12-bit
    counts in uint16), so that the gradients read as on the image in [0, 1].

    Without it a float image of 0-255 had gradients 255 times those of the same image in
    uint8, and the FS-KDE outweighed the bank wherever the groups' features are summed before
    their weights apply (the stable fit's choice of steady samples, the region scale): ten of
    the held-out grey mosaics as uint8 0.943, as floats of 0-255 0.836 (five of them 0.74).

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Tiles of the image, (y, x) or (y, x, c), in the image's own unit.

    Returns
    -------
    float
        ``high - low`` of :func:`color_range`; 1.0 when it is None.
    """
    chosen = color_range(tiles)
    return 1.0 if chosen is None else float(chosen[1] - chosen[0])


def chroma_ratio(tiles: list[np.ndarray]) -> float:
    """How much colour (y, x, c) tiles hold beyond their grey: the root mean square of what is
    left of the channels (all of them, as the colour group reads them; at least two) once each
    is fitted as an affine function of the grey (their mean) by least squares, over the
    standard deviation of the grey.

    0 (to rounding) for a grey image stored in three equal channels (as a grey JPEG decodes)
    and for one single-channel image shown through a linear colour map (a green fluorescence
    channel, a purple-to-pink ramp): their colour tells nothing the grey does not. Measured
    0.2-2.4 on colour images: H&E tissue tiles 0.21-0.52, scikit-image's IHC 0.32 and astronaut
    0.60, random textures 2.4, dead leaves 2.4. A flat grey gives 0 when the colour is flat too and
    infinity when it is not (isoluminant colours). Absent (NaN) pixels are left out.

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Tiles of the image, (y, x, c); tiles of fewer than two channels ((y, x) tiles among
        them) are left out.

    Returns
    -------
    float
        The ratio, at least 0; 0.0 when fewer than two pixels have every channel present, or
        ``math.inf`` for colour over a flat grey.

    Raises
    ------
    ParameterError
        When a tile is not (y, x) or (y, x, c), or the tiles of two channels or more differ in
        their channels.
    """
    tiles = _tile_list(tiles)
    colour = [(t, c) for t, c in zip(tiles, _tile_channels(tiles), strict=True) if c >= 2]
    if len({c for _, c in colour}) > 1:
        raise ParameterError(
            "chroma_ratio needs tiles of the same channels, got tiles of "
            f"{sorted({c for _, c in colour})} channels"
        )
    pixels = [np.asarray(t, dtype=np.float64).reshape(-1, c) for t, c in colour]
    pixels = [p[np.isfinite(p).all(axis=1)] for p in pixels]
    rgb = np.concatenate(pixels) if pixels else np.zeros((0, 2))
    if len(rgb) < 2:
        return 0.0
    grey = rgb.mean(axis=1)
    centred = rgb - rgb.mean(axis=0)
    g = grey - grey.mean()
    spread = float(np.sqrt(np.mean(g**2)))
    rounding = 1e-12 * float(np.abs(rgb).max())  # relative: int64 0-255 divided by 2^63 - 1
    if spread <= rounding:  # a flat grey (to rounding)
        return 0.0 if np.abs(centred).max() <= rounding else math.inf
    residual = centred - np.outer(g, g @ centred / (g @ g))
    return math.sqrt(float((residual**2).sum(axis=1).mean())) / spread


def auto_weights(features: tuple[str, ...]) -> dict[str, float]:
    """The groups' weights for the automatic ``features``: :data:`AUTO_WEIGHTS`, with the
    FS-KDE's set to :data:`FSKDE_SHARE` of the sum, ``w = share / (1 - share) · Σ others``
    (0.5 beside the bank and the local binary patterns, and beside the bank and colour).

    Parameters
    ----------
    features : tuple of str
        The automatic groups (:func:`auto_features`).

    Returns
    -------
    dict of str to float
        :data:`AUTO_WEIGHTS`' three groups, whether chosen or not, and ``"fskde"``.
    """
    named = (features,) if isinstance(features, str) else tuple(features)
    unknown = [name for name in named if name not in (*AUTO_WEIGHTS, "fskde")]
    if unknown:
        raise ParameterError(
            f"features must be groups among {(*AUTO_WEIGHTS, 'fskde')}, got {features!r}"
        )
    weights = dict(AUTO_WEIGHTS)
    others = sum(weights[name] for name in named if name != "fskde")
    weights["fskde"] = FSKDE_SHARE / (1.0 - FSKDE_SHARE) * others
    return weights


def boundary_share(labels: np.ndarray, present: np.ndarray | None = None) -> float:
    """The share of a label image's pixels whose right or lower neighbour has another label.

    How much boundary a segmentation draws, per pixel. A window that fits the textures draws
    about the regions' own boundaries, and doubling it changes little (random textures and dead
    leaves: the share at σ = 6 is 1.01-1.20 times that at σ = 12 on 33 images); a window finer
    than the regions' elements draws boundaries around the elements too, which the wider one
    smooths away (mosaics of H&E tissue tiles whose σ = 6 labels scored 0.71-0.86: 1.33-1.63).

    With ``present`` (a boolean image of the same shape), only the pixels present count, each
    against its neighbours present: the edge of a mask or of missing pixels is no boundary the
    window drew (two windows would share it, and it would pull their ratio towards 1).

    Parameters
    ----------
    labels : numpy.ndarray, shape (H, W)
        The label image, any dtype.
    present : numpy.ndarray of bool, shape (H, W), optional
        The pixels present; None (the default): every pixel.

    Returns
    -------
    float
        The share, in [0, 1]; 0.0 for an image that is not 2-D, has a side under 2 or has no
        pixel present but on its last row and column.
    """
    lab = np.asarray(labels)
    if lab.ndim != 2 or min(lab.shape) < 2:
        return 0.0
    here, right, below = lab[:-1, :-1], lab[:-1, 1:], lab[1:, :-1]
    if present is None:
        return float(((right != here) | (below != here)).mean())
    p = np.asarray(present, bool)
    if p.shape != lab.shape:
        raise ParameterError(f"present must have the labels' shape {lab.shape}, got {p.shape}")
    counted = p[:-1, :-1]
    if not counted.any():
        return 0.0
    changed = (p[:-1, 1:] & (right != here)) | (p[1:, :-1] & (below != here))
    return float((changed & counted).sum() / counted.sum())


def group_signal(features: np.ndarray, change: np.ndarray) -> float:
    """How far one feature group's samples spread beyond its noise inside textures: S / N.

    ``features`` (n, D) are the group's features at the stable samples (those whose features
    change least across them, :func:`.unmixing.fit_stable_endmembers`), ``change`` (n,) how
    much the group's own features change across each sample, ‖ΔF_y‖ + ‖ΔF_x‖ between the
    points d ≈ 1.5σ before and after it. Inside a texture those points' windows, 3σ apart, are
    nearly independent draws, so each norm is about √2 times the noise's spread ‖F - E F‖
    and their sum 2√2 times: the noise variance is N = (median change / 2√2)². The samples'
    variance about their mean, V = mean ‖F - F̄‖², holds the noise and the differences between
    textures: S = max(V - N, 0). A group that tells textures apart has S / N well above 1 (the
    FS-KDE on dead leaves 4-18, colour on random textures 5-54, the bank on real-texture
    mosaics 5-14); a group whose samples differ no more than its noise does, below 1 (colour on
    dead leaves, whose bars all draw their colours from one distribution: 0.2-0.5; the FS-KDE
    of random textures, whose disks have no orientation: 0.02).

    Parameters
    ----------
    features : numpy.ndarray, shape (n, D)
        The group's features at the stable samples.
    change : numpy.ndarray, shape (n,)
        ‖ΔF_y‖ + ‖ΔF_x‖ of the group's features across each sample.

    Returns
    -------
    float
        S / N, at least 0: ``inf`` for fewer than two samples or a median change of 0 under a
        spread above 0, 0.0 when every sample has the same features.
    """
    F = np.asarray(features, dtype=np.float64)
    c = np.asarray(change, dtype=np.float64)
    if F.ndim != 2 or c.shape != F.shape[:1]:
        raise ParameterError(
            f"features must be (n, D) and change (n,), got shapes {F.shape} and {c.shape}"
        )
    if F.shape[0] < 2:
        return float("inf")
    noise = (float(np.median(c)) / (2.0 * math.sqrt(2.0))) ** 2
    spread = float(((F - F.mean(axis=0)) ** 2).sum(axis=1).mean())
    if spread <= 0:  # the same at every sample (a group of zeros: no gradient anywhere)
        return 0.0
    if noise <= 0:
        return float("inf")
    return max(spread - noise, 0.0) / noise


def signal_weights(weights: dict[str, float], signals: dict[str, float]) -> dict[str, float]:
    """The automatic weights of the groups, each times min(1, S / N)² (:func:`group_signal`),
    over the largest such factor among the groups measured (1 whenever one group's S / N
    reaches 1, as on every image measured below; when none is above 0, as on a 20 × 23 image
    whose windows all see nearly the whole image, the weights are kept).

    A group whose features differ between the samples no more than its own noise does brings
    mostly noise into the fit and the unmixing, so it is weighed down; no group is weighed up.
    Measured (``docs/segmentation.md``), colour dead leaves of seeds 100-105 at 16 / 32 / 64 /
    128-px bars, lowest Rand 0.696 / 0.979 / 0.693 / 0.760 (a large texture split along its
    bars' colours while a small one was merged) -> 0.976 / 0.979 / 0.973 / 0.977 (0.974 at
    16 px before the k-means fit was weighed too; the same with the factor not squared); on
    held-out layouts with one region under 7 % of the image (seeds
    404, 430, 516, 569 at 64 px) 0.761 / 0.983 / 0.761 / 0.978 -> 0.941 / 0.986 / 0.975 / 0.982
    squared (0.758 / 0.986 / 0.975 / 0.981 not squared), at 16 px 0.755 / 0.984 / 0.756 / 0.982
    -> 0.978 / 0.984 / 0.979 / 0.983 (the k-means fit at σ = 6 weighed too). Random textures
    0.9772 -> 0.9770 (six images); the held-out real-texture mosaics: 23 of 24 identical, one
    whose bank's S / N is 0.96 0.808 -> 0.802 (mean 0.9217 -> 0.9214).

    Parameters
    ----------
    weights : dict of str to float
        The automatic weights of the groups (:func:`auto_weights`).
    signals : dict of str to float
        Each measured group's S / N (:func:`group_signal`); a group not in it keeps its factor 1.

    Returns
    -------
    dict of str to float
        The weights, with the same keys as ``weights``.
    """
    factors = {name: min(1.0, signals.get(name, math.inf)) ** 2 for name in weights}
    top = max((factors[name] for name in signals if name in factors), default=1.0)
    if top <= 0:  # no group stands out of its noise: the sample cannot tell (a tiny image)
        return dict(weights)
    return {name: w * factors[name] / top for name, w in weights.items()}


def keeps_grey_levels(signals: dict[str, float]) -> tuple[bool, str]:
    """Whether a grey image's grey levels (the colour histograms of its channel, ``"color"``)
    are kept in the fit, and why: when their S / N (:func:`group_signal`) is at least
    :data:`GREY_LEVELS_RATIO` times the filter bank's — the textures then differ in their grey
    levels far beyond the structure the bank sees, as regions of flat grey do (0.73 Rand
    without them, 0.98 with them, at S / N ratios of 83 and more), and the bank's intensity
    filter, one of its sixteen, is outweighed by the responses along the regions' boundaries.

    Among real textures whose grey levels are matched (the mosaics of scikit-image's brick,
    grass and gravel) the ratio stays within 0.7-3.2, and the grey levels there, steady as
    they are, follow each photograph's shading: kept at every ratio, they cut the held-out
    mosaics from 0.941 to 0.790 Rand. Grey random textures (discs of grey levels) lie between,
    2.3-24, and gain where they are kept (seeds 200-207, held out: 0.896 -> 0.934);
    ``docs/segmentation.md`` gives the figures.

    Parameters
    ----------
    signals : dict of str to float
        The S / N of ``"color"`` (the grey levels) and ``"bank"`` (:func:`group_signal`); a
        group not in it counts as 0.

    Returns
    -------
    kept : bool
        Whether the grey levels are kept.
    reason : str
        One line that says so, with the two S / N (recorded in ``choices``).
    """
    grey, bank = signals.get("color", 0.0), signals.get("bank", 0.0)
    kept = grey >= GREY_LEVELS_RATIO * bank
    sign = ">=" if kept else "<"
    return kept, (
        f"{'kept' if kept else 'left out'}: their S/N {grey:.2f} {sign} {GREY_LEVELS_RATIO:g} x "
        f"the bank's {bank:.2f}"
    )


def group_columns(groups: dict[str, slice], names: list[str] | tuple[str, ...]) -> np.ndarray:
    """The feature columns of the groups ``names`` (each group's columns a slice of
    ``groups``), in the order named.

    Parameters
    ----------
    groups : dict of str to slice
        Each group's columns in the stacked features.
    names : list or tuple of str
        The groups wanted, each a key of ``groups``.

    Returns
    -------
    numpy.ndarray of int
        The column indices, group after group.
    """
    unknown = [g for g in names if g not in groups]
    if unknown or not len(names) or isinstance(names, str):
        raise ParameterError(
            f"names must be one or more of the groups {list(groups)}, got {names!r}"
        )
    return np.concatenate([np.arange(groups[g].start, groups[g].stop) for g in names])


def idle_groups(
    features: np.ndarray,
    endmembers: np.ndarray,
    vectors: np.ndarray | None,
    groups: dict[str, slice],
    share: float = IDLE_SHARE,
) -> tuple[list[str], dict[str, float]]:
    """The feature groups the labels do not need: those that can be left out of the unmixing
    while the labels of at most ``share`` of the fit's samples change.

    A group counts in the abundances only through how its endmembers' features differ: where
    every texture has the same features in a group (the same filter histograms, say), the
    group adds the same cost to every mixture and no label depends on it, yet predicting still
    computes its votes at every pixel. Greedily, the group whose removal changes the fewest
    labels of the sample (each sample's largest abundance, :func:`.unmixing.abundances`, with
    the endmembers' and unmixing vectors' columns of the groups kept) is dropped while the
    labels without all the groups dropped so far differ from the full model's at no more than
    ``share`` of the samples; one group is always kept.

    Parameters
    ----------
    features : numpy.ndarray, shape (n, D)
        The fit's samples, scaled as the endmembers are.
    endmembers, vectors : numpy.ndarray, shape (m, D)
        The model's endmembers and unmixing vectors (None: the Euclidean metric).
    groups : dict
        Each group's columns, in stacking order.
    share : float, optional
        The largest share of the samples whose label may change, :data:`IDLE_SHARE`.

    Returns
    -------
    dropped : list of str
        The groups to leave out, in the order they were dropped.
    changed : dict
        For each group, the share of the samples whose label changed when it was last tried:
        left out with the groups dropped before it.

    Notes
    -----
    Measured (``docs/segmentation.md``, "groups left out"): on random textures 512² (seeds
    100-105) the bank left out changes 0.02-0.10 % of the sample's labels and is dropped on
    five of six (the FS-KDE too on two); the held-out mosaics of real grey textures keep the
    bank and the FS-KDE (10-81 % each, on the ten checked); every Rand index of the
    benchmark's table is unchanged to the fourth decimal but one (+0.0001). The labels of an
    8192² slide of random textures differ from the full model's at 0.012 % of its pixels, and
    a 16384² one is segmented 2.1 times as fast.
    """
    if not groups:
        raise ParameterError("groups must hold one or more groups' columns, got none")
    X = np.asarray(features, dtype=np.float64)
    E = np.asarray(endmembers, dtype=np.float64)
    V = None if vectors is None else np.asarray(vectors, dtype=np.float64)

    def labels(names: list[str]) -> np.ndarray:
        cols = group_columns(groups, names)
        part = None if V is None else V[:, cols]
        return np.argmax(abundances(X[:, cols], E[:, cols], part), axis=-1)

    full = labels(list(groups))
    kept, dropped, changed = list(groups), [], {}
    while len(kept) > 1:
        trials = {g: float(np.mean(labels([k for k in kept if k != g]) != full)) for g in kept}
        changed.update(trials)
        best = min(kept, key=lambda g: trials[g])  # ties: the first in stacking order
        if trials[best] > share:
            break
        kept.remove(best)
        dropped.append(best)
    return dropped, changed


def _radial_acf(fields: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The autocorrelation of the (h, w, n) ``fields`` (centred; absent entries 0), summed over
    n, unbiased (divided by the pairs at each offset, counted from ``present``), normalised to
    1 at lag 0 and averaged over rings of integer radius up to half the shorter side.

    A ring averages the offsets that have pairs only, and is NaN where none has: where part of
    the array is absent (outside a mask, or missing), the offsets longer than what is present
    have no pairs, and counted as 0 they pulled the ring's mean down (a 128² patch of texture
    in a 256² tile otherwise absent measured a texture scale of 3.9 px where alone it has 6.9).
    Where every entry is present, every offset within the rings has pairs."""
    h, w = present.shape
    shape = (2 * h, 2 * w)
    power = sum(np.abs(np.fft.rfft2(fields[..., i], shape)) ** 2 for i in range(fields.shape[-1]))
    pairs = np.abs(np.fft.rfft2(present.astype(float), shape)) ** 2
    acf = np.fft.irfft2(power, shape)
    count = np.fft.irfft2(pairs, shape)
    paired = count > 0.5
    acf = np.where(paired, acf / np.maximum(count, 1), 0.0)
    if acf[0, 0] <= 0:
        return np.zeros(0)
    acf /= acf[0, 0]
    dy = np.fft.fftfreq(shape[0], 1 / shape[0])[:, None]
    dx = np.fft.fftfreq(shape[1], 1 / shape[1])[None, :]
    radius = np.rint(np.hypot(dy, dx)).astype(np.int64)
    reach = min(h, w) // 2
    keep = radius <= reach
    sums = np.bincount(radius[keep], acf[keep], minlength=reach + 1)
    offsets = np.bincount(radius[keep], paired[keep], minlength=reach + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(offsets > 0, sums / offsets, np.nan)


def _one_over_e(curve: np.ndarray) -> float:
    """The first lag where ``curve`` falls below 1/e, interpolated linearly; else its end (its
    last ring before one that is NaN: :func:`_radial_acf`)."""
    empty = np.flatnonzero(np.isnan(curve))
    curve = curve[: empty[0]] if len(empty) else curve
    below = np.nonzero(curve < 1 / math.e)[0]
    if not len(below):
        return float(len(curve) - 1)
    r = int(below[0])
    a, b = curve[r - 1], curve[r]
    return float(r - 1 + (a - 1 / math.e) / (a - b))


def texture_scale(tiles: list[np.ndarray]) -> float:
    """λ: the lag (px) at which the tiles' mean radial autocorrelation falls to 1/e.

    Each (h, w) grey tile (NaN read as its mean) is centred; its autocorrelation is computed by
    FFT with zero padding and divided by the number of pixel pairs at each offset (unbiased),
    normalised to 1 at lag 0 and averaged over rings of integer radius. Flat tiles are left
    out. The first radius below 1/e is interpolated linearly; if none is, half the tile side.

    Parameters
    ----------
    tiles : list of numpy.ndarray
        Grey (h, w) tiles, or (h, w, c) ones whose channels are averaged; a tile with fewer than
        16 finite pixels is left out.

    Returns
    -------
    float
        λ in pixels of the tiles; 1.0 when no tile is left to measure.

    Raises
    ------
    ParameterError
        When a tile is not (h, w) or (h, w, c), or the tiles differ in (h, w).
    """
    tiles = _tile_list(tiles)
    _tile_channels(tiles)
    sides = {np.shape(t)[:2] for t in tiles}
    if len(sides) > 1:
        raise ParameterError(
            f"texture_scale needs tiles of one (h, w), got tiles of {sorted(sides)}"
        )
    curves = []
    for tile in tiles:
        t = np.asarray(tile, dtype=np.float64)
        if t.ndim == 3:
            t = t.mean(axis=-1)
        present = np.isfinite(t)
        if present.sum() < 16:
            continue
        t = np.where(present, t - t[present].mean(), 0.0)
        curve = _radial_acf(t[..., None], present) if np.any(t) else np.zeros(0)
        if len(curve):
            curves.append(curve)
    if not curves:
        return 1.0
    with warnings.catch_warnings():  # a ring no tile has pairs at is NaN: the curve ends there
        warnings.simplefilter("ignore", RuntimeWarning)
        return _one_over_e(np.nanmean(curves, axis=0))


def region_scale(features: np.ndarray, spacing: float) -> float:
    """R: the lag (px) at which the autocorrelation of local features falls to 1/e.

    ``features`` is (ny, nx, D) on a grid of ``spacing`` pixels (NaN where absent); each
    feature is centred and the autocorrelations summed over the features, as for
    :func:`texture_scale`. Inside one texture the features stay alike across the region, so R
    grows with the regions' width (and, since the features are windowed, with the window).

    Parameters
    ----------
    features : numpy.ndarray, shape (ny, nx, D)
        The local features on the grid, NaN where absent.
    spacing : float
        The grid's spacing, in pixels.

    Returns
    -------
    float
        R in pixels; ``inf`` when fewer than four grid points have every feature present, or
        the features are the same at all of them.
    """
    F = np.asarray(features, dtype=np.float64)
    if F.ndim != 3:
        raise ParameterError(
            f"features must be (ny, nx, D), the local features on the grid, got shape {F.shape}"
        )
    spacing = _finite("spacing", spacing, positive=True)
    present = np.isfinite(F).all(axis=-1)
    if present.sum() < 4:
        return float("inf")
    F = np.where(present[..., None], F - F[present].mean(axis=0), 0.0)
    curve = _radial_acf(F, present)
    return _one_over_e(curve) * spacing if len(curve) else float("inf")


def bounded_window(sigma: float, region: float) -> float:
    """σ at most R / :data:`REGION_FRACTION` (and never below the paper's 6).

    Parameters
    ----------
    sigma : float
        The window's σ, in pixels.
    region : float
        The region scale R (:func:`region_scale`), in pixels.

    Returns
    -------
    float
        max(6, min(``sigma``, R / 5)), rounded to a tenth of a pixel.

    Raises
    ------
    ParameterError
        For a ``sigma`` that is not a finite number > 0, and a ``region`` that is not a number
        > 0 (infinite is taken: no regions found, nothing bounds the window).
    """
    sigma = _finite("sigma", sigma, positive=True)
    if not (isinstance(region, numbers.Real) and not isinstance(region, bool) and region > 0):
        raise ParameterError(
            f"region must be a number > 0, the region scale R in pixels (inf: unbounded), "
            f"got {region!r}"
        )
    return float(round(max(FINE_SIZE, min(sigma, region / REGION_FRACTION)), 1))


def scale_window(scale: float, shape: tuple[int, int]) -> float:
    """The window σ for texture scale λ: 8λ within [8, min(H, W) / 12] (never below 6).

    Parameters
    ----------
    scale : float
        The texture scale λ (:func:`texture_scale`), in pixels.
    shape : (int, int)
        The image's (H, W), in the same pixels.

    Returns
    -------
    float
        σ in pixels, rounded to a tenth.
    """
    scale = _finite("scale", scale)
    if len(shape) < 2:
        raise ParameterError(f"shape must be the image's (H, W), got {shape!r}")
    upper = max(FINE_SIZE, min(shape) / 12)
    return float(round(min(max(8 * scale, 8.0), upper), 1))


def label_window(sigma: float) -> float:
    """The σ of the window the labels are drawn through, for a stable fit at window σ
    ``sigma``: :data:`LABEL_FRACTION` of it (in the same unit), rounded to a hundredth.

    Parameters
    ----------
    sigma : float
        The fit's window σ.

    Returns
    -------
    float
        0.7 σ (:data:`LABEL_FRACTION`), rounded to a hundredth.

    Raises
    ------
    ParameterError
        For a ``sigma`` that is not a finite number > 0.
    """
    sigma = _finite("sigma", sigma, positive=True)
    return float(round(LABEL_FRACTION * sigma, 2))


def auto_stride(sigma: float) -> int:
    """The stride of the abundance grid for a window of σ ``sigma``: σ / 4, at least 1.

    Parameters
    ----------
    sigma : float
        The window's σ, in pixels.

    Returns
    -------
    int
        round(σ / 4) (half to even), at least 1.
    """
    return max(1, round(_finite("sigma", sigma) / 4))


#: Cells per texture scale λ and per window σ that the analysed image keeps.
RESOLUTION_CELLS = (4, 8)
#: The largest cell side :func:`auto_resolution` chooses.
MAX_RESOLUTION = 16


def auto_resolution(scale: float, sigma: float) -> int:
    """The side f of the pixel cells averaged before the features: ⌊λ / 4⌋, at most ⌊σ / 8⌋,
    within [1, :data:`MAX_RESOLUTION`].

    Parameters
    ----------
    scale : float
        The texture scale λ (:func:`texture_scale`), in pixels.
    sigma : float
        The window's σ, in pixels.

    Returns
    -------
    int
        f, in [1, 16] (``min(⌊λ / 4⌋, ⌊σ / 8⌋, 16)``, at least 1).
    """
    per_scale, per_window = RESOLUTION_CELLS
    scale, sigma = _finite("scale", scale), _finite("sigma", sigma)
    f = min(int(scale // per_scale), int(sigma // per_window), MAX_RESOLUTION)
    return max(1, f)
