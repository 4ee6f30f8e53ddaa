"""Every consumer labels its results alike: coords (CRS included) and attrs kept, backend kept.

One shared check (:func:`_xr_checks.assert_labelled_result`) applied to the coefficient field,
the maps computed from it and the segmentation's labels and abundances, for NumPy- and
Dask-backed images; then the cell convention of strided results (coordinates at the centres of
the s×s cells, a GeoTransform of the result's own grid) checked against numbers worked out by
hand, and the reading of nodata metadata. rioxarray's own view of the same results is checked
in test_geo.py.
"""

import dask.array as da
import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_labelled_result

import xfskde
from xfskde._labels import VALUE_ATTRS, cell_geotransform, image_dims, image_nodata, value_scale
from xfskde.exceptions import DimensionError, ParameterError, XfskdeError

H, W = 48, 40
#: The image's grid: 10 m pixels, corner at (299995, 5005); pixel centres x = 300000 + 10 j.
GEOTRANSFORM = "299995.0 10.0 0.0 5005.0 0.0 -10.0"


def _image(backend: str) -> xr.DataArray:
    rng = np.random.default_rng(3)
    pixels = rng.random((H, W)).astype(np.float32)
    yy, xx = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    image = xr.DataArray(
        pixels,
        dims=("y", "x"),
        coords={
            "y": ("y", 5000.0 - 10.0 * np.arange(H), {"units": "metre"}),
            "x": ("x", 300000.0 + 10.0 * np.arange(W), {"units": "metre"}),
            "lat": (("y", "x"), 45.0 + 0.001 * yy - 0.0001 * xx, {"units": "degrees_north"}),
            "spatial_ref": ((), 0, {"crs_wkt": "EPSG:32632", "GeoTransform": GEOTRANSFORM}),
        },
        attrs={"instrument": "MSI", "_FillValue": 0, "scale_factor": 1e-4, "nodata": 0},
        name="scene",
    )
    return image.chunk({"y": 24, "x": 20}) if backend == "dask" else image


@pytest.mark.parametrize("backend", ["numpy", "dask"])
@pytest.mark.parametrize("stride", [1, 3, 8])
def test_coefficients_keep_labels(backend, stride):
    image = _image(backend)
    field = xfskde.local_fskde(image, order=4, window="box", size=8, stride=stride)
    assert_labelled_result(field, image, stride=stride, extra_dims=("k",))
    assert field.attrs["stride"] == stride and field.attrs["source"] == "scene"
    assert not set(VALUE_ATTRS) & {k for k in field.attrs if k not in ("long_name",)}


@pytest.mark.parametrize("backend", ["numpy", "dask"])
def test_maps_keep_labels(backend):
    image = _image(backend)
    field = xfskde.local_fskde(image, order=4, window="gaussian", size=2, stride=2)
    orientation = field.fskde.dominant_orientation()
    assert_labelled_result(orientation, image, stride=2)
    assert orientation.attrs["units"] == "rad"
    density = field.fskde.density([0.0, 1.0])
    assert_labelled_result(density, image, stride=2, extra_dims=("theta",))


@pytest.mark.parametrize("backend", ["numpy", "dask"])
def test_segmentation_keeps_labels(backend):
    image = _image(backend)
    labels, model = xfskde.segment(image, 2, size=2, return_model=True)
    assert_labelled_result(labels, image)
    assert labels.attrs["n_textures"] == 2 and labels.dtype == np.uint8
    abundances = model.abundances(image)
    assert_labelled_result(abundances, image, extra_dims=("texture",))
    np.testing.assert_allclose(np.asarray(abundances.sum("texture")), 1, atol=1e-5)


def _transform(result):
    return tuple(map(float, result.spatial_ref.attrs["GeoTransform"].split()))


@pytest.mark.parametrize(
    ("stride", "transform", "x0", "y0", "shape"),
    [
        (1, (299995.0, 10.0, 0.0, 5005.0, 0.0, -10.0), 300000.0, 5000.0, (48, 40)),
        # 40 = 13*3 + 1: the last column is in no cell (its sample would be column 40)
        (3, (299995.0, 30.0, 0.0, 5005.0, 0.0, -30.0), 300010.0, 4990.0, (16, 13)),
        # even: the centre of cell 0 lies between pixels 3 and 4, half a pixel past pixel 3
        (8, (299995.0, 80.0, 0.0, 5005.0, 0.0, -80.0), 300035.0, 4965.0, (6, 5)),
    ],
)
def test_a_strided_result_has_cells_of_stride_pixels(stride, transform, x0, y0, shape):
    field = xfskde.local_fskde(_image("numpy"), order=2, window="box", size=stride, stride=stride)
    assert field.shape[:2] == shape
    assert _transform(field) == transform
    assert (float(field.x[0]), float(field.y[0])) == (x0, y0)
    # every coordinate is a cell centre: the corner plus (i + 1/2) cells
    np.testing.assert_array_equal(
        field.x, transform[0] + (np.arange(shape[1]) + 0.5) * transform[1]
    )
    np.testing.assert_array_equal(
        field.y, transform[3] + (np.arange(shape[0]) + 0.5) * transform[5]
    )
    # 48 x 40 is a multiple of 8: the result covers exactly the image (left, top, right, bottom)
    if stride == 8:
        right, bottom = transform[0] + 5 * 80.0, transform[3] - 6 * 80.0
        assert (right, bottom) == (299995.0 + 40 * 10.0, 5005.0 - 48 * 10.0)


def test_even_strides_interpolate_positions_and_keep_labels():
    image = _image("numpy").assign_coords(column_id=("x", np.arange(W) * 7))
    field = xfskde.local_fskde(image, order=2, window="gaussian", size=1, stride=4)
    # cell (1, 2) covers rows 4..7 and columns 8..11: its centre is between pixels 5|6 and 9|10
    lat = image.lat.values
    assert float(field.lat[1, 2]) == pytest.approx(lat[5:7, 9:11].mean(), abs=1e-12)
    assert float(field.x[2]) == 300095.0 and float(field.y[1]) == 4945.0
    # an integer id is a label, not a position: the sampled pixel's (column 9)
    assert int(field.column_id[2]) == 63 and field.column_id.dtype == image.column_id.dtype


def test_a_last_cell_that_overhangs_the_edge():
    # 40 = 6*6 + 4 columns at stride 6 (o = 2): cell 6 holds columns 36..41, two beyond the edge
    field = xfskde.local_fskde(_image("numpy"), order=2, window="box", size=6, stride=6)
    assert field.sizes["x"] == 7
    assert float(field.x[-1]) == 300385.0  # pixel 38.5: half a step past the last pixel, 39
    assert _transform(field)[:2] == (299995.0, 60.0)  # right edge 300415: 20 m past the image


def test_a_cropped_image_does_not_carry_a_stale_origin():
    # isel keeps the spatial_ref attrs as they were: the origin follows the coordinates instead
    image = _image("numpy").isel(x=slice(5, None), y=slice(2, None))
    field = xfskde.local_fskde(image, order=2, window="box", size=2, stride=2)
    assert _transform(field) == (300045.0, 20.0, 0.0, 4985.0, 0.0, -20.0)


def test_georeferenced_dims_without_coords_get_crs_coords():
    image = _image("numpy").drop_vars(
        ["x", "y", "lat"]
    )  # like open_rasterio(parse_coordinates=False)
    field = xfskde.local_fskde(image, order=2, window="box", size=8, stride=8)
    np.testing.assert_array_equal(field.x, 299995.0 + 40.0 + 80.0 * np.arange(5))
    np.testing.assert_array_equal(field.y, 5005.0 - 40.0 - 80.0 * np.arange(6))
    assert _transform(field) == (299995.0, 80.0, 0.0, 5005.0, 0.0, -80.0)
    bare = xr.DataArray(image.values, dims=("y", "x"))  # no georeferencing: pixel indices
    np.testing.assert_array_equal(
        xfskde.local_fskde(bare, order=2, size=1, stride=8).x, np.arange(3, W, 8)
    )


def test_cell_geotransform_of_a_rotated_grid_keeps_the_corner():
    rotated = (100.0, 10.0, 2.0, 200.0, 1.0, -10.0)
    assert cell_geotransform(rotated, 4, 999.0, 999.0) == (100.0, 40.0, 8.0, 200.0, 4.0, -40.0)


def test_nodata_attrs_are_not_carried_to_results():
    field = xfskde.local_fskde(_image("numpy"), order=2, size=1, nodata=None)
    assert "nodata" not in field.attrs and "_FillValue" not in field.attrs


def test_image_nodata_reads_metadata_in_rioxarrays_order():
    pixels = np.zeros((4, 4), np.uint16)
    assert image_nodata(xr.DataArray(pixels)) == (None, "none")
    assert image_nodata(xr.DataArray(pixels, attrs={"_FillValue": 0.0})) == (
        0,
        "attrs['_FillValue']",
    )
    both = xr.DataArray(pixels, attrs={"missing_value": 7, "nodata": 9})
    assert image_nodata(both) == (7, "attrs['missing_value']")
    assert image_nodata(xr.DataArray(pixels, attrs={"nodatavals": (65535,)}))[0] == 65535
    decoded = xr.DataArray(pixels.astype(np.float32))
    decoded.encoding["_FillValue"] = 0  # xarray/rioxarray decoded it: the image holds NaN there
    decoded.encoding["dtype"] = np.dtype(np.uint16)  # as they record it: stored as integers
    value, source = image_nodata(decoded)
    assert np.isnan(value) and "encoding" in source
    floats = xr.DataArray(pixels.astype(np.float32), attrs={"_FillValue": -9999.5})
    assert image_nodata(floats) == (-9999.5, "attrs['_FillValue']")
    with pytest.raises(ParameterError):
        image_nodata(xr.DataArray(pixels, attrs={"_FillValue": "none"}))


def test_dimension_errors_are_typed():
    cube = xr.DataArray(np.zeros((2, 3, 4, 5)), dims=("t", "band", "y", "x"))
    with pytest.raises(DimensionError, match=r"isel"):
        image_dims(cube)
    unnamed = cube.rename(y="row", x="col")  # which two dims are the image's: not guessed
    with pytest.raises(XfskdeError):  # the base class catches it too, as does ValueError
        xfskde.local_fskde(unnamed, order=2)
    with pytest.raises(ValueError):
        xfskde.local_fskde(unnamed, order=2)
    with pytest.raises(
        DimensionError, match=r"one model .* xfskde.fit_textures\(image.isel\(t=0\)"
    ):
        xfskde.segment(cube, 2)  # a stack: plane by plane, with one model for them all


def test_the_field_of_a_stack_is_each_plane_s(tmp_path):
    """A time series or z-stack — (t, z, y, x[, c]) with y and x named — was refused ("select
    a 2-D or 3-D image"). Its field is each plane's, stacked as the planes are, with their
    coordinates, lazily for a Dask stack; the per-pixel maps follow; a store of one image's
    field refuses it, naming the ways to write it."""
    rng = np.random.default_rng(0)
    values = rng.random((3, 2, 40, 48)).astype(np.float32)
    stack = xr.DataArray(values, dims=("t", "z", "y", "x"),
                         coords={"t": [0.0, 30.0, 60.0], "x": np.arange(48) * 0.5})  # fmt: skip
    field = stack.fskde.coefficients(order=4, size=3, stride=2)
    assert field.dims == ("t", "z", "y", "x", "k") and field.shape == (3, 2, 20, 24, 5)
    np.testing.assert_array_equal(field.t.values, [0.0, 30.0, 60.0])
    for t, z in ((0, 0), (2, 1)):
        one = xfskde.local_fskde(stack.isel(t=t, z=z), order=4, size=3, stride=2)
        np.testing.assert_array_equal(field.isel(t=t, z=z).values, one.values)
        np.testing.assert_array_equal(field.x.values, one.x.values)
    assert field.attrs["order"] == 4 and field.attrs["stride"] == 2
    lazy = xfskde.local_fskde(stack.chunk({"y": 20, "x": 24}), order=4, size=3, stride=2)
    assert isinstance(lazy.data, da.Array)
    np.testing.assert_allclose(lazy.values, field.values, rtol=1e-6, atol=1e-7)
    assert field.fskde.coherence().dims == ("t", "z", "y", "x")
    colour = xr.DataArray(rng.random((2, 40, 48, 3)), dims=("t", "y", "x", "c"))
    assert xfskde.local_fskde(colour, order=4).dims == ("t", "y", "x", "k")
    with pytest.raises(DimensionError, match=r"isel\(t=0\)"):
        xfskde.io.write_coefficients(field, tmp_path / "stack.zarr")


def test_angles_on_pixels_that_are_not_square_are_flagged():
    """Gradient angles are measured on the pixel grid: a grating at 45° in µm, sampled by
    pixels 1 µm tall and 0.5 µm wide, has its gradient at 63.4° on the grid. The field says so
    (PixelAspectWarning naming the pixel size) instead of passing it off as the angle in µm."""
    import warnings

    import xfskde
    from xfskde.exceptions import PixelAspectWarning

    y, x = np.arange(96) * 1.0, np.arange(192) * 0.5
    phase = (x[None, :] + y[:, None]) / 8.0  # constant along x + y = c: gradient at 45° in µm
    image = xr.DataArray(np.sin(2 * np.pi * phase), dims=("y", "x"), coords={"y": y, "x": x})
    image.y.attrs["units"] = image.x.attrs["units"] = "µm"
    with pytest.warns(PixelAspectWarning, match=r"1 x 0\.5 µm \(y x\), not square"):
        field = xfskde.local_fskde(image, order=4, window="gaussian", size=8, stride=16)
    angle = np.mod(-np.rad2deg(np.angle(field.isel(k=2).values[2:-2, 2:-2])) / 2, 180)
    wy, wx = 2 * np.pi / 8 * 1.0, 2 * np.pi / 8 * 0.5  # radians per pixel along y and x
    on_grid = np.rad2deg(np.arctan2(np.sin(wy), np.sin(wx)))  # central differences: 61.6°
    assert np.allclose(angle, on_grid, atol=0.5) and abs(on_grid - 45) > 15
    with warnings.catch_warnings():  # square pixels, pixel coordinates, NumPy: no warning
        warnings.simplefilter("error", PixelAspectWarning)
        xfskde.local_fskde(image.assign_coords(x=np.arange(192) * 1.0), order=4, stride=16)
        xfskde.local_fskde(image.drop_vars(["y", "x"]), order=4, stride=16)
        xfskde.local_fskde(image.values, order=4, stride=16)
        xfskde.segment(image.values[:64, :64] > 0, 2, sample=500)  # textures need no angles


def test_the_scale_of_an_image_s_stored_values():
    """A CF / GDAL scale (rioxarray's ``scale_factor``), or rioxarray's per-band ``scales``
    where every band's is one value (bands picked from a file whose bands differ); none where
    they differ, where xarray decoded the values already (``encoding`` only), or none given."""
    image = xr.DataArray(np.zeros((4, 4)), dims=("y", "x"))
    assert value_scale(image) == (1.0, None)
    assert value_scale(image.assign_attrs(scale_factor=-1e-4, units="W m-2")) == (1e-4, "W m-2")
    assert value_scale(image.assign_attrs(scales=(2e-4,))) == (2e-4, None)
    assert value_scale(image.assign_attrs(scales=(1e-4, 2e-4))) == (1.0, None)
    assert value_scale(image.assign_attrs(scale_factor=0.0, units=" ")) == (1.0, None)
    decoded = image.copy()
    decoded.encoding["scale_factor"] = 1e-4
    assert value_scale(decoded) == (1.0, None)
