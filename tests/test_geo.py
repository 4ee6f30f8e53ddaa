"""Georeferenced data, checked with rioxarray itself: grids, CRS, nodata, GeoTIFF in and out.

The image is a small Sentinel-2-like GeoTIFF made here with rioxarray: 96 x 128 uint16 pixels
of 10 m in UTM zone 32N, corner at (300000, 5000000), with nodata 0 on a border (the first 24
columns and the last 16 rows, like the edge of a scene). rioxarray is the ``geo`` extra; CI
installs it with the ``test`` extra, so these tests always run there — ``importorskip`` only
spares a user who runs the suite without it.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_labelled_result
from skimage import data

import xfskde
from xfskde.api import mask_nodata, present_samples
from xfskde.exceptions import (
    DimensionError,
    GeoreferencingWarning,
    ImageReadError,
    ParameterError,
)
from xfskde.io import open_coefficients, open_image, write_coefficients
from xfskde.io.geotiff import write_geotiff
from xfskde.local import LocalParameters

rioxarray = pytest.importorskip("rioxarray")
rasterio = pytest.importorskip("rasterio")
from affine import Affine  # noqa: E402  (rasterio's dependency)
from rasterio.enums import ColorInterp  # noqa: E402

NY, NX = 96, 128
TRANSFORM = Affine(10.0, 0.0, 300000.0, 0.0, -10.0, 5000000.0)
BOUNDS = (300000.0, 5000000.0 - 10.0 * NY, 300000.0 + 10.0 * NX, 5000000.0)
CRS = "EPSG:32632"
PARAMS = dict(order=4, window="box", size=8, stride=8)


def _pixels() -> np.ndarray:
    pixels = data.camera()[:NY, :NX].astype(np.uint16) * 10 + 1000  # mostly smooth sky
    pixels[:, :24] = 0  # nodata: the scene's edge on the left ...
    pixels[-16:, :] = 0  # ... and at the bottom
    return pixels


def _write_image(path, tile: int = 32) -> None:
    x = TRANSFORM.c + (np.arange(NX) + 0.5) * TRANSFORM.a
    y = TRANSFORM.f + (np.arange(NY) + 0.5) * TRANSFORM.e
    image = xr.DataArray(_pixels(), dims=("y", "x"), coords={"y": y, "x": x}, name="B04")
    image = image.rio.write_crs(CRS).rio.write_transform(TRANSFORM).rio.write_nodata(0)
    image.rio.to_raster(path, tiled=True, blockxsize=tile, blockysize=tile)


@pytest.fixture(scope="module")
def geotiff(tmp_path_factory):
    path = tmp_path_factory.mktemp("geo") / "scene.tif"
    _write_image(path)
    return path


def _rasterio_image(path, **kwargs) -> xr.DataArray:
    return rioxarray.open_rasterio(path, **kwargs).squeeze("band", drop=True)


# --- open_image keeps the georeferencing ---------------------------------------------------


def test_open_image_keeps_crs_coordinates_and_nodata(geotiff):
    image = open_image(geotiff, chunks=64)
    reference = _rasterio_image(geotiff)
    assert image.dims == ("y", "x") and image.dtype == np.uint16
    np.testing.assert_array_equal(image.x, reference.x)
    np.testing.assert_array_equal(image.y, reference.y)
    assert image.spatial_ref.attrs == reference.spatial_ref.attrs
    assert image.rio.crs == reference.rio.crs == rasterio.crs.CRS.from_string(CRS)
    assert image.rio.transform() == TRANSFORM and image.rio.bounds() == BOUNDS
    assert image.attrs["_FillValue"] == 0 and image.rio.nodata == 0
    # the axes say what they are, in CF's words (rioxarray's open_rasterio leaves them bare)
    assert image.x.attrs == {
        "axis": "X",
        "long_name": "x coordinate of projection",
        "standard_name": "projection_x_coordinate",
        "units": "metre",
    }
    assert image.y.attrs["standard_name"] == "projection_y_coordinate"
    assert image.y.attrs["units"] == "metre"
    # the pixels are still read by xfskde's own tasks, which hold a path and no open file
    assert all(str(key[0]).startswith("xfskde-read-tiff") for key in image.data.dask)
    pickle.dumps(dict(image.data.dask))
    np.testing.assert_array_equal(image.values, reference.values)


def test_mpp_of_a_geotiff_says_it_is_measured_on_the_ground(geotiff):
    """mpp= on a GeoTIFF said it "does not record" its pixel size, which it does, in metres of
    its CRS: a microscope's µm do not pick a scene's overviews, and the message says so."""
    with pytest.raises(ParameterError, match=r"is a GeoTIFF, whose pixels are measured on the"):
        open_image(geotiff, mpp=10e6)


@pytest.mark.parametrize("path", ["scene.zarr", "scene.zarr/B04"])
def test_a_zarr_written_by_xarray_keeps_crs_coordinates_and_nodata(geotiff, tmp_path, path):
    """A scene saved with ``to_zarr`` (its coordinate variables and ``spatial_ref`` beside
    it): the group was refused ("a Zarr group with arrays ...") and the array opened alone lost
    the CRS, the coordinates and the nodata, silently."""
    reference = _rasterio_image(geotiff)
    reference.to_dataset(name="B04").to_zarr(tmp_path / "scene.zarr", consolidated=False)
    image = open_image(tmp_path / path)
    assert image.dims == ("y", "x") and image.dtype == np.uint16
    np.testing.assert_array_equal(image.x, reference.x)
    np.testing.assert_array_equal(image.y, reference.y)
    assert image.rio.crs == rasterio.crs.CRS.from_string(CRS)
    assert image.rio.transform() == TRANSFORM and image.attrs["_FillValue"] == 0
    np.testing.assert_array_equal(image.values, reference.values)
    # the field of the Zarr scene is the field of the GeoTIFF, on the same grid, nodata omitted
    field = xfskde.local_fskde(image, **PARAMS)
    expected = xfskde.local_fskde(open_image(geotiff), **PARAMS)
    xr.testing.assert_identical(field.drop_attrs(), expected.drop_attrs())
    assert field.attrs["input_nodata"] == 0 and field.rio.crs == image.rio.crs


def test_a_label_store_opens_as_an_image_with_its_coordinates(geotiff, tmp_path):
    """xfskde's own stores are groups of the labels, their coordinates and the completion
    record: open_image reads the labels with their CRS coordinates (a mask for another run)."""
    labels = xfskde.segment(open_image(geotiff), 2, sample=2000)
    xfskde.io.write_blocks(labels, tmp_path / "labels.zarr", name="labels", progress=False)
    opened = open_image(tmp_path / "labels.zarr")
    np.testing.assert_array_equal(opened.values, labels.values)
    np.testing.assert_array_equal(opened.x, labels.x)
    assert opened.attrs["n_textures"] == 2


def test_write_geotiff_never_replaces_the_scene_its_lazy_maps_read(geotiff, tmp_path):
    """The maps of a lazily opened scene written over the scene itself are refused before
    anything is written (GDAL would truncate the file the tasks then read); the scene is
    unchanged, and the same maps go to another file, and over that file again."""
    scene = tmp_path / "scene.tif"
    scene.write_bytes(geotiff.read_bytes())
    maps = open_image(scene).fskde.coefficients(**PARAMS).fskde.orientation()
    with pytest.raises(ParameterError, match=r"is the image .*scene\.tif: write_geotiff would"):
        write_geotiff(maps, scene)
    assert scene.read_bytes() == geotiff.read_bytes()
    out = write_geotiff(maps, tmp_path / "orientation.tif")
    assert write_geotiff(maps, out) == out
    with rasterio.open(out) as written:
        assert written.crs == CRS and written.shape == (NY // 8, NX // 8)


def test_without_rioxarray_a_geotiff_opens_with_pixel_coords_and_its_nodata(geotiff, monkeypatch):
    monkeypatch.setitem(sys.modules, "rioxarray", None)  # import rioxarray -> ImportError
    with pytest.warns(GeoreferencingWarning, match=r"xfskde\[geo\]"):
        image = open_image(geotiff)
    assert "x" not in image.coords and "spatial_ref" not in image.coords
    assert image.attrs["_FillValue"] == 0  # read from the GDAL_NODATA tag by tifffile
    with pytest.raises(ImportError, match=r"xfskde\[geo\]"):
        write_geotiff(xr.DataArray(np.zeros((2, 2)), dims=("y", "x")), geotiff.with_name("n.tif"))


# --- strided results describe their own grid ---------------------------------------------------


@pytest.mark.parametrize(
    ("stride", "shape", "bounds"),
    [
        (1, (96, 128), BOUNDS),
        # 128 = 42*3 + 2 columns: the 43rd cell overhangs the right edge by one pixel (10 m)
        (3, (32, 43), (300000.0, 4999040.0, 301290.0, 5000000.0)),
        (8, (12, 16), BOUNDS),  # 80 m cells, exactly the image's footprint
    ],
)
@pytest.mark.parametrize("reader", ["open_image", "open_rasterio"])
def test_strided_results_have_the_transform_of_their_cells(geotiff, reader, stride, shape, bounds):
    image = open_image(geotiff) if reader == "open_image" else _rasterio_image(geotiff)
    field = xfskde.local_fskde(image, order=4, window="box", size=max(stride, 3), stride=stride)
    assert field.shape[:2] == shape
    assert_labelled_result(field, image, stride=stride, extra_dims=("k",))
    expected = TRANSFORM @ Affine.scale(stride)  # s-times cells, anchored at the image's corner
    assert field.rio.transform() == expected
    assert field.rio.transform(recalc=True) == expected  # from the coordinates alone
    assert field.rio.resolution() == (10.0 * stride, -10.0 * stride)
    assert field.rio.bounds() == bounds
    assert field.rio.crs == image.rio.crs
    assert field.spatial_ref.attrs["GeoTransform"] == " ".join(str(v) for v in expected.to_gdal())
    # coordinates are the cells' centres: the centre of cell 0 is 5 * stride metres in
    assert (float(field.x[0]), float(field.y[0])) == (300000.0 + 5.0 * stride, 5e6 - 5.0 * stride)


@pytest.mark.parametrize("stride", [3, 8])
def test_reprojecting_a_strided_map_lands_each_cell_on_its_pixels(geotiff, stride):
    image = _rasterio_image(geotiff)
    field = xfskde.local_fskde(image, order=4, window="box", size=stride, stride=stride)
    energy = np.abs(field.isel(k=0)).astype(np.float32).rio.write_nodata(np.nan)
    # rioxarray puts each 10 m pixel of the image in the cell that covers it
    on_pixels = energy.rio.reproject_match(image.astype(np.float32))
    cells = np.repeat(np.repeat(energy.values, stride, 0), stride, 1)[:NY, :NX]
    np.testing.assert_array_equal(on_pixels.values, cells)
    # to geographic coordinates (4x finer than rioxarray's default, so that nearest resampling
    # loses no cell) and back: the same footprint, every cell back in its place
    coarse = energy.rio.reproject("EPSG:4326")
    geographic = energy.rio.reproject("EPSG:4326", resolution=coarse.rio.resolution()[0] / 4)
    expected = rasterio.warp.transform_bounds(CRS, "EPSG:4326", *energy.rio.bounds())
    np.testing.assert_allclose(geographic.rio.bounds(), expected, atol=1e-3)
    back = geographic.rio.reproject_match(energy)
    np.testing.assert_array_equal(back.values, energy.values)


def test_a_lazy_open_rasterio_image_with_its_band_dim(geotiff):
    image = rioxarray.open_rasterio(geotiff, chunks={"x": 64, "y": 64})  # (band, y, x), Dask
    field = xfskde.local_fskde(image, **PARAMS)
    assert field.chunks is not None and field.dims == ("y", "x", "k")
    assert_labelled_result(field, image, stride=8, extra_dims=("k",))
    assert field.rio.transform() == TRANSFORM @ Affine.scale(8) and field.rio.bounds() == BOUNDS
    expected = xfskde.local_fskde(open_image(geotiff), **PARAMS)
    np.testing.assert_array_equal(field.values, expected.values)


def test_maps_and_labels_keep_the_grid(geotiff):
    image = open_image(geotiff)
    field = xfskde.local_fskde(image, order=4, window="gaussian", size=2, stride=4)
    for result in (field.fskde.orientation(), field.fskde.coherence(), field.fskde.energy()):
        assert_labelled_result(result, image, stride=4)
        assert result.rio.transform() == TRANSFORM @ Affine.scale(4)
        assert result.rio.bounds() == BOUNDS and result.rio.crs == image.rio.crs
    labels = xfskde.segment(image.astype(np.float32), 2, size=2)
    assert_labelled_result(labels, image)
    assert labels.rio.transform() == TRANSFORM and labels.rio.crs == image.rio.crs


# --- nodata ------------------------------------------------------------------------------------


def test_nodata_is_omitted_as_nan(geotiff):
    image = open_image(geotiff, chunks=64)
    field = xfskde.local_fskde(image, **PARAMS)
    assert field.chunks is not None  # lazy in, lazy out
    assert field.attrs["input_nodata"] == 0 and field.attrs["nan_policy"] == "omit"
    assert field.attrs["input_nodata_source"] == "attrs['_FillValue']"
    f0 = np.abs(field.values[..., 0])
    # the same image with NaN where it is 0, under nan_policy="omit": the same numbers exactly
    holes = np.where(_pixels() == 0, np.nan, _pixels()).astype(np.float32)
    omitted = xfskde.local_fskde(holes, **PARAMS, nan_policy="omit")
    np.testing.assert_array_equal(field.values, omitted)
    # rioxarray's readers give the same: nodata in attrs, or decoded to NaN (masked=True)
    for reader in (_rasterio_image(geotiff), _rasterio_image(geotiff, masked=True)):
        np.testing.assert_array_equal(xfskde.local_fskde(reader, **PARAMS).values, omitted)
    # cells 0-2 are all nodata: no value (NaN, not 0: not "no gradient"), exactly where the
    # cell's pixel is missing; cell 3 touches the edge: no more than an interior cell
    used = xfskde.local_fskde(image, **PARAMS, nodata=None)
    g0 = np.abs(used.values[..., 0])
    interior = f0[:8, 5:].mean()
    assert np.isnan(f0[:, :3]).all() and np.isnan(f0[-2:]).all()
    np.testing.assert_array_equal(np.isnan(f0), ~present_samples(image, field).values)
    assert np.isnan(field.fskde.coherence().values[:, :3]).all()  # maps too, with no .where
    assert f0[:8, 3].mean() < 1.5 * interior  # 0.89 times
    assert g0[:8, 3].mean() > 10 * interior  # 40 times, with the 0s used as data
    assert used.attrs["input_nodata"] == "none" and used.attrs["nan_policy"] == "raise"


def test_no_value_is_recorded_and_a_store_without_the_record_is_not_resumed(geotiff, tmp_path):
    """The field says which samples are NaN; a store written before they were (0 there, no
    record) is refused on resume rather than finished as a mix of 0 and NaN."""
    from xfskde.exceptions import StoreParametersError

    field = xfskde.local_fskde(open_image(geotiff, chunks=64), **PARAMS)
    missing = "NaN at the samples whose own pixel is missing (NaN or nodata)"
    assert field.attrs["no_value"] == missing
    masked = xfskde.local_fskde(open_image(geotiff), **PARAMS, nodata=None,
                                mask=np.ones((4, 4), bool))  # fmt: skip
    assert masked.attrs["no_value"] == "NaN at the samples outside the mask (not computed)"
    assert "no_value" not in xfskde.local_fskde(open_image(geotiff), **PARAMS, nodata=None).attrs
    old = field.fillna(0)  # as stores were written before: 0 there, and no record
    del old.attrs["no_value"]
    write_coefficients(old, tmp_path / "old.zarr", progress=False)
    with pytest.raises(StoreParametersError, match="other parameters"):
        write_coefficients(field, tmp_path / "old.zarr", resume=True, progress=False)


def test_nodata_forms_and_errors(geotiff):
    pixels = _pixels()
    expected = xfskde.local_fskde(open_image(geotiff), **PARAMS).values
    np.testing.assert_array_equal(xfskde.local_fskde(pixels, **PARAMS, nodata=0), expected)
    lazy = xfskde.local_fskde(open_image(geotiff).data, **PARAMS, nodata=0)
    np.testing.assert_array_equal(lazy.compute(), expected)
    # NumPy arrays have no metadata: "auto" masks nothing
    np.testing.assert_array_equal(
        xfskde.local_fskde(pixels, **PARAMS),
        xfskde.local_fskde(open_image(geotiff), **PARAMS, nodata=None).values,
    )
    for bad in ("zero", True, [0]):
        with pytest.raises(ParameterError):
            xfskde.local_fskde(pixels, **PARAMS, nodata=bad)


def test_present_samples_are_the_samples_on_data():
    """At each sample of a stride grid: False where every channel is NaN or the recorded
    nodata value, in memory and lazily alike; all True without nodata."""
    pixels = np.full((32, 40, 3), 7, np.uint16)
    pixels[:16, :8] = 0  # nodata in every channel
    pixels[20:, 20:, 0] = 0  # one channel only: data
    image = xr.DataArray(pixels, dims=("y", "x", "c"), attrs={"_FillValue": 0})
    field = xfskde.local_fskde(image, order=4, window="box", size=4, stride=4)
    present = present_samples(image, field)
    assert present.dims == ("y", "x") and present.shape == (8, 10)
    expected = np.ones((8, 10), bool)
    expected[:4, :2] = False
    np.testing.assert_array_equal(present.values, expected)
    lazy = image.chunk({"y": 16, "x": 16})
    np.testing.assert_array_equal(present_samples(lazy, xfskde.local_fskde(
        lazy, order=4, window="box", size=4, stride=4)).values, expected)  # fmt: skip
    floats = xr.DataArray(np.where(pixels[..., 0] == 0, np.nan, 1.0), dims=("y", "x"))
    field = xfskde.local_fskde(floats, order=4, window="box", size=4, stride=4,
                               nan_policy="omit")  # fmt: skip
    assert not present_samples(floats, field).values[:4, :2].any()
    # ±inf is missing too, as the field says (NaN there): one rule for both
    floats[21, 21] = np.inf  # the pixel of sample (5, 5) at stride 4 (4 i + 1)
    field = xfskde.local_fskde(floats, order=4, window="box", size=4, stride=4,
                               nan_policy="omit")  # fmt: skip
    present = present_samples(floats, field).values
    assert not present[5, 5] and present[5, 4]
    np.testing.assert_array_equal(present, ~np.isnan(field.values).all(axis=-1))
    assert present_samples(image, xfskde.local_fskde(image, order=4, nodata=None)).values.all()


def test_nodata_is_masked_block_by_block():
    import dask.array as da

    pixels = da.from_array(_pixels(), chunks=32)
    masked = mask_nodata(pixels, 0)
    assert isinstance(masked, da.Array) and masked.chunks == pixels.chunks
    assert masked.dtype == np.float32  # uint16 works in float32: the coefficients stay complex64
    one = masked.blocks[0, 0].compute()  # one block computes on its own
    assert np.isnan(one[:, :24]).all() and not np.isnan(one[:, 24:]).any()
    assert mask_nodata(pixels, None) is pixels


# --- stores: the CLI's path --------------------------------------------------------------------


def test_crs_and_grid_survive_a_store(geotiff, tmp_path):
    # what `xfskde coefficients scene.tif out.zarr --window box --size 8 --stride 8` does
    halo = LocalParameters(**PARAMS).depth
    image = open_image(geotiff, chunks=64, halo=halo, stride=8)
    field = xfskde.local_fskde(image, **PARAMS)
    write_coefficients(field, tmp_path / "cells.zarr", progress=False)
    stored = open_coefficients(tmp_path / "cells.zarr")
    assert stored.rio.crs == image.rio.crs
    assert stored.rio.transform() == TRANSFORM @ Affine.scale(8)
    assert stored.rio.bounds() == BOUNDS
    assert stored.spatial_ref.attrs == field.spatial_ref.attrs
    assert stored.attrs["input_nodata"] == 0
    np.testing.assert_array_equal(stored.values, field.values)
    # opened by xarray alone, the store's axes carry their units
    plain = xr.open_zarr(tmp_path / "cells.zarr")["fskde"]
    assert plain.x.attrs["units"] == plain.y.attrs["units"] == "metre"
    assert plain.x.attrs["standard_name"] == "projection_x_coordinate"


# --- GeoTIFF out -------------------------------------------------------------------------------


@pytest.mark.parametrize("cog", [False, True])
def test_coefficients_as_geotiff(geotiff, tmp_path, cog):
    field = xfskde.local_fskde(open_image(geotiff, chunks=64), order=4, size=1.5, stride=1)
    path = write_geotiff(field, tmp_path / "field.tif", cog=cog, tile=32)
    back = rioxarray.open_rasterio(path)
    assert back.shape == (10, NY, NX) and back.dtype == np.float32  # Re, Im of F_0 .. F_4
    restored = np.moveaxis(back.values[0::2] + 1j * back.values[1::2], 0, -1)
    np.testing.assert_array_equal(restored, field.values)
    assert back.rio.transform() == TRANSFORM and back.rio.crs == field.rio.crs
    assert np.isnan(back.rio.nodata)
    with rasterio.open(path) as src:
        assert src.descriptions[:3] == ("Re F_0", "Im F_0", "Re F_1")
        assert src.tags()["stride"] == "1" and src.tags()["window"] == "gaussian"
        assert src.tags()["input_nodata"] == "0"
        layout = src.tags(ns="IMAGE_STRUCTURE").get("LAYOUT")
        assert (layout == "COG") == cog
        assert bool(src.overviews(1)) == cog
    if cog:  # the first overview, opened by xfskde, is georeferenced at 20 m
        overview = open_image(path, level=1)
        assert overview.rio.resolution() == (20.0, -20.0) and overview.rio.bounds() == BOUNDS


def test_maps_and_labels_as_geotiff(geotiff, tmp_path):
    image = open_image(geotiff)
    field = xfskde.local_fskde(image, **PARAMS)
    coherence = field.fskde.coherence()
    path = write_geotiff(coherence, tmp_path / "coherence.tif")
    back = rioxarray.open_rasterio(path).squeeze("band", drop=True)
    assert back.dtype == np.float32 and np.isnan(back.rio.nodata)
    assert back.attrs["units"] == "1" and back.attrs["long_name"] == "coherence"
    np.testing.assert_array_equal(back.values, coherence.values.astype(np.float32))
    # a Dataset of maps on one grid: one band each, named by its variable, with its unit
    maps = xr.Dataset({"orientation": field.fskde.orientation(), "coherence": coherence})
    back = rioxarray.open_rasterio(write_geotiff(maps, tmp_path / "maps.tif", cog=True))
    assert back.attrs["long_name"] == ("orientation", "coherence")
    assert back.attrs["units"] == ("rad", "1") and back.attrs["stride"] == 8
    np.testing.assert_array_equal(back.values[1], coherence.values.astype(np.float32))
    with pytest.raises(DimensionError, match="Dataset of \\(y, x\\) maps"):
        write_geotiff(xr.Dataset({"field": field}), tmp_path / "bad.tif")
    assert back.rio.transform() == TRANSFORM @ Affine.scale(8) and back.rio.bounds() == BOUNDS
    labels = xfskde.segment(image.astype(np.float32), 2, size=2)
    path = write_geotiff(labels, tmp_path / "labels.tif")
    back = rioxarray.open_rasterio(path).squeeze("band", drop=True)
    # the background label (0: the scene's nodata border, no texture) is the file's nodata
    assert back.dtype == np.uint8 and back.rio.nodata == 0 and not back.values[:, :24].any()
    np.testing.assert_array_equal(back.values, labels.values)
    assert back.rio.transform() == TRANSFORM and back.rio.crs == image.rio.crs
    # a colour table: matplotlib's tab10 as in the library's pictures, the background (the
    # pictures' light grey) clear as nodata; kept by the COG copy; none on request or for maps
    write_geotiff(labels, tmp_path / "labels-cog.tif", cog=True)
    write_geotiff(labels, tmp_path / "plain.tif", colors=None)
    for name in ("labels.tif", "labels-cog.tif"):
        with rasterio.open(tmp_path / name) as src:
            table = src.colormap(1)
            assert src.colorinterp == (ColorInterp.palette,)
        assert [table[i] for i in range(3)] == [
            (217, 217, 217, 0), (31, 119, 180, 255), (255, 127, 14, 255)]  # fmt: skip
    for name in ("plain.tif", "coherence.tif"):
        with rasterio.open(tmp_path / name) as src, pytest.raises(ValueError, match="NULL"):
            src.colormap(1)
    with pytest.raises(ParameterError, match='colors must be "auto" or None'):
        write_geotiff(labels, tmp_path / "bad.tif", colors="tab10")


def test_the_command_line_geotiffs_have_overviews(tmp_path):
    """A scene larger than a tile: the labels and maps come with internal overviews (what QGIS
    draws a zoomed-out scene from; they were missing, so every zoom read every pixel), the
    labels' each 2 x 2's most frequent label (scipy's mode of the four, ties to the first),
    the maps' true samples (no angle averaged across its wrap), nodata kept out of both."""
    from scipy import stats

    from xfskde.cli import main
    from xfskde.datasets import random_textures

    image, _ = random_textures((600, 520), seed=4)
    pixels = (image * 255).astype(np.uint8)
    pixels[:40] = 0  # nodata: the scene's edge
    grid = TRANSFORM.c + (np.arange(520) + 0.5) * 10, TRANSFORM.f - (np.arange(600) + 0.5) * 10
    scene = xr.DataArray(np.moveaxis(pixels, -1, 0), dims=("band", "y", "x"),
                         coords={"band": [1, 2, 3], "y": grid[1], "x": grid[0]})  # fmt: skip
    scene = scene.rio.write_crs(CRS).rio.write_transform(TRANSFORM).rio.write_nodata(0)
    scene.rio.to_raster(tmp_path / "scene.tif", tiled=True, blockxsize=64, blockysize=64)
    seg = ["--textures", "3", *("--features", "color,fskde", "--size", "4"), "--no-progress"]
    assert main(["segment", str(tmp_path / "scene.tif"), str(tmp_path / "labels.tif"), *seg]) == 0
    with rasterio.open(tmp_path / "labels.tif") as src:
        assert src.overviews(1) == [2, 4] and src.nodata == 0
        full, half = src.read(1), src.read(1, out_shape=(300, 260))
    assert not full[:40].any() and full[40:].all()
    quads = full.reshape(300, 2, 260, 2).transpose(0, 2, 1, 3).reshape(300, 260, 4)
    mode = stats.mode(quads, axis=-1, keepdims=False)
    counts = (quads == mode.mode[..., None]).sum(axis=-1)
    clear = counts > 2  # a strict majority: every mode agrees on it
    assert clear[20:].mean() > 0.9
    np.testing.assert_array_equal(half[clear], mode.mode[clear])
    assert not half[:20].any() and (half[20:] > 0).all()  # the background does not spread
    field = ["--order", "4", "--window", "box", "--size", "8", "--stride", "1", "--no-progress"]
    assert main(["maps", str(tmp_path / "scene.tif"), str(tmp_path / "maps.tif"), *field]) == 0
    with rasterio.open(tmp_path / "maps.tif") as src:
        assert src.overviews(1) == [2, 4]
        full, half = src.read(), src.read(out_shape=(3, 300, 260))
    quads = full.reshape(3, 300, 2, 260, 2).transpose(0, 1, 3, 2, 4).reshape(3, 300, 260, 4)
    sampled = (quads == half[..., None]).any(axis=-1) | np.isnan(half)
    assert sampled.all()  # every overview value is one of its four pixels
    assert np.isfinite(half[:, 30:]).mean() > 0.9


def test_the_command_line_writes_labels_and_maps_as_geotiffs(geotiff, tmp_path, monkeypatch):
    """``xfskde segment/maps SCENE OUT.tif``: one GeoTIFF each, on the scene's CRS and grid (the
    maps' on their cells), holding what the Zarr outputs of the same commands hold; the
    background label (the scene's nodata) is the labels' nodata."""
    from xfskde.cli import main

    seg = ["--textures", "2", "--size", "4", "--sample", "2000", "--no-progress"]
    assert main(["segment", str(geotiff), str(tmp_path / "labels.tif"), *seg]) == 0
    assert main(["segment", str(geotiff), str(tmp_path / "labels.zarr"), *seg]) == 0
    back = _rasterio_image(tmp_path / "labels.tif")
    assert back.dtype == np.uint8 and back.rio.nodata == 0
    assert back.rio.crs == CRS and back.rio.transform() == TRANSFORM
    expected = xfskde.io.open_blocks(tmp_path / "labels.zarr").values
    np.testing.assert_array_equal(back.values, expected)
    assert not back.values[:, :24].any() and (back.values[:-16, 24:] > 0).all()
    assert back.attrs["n_textures"] == 2  # the parameters, as GDAL metadata
    with rasterio.open(tmp_path / "labels.tif") as src:  # QGIS shows the textures' colours
        assert src.colormap(1)[2] == (255, 127, 14, 255)
        assert src.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG"  # cloud-optimised

    field = ["--order", "4", "--window", "box", "--size", "8", "--stride", "8", "--no-progress"]
    assert main(["maps", str(geotiff), str(tmp_path / "maps.tif"), *field]) == 0
    maps = rioxarray.open_rasterio(tmp_path / "maps.tif")
    # each band named, with its unit (GDAL's band unit, which QGIS shows) and long name
    assert maps.attrs["long_name"] == ("orientation", "coherence", "energy")
    assert maps.attrs["units"] == ("rad", "1", "1/pixel")
    with rasterio.open(tmp_path / "maps.tif") as src:
        assert src.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG"
        assert src.units == ("rad", "1", "1/pixel")
        assert src.tags(2)["long_name"].startswith("coherence of gradient axes")
    assert maps.rio.transform() == TRANSFORM @ Affine.scale(8) and maps.rio.bounds() == BOUNDS
    scene = open_image(geotiff)
    computed = xfskde.local_fskde(scene, **PARAMS)
    present = present_samples(scene, computed).values
    assert not present[:, :3].any() and not present[-2:].any() and present[:-2, 3:].all()
    for band, name in enumerate(("orientation", "coherence", "energy")):
        expected = np.where(present, getattr(computed.fskde, name)().values, np.nan)
        np.testing.assert_allclose(maps.values[band], expected, rtol=1e-6)  # NaN where NaN
    # no value where the scene has none: coherence and energy were 0 there (no gradient)
    assert np.isnan(maps.rio.nodata) and np.isnan(maps.values[:, ~present]).all()

    # refused before anything is computed: a resume, a coefficient field, an existing file
    for argv, match in (
        (["segment", str(geotiff), str(tmp_path / "labels.tif"), *seg, "--resume"], "--resume"),
        (["coefficients", str(geotiff), str(tmp_path / "c.tif")], "Zarr store"),
        (["segment", str(geotiff), str(tmp_path / "labels.tif"), *seg], "--overwrite"),
        # a scene is no OME-Zarr grid: its CRS said first (it said north-up, which a scene
        # whose y runs up is not, and is refused alike)
        (
            ["segment", str(geotiff), str(tmp_path / "l.ome.zarr"), *seg],
            r"georeferenced.*\*\.tif, not \*\.ome\.zarr",
        ),
        (["maps", str(geotiff), str(tmp_path / "maps.zarr"), *field], r"georeferenced.*\*\.tif"),
    ):
        with pytest.raises(xfskde.exceptions.XfskdeError, match=match):
            main(["--debug", *argv])
    assert not (tmp_path / "l.ome.zarr").exists() and not (tmp_path / "maps.zarr").exists()
    # a failed write leaves neither a file nor its part
    from xfskde.io import geotiff as module

    def broken(result, path, **_):
        path.write_bytes(b"half a GeoTIFF")
        raise OSError("disk full")

    monkeypatch.setattr(module, "write_geotiff", broken)
    with pytest.raises(OSError):
        main(["--debug", "segment", str(geotiff), str(tmp_path / "new.tif"), *seg])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("new")) == []


def test_a_scene_s_band_names_are_its_channels_at_every_level(tmp_path, capsys):
    """GDAL's band descriptions (what QGIS shows, rasterio's ``descriptions``) name the ``c``
    coordinate as an OME-TIFF's channel names do, and a model fitted on the scene puts a scene
    of the same bands in another order in its own and refuses other bands; an overview keeps
    the scene's names, scale and offset (rioxarray gives an overview's bands none)."""
    from xfskde.cli import main
    from xfskde.datasets import random_textures

    image, truth = random_textures((256, 256), seed=100)
    x = TRANSFORM.c + (np.arange(256) + 0.5) * TRANSFORM.a
    y = TRANSFORM.f + (np.arange(256) + 0.5) * TRANSFORM.e
    bands = np.moveaxis(np.round(image * 8000 + 1000), -1, 0).astype(np.uint16)

    def scene(order, name):
        stored = xr.DataArray(bands[list(order)], dims=("band", "y", "x"),
                              coords={"band": [1, 2, 3], "y": y, "x": x})  # fmt: skip
        stored = stored.rio.write_crs(CRS).rio.write_transform(TRANSFORM).rio.write_nodata(0)
        stored.attrs.update(scale_factor=1e-4, add_offset=-0.1)
        stored.attrs["long_name"] = tuple(("B02", "B03", "B04")[i] for i in order)
        stored.rio.to_raster(tmp_path / name, driver="COG", blocksize=64)
        return tmp_path / name

    first, swapped = scene((0, 1, 2), "first.tif"), scene((2, 0, 1), "swapped.tif")
    opened = open_image(first)
    assert list(opened.c.values) == ["B02", "B03", "B04"]
    picked = open_image(first, channels=["B04", "B02"])  # its per-band attrs follow
    assert picked.attrs["long_name"] == ("B04", "B02") and picked.sizes["c"] == 2
    overview = open_image(first, level=1)
    assert list(overview.c.values) == ["B02", "B03", "B04"] and overview.shape[0] == 128
    assert overview.attrs["scale_factor"] == 1e-4 and overview.attrs["add_offset"] == -0.1
    main(["info", str(first)])
    assert "B02, B03, B04" in capsys.readouterr().out
    labels, model = xfskde.segment(opened, 3, sample=3000, return_model=True)
    assert model.channel_names == ("B02", "B03", "B04")
    assert xfskde.rand_index(truth, labels.values) > 0.95  # measured 0.970
    again = xfskde.segment(open_image(swapped), 3, model=model)
    np.testing.assert_array_equal(again.values, labels.values)  # put in the model's order
    assert again.attrs["channels_reordered"] == '["B04", "B02", "B03"]'
    by_name = opened.rename(c="band").assign_coords(band=["B02", "B03", "B08"])
    with pytest.raises(ParameterError, match=r"B02, B03, B08.*B04 is not among them"):
        xfskde.segment(by_name, 3, model=model)  # a DataArray's band coordinate names them too


def test_the_energy_map_of_a_scaled_scene_is_in_its_decoded_values(tmp_path, capsys):
    """A scene of reflectances stored as integers with a GDAL scale of 1e-4 (and an offset):
    ``xfskde maps`` writes the energy of the reflectances, not of the stored integers, and
    ``xfskde info`` says how the values are stored."""
    from xfskde.cli import main

    x = TRANSFORM.c + (np.arange(NX) + 0.5) * TRANSFORM.a
    y = TRANSFORM.f + (np.arange(NY) + 0.5) * TRANSFORM.e
    stored = xr.DataArray(_pixels(), dims=("y", "x"), coords={"y": y, "x": x}, name="B04")
    stored = stored.rio.write_crs(CRS).rio.write_transform(TRANSFORM).rio.write_nodata(0)
    stored.attrs.update(scale_factor=1e-4, add_offset=-0.1)
    stored.rio.to_raster(tmp_path / "scaled.tif", tiled=True, blockxsize=32, blockysize=32)
    _write_image(tmp_path / "plain.tif")  # the same integers, no scale
    field = ["--order", "4", "--window", "box", "--size", "8", "--stride", "8", "--no-progress"]
    for name in ("scaled", "plain"):
        assert main(["maps", str(tmp_path / f"{name}.tif"), str(tmp_path / f"{name}-maps.tif"),
                     *field]) == 0  # fmt: skip
    scaled = rioxarray.open_rasterio(tmp_path / "scaled-maps.tif").values
    plain = rioxarray.open_rasterio(tmp_path / "plain-maps.tif").values
    np.testing.assert_allclose(scaled[:2], plain[:2])  # orientation, coherence: no unit
    np.testing.assert_allclose(scaled[2], plain[2] * 1e-4, rtol=1e-6)
    assert np.nanmax(plain[2]) > 5 and np.nanmax(scaled[2]) < 1e-3  # stored vs reflectance
    capsys.readouterr()
    assert main(["info", str(tmp_path / "scaled.tif")]) == 0
    assert "values      stored x 0.0001 -0.1 (GDAL scale, offset" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "plain.tif")]) == 0
    assert "values " not in capsys.readouterr().out
    # the API alike: the field records the scale, its energy is of the decoded values, and so
    # is that of the coefficients stored and opened again
    field = xfskde.local_fskde(open_image(tmp_path / "scaled.tif"), **PARAMS)
    assert field.attrs["input_scale_factor"] == 1e-4 and "input_units" not in field.attrs
    plain_field = xfskde.local_fskde(open_image(tmp_path / "plain.tif"), **PARAMS)
    np.testing.assert_allclose(field.fskde.energy().values,
                               plain_field.fskde.energy().values * 1e-4, rtol=1e-6)  # fmt: skip
    write_coefficients(field, tmp_path / "field.zarr")
    stored = open_coefficients(tmp_path / "field.zarr")
    np.testing.assert_allclose(stored.fskde.energy().values, field.fskde.energy().values)
    # decoded on opening (mask_and_scale): its values are reflectances already, not rescaled
    decoded = rioxarray.open_rasterio(tmp_path / "scaled.tif", mask_and_scale=True)
    assert xfskde._labels.value_scale(decoded.squeeze("band", drop=True)) == (1.0, None)


def test_segment_writes_abundances_as_a_geotiff_and_a_store(geotiff, tmp_path, capsys):
    """A remote-sensing user's fraction maps: ``--abundances`` writes each texture's share as
    a float32 band (``texture 1`` ..) of a GeoTIFF QGIS opens — CRS and grid kept, NaN the
    nodata, the shares summing to 1, overviews averaged — or a resumable Zarr store; the
    labels are their arg-max. Before, only an OME-Zarr or OME-TIFF held them."""
    from xfskde.cli import main

    argv = ["--textures", "2", "--size", "3", "--sample", "2000", "--no-progress"]
    out, store = tmp_path / "fractions.tif", tmp_path / "fractions.zarr"
    assert main(["segment", str(geotiff), str(out), *argv, "--abundances"]) == 0
    assert "abundances (96, 128)" in capsys.readouterr().out
    back = rioxarray.open_rasterio(out)
    assert back.dtype == np.float32 and np.isnan(back.rio.nodata)
    assert back.attrs["long_name"] == ("texture 1", "texture 2")
    assert back.rio.crs == open_image(geotiff).rio.crs and back.rio.transform() == TRANSFORM
    shares = back.values
    present = ~np.isnan(shares).any(axis=0)
    assert not present[:, :24].any() and present[:-16, 24:].all()  # the scene's nodata border
    np.testing.assert_allclose(shares[:, present].sum(axis=0), 1, atol=1e-5)
    with rasterio.open(out) as src:  # a share: unit 1, as the other maps' bands
        assert src.units == ("1", "1") and src.descriptions == ("texture 1", "texture 2")
    assert main(["segment", str(geotiff), str(tmp_path / "labels.tif"), *argv]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "labels.tif")]) == 0  # what it records, as an OME-TIFF
    assert "GDAL metadata: " in (said := capsys.readouterr().out)
    assert "the texture model of 2 textures" in said
    assert main(["info", str(geotiff)]) == 0 and "xfskde " not in capsys.readouterr().out
    labels = rioxarray.open_rasterio(tmp_path / "labels.tif").values[0]
    np.testing.assert_array_equal(labels[present], shares[:, present].argmax(axis=0) + 1)
    assert main(["segment", str(geotiff), str(store), *argv, "--abundances"]) == 0
    stored = xfskde.io.open_blocks(store)
    assert stored.dims == ("y", "x", "texture") and list(stored.texture.values) == [
        "texture 1", "texture 2"]  # fmt: skip
    np.testing.assert_allclose(np.moveaxis(stored.values, -1, 0), shares, rtol=1e-6)
    capsys.readouterr()
    assert main(["segment", str(geotiff), str(store), *argv, "--resume"]) == 2
    assert "it holds 'abundances', not 'labels'" in capsys.readouterr().err
    assert main(["segment", str(geotiff), str(tmp_path / "a.png"), *argv, "--abundances"]) == 2
    assert "a PNG holds labels" in capsys.readouterr().err


def test_bands_of_scales_of_their_own_are_decoded_before_their_gradients(tmp_path, capsys):
    """A stack of two products (a reflectance × 10 000 beside a quantity stored × 5 000: GDAL
    scales 1e-4 and 2e-4 per band): its field was of the stored integers, the gradient's
    channel of largest |g| chosen among values in two units, and its energy named
    "reflectance/pixel" at 400-700 times the decoded one. Each band is now decoded by its own
    scale before the gradient: the field is that of the decoded bands, by the API and the
    command alike."""
    from xfskde.cli import main

    x = TRANSFORM.c + (np.arange(NX) + 0.5) * TRANSFORM.a
    y = TRANSFORM.f + (np.arange(NY) + 0.5) * TRANSFORM.e
    first = _pixels()
    second = np.ascontiguousarray(first[:, ::-1])
    stored = xr.DataArray(np.stack([first, second]), dims=("band", "y", "x"),
                          coords={"band": [1, 2], "y": y, "x": x})  # fmt: skip
    stored = stored.rio.write_crs(CRS).rio.write_transform(TRANSFORM)
    stored.attrs.update(scales=(1e-4, 2e-4), offsets=(0.0, 0.0), units="reflectance")
    stored.rio.to_raster(tmp_path / "stack.tif", tiled=True, blockxsize=32, blockysize=32)
    opened = open_image(tmp_path / "stack.tif")
    assert tuple(opened.attrs["scales"]) == (1e-4, 2e-4)
    field = xfskde.local_fskde(opened, **PARAMS)
    assert field.attrs["input_band_scales"] == [1e-4, 2e-4]
    assert "input_scale_factor" not in field.attrs
    scales = np.array([1e-4, 2e-4], np.float32)[:, None, None]  # in float32, as decoded
    decoded = xr.DataArray(np.stack([first, second]) * scales, dims=("c", "y", "x"),
                           coords={"y": y, "x": x})  # fmt: skip
    expected = xfskde.local_fskde(decoded, **PARAMS)
    np.testing.assert_allclose(field.values, expected.values, rtol=1e-5, atol=1e-9)
    energy = field.fskde.energy()
    assert energy.attrs["units"] == "reflectance/pixel" and float(energy.max()) < 0.1
    np.testing.assert_allclose(energy.values, expected.fskde.energy().values, rtol=1e-5)
    assert main(["maps", str(tmp_path / "stack.tif"), str(tmp_path / "maps.tif"),
                 "--order", "4", "--window", "box", "--size", "8", "--stride", "8",
                 "--no-progress"]) == 0  # fmt: skip
    maps = rioxarray.open_rasterio(tmp_path / "maps.tif").values
    np.testing.assert_allclose(maps[2], energy.values, rtol=1e-5)
    capsys.readouterr()
    assert main(["info", str(tmp_path / "stack.tif")]) == 0
    assert "stored x 0.0001, 0.0002 band by band in reflectance" in capsys.readouterr().out
    # rioxarray's own decoding (mask_and_scale=True): the values are decoded already
    read = rioxarray.open_rasterio(tmp_path / "stack.tif", mask_and_scale=True)
    assert xfskde._labels.band_scales(read) is None


@pytest.mark.slow
def test_a_geotiff_that_could_pass_4_gb_is_a_bigtiff(tmp_path):
    """GDAL's default cannot tell whether a compressed file will pass 4 GB, and fails when it
    does: a result of more than 4 GB uncompressed is written as BigTIFF (a lazy 34000² float32
    map of zeros, 4.6 GB, 5 s), a small one stays a classic TIFF."""
    import dask.array as da
    import tifffile

    def grid(n):
        return {"y": np.arange(float(n)), "x": np.arange(float(n))}

    big = xr.DataArray(da.zeros((34000, 34000), np.float32, chunks=8192), dims=("y", "x"),
                       coords=grid(34000))  # fmt: skip
    with tifffile.TiffFile(write_geotiff(big, tmp_path / "big.tif")) as tif:
        assert tif.is_bigtiff
    small = xr.DataArray(np.zeros((64, 64), np.float32), dims=("y", "x"), coords=grid(64))
    with tifffile.TiffFile(write_geotiff(small, tmp_path / "small.tif")) as tif:
        assert not tif.is_bigtiff


def test_a_microscope_result_keeps_its_pixel_size_in_the_tiff(geotiff, tmp_path):
    """Without a CRS, a result in µm gets TIFF resolution tags (pixels per cm), which
    open_image, tifffile, Fiji and QuPath read: the labels of a 0.325 µm OME-TIFF reopen with
    0.325 µm pixels (they reopened at 1 px: GDAL's transform alone is read by GDAL only)."""
    import tifffile

    from xfskde.cli import main

    pixels = data.camera()[256:352, 128:256]  # the photographer and the grass
    tifffile.imwrite(tmp_path / "cells.ome.tif", pixels, ome=True, metadata={
        "axes": "YX", "PhysicalSizeX": 0.325, "PhysicalSizeY": 0.325})  # fmt: skip
    argv = ["--textures", "2", "--size", "4", "--sample", "2000", "--no-progress"]
    assert main(["segment", str(tmp_path / "cells.ome.tif"), str(tmp_path / "l.tif"), *argv]) == 0
    labels = open_image(tmp_path / "l.tif")
    assert labels.x.attrs["units"] == "µm"
    np.testing.assert_allclose(np.diff(labels.x.values), 0.325, rtol=1e-6)
    np.testing.assert_allclose(np.diff(labels.y.values), 0.325, rtol=1e-6)
    with tifffile.TiffFile(tmp_path / "l.tif") as tif:
        assert int(tif.pages[0].resolutionunit) == 3  # centimetre
    # read in cells (--mpp 0.65: 2 × 2 pixels), the labels' first pixel centre lies half a
    # source pixel in, as the image read so has it (the GeoTransform's origin; read at 0)
    tifffile.imwrite(tmp_path / "wide.ome.tif", data.camera()[128:384, 128:384], ome=True,
                     metadata={"axes": "YX", "PhysicalSizeX": 0.325,
                               "PhysicalSizeY": 0.325})  # fmt: skip
    cells = ["segment", str(tmp_path / "wide.ome.tif"), str(tmp_path / "c.tif"), "--mpp", "0.65"]
    assert main([*cells, *argv]) == 0
    binned = open_image(tmp_path / "wide.ome.tif", mpp=0.65)
    labels = open_image(tmp_path / "c.tif")
    np.testing.assert_allclose(labels.y.values, binned.y.values, rtol=0, atol=1e-6)
    np.testing.assert_allclose(labels.x.values, binned.x.values, rtol=0, atol=1e-6)
    assert float(labels.y[0]) == pytest.approx(0.1625)
    # a georeferenced result keeps its GeoTransform and gets no resolution tags
    field = xfskde.local_fskde(open_image(geotiff), **PARAMS).fskde.energy()
    with tifffile.TiffFile(write_geotiff(field, tmp_path / "e.tif")) as tif:
        assert int(tif.pages[0].resolutionunit) != 3


def test_write_geotiff_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(DimensionError):
        write_geotiff(xr.DataArray(np.zeros((2, 2, 2, 2))), tmp_path / "a.tif")
    with pytest.raises(ParameterError):
        write_geotiff(xr.DataArray(np.zeros((2, 2)), dims=("y", "x")), tmp_path / "b.tif", tile=10)


# --- the example -------------------------------------------------------------------------------


def _example():
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "geospatial.py"
    spec = importlib.util.spec_from_file_location("_example_geospatial", script)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_the_example_shows_what_it_says(tmp_path):
    results = _example().main(["--size", "128", "--out", str(tmp_path)])
    assert results["cell_metres"] == 80.0 and results["bounds_error_metres"] == 0.0
    assert results["edge_ratio_nodata_as_data"] > 2 and results["edge_ratio_nodata_omitted"] < 1.2
    assert results["geotiff_max_error"] == 0.0 and results["geotiff_same_transform"] == 1.0
    assert results["geotiff_same_nodata"] == 1.0
    assert results["stripes_coherence"] > 0.5
    # stripes of 60 DN x 1.6 (B08) over periods of 6-12 px: |g| of a few 1e-3 in reflectance
    assert 1e-3 < results["energy_reflectance_per_pixel"] < 2e-2  # measured 0.0058 at 256²
    assert results["reordered_same_labels"] == 1.0
    assert results["fractions_sum_error"] < 1e-5  # the shares of each pixel sum to 1
    assert results["fractions_argmax_is_labels"] > 0.999  # the labels are their arg-max
    # the area of interest, drawn in WGS 84, is the square of UTM pixels it was made from
    assert abs(results["aoi_share"] - results["aoi_square"]) < 0.002
    # JPEG 2000 bands stacked by a VRT, labelled inside one class of a scene classification
    assert results["vrt_same_labels_inside"] == 1.0 and results["vrt_labels_outside_class"] == 0
    assert {p.name for p in tmp_path.glob("*.tif")} == {
        "scene.tif", "cells.tif", "orientation.tif", "coherence.tif", "bands.tif",
        "reordered.tif", "band-maps.tif", "labels.tif", "again.tif", "fractions.tif",
        "aoi-labels.tif", "vrt-labels.tif",
    }  # fmt: skip


def test_the_example_without_rioxarray_is_a_note(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "rioxarray", None)
    assert _example().main(["--size", "128"]) == {}
    assert "xfskde[geo]" in capsys.readouterr().out


def test_pixels_are_square_or_not_on_the_ground():
    """A geographic grid of equal degree steps was taken for square pixels (its coordinate
    steps are equal): at 45° N its 0.0001° pixels are 11.1 m tall and 7.9 m wide, so gradient
    angles on the grid are not those on the ground. The warning measures pixels on the ground:
    there, and for a 10 × 20 m UTM grid, it warns; at the equator and for 10 m UTM it does not."""
    import warnings

    from xfskde.exceptions import PixelAspectWarning

    def scene(crs, y0, x0, dy, dx):
        y, x = y0 - dy * (np.arange(64) + 0.5), x0 + dx * (np.arange(64) + 0.5)
        image = xr.DataArray(data.camera()[:64, :64], dims=("y", "x"), coords={"y": y, "x": x})
        return image.rio.write_crs(crs)

    with pytest.warns(PixelAspectWarning, match=r"11\.11 x 7\.88\d m on the ground \(y x\)"):
        xfskde.local_fskde(scene("EPSG:4326", 45.0, 7.0, 1e-4, 1e-4), order=4, stride=8)
    with pytest.warns(PixelAspectWarning, match=r"10 x 20.01 m on the ground.*reproject"):
        xfskde.local_fskde(scene(CRS, 5e6, 4e5, 10.0, 20.0), order=4, stride=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PixelAspectWarning)
        xfskde.local_fskde(scene("EPSG:4326", 0.0032, 7.0, 1e-4, 1e-4), order=4, stride=8)
        xfskde.local_fskde(scene(CRS, 5e6, 4e5, 10.0, 10.0), order=4, stride=8)


def test_a_rotated_grid_is_flagged(geotiff, tmp_path):
    """A GeoTIFF whose GeoTransform is rotated 17° from its CRS's axes: its gradient angles
    are the pixel grid's, not from east, which a map of orientations in a GIS would read as
    compass angles. local_fskde (and xfskde maps) now say so; a north-up scene does not."""
    import warnings

    from rasterio.transform import Affine

    from xfskde.exceptions import PixelAspectWarning

    path = tmp_path / "rotated.tif"
    transform = Affine.translation(4e5, 5e6) * Affine.rotation(17) * Affine.scale(10, -10)
    with rasterio.open(path, "w", driver="GTiff", height=64, width=64, count=1, dtype="uint8",
                       crs=CRS, transform=transform) as out:  # fmt: skip
        out.write(data.camera()[:64, :64], 1)
    with pytest.warns(PixelAspectWarning, match="rotated 17° from its CRS's x axis"):
        xfskde.local_fskde(open_image(path), order=4, stride=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PixelAspectWarning)
        xfskde.local_fskde(open_image(geotiff), order=4, stride=8)


def test_a_grid_in_degrees_without_a_crs_is_measured_on_the_ground():
    """A NetCDF grid in degrees (dims lat/lon, or coords in degrees_north/degrees_east, as CF
    names them) has no CRS coordinate, so its pixels were taken for square: at 60° N equal
    degree steps are 2x taller than wide on the ground. They are measured on WGS84 now; and a
    grid whose dims are not named y and x was not checked at all."""
    import warnings

    from xfskde._labels import ground_pixel_size
    from xfskde.exceptions import PixelAspectWarning

    pixels = data.camera()[:128, :128].astype(float)
    degrees = {"lat": np.linspace(60, 59, 128), "lon": np.linspace(10, 11, 128)}
    north = xr.DataArray(pixels, dims=("lat", "lon"), coords=degrees)
    size = ground_pixel_size(north)
    assert size is not None and abs(size[0] / size[1] - 1.97) < 0.01 and 870 < size[0] < 880
    with pytest.warns(PixelAspectWarning, match=r"87\d\.\d x 44\d(\.\d)? m on the ground"):
        xfskde.local_fskde(north, order=4, stride=16)
    by_units = north.rename(lat="row", lon="col")
    by_units.row.attrs["units"], by_units.col.attrs["units"] = "degrees_north", "degrees_east"
    assert ground_pixel_size(by_units) == pytest.approx(size)
    steps = {"row": np.arange(128) * 2.0, "col": np.arange(128) * 1.0}
    stretched = xr.DataArray(pixels, dims=("row", "col"), coords=steps)
    with pytest.warns(PixelAspectWarning, match=r"2 x 1 coordinate units"):
        xfskde.local_fskde(stretched, order=4, stride=16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PixelAspectWarning)
        xfskde.local_fskde(north.assign_coords(lat=np.linspace(0.5, -0.5, 128)), order=4,
                           stride=16)  # fmt: skip


def test_the_automatic_mask_of_a_scene_is_its_data_not_a_slide_s_tissue(tmp_path):
    """``mask="auto"`` took any 3- or 4-channel image for a brightfield slide: on an 8-bit RGB
    orthophoto a bright roof was glass and a dark lake a scanner's padding, 24 % of the scene
    left out (and a 16-bit four-band scene went the same way). A scene, by its CRS or by its
    bands' depth, is masked by its data (nonzero and not nodata); the mask keeps its CRS and
    grid, and rioxarray reads it back so, and segmentation takes that file as its mask. An RGB
    slide (8-bit, or floats in [0, 1]) is still masked by its glass."""
    from xfskde.masks import tissue_mask

    rng = np.random.default_rng(0)
    n = 256
    rgb = rng.integers(20, 220, (n, n, 3)).astype(np.uint8)
    rgb[20:100, 20:120] = 235 + rng.integers(-1, 2, (80, 100, 3))  # a roof: bright, colourless
    rgb[150:240, 120:240] = 12 + rng.integers(-1, 2, (90, 120, 3))  # a lake: dark
    x = TRANSFORM.c + (np.arange(n) + 0.5) * TRANSFORM.a
    y = TRANSFORM.f + (np.arange(n) + 0.5) * TRANSFORM.e
    scene = xr.DataArray(np.moveaxis(rgb, -1, 0), dims=("band", "y", "x"),
                         coords={"band": [1, 2, 3], "y": y, "x": x})  # fmt: skip
    scene.rio.write_crs(CRS).rio.to_raster(tmp_path / "ortho.tif")
    mask = tissue_mask(tmp_path / "ortho.tif", margin=0)
    assert mask.attrs["method"] == "nonzero"
    assert mask.values.all()  # brightfield: 0.76 of it
    mask.astype(np.uint8).rio.to_raster(tmp_path / "mask.tif")
    back = rioxarray.open_rasterio(tmp_path / "mask.tif")
    assert back.rio.crs == rasterio.crs.CRS.from_string(CRS)
    assert back.rio.transform() == TRANSFORM
    # and it masks the scene from its file: the tags it was written with hold its mask_of as
    # text ("[256, 256]"), which failed ("invalid literal for int() with base 10: '['"); the
    # labels record the file, from the API and the command line alike (which said "an array")
    from xfskde.cli import main

    labels = xfskde.segment(xfskde.open_image(tmp_path / "ortho.tif"), 2,
                            mask=str(tmp_path / "mask.tif"))  # fmt: skip
    assert labels.attrs["mask"] == str(tmp_path / "mask.tif") and "mask_version" in labels.attrs
    out = tmp_path / "labels.zarr"
    argv = ["segment", str(tmp_path / "ortho.tif"), str(out), "--textures", "2", "--no-progress"]
    assert main([*argv, "--mask", str(tmp_path / "mask.tif")]) == 0
    stored = xfskde.open_image(out)
    assert stored.attrs["mask"] == str(tmp_path / "mask.tif")
    np.testing.assert_array_equal(stored.values, labels.values)
    # a 16-bit four-band scene without a CRS: its data, not a slide's tissue
    bands = np.concatenate([rgb, rgb[..., :1]], axis=-1).astype(np.uint16) * 40
    bands[:, :64] = 0
    mask = tissue_mask(bands, margin=0)
    assert mask.attrs["method"] == "nonzero"
    assert mask.values[:, 64:].all() and not mask.values[:, :64].any()
    # the same RGB in memory, as a slide would be (8-bit, or floats in [0, 1]): brightfield,
    # the roof is glass
    for slide in (rgb, rgb / 255.0):
        mask = tissue_mask(slide, margin=0)
        assert mask.attrs["method"] == "brightfield" and not mask.values[40:80, 40:100].any()


@pytest.mark.parametrize("internal", [True, False], ids=["internal", "msk-file"])
def test_a_geotiff_s_transparency_mask_makes_its_pixels_missing(tmp_path, capsys, internal):
    """An orthophoto COG compressed as JPEG holds no nodata value: GDAL writes a transparency
    mask beside each level (``-mask``), which was read as a second image and left aside, the
    area outside the footprint analysed as data (JPEG's noise there: 5 % of it foreground to
    ``"auto"``, a texture of its own). Its pixels 0 are missing, at every level, as rasterio
    reads them; segmentation labels them 0. So with the mask in a file beside the TIFF
    (``ortho.tif.msk``, where rasterio's ``write_mask`` puts it by default), which was not
    read at all."""
    from xfskde.cli import main
    from xfskde.datasets import random_textures
    from xfskde.io.images import image_levels
    from xfskde.metrics import rand_index

    rgb, truth = random_textures((512, 512), seed=3)
    pixels = (rgb * 255).astype(np.uint8).transpose(2, 0, 1)
    footprint = np.zeros((512, 512), bool)
    footprint[:, 100:] = True
    pixels[:, ~footprint] = 0
    path = tmp_path / "ortho.tif"
    profile = dict(driver="GTiff", width=512, height=512, count=3, dtype="uint8", crs=CRS,
                   transform=Affine(0.5, 0, 300000, 0, -0.5, 5000000), tiled=True,
                   blockxsize=256, blockysize=256, compress="JPEG",
                   photometric="YCBCR")  # fmt: skip
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=internal):
        with rasterio.open(path, "w", **profile) as file:
            file.write(pixels)
            file.write_mask(footprint.astype(np.uint8) * 255)
        with rasterio.open(path, "r+") as file:
            file.build_overviews([2])
    assert (tmp_path / "ortho.tif.msk").exists() != internal
    import tifffile

    for level in (0, 1):
        image = open_image(path, level=level)
        with rasterio.open(path, overview_level=level - 1 if level else None) as file:
            present = file.read_masks(1) > 0  # GDAL's reading of the mask
        assert image.dtype == np.float32 and image.attrs["source_dtype"] == "uint8"
        values = image.values
        np.testing.assert_array_equal(np.isnan(values).any(axis=-1), ~present)
        stored = tifffile.imread(path, series=0, level=level)  # (GDAL's YCbCr JPEG decoding
        np.testing.assert_array_equal(values[present], stored[present])  # differs at edges)
    assert image_levels(path)[0].dtype == np.float32
    assert not xfskde.masks.tissue_mask(path, margin=0).values[:, :100].any()
    out = tmp_path / "labels.tif"
    assert main(["segment", str(path), str(out), "--textures", "3"]) == 0
    with rasterio.open(out) as file:
        labels = file.read(1)
    assert (labels[:, :100] == 0).all() and (labels[:, 100:] > 0).all()
    assert rand_index(labels[:, 110:], truth[:, 110:]) > 0.95
    capsys.readouterr()
    assert main(["info", str(path)]) == 0
    said = capsys.readouterr().out
    if internal:
        assert "1, and its transparency mask" in said
        return
    assert "ortho.tif.msk beside it (GDAL's transparency mask" in said
    # the mask is part of the input: a store of its labels goes stale when it is rewritten
    store = tmp_path / "labels.zarr"
    assert main(["segment", str(path), str(store), "--textures", "3", "--no-progress"]) == 0
    footprint[:, 100:140] = False
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=False), rasterio.open(path, "r+") as file:
        file.write_mask(footprint.astype(np.uint8) * 255)
    assert (tmp_path / "ortho.tif.msk").stat().st_size > 0
    capsys.readouterr()
    assert main(["info", str(store)]) == 0
    assert "has changed since this store was computed" in capsys.readouterr().out
    # overviews built before the mask: GDAL reads them all valid; refused, naming gdaladdo
    late = tmp_path / "late.tif"
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=False):
        with rasterio.open(late, "w", **profile) as file:
            file.write(pixels)
        with rasterio.open(late, "r+") as file:
            file.build_overviews([2])
        with rasterio.open(late, "r+") as file:
            file.write_mask(footprint.astype(np.uint8) * 255)
    assert np.isnan(open_image(late).values[:, :100]).all()
    with pytest.raises(ImageReadError, match=r"late.tif.msk.*no level of 256x256.*gdaladdo"):
        open_image(late, level=1)


def test_a_scene_georeferenced_by_gcps_only(tmp_path, capsys):
    """A GeoTIFF placed by ground control points alone (no GeoTransform). A stride-8 map
    copied the full-resolution GCPs onto its 8x coarser grid, so GDAL placed it 8 times too
    small in the scene's corner: its GCPs are now on its cells (pixel/line over 8, the cells
    anchored at the image's corner), and GDAL places it over the scene. Its labels as regions
    (pixel coordinates named EPSG:32633, y mirrored) are refused before the fit, naming the
    way (a GeoTIFF keeps the GCPs); ``xfskde info`` says how it is georeferenced."""
    from rasterio.control import GroundControlPoint
    from rasterio.transform import from_gcps

    from xfskde.cli import main
    from xfskde.io.geojson import labels_geojson

    path = str(tmp_path / "gcp.tif")
    corners = [(0, 0, 500_000, 4_600_000), (0, 160, 501_600, 4_600_000),
               (128, 0, 500_000, 4_598_720), (128, 160, 501_600, 4_598_720)]  # fmt: skip
    points = [GroundControlPoint(row, col, x, y) for row, col, x, y in corners]
    pixels = np.random.default_rng(0).integers(100, 1100, (128, 160)).astype(np.uint16)
    profile = {"driver": "GTiff", "width": 160, "height": 128, "count": 1, "dtype": "uint16"}
    with rasterio.open(path, "w", **profile) as file:
        file.write(pixels, 1)
        file.gcps = (points, rasterio.crs.CRS.from_epsg(32633))
    out = str(tmp_path / "maps.tif")
    args = ["--window", "box", "--size", "8", "--stride", "8", "--no-progress"]
    assert main(["maps", path, out, *args]) == 0
    with rasterio.open(out) as written:
        gcps, crs = written.gcps
        assert written.shape == (16, 20) and crs.to_epsg() == 32633
        assert [(p.row, p.col) for p in gcps] == [(r / 8, c / 8) for r, c, _, _ in corners]
        placed = from_gcps(gcps)
        assert placed * (0, 0) == (500_000, 4_600_000)
        assert placed * (written.width, written.height) == (501_600, 4_598_720)
    capsys.readouterr()
    assert main(["segment", path, str(tmp_path / "labels.gpkg"), "--textures", "2"]) == 2
    err = capsys.readouterr().err
    assert "is georeferenced by 4 ground control points only" in err
    assert "write the labels as *.tif, which keeps the GCPs" in err
    labels = xr.DataArray(np.ones((128, 160), np.uint8), dims=("y", "x")).assign_coords(
        spatial_ref=open_image(path).spatial_ref
    )
    with pytest.raises(ParameterError, match="ground control points only"):
        labels_geojson(labels)
    assert main(["info", path]) == 0
    assert "by 4 ground control points (GCPs), no GeoTransform" in capsys.readouterr().out


def test_a_lon_lat_grid_is_read_with_latitude_down_the_rows_in_either_order():
    """A NetCDF grid in degrees may come (lat, lon) or (lon, lat) (many climate and ocean files
    store longitude first). Its dims say which is which, as ``y`` and ``x`` do: the latitude is
    the result's y in either order. (lon, lat) was read as y = longitude: east-west stripes
    came out north-south (mean cos 2ω -1 instead of 1), with longitudes in y."""
    from xfskde._labels import ground_pixel_size, image_dims

    lat, lon = np.linspace(10.63, 10.0, 64), np.linspace(20.0, 20.63, 64)
    stripes = np.sin(2 * np.pi * np.arange(64) / 8)[:, None] * np.ones(64)  # along latitude
    grid = xr.DataArray(
        stripes,
        dims=("lat", "lon"),
        coords={"lat": ("lat", lat, {"units": "degrees_north"}), "lon": lon},
        name="sst",
        attrs={"units": "K"},
    )
    swapped = grid.transpose("lon", "lat")
    assert image_dims(swapped) == ("lat", "lon", None)
    assert ground_pixel_size(swapped) == ground_pixel_size(grid) is not None
    field = grid.fskde.coefficients(**PARAMS)
    xr.testing.assert_identical(swapped.fskde.coefficients(**PARAMS), field)
    np.testing.assert_allclose(field["y"], lat.reshape(8, 8).mean(axis=1))  # latitudes in y
    assert (
        field["y"].attrs == {"units": "degrees_north"} and field.attrs["source_dims"] == "lat lon"
    )
    omega = swapped.fskde.coefficients(**PARAMS).fskde.orientation()
    np.testing.assert_allclose(np.cos(2 * omega), 1.0, atol=1e-6)  # east-west: ω = 0
    # the long names, a colour dim, a stack of planes, and a segmentation alike
    long_names = grid.rename(lat="latitude", lon="longitude")
    bands = xr.concat([long_names, 2 * long_names], dim="band")
    for image in (bands.transpose("band", "longitude", "latitude"),
                  bands.transpose("longitude", "latitude", "band")):  # fmt: skip
        assert image_dims(image)[:2] == ("latitude", "longitude")
        np.testing.assert_array_equal(
            image.fskde.coefficients(**PARAMS).values,
            bands.transpose("latitude", "longitude", "band").fskde.coefficients(**PARAMS).values,
        )
    stack = xr.concat([grid, -grid], dim="time").transpose("time", "lon", "lat")
    fields = stack.fskde.coefficients(**PARAMS)
    assert fields.dims == ("time", "y", "x", "k")
    np.testing.assert_array_equal(fields.isel(time=0).values, field.values)
    np.testing.assert_array_equal(
        xfskde.segment(swapped, 2, size=4).values, xfskde.segment(grid, 2, size=4).values
    )
    # coords in degrees_north and degrees_east say it as the names do (CF)
    by_units = grid.rename(lat="row", lon="col")
    by_units.col.attrs["units"] = "degrees_east"
    assert image_dims(by_units.transpose("col", "row")) == ("row", "col", None)


def _dem() -> np.ndarray:
    dem = data.camera()[:64, :64].astype(np.float32) / 4
    dem[:8, :8] = -9999.0  # nodata the data still hold
    dem[40:44, 48:56] = np.nan  # and pixels already NaN
    return dem


def test_a_float_image_s_nodata_is_masked_whatever_the_encoding_says(tmp_path):
    """A float image whose encoding holds a fill was taken for decoded (NaN already), and its
    nodata never masked: rio.write_nodata(-9999, encoded=True) leaves -9999 in the data, and
    xarray gives a reopened netCDF float variable an encoded NaN fill beside its nodata=-9999
    attr. The number is masked, and the NaN pixels are omitted too."""
    params = dict(order=4, window="box", size=4, stride=4)
    plain = xr.DataArray(_dem(), dims=("y", "x"), name="dem")
    expected = plain.fskde.coefficients(**params, nodata=-9999)
    assert np.isnan(expected.values[..., 0]).sum() == 4 + 2  # the two blocks' cells
    encoded = plain.rio.write_nodata(-9999.0, encoded=True)
    assert "_FillValue" in encoded.encoding and (encoded.values == -9999).sum() == 64
    plain.assign_attrs(nodata=-9999.0).to_netcdf(tmp_path / "dem.nc", engine="scipy")
    with xr.open_dataarray(tmp_path / "dem.nc", engine="scipy") as reopened:
        reopened.load()
    assert np.isnan(reopened.encoding["_FillValue"]) and reopened.attrs["nodata"] == -9999
    for image in (encoded, reopened):
        field = image.fskde.coefficients(**params)
        assert field.attrs["input_nodata"] == -9999.0
        np.testing.assert_array_equal(field.values, expected.values)
        energy = field.fskde.energy()
        assert float(energy.max()) == pytest.approx(float(expected.fskde.energy().max()))
        assert float(energy.max()) < 100  # no -9999 step counted as a gradient
    assert "NaN" in reopened.fskde.coefficients(**params).attrs["input_nodata_source"]
    # a float variable decoded from stored integers holds NaN there: its fill stays NaN
    stored = xr.DataArray(np.where(np.isnan(_dem()), 0, _dem() + 10000).astype(np.uint16),
                          dims=("y", "x"), name="dem")  # fmt: skip
    stored.encoding["_FillValue"] = 0
    stored.to_netcdf(tmp_path / "stored.nc", engine="scipy")
    with xr.open_dataarray(tmp_path / "stored.nc", engine="scipy") as decoded:
        assert decoded.dtype.kind == "f" and decoded.encoding["_FillValue"] == 0
        field = decoded.fskde.coefficients(**params)
    assert field.attrs["input_nodata"] == "nan"


def test_a_nodata_value_an_integer_image_can_never_hold_is_refused():
    """nodata metadata of -9999 on an int8 image (or 1.5 on any integer image) masked
    nothing, silently: the pixels meant to be missing were used."""
    pixels = (data.camera()[:32, :32] // 4 - 32).astype(np.int8)
    image = xr.DataArray(pixels, dims=("y", "x"))
    encoded = image.copy()
    encoded.encoding["_FillValue"] = -9999
    for bad, where in (
        (image.assign_attrs(_FillValue=-9999), r"attrs\['_FillValue'\] = -9999"),
        (image.assign_attrs(nodata=1.5), r"attrs\['nodata'\] = 1.5"),
        (encoded, r"encoding\['_FillValue'\] = -9999"),
    ):
        with pytest.raises(ParameterError, match=where + r".*int8.*-128 \.\. 127.*nodata=None"):
            bad.fskde.coefficients(order=2)
        field = bad.fskde.coefficients(order=2, nodata=None)  # the way out it names
        np.testing.assert_array_equal(field.values, image.fskde.coefficients(order=2).values)
    assert image.assign_attrs(nodata=-32.0).fskde.coefficients(order=2).attrs["input_nodata"] == -32


def test_statistics_of_the_input_are_not_carried_and_a_band_unit_is(tmp_path):
    """GDAL's band statistics (rioxarray's STATISTICS_* attrs) describe the input's values:
    they rode on to the orientation and energy maps and into their GeoTIFF's tags. And
    rioxarray gives a multi-band file's units as a tuple, one per band: it was dropped, so
    the energy of reflectances said 1/pixel."""
    from rasterio.transform import from_origin

    pixels = np.stack([data.camera()[:64, :64], data.camera()[64:128, :64]] * 2)
    path = tmp_path / "scene.tif"
    profile = dict(driver="GTiff", height=64, width=64, count=4, dtype="uint16")
    with rasterio.open(path, "w", crs=CRS, transform=from_origin(0, 640, 10, 10), **profile) as f:
        f.write(pixels.astype(np.uint16))
        for band in range(1, 5):
            f.update_tags(band, STATISTICS_MAXIMUM="255", STATISTICS_MEAN="120.5",
                          STATISTICS_MINIMUM="0", STATISTICS_STDDEV="30.1")  # fmt: skip
            f.set_band_unit(band, "reflectance")
    image = rioxarray.open_rasterio(path)
    assert image.attrs["STATISTICS_MEAN"] == 120.5
    assert image.attrs["units"] == ("reflectance",) * 4
    field = image.fskde.coefficients(**PARAMS)
    maps = {
        "field": field,
        "orientation": field.fskde.orientation(),
        "energy": field.fskde.energy(),
        "labels": xfskde.segment(image, 2, size=4),
    }
    for name, result in maps.items():
        assert not [k for k in result.attrs if k.startswith("STATISTICS_")], name
        assert result.attrs["AREA_OR_POINT"] == "Area", name  # other attrs still travel
    assert field.attrs["input_units"] == "reflectance"
    assert maps["energy"].attrs["units"] == "reflectance/pixel"
    maps["orientation"].rio.to_raster(tmp_path / "orientation.tif")
    with rasterio.open(tmp_path / "orientation.tif") as written:
        assert not [k for k in written.tags() if k.startswith("STATISTICS_")]
        assert not [k for k in written.tags(1) if k.startswith("STATISTICS_")]
    # bands of different units have no one unit (and no energy unit from them)
    mixed = image.assign_attrs(units=("reflectance", "reflectance", "K", "K"))
    assert "input_units" not in mixed.fskde.coefficients(**PARAMS).attrs
    assert mixed.fskde.coefficients(**PARAMS).fskde.energy().attrs["units"] == "1/pixel"


def test_a_scene_rioxarray_read_without_its_mask_is_warned_of(tmp_path):
    """rioxarray.open_rasterio without masked=True reads a GeoTIFF's alpha band, or its
    internal transparency mask, as data: the pixels outside the footprint were segmented as a
    texture of their own, silently (Rand 0.73 / 0.78 on data pixels against 0.988 / 0.985
    from the files). One warning naming the way out; none with masked=True, nor for a scene
    without either."""
    import warnings

    from xfskde.datasets import random_textures

    image, _ = random_textures((128, 128), seed=1)
    rgb = np.moveaxis(np.round(image * 255).astype(np.uint8), -1, 0)
    alpha = np.full((1, 128, 128), 255, np.uint8)
    alpha[:, :, :30] = 0
    grid = Affine(30, 0, 500000, 0, -30, 5200000)
    profile = {"driver": "GTiff", "height": 128, "width": 128, "dtype": "uint8",
               "crs": "EPSG:32633", "transform": grid}  # fmt: skip
    with rasterio.open(tmp_path / "rgba.tif", "w", count=4, **profile) as ds:
        ds.write(np.concatenate([rgb, alpha]))
        ds.colorinterp = [ColorInterp.red, ColorInterp.green, ColorInterp.blue, ColorInterp.alpha]
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        with rasterio.open(tmp_path / "masked.tif", "w", count=3, **profile) as ds:
            ds.write(rgb)
            ds.write_mask(alpha[0])
    with rasterio.open(tmp_path / "plain.tif", "w", count=3, **profile) as ds:
        ds.write(rgb)

    def said(name, **kwargs):
        scene = rioxarray.open_rasterio(tmp_path / name, **kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            xfskde.segment(scene, 3, features=("color",), size=4)
        return [str(w.message) for w in caught if "rioxarray.open_rasterio" in str(w.message)]

    assert len(found := said("rgba.tif")) == 1 and "an alpha band (band 4 of 4)" in found[0]
    assert "xfskde.open_image(path)" in found[0]
    assert len(found := said("masked.tif")) == 1 and "a transparency mask" in found[0]
    assert said("rgba.tif", masked=True) == [] and said("plain.tif") == []
