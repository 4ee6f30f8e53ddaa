"""Labelled-array conventions: reading an image's dims and labelling every result alike.

This module is low in the package: it imports xarray and nothing of xfskde above
:mod:`xfskde.exceptions` and :mod:`xfskde._grid`. Every face that returns a DataArray (the
coefficient field, density and orientation maps, segmentation labels and abundances) builds it
here, so each result carries the same labels:

* **Dims.** Images are read by dimension *name*, as rioxarray does: the spatial dims are ``y``
  and ``x`` when present, else the last two; a colour dim is one of :data:`COLOR_DIMS`, at
  either end. Anything else is refused (:class:`~xfskde.exceptions.DimensionError`) with the
  ``.transpose(...)`` or ``.rename(...)`` call that fixes it. Results use ``y`` and ``x``
  whatever the input's names were (recorded in the ``source_dims`` attr).
* **Coordinates.** A result on a stride-``s`` grid (:mod:`xfskde._grid`) carries the image's
  coordinates at the sampled pixels, ``image.isel(y=slice(o, None, s), x=slice(o, None, s))``:
  1-D and 2-D coords on the spatial dims and scalar coords (a ``spatial_ref``, say) with their
  attrs. Spatial dims without an index get the pixel indices of the samples.
* **Attributes.** The input's attrs are kept, less those that describe how the *input's values*
  are encoded (:data:`VALUE_ATTRS`: a fill value or scale factor of uint16 reflectances means
  nothing for complex coefficients); the result's own attrs (parameters, ``long_name``,
  ``units``) are laid over them. Attrs are strings, integers, floats and lists of those only, so
  netCDF and Zarr store them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ._grid import sample_offset
from ._version import __version__
from .exceptions import DimensionError

__all__ = [
    "COLOR_DIMS",
    "VALUE_ATTRS",
    "image_dims",
    "image_layout",
    "label_result",
    "sampled_coords",
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
)


def image_dims(image: xr.DataArray) -> tuple[str, str, str | None]:
    """Return ``(y_dim, x_dim, colour_dim or None)`` of an image DataArray.

    The spatial dims are ``y`` and ``x`` when both are present, else the last two (the first two
    when a colour dim comes last); a colour dim is one of :data:`COLOR_DIMS` at either end.

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
        y, x = ("y", "x") if {"y", "x"} <= set(dims) else dims
        return y, x, None
    if image.ndim == 3 and len(colour) == 1:
        c = colour[0]
        spatial = [d for d in dims if d != c]
        y, x = ("y", "x") if {"y", "x"} <= set(spatial) else spatial
        if dims.index(c) == 1:
            raise DimensionError(
                f"the colour dim {c!r} sits between the spatial dims {spatial}; call "
                f".transpose({y!r}, {x!r}, {c!r}) first"
            )
        return y, x, c
    raise DimensionError(
        f"cannot tell the spatial dims of an image with dims {dims}: expected (y, x), or (y, x) "
        f"with a colour dim named one of {COLOR_DIMS} at either end. Select a 2-D or 3-D image "
        f"(e.g. .isel({dims[0]}=0)), name a colour dim (e.g. .rename({{{dims[0]!r}: 'band'}})) "
        f"and put it at either end (e.g. .transpose(..., 'y', 'x'))"
    )


def image_layout(image: xr.DataArray) -> tuple[Any, tuple[str, str, str | None]]:
    """The image's data as ``(y, x)`` or ``(y, x, c)`` (NumPy or Dask, not loaded) and its dims."""
    y, x, colour = image_dims(image)
    order = (y, x) if colour is None else (y, x, colour)
    return image.transpose(*order).data, (y, x, colour)


def sampled_coords(image: xr.DataArray, y: str, x: str, stride: int = 1) -> dict[str, Any]:
    """The image's coords at the samples of a stride grid, on dims renamed to ``y`` and ``x``.

    Coords that involve any other dim (the colour dim's labels) are not carried: results have
    no such dim. Spatial dims without an index get the pixel indices of the samples.
    """
    o = sample_offset(stride)
    sampled = image.isel({y: slice(o, None, stride), x: slice(o, None, stride)})
    coords: dict[str, Any] = {}
    for name, coord in sampled.coords.items():
        if set(coord.dims) <= {y, x}:
            coord = coord.transpose(*[d for d in (y, x) if d in coord.dims])
            dims = tuple({y: "y", x: "x"}[d] for d in coord.dims)
            renamed = xr.Variable(dims, coord.variable.data, coord.attrs)
            coords["y" if name == y else "x" if name == x else str(name)] = renamed
    coords.setdefault("y", ("y", np.arange(o, image.sizes[y], stride)))
    coords.setdefault("x", ("x", np.arange(o, image.sizes[x], stride)))
    return coords


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
        The result's own attrs, laid over the input's (less :data:`VALUE_ATTRS`).

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
    merged = {k: v for k, v in image.attrs.items() if k not in VALUE_ATTRS}
    merged.update(attrs)
    merged["xfskde_version"] = __version__
    merged.setdefault("source", str(image.name) if image.name is not None else "image")
    merged["source_dims"] = f"{y} {x}"
    return xr.DataArray(
        values, dims=("y", "x", *extra_dims), coords=coords, name=name, attrs=merged
    )
