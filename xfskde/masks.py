"""Foreground masks of slides and scenes, and the blocks the engine can skip: :func:`tissue_mask`.

A whole-slide image is often more glass than tissue, a satellite scene more nodata than land.
:func:`tissue_mask` finds the foreground on a low-resolution pyramid level (or a coarsened copy
of the image), and every out-of-core consumer that takes ``mask=`` (:func:`xfskde.local_fskde`,
``xfskde coefficients`` and ``xfskde maps``) then

* skips the blocks with no foreground: they are neither read nor computed (a task with no input
  gives their block of zeros — the field of a region without gradients — so Dask culls the
  reads; only the halo of a computed neighbour reads their pixels), and
* sets the samples outside the mask to zero inside the blocks it computes, so that the result
  does not depend on how the image was cut into blocks.

**A mask covers the image's extent**, at any resolution: pixel ``(i, j)`` of an ``(my, mx)``
mask covers the image pixels ``[i ny / my, (i + 1) ny / my) × [j nx / mx, (j + 1) nx / mx)`` of
an ``(ny, nx)`` image, whatever level the image was opened at. Masks from :func:`tissue_mask`,
from another pyramid level of the same slide or from a thumbnail all qualify; one of another
aspect (not the image at one scale) is refused. A mask with coordinates in the image's unit
and CRS (a DataArray, a GeoTIFF, an OME-TIFF in µm) is placed by them, whatever its shape: cut
to the image, its rows and columns in the image's order (ascending y over a GeoTIFF's
descending y is not upside down). One in the image's CRS that covers only part of the scene
(an area of interest cut from a larger raster) is background beyond its own extent, as GDAL and
QGIS read a raster past its edges; one without a CRS (an OME-TIFF in µm, a DataArray) is
refused if it covers only part of the image. A mask without coordinates (a NumPy array, a
picture, a plain TIFF) is placed by position: its first row over the image's first row.

**Methods.**

* ``"brightfield"`` (H&E, IHC: stained tissue on white glass): for an RGB image, whatever is
  not glass — the glass being the slide's bright, colourless mode, a pixel is tissue where its
  HSV saturation ``(max - min) / max`` exceeds the glass's by more than the glass's own spread,
  or where it is darker than the glass by more than :data:`GLASS_DARKER`, or rougher than the
  glass (pale stroma between its nuclei: :func:`_rough`) (:func:`_off_glass`; an image
  without glass is tissue throughout). A grey-level image has no saturation: its glass is
  bright and smooth, its tissue darker or rougher, and so is an RGB image's without colour (a
  grey micrograph stored as RGB: the 99th percentile of its saturation below
  :data:`COLOURLESS`, where a stain's is 0.2 or more). Very dark pixels (a scanner's black
  padding) are background. The mask's attrs say which (``measure``).
* ``"fluorescence"`` (signal on a dark background, any number of channels and bits): where
  any channel rises above its own dark background by more than :data:`FLUORESCENCE_NOISE`
  times the background's noise, both read off the channel's darker half, the signal then
  closed over :data:`FLUORESCENCE_GAP` image pixels (nuclei lit by DAPI and the dark cytoplasm
  between them one tissue) (:func:`_fluorescence`). Zeros in every channel over an area are a
  stitched slide's padding, left out (:func:`_padding`) — unless they surround the rest with
  edges no scanner's tiles draw: an outside cleared to 0 (QuPath's or Fiji's "clear
  outside") is the background, the tissue all that is not 0 (:func:`_cleared`). Never chosen
  by ``"auto"``: an image without background (a field of view inside the tissue) would lose
  its dimmest tissue.
* ``"nonzero"`` (satellite mosaics, any image whose missing data is zero): any channel
  finite, non-zero and not the image's nodata value. Where its bands have values of their
  own (a VRT stack: :func:`xfskde._labels.image_nodata`), a pixel where any band holds its
  own is missing, as segmentation reads it (:func:`xfskde._labels.pixel_nodata`).
* ``"auto"``: ``"brightfield"`` for 3- or 4-channel 8-bit images (or floats within [0, 1])
  without a CRS — a slide —, ``"nonzero"`` otherwise: a scene, whatever its bands, and 16-bit
  images (:func:`_slide_like`). Where that leaves all of an image foreground and it looks
  like signal on a dark background (:func:`_dark_share`: a fluorescence image exported as
  8-bit RGB, taken for a slide without glass; a 16-bit one, all of it data), a
  :class:`~xfskde.exceptions.MaskWarning` names ``"fluorescence"``.

Then objects and holes (8-connected components) smaller than ``min_fraction`` of the mask's area
are removed and filled, and the foreground is grown by ``margin`` mask pixels, so that windows
at the tissue's edge are computed whole (segmentation, to which outside the mask is missing
pixels, takes it without: :data:`xfskde.segmentation.defaults.MASK_MARGIN`).
"""

from __future__ import annotations

import math
import numbers
import os
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
import xarray as xr
from scipy import ndimage

from ._cells import block_cells, cell_means, in_whole_cells
from ._grid import MaskFootprint, mask_at_samples, sample_count, sample_offset
from ._labels import (
    crs_wkt,
    image_dims,
    image_nodata,
    parse_crs,
    pixel_nodata,
    pixel_steps,
    regular_step,
    stored_integer_dtype,
)
from ._pictures import is_picture, palette_indices
from ._scheduling import compute as compute_collections
from ._validation import (
    _check_choice,
    _check_level,
    _check_nonnegative_int,
    _check_positive_int,
)
from .exceptions import (
    DimensionError,
    ImageReadError,
    MaskWarning,
    ParameterError,
    XfskdeError,
    find_stack_level,
)
from .io import Location, locate, open_image
from .io._location import locate_beside, micrometres
from .io.geojson import is_polygons, polygon_mask
from .io.images import (
    ImageLevel,
    image_levels,
    is_whole_level,
    level_arguments,
    opened_as,
    refuse_options_in_memory,
)

__all__ = [
    "COLOURLESS",
    "FLUORESCENCE_FLOOR",
    "FLUORESCENCE_GAP",
    "FLUORESCENCE_NOISE",
    "GLASS_BRIGHTNESS",
    "GLASS_COLOUR",
    "GLASS_DARKER",
    "GLASS_SATURATION",
    "GLASS_SHARE",
    "GLASS_SMOOTH",
    "GLASS_TEXTURE",
    "GLASS_TEXTURE_SIZE",
    "GLASS_TEXTURE_SPAN",
    "MARGIN",
    "METHODS",
    "background_blocks",
    "mask_samples",
    "polygon_mask",
    "resolve_mask",
    "tissue_mask",
]

#: The ways :func:`tissue_mask` tells foreground from background.
METHODS: tuple[str, ...] = ("auto", "brightfield", "fluorescence", "nonzero")
#: The longest side of the level a mask is computed on, by default.
MAX_SIDE = 2048
#: Mask pixels :func:`tissue_mask` grows the foreground by, by default: the coefficient
#: field's windows at the tissue's edge are then computed whole.
MARGIN = 2
#: Pixels darker than this fraction of the range are a scanner's padding, not tissue.
_BLACK = 0.08
#: ``"auto"``'s brightfield mask without glass warns where at least DARK_SHARE of what it
#: takes for tissue lies farther than DARK_DISTANCE image pixels from any signal the
#: fluorescence rule finds, and is dark there: its brightest channel below DARK_LEVEL of
#: that channel's 99.9th percentile, on average (:func:`_dark_share`): a fluorescence
#: image's background.
DARK_DISTANCE = 16
DARK_SHARE = 0.1
DARK_LEVEL = 0.45
#: ... measured on cells of the mask's pixels (their means), at most this many on a side.
_DARK_SIDE = 512
#: An RGB image whose saturation's 99th percentile is below this has no stain to threshold:
#: the brightfield mask uses its darkness, as a grey image's.
COLOURLESS = 0.05
#: Glass is less saturated than this and brighter than :data:`GLASS_BRIGHTNESS` of the
#: brightest pixel (:func:`tissue_mask`, brightfield RGB).
GLASS_SATURATION = 0.1
GLASS_BRIGHTNESS = 0.8
#: Tissue is more saturated than the glass by at least this, or darker by at least
#: :data:`GLASS_DARKER` (of the brightest pixel), beyond the glass's own spread.
GLASS_COLOUR = 0.03
GLASS_DARKER = 0.15
#: An RGB image with fewer glass-like pixels than this share of its own has no glass.
GLASS_SHARE = 0.005
#: Pale tissue is rougher than the glass: the standard deviation of the brightness over
#: GLASS_TEXTURE_SIZE² mask pixels above the glass's own by more than its spread, and by at
#: least :data:`GLASS_TEXTURE` (of the brightest pixel).
GLASS_TEXTURE = 0.01
GLASS_TEXTURE_SIZE = 5
#: The sides, in the image's own (finest) pixels, of the windows over which the roughness is
#: measured too (:func:`_roughness_windows`): a mask computed at the image's resolution sees
#: the stroma's gaps between its nuclei (10–20 px) as smooth in a window of 5.
GLASS_TEXTURE_SPAN = (11, 21)
#: Glass is smooth: a bright colourless mode whose brightness varies more than this over
#: GLASS_TEXTURE_SIZE² mask pixels (the median of its standard deviations, of the brightest
#: pixel) is pale tissue, not glass (an image without glass).
GLASS_SMOOTH = 0.02
#: Fluorescence: a pixel is foreground where a channel (smoothed over one of the image's
#: pixels) exceeds that channel's background level by more than this many times the
#: background's noise ...
FLUORESCENCE_NOISE = 5.0
#: ... and by at least this fraction of the channel's range above its background (a noiseless
#: background: synthetic images, offset-subtracted data clipped at zero).
FLUORESCENCE_FLOOR = 0.002
#: The radius, in the image's own (finest) pixels, of the closing that joins the signal of
#: one piece of tissue (nuclei 10–20 px apart in a DAPI-only image) into one foreground.
FLUORESCENCE_GAP = 8
#: The most values a channel's background level and noise are read off (every k-th of them).
_LEVEL_SAMPLE = 2**20
#: Pixels 0 in every channel, in a piece this large, are padding, not a fluorescence image's
#: dark background (:func:`_padding`).
_PADDING_AREA = 64
#: ... unless they are the image's cleared outside (:func:`_cleared`): they hold at least
#: this share of its border, and no more than _TILE_EDGE of their edge runs straight.
_CLEARED_BORDER = 0.9
_TILE_EDGE = 0.8


def _level_for(levels: list[ImageLevel], max_side: int) -> int:
    """The finest of a file's pyramid ``levels`` whose longer side is at most ``max_side``
    (else the coarsest)."""
    sides = [max(level.sides) for level in levels]
    fitting = [i for i, side in enumerate(sides) if side <= max_side]
    return fitting[0] if fitting else len(levels) - 1


def _small(image: xr.DataArray, max_side: int) -> xr.DataArray:
    """The image, block-averaged by a whole factor until its longer side is at most
    ``max_side``, in memory (colour dims last): float32 means of each cell's finite values,
    those of the last row and column over the pixels the image has, and the cells' centres as
    coordinates (:func:`xfskde._cells.cell_means`: one compiled pass over each block in its own
    dtype; xarray's ``coarsen().mean()`` of the float32 image took 4.6 s of a 16384² RGB
    TIFF, this 0.98 s, 0.8 s of it reading the file)."""
    colour = [d for d in image.dims if d not in ("y", "x")]
    image = image.transpose("y", "x", *colour)
    factor = max(1, math.ceil(max(image.sizes["y"], image.sizes["x"]) / max_side))
    if factor == 1:
        return compute_collections([image])[0]
    height, width = image.sizes["y"], image.sizes["x"]
    data = image.data.reshape(height, width, -1)  # the colour dims as one
    if isinstance(data, da.Array):
        (cells,) = compute_collections(
            [cell_means(in_whole_cells(data, factor), factor, unit=False)]
        )
    else:
        cells = block_cells(np.asarray(data), factor, unit=False)
    shape = (cells.shape[0], cells.shape[1], *image.shape[2:])
    coords = {}
    for name, coord in image.coords.items():
        along = {d: factor for d in coord.dims if d in ("y", "x")}
        coords[name] = coord.coarsen(along, boundary="pad").mean() if along else coord
    return xr.DataArray(cells.reshape(shape), dims=image.dims, coords=coords, name=image.name,
                        attrs={**image.attrs, "downsampled_by": factor})  # fmt: skip


def _whole_source(
    image: xr.DataArray, storage_options: Any
) -> tuple[Any, dict[str, Any], list[ImageLevel] | None]:
    """The file an opened image came from, when the image is the whole of one of its levels
    (its low-resolution level is then read for the mask, of the same plane and series), how
    to open it, and its levels (read once, here); else the image itself (a crop, a resampled
    or computed image: block-averaged in memory, since the file's extent is not its extent).
    The file is reached as it was opened: ``encoding["source"]`` keeps its location and
    storage options."""
    recorded = image.encoding.get("source")
    source = recorded if isinstance(recorded, Location) else image.attrs["source"]
    source = locate(source, storage_options)
    opening = opened_as(image)
    try:
        levels = image_levels(source, **level_arguments(opening))
    except (OSError, ValueError, XfskdeError):
        return image, {}, None
    return (source, opening, levels) if is_whole_level(image, levels) else (image, {}, None)


def _brightfield(
    values: np.ndarray, nodata: Any, cells: float = 1.0
) -> tuple[np.ndarray, float, str]:
    """Foreground of stained tissue on glass, the threshold used, and what it thresholds
    (``"saturation"`` or ``"darkness"``); ``cells``: the image's finest pixels per mask pixel
    (:func:`_roughness_windows`).

    Channels are taken as planes (a reduction over a short last axis is slow in NumPy) in
    float32, which holds 8- and 16-bit values exactly.
    """
    planes, valid = _present_planes(values, nodata)
    top = max((float(p[valid].max()) for p in planes if valid.any()), default=0.0) or 1.0
    if len(planes) >= 3:
        high = np.maximum(np.maximum(planes[0], planes[1]), planes[2])
        low = np.minimum(np.minimum(planes[0], planes[1]), planes[2])
        candidates = valid & ~(high < _BLACK * top)
        saturation = np.where(high > 0, (high - low) / np.maximum(high, np.float32(1e-12)), 0)
        stained = saturation[candidates]
        if stained.size and float(np.percentile(stained, 99)) >= COLOURLESS:
            brightness = sum(planes[:3]) / np.float32(3 * top)
            mask, threshold, _ = _off_glass(saturation, brightness, candidates, cells)
            return mask, threshold, "saturation"
    grey = planes[0] if len(planes) == 1 else sum(planes[:3]) / np.float32(len(planes[:3]))
    if len(planes) < 3:
        candidates = valid & ~(grey < _BLACK * top)
    # without colour, the glass is bright and smooth: tissue is darker or rougher
    colourless = np.zeros(grey.shape, np.float32)
    mask, _, darkness = _off_glass(colourless, grey / np.float32(top), candidates, cells)
    return mask, darkness, "darkness"


def _off_glass(
    saturation: np.ndarray, brightness: np.ndarray, candidates: np.ndarray, cells: float = 1.0
) -> tuple[np.ndarray, float, float]:
    """The ``candidates`` that are not glass: more coloured than the glass by more than its
    spread, darker by more than :data:`GLASS_DARKER`, or rougher (:func:`_rough`, at
    ``cells`` of the image's pixels per mask pixel); the
    saturation above which a pixel is tissue, and the darkness ``1 - brightness`` (NaN both
    where there is no glass).

    The glass is the slide's bright, colourless mode: among the pixels less saturated than
    :data:`GLASS_SATURATION` and brighter than :data:`GLASS_BRIGHTNESS` (of the brightest
    pixel), the brightness of the most (200 bins), and the saturation of those within 0.05 of
    it. Its spread: 4 × 1.4826 × the median absolute deviation of their saturation (at least
    :data:`GLASS_COLOUR`), and of their brightness above the mode (tissue lies below it; at
    least :data:`GLASS_DARKER`). Only the glass is modelled, so tissue of any number of stains
    is tissue: Otsu's threshold of the saturation, which this replaces, split the stains from
    each other where they differed more than the faintest from the glass (an H&E-like section
    with 14 % glass lost 91 % of its tissue, scikit-image's IHC section its stroma). An image
    with fewer such pixels than :data:`GLASS_SHARE` of the candidates has no glass: all of it
    is tissue; so has one whose mode is textured, its brightness varying over
    :data:`GLASS_TEXTURE_SIZE`² mask pixels by more than :data:`GLASS_SMOOTH` (the median of
    the mode's unstained pixels' standard deviations; glass scanned with noise: 0.007) — pale
    tissue in a field of view without glass, such as scikit-image's IHC image, whose stroma's
    mode varies by 0.026 and was left out (27 % of the image). An image without colour (grey,
    or a grey micrograph stored as RGB) passes a saturation of 0: its glass is bright and
    smooth, its tissue darker or rougher."""
    pale = candidates & (saturation < GLASS_SATURATION) & (brightness > GLASS_BRIGHTNESS)
    if pale.sum() < max(1, GLASS_SHARE * candidates.sum()):
        return candidates.copy(), float("nan"), float("nan")
    counts, edges = np.histogram(brightness[pale], bins=200, range=(GLASS_BRIGHTNESS, 1.0))
    mode = float(edges[np.argmax(counts)] + 0.5 * (edges[1] - edges[0]))
    glass = pale & (np.abs(brightness - mode) < 0.05)
    colour = saturation[glass]
    level = float(np.median(colour))
    colour_spread = 4 * 1.4826 * float(np.median(np.abs(colour - level)))
    above = brightness[glass & (brightness >= mode)] - mode
    dark_spread = 4 * 1.4826 * float(np.median(above)) if above.size else 0.0
    threshold = level + max(colour_spread, GLASS_COLOUR)
    darker = mode - max(dark_spread, GLASS_DARKER)
    stained = candidates & ((saturation > threshold) | (brightness < darker))
    b = np.asarray(brightness, dtype=np.float32)  # float32 already: not copied
    fine = _spread(b, GLASS_TEXTURE_SIZE)
    smooth_glass = glass & ~stained
    # (a window reaching a missing pixel has no spread: NaN, left out of the glass's)
    measured = fine[smooth_glass & np.isfinite(fine)]
    if measured.size and float(np.median(measured)) > GLASS_SMOOTH:
        return candidates.copy(), float("nan"), float("nan")  # a textured mode: pale tissue
    rough = _rough(b, candidates, stained, smooth_glass, cells, fine)
    return stained | rough, threshold, 1 - darker


def _spread(brightness: np.ndarray, size: int) -> np.ndarray:
    """The standard deviation of ``brightness`` (float32) over each ``size``² window, of the
    pixels present in it (NaN where there are none): a missing pixel (NaN, an RGBA image's
    transparent one) entered the filters' running sums and made every spread after it along
    its row NaN, so that no pixel of those rows was rough (an IHC section on glass with a
    transparent strip down its left edge: 28 % of it left out)."""
    present = np.isfinite(brightness)
    if present.all():
        mean = ndimage.uniform_filter(brightness, size)
        squares = ndimage.uniform_filter(brightness * brightness, size)
        return np.sqrt(np.maximum(squares - mean**2, 0))
    values = np.where(present, brightness, np.float32(0))
    share = ndimage.uniform_filter(present.astype(np.float32), size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = ndimage.uniform_filter(values, size) / share
        squares = ndimage.uniform_filter(values * values, size) / share
        spread = np.sqrt(np.maximum(squares - mean**2, 0))
    return np.where(share > 1e-6, spread, np.float32(np.nan))


def _rough(
    brightness: np.ndarray,
    candidates: np.ndarray,
    stained: np.ndarray,
    glass: np.ndarray,
    cells: float,
    fine: np.ndarray,
) -> np.ndarray:
    """The pale ``candidates`` (not ``stained``) rougher than the glass: pale stroma between
    its nuclei, which colour alone cannot tell from glass, is textured where glass is smooth.

    The roughness is the standard deviation of the brightness over a window
    (:func:`_roughness_windows`: :data:`GLASS_TEXTURE_SIZE`² mask pixels, whose
    :func:`_spread` is given, ``fine``, and on a mask of ``cells`` < 4 of the image's pixels
    per mask pixel wider ones too, up to 21 image pixels); a pixel is rough, in a window,
    above the median of the smooth ``glass`` pixels' (the mode's, not stained; for the wider
    windows those whose whole window is such glass, none wider where there is none) by more
    than 4 × 1.4826 × their median absolute deviation, and by at least :data:`GLASS_TEXTURE`;
    it is tissue when rough in any window. A window across the tissue's edge is rough too, so a
    rough pixel near smooth pale pixels (glass, a lumen) of its window or the image's edge is
    not taken — within half the window for the first, within the window's side less one for
    the wider (whose edges would take the corners where a scanner's stitching seams meet): no
    ring of glass around the section, no line along a seam.
    Measured on synthetic slides of 512² (tissue in an ellipse on noisy grey-white glass,
    ``margin=0``), tissue left out, colour alone → with the roughness in the 5-px window:
    scikit-image's IHC section at 10–90 % glass 24–40 % → 7–15 % (what is left out is its
    white lumens and their rims, and the stroma's gaps between its nuclei: smooth over 5 px);
    random colour textures and an H&E-like section at 0–90 % glass, with a tint and a shading
    of the glass of 8–12 %, unchanged; none of the glass taken on any of the 45 slides, nor
    along stitching seams of up to 8 grey levels between 128-px scan tiles. The wider windows
    (2026-11-29): the IHC section at 10–90 % glass 7–15 % → 0.2–4 % (at 10 %, where the
    section runs off the image, 12 % before the reference below), in an ellipse on a 576 × 768
    slide 9.5 % → 3.9 % (the same mask computed at half its
    resolution, where a window of 5 spans 10 image pixels, 3.4 %); no more glass taken on
    the 45 slides and the seams (at most 0.008 % of the glass either way). With the glass of
    the wider windows' reference measured where their whole window is glass (the section
    running off the image, glass in its corners only: the rims of the glass had raised its
    level, 11.7 % → 4.0 %). On six slides of 8–25 IHC fragments on shaded glass with dust,
    6–15 % → 2–7 % left out; glass taken 0.01–0.07 % → 0.04–0.7 % of it: pockets of glass
    narrower than the widest window between fragments that touch."""
    pale = candidates & ~stained
    rough = np.zeros_like(candidates)
    if not glass.any():
        return rough
    for i, size in enumerate(_roughness_windows(cells)):
        reference = glass
        if i:  # the glass whose whole window is glass: not the rims of thin strips of it
            reference = ndimage.minimum_filter(glass.view(np.uint8), size=size,
                                               mode="nearest").view(bool)  # fmt: skip
            if not reference.any():
                break  # no glass as wide as the window: its roughness is not measured
        spread = fine if i == 0 else _spread(brightness, size)
        measured = spread[reference & np.isfinite(spread)]  # NaN: a window on missing pixels
        if not measured.size:
            break
        level = float(np.median(measured))
        mad = float(np.median(np.abs(measured - level)))
        here = pale & (spread > level + max(4 * 1.4826 * mad, GLASS_TEXTURE))
        reach = size // 2 if i == 0 else size - 1
        # beyond the image's edge counts as smooth: a strip of glass between the tissue and
        # the edge narrower than the window has no smooth pixel of its own
        near = ndimage.maximum_filter((pale & ~here).view(np.uint8), size=2 * reach + 1,
                                      mode="constant", cval=1)  # fmt: skip
        rough |= here & (near == 0)
    return rough


def _roughness_windows(cells: float) -> tuple[int, ...]:
    """The sides, in mask pixels, of the windows :func:`_rough` measures the roughness over
    on a mask of ``cells`` of the image's finest pixels per mask pixel:
    :data:`GLASS_TEXTURE_SIZE`, and each side of :data:`GLASS_TEXTURE_SPAN` (image pixels)
    in mask pixels (odd) that is wider. A mask of a slide's low-resolution level (``cells`` ≥
    4) has the first only: its 5 mask pixels span 20 image pixels or more."""
    sides = [GLASS_TEXTURE_SIZE]
    for span in GLASS_TEXTURE_SPAN:
        side = 2 * int(span / max(cells, 1.0) / 2) + 1
        if side > sides[-1]:
            sides.append(side)
    return tuple(sides)


def _present_planes(values: np.ndarray, nodata: Any) -> tuple[list[np.ndarray], np.ndarray]:
    """The channels of ``values`` as float32 planes, and where every channel is present:
    finite, and not all of them the ``nodata`` value."""
    planes = [values[..., i] for i in range(values.shape[-1])] if values.ndim == 3 else [values]
    planes = [np.asarray(p, dtype=np.float32) for p in planes]
    valid = np.ones(planes[0].shape, bool)
    if values.dtype.kind == "f":
        for p in planes:
            valid &= np.isfinite(p)
    if nodata is not None:
        missing = np.ones(planes[0].shape, bool)
        for p in planes:
            missing &= p == nodata
        valid &= ~missing
    return planes, valid


def _dark_level(smoothed: np.ndarray) -> tuple[float, float]:
    """The level of a channel's dark background and its noise: the mode of the darker half
    of its (smoothed, present) values, in 256 bins from their 0.1th percentile to their
    median, and the standard deviation of the background read off the values below that
    mode (1.4826 times their median distance to it: the half of a normal distribution that
    no tissue's signal reaches). 0 noise where nothing lies below the mode."""
    median = float(np.median(smoothed))
    low = smoothed[smoothed <= median]
    start = float(np.percentile(low, 0.1))
    if median <= start:
        return start, 0.0
    counts, edges = np.histogram(low, bins=256, range=(start, median))
    peak = int(np.argmax(ndimage.uniform_filter1d(counts.astype(np.float64), 3)))
    level = 0.5 * float(edges[peak] + edges[peak + 1])
    below = level - low[low < level]
    noise = 1.4826 * float(np.median(below)) if below.size else 0.0
    # a background clipped at zero (an offset subtracted) is skewed: its noise is wider above
    # its mode than below it; read it there too, on the values within 4 noises of the mode,
    # a few times (a normal distribution's right half gives back the same)
    above = low[low >= level] - level
    spread = max(noise, float(edges[1] - edges[0]))
    for _ in range(3):
        near = above[above <= 4 * spread]
        spread = 1.4826 * float(np.median(near)) if near.size else spread
    return level, max(noise, spread)


def _fluorescence(
    values: np.ndarray, nodata: Any, cells: float = 1.0
) -> tuple[np.ndarray, list[float], list[float], list[float]]:
    """Foreground of a fluorescence image (signal on a dark background): where any channel,
    smoothed by a Gaussian of σ one of the image's pixels (none where a mask pixel is a mean
    of 2 × 2 or more), exceeds its background's level by more than
    :data:`FLUORESCENCE_NOISE` times the background's noise (:func:`_dark_level`) and at least
    :data:`FLUORESCENCE_FLOOR` of the channel's range above it (its 99.9th percentile); then
    closed by a disk of :data:`FLUORESCENCE_GAP` image pixels (``cells``: the image's finest
    pixels per mask pixel; at least one mask pixel), so that nuclei lit in one channel and
    the dark cytoplasm between them are one piece of tissue. Also each channel's threshold,
    background level and noise, in the image's units.

    Each channel is thresholded against its own background, so a channel without signal
    (noise only) adds nothing, and a bright one cannot hide a dim one. The background is the
    darker half's mode: an image without background (a field of view inside the tissue) has
    its dimmest tissue taken for it and left out.

    Zeros in every channel over an area are padding, left out (:func:`_padding`), unless they
    are the image's cleared outside (:func:`_cleared`): then they are the background, and the
    foreground is every present pixel not among them (less specks under
    :data:`_PADDING_AREA`: a clipped background's noise), closed as above; each channel's
    threshold, level and noise 0. Measured on an ellipse of tissue cleared around (1024²,
    31 % of it): a uniform 0–4000 stain, a normal one of 2000 ± 600 or ± 200, and nuclei of
    3000 on a cytoplasm of 300 found whole (none of the first three, 99.3 % of the last, when
    the zeros were taken for padding)."""
    planes, valid = _present_planes(values, nodata)
    padding = _padding(planes, valid)
    if _cleared(padding):  # the zeros are the background, the tissue all that is not 0
        tissue = _without_small(valid & ~padding, _PADDING_AREA)  # not the specks of a clipped
        if tissue.any() and not tissue.all():  # background's noise around it
            tissue = _closed(tissue, max(1, round(FLUORESCENCE_GAP / cells))) & valid & ~padding
        zeros = [0.0] * len(planes)
        return tissue, zeros, list(zeros), list(zeros)
    valid &= ~padding
    foreground = np.zeros(valid.shape, bool)
    thresholds, levels, noises = [], [], []
    if not valid.any():
        return foreground, thresholds, levels, noises
    # over one of the image's pixels: a mask pixel of 2 or more is a mean already, and the
    # smoothing's blur would carry bright nuclei's signal out over the background (a ring of
    # 1-3 mask pixels: 7.6 % of the background of a slide masked on 4-px cells)
    sigma = 1.0 / cells
    weight = ndimage.gaussian_filter(valid.astype(np.float32), sigma) if sigma >= 0.5 else None
    for plane in planes:
        if weight is None:
            smoothed = np.where(valid, plane, np.float32(np.nan))
        else:
            summed = ndimage.gaussian_filter(np.where(valid, plane, np.float32(0)), sigma)
            with np.errstate(invalid="ignore", divide="ignore"):
                smoothed = summed / weight
        present = smoothed[valid]
        if present.size > _LEVEL_SAMPLE:  # every k-th value: the levels of a million are
            present = present[:: present.size // _LEVEL_SAMPLE]  # those of all (to 0.1 count)
        level, noise = _dark_level(present)
        top = float(np.percentile(present, 99.9))
        threshold = level + max(FLUORESCENCE_NOISE * noise, FLUORESCENCE_FLOOR * (top - level))
        foreground |= valid & (smoothed > threshold)
        thresholds.append(threshold)
        levels.append(level)
        noises.append(noise)
    if foreground.any() and not foreground.all():
        foreground = _closed(foreground, max(1, round(FLUORESCENCE_GAP / cells))) & valid
    return foreground, thresholds, levels, noises


def _padding(planes: list[np.ndarray], valid: np.ndarray) -> np.ndarray:
    """A stitched slide's padding: its pixels 0 in every channel, in 8-connected pieces of
    :data:`_PADDING_AREA` pixels or more. A camera's background is its offset plus noise,
    never 0 over an area (a background clipped at zero after an offset was subtracted is 0 in
    scattered pixels, and where it is 0 in pieces that large it is no tissue either); taken
    for the dark background, the padding's zeros put its level at 0 and every pixel of the
    real background above it (20 % of a section's image padded: all of its background
    taken)."""
    zero = valid.copy()
    for plane in planes:
        zero &= plane == 0
    return _without_small(zero, _PADDING_AREA) if zero.any() else zero


def _cleared(padding: np.ndarray) -> bool:
    """Whether the zeros of an image (:func:`_padding`) are its cleared outside, not a stitched
    slide's padding: an image whose outside was set to 0 (QuPath's or Fiji's "clear outside",
    an export masked to an annotation) has no dark background left but its zeros, and read
    off the tissue, the background level took it all (a homogeneous stain: none of it found).
    Cleared where the zeros hold at least :data:`_CLEARED_BORDER` of the image's border (they
    surround the rest) and no more than :data:`_TILE_EDGE` of their edge runs straight along
    the rows and columns: a scanner pads around the tiles it scanned, whose rectangles reach
    the image's border (its extent is theirs) and draw straight edges (a strip or an L of
    padding: all of its edge; a cleared ellipse: 0.42 of its edge, a tissue's ragged one
    less)."""
    if not padding.any() or padding.all():
        return False
    border = np.concatenate([padding[0], padding[-1], padding[1:-1, 0], padding[1:-1, -1]])
    if border.mean() < _CLEARED_BORDER:
        return False
    across = padding[1:] != padding[:-1]  # the edge between rows, then between columns
    along = padding[:, 1:] != padding[:, :-1]
    straight = (across[:, 1:] & across[:, :-1]).sum() + (along[1:] & along[:-1]).sum()
    return bool(straight <= _TILE_EDGE * (across.sum() + along.sum()))


def _closed(mask: np.ndarray, radius: int) -> np.ndarray:
    """``mask`` closed by the disk of the pixels within ``radius`` (a dilation, then an
    erosion), on the mask padded by its own edge, so that what runs off the image is not
    eroded there. Wide disks by distance transforms (0.27 s on 2048², whatever the radius:
    the disk's own dilation and erosion took 0.6 s at radius 8), narrow ones by the disk
    (0.05 s at radius 2); the same pixels either way."""
    from skimage import morphology

    padded = np.pad(mask, radius, mode="edge")
    if radius <= 4:
        disk = morphology.disk(radius).astype(bool)
        closed = ndimage.binary_closing(padded, disk)
    else:
        grown = ndimage.distance_transform_edt(~padded) <= radius
        if grown.all():  # the gaps all closed (a transform needs both kinds of pixel)
            return np.ones(mask.shape, bool)
        closed = ndimage.distance_transform_edt(grown) > radius
    return closed[radius:-radius, radius:-radius]


def _slide_like(values: np.ndarray, dtype: np.dtype, small: xr.DataArray) -> bool:
    """Whether ``method="auto"`` takes an image for a brightfield slide: 3 or 4 channels of
    8 bits (a scanner's RGB or RGBA; ``dtype`` is the one its values were stored in, 8 bits
    for an RGBA PNG whose alpha :func:`xfskde.open_image` turned into NaN; or floats within
    [0, 1], as scikit-image's ``img_as_float`` gives them), without a CRS. A scene's RGB (an
    orthophoto, a satellite's red, green and blue) is not one: its bright colourless roofs
    and clouds are no glass, its dark water no scanner's padding, and brightfield's rule left
    them out (an 8-bit RGB orthophoto with a roof and a lake: 24 % of it); nor is a 16-bit
    image (fluorescence, a satellite's counts)."""
    if not (values.ndim == 3 and values.shape[-1] in (3, 4)) or crs_wkt(small) is not None:
        return False
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        finite = np.isfinite(values)  # the range of the values present, without a copy
        if not finite.any():
            return False
        low = values.min(where=finite, initial=np.inf)
        return float(low) >= 0 and float(values.max(where=finite, initial=-np.inf)) <= 1
    return dtype == np.uint8


def _warn_no_background(values: np.ndarray, dtype: np.dtype) -> None:
    """:class:`~xfskde.exceptions.MaskWarning`: ``"auto"`` took an image without a CRS for data,
    not a slide, and all of it is data; which method to ask for instead."""
    channels = values.shape[-1] if values.ndim == 3 else 1
    warnings.warn(
        f"mask='auto' found no background: an image of {channels} channel(s) of "
        f"{np.dtype(dtype)} is not taken for a brightfield slide (8-bit RGB), so it is masked "
        "by its data, and all of it is non-zero; for signal on a dark background ask for "
        "mask='fluorescence' (--mask fluorescence), for tissue on glass mask='brightfield'",
        MaskWarning,
        stacklevel=find_stack_level(),
    )


def _dark_share(values: np.ndarray, nodata: Any, mask: np.ndarray, cells: float) -> float:
    """The share of ``mask`` (True: tissue) that is a dark background: farther than
    :data:`DARK_DISTANCE` image pixels (``cells`` per mask pixel) from the signal
    :func:`_fluorescence` finds (if it finds 5 % of the image or more), and dark — each
    pixel's brightest channel, over that channel's 99.9th percentile, below
    :data:`DARK_LEVEL` there on average; 0 otherwise.

    Where ``"auto"``'s brightfield rule finds no glass it takes everything but black padding
    for tissue, and a fluorescence image stored as 8-bit RGB (a composite exported for
    viewing) keeps its dark background there where it is not black (noise filling it with
    specks, or a camera's offset kept). Measured on
    :func:`xfskde.datasets.section_in_fluorescence` so stored, stretched from its 0.5th to
    its 99.8th percentile (brightness 1, 0.1 and 0.02): 41–42 % of the image farther from
    the signal, at 0.02–0.36 on average; twelve crops of scikit-image's IHC image (brightfield
    without glass): their pale parts found as a signal in seven, the rest as far as 53–91 %
    but at 0.57–0.66, the stain being no dark background. A composite keeping the offset of a
    dim exposure (its background at 0.67–0.84 of the range) is not told from brightfield.
    Measured on cells of k × k pixels' means, at most :data:`_DARK_SIDE` on a side: 0.07 s
    for a mask of 2048², where its pixels took 1.6 s."""
    step = max(1, math.ceil(max(mask.shape) / _DARK_SIDE))
    if step > 1:  # a share: on step x step cells, their means (missing pixels left out)
        cells_of = block_cells(values if values.ndim == 3 else values[..., None], step,
                               nodata, unit=False)  # fmt: skip
        values = cells_of if values.ndim == 3 else cells_of[..., 0]
        mask = block_cells(mask[..., None], step, unit=False)[..., 0] >= 0.5
        nodata, cells = None, cells * step
    planes, valid = _present_planes(values, nodata)
    taken = mask & valid
    signal = _fluorescence(values, nodata, cells)[0]
    if not taken.any() or signal.sum() < 0.05 * valid.sum():
        return 0.0
    far = taken & (ndimage.distance_transform_edt(~signal) > DARK_DISTANCE / cells)
    if not far.any():
        return 0.0
    brightest = np.zeros(far.sum(), np.float32)
    for plane in planes:
        top = float(np.percentile(plane[valid], 99.9)) or 1.0
        np.maximum(brightest, plane[far] / np.float32(top), out=brightest)
    if float(brightest.mean()) > DARK_LEVEL:
        return 0.0
    return float(far.sum() / taken.sum())


def _warn_dark_tissue(values: np.ndarray, dtype: np.dtype, share: float) -> None:
    """:class:`~xfskde.exceptions.MaskWarning`: ``"auto"`` took an image for a brightfield
    slide, found no glass, and ``share`` of what it took for tissue is a dark background
    (:func:`_dark_share`); which method to ask for instead."""
    channels = values.shape[-1] if values.ndim == 3 else 1
    warnings.warn(
        f"mask='auto' took an image of {channels} channel(s) of {np.dtype(dtype)} for a "
        f"brightfield slide and found no glass, so all of it is tissue, {share:.0%} of it a "
        "dark background far from any signal, as a fluorescence image's; for signal on a "
        "dark background ask for mask='fluorescence' (--mask fluorescence)",
        MaskWarning,
        stacklevel=find_stack_level(),
    )


def _nonzero(values: np.ndarray, nodata: Any) -> np.ndarray:
    ok = np.isfinite(values) & (values != 0)
    if nodata is not None:
        ok &= values != nodata
    return ok.any(axis=-1) if values.ndim == 3 else ok


def _check_fraction(min_fraction: Any) -> float:
    """``min_fraction`` as a float after checking it is a share of the mask's pixels, in
    [0, 1] (2.0 dropped every object and filled every hole: all foreground; NaN crashed)."""
    if isinstance(min_fraction, bool) or not isinstance(min_fraction, numbers.Real):
        raise TypeError(
            f"min_fraction must be a number in [0, 1] (a share of the mask's pixels), got "
            f"{min_fraction!r}"
        )
    if not 0.0 <= float(min_fraction) <= 1.0:
        raise ParameterError(
            f"min_fraction must be a share of the mask's pixels in [0, 1] (default 1e-4), got "
            f"{min_fraction!r}"
        )
    return float(min_fraction)


def _without_small(mask: np.ndarray, area: int) -> np.ndarray:
    """``mask`` less its connected components (8-connected) of fewer than ``area`` pixels."""
    labels, _ = ndimage.label(mask, structure=np.ones((3, 3), bool))
    keep = np.bincount(labels.ravel()) >= area
    keep[0] = False
    return keep[labels]


def tissue_mask(
    image: Any,
    *,
    method: str = "auto",
    level: int | None = None,
    max_side: int = MAX_SIDE,
    min_fraction: float = 1e-4,
    margin: int = MARGIN,
    storage_options: dict | None = None,
) -> xr.DataArray:
    """The foreground (tissue, land, signal) of an image, on a low-resolution level.

    Parameters
    ----------
    image : path, URL, xarray.DataArray or array
        A slide or scene as :func:`xfskde.open_image` reads it (the mask is computed on the
        pyramid level chosen below), or an image already opened (a DataArray whose ``source``
        attr names its file is read from that file's low-resolution level; any other, and a
        NumPy or Dask ``(y, x)`` or ``(y, x, c)`` array, a PIL picture or a Zarr object as
        :func:`xfskde.open_image` reads it, is block-averaged in memory down to
        ``max_side``). A DataArray's spatial dims are read as the image functions read them
        (:func:`xfskde._labels.image_dims`: ``(lat, lon)`` too); the mask's are ``y, x``.
    method : {"auto", "brightfield", "fluorescence", "nonzero"}, optional
        How foreground is told from background (the module docstring); default ``"auto"``.
    level : int, optional
        The pyramid level of the file to compute the mask on; default: the finest level whose
        longer side is at most ``max_side`` pixels, else the coarsest. Only where the mask is
        read from a file (a path or URL, or a DataArray read whole from one): an array, or a
        DataArray that is not a whole level of its file, is block-averaged down to
        ``max_side``, and refuses a ``level``.
    max_side : int, optional
        The longest side, in pixels, of the mask: the level read (or the image given) is
        block-averaged by the smallest whole factor that brings its longer side to at most
        this; default :data:`MAX_SIDE` (2048).
    min_fraction : float, optional
        Objects and holes (8-connected) of fewer than ``max(1, int(min_fraction * my * mx))``
        mask pixels are dropped and filled, before the foreground is grown: a share in
        [0, 1]; default 1e-4.
    margin : int, optional
        The radius, in mask pixels, of the disk the foreground is grown by (dilated with);
        0 leaves it as found; default :data:`MARGIN` (2).
    storage_options : dict, optional
        Options of a URL's filesystem (as :func:`xfskde.open_image` takes them; refused, as
        there, with a local path or an image in memory); default none.

    Returns
    -------
    xarray.DataArray
        Boolean, dims ``(y, x)``, named ``"tissue_mask"``, at most ``max_side`` on a side,
        True on the foreground, with the ``y``/``x`` coordinates, if any, of the level (or
        image) it was computed on, averaged over its cells (µm when the image records its
        pixel size; a GeoTIFF's CRS coordinates, and its scalar CRS coord), and attrs
        ``method`` (the one used), ``method_asked`` (``"auto"`` or the method given),
        ``threshold`` (for brightfield: the saturation above which a pixel is tissue, or the
        darkness, ``measure`` saying which; NaN where there is no glass; for fluorescence, a
        list of each channel's, in the image's units, with the lists ``background_level``
        and ``background_noise``: 0 for an outside cleared to 0; NaN for nonzero),
        ``source`` (the file, or ``"array"``),
        ``source_level`` (the level read), ``mask_of`` (the ``[rows, columns]`` of the full
        resolution image it covers: level 0 of a file, or the image given) and
        ``long_name``.

    Raises
    ------
    TypeError
        For a ``max_side``, ``margin`` or ``level`` that is not an integer, or a
        ``min_fraction`` that is not a number (a bool is neither).
    ParameterError
        For an unknown ``method``, a ``max_side`` below 1, a negative ``margin``, a
        ``min_fraction`` outside [0, 1] (NaN too), a ``level`` the file does not have or
        given with an image that is not a whole level of a file, or ``storage_options``
        with a local path or an image in memory.
    FileNotFoundError, ImageReadError, DimensionError
        For an image that :func:`xfskde.open_image` cannot open (a missing path, a format it
        does not read, an array whose dims cannot be told from its shape).

    Warns
    -----
    MaskWarning
        Where ``"auto"`` may have chosen the wrong method: it took an image without a CRS
        for data (``"nonzero"``) and all of it is foreground, or took it for a slide
        (``"brightfield"``), found no glass, and at least :data:`DARK_SHARE` of what it took
        for tissue is a dark background far from any signal (:func:`_dark_share`). Both
        name ``"fluorescence"``.
    """
    _check_choice("method", method, METHODS)
    asked = method
    max_side = _check_positive_int("max_side", max_side)
    margin = _check_nonnegative_int("margin", margin)
    min_fraction = _check_fraction(min_fraction)
    level = None if level is None else _check_level(level)
    opening: dict[str, Any] = {}  # the plane and series of a stack or multi-image file
    levels = None  # a file's pyramid, read once (its headers: over HTTP, requests each time)
    if not (isinstance(image, xr.DataArray) and "source" in image.attrs):  # reached as it is
        refuse_options_in_memory(image, storage_options)
    if not isinstance(image, str | os.PathLike | Location | xr.DataArray):  # an array, a
        image = open_image(image)  # picture, a Zarr object: labelled as open_image labels it
    image = _named_yx(image)  # an image of (lat, lon): its mask is (y, x)
    if isinstance(image, xr.DataArray) and "source" in image.attrs:
        image, opening, levels = _whole_source(image, storage_options)  # its low resolution
    if isinstance(image, xr.DataArray):
        if level is not None:
            raise ParameterError(
                f"level={level} picks a pyramid level of a file; this image is not a whole level "
                "of one (an array, a crop, a computed DataArray) and is block-averaged down to "
                "max_side: drop level, or pass the file's path or URL"
            )
        full = (image.sizes["y"], image.sizes["x"])
        dtype = stored_integer_dtype(image) or image.dtype
        small = _small(image, max_side)
    else:
        if levels is None:
            arguments = level_arguments(opening)
            levels = image_levels(image, storage_options=storage_options, **arguments)
        if level is None:
            level = _level_for(levels, max_side)
        opened = open_image(image, level=level, storage_options=storage_options, **opening)
        full = levels[0].sides
        dtype = stored_integer_dtype(opened) or opened.dtype
        small = _small(opened, max_side)
    values = np.asarray(small.values)
    nodata = image_nodata(small)[0]
    if isinstance(nodata, tuple):  # each band its own: a pixel with any band missing is
        values, nodata = pixel_nodata(values, nodata)  # missing, as segmentation reads it
    if method == "auto":
        method = "brightfield" if _slide_like(values, dtype, small) else "nonzero"
    measure, levels = None, {}
    cells = max(full[0] / values.shape[0], full[1] / values.shape[1])
    if method == "brightfield":
        mask, threshold, measure = _brightfield(values, nodata, cells)
    elif method == "fluorescence":
        mask, threshold, level, noise = _fluorescence(values, nodata, cells)
        levels = {"background_level": level, "background_noise": noise}
    else:
        mask, threshold = _nonzero(values, nodata), float("nan")
    area = max(1, int(min_fraction * mask.size))
    mask = ~_without_small(~_without_small(mask, area), area)  # objects, then holes
    if margin:
        from skimage import morphology

        mask = ndimage.binary_dilation(mask, structure=morphology.disk(margin).astype(bool))
    if asked == "auto" and method == "nonzero" and mask.all() and crs_wkt(small) is None:
        _warn_no_background(values, dtype)
    if asked == "auto" and method == "brightfield" and math.isnan(threshold):
        share = _dark_share(values, nodata, mask, cells)
        if share >= DARK_SHARE:
            _warn_dark_tissue(values, dtype, share)
    coords = {d: small.coords[d] for d in ("y", "x") if d in small.coords}
    coords.update({k: c for k, c in small.coords.items() if c.ndim == 0})  # its CRS, if any
    return xr.DataArray(
        mask,
        dims=("y", "x"),
        coords=coords,
        name="tissue_mask",
        attrs={
            "method": method,
            "method_asked": asked,
            **({} if measure is None else {"measure": measure}),
            "threshold": threshold,
            **levels,
            "source": str(small.attrs.get("source", "array")),
            "source_level": int(small.attrs.get("source_level", 0)),
            "mask_of": [int(full[0]), int(full[1])],
            "long_name": "foreground (True) and background (False)",
        },
    )


# ------------------------------------------------------------------------- using a mask


def resolve_mask(
    mask: Any, image: Any, margin: int = MARGIN, classes: Sequence[str] | str | int | None = None
) -> xr.DataArray | None:
    """The mask a consumer was given, as a small boolean ``(y, x)`` DataArray (or None).

    ``mask`` is None (no mask), ``"auto"`` or another of :data:`METHODS` (:func:`tissue_mask`
    of ``image`` by that method, grown by ``margin`` mask pixels), a path or URL of a mask
    image or a PIL picture of one (non-zero is foreground; a palette PNG's indices, not its
    colours), regions drawn as polygons (a GeoJSON file, mapping or GeoDataFrame, a shapefile
    or GeoPackage: :func:`xfskde.io.geojson.polygon_mask`, of the regions of ``classes`` only
    when given), or an array, DataArray or nested list of rows (``[[False, True], ...]``, as
    :func:`numpy.asarray` reads it; truthy is foreground). A pixel is foreground where any
    channel is finite and non-zero: NaN never is (a probability map's or abundances'
    outside). A file that holds label images beside its image — ``xfskde segment``'s OME-TIFF
    and OME-Zarr results, whose image is the abundances — is its label image
    (:func:`_labels_of_a_result`: the labelled pixels, or with ``classes`` those of some
    textures); one that holds several is refused, naming them. An image whose spatial dims are
    named otherwise (``(lat, lon)``) is read as the image functions read it, and a DataArray
    mask may name its dims as the image does, in either order. With ``classes``, a mask
    image or array is a label image, its foreground the pixels of those labels
    (:func:`_of_label_classes`: ``["40"]``, ``["texture 2"]``).

    Parameters
    ----------
    mask : None, str, path, URL, PIL picture, mapping, array, DataArray or nested list
        The mask, in any of the forms above; ``None`` or ``"none"`` for no mask.
    image : xarray.DataArray or array
        The image the mask is for, as :func:`xfskde.open_image` gives it (a NumPy or Dask
        array is labelled as it labels one): a method computes the mask on it, and any other
        mask is placed on its extent (by coordinates, or by position: the module docstring)
        and reprojected into its CRS.
    margin : int, optional
        The ``margin`` of :func:`tissue_mask`, in mask pixels, where ``mask`` names a method;
        a mask given as a file, picture, polygons or array is taken as it is (never grown);
        default :data:`MARGIN` (2).
    classes : str, int or sequence of them, optional
        The classes whose regions (of polygons) or labels (of a label image: ``"40"`` or 40,
        ``"texture 2"``) are the foreground: one, or a list. Default: every region, and every
        non-zero pixel.

    Returns
    -------
    xarray.DataArray or None
        None for no mask. Else boolean, dims ``(y, x)``, True on the foreground: the
        :func:`tissue_mask` of the image for a method; any other mask cut to the image's
        extent and in its order, with the mask's own ``y``/``x`` coordinates where it has
        them (a mask in another CRS reprojected onto the image's grid, coarsened to at most
        :data:`MAX_SIDE` on a side, recording ``reprojected_from``; one in the image's CRS
        covering part of it extended over the rest as background, recording ``mask_covers``,
        the share of the image's extent it covers), the attrs of the mask it
        was read from (a file's ``source`` and ``source_version``) and, with ``classes``,
        ``classes``. Its shape is the image's at one scale, not necessarily the image's.

    Raises
    ------
    ParameterError
        For ``classes`` without a mask that has classes (None, ``"none"`` or a method), or
        naming a class the mask does not hold, or on a mask of fractions or of several
        channels; a list that is not rows of equal length of numbers; a file that holds
        several label images; a mask of another aspect than the image, one without a CRS
        whose coordinates do not cover the image, one whose coordinates miss it, one in
        another unit or in a CRS it cannot be
        reprojected from; a mask made by :func:`tissue_mask` for another extent where either
        has no coordinates; polygons :func:`xfskde.io.geojson.polygon_mask` refuses; and what
        :func:`tissue_mask` refuses; a negative ``margin``.
    TypeError
        For an ``image`` that is neither a DataArray nor an array, or a ``margin`` that is
        not an integer.
    DimensionError
        For an array mask that is not 2-D, or a DataArray mask without ``y`` and ``x`` dims
        (or the image's spatial dims).
    FileNotFoundError
        For a path that does not exist (a misspelled method is taken for a path: the message
        lists the methods).
    ImageReadError
        For a mask file that cannot be read as an image.
    """
    margin = _check_nonnegative_int("margin", margin)
    classes = _class_list(classes)
    if classes is not None and (
        mask is None or (isinstance(mask, str) and mask in (*METHODS, "none"))
    ):
        raise ParameterError(
            f"classes (--mask-classes) choose the regions of a GeoJSON or the pixels of a "
            f"label image by their class; the mask {mask!r} has no classes"
        )
    if mask is None or (isinstance(mask, str) and mask == "none"):
        return None
    if isinstance(image, np.ndarray | da.Array):  # labelled as open_image labels an array
        image = open_image(image)
    elif not isinstance(image, xr.DataArray):
        raise TypeError(
            f"image must be a DataArray (xfskde.open_image(...), or xr.DataArray(image, "
            f"dims=('y', 'x'))) or a NumPy or Dask array, got a {type(image).__name__}"
        )
    spatial = _spatial_names(image)
    image = _named_yx(image)
    if isinstance(mask, str) and mask in METHODS:
        return tissue_mask(image, method=mask, margin=margin)
    mask = _reached_as_the_image(mask, image)
    if is_polygons(mask):  # drawn on the image's grid: nothing to place
        return polygon_mask(mask, image, classes=classes)
    if isinstance(mask, xr.DataArray):
        values = _named_yx(mask, spatial) if set(spatial) <= set(mask.dims) else mask
    elif isinstance(mask, np.ndarray | da.Array | list | tuple):
        mask = _listed(mask) if isinstance(mask, list | tuple) else mask
        if mask.ndim != 2:
            raise DimensionError(f"a mask must be 2-D (y, x), got shape {mask.shape}")
        values = xr.DataArray(mask, dims=("y", "x"))
    else:
        values = _mask_image(*_labels_of_a_result(mask))
    colour = [d for d in values.dims if d not in ("y", "x")]
    if len(values.dims) - len(colour) != 2:
        named = "" if spatial == ("y", "x") else f" (or the image's, {spatial[0]} and {spatial[1]})"
        raise DimensionError(
            f"a mask needs dims y and x{named}, got {values.dims}: rename them, e.g. "
            f".rename({{{values.dims[0]!r}: 'y', {values.dims[-1]!r}: 'x'}})"
        )
    values = values.transpose("y", "x", *colour)  # an (x, y) mask is not laid over transposed
    array = np.asarray(values.values)
    if classes is not None:
        foreground = _of_label_classes(array, classes, mask)
    else:  # non-zero in any channel; NaN never (abundances, probabilities: NaN outside)
        present = np.isfinite(array) & (array != 0) if array.dtype.kind == "f" else array != 0
        foreground = present.reshape(*present.shape[:2], -1).any(axis=-1) if colour else present
    coords = {d: values.coords[d] for d in ("y", "x") if d in values.coords}
    coords.update({k: c for k, c in values.coords.items() if c.ndim == 0})  # its CRS, if any
    result = xr.DataArray(foreground, dims=("y", "x"), coords=coords, name="mask",
                          attrs=dict(values.attrs))  # fmt: skip
    if classes is not None:
        result.attrs["classes"] = list(classes)
    return _over_extent(_in_image_crs(result, image), image)


def _refuse_no_foreground(
    mask: xr.DataArray | None, image_shape: tuple[int, int], stride: int, given: Any
) -> None:
    """Refuse a resolved ``mask`` without foreground at any sample of the stride grid of an
    image of ``image_shape`` (each sample takes the mask pixel under it:
    :func:`xfskde._grid.mask_at_samples`), before anything is computed or written: its field
    and maps would be NaN throughout, a store of nothing that passes for a result (a mask with
    foreground only between the samples of a coarse stride is refused alike). ``given`` is
    the mask as the caller named it."""
    if mask is None:
        return
    values = np.asarray(mask.values, bool)
    between = ""
    if values.any():
        (my, mx), o = values.shape, sample_offset(stride)
        rows, cols = (
            np.unique(np.minimum(((np.arange(sample_count(n, stride)) * stride + o + 0.5) * m
                                  / n).astype(np.int64), m - 1))
            for n, m in zip(image_shape, (my, mx), strict=True)
        )  # fmt: skip
        if values[np.ix_(rows, cols)].any():
            return
        between = f" at the samples of stride {stride} (it has some only between them)"
    if not isinstance(given, str | os.PathLike):  # resolved already (the command line's)
        given = mask.attrs.get("method_asked", mask.attrs.get("source"))
    if isinstance(given, str) and given in METHODS:
        named = f"mask={given!r} (--mask {given}) found no foreground on this image"
        remedy = "compute without a mask (mask=None, --mask none) or give the foreground"
    else:
        what = "" if given in (None, "array") else f" {given}"
        named = f"the mask{what} has no foreground over this image"
        remedy = "give a mask whose non-zero pixels cover the part to compute"
    raise ParameterError(f"{named}{between}: there is nothing to compute; {remedy}")


def _spatial_names(image: Any) -> tuple[str, str]:
    """The names of an image DataArray's spatial dims (:func:`xfskde._labels.image_dims`:
    ``("lat", "lon")``, ``("row", "col")``); ``("y", "x")`` for any other image."""
    if not isinstance(image, xr.DataArray) or {"y", "x"} <= set(image.dims):
        return ("y", "x")
    y, x, _ = image_dims(image)
    return (y, x)


def _named_yx(array: Any, spatial: tuple[str, str] | None = None) -> Any:
    """A DataArray with its spatial dims — ``spatial``, else the image's
    (:func:`_spatial_names`) — renamed ``y`` and ``x``, as a mask is laid out and placed (a
    coord already named ``y`` or ``x`` that is not a dim is dropped: it would take the name);
    anything else as it is. An image of ``(lat, lon)``, which the image functions read by
    position, was taken for one without a ``y`` (a bare KeyError)."""
    if not isinstance(array, xr.DataArray):
        return array
    y, x = spatial if spatial is not None else _spatial_names(array)
    if (y, x) == ("y", "x"):
        return array
    clash = [c for c in ("y", "x") if c in array.coords and c not in array.dims]
    return array.drop_vars(clash).rename({y: "y", x: "x"})


def _listed(mask: list | tuple) -> np.ndarray:
    """A mask given as nested lists (rows of booleans or numbers), as the array NumPy reads
    from it; lists that are not one number per pixel (rows of different lengths, strings)
    are refused in one line."""
    try:
        array = np.asarray(mask)
    except ValueError as exc:  # rows of different lengths
        raise ParameterError(
            "a mask given as a list must be rows of equal length, one boolean or number per "
            f"pixel ({' '.join(str(exc).split())})"
        ) from exc
    if array.dtype.kind not in "biuf":
        raise ParameterError(
            "a mask given as a list must be rows of booleans or numbers, one per pixel; got "
            f"items NumPy reads as {array.dtype} (GeoJSON features are mappings with a 'type')"
        )
    return array


def _reached_as_the_image(mask: Any, image: Any) -> Any:
    """A mask's URL of the image's protocol reached with the storage options the image was
    opened with (``open_image("s3://...", storage_options=...)``, then ``mask="s3://.../
    aoi.geojson"``: the mask was read without them, a bare NoCredentialsError); any other mask
    as it is."""
    source = getattr(image, "encoding", {}).get("source")
    if not isinstance(mask, str | os.PathLike) or not isinstance(source, Location):
        return mask
    where = locate_beside(mask, source)
    return where if where.storage_options else mask


def _class_list(classes: Any) -> list[str] | None:
    """``classes`` as a list of names: one name (``"40"``, ``"texture 2"``) or number (40)
    as a list of it — a string was taken as the sequence of its characters, so ``"40"``
    chose the labels 4 and 0, the background among them —, numbers as their names."""
    if classes is None:
        return None
    if isinstance(classes, str | numbers.Integral):
        classes = [classes]
    named = []
    for item in classes:
        if isinstance(item, numbers.Integral) and not isinstance(item, bool):
            item = str(int(item))
        if not isinstance(item, str):
            raise ParameterError(
                f"classes are names or whole numbers ('40', 40, 'texture 2', 'forest'); got "
                f"{item!r}"
            )
        named.append(item)
    return named


#: How a class of xfskde's labels is named (its regions' ``class``, its NGFF name).
_TEXTURE_CLASS = re.compile(r"texture (\d+)")


def _of_label_classes(array: np.ndarray, classes: Sequence[str], mask: Any) -> np.ndarray:
    """The pixels of a label image (one integer per pixel: a land-cover map, a classifier's
    or annotation tool's labels, xfskde's own) whose label is one of ``classes``: each an
    integer (``"40"``), or ``"texture N"`` for label N of xfskde's labels, as their regions
    and NGFF names call it. A class the image does not hold is refused, naming those it does
    (at most 24)."""
    name = mask if isinstance(mask, str | os.PathLike) else type(mask).__name__
    if array.ndim != 2:
        raise ParameterError(
            f"classes (--mask-classes) choose pixels of a label image by their value; the mask "
            f"{name!s} has {array.shape[-1]} channels: give one band of labels"
        )
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
    if array.dtype.kind not in "iub" and not np.array_equal(finite, np.round(finite)):
        raise ParameterError(
            f"classes (--mask-classes) choose pixels of a label image by their value; the mask "
            f"{name!s} holds fractions ({array.dtype}), not labels"
        )
    wanted = []
    for text in classes:
        named = _TEXTURE_CLASS.fullmatch(text.strip())
        number = named.group(1) if named else text.strip()
        if not re.fullmatch(r"-?\d+", number):
            raise ParameterError(
                f"a class of a label image is its value, a whole number, or 'texture N' for "
                f"xfskde's labels; got {text!r} (the mask {name!s})"
            )
        wanted.append(int(number))
    held = np.unique(finite)
    missing = [c for c, v in zip(classes, wanted, strict=True) if v not in held]
    if missing:
        shown = ", ".join(f"{v:g}" for v in held[:24]) + (", ..." if held.size > 24 else "")
        raise ParameterError(
            f"the mask {name!s} holds no pixel of class {', '.join(map(repr, missing))}: its "
            f"values are {shown}"
        )
    return np.isin(array, wanted)


def _crs_name(crs: Any) -> str:
    """A CRS as a user knows it: ``EPSG:32632``, else its name."""
    if crs is None:
        return "none"
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else str(crs.name)


def _label_images(where: Location) -> tuple[str, list[str]]:
    """``(kind, names)``: the label images a mask file holds beside its image — an OME-TIFF's
    series named ``labels/<name>`` (``"tiff"``, as :func:`xfskde.io.write_ome_tiff` writes a
    segmentation's), an OME-Zarr image's ``labels/<name>`` (``"zarr"``, NGFF 0.4 and 0.5) —
    by name; none for any other file, or one that cannot be read (its reader says why)."""
    import tifffile
    import zarr

    name = where.name.lower()
    try:
        if name.endswith((".tif", ".tiff")):
            with where.open() as file, tifffile.TiffFile(file) as tif:
                series = [s.name or "" for s in tif.series]
            if series and not series[0].startswith("labels/"):
                return "tiff", [n.removeprefix("labels/") for n in series if
                                n.startswith("labels/")]  # fmt: skip
        elif name.endswith(".zarr") or where.is_zip or where.is_dir():
            root = zarr.open_group(where.zarr_store(read_only=True), mode="r")
            held = root.get("labels")
            if isinstance(held, zarr.Group):
                listed = held.attrs.get("ome", {}).get("labels", held.attrs.get("labels", []))
                return "zarr", [str(n) for n in listed if isinstance(held.get(str(n)), zarr.Group)]
    except Exception:  # not a TIFF nor a Zarr group: _mask_image names what it is
        pass
    return "", []


def _labels_of_a_result(mask: Any) -> tuple[Any, int | str]:
    """The file and series to read a mask from: a file that holds label images beside its
    image (``xfskde segment``'s OME-TIFF and OME-Zarr results: their abundances, NaN outside
    the tissue, and ``labels/textures``) is its label image — the labels are the mask, non-zero
    the foreground, and ``classes`` choose among them —, one holding several is refused,
    naming them; any other mask as it is (series 0)."""
    if not isinstance(mask, str | os.PathLike | Location):
        return mask, 0
    where = locate(mask)
    if not where.exists():
        return mask, 0
    kind, names = _label_images(where)
    if len(names) > 1:
        if kind == "zarr":
            paths = ", ".join(f"{where}/labels/{n}" for n in names)
            remedy = f"give one of them as the mask: {paths}"
        else:
            remedy = ("read one with xfskde.open_image(path, series='labels/NAME') and pass it "
                      "as the mask")  # fmt: skip
        raise ParameterError(
            f"the mask {mask} holds {len(names)} label images ({', '.join(names)}): a mask is "
            f"one; {remedy}"
        )
    if not names:
        return mask, 0
    if kind == "tiff":
        return where, f"labels/{names[0]}"
    if where.is_zip:  # no path reaches inside a zip: its group, open
        import zarr

        return zarr.open_group(where.zarr_store(read_only=True), mode="r",
                               path=f"labels/{names[0]}"), 0  # fmt: skip
    return Location(f"{where.url.rstrip('/')}/labels/{names[0]}", where.storage_options), 0


def _mask_image(mask: Any, series: int | str = 0) -> xr.DataArray:
    """A mask given as a file or a PIL picture, as :func:`open_image` reads it — but a palette
    picture (a PNG, GIF or TIFF of mode ``"P"``: an annotation tool's labels, a mask drawn in
    two colours) by its indices, its labels, not by the colours its palette gives them: a mask
    whose background colour is not black read as foreground everywhere."""
    if isinstance(mask, str | os.PathLike | Location):
        where = locate(mask)
        if not where.exists():
            methods = ", ".join(f"'{m}'" for m in (*METHODS, "none"))
            raise FileNotFoundError(
                f"no such mask: {where} (a mask is a file, or one of {methods})"
            )
    try:
        # read here: a failure is the mask's
        (values,) = compute_collections([open_image(mask, series=series)])
    except (XfskdeError, FileNotFoundError):
        raise
    except Exception as exc:  # named as the mask's, not taken for the image's (the CLI's note)
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        named = mask if isinstance(mask, str | os.PathLike | Location) else type(mask).__name__
        raise ImageReadError(
            f"cannot read the mask {named} ({detail}): a mask is a file, an image or array, "
            "polygons (GeoJSON, a GeoDataFrame) or one of the methods"
        ) from exc
    if is_picture(mask):
        indices = palette_indices(mask)
    elif isinstance(mask, str | os.PathLike) and (
        str(mask).lower().endswith((".png", ".gif")) or "source_colormap" in values.attrs
    ):  # a palette PNG, GIF or TIFF (one read as RGB through its colour map)
        from PIL import Image

        with locate(mask).open() as file, Image.open(file) as picture:
            indices = palette_indices(picture)
    else:
        indices = None
    if indices is None:
        return values
    coords = {d: values.coords[d] for d in ("y", "x") if d in values.coords}
    return xr.DataArray(indices, dims=("y", "x"), coords=coords, attrs=dict(values.attrs))


def _mask_attrs(resolved: xr.DataArray | None, given: Any) -> dict[str, Any]:
    """What a result records of its mask: ``mask``, how it was given — ``"auto: tissue_mask,
    METHOD (xfskde.masks)"`` for a mask :func:`tissue_mask` made (from ``"auto"``, or by the
    caller, or by the command line's ``--mask auto``; ``"fluorescence: …"`` and so on where
    a method was named instead of ``"auto"``: the mask's ``method_asked``), the path of a
    mask read from a file (its ``source``: absolute, or a URL, however it was given; a file
    written from a :func:`tissue_mask` is a file too), else
    ``"an array"`` — and ``mask_foreground``, its share of foreground, and ``mask_classes``
    where only the regions of some classes were drawn; nothing without a mask. A mask read
    from a file records its ``mask_version`` (its ``source_version``: a resumed write begun
    with another version of the mask starts again)."""
    if resolved is None:
        return {}
    what = given if isinstance(given, str) else "an array"
    version = resolved.attrs.get("source_version")
    if version is not None:  # read from a file: a path given, or a mask the caller read —
        # named absolutely (its reader's source), so that the same file is the same mask
        # whatever the working directory, as a store's resume compares it
        fallback = given if isinstance(given, str) else what
        what = str(resolved.attrs.get("source", fallback))
    elif "method" in resolved.attrs:  # made from the image by tissue_mask
        how = resolved.attrs.get("method_asked", "auto")
        what = f"{how}: tissue_mask, {resolved.attrs['method']} (xfskde.masks)"
    attrs = {"mask": str(what), "mask_foreground": float(np.asarray(resolved.values).mean())}
    if "classes" in resolved.attrs:  # the regions of these classes only
        attrs["mask_classes"] = ", ".join(resolved.attrs["classes"])
    return attrs if version is None else {**attrs, "mask_version": str(version)}


def _in_image_crs(mask: xr.DataArray, image: xr.DataArray) -> xr.DataArray:
    """A boolean ``mask`` in another CRS than ``image``'s (a land cover in WGS 84 over a UTM
    scene), reprojected onto the image's grid — coarsened by the whole factor that brings its
    longer side to at most :data:`MAX_SIDE` — by nearest neighbour (rioxarray's
    ``reproject``; outside the mask's extent is background), as QGIS draws a layer of another
    CRS over a scene; ``mask`` itself where both CRSs are the same, or either is missing or
    unread, or the grids are not regular (:func:`_placeable` then refuses it or places it).
    Records ``reprojected_from`` (the mask's CRS)."""
    ours, theirs = crs_wkt(image), crs_wkt(mask)
    if ours is None or theirs is None or ours == theirs:
        return mask
    a, b = parse_crs(ours), parse_crs(theirs)
    if a is None or b is None or a == b or None in (pixel_steps(mask), pixel_steps(image)):
        return mask
    try:
        import rioxarray  # noqa: F401  (the rio accessor)
        from rasterio.enums import Resampling
    except ImportError:
        return mask
    height, width = image.sizes["y"], image.sizes["x"]
    factor = max(1, math.ceil(max(height, width) / MAX_SIDE))
    corner = image.rio.transform(recalc=True)
    shape = (-(-height // factor), -(-width // factor))
    source = xr.DataArray(mask.values.astype(np.uint8), dims=("y", "x"),
                          coords={d: mask.coords[d] for d in ("y", "x")})  # fmt: skip
    source = source.rio.write_crs(b).rio.write_nodata(0)
    moved = source.rio.reproject(a, shape=shape, transform=corner * corner.scale(factor),
                                 resampling=Resampling.nearest, nodata=0)  # fmt: skip
    step_y, step_x = (float(image[d].values[1] - image[d].values[0]) for d in ("y", "x"))
    y = image.y.values[0] + step_y * (factor - 1) / 2 + step_y * factor * np.arange(shape[0])
    x = image.x.values[0] + step_x * (factor - 1) / 2 + step_x * factor * np.arange(shape[1])
    coords: dict[str, Any] = {
        "y": ("y", y, dict(image.y.attrs)),
        "x": ("x", x, dict(image.x.attrs)),
    }
    coords.update({k: c for k, c in image.coords.items() if c.ndim == 0})  # the image's CRS
    attrs = {**mask.attrs, "reprojected_from": _crs_name(b)}
    return xr.DataArray(moved.values > 0, dims=("y", "x"), coords=coords, name=mask.name,
                        attrs=attrs)  # fmt: skip


def _over_extent(mask: xr.DataArray, image: xr.DataArray) -> xr.DataArray:
    """The part of ``mask`` over ``image``'s extent, in the image's order, refused where it
    cannot be placed on it.

    * A mask recording the full-resolution shape it covers (``mask_of``, from
      :func:`tissue_mask`) and made for another extent — the whole slide, applied to a crop of
      it — is cut to the image by their coordinates, and refused when either has none; one made
      for the image's shape is the image's, turned to the image's order along a dim whose
      coordinates run the other way.
    * A mask of its own pixels (a file, an array, a DataArray): when both carry numeric y and x
      coordinates in one CRS and one unit (a GeoTIFF mask of a scene, an OME-TIFF mask in µm,
      a DataArray on the image's grid) it is placed by them, whatever its shape — cut to the
      image, its rows and columns put in the image's order (a mask with ascending y on an image
      with descending y, as every GeoTIFF has, is not upside down). Where it covers part of
      the image only, a mask in the image's CRS is background beyond its extent
      (:func:`_extended_over`, as GDAL and QGIS read a raster past its edges, and as a mask
      in another CRS is reprojected); one without a CRS is refused. A mask without
      coordinates (a NumPy array, a picture) is placed by position: its first row over the
      image's first row. Then it must be the image at one
      scale along y and x (each side the image's over one factor, to a pixel): a mask of
      another aspect (24 × 12 for a 384 × 384 image) belongs to another image or extent, and
      stretched over this one it would silently skip tissue or compute background.
    """
    covers = _recorded_shape(mask.attrs.get("mask_of"))
    shape = (image.sizes["y"], image.sizes["x"])
    if covers is not None:
        if covers == shape:
            return _oriented(mask, image)
        if not (_positioned(mask) and _positioned(image)):
            raise ParameterError(
                f"the mask covers an image of {tuple(covers)} pixels and this image has "
                f"{shape}, and they have no coordinates to place one on the other: pass a mask "
                "made for this image (e.g. xfskde.tissue_mask(image))"
            )
        cut = _cut_to(mask, image, whole=False)
        cut.attrs["mask_of"] = [int(shape[0]), int(shape[1])]
        return cut
    if _placeable(mask, image):
        geo = crs_wkt(mask) is not None  # and the image's, the same (_placeable refuses others)
        steps = {d: regular_step(mask[d].values) for d in ("y", "x")}  # of the whole mask
        mask = _cut_to(mask, image, whole=not geo)
        if geo:
            mask = _extended_over(mask, image, steps)
    _refuse_other_aspect((mask.sizes["y"], mask.sizes["x"]), shape)
    return mask


def _positioned(array: xr.DataArray) -> bool:
    """Whether ``array`` has numeric 1-D ``y`` and ``x`` coordinates: positions to place a mask
    by (a NumPy array, a picture and a plain TIFF have none: they are placed by position)."""
    return all(
        d in array.coords and array.coords[d].dims == (d,) and array.coords[d].dtype.kind in "iuf"
        for d in ("y", "x")
    )


def _descending(values: np.ndarray) -> bool:
    """Whether 1-D coordinates run downwards (a GeoTIFF's y); False for fewer than two."""
    return values.size > 1 and bool(values[-1] < values[0])


def _oriented(mask: xr.DataArray, image: xr.DataArray) -> xr.DataArray:
    """``mask`` (of the image's shape) reversed along each dim whose coordinates run the other
    way than the image's; as it is where either lacks coordinates."""
    if not (_positioned(mask) and _positioned(image)):
        return mask
    flipped = {
        d: slice(None, None, -1)
        for d in ("y", "x")
        if _descending(np.asarray(mask[d].values)) != _descending(np.asarray(image[d].values))
    }
    return mask.isel(flipped) if flipped else mask


def _recorded_shape(value: Any) -> tuple[int, int] | None:
    """The ``mask_of`` a mask records: two positive integers, as :func:`tissue_mask` gives
    them, or as a file's metadata keep them once the mask is written (a GeoTIFF's tags hold
    the text ``"[2048, 2048]"``); None for no record, or one that is not a shape."""
    if value is None:
        return None
    if isinstance(value, str):
        numbers: list[Any] = re.findall(r"\d+(?:\.\d*)?", value)
    else:
        numbers = list(np.asarray(value).ravel())
    try:
        shape = tuple(int(float(n)) for n in numbers)
    except (TypeError, ValueError):
        return None
    return (shape[0], shape[1]) if len(shape) == 2 and min(shape) > 0 else None


def _placeable(mask: xr.DataArray, image: xr.DataArray) -> bool:
    """Whether ``mask`` can be placed on ``image`` by their coordinates: both have numeric 1-D
    y and x coords (:func:`_positioned`), in the same CRS (refused when both have one and they
    differ) and the same unit (refused when both name one and they differ)."""
    if not (_positioned(mask) and _positioned(image)):
        return False
    ours, theirs = crs_wkt(image), crs_wkt(mask)
    if (ours is None) != (theirs is None):
        return False
    if ours is not None and theirs is not None and ours != theirs:
        a, b = parse_crs(ours), parse_crs(theirs)
        if a is None or b is None or a != b:
            epsg = a.to_epsg() if a is not None else None  # the image's (a), the mask's (b)
            target = f"EPSG:{epsg}" if epsg else "the image's CRS"
            raise ParameterError(
                f"the mask is in another CRS ({_crs_name(b)}) than the image ({_crs_name(a)}): "
                "reproject it onto the image's grid first (rioxarray: "
                "mask.rio.reproject_match(image, resampling=Resampling.nearest); GDAL: "
                f"gdalwarp -t_srs {target} -r near mask.tif mask-utm.tif)"
            )
    units = [str(a.coords["x"].attrs.get("units", "")) for a in (mask, image)]
    lengths = [micrometres(1.0, u) for u in units]  # "um" and "µm", "m" and "metre" alike
    same = units[0] == units[1] or (None not in lengths and lengths[0] == lengths[1])
    if all(units) and not same:
        raise ParameterError(
            f"the mask's coordinates are in {units[0]} and the image's in {units[1]}: give "
            "the mask coordinates in the image's unit"
        )
    return True


def _cut_to(mask: xr.DataArray, image: xr.DataArray, whole: bool) -> xr.DataArray:
    """The mask pixels whose centres fall on ``image``'s pixels, in the order of the image's
    coordinates (ascending or descending, whichever way the mask's run); with ``whole``,
    refused unless they reach, along each dim, to within one mask pixel of the image's
    edges."""
    picked = {}
    for d in ("y", "x"):
        centres = np.asarray(image[d].values, float)
        step = abs(centres[1] - centres[0]) if centres.size > 1 else 0.0
        low, high = centres.min() - step / 2, centres.max() + step / 2
        where = np.asarray(mask[d].values, float)
        picked[d] = np.flatnonzero((where >= low) & (where <= high))
        if not picked[d].size:
            raise ParameterError(
                f"the mask does not overlap this image along {d}: pass a mask of this image"
            )
        if whole:
            near = where[picked[d]]
            reach = abs(where[1] - where[0]) if where.size > 1 else step
            if near.min() - low > reach or high - near.max() > reach:
                raise ParameterError(
                    f"the mask covers {d} {near.min():g} to {near.max():g} of this image's "
                    f"{low:g} to {high:g}: pass a mask that covers the whole image (0 where "
                    "there is nothing to compute)"
                )
        order = np.argsort(where[picked[d]], kind="stable")  # the image's way along d
        picked[d] = picked[d][order[::-1] if _descending(centres) else order]
    return mask.isel(y=picked["y"], x=picked["x"])


def _extended_over(
    mask: xr.DataArray, image: xr.DataArray, steps: dict[str, float | None]
) -> xr.DataArray:
    """``mask``, cut to ``image`` by :func:`_cut_to`, extended over the rest of the image's
    extent at its own pixel size (``steps``, along y and x, of the mask before the cut),
    background (False) beyond its own extent: an area of interest cut from a larger raster,
    read as GDAL and QGIS read a raster past its edges. Where it covers part of the image
    only, records ``mask_covers``: the share of the image's extent it covers (its pixels over
    the extended mask's, to 4 significant digits). Refused where it must be extended along a
    dim whose pixel size it does not tell (one pixel along it, or uneven coordinates)."""
    ordered = mask.sortby(["y", "x"])
    pads, coords = [], {}
    for d in ("y", "x"):
        centres = np.asarray(image[d].values, float)
        step = abs(centres[1] - centres[0]) if centres.size > 1 else 0.0
        low, high = centres.min() - step / 2, centres.max() + step / 2
        where = np.asarray(ordered[d].values, float)
        own = steps[d]
        if own is None:  # no pixel size to extend it by: it must reach the image's edges
            reach = abs(where[1] - where[0]) if where.size > 1 else step
            if where[0] - low > reach or high - where[-1] > reach:
                raise ParameterError(
                    f"the mask covers {d} {where[0]:g} to {where[-1]:g} of this image's "
                    f"{low:g} to {high:g}, and its pixel size along {d} is unknown (one "
                    "pixel, or uneven coordinates) to extend it over the rest: pass a mask "
                    "that covers the whole image (0 where there is nothing to compute)"
                )
            own = math.inf  # nothing added along d
        # the mask's centres continued by its own step while they fall on the image (a tenth
        # of a millionth of a step of slack: coordinates read from text)
        before = int(np.floor((where[0] - low) / own + 1e-7))
        after = int(np.floor((high - where[-1]) / own + 1e-7))
        grid = np.concatenate([where[0] - own * np.arange(before, 0, -1), where,
                               where[-1] + own * np.arange(1, after + 1)])  # fmt: skip
        pads.append((before, after))
        coords[d] = (d, grid, dict(mask[d].attrs))
    if not any(any(p) for p in pads):
        return mask
    coords.update({k: c for k, c in mask.coords.items() if c.ndim == 0})  # its CRS
    values = np.pad(np.asarray(ordered.values, bool), pads)  # False: background beyond it
    covers = float(f"{ordered.size / values.size:.4g}")
    extended = xr.DataArray(values, dims=("y", "x"), coords=coords, name=mask.name,
                            attrs={**mask.attrs, "mask_covers": covers})  # fmt: skip
    return extended.isel({d: slice(None, None, -1) for d in ("y", "x")
                          if _descending(np.asarray(image[d].values))})  # fmt: skip


def _refuse_other_aspect(mask_shape: tuple[int, int], shape: tuple[int, int]) -> None:
    """Refuse a mask that is not the image at one scale: each mask side must be the image's
    side over one common factor f, rounded either way (``n / f`` within one pixel of it)."""
    low = max(n / (m + 1) for n, m in zip(shape, mask_shape, strict=True))
    high = min(n / (m - 1) if m > 1 else math.inf for n, m in zip(shape, mask_shape, strict=True))
    if low < high:
        return
    (my, mx), (ny, nx) = mask_shape, shape
    raise ParameterError(
        f"the mask's {my} x {mx} pixels are not this image's {ny} x {nx} at one scale "
        f"({ny / my:.3g}x smaller along y, {nx / mx:.3g}x along x): it was made for another "
        "image or extent; pass a mask of this image, downsampled alike along y and x"
    )


def background_blocks(
    mask: xr.DataArray, image_shape: tuple[int, int]
) -> Callable[[tuple[int, int], tuple[int, int]], bool]:
    """The ``skip`` of :func:`xfskde.lazy.map_haloed`: True for a block of an image of
    ``image_shape`` that no foreground pixel of ``mask`` touches (O(1) per block, by a summed
    area table of the mask: :class:`xfskde._grid.MaskFootprint`).

    Parameters
    ----------
    mask : xarray.DataArray or numpy.ndarray
        A 2-D mask (as :func:`resolve_mask` gives it) covering the image's extent at any
        resolution; its values are read as booleans (any non-zero, NaN too, is foreground).
    image_shape : (int, int)
        The ``(ny, nx)`` of the image, in pixels.

    Returns
    -------
    callable
        ``skip(rows, cols)``, for half-open ``(start, stop)`` pixel ranges of the image: True
        where no mask pixel covering any of those pixels is foreground. Ranges beyond the
        image are clipped to it.

    Raises
    ------
    DimensionError
        For a mask that is not 2-D.
    ParameterError, TypeError
        For an ``image_shape`` that is not two integers >= 1.
    """
    return MaskFootprint(_mask_values(mask), _image_shape(image_shape)).background


def _mask_values(mask: Any) -> np.ndarray:
    """A mask's values as a 2-D boolean ``(y, x)`` array (a DataArray's taken in ``(y, x)``
    order where it names them); any other number of dims is refused in one line."""
    if isinstance(mask, xr.DataArray) and {"y", "x"} <= set(mask.dims):
        mask = mask.transpose("y", "x", ...)
    values = np.asarray(getattr(mask, "values", mask), bool)
    if values.ndim != 2:
        raise DimensionError(f"a mask must be 2-D (y, x), got shape {values.shape}")
    return values


def _image_shape(image_shape: Any) -> tuple[int, int]:
    """``image_shape`` as ``(ny, nx)``, two integers >= 1, or refused in one line."""
    try:
        ny, nx = image_shape
    except (TypeError, ValueError):
        raise TypeError(
            f"image_shape must be the image's (ny, nx) in pixels, got {image_shape!r}"
        ) from None
    return _check_positive_int("image_shape's ny", ny), _check_positive_int("image_shape's nx", nx)


def _lookup(block: np.ndarray, mask: np.ndarray, image_shape: tuple[int, int], stride: int,
            block_info: dict | None = None) -> np.ndarray:  # fmt: skip
    """The mask at the samples of one block of a stride grid."""
    (r0, r1), (c0, c1) = block_info[0]["array-location"][:2]
    inside = mask_at_samples(mask, image_shape, stride, (r0, r1), (c0, c1))
    return inside.reshape(inside.shape + (1,) * (block.ndim - 2))


def mask_samples(
    mask: xr.DataArray, result: da.Array, image_shape: tuple[int, int], stride: int
) -> da.Array:
    """The mask at every sample of a lazy ``(ny, nx, ...)`` result of a stride grid (samples at
    pixels ``i * stride + sample_offset(stride)``), chunked as the result (trailing dims of
    length 1, to broadcast). The small mask travels once, as one dependency of the tasks, not
    inside each of them.

    Parameters
    ----------
    mask : xarray.DataArray or numpy.ndarray
        A 2-D mask (as :func:`resolve_mask` gives it) covering the image's extent at any
        resolution; its values are read as booleans.
    result : dask.array.Array
        The lazy result on the stride grid, its first two dims the samples' rows and
        columns; only its chunks are used.
    image_shape : (int, int)
        The ``(ny, nx)`` of the image, in pixels.
    stride : int
        The sampling step of the grid, in pixels (>= 1).

    Returns
    -------
    dask.array.Array
        Boolean, of ``result``'s first two dims and chunks, then a dim of length 1 for each
        further dim of ``result``: True where the mask pixel under the sample's pixel (its
        centre) is foreground (:func:`xfskde._grid.mask_at_samples`).

    Raises
    ------
    DimensionError
        For a mask that is not 2-D, or a ``result`` of fewer than two dims.
    ParameterError, TypeError
        For an ``image_shape`` that is not two integers >= 1, a ``stride`` that is not an
        integer >= 1, or a ``result`` that is not a Dask array.
    """
    image_shape, stride = _image_shape(image_shape), _check_positive_int("stride", stride)
    if not isinstance(result, da.Array):
        raise TypeError(
            f"result must be the lazy Dask array of the stride grid (its chunks are read), got a "
            f"{type(result).__name__}"
        )
    if result.ndim < 2:
        raise DimensionError(
            f"result must have the samples' rows and columns as its first two dims, got shape "
            f"{result.shape}"
        )
    shared = dask.delayed(_mask_values(mask), pure=True)
    return da.map_blocks(
        _lookup, result, shared, image_shape, stride,
        chunks=(*result.chunks[:2], *((1,) for _ in result.chunks[2:])),
        dtype=bool, meta=np.empty((0,) * result.ndim, bool), token="xfskde-mask-samples",
    )  # fmt: skip
