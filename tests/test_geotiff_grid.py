"""GeoTIFFs of results lie where GDAL reads their input, and labels carry their nodata.

An image without georeferencing (a plain TIFF, a PNG, a JPEG) is read by GDAL with the identity
transform, its pixel (row, col) covering ``[col, col + 1) x [row, row + 1)``; xfskde gives it
pixel-index coords, which rioxarray took for the pixels' centres: the labels' GeoTIFF lay half a
pixel up and left of the input in QGIS (transform ``(1, 0, -0.5, 0, 1, -0.5)``), a stride-8
map's a whole pixel (``(8, 0, -1, 0, 8, -1)``). A georeferenced input's results keep the
transforms they had.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tifffile
import xarray as xr
from PIL import Image
from skimage import data

import xfskde
from xfskde.cli import main
from xfskde.io import open_image

rioxarray = pytest.importorskip("rioxarray")
rasterio = pytest.importorskip("rasterio")
from affine import Affine  # noqa: E402  (rasterio's dependency)
from rasterio.errors import NotGeoreferencedWarning  # noqa: E402

NY, NX = 80, 96
SEG = ["--textures", "2", "--size", "4", "--sample", "2000", "--no-progress"]
IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def _picture(path) -> None:
    """A plain picture, no georeferencing: the camera man's coat and the grass."""
    pixels = data.camera()[300 : 300 + NY, 100 : 100 + NX]
    if path.suffix == ".tif":
        tifffile.imwrite(path, pixels)
    else:
        Image.fromarray(pixels).save(path, quality=95)


def _grid(path) -> tuple:
    """The transform, bounds and CRS GDAL reads (the identity, without a word, where the file
    has none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(path) as src:
            return tuple(src.transform)[:6], tuple(src.bounds), src.crs


@pytest.mark.parametrize("suffix", [".tif", ".png", ".jpg"])
def test_labels_of_a_picture_without_georeferencing_lie_on_its_pixels(tmp_path, suffix, capsys):
    """``xfskde segment in.tif out.tif``: the labels' grid is the input's as GDAL reads it
    (the identity, no CRS), not half a pixel up and left of it; and no word of GDAL's about
    the identity it leaves out."""
    source = (tmp_path / "in").with_suffix(suffix)
    _picture(source)
    assert main(["segment", str(source), str(tmp_path / "labels.tif"), *SEG]) == 0
    assert "warning" not in capsys.readouterr().err
    expected = (IDENTITY, (0.0, float(NY), float(NX), 0.0), None)
    assert _grid(source) == expected  # what GDAL reads of the input
    assert _grid(tmp_path / "labels.tif") == expected  # was (1, 0, -0.5, 0, 1, -0.5)


def test_labels_reopen_with_the_coords_they_had(tmp_path):
    """``write_geotiff`` of the labels of a plain TIFF: GDAL's grid is the input's, and
    ``open_image`` gives the file back with the in-memory labels' values and coordinates."""
    _picture(tmp_path / "in.tif")
    labels = xfskde.segment(open_image(tmp_path / "in.tif"), 2, size=4, sample=2000)
    assert labels.x.dtype.kind == "i" and labels.x.values[0] == 0  # pixel indices
    path = xfskde.io.write_geotiff(labels, tmp_path / "labels.tif")
    assert _grid(path)[:2] == (IDENTITY, (0.0, float(NY), float(NX), 0.0))
    back = open_image(path)
    np.testing.assert_array_equal(back.values, labels.values)
    np.testing.assert_array_equal(back["y"].values, labels["y"].values)
    np.testing.assert_array_equal(back["x"].values, labels["x"].values)
    # a piece of the labels lies over the same pixels of the input
    piece = labels.isel(y=slice(10, 30), x=slice(5, 40))
    path = xfskde.io.write_geotiff(piece, tmp_path / "piece.tif")
    assert _grid(path)[0] == (1.0, 0.0, 5.0, 0.0, 1.0, 10.0)  # was (..., 4.5, ..., 9.5)
    with rasterio.open(path) as src:
        np.testing.assert_array_equal(src.read(1), labels.values[10:30, 5:40])


@pytest.mark.parametrize("stride", [1, 3, 4, 8])
def test_maps_at_a_stride_cover_their_cells_of_the_input(tmp_path, stride):
    """A stride-s map of a plain TIFF: each of its pixels covers the s x s input pixels of its
    cell, ``i*s .. i*s + s - 1`` (was a whole pixel up and left at strides 8 and 4, half a
    pixel at 3 and 1)."""
    _picture(tmp_path / "in.tif")
    field = xfskde.local_fskde(open_image(tmp_path / "in.tif"), order=4, window="box",
                               size=max(stride, 3), stride=stride)  # fmt: skip
    energy = field.fskde.energy()
    path = xfskde.io.write_geotiff(energy, tmp_path / "energy.tif")
    s = float(stride)
    with rasterio.open(path) as src:
        assert tuple(src.transform)[:6] == (s, 0.0, 0.0, 0.0, s, 0.0) and src.crs is None
        np.testing.assert_array_equal(src.read(1), energy.values.astype(np.float32))
        # the centre of the cell of sample (2, 3) is the middle of its pixels
        assert src.xy(2, 3) == (3 * s + s / 2, 2 * s + s / 2)
    # maps cut at a cell keep their cells' place
    path = xfskde.io.write_geotiff(energy.isel(y=slice(1, None), x=slice(2, None)),
                                   tmp_path / "piece.tif")  # fmt: skip
    assert _grid(path)[0] == (s, 0.0, 2 * s, 0.0, s, s)


def test_the_command_line_maps_of_a_plain_tiff_cover_their_cells(tmp_path):
    """``xfskde maps in.tif maps.tif --stride 8``: 8-pixel cells from the input's corner, the
    bounds the input's (its sides multiples of 8)."""
    _picture(tmp_path / "in.tif")
    argv = ["--order", "4", "--window", "box", "--size", "8", "--stride", "8", "--no-progress"]
    assert main(["maps", str(tmp_path / "in.tif"), str(tmp_path / "maps.tif"), *argv]) == 0
    transform, bounds, crs = _grid(tmp_path / "maps.tif")
    assert transform == (8.0, 0.0, 0.0, 0.0, 8.0, 0.0)  # was (8, 0, -1, 0, 8, -1)
    assert bounds == _grid(tmp_path / "in.tif")[1] and crs is None


def _scene(path, transform: Affine, crs: str = "EPSG:32633") -> None:
    x = transform.c + (np.arange(NX) + 0.5) * transform.a
    y = transform.f + (np.arange(NY) + 0.5) * transform.e
    pixels = data.camera()[300 : 300 + NY, 100 : 100 + NX]
    image = xr.DataArray(pixels, dims=("y", "x"), coords={"y": y, "x": x})
    image.rio.write_crs(crs).rio.write_transform(transform).rio.to_raster(path)


def test_a_georeferenced_input_s_results_keep_their_transforms(tmp_path):
    """A GeoTIFF with a CRS: labels on its grid, a stride-8 map on its 80 m cells, exactly as
    before; and a plain TIFF opened by rioxarray (an identity GeoTransform, centres at 0.5,
    1.5, ...) gives the same grids as opened by xfskde."""
    transform = Affine(10.0, 0.0, 500000.0, 0.0, -10.0, 4600000.0)
    _scene(tmp_path / "scene.tif", transform)
    image = open_image(tmp_path / "scene.tif")
    labels = xfskde.segment(image, 2, size=4, sample=2000)
    energy = xfskde.local_fskde(image, order=4, window="box", size=8, stride=8).fskde.energy()
    for result, expected in ((labels, transform), (energy, transform @ Affine.scale(8))):
        path = xfskde.io.write_geotiff(result, tmp_path / "out.tif")
        with rasterio.open(path) as src:
            assert src.transform == expected and src.crs == "EPSG:32633"
    assert tuple(transform @ Affine.scale(8))[:6] == (80.0, 0.0, 500000.0, 0.0, -80.0, 4600000.0)

    _picture(tmp_path / "in.tif")
    plain = rioxarray.open_rasterio(tmp_path / "in.tif").squeeze("band", drop=True)
    energy = xfskde.local_fskde(plain, order=4, window="box", size=8, stride=8).fskde.energy()
    path = xfskde.io.write_geotiff(energy, tmp_path / "plain.tif")
    assert _grid(path)[0] == (8.0, 0.0, 0.0, 0.0, 8.0, 0.0)


def test_a_grid_of_its_own_integer_coordinates_is_written_as_rioxarray_takes_it(tmp_path):
    """Integer coordinates that say what they are (a unit) are a grid's, the pixels' centres as
    rioxarray (and CF) take them, not xfskde's pixel indices: written as before."""
    pixels = data.camera()[300 : 300 + NY, 100 : 100 + NX]
    coords = {"y": ("y", np.arange(NY) + 1000, {"units": "m"}),
              "x": ("x", np.arange(NX) + 2000, {"units": "m"})}  # fmt: skip
    image = xr.DataArray(pixels, dims=("y", "x"), coords=coords)
    labels = xfskde.segment(image, 2, size=4, sample=2000)
    path = xfskde.io.write_geotiff(labels, tmp_path / "labels.tif")
    assert _grid(path)[0] == (1.0, 0.0, 1999.5, 0.0, 1.0, 999.5)


def test_labels_of_a_rioxarray_scene_carry_their_background_as_nodata(tmp_path):
    """``labels.rio.nodata`` is the background label, 0, so that ``rio.to_raster`` writes it
    as the command line's GeoTIFF does (it was None: QGIS drew the background as a class); as a
    ``nodata`` attr, not a ``_FillValue``, so that xarray reads the labels back as uint8."""
    x = 500000.0 + (np.arange(NX) + 0.5) * 10.0
    y = 4600000.0 - (np.arange(NY) + 0.5) * 10.0
    pixels = data.camera()[300 : 300 + NY, 100 : 100 + NX]
    scene = xr.DataArray(pixels, dims=("y", "x"), coords={"y": y, "x": x})
    scene = scene.rio.write_crs("EPSG:32633")
    mask = np.zeros((NY, NX), bool)
    mask[10:70, 10:90] = True
    labels = xfskde.segment(scene, 2, size=4, sample=2000, mask=mask)
    assert labels.dtype == np.uint8 and labels.rio.nodata == 0
    assert (labels.values == 0).sum() == NY * NX - mask.sum()  # the background, outside
    assert "_FillValue" not in labels.attrs and "_FillValue" not in labels.encoding
    labels.rio.to_raster(tmp_path / "labels.tif")
    with rasterio.open(tmp_path / "labels.tif") as src:
        assert src.nodata == 0
        np.testing.assert_array_equal(src.read(1), labels.values)
        np.testing.assert_array_equal(src.read_masks(1) > 0, mask)  # GDAL's mask: the inside
    labels.to_dataset(name="labels").to_zarr(tmp_path / "labels.zarr")
    back = xr.open_zarr(tmp_path / "labels.zarr")["labels"]
    assert back.dtype == np.uint8 and back.rio.nodata == 0
    np.testing.assert_array_equal(back.values, labels.values)
    # the abundances' missing values are NaN: no nodata attr of their own
    model = xfskde.segmentation.fit_textures(scene, 2, size=4, sample=2000, mask=mask)
    assert "nodata" not in model.abundances(scene, mask=mask).attrs
