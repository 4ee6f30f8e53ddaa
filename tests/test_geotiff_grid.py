"""GeoTIFFs of results: labels carry their nodata where rioxarray reads it."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from skimage import data

import xfskde

rioxarray = pytest.importorskip("rioxarray")
rasterio = pytest.importorskip("rasterio")

NY, NX = 80, 96


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
