"""Labelled-array conventions: reading an image's dims and labelling every result alike.

This module is low in the package: it imports xarray and nothing of xfskde above
:mod:`xfskde.exceptions`, :mod:`xfskde._grid` and :mod:`xfskde._pictures` (the refusal of a
palette image, worded once). Every face that returns a DataArray (the
coefficient field, density and orientation maps, segmentation labels and abundances) builds it
here, so each result carries the same labels:

* **Dims.** Images are read by dimension *name*, as rioxarray does: the spatial dims are ``y``
  and ``x`` when present, else a latitude and a longitude (``lat``, ``lon``, ..., or coords
  in ``degrees_north`` and ``degrees_east``: y is the latitude in either order), else the last
  two; a colour dim is one of :data:`COLOR_DIMS`, at
  either end. Anything else is refused (:class:`~xfskde.exceptions.DimensionError`) with the
  ``.transpose(...)`` or ``.rename(...)`` call that fixes it. Results use ``y`` and ``x``
  whatever the input's names were (recorded in the ``source_dims`` attr).
* **Coordinates and cells.** A result on a stride-``s`` grid (:mod:`xfskde._grid`) has one
  sample per s×s *cell* of the image: sample ``i`` represents the pixels ``i*s .. i*s + s - 1``
  (the cell a ``window="box", size=s, stride=s`` field sums exactly), and sits at the cell's
  centre, pixel position ``i*s + (s - 1)/2``. For an odd stride that is the sampled pixel
  ``i*s + o`` (``o = (s - 1)//2``) and every coordinate is the image's there, exactly. For an
  even stride the centre lies half a pixel beyond the sampled pixel (between pixels ``i*s + o``
  and ``i*s + o + 1``), so *position* coords — the spatial dims' own coords and floating-point
  coords such as a 2-D ``lat`` — are interpolated there (linearly, in float64 whatever their
  dtype: exact on a regular grid; half a step beyond the last pixel when a last cell overhangs
  the image edge), while other coords (integer ids, labels, dates) are the sampled pixel's.
  Spatial dims without coords get the sampled pixels' *indices* ``i*s + o`` (integers to
  index the image with; there is no georeferencing for them to agree with) — unless the image
  carries a rectilinear GeoTransform, whose CRS coordinates of the cells' centres they then
  get. Scalar coords (a CRS ``spatial_ref``) are kept with their attrs.
* **Georeferencing.** The result's grid is the image's grid coarsened s times, anchored at the
  image's corner: its GeoTransform (GDAL order ``c a b f d e``, in a scalar coord's
  ``GeoTransform`` attr as rioxarray writes it, or a rasterio-order ``transform`` attr) has
  ``a, b, d, e`` multiplied by s, and its origin is the corner of the first cell, taken from
  the result's own coordinates as rioxarray takes it (``x[0] - a*s/2``), so
  ``result.rio.transform()``, the attr, the coordinates and ``rio.bounds()`` agree exactly.
  The bounds are the image's when its sides are multiples of s. A side of ``n = q*s + r``
  pixels (``0 < r < s``) has a last, partial cell when ``r > o``: it overhangs the image edge by
  ``s - r`` pixels (its sample lies inside); when ``r <= o`` the last ``r`` pixels belong to no
  cell. A stale input GeoTransform (a crop with ``isel``, a south-up ``sortby("y")``, a
  subsample: xarray keeps the attr as it was) does not carry over: the transform follows the
  coordinates, each axis's step (sign and size) as well as the origin, as rioxarray's
  ``rio.transform(recalc=True)`` does (:func:`aligned_geotransform`); coordinates no transform
  can follow are refused (:func:`check_georeferencing`). Ground control points (rioxarray's
  ``gcps`` attr, a scene georeferenced by them alone) are put on the cells alike
  (:func:`cell_gcps`).
* **Attributes.** The input's attrs are kept, less those that describe how the *input's values*
  are encoded (:data:`VALUE_ATTRS`: a fill value or scale factor of uint16 reflectances means
  nothing for complex coefficients, and a ``nodata`` attr would make rioxarray mask the
  result's zeros) and the statistics of those values (GDAL's ``STATISTICS_*``, CF's
  ``actual_range``: untrue of any result, :func:`carried_attr`); the result's own attrs
  (parameters, ``long_name``, ``units``) are laid over them. Attrs are strings, integers,
  floats and lists of those only, so netCDF and Zarr store them as they are: an input attr
  (or an attr of a coord carried) netCDF cannot hold is converted (a boolean to 1 or 0) or
  dropped (None, a dict, a complex number: :func:`_storable_attr`), where it made the
  result's ``to_netcdf`` fail.
* **Nodata.** :func:`image_nodata` reads the value that marks an image's missing pixels from
  the metadata rioxarray and CF use (``encoding["_FillValue"]``, then the ``_FillValue``,
  ``missing_value``, ``fill_value`` and ``nodata`` attrs, then ``nodatavals``), in rioxarray's
  order, without importing rioxarray. A float image's encoded fill counts as NaN only where a
  reader decoded it (a NaN fill, or one in stored units); a number that other metadata name
  wins over NaN, whose pixels are missing anyway. A value an integer image can never hold is
  refused. Bands with values of their own (``nodatavals`` that differ: a VRT stack) are read
  as one per band; the field masks each band's samples by its own (:func:`band_missing`),
  segmentation and masks a pixel where any band holds its own (:func:`pixel_nodata`).
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ._grid import sample_offset
from ._pictures import palette_refusal
from ._version import __version__
from .exceptions import DimensionError, ImageReadError, ParameterError

__all__ = [
    "BAND_NODATA_SOURCE",
    "COLOR_DIMS",
    "NODATA_ATTRS",
    "STATISTICS_PREFIX",
    "VALUE_ATTRS",
    "BandNodata",
    "NodataValue",
    "aligned_geotransform",
    "band_missing",
    "band_nodata_text",
    "band_scales",
    "carried_attr",
    "cell_gcps",
    "cell_geotransform",
    "channel_names",
    "check_georeferencing",
    "gcp_count",
    "geotransform",
    "grid_shear",
    "image_dims",
    "image_layout",
    "image_nodata",
    "label_result",
    "nodata_record",
    "nodata_value",
    "pixel_nodata",
    "pixel_steps",
    "plane_dims",
    "recorded_nodata",
    "refuse_dataset",
    "sampled_coords",
    "stored_integer_dtype",
    "value_scale",
]

#: Names recognised as a colour / spectral axis (compared case-insensitively).
COLOR_DIMS = ("c", "band", "bands", "channel", "channels", "rgb", "color", "colour")

#: Input attrs that describe the encoding of the input's values and are not carried to results.
VALUE_ATTRS = (
    "_FillValue",
    "missing_value",
    "scale_factor",
    "add_offset",
    "valid_range",
    "valid_min",
    "valid_max",
    "units",
    "long_name",
    "standard_name",
    "nodata",
    "nodatavals",
    "fill_value",
    "_Unsigned",
    "scales",
    "offsets",
    "source_dtype",
    "actual_range",
)

#: The prefix of GDAL's band statistics (``STATISTICS_MAXIMUM``, ``_MEAN``, ``_MINIMUM``,
#: ``_STDDEV``, ``_VALID_PERCENT``, ...), which rioxarray puts in attrs: the input's values'
#: statistics, untrue of any result, and written into a GeoTIFF's tags by ``rio.to_raster``.
STATISTICS_PREFIX = "STATISTICS_"


#: A coordinate's attrs that describe how its values were stored, not carried to results.
_COORD_ENCODING = ("_FillValue", "missing_value", "fill_value")


def carried_attr(name: str) -> bool:
    """Whether an input attr is carried to results: not one of :data:`VALUE_ATTRS` (the input's
    value encoding) nor a statistic of its values (:data:`STATISTICS_PREFIX`)."""
    return name not in VALUE_ATTRS and not str(name).upper().startswith(STATISTICS_PREFIX)


#: What :func:`_storable_attr` returns for a value that netCDF cannot hold: the attr is dropped.
_UNSTORABLE = object()


def _storable_attr(value: Any) -> Any:
    """An input attr's value as netCDF (netCDF4 and h5netcdf; scipy's netCDF3 of what it holds)
    and Zarr both store it, or :data:`_UNSTORABLE` where netCDF holds no such value.

    Kept as they are: strings, integers of 64 bits (signed or not), floats, and 1-D lists,
    tuples or arrays of numbers, or of strings (a NumPy array of strings as a list of them:
    h5netcdf refuses the array). Converted: booleans to the integers 1 and 0, as netCDF's users
    write flags and as scipy's writer stores them (netCDF has no boolean attr; ``1``/``0``
    keep ``if attrs["flag"]`` true and false, where the strings ``"True"``/``"False"`` would
    both be true); UTF-8 bytes to their text; float16 to float32. Dropped: None (no value: the
    attr absent says the same), dicts, complex numbers, dates, mixed, nested or 2-D lists and
    arrays, integers beyond 64 bits, and any other object — each of which makes the input's
    own ``to_netcdf`` fail, and Zarr cannot write complex numbers or bytes either.
    """
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and value.dtype.kind in "biuf":  # numbers: an array netCDF holds
            wider = {"b": np.int8, "f": np.float32 if value.dtype == np.float16 else None}
            kind = wider.get(value.dtype.kind)
            return value if kind is None else value.astype(kind)
        if value.ndim != 0:
            return _storable_items(value.tolist()) if value.ndim == 1 else _UNSTORABLE
        value = value[()]
    if isinstance(value, list | tuple):
        return _storable_items(value)
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return _UNSTORABLE
        return text if "\x00" not in text else _UNSTORABLE
    if isinstance(value, int | np.integer):
        return value if -(2**63) <= int(value) < 2**64 else _UNSTORABLE
    if isinstance(value, np.float16):
        return np.float32(value)
    if isinstance(value, float | np.floating):
        return value
    return _UNSTORABLE


def _storable_attrs(attrs: Mapping[Any, Any]) -> dict[str, Any]:
    """Attrs as netCDF and Zarr store them (:func:`_storable_attr`), named by non-empty
    strings: the others dropped."""
    stored = ((k, _storable_attr(v)) for k, v in attrs.items() if isinstance(k, str) and k)
    return {k: v for k, v in stored if v is not _UNSTORABLE}


def _storable_items(values: list[Any] | tuple[Any, ...]) -> Any:
    """A list or tuple of attr values as netCDF and Zarr store it: of strings, or of numbers,
    or empty, as it is, or as a list where :func:`_storable_attr` converts an item (a boolean
    to 1 or 0); else :data:`_UNSTORABLE` (mixed, nested, or holding what netCDF cannot)."""
    items = [_storable_attr(v) for v in values]
    if not all(isinstance(v, str) for v in items) and not all(
        isinstance(v, int | float | np.integer | np.floating) for v in items
    ):
        return _UNSTORABLE
    return values if all(a is b for a, b in zip(items, values, strict=True)) else items


#: Attrs that hold an image's nodata value, in the order rioxarray reads them.
NODATA_ATTRS = ("_FillValue", "missing_value", "fill_value", "nodata")


def _named_spatial(image: xr.DataArray, dims: tuple[str, ...]) -> tuple[str, str] | None:
    """The ``(y, x)`` among ``dims`` that their names say, in whatever order they come: ``y``
    and ``x``, else one latitude and one longitude as CF says them and
    :func:`_degrees_on_the_ground` reads them (named ``lat``/``latitude`` and
    ``lon``/``long``/``longitude``, any case, or with a coordinate in ``degrees_north`` and
    ``degrees_east``); None when the names do not say."""
    if {"y", "x"} <= set(dims):
        return "y", "x"
    lat = [d for d in dims if _says(image, d, *_LATITUDE)]
    lon = [d for d in dims if _says(image, d, *_LONGITUDE)]
    return (lat[0], lon[0]) if len(lat) == len(lon) == 1 and lat != lon else None


def _says(image: xr.DataArray, dim: str, names: set[str], units: set[str]) -> bool:
    """Whether a dim is named one of ``names`` or its coordinate's unit is one of ``units``."""
    unit = str(image.coords[dim].attrs.get("units", "")) if dim in image.coords else ""
    return dim.lower() in names or unit.lower() in units


def image_dims(image: xr.DataArray) -> tuple[str, str, str | None]:
    """Return ``(y_dim, x_dim, colour_dim or None)`` of an image DataArray.

    The spatial dims are read by name where their names say which is which, in whatever order
    they come: ``y`` and ``x``, else a latitude (y, rows) and a longitude (x, columns), as a
    NetCDF grid says them (``lat``/``latitude`` and ``lon``/``long``/``longitude``, or coords in
    ``degrees_north`` and ``degrees_east``); a climate file's ``(lon, lat)`` is then read as
    the ``(lat, lon)`` it transposes, not with longitudes down the rows. Else they are the last
    two (the first two when a colour dim comes last). A colour dim is one of
    :data:`COLOR_DIMS` at either end.

    Raises
    ------
    DimensionError
        When the layout is not (y, x) or (y, x) with one colour dim at either end, or when the
        array is already a coefficient field, with the call that would fix it.
    """
    dims = tuple(map(str, image.dims))
    if "k" in dims:
        raise DimensionError(
            f"this DataArray (dims {dims}) has a 'k' dim: it is already an FS-KDE coefficient "
            "field; use .fskde.density/.canonicalize/.distance on it, or pass the image instead"
        )
    colour = [d for d in dims if d.lower() in COLOR_DIMS]
    if image.ndim == 2:
        y, x = _named_spatial(image, dims) or dims
        return y, x, None
    if image.ndim == 3 and len(colour) == 1:
        c = colour[0]
        spatial = tuple(d for d in dims if d != c)
        y, x = _named_spatial(image, spatial) or spatial
        if dims.index(c) == 1:
            raise DimensionError(
                f"the colour dim {c!r} sits between the spatial dims {spatial}; call "
                f".transpose({y!r}, {x!r}, {c!r}) first"
            )
        return y, x, c
    raise DimensionError(_layout_advice(image, dims, colour))


def _layout_advice(image: xr.DataArray, dims: tuple[str, ...], colour: list[str]) -> str:
    """Why :func:`image_dims` cannot read an image's dims, and the call that fixes it: a
    stacked dim (``.stack(pix=("y", "x"))``) is unstacked; of three or more dims without
    ``y`` and ``x`` named, the last two that are not a colour dim are named so — the
    others then a stack, each plane's field its own (:func:`plane_dims`) — or one image is
    selected. A plane dim was told to be renamed a colour dim (``.rename({'time': 'band'})``:
    a time series read as the channels of one image)."""
    head = f"cannot tell the spatial dims of an image with dims {dims}"
    stacked = [d for d in dims if getattr(image.indexes.get(d), "nlevels", 1) > 1]
    if stacked:
        levels = tuple(map(str, image.indexes[stacked[0]].names))
        return f"{head}: {stacked[0]!r} stacks {levels}; unstack it first: .unstack({stacked[0]!r})"
    left = [d for d in dims if d not in colour]  # the spatial dims' and the stack's
    if len(left) < 2:
        return f"{head}: an image has two spatial dims, (y, x)"
    a, b = left[-2:]
    others = left[:-2]
    names = {d: t for d, t in ((a, "y"), (b, "x")) if d != t}
    keywords = all(d.isidentifier() and not keyword.iskeyword(d) for d in names)
    rename = (
        ", ".join(f"{d}={t!r}" for d, t in names.items()) if keywords
        else "{" + ", ".join(f"{d!r}: {t!r}" for d, t in names.items()) + "}"
    )  # fmt: skip
    expected = (
        f"{head}: expected (y, x), (y, x) with a colour dim named one of {COLOR_DIMS} at "
        f"either end, or a stack of such images with y and x named"
    )
    if not others:  # two colour dims: one is a stack, or no colour
        return (
            f"{expected}; it has {len(colour)} colour dims {tuple(colour)}: select one image "
            f"(e.g. .isel({colour[0]}=0)) or name the stack's dim otherwise (e.g. "
            f".rename({{{colour[0]!r}: 'plane'}})), and the spatial dims y and x"
            + (f" (.rename({rename}))" if names else "")
        )
    return (
        f"{expected}. If {a!r} and {b!r} are the image's dims, name them so: .rename({rename}) "
        f"(each plane of {tuple(others)} then gets its own field); else select one image, e.g. "
        f".isel({others[0]}=0)"
    )


def plane_dims(image: xr.DataArray) -> tuple[str, ...]:
    """The dims of a stack of images — a time series, a z-stack, ``(t, z, y, x[, c])``,
    ``(time, lat, lon)`` — that are neither the spatial dims, named so (``y`` and ``x``, or a
    latitude and a longitude: :func:`image_dims`), nor one colour dim (:data:`COLOR_DIMS`):
    () for an image, and where the spatial dims are not named so (which two dims are the
    image's would be a guess)."""
    dims = tuple(map(str, image.dims))
    spatial = _named_spatial(image, dims)
    if spatial is None or "k" in dims:
        return ()
    colour = [d for d in dims if d.lower() in COLOR_DIMS]
    return tuple(d for d in dims if d not in spatial and d not in colour[:1])


def refuse_dataset(image: Any) -> None:
    """An :class:`xarray.Dataset` given as an image is refused with what to pass instead:
    one of its variables, or its bands stacked as a colour dim."""
    if isinstance(image, xr.Dataset):
        names = list(image.data_vars)
        first = repr(names[0]) if names else "'name'"
        raise DimensionError(
            f"got an xarray.Dataset (variables {names}); pass one DataArray, e.g. ds[{first}], "
            "or its variables stacked as colour channels, ds.to_dataarray('band')"
        )


def image_layout(image: xr.DataArray) -> tuple[Any, tuple[str, str, str | None]]:
    """The image's data as ``(y, x)`` or ``(y, x, c)`` (NumPy or Dask, not loaded) and its dims.

    A palette image (a TIFF whose values index a colour map, as :func:`xfskde.open_image`
    reads it: ``attrs["source_palette"]``, the map's entries) is refused: its indices are no
    intensities, and their gradients and histograms would be the colour map's order, not the
    picture's. So is an image whose coordinates contradict its GeoTransform beyond repair
    (:func:`check_georeferencing`), whose results no transform would place.
    """
    entries = image.attrs.get("source_palette")
    if entries:
        name = image.attrs.get("source") or image.name or "the image"
        raise ImageReadError(palette_refusal(str(name), int(entries)))
    y, x, colour = image_dims(image)
    check_georeferencing(image, y, x)  # before any pixel is read: results would be misplaced
    order = (y, x) if colour is None else (y, x, colour)
    return image.transpose(*order).data, (y, x, colour)


def _is_position(name: str, coord: xr.DataArray, spatial: tuple[str, str]) -> bool:
    """Whether a coord gives positions (interpolated to a cell's centre) or labels (sampled)."""
    kind = coord.dtype.kind
    return kind == "f" or (kind in "iu" and name in spatial)


def _at_cells(var: xr.Variable, dim: str, stride: int, position: bool) -> xr.Variable:
    """A coordinate variable at the centres of the stride-``stride`` cells along ``dim``.

    Odd strides (and non-position coords) take the sampled pixels ``i*s + o``. For an even
    stride a position is interpolated midway to the next pixel, or, past the image's last pixel,
    half a step beyond it (the step from the pixel before); a one-pixel axis has no step and
    keeps its pixel's value. Interpolated positions are float64: an integer coordinate's
    midpoints are not integers, and its differences would wrap around in its own dtype (a
    uint8 x = 0 .. 255, a descending unsigned y).
    """
    n = var.sizes[dim]
    here_index = np.arange(sample_offset(stride), n, stride)
    if stride % 2 or not position or n < 2:
        return var.isel({dim: here_index})
    var = var.astype(np.float64) if var.dtype.kind in "iub" else var
    here = var.isel({dim: here_index})
    inside = xr.Variable((dim,), here_index + 1 < n)
    after = var.isel({dim: np.minimum(here_index + 1, n - 1)})
    before = var.isel({dim: here_index - 1})  # never -1: n >= 2 and even strides have o >= 0
    midway = (here + after) / 2
    beyond = here + (here - before) / 2
    return midway.where(inside, beyond)


def sampled_coords(image: xr.DataArray, y: str, x: str, stride: int = 1) -> dict[str, Any]:
    """The image's coords at the cells of a stride grid, on dims renamed to ``y`` and ``x``.

    Each cell's coordinate is the one at its centre (the module docstring says how even strides
    are interpolated). Coords that involve any other dim (the colour dim's labels) are not
    carried: results have no such dim. Spatial dims without an index get the sampled pixels'
    indices ``i*s + o``, or, when the image has a rectilinear GeoTransform, the CRS coordinates
    of the cells' centres.
    """
    coords: dict[str, Any] = {}
    for name, coord in image.coords.items():
        if set(coord.dims) <= {y, x}:
            position = _is_position(str(name), coord, (y, x))
            var = coord.variable
            for dim in (y, x):
                if dim in var.dims:
                    var = _at_cells(var, dim, stride, position)
            var = var.transpose(*[d for d in (y, x) if d in var.dims])
            dims = tuple({y: "y", x: "x"}[d] for d in var.dims)
            # its own units and names kept, not a fill value (a coordinate has no missing
            # values: xarray's _FillValue beside it made the results' stores unreadable)
            kept = {k: v for k, v in coord.attrs.items() if k not in _COORD_ENCODING}
            renamed = xr.Variable(dims, var.data, _storable_attrs(kept))
            coords["y" if name == y else "x" if name == x else str(name)] = renamed
    geo = geotransform(image)
    for dim, n, axis in (("y", image.sizes[y], 1), ("x", image.sizes[x], 0)):
        if dim in coords:
            continue
        pixels = np.arange(sample_offset(stride), n, stride)
        if geo is not None and geo[2] == geo[4] == 0:  # rectilinear: the cells' centres in CRS
            origin, step = (geo[0], geo[1]) if axis == 0 else (geo[3], geo[5])
            coords[dim] = (dim, origin + (np.arange(pixels.size) * stride + stride / 2) * step)
        else:
            coords[dim] = (dim, pixels)
    return coords


def geotransform(image: xr.DataArray) -> tuple[float, ...] | None:
    """The image's GDAL GeoTransform ``(c, a, b, f, d, e)``, if a scalar coord carries one
    (rioxarray's ``spatial_ref``): ``X = c + col*a + row*b``, ``Y = f + col*d + row*e``, the
    pixels' edges at integer ``col`` and ``row``."""
    for coord in image.coords.values():
        text = coord.attrs.get("GeoTransform") if coord.ndim == 0 else None
        if text is not None:
            try:
                values = tuple(float(v) for v in str(text).split())
            except ValueError:
                return None
            return values if len(values) == 6 else None
    return None


def cell_geotransform(
    geotransform: tuple[float, ...], stride: int, x0: float | None, y0: float | None
) -> tuple[float, ...]:
    """The GDAL GeoTransform of the stride-``stride`` cells of an image's grid.

    Parameters
    ----------
    geotransform : tuple of 6 floats
        The image's ``(c, a, b, f, d, e)``: ``X = c + col*a + row*b``, ``Y = f + col*d + row*e``.
    stride : int
        The cell side in pixels.
    x0, y0 : float or None
        The result's first ``x`` and ``y`` coordinates (cell centres). For a rectilinear
        transform the origin is taken from them as rioxarray does (``x0 - a*s/2``), so that
        ``rio.transform()`` and the attr agree exactly; None (or a rotated transform) keeps the
        image's origin.

    Returns
    -------
    tuple of 6 floats
        ``a, b, d, e`` multiplied by ``stride``; the origin is the corner of the first cell.
    """
    c, a, b, f, d, e = (float(v) for v in geotransform)
    s = float(stride)
    a, b, d, e = a * s, b * s, d * s, e * s
    if b == 0 and d == 0:
        c = c if x0 is None else float(x0) - a / 2.0
        f = f if y0 is None else float(y0) - e / 2.0
    return c, a, b, f, d, e


def _coord_error(coord: xr.DataArray, values: np.ndarray) -> float:
    """How far a coordinate's values may be off their true positions by its dtype alone: a few
    units in the last place of its largest value for floats (a float32 UTM northing near 5e6
    is stored to 0.5 m), nothing for integers."""
    if coord.dtype.kind != "f" or values.size == 0:
        return 0.0
    return 2.0 * float(np.finfo(coord.dtype).eps) * float(np.max(np.abs(values)))


def _axis_step(image: xr.DataArray, dim: str, step: float, where: str) -> float:
    """The signed step of a rectilinear grid along ``dim`` (its GeoTransform's ``step``):
    that step where the dim's 1-D numeric coords agree with it or say nothing of it (none, or
    a single pixel), else the coords' own, ``(last - first) / (n - 1)`` as rioxarray's
    ``rio.transform(recalc=True)`` takes it (a south-up ``sortby("y")`` flips its sign, a
    ``isel(x=slice(None, None, 2))`` doubles it). Coords that are not evenly spaced are refused:
    no transform places such pixels."""
    coord = image.coords[dim] if dim in image.coords else None  # .get: a dim's indices
    if coord is None or coord.dims != (dim,) or coord.dtype.kind not in "iuf" or coord.size < 2:
        return step
    values = np.asarray(coord.values, dtype=np.float64)
    own = (values[-1] - values[0]) / (values.size - 1)
    slack = _coord_error(coord, values)
    gaps = np.diff(values)
    if not (
        np.isfinite(own) and own != 0 and np.all(np.abs(gaps - own) <= 1e-6 * abs(own) + slack)
    ):
        raise ParameterError(
            f"the image's {dim} coords are not evenly spaced, yet it carries a GeoTransform "
            f"({where}) of a regular grid: no transform places its results; interpolate it onto "
            f"evenly spaced {dim} coords first (image.interp, or rioxarray's rio.reproject)"
        )
    return step if abs(own - step) <= 1e-6 * abs(step) + slack / (values.size - 1) else own


def _centre_coords(image: xr.DataArray, y: str, x: str) -> tuple[xr.DataArray, xr.DataArray] | None:
    """The 2-D ``xc`` and ``yc`` coords rioxarray gives a rotated grid (each pixel's centre in
    the CRS), where the image has both on its spatial dims."""
    centres = [image.coords[n] if n in image.coords else None for n in ("xc", "yc")]
    if all(c is not None and set(c.dims) == {y, x} and c.dtype.kind in "iuf" for c in centres):
        return centres[0].transpose(y, x), centres[1].transpose(y, x)
    return None


def _rotated_origin(
    image: xr.DataArray, values: tuple[float, ...], y: str, x: str
) -> tuple[float, float]:
    """The corner ``(c, f)`` of a rotated grid: the GeoTransform's, or, where the image has
    rioxarray's ``xc``/``yc`` centres (:func:`_centre_coords`) on the transform's grid but
    elsewhere (a crop with ``isel`` keeps the scene's transform), theirs. Centres that the
    transform's axes do not join (rows or columns reordered: a flip with ``isel``, a
    ``sortby``) are refused: no transform places those pixels."""
    c, a, b, f, d, e = values
    centres = _centre_coords(image, y, x)
    if centres is None:
        return c, f
    xc, yc = centres
    ny, nx = xc.shape
    corners = [(0, 0), (0, nx - 1), (ny - 1, 0), (ny - 1, nx - 1)]
    got = [(float(xc[i, j].values), float(yc[i, j].values)) for i, j in corners]  # 8 values
    x0, y0 = got[0]
    slack = 1e-3 * min(math.hypot(a, d), math.hypot(b, e)) + max(
        _coord_error(xc, np.asarray(got)[:, 0]), _coord_error(yc, np.asarray(got)[:, 1])
    )
    for (i, j), (xv, yv) in zip(corners, got, strict=True):
        if math.hypot(xv - (x0 + j * a + i * b), yv - (y0 + j * d + i * e)) > slack:
            raise ParameterError(
                "the image's xc and yc coords do not follow its rotated GeoTransform (its rows "
                "or columns were reordered, e.g. by isel(y=slice(None, None, -1))): keep a "
                "rotated scene's pixels in the file's order, or warp it north-up first "
                "(gdalwarp, rioxarray's rio.reproject)"
            )
    corner = (x0 - (a + b) / 2.0, y0 - (d + e) / 2.0)
    if math.hypot(corner[0] - c, corner[1] - f) <= slack:
        return c, f  # the file's own, to the last digit
    return corner


def aligned_geotransform(
    image: xr.DataArray, values: tuple[float, ...], y: str, x: str, where: str = "GeoTransform"
) -> tuple[float, ...]:
    """An image's GeoTransform ``(c, a, b, f, d, e)`` made to place its pixels where its
    coordinates say, as rioxarray's ``rio.transform(recalc=True)`` does.

    xarray keeps a scalar coord's attrs through ``isel``, ``sortby`` and a round trip through
    Zarr, so the GeoTransform of a crop, a flip or a subsample is the whole scene's, stale. For
    a rectilinear grid each axis's step (sign and size) is taken from its coords where they
    disagree with it (:func:`_axis_step`: a south-up ``sortby("y")`` has ``e > 0``), and the
    origin is the first pixel's corner, ``x[0] - a/2``; a dim without coords keeps the
    transform's. A rotated grid keeps its axes; its origin follows rioxarray's ``xc``/``yc``
    centres where it has them (:func:`_rotated_origin`). A north-up image whose coords agree
    with its transform gets it back exactly.

    Parameters
    ----------
    image : xarray.DataArray
        The image.
    values : tuple of 6 floats
        Its GeoTransform, GDAL order: ``X = c + col*a + row*b``, ``Y = f + col*d + row*e``.
    y, x : str
        Its spatial dims.
    where : str
        Where the transform was found, for the refusal.

    Returns
    -------
    tuple of 6 floats
        The transform of the image's pixels as its coordinates have them.

    Raises
    ------
    ParameterError
        For coords that contradict the transform beyond repair: spatial coords not evenly
        spaced, or a rotated grid's ``xc``/``yc`` in another order than the transform's.
    """
    c, a, b, f, d, e = (float(v) for v in values)
    if b != 0 or d != 0:
        c, f = _rotated_origin(image, (c, a, b, f, d, e), y, x)
        return c, a, b, f, d, e
    a, e = _axis_step(image, x, a, where), _axis_step(image, y, e, where)
    first_x, first_y = _first_value(image, x), _first_value(image, y)
    c = c if first_x is None else first_x - a / 2.0
    f = f if first_y is None else first_y - e / 2.0
    return c, a, b, f, d, e


def _first_value(image: xr.DataArray, dim: str) -> float | None:
    """The first value of a dim's own 1-D numeric coordinate, if it has one."""
    coord = image.coords[dim] if dim in image.coords else None  # .get: a dim's indices
    if coord is None or coord.dims != (dim,) or coord.dtype.kind not in "iuf" or coord.size == 0:
        return None
    return float(coord.values[0])


def _image_transforms(image: xr.DataArray) -> list[tuple[str, tuple[float, ...]]]:
    """Every GeoTransform an image carries, with where: each scalar coord's ``GeoTransform``
    attr (rioxarray's ``spatial_ref``), and a rasterio-order ``transform`` attr (as xarray's
    rasterio reader once wrote it), in GDAL order."""
    found = []
    for name, coord in image.coords.items():
        text = coord.attrs.get("GeoTransform") if coord.ndim == 0 else None
        try:
            values = tuple(float(v) for v in str(text).split()) if text is not None else ()
        except ValueError:
            values = ()
        if len(values) == 6:
            found.append((f"{name}'s GeoTransform attr", values))
    transform = image.attrs.get("transform")
    if isinstance(transform, list | tuple) and len(transform) >= 6:
        try:
            a, b, c, d, e, f = (float(v) for v in transform[:6])
        except (TypeError, ValueError):
            return found
        found.append(("its transform attr", (c, a, b, f, d, e)))
    return found


def check_georeferencing(image: xr.DataArray, y: str, x: str) -> None:
    """Refuse, before any pixel is read, an image whose coordinates contradict its
    GeoTransform beyond repair (:func:`aligned_geotransform`): its results could be placed on
    the ground by neither."""
    for where, values in _image_transforms(image):
        aligned_geotransform(image, values, y, x, where)


def grid_shear(geotransform: tuple[float, ...]) -> float:
    """How many degrees a GeoTransform's rows' axis ``(b, e)`` is off perpendicular to its
    columns' axis ``(a, d)``: 0 for a north-up or a rotated grid, 26.6 for ``(c, 10, 5, f,
    0, -10)``; the pixels of a sheared grid are parallelograms."""
    _, a, b, _, d, e = (float(v) for v in geotransform)
    lengths = math.hypot(a, d) * math.hypot(b, e)
    if lengths == 0:
        return 0.0
    return math.degrees(math.asin(min(1.0, abs(a * b + d * e) / lengths)))


def cell_gcps(gcps: str, stride: int) -> str:
    """The ground control points of an image (rioxarray's ``gcps`` attr: a GeoJSON
    FeatureCollection of points whose ``row`` and ``col`` properties are GDAL's line and
    pixel, the pixels' edges at integers) on the stride-``stride`` cells of its grid.

    The cells are anchored at the image's corner, as :func:`cell_geotransform` anchors them
    (cell ``i`` spans the pixels ``i*s .. i*s + s - 1``): a point at pixel ``(col, row)``
    lies at ``(col / s, row / s)`` of the cells. Text that is not such a collection is
    refused: copied unchanged it would place the result ``s`` times too small."""
    try:
        collection = json.loads(gcps)
        for feature in collection["features"]:
            properties = feature["properties"]
            properties["row"] = float(properties["row"]) / stride
            properties["col"] = float(properties["col"]) / stride
    except (TypeError, ValueError, KeyError) as exc:
        raise ParameterError(
            f"cannot read the image's ground control points (its gcps attr, {exc!r}): a "
            "strided result needs them on its cells; drop the attr or use stride=1"
        ) from None
    return json.dumps(collection)


def _first(coords: Mapping[str, Any], dim: str) -> float | None:
    """The first value of a 1-D numeric coordinate of the result, if there is one."""
    coord = coords.get(dim)
    values = np.asarray(coord.data if isinstance(coord, xr.Variable) else coord[1])
    if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iuf":
        return None
    return float(values[0])


def _georeference(
    coords: dict[str, Any],
    attrs: dict[str, Any],
    stride: int,
    image: xr.DataArray,
    dims: tuple[str, str],
) -> None:
    """Rewrite, in place, each GeoTransform and each set of ground control points carried over
    so that they describe the result's cells: the ``image``'s (spatial ``dims``) transform as
    its coordinates have it (:func:`aligned_geotransform`), on the cells."""
    x0, y0 = _first(coords, "x"), _first(coords, "y")
    y, x = dims
    for name, coord in list(coords.items()):
        if not isinstance(coord, xr.Variable) or coord.ndim != 0:
            continue
        own = dict(coord.attrs)
        if stride != 1 and "gcps" in own:
            own["gcps"] = cell_gcps(own["gcps"], stride)
        try:
            values = tuple(float(v) for v in str(own.get("GeoTransform")).split())
        except ValueError:
            values = ()
        if len(values) == 6:
            values = aligned_geotransform(image, values, y, x, f"{name}'s GeoTransform attr")
            own["GeoTransform"] = _gdal(cell_geotransform(values, stride, x0, y0))
        if own != coord.attrs:
            coords[name] = xr.Variable((), coord.data, own)
    transform = attrs.get("transform")  # rasterio order (a, b, c, d, e, f), as xarray once wrote
    if isinstance(transform, list | tuple) and len(transform) >= 6:
        a, b, c, d, e, f = (float(v) for v in transform[:6])
        values = aligned_geotransform(image, (c, a, b, f, d, e), y, x, "its transform attr")
        c, a, b, f, d, e = cell_geotransform(values, stride, x0, y0)
        attrs["transform"] = [a, b, c, d, e, f, *transform[6:]]


def _gdal(values: tuple[float, ...]) -> str:
    """A GeoTransform as rioxarray writes it: the six numbers' reprs, space-separated."""
    return " ".join(str(float(v)) for v in values)


def regular_step(values: Any) -> float | None:
    """The spacing (absolute) of 1-D numeric coordinate values, None where they are fewer
    than two, not numbers, or not evenly spaced (to 1e-6 of the step)."""
    values = np.asarray(values)
    if values.ndim != 1 or values.size < 2 or values.dtype.kind not in "uif":
        return None
    gaps = np.diff(values.astype(np.float64))
    if not np.allclose(gaps, gaps[0], rtol=1e-6, atol=0) or gaps[0] == 0:
        return None
    return abs(float(gaps[0]))


def pixel_steps(
    image: xr.DataArray, dims: tuple[str, str] = ("y", "x")
) -> tuple[float, float] | None:
    """The (y, x) steps of an image's pixel grid in its coordinates' units: the spacing of
    regular numeric coords of its ``dims`` (:func:`regular_step`), None where either is
    missing, shorter than two pixels or irregular."""
    steps = [regular_step(image.coords[d].values) if d in image.coords else None
             for d in dims]  # fmt: skip
    return None if None in steps else (steps[0], steps[1])


def crs_wkt(image: xr.DataArray) -> str | None:
    """The WKT of an image's CRS where rioxarray keeps it: the ``crs_wkt`` (or ``spatial_ref``)
    attr of its grid-mapping coord (named by a ``grid_mapping`` attr or encoding, else
    ``spatial_ref``); None when it has none."""
    name = image.attrs.get("grid_mapping") or image.encoding.get("grid_mapping") or "spatial_ref"
    coord = image.coords.get(name)
    if coord is None:
        return None
    text = coord.attrs.get("crs_wkt") or coord.attrs.get("spatial_ref")
    return str(text) if text else None


def gcp_count(image: xr.DataArray) -> int:
    """How many ground control points georeference an image (rioxarray's ``gcps`` attr of its
    grid-mapping coord, as :func:`crs_wkt` finds it: a scene with GCPs instead of a
    GeoTransform); 0 for none, and for an attr that is not a GeoJSON collection of them."""
    name = image.attrs.get("grid_mapping") or image.encoding.get("grid_mapping") or "spatial_ref"
    coord = image.coords.get(name)
    text = coord.attrs.get("gcps") if coord is not None else None
    try:
        return len(json.loads(text)["features"]) if text else 0
    except (TypeError, ValueError, KeyError):
        return 0


def parse_crs(wkt: str) -> Any | None:
    """The :class:`pyproj.CRS` of a WKT (or any text pyproj reads), None when pyproj (installed
    with rioxarray, the ``geo`` extra) is missing or cannot read it."""
    try:
        import pyproj  # optional: the geo extra
    except ImportError:
        return None
    try:
        return pyproj.CRS.from_user_input(wkt)
    except pyproj.exceptions.CRSError:
        return None


def ground_pixel_size(image: xr.DataArray) -> tuple[float, float] | None:
    """The (y, x) size in metres on the ground of the pixel at the centre of a georeferenced
    image: the geodesic lengths, on its CRS's ellipsoid, of one step of its ``y`` and ``x``
    coords from that pixel — or, for a grid whose coords do not give them (a rotated or sheared
    GeoTransform, whose ``x`` and ``y`` are pixel indices; dims without coords), of one step
    along its GeoTransform's row and column vectors ``(b, e)`` and ``(a, d)``.

    One rule for every CRS: a UTM scene's 10 m pixels are 10 m (to 0.04 % at the zone's edge),
    rotated 30° or not, US-survey-foot and Web Mercator grids give their true ground sizes (a
    Web Mercator "10 m" pixel at 60° N is 5 m), a geographic grid's 0.0001° pixels at 45° N
    are 11.1 × 7.9 m. None when the image has no CRS (:func:`crs_wkt`; a grid in degrees that
    CF names so is measured on WGS84, :func:`_degrees_on_the_ground`), neither regular coords
    on its spatial dims (:func:`pixel_steps`) nor a GeoTransform, or pyproj (installed with
    rioxarray, the ``geo`` extra) is missing (:func:`parse_crs`).
    """
    try:
        dims = image_dims(image)[:2]
    except DimensionError:
        dims = ("y", "x")
    geo = geotransform(image)
    rotated = geo is not None and (geo[2] != 0 or geo[4] != 0)
    wkt, steps = crs_wkt(image), None if rotated else pixel_steps(image, dims)
    if wkt is None:
        return None if steps is None else _degrees_on_the_ground(image, dims, steps)
    if steps is not None:  # the coords' steps from the centre pixel: north and east
        ys, xs = (image.coords[d].values for d in dims)
        y, x = float(ys[ys.size // 2]), float(xs[xs.size // 2])
        ends = ([x, x, x + steps[1]], [y, y + steps[0], y])
    elif geo is not None and all(d in image.sizes for d in dims):  # along the rows, columns
        c, a, b, f, d, e = geo
        row, col = image.sizes[dims[0]] // 2 + 0.5, image.sizes[dims[1]] // 2 + 0.5
        x, y = c + col * a + row * b, f + col * d + row * e
        ends = ([x, x + b, x + a], [y, y + e, y + d])
    else:
        return None
    crs = parse_crs(wkt)
    if crs is None or crs.geodetic_crs is None or crs.get_geod() is None:
        return None
    import pyproj  # there: parse_crs read the CRS with it

    try:
        to_degrees = pyproj.Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    except pyproj.exceptions.CRSError:
        return None
    geod = crs.get_geod()
    lon, lat = to_degrees.transform(*ends)
    _, _, along_y = geod.inv(lon[0], lat[0], lon[1], lat[1])
    _, _, along_x = geod.inv(lon[0], lat[0], lon[2], lat[2])
    if not (np.isfinite(along_y) and np.isfinite(along_x) and along_y > 0 and along_x > 0):
        return None
    return float(along_y), float(along_x)


#: CF's names and units of latitude and longitude axes: a grid in degrees without a CRS.
_LATITUDE = ({"lat", "latitude"}, {"degrees_north", "degree_north", "degrees_n", "degree_n"})
_LONGITUDE = ({"lon", "long", "longitude"}, {"degrees_east", "degree_east", "degrees_e",
                                             "degree_e"})  # fmt: skip
#: WGS84's mean radius, in metres, for a grid in degrees when pyproj is missing.
_EARTH_RADIUS = 6_371_008.8


def _degrees_on_the_ground(
    image: xr.DataArray, dims: tuple[str, str], steps: tuple[float, float]
) -> tuple[float, float] | None:
    """The (y, x) ground size in metres at the centre of a grid (spatial ``dims``, coordinate
    ``steps``) in degrees that has no CRS but says, as CF does, that it is one: spatial dims
    named ``lat``/``latitude`` and ``lon``/``longitude``, or coords in
    ``degrees_north``/``degrees_east`` (a NetCDF climate or ocean grid). On WGS84 (pyproj's
    geodesic lengths; a sphere without pyproj). None for other images."""
    y, x = dims
    if not (_says(image, y, *_LATITUDE) and _says(image, x, *_LONGITUDE)):
        return None
    ys, xs = np.asarray(image.coords[y].values, float), np.asarray(image.coords[x].values, float)
    lat, lon = float(ys[ys.size // 2]), float(xs[xs.size // 2])
    if not -90 < lat < 90:
        return None
    try:
        import pyproj  # optional: the geo extra
    except ImportError:
        along_y = _EARTH_RADIUS * math.radians(abs(steps[0]))
        along_x = _EARTH_RADIUS * math.cos(math.radians(lat)) * math.radians(abs(steps[1]))
        return along_y, along_x
    geod = pyproj.Geod(ellps="WGS84")
    along_y = geod.inv(lon, lat, lon, lat + steps[0])[2]
    along_x = geod.inv(lon, lat, lon + steps[1], lat)[2]
    return float(along_y), float(along_x)


def channel_names(image: Any) -> tuple[str, ...] | None:
    """The names of a DataArray's channels: the coordinate of its colour dim (``c``, ``band``,
    ...: :data:`COLOR_DIMS`), where it is strings — an OME-TIFF's or OME-Zarr's channel names
    as :func:`xfskde.open_image` gives them, a scene's bands stacked by name
    (``ds.to_dataarray("band")``: ``B02``, ``B03``, ...); else None."""
    if not isinstance(image, xr.DataArray):
        return None
    try:
        colour = image_dims(image)[2]
    except DimensionError:  # not an image's layout: no channels to name
        return None
    if colour is None or colour not in image.coords:
        return None
    names = np.asarray(image.coords[colour].values)
    return tuple(str(n) for n in names) if names.dtype.kind in "UO" else None


def stored_integer_dtype(image: xr.DataArray) -> np.dtype | None:
    """The integer dtype a float image's values were stored in, when they are still those
    integers: ``attrs["source_dtype"]`` (an RGBA image whose alpha :func:`xfskde.open_image`
    turned into NaN), or the ``encoding["dtype"]`` of an image xarray or rioxarray decoded to
    floats to hold NaN (``masked=True``) without a ``scale_factor`` or ``add_offset``. None for
    any other image (an integer one included: its dtype says it)."""
    if image.dtype.kind != "f":
        return None
    named = image.attrs.get("source_dtype")
    if named is None and not {"scale_factor", "add_offset"} & set(image.encoding):
        named = image.encoding.get("dtype")
    try:
        dtype = np.dtype(named) if named is not None else None
    except TypeError:
        return None
    return dtype if dtype is not None and dtype.kind in "ui" else None


def value_scale(image: Any) -> tuple[float, str | None]:
    """The scale that decodes an image's stored values, and the unit of the decoded values.

    The ``scale_factor`` attr (CF; rioxarray's for a GeoTIFF band's GDAL scale, the same for
    every band), or rioxarray's ``scales`` (one per band) where they are all one value (the
    bands picked from a file whose bands differ: ``open_image(channels=...)`` keeps theirs);
    1 when there is none, when the bands' differ, or when it is in the ``encoding`` only:
    xarray or rioxarray (``mask_and_scale=True``) applied it already. The unit is the
    ``units`` attr (a GeoTIFF band's unit type; rioxarray's tuple of one per band of a
    multi-band file, where they are all one unit), None when absent or when the bands'
    differ. ``add_offset`` moves
    values, not their differences: gradients ignore it.
    """
    attrs = getattr(image, "attrs", {})
    units = attrs.get("units")
    if isinstance(units, tuple | list) and len(set(units)) == 1:  # rioxarray's, one per band
        units = units[0]
    units = units if isinstance(units, str) and units.strip() else None
    scales = attrs.get("scales")
    if "scale_factor" not in attrs and isinstance(scales, tuple | list) and len(set(scales)) == 1:
        attrs = {"scale_factor": scales[0]}
    try:
        scale = float(attrs.get("scale_factor", 1.0))
    except (TypeError, ValueError):  # not a number: not a single scale
        return 1.0, units
    return (abs(scale) if np.isfinite(scale) and scale != 0 else 1.0), units


def band_scales(image: Any) -> tuple[float, ...] | None:
    """The scales that decode each band of an image whose bands' differ (rioxarray's
    ``scales``, one per band, as a GeoTIFF stacking products of different units holds them:
    Landsat's reflectances beside its surface temperature), in the order of its colour dim;
    None where there is one scale for all (:func:`value_scale`) or none, where a
    ``scale_factor`` applies to all, or where the scales are not one finite non-zero number
    per band."""
    attrs = getattr(image, "attrs", {})
    scales = attrs.get("scales")
    if "scale_factor" in attrs or not isinstance(scales, tuple | list) or len(set(scales)) < 2:
        return None
    colour = image_dims(image)[2] if isinstance(image, xr.DataArray) else None
    if colour is None or image.sizes[colour] != len(scales):
        return None
    try:
        values = tuple(float(s) for s in scales)
    except (TypeError, ValueError):
        return None
    return values if all(np.isfinite(v) and v != 0 for v in values) else None


#: Nodata values one per band (:func:`image_nodata`, where a raster's bands differ): a number,
#: NaN (a float band: its NaN samples), or None (a band without one: all its samples data).
BandNodata = tuple[int | float | None, ...]

#: What :func:`image_nodata` returns: one value for every band, values per band, or none.
NodataValue = int | float | BandNodata | None


def image_nodata(image: xr.DataArray) -> tuple[NodataValue, str]:
    """The value that marks an image's missing pixels, and where it was read.

    Read from the metadata rioxarray and CF use, in rioxarray's order: a ``_FillValue`` in the
    *encoding*, then the attrs :data:`NODATA_ATTRS`, then ``nodatavals`` (one per band);
    the first value found wins, except as follows for a float image.

    * An encoded fill that a reader decoded — NaN, or one in stored units (the encoding holds a
      ``scale_factor``, ``add_offset`` or an integer ``dtype``: xarray or rioxarray turned the
      stored integers into floats) — is NaN in the image now: it counts as NaN.
    * Any other encoded fill counts as its number: ``rio.write_nodata(v, encoded=True)`` puts
      it there while the data still hold ``v``; where a reader decoded the data there are no
      ``v`` left, so masking it costs nothing.
    * NaN gives way to a number that other metadata name: xarray gives a float variable of a
      netCDF file an encoded NaN fill while its ``nodata`` attr (say -9999) still marks
      pixels in the data. The number is returned; the NaN pixels are missing all the same
      (:func:`xfskde.local_fskde` omits a masked image's NaN pixels with its nodata, unless
      the caller asks ``nan_policy="raise"``), so both are masked.

    Bands of nodata values of their own — a ``nodatavals`` that differ, as
    :func:`xfskde.io.open_image` records a VRT stack of two products' bands (GDAL's nodata of
    each band) — are returned as a :data:`BandNodata`, one per channel (NaN in an integer
    image's, as rioxarray wrote a band without one, is None: that band has none). A single
    value elsewhere in the metadata that is not the first band's (what rioxarray and GDAL
    report as the raster's) contradicts them, and is refused.

    Returns
    -------
    (value, source)
        ``value`` is None when the metadata name no nodata; an integer for integer images when
        it is integral; NaN for a float image whose only fill is NaN (decoded); a tuple for
        bands of values of their own. ``source`` says where it came from, e.g.
        ``"attrs['_FillValue']"``.

    Raises
    ------
    ParameterError
        When the metadata hold a value that is not a number, one that an integer image's
        values can never equal (:func:`nodata_value`), values per band that are not one per
        channel, or a single value that contradicts them.
    """
    floats = image.dtype.kind in "fc"
    candidates: list[tuple[Any, str]] = []
    encoded = image.encoding.get("_FillValue")
    if encoded is not None:
        stored = image.encoding.get("dtype")
        try:
            integers = stored is not None and np.dtype(stored).kind in "iub"
        except TypeError:
            integers = False
        if floats and (integers or {"scale_factor", "add_offset"} & set(image.encoding)):
            candidates.append((float("nan"), "encoding['_FillValue'] (already decoded to NaN)"))
        else:
            candidates.append((encoded, "encoding['_FillValue']"))
    candidates += [(image.attrs.get(k), f"attrs[{k!r}]") for k in NODATA_ATTRS]
    bands = _band_nodata(image)
    vals = image.attrs.get("nodatavals")
    if bands is None and isinstance(vals, list | tuple | np.ndarray) and len(vals):
        candidates.append((vals[0], "attrs['nodatavals'][0]"))
    found = [(nodata_value(v, image.dtype, where, must_match=True), where)
             for v, where in candidates if v is not None]  # fmt: skip
    numbers = [(v, where) for v, where in found if not (floats and math.isnan(v))]
    if bands is not None:
        return _bands_over(bands, numbers, image.dtype)
    if floats and numbers and len(numbers) < len(found):
        value, where = numbers[0]
        nan = next(w for v, w in found if math.isnan(v))
        return value, f"{where}, and NaN ({nan})"
    return found[0] if found else (None, "none")


#: Where :func:`image_nodata` says values per band come from.
BAND_NODATA_SOURCE = "attrs['nodatavals'] (each band its own)"


def _band_nodata(image: xr.DataArray) -> BandNodata | None:
    """The image's ``nodatavals`` as values per band (:data:`BandNodata`) where they differ,
    each checked by :func:`nodata_value`; None where they are one value (or there are none).

    Raises
    ------
    ParameterError
        When they differ but are not one per channel of the image.
    """
    vals = image.attrs.get("nodatavals")
    if not isinstance(vals, list | tuple | np.ndarray) or len(vals) < 2:
        return None
    integers = image.dtype.kind in "iub"
    values: list[int | float | None] = []
    for i, v in enumerate(vals):
        none = v is None or (integers and isinstance(v, float | np.floating) and math.isnan(v))
        values.append(None if none else nodata_value(v, image.dtype,
                                                     f"attrs['nodatavals'][{i}]",
                                                     must_match=True))  # fmt: skip
    keys = {"none" if v is None else ("nan" if math.isnan(v) else v) for v in values}
    if len(keys) == 1:
        return None
    colour = [str(d) for d in image.dims if str(d).lower() in COLOR_DIMS]
    channels = image.sizes[colour[0]] if len(colour) == 1 else 1
    if channels != len(values):
        raise ParameterError(
            f"the image's bands have nodata values of their own (attrs['nodatavals'] = "
            f"{band_nodata_text(tuple(values))}) but it has {channels} channel(s), not "
            f"{len(values)}: pass nodata= the one value that marks its missing pixels, or "
            "open it with open_image(..., channels=...) to pick bands (--channels), which "
            "keeps their values"
        )
    return tuple(values)


def _bands_over(
    bands: BandNodata, numbers: list[tuple[Any, str]], dtype: np.dtype
) -> tuple[BandNodata, str]:
    """Values per band, and where they came from, if no single value in the metadata says
    otherwise: the first band's (GDAL's and rioxarray's nodata of a raster are its first
    band's) restates them; another contradicts them, and is refused."""
    first = bands[0]
    for value, where in numbers:
        if first is None or np.asarray(value, dtype) != np.asarray(first, dtype):
            raise ParameterError(
                f"the image's nodata metadata disagree: {where} = {value!r}, but "
                f"attrs['nodatavals'] = {band_nodata_text(bands)} (each band its own): pass "
                "nodata= the one value that marks its missing pixels, or drop the one that "
                "is wrong"
            )
    return bands, BAND_NODATA_SOURCE


def band_nodata_text(values: BandNodata) -> str:
    """Values per band as people read them: ``"(0, 65535)"``, ``"none"`` for a band without."""
    text = ["none" if v is None else f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return f"({', '.join(text)})"


def nodata_record(value: NodataValue) -> Any:
    """A nodata value as results record it (``input_nodata``: no None, no NaN, which Zarr and
    netCDF do not store): ``"none"``, ``"nan"``, the number, or a list of those per band."""
    if isinstance(value, tuple):
        return [nodata_record(v) for v in value]
    if value is None:
        return "none"
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def recorded_nodata(record: Any) -> NodataValue:
    """The nodata value a result recorded (:func:`nodata_record`), read back."""
    if isinstance(record, list | tuple | np.ndarray):
        return tuple(recorded_nodata(r) for r in record)  # type: ignore[misc]
    if isinstance(record, str):
        return None if record == "none" else math.nan
    return record.item() if isinstance(record, np.generic) else record


def band_missing(data: Any, values: BandNodata, axis: int = -1) -> Any:
    """Whether each sample of ``data`` (NumPy or Dask, its bands along ``axis``) is its own
    band's nodata value, compared in the image's own dtype as a single value is; a band whose
    value is None or NaN has none (its NaN samples are NaN already)."""
    dtype = np.dtype(data.dtype)
    has = np.array([v is not None and not (isinstance(v, float) and math.isnan(v))
                    for v in values])  # fmt: skip
    marks = np.array([v if h else 0 for v, h in zip(values, has, strict=True)]).astype(dtype)
    shape = [1] * data.ndim
    shape[axis] = len(values)
    return (data == marks.reshape(shape)) & has.reshape(shape)


def pixel_nodata(data: Any, values: BandNodata, axis: int = -1) -> tuple[Any, int | float]:
    """``data`` (NumPy or Dask, its bands along ``axis``) with one nodata value for its pixels
    in place of values per band: a pixel where *any* band holds its own value (its colour
    incomplete) holds the returned value in every band — NaN in a float image, else the first
    band's value that is a number. A pixel is then missing where every band equals that value
    exactly where any band held its own before (the first band with a value holds it there),
    as segmentation and masks read a single value; the dtype is kept (the integers' range, by
    which segmentation scales them, too)."""
    missing = band_missing(data, values, axis).any(axis=axis, keepdims=True)
    if np.dtype(data.dtype).kind == "f":
        marker: int | float = math.nan
    else:
        marker = next(v for v in values if v is not None)
    return np.where(missing, np.asarray(marker, data.dtype), data), marker


def nodata_value(
    value: Any, dtype: np.typing.DTypeLike, source: str = "nodata", *, must_match: bool = False
) -> int | float:
    """A nodata value as a Python number: an int for integer images when it is integral.

    With ``must_match``, a value that an integer image's pixels can never equal (``1.5``, or
    ``-9999`` for int8) is refused: it would mask nothing while the pixels it was meant to mark
    are used. (Without it, as a file's reader needs, the value is returned as it is.)
    """
    array = np.asarray(value)
    if array.ndim == 1 and array.size >= 1:  # CF allows a vector of missing values: the first
        array = array[0]
    try:
        number = float(array)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"the image's nodata value ({source} = {value!r}) is not a number; pass nodata= a "
            "number, or nodata=None to use every pixel"
        ) from exc
    kind = np.dtype(dtype).kind
    if kind not in "iub":
        return number
    low, high = (0, 1) if kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    if must_match and not (number.is_integer() and low <= number <= high):
        metadata = source.startswith(("attrs[", "encoding["))
        drop = f" (or drop it: del image.{source[: source.index(']') + 1]})" if metadata else ""
        raise ParameterError(
            f"the image's nodata value ({source} = {value!r}) can never equal a value of its "
            f"{np.dtype(dtype)} pixels (integers {low} .. {high}), so it would mask nothing: "
            f"pass nodata= the value that marks its missing pixels, or nodata=None to use "
            f"every pixel{drop}"
        )
    return int(number) if number.is_integer() else number


def label_result(
    values: Any,
    image: xr.DataArray,
    *,
    stride: int = 1,
    extra_dims: Mapping[str, Any] | None = None,
    name: str,
    attrs: Mapping[str, Any],
) -> xr.DataArray:
    """Wrap a result computed from ``image`` as a labelled ``(y, x, *extra_dims)`` DataArray.

    Parameters
    ----------
    values : numpy.ndarray or dask.array.Array
        The result on the image's stride grid, spatial axes first.
    image : xarray.DataArray
        The image it was computed from (its dims are read by :func:`image_dims`).
    stride : int
        The grid the result samples (1: every pixel).
    extra_dims : mapping, optional
        The result's trailing dims and their coordinate (a coordinate value of None gives the
        dim no coordinate), e.g. ``{"k": ("k", np.arange(9), {...})}``.
    name : str
        The result's name.
    attrs : mapping
        The result's own attrs, laid over the input's (those :func:`carried_attr` keeps).

    Returns
    -------
    xarray.DataArray
        Backed by ``values`` as they are: NumPy in, NumPy out; Dask in, Dask out.
    """
    y, x, _ = image_dims(image)
    coords = sampled_coords(image, y, x, stride)
    extra_dims = dict(extra_dims or {})
    for dim, coord in extra_dims.items():
        if coord is not None:
            coords[dim] = coord
    merged = _storable_attrs({k: v for k, v in image.attrs.items() if carried_attr(k)})
    merged.update(attrs)
    merged["xfskde_version"] = __version__
    merged.setdefault("source", str(image.name) if image.name is not None else "image")
    merged["source_dims"] = f"{y} {x}"
    _georeference(coords, merged, stride, image, (y, x))
    result = xr.DataArray(
        values, dims=("y", "x", *extra_dims), coords=coords, name=name, attrs=merged
    )
    grid_mapping = image.encoding.get("grid_mapping")
    if grid_mapping in result.coords:  # rioxarray's name for the CRS coord
        result.encoding["grid_mapping"] = grid_mapping
    return result
