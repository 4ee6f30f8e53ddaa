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


#: Input attrs that describe the input's value encoding or nodata; results do not carry them.
_VALUE_ATTRS = {"_FillValue", "missing_value", "scale_factor", "add_offset", "valid_range",
                "valid_min", "valid_max", "units", "long_name", "standard_name", "nodata",
                "nodatavals", "fill_value", "_Unsigned", "scales", "offsets"}  # fmt: skip


def _cell_centres(coord: xr.DataArray, dim: str, stride: int, position: bool) -> xr.DataArray:
    """``coord`` at the centres of the stride cells along ``dim``: pixel ``i*s + (s-1)/2``.

    Written independently of xfskde._labels: odd strides (and label-like coords) pick the
    sampled pixel ``i*s + o``; even strides average the pixels ``i*s + o`` and ``i*s + o + 1``
    (the second replaced by ``2*x[p] - x[p-1]`` past the image's last pixel).
    """
    o = (stride - 1) // 2
    n = coord.sizes[dim]
    here = coord.isel({dim: slice(o, None, stride)})
    if stride % 2 or not position or n < 2:
        return here
    values = np.moveaxis(np.asarray(coord.values, dtype=float), coord.dims.index(dim), 0)
    padded = np.concatenate([values, 2 * values[-1:] - values[-2:-1]])
    mid = (padded[o::stride][: here.sizes[dim]] + padded[o + 1 :: stride][: here.sizes[dim]]) / 2
    return here.copy(data=np.moveaxis(mid, 0, coord.dims.index(dim)))


def _check_geotransform(result: xr.DataArray, image: xr.DataArray, stride: int, name) -> None:
    """The result's GeoTransform is the image's grid coarsened ``stride`` times, as coords say."""
    c, a, b, f, d, e = map(float, image.coords[name].attrs["GeoTransform"].split())
    c2, a2, b2, f2, d2, e2 = map(float, result.coords[name].attrs["GeoTransform"].split())
    assert (a2, b2, d2, e2) == (a * stride, b * stride, d * stride, e * stride)
    if b == d == 0 and "x" in result.coords and "y" in result.coords:
        # the corner of the first cell, exactly where the coordinates put it (as rioxarray does)
        assert c2 == float(result.x[0]) - a2 / 2 and f2 == float(result.y[0]) - e2 / 2
        # ... which is the image's corner (to rounding)
        np.testing.assert_allclose([c2, f2], [c, f], rtol=0, atol=1e-9 * max(abs(a), abs(e)))


def assert_labelled_result(
    result: xr.DataArray, image: xr.DataArray, *, stride: int = 1, extra_dims: tuple = ()
) -> None:
    """Check a result computed from an image, as xarray-spatial checks its outputs.

    * dims are ``("y", "x", *extra_dims)``;
    * the backend kind follows the input: NumPy in, NumPy out; Dask in, Dask out;
    * every coordinate of the image on its spatial dims (index, 1-D, 2-D) and every scalar
      coordinate (a CRS ``spatial_ref``) is carried, with its attrs, at the centres of the
      stride's s×s cells: the sampled pixels ``o = (stride - 1) // 2, o + stride, ...`` for odd
      strides; for even strides, positions (index coords and float coords) midway between the
      sampled pixel and the next; spatial dims without coords get the sampled pixels' indices;
    * a scalar coord's ``GeoTransform`` describes the result's own grid (cells ``stride`` times
      the image's pixels, anchored at the image's corner, agreeing with the coordinates); its
      other attrs are the image's;
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
    for dim, result_dim in ((y, "y"), (x, "x")):
        if dim not in image.coords:
            np.testing.assert_array_equal(
                result[result_dim], np.arange(o, image.sizes[dim], stride)
            )
    for name, coord in image.coords.items():
        if not set(coord.dims) <= {y, x}:
            continue
        key = "y" if name == y else "x" if name == x else name
        assert key in result.coords, f"coordinate {name!r} was dropped"
        kept = result.coords[key]
        position = coord.dtype.kind == "f" or (coord.dtype.kind in "iu" and name in (y, x))
        expected = coord
        for dim in (y, x):
            if dim in coord.dims:
                expected = _cell_centres(expected, dim, stride, position)
        if stride % 2 or not position:  # the image's own values, exactly
            np.testing.assert_array_equal(kept.values, expected.values, err_msg=repr(name))
        else:  # interpolated: to rounding
            np.testing.assert_allclose(kept.values, expected.values, rtol=1e-12, err_msg=repr(name))
        if coord.ndim == 0 and "GeoTransform" in coord.attrs:
            _check_geotransform(result, image, stride, name)
            others = {k: v for k, v in kept.attrs.items() if k != "GeoTransform"}
            assert others == {k: v for k, v in coord.attrs.items() if k != "GeoTransform"}
        else:
            assert kept.attrs == coord.attrs, (name, kept.attrs, coord.attrs)
    for key, value in image.attrs.items():
        if key in _VALUE_ATTRS:
            continue
        assert key in result.attrs, f"attribute {key!r} was dropped"
        assert result.attrs[key] == value, (key, result.attrs[key], value)
