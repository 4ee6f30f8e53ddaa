"""xarray images as users hold them: stacks with coordinates of their own, spatial dims
named otherwise than y and x, floats reopened from netCDF and Zarr."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde.api import present_samples
from xfskde.exceptions import ParameterError

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


def test_a_stack_keeps_its_coordinates_along_the_stack_dim():
    """The field of a stack kept only plane 0's value of each coord along the stack dim: a
    sensor per date became the scalar 'A', a (time, y) row time plane 0's (y,) row, and on a
    stack without an index on its dim (a ``date`` coord only) every such coord collapsed.
    Each keeps its dims, a coord along y sampled at the cells as each plane's y coords are."""
    rows = np.arange(96.0).reshape(3, 32)  # each plane's rows acquired 32 s after the last's
    stack = xr.DataArray(
        _pixels((3, 32, 32)),
        dims=("time", "y", "x"),
        coords={"time": [10, 20, 30], "sensor": ("time", ["A", "B", "C"]),
                "row_time": (("time", "y"), rows)},
    )  # fmt: skip
    field = stack.fskde.coefficients(**PARAMS)
    assert field.dims == ("time", "y", "x", "k")
    assert field.sensor.dims == ("time",) and field.sensor.values.tolist() == ["A", "B", "C"]
    assert field.row_time.dims == ("time", "y")
    cells = np.arange(4) * 8 + 3.5  # the cells' centres (rows 3 and 4 of each cell)
    np.testing.assert_array_equal(field.row_time.values, cells + 32.0 * np.arange(3)[:, None])
    for i in range(3):  # each plane's field, coords and all, is that plane's alone
        alone = stack.isel(time=i).fskde.coefficients(**PARAMS)
        xr.testing.assert_identical(field.isel(time=i).drop_vars("time"),
                                    alone.drop_vars("time"))  # fmt: skip
    # no index on the stack dim: a date and a sensor per plane
    dates = np.array(["2024-01-01", "2024-02-01", "2024-03-01"], dtype="datetime64[ns]")
    unindexed = stack.drop_vars(["time", "row_time"]).assign_coords(date=("time", dates))
    field = unindexed.fskde.coefficients(**PARAMS)
    assert "time" not in field.coords and field.date.dims == ("time",)
    np.testing.assert_array_equal(field.date.values, dates)
    assert field.sensor.values.tolist() == ["A", "B", "C"]
    # a stack of stacks: a (t, z) coord is (t, z); a coord along the colour dim is dropped
    nested = xr.DataArray(
        _pixels((2, 3, 32, 32, 2)),
        dims=("t", "z", "y", "x", "c"),
        coords={"depth": (("t", "z"), np.arange(6.0).reshape(2, 3)),
                "gain": (("t", "c"), np.ones((2, 2)))},
    )  # fmt: skip
    field = nested.fskde.coefficients(**PARAMS)
    assert field.dims == ("t", "z", "y", "x", "k") and "gain" not in field.coords
    np.testing.assert_array_equal(field.depth.values, np.arange(6.0).reshape(2, 3))


def _reopened(image: xr.DataArray, tmp_path, how: str) -> xr.DataArray:
    """``image`` written to a netCDF file or a Zarr store by xarray and read back, as a user
    holds a float raster of theirs: xarray writes ``_FillValue`` NaN for a float variable and
    decodes it into the encoding."""
    tmp_path.mkdir()
    if how == "netcdf":
        image.to_netcdf(tmp_path / "image.nc", engine="scipy")
        with xr.open_dataarray(tmp_path / "image.nc", engine="scipy") as opened:
            return opened.load()
    image.to_dataset(name="image").to_zarr(tmp_path / "image.zarr", mode="w")
    return xr.open_zarr(tmp_path / "image.zarr")["image"]  # Dask-backed


@pytest.mark.filterwarnings("ignore::zarr.errors.ZarrUserWarning")
@pytest.mark.parametrize("how", ["netcdf", "zarr"])
def test_a_raise_asked_for_is_not_overridden_by_xarray_s_fill_value(tmp_path, how):
    """nan_policy="raise" was silently turned into "omit" on any float image reopened from
    netCDF or Zarr (the NaN _FillValue xarray writes for every float variable, read as its
    nodata): its NaN pixels were omitted and the result recorded nan_policy='omit'. A raise
    asked for refuses them; without a nan_policy they are omitted as before; a nodata the
    image declares (an attr, a number) is omitted under a raise too, and then the image's
    other NaN pixels are refused."""
    values = _pixels((64, 64))
    values[20, 20] = np.nan
    image = _reopened(xr.DataArray(values, dims=("y", "x")), tmp_path / "holes", how)
    assert np.isnan(image.encoding["_FillValue"])
    with pytest.raises(ParameterError, match="image contains NaN or infinite pixels"):
        image.fskde.coefficients(**PARAMS, nan_policy="raise").compute()
    default = image.fskde.coefficients(**PARAMS)  # no nan_policy: omitted, as before
    assert default.attrs["nan_policy"] == "omit" and default.attrs["input_nodata"] == "nan"
    expected = xfskde.local_fskde(values, **PARAMS, nan_policy="omit")
    np.testing.assert_array_equal(default.values, expected)
    np.testing.assert_array_equal(
        image.fskde.coefficients(**PARAMS, nan_policy="omit").values, expected
    )
    # without NaN pixels a raise asked for computes, and records that nothing was masked
    whole = _reopened(xr.DataArray(_pixels((64, 64)), dims=("y", "x")), tmp_path / "w", how)
    field = whole.fskde.coefficients(**PARAMS, nan_policy="raise")
    assert field.attrs["nan_policy"] == "raise" and field.attrs["input_nodata"] == "none"
    np.testing.assert_array_equal(
        field.values, xfskde.local_fskde(whole.values, **PARAMS, nan_policy="raise")
    )
    # a NaN nodata the image declares (rioxarray's, GDAL's attr) marks them missing
    declared = image.assign_attrs(nodata=np.nan)
    field = declared.fskde.coefficients(**PARAMS, nan_policy="raise")
    assert field.attrs["nan_policy"] == "omit" and field.attrs["input_nodata"] == "nan"
    np.testing.assert_array_equal(field.values, expected)
    # a numeric nodata: its pixels omitted under a raise, the image's own NaN refused
    dem = values.copy()
    dem[:8, :8] = -9999.0
    dem_image = xr.DataArray(dem, dims=("y", "x"), attrs={"nodata": -9999.0})
    masked = np.where(dem == -9999.0, np.float32(np.nan), dem)
    for data in (dem_image, dem_image.chunk(32)):  # checked block by block when lazy
        with pytest.raises(ParameterError, match="image contains NaN or infinite pixels"):
            data.fskde.coefficients(**PARAMS, nan_policy="raise").compute()
        np.testing.assert_array_equal(
            data.fskde.coefficients(**PARAMS).values,
            xfskde.local_fskde(masked, **PARAMS, nan_policy="omit"),
        )
    dem[20, 20] = masked[20, 20] = 0.5  # no NaN of its own: the nodata omitted under a raise
    for data in (dem_image.copy(data=dem), dem_image.copy(data=dem).chunk(32)):
        field = data.fskde.coefficients(**PARAMS, nan_policy="raise")
        assert field.attrs["input_nodata"] == -9999.0
        np.testing.assert_array_equal(
            field.values, xfskde.local_fskde(masked, **PARAMS, nan_policy="omit")
        )


def test_a_nodata_argument_no_pixel_can_equal_is_refused():
    """nodata=1.5 or -9999 on an int8 image masked nothing without a word (its pixels are
    integers -128 .. 127), while the pixels meant were used: refused in one line, by the
    field and by the segmentation; a value the pixels can hold is masked."""
    pixels = np.random.default_rng(0).integers(-100, 100, (64, 64)).astype(np.int8)
    for value in (1.5, -9999):
        with pytest.raises(ParameterError, match=r"can never equal a value of its int8 pixels"):
            xfskde.local_fskde(pixels, order=2, size=3, nodata=value)
        with pytest.raises(ParameterError, match=r"can never equal a value of its int8 pixels"):
            xfskde.segment(pixels, 2, nodata=value)
    pixels[:8] = -128
    field = xfskde.local_fskde(pixels, order=2, window="box", size=3, nodata=-128)
    assert field.shape == (64, 64, 3) and np.isnan(field[:6, :, 0]).all()
