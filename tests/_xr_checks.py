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
