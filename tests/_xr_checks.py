"""One helper that checks a labeled result keeps its dims, coordinates and attributes."""

from __future__ import annotations

import numpy as np
import xarray as xr


def assert_keeps_labels(
    result: xr.DataArray, source: xr.DataArray, *, dims=None, attrs: bool = True
) -> None:
    """Check that ``result`` keeps the labels of ``source``.

    * ``result.dims`` equals ``dims`` (default: the source's dims, in order);
    * every coordinate of ``source`` whose dims all survive in ``result`` (index coords, 1-D and
      2-D coords on those dims, scalar coords such as a CRS) is in ``result`` with the same dims,
      values and attrs;
    * with ``attrs``, every attribute of ``source`` is in ``result`` with the same value (a new
      quantity may say what it is in ``long_name``).
    """
    expected_dims = tuple(source.dims) if dims is None else tuple(dims)
    assert tuple(result.dims) == expected_dims, (result.dims, expected_dims)
    for name, coord in source.coords.items():
        if not set(coord.dims) <= set(result.dims):
            continue
        assert name in result.coords, f"coordinate {name!r} was dropped"
        kept = result.coords[name]
        assert kept.dims == coord.dims, (name, kept.dims, coord.dims)
        np.testing.assert_array_equal(kept.values, coord.values, err_msg=f"coordinate {name!r}")
        assert kept.attrs == coord.attrs, (name, kept.attrs, coord.attrs)
    if attrs:
        for key, value in source.attrs.items():
            if key == "long_name":
                continue
            assert key in result.attrs, f"attribute {key!r} was dropped"
            assert result.attrs[key] == value, (key, result.attrs[key], value)


#: Input attrs that describe the input's value encoding; results do not carry them.
_VALUE_ATTRS = {"_FillValue", "missing_value", "scale_factor", "add_offset", "valid_range",
                "valid_min", "valid_max", "units", "long_name", "standard_name"}  # fmt: skip


def assert_labelled_result(
    result: xr.DataArray, image: xr.DataArray, *, stride: int = 1, extra_dims: tuple = ()
) -> None:
    """Check a result computed from an image, as xarray-spatial checks its outputs.

    * dims are ``("y", "x", *extra_dims)``;
    * the backend kind follows the input: NumPy in, NumPy out; Dask in, Dask out;
    * every coordinate of the image on its spatial dims (index, 1-D, 2-D) and every scalar
      coordinate (a CRS ``spatial_ref``) is carried, sampled at the stride grid
      ``o = (stride - 1) // 2, o + stride, ...``, with its attrs;
    * every attr of the image is kept, except those describing its value encoding.
    """
    assert tuple(result.dims) == ("y", "x", *extra_dims), result.dims
    image_is_dask = image.chunks is not None
    result_is_dask = result.chunks is not None
    assert result_is_dask == image_is_dask, ("backend changed", image_is_dask, result_is_dask)
    spatial = [d for d in image.dims if d in ("y", "x")] or list(image.dims[-2:])
    y, x = ("y", "x") if {"y", "x"} <= set(image.dims) else spatial
    o = (stride - 1) // 2
    sampled = image.isel({y: slice(o, None, stride), x: slice(o, None, stride)})
    assert result.sizes["y"] == sampled.sizes[y] and result.sizes["x"] == sampled.sizes[x]
    for name, coord in sampled.coords.items():
        if not set(coord.dims) <= {y, x}:
            continue
        key = "y" if name == y else "x" if name == x else name
        assert key in result.coords, f"coordinate {name!r} was dropped"
        kept = result.coords[key]
        np.testing.assert_array_equal(kept.values, coord.values, err_msg=f"coordinate {name!r}")
        assert kept.attrs == coord.attrs, (name, kept.attrs, coord.attrs)
    for key, value in image.attrs.items():
        if key in _VALUE_ATTRS:
            continue
        assert key in result.attrs, f"attribute {key!r} was dropped"
        assert result.attrs[key] == value, (key, result.attrs[key], value)
