"""Writing real-valued maps as an OME-NGFF 0.5 multiscale image on Zarr v3: :func:`write_ome_zarr`.

Orientation, coherence and energy maps (:mod:`xfskde.orientation`), densities, abundances — any
real ``(y, x)`` maps on one grid — become the channels ``c`` of one OME-Zarr image that
napari (``napari-ome-zarr``), OMERO, QuPath, Fiji/BigDataViewer, Neuroglancer or vizarr open
and pan at every zoom; segmentation labels go beside them as NGFF label images
(``labels/<name>``). Only zarr is needed to write; ome-zarr-py and ome-zarr-models are not.

**Layout** (``ome`` attributes as in NGFF 0.5)::

    store/                       zarr.json: ome.multiscales, ome.omero, xfskde (parameters)
    store/0, 1, 2, ...           float32 (c, y, x) levels, NaN fill, chunks (1, cy, cx)
    store/labels/                zarr.json: ome.labels = [names]
    store/labels/<name>/0, ...   integer (y, x) levels, 0 fill; ome.image-label

**Levels.** Level 0 holds the maps as they are (float32). Each further level is computed from
the level *written* before it, read back from the store (never from the whole input), by
averaging 2×2 blocks: NaN-aware (NaN samples are left out; a block of NaN stays NaN), and for
*axial angle* channels — orientations in [0, π), where 0 and π are one axis — as the
**doubled-angle mean** ``arg(mean(exp(2iθ))) / 2 mod π`` of the block's finite angles (NaN
where it is undefined, ``|mean| < 1e-6``), since a plain mean of 0.01 and π - 0.01 would give
the perpendicular axis π/2. A side of odd length gives a last row/column that averages the one
sample it has. Levels are added until the longer side is at most ``coarsest`` (512) pixels.
Label images have as many levels as the image (NGFF readers expect it), each the **mode** of
the 2×2 block (ties go to the first of top-left, top-right, bottom-left, bottom-right): labels
are never averaged. A segmentation's label image (labels with an ``n_textures`` attr) lists
each texture's colour and name in ``image-label`` (``colors``, ``properties``): the library's
label colours, which napari shows, the background transparent.

**Which channels are axial.** Given ``axial=`` (channel names), exactly those. By default, a
channel whose map carries the attr ``orientation_convention`` (set by
:func:`xfskde.orientation.orientation`), or that is *named* ``"orientation"`` and has no
``units`` attr other than ``"rad"``; the channels of a ``(c, y, x)`` DataArray share one set of
attrs, so there only the name ``"orientation"`` counts. Pass ``axial=()`` for plain means
everywhere.

**Where the samples sit.** xfskde results have coordinates in pixels of the input image, at the
centres of the cells they describe (a stride-8 map's first sample at 3.5, then 11.5, ...:
:mod:`xfskde._labels`). Each level's ``coordinateTransformations`` are ``scale`` then
``translation``, per axis ``(c, y, x)``: at level 0 the coordinate spacing and the first
coordinate times the pixel size; at level l the scale is multiplied by 2^l and the translation
moves to the centre of the first 2^l × 2^l block, ``first + spacing * (2^l - 1) / 2``. So every
level sits exactly over the input pixels it describes, in the input's frame. The maps of an image
without coordinates are labelled with the sampled pixels' indices ``i*s + o`` (``o = (s - 1)//2``):
those are placed at their cells' centres, ``i*s + (s - 1)/2`` (:func:`xfskde._grid.index_stride`,
the rule the GeoTIFF writer follows), half an input pixel past the index for an even stride.

**Physical units.** With ``pixel_size=`` (micrometres per *input* pixel), or the maps' attr
``mpp`` or ``pixel_size`` (micrometres, or in ``pixel_size_units``), the spatial axes get the
unit ``"micrometer"`` and the transforms are in micrometres; otherwise the axes have no unit and
the transforms are in input pixels.

**Display** (``ome.omero``, the transitional rendering block that viewers read): channel labels
are the map names; windows are 0..π for axial channels, 0..1 for ``coherence``, and for every
other channel the 0.5–99.5 percentiles (``start``/``end``) and the extremes (``min``/``max``)
of the coarsest level. Colours: white for axial channels, which also name OMERO's hue-wheel
lookup table ``"lut": "spectrum.lut"`` (a cyclic colour map, so 0 and π look alike, where the
viewer honours it — OMERO does; the NGFF spec has no colour maps); green for ``coherence``,
magenta for ``energy``, then cyan, yellow, red, blue, ... A segmentation's abundances (maps
carrying its ``n_textures`` attr, one channel per texture: a ``(texture, y, x)`` DataArray, or
channels named ``"texture 1"``, ``"texture 2"``, ... as ``xfskde segment`` names them) get
their textures' label colours (:mod:`xfskde._palette`), those of the label image beside them.

**Order of writing.** The arrays first, then the label images' metadata, and the root's ``ome``
attributes last: a store whose write was interrupted is not an OME-Zarr image, and a write that
fails removes the local store it created. Refused: an existing store (``overwrite=True``
replaces it), georeferenced maps (those with a CRS coordinate such as rioxarray's
``spatial_ref``, whose coordinates are not pixels: :func:`xfskde.io.write_geotiff` writes
them), complex fields (:func:`xfskde.io.write_coefficients` does).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np
import xarray as xr
import zarr
from zarr.codecs import Crc32cCodec

from .._grid import cell_centres, index_stride
from .._palette import label_hex, label_names, label_rgba_8bit
from .._scheduling import compute as compute_collections
from .._scheduling import connect, is_address
from .._version import __version__
from ..exceptions import (
    DimensionError,
    ParameterError,
    StoreExistsError,
    StoreFormatError,
)
from ..lazy import dask_view
from ._location import Location, micrometres, store_target, zarr_like
from .stores import (
    _count_chunks,
    _damaged_coordinates,
    finalize_store,
    forget_damaged_blocks,
    input_changed,
    refuse_other_parameters,
    store_status,
    write_blocks,
)

__all__ = ["check_ome_zarr_grid", "write_ome_zarr", "write_ome_zarr_labels"]

#: The NGFF version written.
NGFF_VERSION = "0.5"
#: Default chunk side of NumPy-backed maps (and of Dask-backed ones with unusual chunks).
DEFAULT_CHUNK = 512
#: Default: levels are added until the longer side is at most this many pixels.
COARSEST = 512
#: The attr that :func:`xfskde.orientation.orientation` sets on its maps.
AXIAL_ATTR = "orientation_convention"
#: Percentiles of the coarsest level that make the display window of an ordinary channel.
WINDOW_PERCENTILES = (0.5, 99.5)
#: Below this mean resultant length of the doubled angles, a block has no axis (NaN).
AXIAL_MIN_RESULTANT = 1e-6
#: The key of the root's ``xfskde`` attributes that holds the µm per unit of the maps' (y, x)
#: coordinates (``[1.0, 1.0]`` for maps in µm, the ``pixel_size`` given for maps in input
#: pixels; None without a length), by which :func:`write_ome_zarr_labels` scales a label image.
COORDINATE_UM = "um_per_coordinate"

_AXIAL_COLOUR = "FFFFFF"
_AXIAL_LUT = "spectrum.lut"
_NAMED_COLOURS = {"coherence": "00FF00", "energy": "FF00FF"}
_PALETTE = ("00FFFF", "FFFF00", "FF0000", "0000FF", "FF8000", "8000FF", "00FF80", "FF0080")
_GEO_ATTRS = ("crs_wkt", "spatial_ref", "GeoTransform", "grid_mapping_name")
_LABEL_DTYPES = "iu"


# ----------------------------------------------------------------------------- inputs


def _as_2d(value: Any, name: str) -> xr.DataArray:
    """A map as a ``(y, x)`` DataArray: ``y``/``x`` by name, else its two dims in order."""
    if not isinstance(value, xr.DataArray):
        if not hasattr(value, "ndim") or not hasattr(value, "dtype"):
            value = np.asarray(value)
        value = xr.DataArray(value, dims=("y", "x")[: value.ndim] if value.ndim == 2 else None)
    if value.ndim != 2:
        raise DimensionError(
            f"the map {name!r} has dims {value.dims}: each named map must be (y, x); pass a "
            "(c, y, x) DataArray as it is, or select a 2-D map (e.g. .isel(k=0))"
        )
    dims = tuple(map(str, value.dims))
    if {"y", "x"} <= set(dims):
        return value.transpose("y", "x")
    return value.rename(dict(zip(dims, ("y", "x"), strict=True)))


def _maps(maps: Any) -> tuple[list[tuple[str, xr.DataArray]], bool]:
    """``(name, (y, x) map)`` per channel, and whether the channels share one set of attrs."""
    if isinstance(maps, xr.Dataset):
        items = [(str(k), _as_2d(v, str(k))) for k, v in maps.data_vars.items()]
        shared = False
    elif isinstance(maps, Mapping):
        items = [(str(k), _as_2d(v, str(k))) for k, v in maps.items()]
        shared = False
    else:
        if not isinstance(maps, xr.DataArray):
            maps = np.asarray(maps) if not hasattr(maps, "ndim") else maps
            dims = {2: ("y", "x"), 3: ("c", "y", "x")}.get(maps.ndim)
            if dims is None:
                raise DimensionError(
                    f"maps must be (y, x) or (c, y, x), got an array of shape {maps.shape}"
                )
            maps = xr.DataArray(maps, dims=dims)
        if maps.ndim == 2:
            items, shared = [(str(maps.name or "map"), _as_2d(maps, "map"))], False
        elif maps.ndim == 3:
            dims = tuple(map(str, maps.dims))
            others = [d for d in dims if d not in ("y", "x")]
            if len(others) != 1:
                raise DimensionError(
                    f"a 3-D DataArray of maps needs dims y, x and one channel dim, got {dims}: "
                    f"rename its spatial dims (e.g. .rename({{{dims[-2]!r}: 'y', "
                    f"{dims[-1]!r}: 'x'}}))"
                )
            c = others[0]
            maps = maps.transpose(c, "y", "x")
            if c in maps.coords:
                names = [str(v) for v in maps[c].values]
            else:
                names = [f"{c}{i}" for i in range(maps.sizes[c])]
            items = [(n, maps.isel({c: i}, drop=True).rename(n)) for i, n in enumerate(names)]
            shared = True
        else:
            raise DimensionError(f"maps must be (y, x) or (c, y, x), got dims {maps.dims}")
    if not items:
        raise ParameterError("maps is empty: pass at least one (y, x) map")
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ParameterError(f"channel names must be unique, got {names}")
    for n, m in items:
        if m.dtype.kind not in "fiub":
            raise ParameterError(
                f"the map {n!r} has dtype {m.dtype}: write_ome_zarr writes real maps (float32); "
                "write a complex coefficient field with xfskde.io.write_coefficients, or its "
                "real maps (orientation, coherence, energy) here"
            )
    return items, shared


def _stack_attrs(items: Sequence[tuple[str, xr.DataArray]]) -> dict[str, Any]:
    """The attrs of the ``(c, y, x)`` stack of maps that each carry their own: those every map
    shares (the field's parameters, the input's), and, where the maps' ``units`` or
    ``long_name`` differ, each channel's in ``channel_units`` / ``channel_long_names`` (in
    channel order) instead of one that is true of the first map only. The first map's ``units``
    (``"rad"``) was the stack's: xarray read the coherence and the energy of a maps store in
    radians."""
    first = dict(items[0][1].attrs)
    same = {
        k: v
        for k, v in first.items()
        if all(k in m.attrs and _jsonable(m.attrs[k]) == _jsonable(v) for _, m in items)
    }
    if len(items) > 1:
        for key, plural in (("units", "channel_units"), ("long_name", "channel_long_names")):
            said = [m.attrs.get(key) for _, m in items]
            if key not in same and any(v is not None for v in said):
                same[plural] = ["" if v is None else str(v) for v in said]
        if "long_name" not in same:
            same["long_name"] = ", ".join(name for name, _ in items)
    return same


#: The way out for a scene no OME-Zarr image holds (north-up, or any with a CRS).
_GEOTIFF_INSTEAD = ("write a GeoTIFF (xfskde.io.geotiff.write_geotiff; on the command line, "
                    "name the output *.tif, not *.ome.zarr nor *.ome.tif)")  # fmt: skip


def _crs_coord(array: xr.DataArray) -> str | None:
    """The name of the scalar coord that holds an array's CRS (rioxarray's ``spatial_ref``),
    None where it has none."""
    return next((str(name) for name, coord in array.coords.items()
                 if coord.ndim == 0 and any(k in coord.attrs for k in _GEO_ATTRS)),
                None)  # fmt: skip


def _refuse_georeferenced(array: xr.DataArray, what: str) -> None:
    """Maps with a CRS coordinate have CRS coordinates, not pixels: GeoTIFF is their format."""
    coord_name = _crs_coord(array)
    if coord_name is not None:
        raise ParameterError(
            f"{what} is georeferenced (its coordinate {coord_name!r} holds a CRS, so x and y "
            "are CRS coordinates, not pixels): write it with xfskde.io.write_geotiff; to "
            f"write it here anyway, drop the CRS and give pixel coordinates, e.g. "
            f".drop_vars({coord_name!r}).assign_coords(y=..., x=...)"
        )


@dataclass(frozen=True)
class _Grid:
    """Where a map's samples sit: first coordinate and spacing per axis, in input pixels."""

    shape: tuple[int, int]
    first: tuple[float, float]
    step: tuple[float, float]


def _axis(array: xr.DataArray, dim: str, what: str) -> tuple[np.ndarray, float, float | None]:
    """The axis' coordinates, its first value and its (regular, positive) spacing or None."""
    n = array.sizes[dim]
    if dim in array.coords:
        values = np.asarray(array[dim].values)
        if values.ndim != 1 or values.dtype.kind not in "iuf" or not np.isfinite(values).all():
            raise ParameterError(
                f"the {dim} coordinate of {what} is not numeric; give it pixel positions, e.g. "
                f".assign_coords({dim}=np.arange({n}))"
            )
        values = values.astype(np.float64)
    else:
        values = np.arange(n, dtype=np.float64)
    if n < 2:
        return values, float(values[0]), None
    steps = np.diff(values)
    step = float(steps.mean())
    regular = np.allclose(steps, step, rtol=1e-6, atol=1e-9 * abs(step))
    if dim == "y" and step < 0 and regular:
        raise ParameterError(
            f"{what} is north-up (its y coordinate decreases, as a GeoTIFF's does) and an "
            "OME-Zarr image (or an OME-TIFF, its copy) is an increasing grid, which would show it "
            f"upside down: {_GEOTIFF_INSTEAD}"
        )
    if step <= 0 or not regular:
        raise ParameterError(
            f"the {dim} coordinate of {what} is not evenly spaced and increasing (steps "
            f"{steps[:3].tolist()}...): an OME-Zarr level is a regular grid; sort it "
            f"(.sortby({dim!r})) or give it pixel positions"
        )
    return values, float(values[0]), step


def check_ome_zarr_grid(image: xr.DataArray, what: str, *, crs: bool = True) -> None:
    """Refuse, before anything is computed, an image whose ``y, x`` grid no OME-Zarr level can
    hold (the check :func:`write_ome_zarr` makes on its maps): what the command line runs
    before a fit whose results would go to an OME-Zarr image. A scene with a CRS, whatever
    way its y runs (the writer refuses its maps: :func:`_refuse_georeferenced`), is refused
    as a north-up one is, with a GeoTIFF as the way out (``crs=False``: the grid alone).

    Parameters
    ----------
    image : xarray.DataArray
        The image, with ``y`` and ``x`` dims (its first plane along any other dim is checked).
    what : str
        What the image is, named in the message.
    crs : bool, optional
        Refuse an image with a CRS too; True by default.

    Raises
    ------
    ParameterError
        For coords that are not numeric, not increasing or not evenly spaced, a y that
        decreases (north-up), or, with ``crs``, a CRS.
    """
    if crs and _crs_coord(image) is not None:  # the reason, whichever way its y runs
        raise ParameterError(
            f"{what} is georeferenced (a CRS: its x and y are coordinates on the ground, not "
            f"pixels) and an OME-Zarr image (or an OME-TIFF, its copy) is a grid of pixels: "
            f"{_GEOTIFF_INSTEAD}"
        )
    _grid(image.isel({d: 0 for d in image.dims if d not in ("y", "x")}), what)


def _grid(array: xr.DataArray, what: str) -> tuple[_Grid, tuple[np.ndarray, np.ndarray]]:
    """The grid of a ``(y, x)`` map; a one-sample axis borrows the other's spacing (or
    the map's ``stride`` attr, or 1).

    Coords that are the sampled pixels' indices ``i*s + o`` (those xfskde gives the results of
    an image without coordinates: :func:`xfskde._grid.index_stride`) are placed at the centres
    of their cells, ``i*s + (s - 1)/2`` (:func:`xfskde._grid.cell_centres`), where the GeoTIFF
    writer puts them and where the maps of an image with coordinates sit: half an input pixel
    past the index for an even stride."""
    ys, y0, dy = _axis(array, "y", what)
    xs, x0, dx = _axis(array, "x", what)
    fallback = dy or dx or float(array.attrs.get("stride", 1) or 1)
    step = None
    if _crs_coord(array) is None:  # a CRS's coordinates are not indices (and are refused)
        step = index_stride(array.coords.get("y"), array.coords.get("x"), array.attrs)
    if step is not None:
        y0, x0 = (float(cell_centres(v, step)) for v in (y0, x0))
    grid = _Grid(array.shape, (y0, x0), (dy or fallback, dx or fallback))
    return grid, (ys, xs)


def _number_pair(value: Any, what: str) -> tuple[float, float]:
    """A positive number, or a (y, x) pair of them."""
    values = np.atleast_1d(np.asarray(value, dtype=np.float64)).ravel()
    if values.size == 1:
        values = np.repeat(values, 2)
    if values.size != 2 or not (np.isfinite(values).all() and (values > 0).all()):
        raise ParameterError(
            f"{what} must be a positive number of micrometres, or a (y, x) pair, got {value!r}"
        )
    return float(values[0]), float(values[1])


def _pixel_size(pixel_size: Any, attrs: Mapping[str, Any]) -> tuple[float, float] | None:
    """Micrometres per input pixel along (y, x): the argument, else the attrs, else None."""
    if pixel_size is not None:
        return _number_pair(pixel_size, "pixel_size")
    for key in ("mpp", "pixel_size"):
        if attrs.get(key) is None:
            continue
        value = _number_pair(attrs[key], f"the maps' attr {key!r}")
        unit = str(attrs.get("pixel_size_units", attrs.get("pixel_size_unit", "um"))).strip()
        factor = micrometres(1.0, unit)
        if factor is None:
            raise ParameterError(
                f"the maps' attr pixel_size_units={unit!r} is not a unit of length; pass "
                "pixel_size= in micrometres"
            )
        return value[0] * factor, value[1] * factor
    return None


def _coordinate_unit(first: xr.DataArray, pixel_size: Any) -> tuple[float, float] | None:
    """Micrometres per coordinate unit when the maps' y/x coords are lengths (``units: "µm"``,
    as :func:`xfskde.open_image` gives an image that records its pixel size), else None."""
    units = [first.coords[d].attrs.get("units") if d in first.coords else None for d in "yx"]
    lengths = [micrometres(1.0, u) if u is not None else None for u in units]
    if lengths[0] is None or lengths[1] is None:
        return None
    if pixel_size is not None:
        raise ParameterError(
            f"the maps' coordinates are already in {units[1]}: drop pixel_size= (it scales "
            "coordinates in input pixels)"
        )
    return lengths[0], lengths[1]


def _is_axial(name: str, attrs: Mapping[str, Any], shared: bool) -> bool:
    """The default rule: the orientation() attr, or the name (attrs shared by the channels of a
    ``(c, y, x)`` array say nothing of one channel: there only the name counts)."""
    if shared:
        return name == "orientation"
    return AXIAL_ATTR in attrs or (name == "orientation" and attrs.get("units", "rad") == "rad")


def _chunk_sides(first: xr.DataArray, chunks: Any) -> tuple[int, int]:
    """The spatial chunk sides: the argument; else the Dask chunks' (64..4096); else 512."""
    if chunks is not None:
        values = np.atleast_1d(np.asarray(chunks)).ravel()
        if values.size == 1:
            values = np.repeat(values, 2)
        if values.size != 2 or values.dtype.kind not in "iu" or (values < 1).any():
            raise ParameterError(f"chunks must be a positive int or (y, x) pair, got {chunks!r}")
        return int(values[0]), int(values[1])
    data = first.data
    if isinstance(data, da.Array):
        sides = tuple(max(c) for c in data.chunks)
        if all(64 <= s <= 4096 for s in sides):
            return int(sides[0]), int(sides[1])
    return DEFAULT_CHUNK, DEFAULT_CHUNK


def _level_shapes(shape: tuple[int, int], coarsest: int) -> list[tuple[int, int]]:
    """Shapes of the levels: halved (rounding up) until the longer side is <= coarsest."""
    shapes = [tuple(int(s) for s in shape)]
    while max(shapes[-1]) > coarsest:
        shapes.append(tuple(-(-s // 2) for s in shapes[-1]))
    return shapes  # type: ignore[return-value]


def _transforms(grid: _Grid, level: int, factor: tuple[float, float], channel: bool) -> list:
    """``scale`` and ``translation`` of a level: 2^level samples per side, centred."""
    k = 2**level
    scale = [grid.step[i] * k * factor[i] for i in range(2)]
    translation = [(grid.first[i] + grid.step[i] * (k - 1) / 2) * factor[i] for i in range(2)]
    lead_scale, lead_translation = ([1.0], [0.0]) if channel else ([], [])
    return [
        {"type": "scale", "scale": lead_scale + scale},
        {"type": "translation", "translation": lead_translation + translation},
    ]


def _datasets(grid: _Grid, n_levels: int, factor: tuple[float, float], channel: bool) -> list:
    """The ``datasets`` of a multiscale image: paths ``"0"``, ``"1"``, ... and transforms."""
    return [
        {"path": str(level), "coordinateTransformations": _transforms(grid, level, factor, channel)}
        for level in range(n_levels)
    ]


def _axes(unit: str | None, channel: bool) -> list[dict[str, str]]:
    space = [{"name": n, "type": "space"} for n in ("y", "x")]
    if unit is not None:
        for axis in space:
            axis["unit"] = unit
    return ([{"name": "c", "type": "channel"}] if channel else []) + space


def _jsonable(value: Any) -> Any:
    """An attr as JSON: numbers and strings as they are, sequences as lists, else its text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.ndarray | list | tuple):
        return [_jsonable(v) for v in np.asarray(value, dtype=object).ravel().tolist()]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


# ----------------------------------------------------------------------------- the reductions


def _pad_even(block: np.ndarray, fill: Any, mode: str = "constant") -> np.ndarray:
    """Pad the last two axes to even lengths (with ``fill``, or repeating the edge)."""
    pad = [(0, 0)] * (block.ndim - 2) + [(0, block.shape[-2] % 2), (0, block.shape[-1] % 2)]
    if not any(p[1] for p in pad):
        return block
    if mode == "edge":
        return np.pad(block, pad, mode="edge")
    return np.pad(block, pad, constant_values=fill)


def _blocks2(block: np.ndarray) -> np.ndarray:
    """The 2×2 blocks of the last two (even) axes as a trailing axis of 4: TL, TR, BL, BR."""
    *lead, h, w = block.shape
    quads = block.reshape(*lead, h // 2, 2, w // 2, 2)
    quads = np.moveaxis(quads, -3, -2)  # (..., h/2, w/2, 2, 2)
    return quads.reshape(*lead, h // 2, w // 2, 4)


def _mean2(block: np.ndarray) -> np.ndarray:
    """NaN-aware mean of each 2×2 block (float64 sums, float32 out).

    Summed corner by corner (TL, TR, BL, BR) into planes of the output's size, where a
    float64 copy of the whole block and its NaN-zeroed twin cost two memory passes more
    (an 8192² slide's abundance pyramid: 2.3 s for its first level)."""
    padded = _pad_even(block, np.nan)
    total = np.zeros((*padded.shape[:-2], padded.shape[-2] // 2, padded.shape[-1] // 2))
    count = np.zeros(total.shape, np.uint8)
    for i in (0, 1):
        for j in (0, 1):
            corner = padded[..., i::2, j::2]
            finite = np.isfinite(corner)
            np.add(total, corner, out=total, where=finite)
            count += finite
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(total, count, out=total)
    total[count == 0] = np.nan
    return total.astype(np.float32)


def _axial_mean2(block: np.ndarray) -> np.ndarray:
    """Doubled-angle mean of the axial angles of each 2×2 block, in [0, π) (float32 out).

    The cosines and sines summed corner by corner (TL, TR, BL, BR), as :func:`_mean2`."""
    padded = _pad_even(block, np.nan)
    c = np.zeros((*padded.shape[:-2], padded.shape[-2] // 2, padded.shape[-1] // 2))
    s, count = np.zeros(c.shape), np.zeros(c.shape, np.uint8)
    for i in (0, 1):
        for j in (0, 1):
            corner = padded[..., i::2, j::2]
            finite = np.isfinite(corner)
            doubled = 2.0 * np.where(finite, corner.astype(np.float64), 0.0)
            np.add(c, np.cos(doubled), out=c, where=finite)
            np.add(s, np.sin(doubled), out=s, where=finite)
            count += finite
    length = np.hypot(c, s) / np.maximum(count, 1)
    out = np.mod(0.5 * np.arctan2(s, c), np.pi).astype(np.float32)
    out = np.where(out >= np.float32(np.pi), np.float32(0.0), out)  # float32 rounding to π
    return np.where((count > 0) & (length >= AXIAL_MIN_RESULTANT), out, np.float32(np.nan))


def _mode2(block: np.ndarray) -> np.ndarray:
    """The most frequent label of each 2×2 block; ties go to the first of TL, TR, BL, BR.

    Counted corner by corner in uint8 planes of the output's size: the 4 × 4 comparisons and
    their int64 counts at once took 16 bytes and more per input pixel (0.4 GiB at the peak
    of a slide's label pyramid on 2 threads)."""
    padded = _pad_even(block, 0, mode="edge")
    corners = [padded[..., i::2, j::2] for i in (0, 1) for j in (0, 1)]  # TL, TR, BL, BR
    best, most = corners[0].copy(), None
    for corner in corners:
        count = np.zeros(corner.shape, np.uint8)
        for other in corners:
            count += corner == other
        if most is None:
            most = count
            continue
        more = count > most  # strictly: a tie keeps the earlier corner
        np.copyto(best, corner, where=more)
        np.copyto(most, count, where=more)
    return best


def _halved(array: da.Array, reduce: Any) -> da.Array:
    """``reduce`` on each block of ``array`` (even-sided except the last): half the size."""
    chunks = tuple(
        c if i < array.ndim - 2 else tuple(-(-n // 2) for n in c)
        for i, c in enumerate(array.chunks)
    )
    meta = np.empty((0,) * array.ndim, array.dtype)
    return array.map_blocks(reduce, chunks=chunks, dtype=array.dtype, meta=meta)


# ----------------------------------------------------------------------------- writing


def _complete(target: Any) -> bool:
    """Whether a store is there and complete (a resume then has nothing to do)."""
    try:
        return bool(store_status(target)["complete"])
    except (FileNotFoundError, StoreFormatError, KeyError, OSError):
        return False


def _write_pyramid(
    group: zarr.Group,
    level0: da.Array | zarr.Array,
    shapes: list[tuple[int, int]],
    sides: tuple[int, int],
    reducers: Sequence[Any],
    *,
    fill: Any,
    dims: tuple[str, ...],
    scheduler: Any,
    progress: bool,
) -> list[zarr.Array]:
    """Write level 0 (unless it is a ``zarr.Array`` already written), then each level from the
    one written before it, read back from the store; every chunk carries a CRC-32C checksum.

    ``level0`` is ``(c, y, x)`` (``reducers`` one per channel) or ``(y, x)`` (one reducer).
    """
    lead = level0.shape[:-2]
    arrays: list[zarr.Array] = [level0] if isinstance(level0, zarr.Array) else []
    for level, shape in enumerate(shapes):
        if level == 0 and arrays:
            continue
        chunks = (*((1,) * len(lead)), min(sides[0], shape[0]), min(sides[1], shape[1]))
        target = group.create_array(
            str(level),
            shape=(*lead, *shape),
            chunks=chunks,
            dtype=level0.dtype,
            fill_value=fill,
            dimension_names=dims,
            compressors=(zarr.codecs.ZstdCodec(level=0), Crc32cCodec()),
            overwrite=True,
        )
        if level == 0:
            source = level0.rechunk(chunks)
        else:
            below = arrays[-1]
            read = (*((1,) * len(lead)), 2 * chunks[-2], 2 * chunks[-1])
            previous = da.from_zarr(below, chunks=read)
            if lead:
                source = da.concatenate(
                    [_halved(previous[i : i + 1], r) for i, r in enumerate(reducers)], axis=0
                )
            else:
                source = _halved(previous, reducers[0])
        store = da.store(source, target, lock=False, compute=False)
        compute_collections([store], scheduler, progress)
        arrays.append(target)
    return arrays


def _texture_colours(maps: Any, names: Sequence[str], attrs: Mapping[str, Any]) -> list | None:
    """The colours of a segmentation's abundance channels, texture ``i`` in label ``i``'s
    (:func:`xfskde._palette.label_hex`): where the maps carry ``n_textures``, as many as
    they have channels, along a ``texture`` dim or named ``"texture 1"``, ... in order; None
    for other maps."""
    try:
        count = int(attrs.get("n_textures"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    along = isinstance(maps, xr.DataArray) and maps.ndim == 3 and "texture" in maps.dims
    named = list(names) == label_names(len(names))[1:]
    return label_hex(count) if count == len(names) and (along or named) else None


def _display(
    name: str, axial: bool, coarsest: np.ndarray, index: int, colour: str | None = None
) -> dict[str, Any]:
    """The omero channel of a map: label, colour (``colour`` where given), window (and a
    cyclic LUT for angles)."""
    channel: dict[str, Any] = {
        "label": name, "active": True, "coefficient": 1.0, "family": "linear", "inverted": False,
    }  # fmt: skip
    if axial:
        low = start = 0.0
        high = end = float(np.pi)
        channel.update(color=_AXIAL_COLOUR, lut=_AXIAL_LUT)
    elif name == "coherence":
        low = start = 0.0
        high = end = 1.0
    else:
        values = coarsest[np.isfinite(coarsest)]
        if values.size:
            low, high = float(values.min()), float(values.max())
            start, end = (float(v) for v in np.percentile(values, WINDOW_PERCENTILES))
        else:
            low = start = 0.0
            high = end = 1.0
        if end <= start:  # a constant map: a window one unit wide
            end = start + (abs(start) or 1.0)
            high = max(high, end)
    if "color" not in channel:
        channel["color"] = colour or _NAMED_COLOURS.get(name, _PALETTE[index % len(_PALETTE)])
    channel["window"] = {"min": low, "max": high, "start": start, "end": end}
    return channel


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _label_data(labels: Any, name: str) -> xr.DataArray:
    """A label image as an integer ``(y, x)`` DataArray (booleans become uint8)."""
    array = _as_2d(labels, f"labels[{name!r}]")
    if array.dtype.kind == "b":
        array = array.astype(np.uint8)
    if array.dtype.kind not in _LABEL_DTYPES:
        raise ParameterError(
            f"labels[{name!r}] has dtype {array.dtype}: NGFF labels are integers; cast it, e.g. "
            ".astype('uint16') (NaN has no integer: fill it first, e.g. .fillna(0))"
        )
    _refuse_georeferenced(array, f"labels[{name!r}]")
    return array


def _label_display(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``colors`` and ``properties`` of a segmentation's label image (labels carrying an
    ``n_textures`` attr): each texture in the library's label colour (:mod:`xfskde._palette`,
    as in its pictures and GeoTIFF colour tables) and named as the GeoTIFF names it
    (:func:`xfskde._palette.label_names`: ``"texture i"``), the background (0)
    transparent; nothing for other label images (viewers colour them as they like)."""
    textures = attrs.get("n_textures")
    if textures is None:
        return {}
    rgba = label_rgba_8bit(int(textures))
    colors = [{"label-value": i, "rgba": list(map(int, row))} for i, row in enumerate(rgba)]
    names = label_names(int(textures))
    properties = [{"label-value": i, "name": name} for i, name in enumerate(names)]
    return {"colors": colors, "properties": properties}


def _write_label_image(
    root: zarr.Group,
    name: str,
    labels: xr.DataArray,
    n_levels: int,
    factor: tuple[float, float],
    unit: str | None,
    sides: tuple[int, int] | None,
    scheduler: Any,
    progress: bool,
) -> None:
    """Write ``labels/<name>``: its levels (2×2 modes), then its metadata."""
    if "/" in name or name in ("", ".", ".."):
        raise ParameterError(f"a label name must be a plain name, got {name!r}")
    grid, _ = _grid(labels, f"labels[{name!r}]")
    sides = sides or _chunk_sides(labels, None)
    data = labels.data
    if not isinstance(data, da.Array):
        data = dask_view(np.asarray(data), sides)
    labels_group = root.require_group("labels")
    if name in labels_group:  # unlisted first: a rewrite cut short leaves no listed half-image
        _register_labels(root, [], drop=[name])
        del labels_group[name]
    group = labels_group.create_group(name)
    shapes = [grid.shape]
    while len(shapes) < n_levels:
        shapes.append(tuple(-(-s // 2) for s in shapes[-1]))
    _write_pyramid(
        group, data, shapes, sides, [_mode2], fill=0, dims=("y", "x"),
        scheduler=scheduler, progress=progress,
    )  # fmt: skip
    multiscale = {
        "name": name,
        "axes": _axes(unit, channel=False),
        "datasets": _datasets(grid, n_levels, factor, channel=False),
        "type": "mode",
        "metadata": {
            "method": "xfskde.io.omezarr: the most frequent label of each 2x2 block (ties: the "
            "first of top-left, top-right, bottom-left, bottom-right)",
            "version": __version__,
        },
    }
    group.update_attributes(
        {
            "ome": {
                "version": NGFF_VERSION,
                "multiscales": [multiscale],
                "image-label": {
                    "version": NGFF_VERSION,
                    "source": {"image": "../../"},
                    **_label_display(labels.attrs),
                },
            },
            "xfskde": {"attrs": _jsonable(dict(labels.attrs))},
        }
    )


def _register_labels(root: zarr.Group, names: Sequence[str], drop: Sequence[str] = ()) -> None:
    """Add ``names`` to the ``labels`` group's list (written after the label images), less
    ``drop`` (a label image about to be written again)."""
    group = root.require_group("labels")
    ome = dict(group.attrs.get("ome", {}))
    listed = [n for n in ome.get("labels", []) if n not in (*names, *drop)]
    group.update_attributes({"ome": {"version": NGFF_VERSION, "labels": [*listed, *names]}})


def write_ome_zarr(
    maps: Any,
    store: Any,
    *,
    labels: Mapping[str, Any] | None = None,
    axial: Sequence[str] | None = None,
    pixel_size: float | Sequence[float] | None = None,
    chunks: int | Sequence[int] | None = None,
    coarsest: int = COARSEST,
    name: str | None = None,
    overwrite: bool = False,
    resume: bool = False,
    scheduler: Any = None,
    progress: bool = False,
    storage_options: dict | None = None,
    finalize: bool = True,
    verify: bool = False,
) -> zarr.Group:
    """Write real-valued maps as an OME-NGFF 0.5 multiscale image (Zarr v3), out of core.

    The maps — e.g. the orientation, coherence and energy of a local FS-KDE field (paper,
    section 2.3, eq. 1; :mod:`xfskde.orientation`) — become the channels ``c`` of one float32
    ``(c, y, x)`` image with a pyramid of 2×2 means (doubled-angle means for axial angles),
    coordinate transformations that put every sample over the input pixels it describes, and
    display settings; label images go under ``labels/<name>``. The module docstring
    (:mod:`xfskde.io.omezarr`) gives every rule.

    Parameters
    ----------
    maps : xarray.DataArray, xarray.Dataset or mapping of str to DataArray
        One ``(y, x)`` map (its name is the channel's), a ``(c, y, x)`` DataArray (channel names
        from its ``c`` coordinate; the channel dim may have any name, the spatial ones must be
        ``y`` and ``x``), or named ``(y, x)`` maps on one grid (a Dataset's variables or a
        dict's values, in order). NumPy- or Dask-backed; never loaded whole. Coordinates, if
        any, are the samples' positions in input pixels (those of xfskde's results).
    store : str, path-like, URL or zarr store
        Where to write: a local path (a directory is created), a URL (``s3://``, ``gs://``,
        ``memory://``) or a zarr store object such as ``zarr.storage.MemoryStore()``.
    labels : mapping of str to DataArray, optional
        Integer ``(y, x)`` label images (e.g. ``{"segmentation": xfskde.segment(...)}``), each
        on its own grid in the same input-pixel frame, written to ``labels/<name>`` with as many
        levels as the image, by 2×2 modes.
    axial : sequence of str, optional
        Names of the channels that hold axial angles in [0, π) radians (averaged as doubled
        angles). Default: detected — maps carrying the ``orientation_convention`` attr of
        :func:`xfskde.orientation.orientation`, or named ``"orientation"`` (with no ``units``
        but ``"rad"``). ``()`` averages every channel plainly.
    pixel_size : float or (float, float), optional
        Micrometres per *input* pixel (y, x). Default: the maps' ``mpp`` or ``pixel_size`` attr
        (micrometres, or in ``pixel_size_units``); without one, the axes have no unit and the
        transforms are in input pixels.
    chunks : int or (int, int), optional
        Spatial chunk sides of every level: level 0's chunks are ``(c, cy, cx)``, every
        channel of a block (the block store writes and records a block whole), the coarser
        levels' ``(1, cy, cx)``, one channel each. Default: the Dask chunks of the first map
        when they are 64–4096 samples, else 512.
    coarsest : int, optional
        Levels are added until the longer side is at most this (default 512).
    name : str, optional
        The multiscale image's name (default ``"xfskde maps"``).
    overwrite : bool, optional
        Replace whatever is at ``store``; otherwise an existing store is refused.
    resume : bool, optional
        Finish an interrupted write: level 0 is written block by block through the block
        store (:func:`xfskde.io.write_blocks`: a completion record per block, CRC-32C checksums),
        so only its missing blocks are computed; the coarser levels, the labels and the
        metadata are then written again (they are small). The maps must be the same (shape,
        coordinates, attrs), as for any resume. A complete store is left as it is unless
        level 0 is found damaged (:func:`xfskde.io.stores.forget_damaged_blocks`: a chunk gone,
        found by a listing, then every other block read back; a coordinate that does not read
        back): its damaged blocks are computed again and the rest written again, with a
        :class:`~xfskde.exceptions.StoreDamagedWarning`. A store begun from another version of
        the maps' input file (``source_version``) is written again whole
        (:func:`xfskde.io.stores.input_changed`).
    scheduler : str or distributed.Client, optional
        Where the levels are computed (each level one Dask computation): None for Dask's
        current scheduler, ``"threads"``, ``"processes"``, ``"synchronous"``, a Client or an
        address.
    progress : bool, optional
        Show a progress bar per level.
    storage_options : dict, optional
        Options of a URL's fsspec filesystem (credentials, ``endpoint_url``).
    finalize : bool, optional
        Mark the image complete once it is written (:func:`xfskde.io.finalize_store`: its
        metadata consolidated, then its status ``"complete"``). False leaves it incomplete, for
        a caller that adds to it what it must hold — a label image computed from the stored
        maps (:func:`write_ome_zarr_labels`) — and then calls
        :func:`~xfskde.io.finalize_store` itself: an image cut short before that never says
        it is complete, and a resume writes everything after level 0 again.
    verify : bool, optional
        With ``resume``: read every block of level 0 already written back against its
        checksum first, and compute the damaged ones again (a resume without it reads none).

    Returns
    -------
    zarr.Group
        The image's root group, opened read-only.

    Raises
    ------
    StoreExistsError
        If something is at ``store`` and ``overwrite`` is False.
    DimensionError
        If a map is not ``(y, x)`` (or the maps not ``(c, y, x)``), or the maps are not on one
        grid.
    ParameterError
        For complex or non-numeric maps, georeferenced maps (write them with
        :func:`xfskde.io.write_geotiff`), coordinates that are not regular and increasing,
        non-integer labels, unknown ``axial`` names or bad ``pixel_size``, ``chunks``,
        ``coarsest``.
    ConnectionError
        If ``scheduler`` is an address where no Dask scheduler answers.

    Examples
    --------
    >>> field = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)  # doctest: +SKIP
    >>> maps = {"orientation": field.fskde.orientation(), "coherence": field.fskde.coherence(),
    ...         "energy": field.fskde.energy()}  # doctest: +SKIP
    >>> write_ome_zarr(maps, "slide-maps.ome.zarr", pixel_size=0.25)  # doctest: +SKIP
    """
    if is_address(scheduler):  # connected once, for every level
        with connect(scheduler) as client:
            return write_ome_zarr(
                maps, store, labels=labels, axial=axial, pixel_size=pixel_size, chunks=chunks,
                coarsest=coarsest, name=name, overwrite=overwrite, resume=resume,
                scheduler=client, progress=progress, storage_options=storage_options,
                finalize=finalize, verify=verify,
            )  # fmt: skip
    coarsest = _check_int("coarsest", coarsest, 1)
    items, shared = _maps(maps)
    first_name, first = items[0]
    grid, (ys, xs) = _grid(first, f"the map {first_name!r}")
    for map_name, m in items:
        _refuse_georeferenced(m, f"the map {map_name!r}")
        coords = _grid(m, f"the map {map_name!r}")[1] if m.shape == first.shape else None
        if coords is None or not (np.array_equal(coords[0], ys) and np.array_equal(coords[1], xs)):
            raise DimensionError(
                f"the maps {first_name!r} {first.shape} and {map_name!r} {m.shape} are not on one "
                "grid (same shape and y, x coordinates): compute them from one field, or "
                "write them to separate stores"
            )
    names = [n for n, _ in items]
    if axial is None:
        axial_names = [n for n, m in items if _is_axial(n, m.attrs, shared)]
    else:
        axial_names = [str(a) for a in ([axial] if isinstance(axial, str) else axial)]
        unknown = sorted(set(axial_names) - set(names))
        if unknown:
            raise ParameterError(f"axial names channels {unknown} that are not among {names}")
    attrs = dict(maps.attrs) if isinstance(maps, xr.DataArray | xr.Dataset) else {}
    attrs = {**(first.attrs if shared else _stack_attrs(items)), **attrs}
    factor_um = _coordinate_unit(first, pixel_size) or _pixel_size(pixel_size, attrs)
    factor, unit = (factor_um, "micrometer") if factor_um else ((1.0, 1.0), None)
    sides = _chunk_sides(first, chunks)
    if labels is not None and not isinstance(labels, Mapping):
        raise ParameterError(
            "labels must be a mapping of names to label images, e.g. {'segmentation': labels}"
        )
    label_items = [(str(k), _label_data(v, str(k))) for k, v in (labels or {}).items()]
    if isinstance(overwrite, str) or not isinstance(overwrite, bool):
        raise ParameterError(f"overwrite must be True or False, got {overwrite!r}")

    target = store_target(store, storage_options)
    channels = []
    for _, m in items:
        data = m.data
        if not isinstance(data, da.Array):
            data = dask_view(np.asarray(data), sides)
        channels.append(data.astype(np.float32))
    level0 = xr.DataArray(
        da.stack(channels, axis=0),
        dims=("c", "y", "x"),
        coords={"c": names, **{d: first.coords[d] for d in ("y", "x") if d in first.coords}},
        attrs=_jsonable(attrs),
    )
    checked = False
    if resume and _complete(target) and input_changed(level0, target) is None:
        refuse_other_parameters(level0, target)  # left as it is, if it holds these maps
        damage = forget_damaged_blocks(target, name="0", verify=verify)  # and is not damaged
        checked = True
        group = zarr.open_group(zarr_like(target), mode="r", zarr_format=3)
        if not damage.found and not _damaged_coordinates(group, "0"):
            return group
        # its damaged blocks are marked not written, and write_blocks writes damaged
        # coordinates again: then the rest, all made from level 0, is written again
    shapes = _level_shapes(grid.shape, coarsest)
    reducers = [_axial_mean2 if n in axial_names else _mean2 for n in names]
    # level 0 through the block store: a completion record per block, checksums, resume, and a
    # failure before the first block removes the layout; complete only once all is written
    write_blocks(
        level0, target, name="0", chunks=sides, resume=resume, overwrite=overwrite,
        scheduler=scheduler, progress=progress, finalize=False, fill_value=np.float32(np.nan),
        verify=verify and not checked,
    )  # fmt: skip
    root = zarr.open_group(zarr_like(target), mode="r+", zarr_format=3)
    arrays = _write_pyramid(
        root, root["0"], shapes, sides, reducers, fill=np.float32(np.nan),
        dims=("c", "y", "x"), scheduler=scheduler, progress=progress,
    )  # fmt: skip
    for label_name, label_array in label_items:
        _write_label_image(
            root, label_name, label_array, len(shapes), factor, unit, None, scheduler, progress
        )
    if label_items:
        _register_labels(root, [n for n, _ in label_items])
    coarse = np.asarray(arrays[-1][...])
    colours = _texture_colours(maps, names, attrs) or [None] * len(names)
    displays = [
        _display(n, n in axial_names, coarse[i], i, colours[i]) for i, n in enumerate(names)
    ]
    omero = {
        "channels": displays,
        "rdefs": {"model": "color", "defaultT": 0, "defaultZ": 0},
    }
    multiscale = {
        "name": name or "xfskde maps",
        "axes": _axes(unit, channel=True),
        "datasets": _datasets(grid, len(shapes), factor, channel=True),
        "type": "mean",
        "metadata": {
            "method": "xfskde.io.omezarr: NaN-aware mean of each 2x2 block; for axial "
            "channels the doubled-angle mean arg(mean(exp(2i theta)))/2 mod pi",
            "axial_channels": axial_names,
            "version": __version__,
        },
    }
    root.update_attributes(
        {
            "ome": {"version": NGFF_VERSION, "multiscales": [multiscale], "omero": omero},
            "xfskde": {
                "version": __version__,
                # µm per unit of the maps' y and x coordinates (1 where they are µm already,
                # the pixel size given where they count input pixels): what a label image
                # added later is scaled by; the input's pixel size is attrs' source_pixel_size_um
                COORDINATE_UM: list(factor_um) if factor_um else None,
                "channels": {n: _jsonable(dict(m.attrs)) for n, m in items},
                "attrs": _jsonable(attrs),
            },
        }
    )
    if finalize:  # last: the status says complete only once everything is there
        finalize_store(target)
    return zarr.open_group(zarr_like(target), mode="r", zarr_format=3)


def write_ome_zarr_labels(
    labels: Any,
    store: Any,
    *,
    name: str | None = None,
    pixel_size: float | Sequence[float] | None = None,
    chunks: int | Sequence[int] | None = None,
    overwrite: bool = False,
    scheduler: Any = None,
    progress: bool = False,
) -> zarr.Group:
    """Add a label image to an OME-Zarr image already written (``labels/<name>``).

    The labels — e.g. the texture labels of :func:`xfskde.segment` (ORTSEG, section 5.3) — get
    as many levels as the image, each the mode of 2×2 blocks, and transforms from their own
    coordinates (input pixels) as in :func:`write_ome_zarr`; the ``labels`` group's list is
    updated last.

    Parameters
    ----------
    labels : xarray.DataArray
        An integer (or boolean) ``(y, x)`` label image, NumPy- or Dask-backed.
    store : str, path-like or zarr store
        An OME-Zarr 0.5 image, e.g. written by :func:`write_ome_zarr`.
    name : str, optional
        The label image's name (default: the DataArray's name, else ``"labels"``).
    pixel_size : float or (float, float), optional
        Micrometres per input pixel (y, x). Default: the one :func:`write_ome_zarr` recorded;
        required for other images whose axes have a unit.
    chunks : int or (int, int), optional
        Chunk sides (default: the Dask chunks of 64–4096, else 512).
    overwrite : bool, optional
        Replace a label image of that name; otherwise it is refused.
    scheduler : str or distributed.Client, optional
        Where the levels are computed (see :func:`write_ome_zarr`).
    progress : bool, optional
        Show a progress bar per level.

    Returns
    -------
    zarr.Group
        The label image's group, opened read-only.

    Raises
    ------
    FileNotFoundError
        If ``store`` is a path that does not exist.
    StoreFormatError
        If ``store`` is not an OME-Zarr 0.5 image.
    StoreExistsError
        If the label image exists and ``overwrite`` is False.
    ParameterError
        For non-integer labels, a bad name, ``pixel_size`` or ``chunks``.
    """
    if is_address(scheduler):
        with connect(scheduler) as client:
            return write_ome_zarr_labels(
                labels, store, name=name, pixel_size=pixel_size, chunks=chunks,
                overwrite=overwrite, scheduler=client, progress=progress,
            )  # fmt: skip
    target = store_target(store)
    if isinstance(target, Location) and not target.exists():
        raise FileNotFoundError(f"no such OME-Zarr image: {store}")
    try:  # not through its consolidated metadata, which does not know the labels to come
        root = zarr.open_group(zarr_like(target), mode="r+", zarr_format=3, use_consolidated=False)
        ome = root.attrs["ome"]
        multiscale = ome["multiscales"][0]
        n_levels = len(multiscale["datasets"])
    except (KeyError, IndexError, TypeError, ValueError, zarr.errors.BaseZarrError) as exc:
        raise StoreFormatError(
            f"{store} is not an OME-Zarr 0.5 image (no ome.multiscales in its root group)"
        ) from exc
    name = str(name if name is not None else getattr(labels, "name", None) or "labels")
    array = _label_data(labels, name)
    existing = root.get("labels")
    if isinstance(existing, zarr.Group) and name in existing and not overwrite:
        raise StoreExistsError(
            f"{store} already has a label image {name!r}; pass overwrite=True to replace it"
        )
    units = [a.get("unit") for a in multiscale.get("axes", []) if a.get("type") == "space"]
    if pixel_size is not None:
        factor, unit = _number_pair(pixel_size, "pixel_size"), "micrometer"
    else:
        block = root.attrs.get("xfskde") or {}
        # stores written before 2026-11-30 named it pixel_size_um, though it is no pixel size
        recorded = block.get(COORDINATE_UM, block.get("pixel_size_um", "absent"))
        if recorded not in (None, "absent"):
            factor, unit = _number_pair(recorded, "the recorded pixel size"), "micrometer"
        elif recorded is None or not any(units):
            factor, unit = (1.0, 1.0), None
        else:
            raise ParameterError(
                f"{store}'s axes are in {units[0]} but it does not record a pixel size: pass "
                "pixel_size= (micrometres per input pixel)"
            )
    sides = _chunk_sides(array, chunks)
    _write_label_image(root, name, array, n_levels, factor, unit, sides, scheduler, progress)
    _register_labels(root, [name])
    if _complete(target):  # its chunks counted, as finalize_store counted the others'
        _count_chunks(target, root)
    if root.metadata.consolidated_metadata is not None or _complete(target):
        with warnings.catch_warnings():  # consolidated metadata: a zarr-python v3 extension
            warnings.filterwarnings("ignore", category=zarr.errors.ZarrUserWarning)
            zarr.consolidate_metadata(zarr_like(target))  # it lists the new label image
    return zarr.open_group(zarr_like(target), mode="r", zarr_format=3, path=f"labels/{name}")
