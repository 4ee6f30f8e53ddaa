"""Rasters only GDAL reads — JPEG 2000 (Sentinel-2's bands), VRT band stacks and mosaics, ERDAS
Imagine — opened through rasterio, checked against rasterio's and rioxarray's own reads.

The scene: three bands of :func:`xfskde.datasets.random_textures` (384², three textures) as
uint16 counts of 10 m pixels in UTM zone 32N, each band a lossless JPEG 2000 file named as
Sentinel-2's (``B04``, ``B03``, ``B02``), stacked by a VRT as ``gdalbuildvrt -separate`` makes
one.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _rasters import write_vrt

import xfskde
from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import ImageReadError, ParameterError
from xfskde.io import open_image
from xfskde.io.images import image_levels
from xfskde.metrics import rand_index

rasterio = pytest.importorskip("rasterio")
rioxarray = pytest.importorskip("rioxarray")
from affine import Affine  # noqa: E402  (rasterio's dependency)

SIDE = 384
TRANSFORM = Affine(10.0, 0.0, 600000.0, 0.0, -10.0, 5000000.0)
CRS = "EPSG:32632"
BANDS = ("B04", "B03", "B02")


def _counts() -> tuple[np.ndarray, np.ndarray]:
    image, truth = random_textures((SIDE, SIDE), seed=3)
    return (image * 10000 + 1).astype(np.uint16), truth


def _write_band(path, band: np.ndarray, name: str) -> None:
    profile = dict(driver="JP2OpenJPEG", width=SIDE, height=SIDE, count=1, dtype="uint16",
                   crs=CRS, transform=TRANSFORM, nodata=0, QUALITY=100, REVERSIBLE="YES",
                   BLOCKXSIZE=128, BLOCKYSIZE=128)  # fmt: skip
    with rasterio.open(path, "w", **profile) as file:
        file.write(band[None])
        file.set_band_description(1, name)


def _write_vrt(path, sources: list[str], names: tuple[str, ...]) -> None:
    """A VRT stacking one-band files as bands (``gdalbuildvrt -separate``), paths relative."""
    write_vrt(path, sources, names, side=SIDE, transform=TRANSFORM, crs=CRS)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("safe")
    counts, truth = _counts()
    for i, name in enumerate(BANDS):
        _write_band(folder / f"T32TQM_{name}.jp2", counts[..., i], name)
    _write_vrt(folder / "rgb.vrt", [f"T32TQM_{b}.jp2" for b in BANDS], BANDS)
    return folder, counts, truth


def test_a_jpeg2000_band_reads_as_rasterio_reads_it_with_its_crs_and_levels(scene):
    folder, counts, _ = scene
    path = folder / "T32TQM_B04.jp2"
    image = open_image(path, chunks=128)
    assert image.dims == ("y", "x") and image.dtype == np.uint16
    assert image.data.numblocks[0] == 3  # read by the tasks, block by block
    np.testing.assert_array_equal(image.values, counts[..., 0])
    expected = rioxarray.open_rasterio(path).squeeze("band", drop=True)
    np.testing.assert_array_equal(image.x.values, expected.x.values)
    np.testing.assert_array_equal(image.y.values, expected.y.values)
    assert image.rio.crs.to_epsg() == 32632 and image.attrs["_FillValue"] == 0
    levels = image_levels(path)
    with rasterio.open(path) as file:
        factors = file.overviews(1)
    assert [lv.sides for lv in levels] == [(SIDE, SIDE)] + [(SIDE // f,) * 2 for f in factors]
    assert levels[0].pixel_size == (10.0, 10.0) and levels[0].units == "m"
    assert [lv.pixel_size for lv in levels[1:]] == [(10.0 * f, 10.0 * f) for f in factors]
    with rasterio.open(path, overview_level=0) as file:
        np.testing.assert_array_equal(open_image(path, level=1).values, file.read(1))
    with pytest.raises(ParameterError, match=r"mpp is a pixel size under a microscope.*--level"):
        open_image(path, mpp=1.0)
    with pytest.raises(ParameterError, match="level"):
        open_image(path, level=len(levels))


def test_a_vrt_stack_of_bands_reads_its_bands_named_and_segments_to_a_geotiff(scene, tmp_path):
    """``gdalbuildvrt -separate``'s stack of Sentinel-2 bands: (c, y, x), named by their
    descriptions; ``xfskde segment rgb.vrt labels.tif`` labels it as the stacked array is
    labelled, in a GeoTIFF of the scene's CRS and grid."""
    folder, counts, truth = scene
    vrt = folder / "rgb.vrt"
    image = open_image(vrt, chunks=128)
    assert image.dims == ("c", "y", "x") and list(image.c.values) == list(BANDS)
    np.testing.assert_array_equal(image.transpose("y", "x", "c").values, counts)
    np.testing.assert_array_equal(open_image(vrt, channels=["B02"]).values, counts[None, ..., 2])
    out = tmp_path / "labels.tif"
    assert main(["segment", str(vrt), str(out), "--textures", "3"]) == 0
    with rasterio.open(out) as file:
        assert file.crs.to_epsg() == 32632 and file.transform == TRANSFORM
        labels = file.read(1)
    np.testing.assert_array_equal(labels, xfskde.segment(image, 3).values)
    assert rand_index(labels, truth) > 0.95


def test_an_imagine_file_reads_as_rasterio_reads_it(tmp_path):
    counts, _ = _counts()
    path = tmp_path / "scene.img"
    profile = dict(driver="HFA", width=SIDE, height=SIDE, count=3, dtype="uint16", crs=CRS,
                   transform=TRANSFORM)  # fmt: skip
    with rasterio.open(path, "w", **profile) as file:
        file.write(counts.transpose(2, 0, 1))
    image = open_image(path, chunks=128)
    np.testing.assert_array_equal(image.values, counts.transpose(2, 0, 1))
    assert image.rio.crs.to_epsg() == 32632


def test_a_truncated_jpeg2000_file_is_refused_not_read_as_zeros(scene, tmp_path):
    """GDAL's JPEG 2000 decoder, on its own threads, reports a damaged codestream where no
    one hears it and gives zeros; read on the task's thread, the failure is the file's."""
    folder, _, _ = scene
    whole = (folder / "T32TQM_B04.jp2").read_bytes()
    cut = tmp_path / "cut.jp2"
    cut.write_bytes(whole[: len(whole) * 4 // 5])  # GDAL alone gives 17 % zeros, no error
    image = open_image(cut)
    with pytest.raises(ImageReadError, match=r"cannot read .*cut\.jp2 .*IReadBlock failed"):
        image.compute()


def test_a_vrt_whose_source_is_missing_is_refused_when_opened(scene, tmp_path):
    folder, _, _ = scene
    vrt = folder / "missing.vrt"
    _write_vrt(vrt, ["T32TQM_B04.jp2", "T32TQM_B08.jp2"], ("B04", "B08"))
    with pytest.raises(ImageReadError, match=r"1 of the files it is made of is missing: .*B08"):
        open_image(vrt)
    assert main(["segment", str(vrt), str(tmp_path / "l.tif"), "--textures", "2"]) == 2


def test_info_describes_a_vrt(scene, capsys):
    folder, _, _ = scene
    assert main(["info", str(folder / "rgb.vrt")]) == 0
    out = capsys.readouterr().out
    assert "GDAL VRT (GDAL's VRT driver, via rasterio)" in out
    assert "B04, B03, B02" in out and "EPSG:32632 (WGS 84 / UTM zone 32N)" in out
    assert "nodata     0" in out and "(10, 10) m" in out
    assert "sources    3 files (T32TQM_B04.jp2, T32TQM_B03.jp2, T32TQM_B02.jp2)" in out


def test_a_netcdf_file_is_refused_with_the_way_to_open_one_of_its_variables(tmp_path):
    """A NetCDF file holds named variables: refused naming xarray, not "unknown format"; the
    way it names keeps the CRS (the band's spatial_ref a coordinate)."""
    import xarray as xr

    counts, _ = _counts()
    y = TRANSFORM.f + TRANSFORM.e * (np.arange(SIDE) + 0.5)
    x = TRANSFORM.c + TRANSFORM.a * (np.arange(SIDE) + 0.5)
    scene = xr.DataArray(counts, dims=("y", "x", "band"), coords={"y": y, "x": x})
    scene.rio.write_crs(CRS).to_dataset(name="rgb").to_netcdf(tmp_path / "scene.nc")
    with pytest.raises(ImageReadError, match=r"holds named variables; open one with xarray"):
        open_image(tmp_path / "scene.nc")
    (tmp_path / "probabilities.h5").write_bytes(b"\x89HDF\r\n\x1a\n")  # ilastik's export
    with pytest.raises(ImageReadError, match=r"holds named datasets; read the image's with h5py"):
        open_image(tmp_path / "probabilities.h5")
    opened = xr.open_dataset(tmp_path / "scene.nc", decode_coords="all", chunks={})["rgb"]
    assert open_image(opened).rio.crs.to_epsg() == 32632


def test_a_vrt_whose_band_is_rewritten_is_not_read_in_part(scene, tmp_path):
    """A VRT's own bytes do not change when a band it names is rewritten: its version holds
    its files' too, so a resumed store starts again and a task refuses to mix the two."""
    import shutil

    folder, counts, _ = scene
    copy = tmp_path / "safe"
    shutil.copytree(folder, copy)
    image = open_image(copy / "rgb.vrt", chunks=128)
    before = image.attrs["source_version"]
    assert "T32TQM_B03.jp2" in before
    _write_band(copy / "T32TQM_B03.jp2", counts[..., 2], "B03")  # another band's pixels
    assert open_image(copy / "rgb.vrt").attrs["source_version"] != before
    with pytest.raises(ImageReadError, match=r"rgb\.vrt changed since it was opened"):
        image.compute()


def test_a_vrt_s_store_is_complete_and_flagged_when_a_band_changes(scene, tmp_path, capsys):
    """A resumable store of a VRT's labels is marked complete (its version compared as it
    was recorded: the VRT's with its files', not the VRT's bytes alone: "changed while it was
    written" until that was so), and ``xfskde info`` flags it once a band is rewritten."""
    import shutil

    from xfskde.io.stores import source_changed

    folder, counts, _ = scene
    copy = tmp_path / "safe"
    shutil.copytree(folder, copy)
    store = tmp_path / "labels.zarr"
    assert main(["segment", str(copy / "rgb.vrt"), str(store), "--textures", "3"]) == 0
    import zarr

    attrs = zarr.open_group(str(store), mode="r").attrs["xfskde_parameters"]
    assert source_changed(attrs) is None
    _write_band(copy / "T32TQM_B02.jp2", counts[..., 0], "B02")
    assert source_changed(attrs) is not None


def test_a_vrt_s_mask_band_makes_its_pixels_missing(tmp_path):
    """A VRT of GeoTIFFs with internal masks (an orthophoto's JPEG tiles) has a mask band;
    its pixels 0 are missing, as the TIFF's own mask makes them (and as rasterio reads it)."""
    import rasterio.shutil

    image, _ = random_textures((SIDE, SIDE), seed=3)
    pixels = (image * 255).astype(np.uint8).transpose(2, 0, 1)
    footprint = np.zeros((SIDE, SIDE), bool)
    footprint[:, 80:] = True
    profile = dict(driver="GTiff", width=SIDE, height=SIDE, count=3, dtype="uint8", crs=CRS,
                   transform=TRANSFORM, tiled=True, blockxsize=128, blockysize=128)  # fmt: skip
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        with rasterio.open(tmp_path / "tile.tif", "w", **profile) as file:
            file.write(pixels)
            file.write_mask(footprint.astype(np.uint8) * 255)
    rasterio.shutil.copy(tmp_path / "tile.tif", tmp_path / "mosaic.vrt", driver="VRT")
    opened = open_image(tmp_path / "mosaic.vrt", chunks=128)
    assert opened.dtype == np.float32 and opened.attrs["source_dtype"] == "uint8"
    values = opened.values
    np.testing.assert_array_equal(np.isnan(values).any(axis=0), ~footprint)
    np.testing.assert_array_equal(values[:, footprint], pixels[:, footprint])
    assert image_levels(tmp_path / "mosaic.vrt")[0].dtype == np.float32


def test_a_vrt_s_alpha_band_wherever_it_is_makes_its_pixels_missing(tmp_path):
    """A VRT over a drone's six-band orthomosaic (five bands, then the alpha GDAL reads from
    its ExtraSamples): five bands, NaN where the alpha is 0, their names kept."""
    import rasterio.shutil
    import tifffile

    counts, _ = _counts()
    planes = [counts[..., i] for i in range(3)] + [counts[..., 0] // 2, counts[..., 1] // 2]
    opacity = np.full((SIDE, SIDE), 65535, np.uint16)
    opacity[:, :50] = 0
    tifffile.imwrite(tmp_path / "drone.tif", np.dstack([*planes, opacity]),
                     photometric="minisblack", extrasamples=[0, 0, 0, 0, 2])  # fmt: skip
    rasterio.shutil.copy(tmp_path / "drone.tif", tmp_path / "drone.vrt", driver="VRT")
    image = open_image(tmp_path / "drone.vrt")
    assert dict(image.sizes) == {"c": 5, "y": SIDE, "x": SIDE} and image.dtype == np.float32
    values = image.values
    assert np.isnan(values[:, :, :50]).all() and not np.isnan(values[:, :, 50:]).any()
    np.testing.assert_array_equal(values[:, :, 50:], np.stack(planes)[:, :, 50:])
    assert image_levels(tmp_path / "drone.vrt")[0].shape == (5, SIDE, SIDE)


def test_a_sentinel_2_product_is_refused_with_the_way_to_stack_its_bands(tmp_path):
    """The SAFE folder was taken for a Zarr store ("not a Zarr store"), its MTD_MSIL2A.xml for
    an unknown format: both name the bands' files and the VRT that stacks them."""
    product = tmp_path / "S2A_MSIL2A_20260101T101421_N0511_R022_T32TQM_20260101T120000.SAFE"
    (product / "GRANULE").mkdir(parents=True)
    (product / "MTD_MSIL2A.xml").write_text("<xml/>")
    import zipfile

    downloaded = tmp_path / "S2B_MSIL2A_20260101T101421_N0511_R022_T32TQM_20260101T120000.zip"
    with zipfile.ZipFile(downloaded, "w") as archive:  # as the Copernicus browser gives it
        archive.writestr(f"{product.name}/MTD_MSIL2A.xml", "<xml/>")
    for source in (product, product / "MTD_MSIL2A.xml", downloaded):
        with pytest.raises(ImageReadError, match=r"Sentinel-2 product .* gdalbuildvrt -separate"):
            open_image(source)
        with pytest.raises(ImageReadError, match="Sentinel-2 product"):
            image_levels(source)
        assert main(["info", str(source)]) == 2


def test_a_photograph_s_jpeg_2000_has_pixel_coordinates_and_no_warning(tmp_path):
    """A JPEG 2000 without georeferencing (a camera's, a scanner's export) opens as a plain
    TIFF does: no coordinates, no CRS, no pixel size at any level — GDAL gave its overview a
    GeoTransform of uninitialised numbers (1e-309 "CRS units") and rioxarray coordinates from
    them — and without rasterio's NotGeoreferencedWarning, printed by every command."""
    import warnings

    image, _ = random_textures((256, 256), seed=1)
    pixels = (image * 255).astype(np.uint8).transpose(2, 0, 1)
    path = tmp_path / "photo.jp2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rasterio.open(path, "w", driver="JP2OpenJPEG", width=256, height=256, count=3,
                           dtype="uint8", QUALITY=100, REVERSIBLE="YES") as file:  # fmt: skip
            file.write(pixels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        levels = image_levels(path)
        for level in range(len(levels)):
            opened = open_image(path, level=level)
            assert not opened.coords and opened.rio.crs is None
    assert len(levels) > 1 and all(lv.pixel_size is None for lv in levels)
    np.testing.assert_array_equal(open_image(path).values, pixels)


def test_a_vrt_in_a_bucket_naming_its_bands_in_the_folder_above(scene, tmp_path):
    """A VRT in ``s3://bucket/vrts/`` naming ``../T32TQM_B04.jp2``: GDAL asks rasterio's
    opener for ``bucket/vrts/../T32TQM_B04.jp2``, which s3fs looked up as it is ("Resource
    temporarily unavailable"); the opener resolves it. On a real S3 server (moto)."""
    pytest.importorskip("moto")
    s3fs = pytest.importorskip("s3fs")
    from _servers import s3_server

    folder, counts, _ = scene
    with s3_server() as options:
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("bucket")
        for band in BANDS:
            fs.put(str(folder / f"T32TQM_{band}.jp2"), f"bucket/T32TQM_{band}.jp2")
        _write_vrt(tmp_path / "up.vrt", [f"../T32TQM_{b}.jp2" for b in BANDS], BANDS)
        fs.put(str(tmp_path / "up.vrt"), "bucket/vrts/up.vrt")
        image = open_image("s3://bucket/vrts/up.vrt", storage_options=options)
        np.testing.assert_array_equal(image.transpose("y", "x", "c").values, counts)
        assert "s3://bucket/T32TQM_B03.jp2: " in image.attrs["source_version"]


def test_a_vrt_and_its_bands_at_a_url_read_as_they_do_on_disk(scene):
    """A Sentinel-2 tile's JPEG 2000 bands and the VRT stacking them served over HTTP (an
    object store, Copernicus's S3): read through fsspec as rasterio's opener, byte range by
    byte range, the VRT's sources at the same URL beside it — the same pixels, CRS and band
    names as on disk. Until 2026-11-30 they were refused at a URL."""
    from _servers import http_server

    folder, counts, _ = scene
    with http_server(folder) as url:
        image = open_image(f"{url}/rgb.vrt", chunks=128)
        assert image.rio.crs.to_epsg() == 32632 and list(image.c.values) == list(BANDS)
        np.testing.assert_array_equal(image.transpose("y", "x", "c").values, counts)
        band = open_image(f"{url}/T32TQM_B04.jp2", level=1)
        with rasterio.open(folder / "T32TQM_B04.jp2", overview_level=0) as file:
            np.testing.assert_array_equal(band.values, file.read(1))
        assert len(image_levels(f"{url}/T32TQM_B04.jp2")) > 1
        # a URL with a query (a signed URL's, a token): the format is its path's; GDAL is not
        # sent after sidecars with the query in their names (overviews() did not return)
        signed = open_image(f"{url}/T32TQM_B04.jp2?token=abc", level=1)
        np.testing.assert_array_equal(signed.values, band.values)
        again = open_image(f"{url}/rgb.vrt?token=abc", chunks=128)
        np.testing.assert_array_equal(again.values, image.values)
        # its sources read from its XML (GDAL names them /vsiriopener_...): versioned with
        # it, listed by info, and one missing refused when it is opened, naming it (a block
        # failed later with "Resource temporarily unavailable")
        version = image.attrs["source_version"]
        assert all(f"{url}/T32TQM_{b}.jp2: " in version for b in BANDS)
        _write_vrt(folder / "missing.vrt", ["T32TQM_B04.jp2", "T32TQM_B05.jp2"], ("B04", "B05"))
        with pytest.raises(ImageReadError, match=r"1 of the files it is made of is missing: "
                           rf"{re.escape(url)}/T32TQM_B05.jp2"):  # fmt: skip
            open_image(f"{url}/missing.vrt")
