"""One helper that checks a labeled result keeps its dims, coordinates and attributes."""

from __future__ import annotations

import numpy as np
import xarray as xr


def assert_keeps_labels(result: xr.DataArray, source: xr.DataArray, *, dims=None) -> None:
    """``result`` has ``dims`` (default: the source's), the source's coords on shared dims and
    every attribute of the source (a new quantity may say what it is in ``long_name``)."""
    expected_dims = tuple(source.dims) if dims is None else tuple(dims)
    assert tuple(result.dims) == expected_dims, (result.dims, expected_dims)
    for dim in set(result.dims) & set(source.dims):
        if dim in source.coords:
            np.testing.assert_array_equal(result[dim].values, source[dim].values)
    for key, value in source.attrs.items():
        if key == "long_name":
            continue
        assert key in result.attrs, f"attribute {key!r} was dropped"
        assert result.attrs[key] == value
