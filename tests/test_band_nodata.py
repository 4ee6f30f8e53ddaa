"""Rasters whose bands have nodata values of their own: a VRT stack of two products' bands
(``gdalbuildvrt -separate`` of a B04 whose nodata is 0 and a B08 whose nodata is 65535: rasterio's
``nodatavals`` ``(0, 65535)``), and an ERDAS Imagine file, which holds one value per band. GDAL
masks each band by its own value; xfskde read the first band's for every band, and used B08's
65535s as data (energy up to 7639 where the scene's is 530), and ``xfskde info`` said
"nodata 0".

The fields are checked against the same pixels masked by hand (each band's own nodata NaN, as
NaN pixels are omitted), segmentation and ``mask="auto"`` against the pixels where any band is
missing (a pixel's colour is incomplete there), and the CLI's stores and ``info`` against the
values per band. A GeoTIFF cannot hold them: GDAL's GTiff driver keeps one value per file.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from _rasters import write_vrt

import xfskde
from xfskde._labels import image_nodata
from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import ParameterError
from xfskde.io import open_image
from xfskde.masks import tissue_mask

rasterio = pytest.importorskip("rasterio")
pytest.importorskip("rioxarray")
from affine import Affine  # noqa: E402  (rasterio's dependency)

SIDE = 192
TRANSFORM = Affine(10.0, 0.0, 500000.0, 0.0, -10.0, 5000000.0)
CRS = "EPSG:32633"
PARAMS = dict(order=8, window="gaussian", size=4, stride=4)


def _bands() -> tuple[np.ndarray, np.ndarray]:
    """B04 and B08 as uint16 counts, B04 with a hole of 0s (a cloud mask of its own) and B08
    with its product's missing pixels, 65535, where the other band has data."""
    image, _ = random_textures((SIDE, SIDE), seed=5)
    counts = (image[..., :2] * 10000 + 1).astype(np.uint16)
    b04, b08 = counts[..., 0].copy(), counts[..., 1].copy()
    b04[80:120, 60:110] = 0
    b08[:, :24] = 65535  # a swath edge of its own
    b08[140:170, 130:180] = 65535
    return b04, b08


def _write(path, band: np.ndarray, nodata: int, name: str) -> None:
    profile = dict(driver="GTiff", width=SIDE, height=SIDE, count=1, dtype="uint16", crs=CRS,
                   transform=TRANSFORM, nodata=nodata)  # fmt: skip
    with rasterio.open(path, "w", **profile) as file:
        file.write(band[None])
        file.set_band_description(1, name)


def _vrt(path, nodata: tuple[int, int]) -> None:
    """A VRT stacking B04.tif and B08.tif as bands, each with its own NoDataValue."""
    write_vrt(path, ["B04.tif", "B08.tif"], ("B04", "B08"), side=SIDE, transform=TRANSFORM,
              crs=CRS, nodata=nodata)  # fmt: skip


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stack")
    b04, b08 = _bands()
    _write(folder / "B04.tif", b04, 0, "B04")
    _write(folder / "B08.tif", b08, 65535, "B08")
    _vrt(folder / "stack.vrt", (0, 65535))
    return folder, b04, b08


def _by_hand(b04: np.ndarray, b08: np.ndarray) -> np.ndarray:
    """Each band's own nodata NaN: the samples GDAL masks."""
    pixels = np.stack([np.where(b04 == 0, np.nan, b04), np.where(b08 == 65535, np.nan, b08)], -1)
    return pixels.astype(np.float32)


def test_each_band_s_own_nodata_is_masked_in_the_field(stack):
    folder, b04, b08 = stack
    with rasterio.open(folder / "stack.vrt") as file:
        assert file.nodatavals == (0, 65535)  # GDAL's: each band its own
    image = open_image(folder / "stack.vrt")
    assert image.attrs["nodatavals"] == (0, 65535) and "_FillValue" not in image.attrs
    field = xfskde.local_fskde(image, **PARAMS)
    expected = xfskde.local_fskde(_by_hand(b04, b08), **PARAMS, channel_axis=-1,
                                  nan_policy="omit")  # fmt: skip
    got = field.transpose("y", "x", "k").values
    assert np.array_equal(got, expected, equal_nan=True)
    assert field.attrs["input_nodata"] == [0, 65535]
    energy = field.fskde.energy().values
    # band 1's value for both: B08's 65535 edges used as data, 5.6 times the energy
    used = xfskde.local_fskde(image, **PARAMS, nodata=0)  # an explicit value overrides
    assert used.attrs["input_nodata"] == 0
    assert float(np.nanmax(used.fskde.energy().values)) > 4 * float(np.nanmax(energy))


def test_an_imagine_file_s_band_values_are_masked_each_in_its_band(stack, tmp_path):
    _, b04, b08 = stack
    path = tmp_path / "scene.img"
    with rasterio.open(path, "w", driver="HFA", width=SIDE, height=SIDE, count=2,
                       dtype="uint16", crs=CRS, transform=TRANSFORM) as file:  # fmt: skip
        file.write(np.stack([b04, b08]))
        file._set_nodatavals([0, 65535])
    with rasterio.open(path) as file:
        assert file.nodatavals == (0, 65535)
    field = xfskde.local_fskde(open_image(path), **PARAMS)
    expected = xfskde.local_fskde(_by_hand(b04, b08), **PARAMS, channel_axis=-1,
                                  nan_policy="omit")  # fmt: skip
    assert np.array_equal(field.transpose("y", "x", "k").values, expected, equal_nan=True)


def test_a_geotiff_holds_one_nodata_value_read_as_gdal_reads_it(tmp_path):
    """GDAL's GTiff driver keeps one value per file (the last one written): no per-band case
    to read; xfskde reads the value GDAL does."""
    path = tmp_path / "two.tif"
    with rasterio.open(path, "w", driver="GTiff", width=16, height=16, count=2, dtype="uint16",
                       crs=CRS, transform=TRANSFORM, nodata=0) as file:  # fmt: skip
        file.write(np.ones((2, 16, 16), np.uint16))
    with rasterio.open(path, "r+") as file:
        file._set_nodatavals([0, 65535])
    with rasterio.open(path) as file:
        values = file.nodatavals
    assert len(set(values)) == 1
    assert image_nodata(open_image(path))[0] == values[0]


def test_a_shared_value_is_read_as_before(stack, tmp_path):
    """Every band's nodata 0: one value, as before (``_FillValue``), masked the same."""
    folder, b04, b08 = stack
    for name in ("B04.tif", "B08.tif"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    _vrt(tmp_path / "stack.vrt", (0, 0))
    image = open_image(tmp_path / "stack.vrt")
    assert image.attrs["_FillValue"] == 0 and "nodatavals" not in image.attrs
    assert image_nodata(image) == (0, "attrs['_FillValue']")
    field = xfskde.local_fskde(image, **PARAMS)
    pixels = np.stack([b04, b08], -1).astype(np.float32)
    pixels[pixels == 0] = np.nan  # each sample equal to it, as before
    expected = xfskde.local_fskde(pixels, **PARAMS, channel_axis=-1, nan_policy="omit")
    assert np.array_equal(field.transpose("y", "x", "k").values, expected, equal_nan=True)
    assert field.attrs["input_nodata"] == 0


def test_segmentation_and_the_auto_mask_leave_out_a_pixel_any_band_of_which_is_missing(stack):
    folder, b04, b08 = stack
    image = open_image(folder / "stack.vrt")
    missing = (b04 == 0) | (b08 == 65535)
    labels = xfskde.segment(image, 3)
    assert labels.attrs["input_nodata"] == [0, 65535]
    assert np.array_equal(labels.values == 0, missing)  # the background label, exactly there
    # the same pixels masked by hand, as one value read where every band holds it
    by_hand = np.stack([np.where(missing, 0, b04), np.where(missing, 0, b08)], -1)
    same = xfskde.segment(xr.DataArray(by_hand, dims=("y", "x", "c")), 3, nodata=0)
    assert np.array_equal(labels.values, same.values)
    mask = tissue_mask(image, margin=0).values
    assert np.array_equal(mask, ~missing)  # B08's 65535s were foreground


def test_a_band_picked_keeps_its_own_value(stack):
    folder, _, b08 = stack
    image = open_image(folder / "stack.vrt", channels=["B08"])
    assert image_nodata(image)[0] == 65535
    field = xfskde.local_fskde(image, **PARAMS)
    expected = xfskde.local_fskde(np.where(b08 == 65535, np.nan, b08).astype(np.float32),
                                  **PARAMS, nan_policy="omit")  # fmt: skip
    assert np.array_equal(field.values, expected, equal_nan=True)


def test_values_per_band_that_cannot_hold_or_disagree_are_refused(stack):
    _, b04, b08 = stack
    pixels = np.stack([b04, b08], -1)
    image = xr.DataArray(pixels, dims=("y", "x", "c"), attrs={"nodatavals": [0, -1]})
    with pytest.raises(ParameterError, match=r"nodatavals'\]\[1\] = -1\) can never equal"):
        xfskde.local_fskde(image, **PARAMS)
    image.attrs["nodatavals"] = [0, 65535, 7]
    with pytest.raises(ParameterError, match=r"\(0, 65535, 7\)\) but it has 2 channel"):
        xfskde.local_fskde(image, **PARAMS)
    image.attrs.update(nodatavals=[0, 65535], _FillValue=5)
    with pytest.raises(ParameterError, match=r"disagree: attrs\['_FillValue'\] = 5"):
        xfskde.segment(image, 2)
    image.attrs["_FillValue"] = 0  # the first band's, as rioxarray reports a raster's: agrees
    assert image_nodata(image) == ((0, 65535), "attrs['nodatavals'] (each band its own)")
    # a band without one (rioxarray wrote NaN) has no missing samples
    image.attrs.update(nodatavals=[float("nan"), 65535], _FillValue=None)
    field = xfskde.local_fskde(image, **PARAMS)
    hand = np.stack([b04, np.where(b08 == 65535, np.nan, b08)], -1).astype(np.float32)
    expected = xfskde.local_fskde(hand, **PARAMS, channel_axis=-1, nan_policy="omit")
    assert np.array_equal(field.values, expected, equal_nan=True)
    assert field.attrs["input_nodata"] == ["none", 65535]


def test_the_cli_records_and_shows_the_values_per_band(stack, tmp_path, capsys):
    folder, b04, b08 = stack
    assert main(["info", str(folder / "stack.vrt")]) == 0
    shown = capsys.readouterr().out
    assert "nodata     0 (band 1), 65535 (band 2): each band its own" in shown
    store = tmp_path / "f.zarr"
    args = ["coefficients", str(folder / "stack.vrt"), str(store), "--order", "8", "--stride",
            "4", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    field = xfskde.open_coefficients(store)
    assert list(field.attrs["input_nodata"]) == [0, 65535]
    expected = xfskde.local_fskde(_by_hand(b04, b08), order=8, stride=4, channel_axis=-1,
                                  nan_policy="omit")  # fmt: skip
    assert np.allclose(field.transpose("y", "x", "k").values, expected, equal_nan=True)
    assert main([*args, "--resume"]) == 0  # the same values per band: complete, kept
    capsys.readouterr()
    assert main([*args, "--resume", "--nodata", "0"]) == 2  # another nodata: refused
    assert "input_nodata" in capsys.readouterr().err
    assert main(["info", str(store)]) == 0
    assert "[0, 65535]" in capsys.readouterr().out
    # maps drawn from the store say where B08's own pixels are missing
    present = xfskde.api.present_samples(open_image(folder / "stack.vrt"), field)
    sampled = (~((b04 == 0) & (b08 == 65535)))[1::4, 1::4]
    assert np.array_equal(present.values, sampled)
