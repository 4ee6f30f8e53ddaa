"""xarray images as users hold them: stacks with coordinates of their own, spatial dims
named otherwise than y and x, floats reopened from netCDF and Zarr."""

from __future__ import annotations

import numpy as np
import xarray as xr

from xfskde.api import present_samples

PARAMS = {"order": 4, "window": "box", "size": 8, "stride": 8}


def _pixels(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def test_present_samples_of_a_stack_and_of_other_dim_names():
    """present_samples read a stack's plane dim as colour (a sample present where any plane
    had data: plane 0's hole not missing) and refused a (lat, lon) image with xarray's
    "Dimensions {'y', 'x'} do not exist". Each plane's samples are its own, on the field's
    grid and coords, and spatial dims are read as local_fskde reads them."""
    values = _pixels((2, 64, 48))
    values[0, :16, :16] = np.nan  # a hole in plane 0 only: its first 2 x 2 cells
    stack = xr.DataArray(values, dims=("t", "y", "x"), coords={"t": [5, 6]})
    for image in (stack, stack.chunk({"t": 1, "y": 32})):
        field = image.fskde.coefficients(**PARAMS, nan_policy="omit")
        present = present_samples(image, field)
        assert present.dims == ("t", "y", "x") and present.t.values.tolist() == [5, 6]
        expected = np.ones((2, 8, 6), bool)
        expected[0, :2, :2] = False
        np.testing.assert_array_equal(present.values, expected)
        np.testing.assert_array_equal(present.values, ~np.isnan(field.isel(k=0).values))
        np.testing.assert_array_equal(present.y.values, field.y.values)
    rgb = xr.DataArray(np.stack([values] * 3, axis=-1), dims=("t", "y", "x", "c"))
    field = rgb.fskde.coefficients(**PARAMS, nan_policy="omit")
    np.testing.assert_array_equal(present_samples(rgb, field).values, expected)
    for dims in (("lat", "lon"), ("row", "col")):
        image = xr.DataArray(values[0], dims=dims)
        field = image.fskde.coefficients(**PARAMS, nan_policy="omit")
        present = present_samples(image, field)
        assert present.dims == ("y", "x")
        np.testing.assert_array_equal(present.values, expected[0])
    transposed = xr.DataArray(values[0].T, dims=("x", "y"))  # read by name: (y, x)
    field = transposed.fskde.coefficients(**PARAMS, nan_policy="omit")
    np.testing.assert_array_equal(present_samples(transposed, field).values, expected[0])
