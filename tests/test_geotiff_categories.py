"""A labels GeoTIFF names its classes as GDAL reads them: QGIS's paletted renderer, its legend
and ``gdalinfo`` showed bare numbers (0, 1, 2) where the NGFF label image of the same labels
names each texture. GDAL keeps a GeoTIFF band's category names and raster attribute table in
its PAM sidecar ``labels.tif.aux.xml`` (TIFF tags hold neither), so the sidecar is written,
moved with the file, removed with it, and described by ``xfskde info``.

Each file is read back by readers other than xfskde: the sidecar by the standard library's XML
parser and, where Debian's gdal-bin is installed, by ``gdalinfo -json``; the colour table and
band descriptions by rasterio."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import xarray as xr

from xfskde._palette import BACKGROUND_COLOUR, label_rgba_8bit
from xfskde.cli import main
from xfskde.io.omezarr import _label_display

rasterio = pytest.importorskip("rasterio")
pytest.importorskip("rioxarray")
from rasterio.transform import from_origin  # noqa: E402

from xfskde.io.geotiff import write_geotiff  # noqa: E402

NAMES = ["background", "texture 1", "texture 2"]


def _scene(tmp_path):
    """A small UTM scene of two textures (vertical, then horizontal stripes), nodata 0 at
    its left edge."""
    ny, nx = 96, 128
    yy, xx = np.mgrid[:ny, :nx]
    pixels = np.where(xx < nx // 2, np.sin(2 * np.pi * xx / 6), np.sin(2 * np.pi * yy / 6))
    pixels = (pixels * 1000 + 5000).astype(np.uint16)
    pixels[:, :10] = 0
    profile = {"driver": "GTiff", "width": nx, "height": ny, "count": 1, "dtype": "uint16",
               "crs": "EPSG:32632", "transform": from_origin(300_000, 5_000_000, 10, 10),
               "nodata": 0}  # fmt: skip
    path = tmp_path / "scene.tif"
    with rasterio.open(path, "w", **profile) as file:
        file.write(pixels, 1)
    return path


def _pam(path) -> tuple[list[str], list[str], list[list[str]]]:
    """Band 1's category names, the attribute table's column names and its rows, as text,
    read from the PAM sidecar by the standard library."""
    band = ElementTree.parse(f"{path}.aux.xml").getroot().find("PAMRasterBand[@band='1']")
    names = [c.text for c in band.find("CategoryNames").iter("Category")]
    rat = band.find("GDALRasterAttributeTable")
    assert rat.get("tableType") == "thematic"
    columns = [f.find("Name").text for f in rat.iter("FieldDefn")]
    usages = [int(f.find("Usage").text) for f in rat.iter("FieldDefn")]
    assert usages == [5, 2, 6, 7, 8, 9][: len(columns)]  # MinMax, Name, Red .. Alpha
    rows = [[f.text for f in row.iter("F")] for row in rat.iter("Row")]
    return names, columns, rows


def _gdalinfo(path) -> dict:
    result = subprocess.run(["gdalinfo", "-json", str(path)], capture_output=True, text=True,
                            timeout=60, check=True)  # fmt: skip
    return json.loads(result.stdout)


def test_segment_geotiff_names_each_texture_as_gdal_and_qgis_read_it(tmp_path, capsys):
    scene = _scene(tmp_path)
    out = tmp_path / "labels.tif"
    common = ["--textures", "2", "--seed", "0", "--no-progress"]
    assert main(["segment", str(scene), str(out), *common]) == 0
    written = ["labels.tif", "labels.tif.aux.xml", "scene.tif"]  # and no .partial left
    assert sorted(p.name for p in tmp_path.iterdir()) == written
    names, columns, rows = _pam(out)
    # the names of the NGFF label image of the same segmentation, from the same place
    ngff = [p["name"] for p in _label_display({"n_textures": 2})["properties"]]
    assert names == ngff == NAMES
    assert columns == ["Value", "Name", "Red", "Green", "Blue", "Alpha"]
    rgba = label_rgba_8bit(2, BACKGROUND_COLOUR)
    assert rows == [[str(v), NAMES[v], *map(str, rgba[v])] for v in range(3)]
    with rasterio.open(out) as file:  # the colour table the names go with: the same colours
        colormap = file.colormap(1)
        labels = file.read(1)
    assert [colormap[v][:3] for v in range(3)] == [tuple(map(int, rgba[v][:3])) for v in range(3)]
    assert set(np.unique(labels)) == {0, 1, 2}
    capsys.readouterr()
    assert main(["info", str(out)]) == 0
    assert ("classes     0 background, 1 texture 1, 2 texture 2 (labels.tif.aux.xml beside it"
            in capsys.readouterr().out)  # fmt: skip

    # --overwrite with abundances (bands, no classes): the labels' names go with the labels
    assert main(["segment", str(scene), str(out), *common, "--abundances", "--overwrite"]) == 0
    assert not (tmp_path / "labels.tif.aux.xml").exists()
    with rasterio.open(out) as file:  # each band named by its texture, as in an OME-Zarr image
        assert file.descriptions == ("texture 1", "texture 2")
        assert file.dtypes == ("float32", "float32")
    capsys.readouterr()
    assert main(["info", str(out)]) == 0
    assert "classes" not in capsys.readouterr().out

    # and labels again over the abundances: named again
    assert main(["segment", str(scene), str(out), *common, "--overwrite"]) == 0
    assert _pam(out)[0] == NAMES


@pytest.mark.skipif(shutil.which("gdalinfo") is None, reason="needs GDAL's gdalinfo (gdal-bin)")
def test_gdalinfo_lists_the_category_names_and_the_attribute_table(tmp_path):
    """GDAL itself — the library QGIS reads rasters through — finds the sidecar, lists it among
    the file's files, and reads the names and the table: in a tiled GeoTIFF and in a COG."""
    labels = xr.DataArray(
        (np.arange(48 * 64).reshape(48, 64) // 700 % 3).astype(np.uint8), dims=("y", "x"),
        attrs={"n_textures": 2, "background_label": 0},
    )  # fmt: skip
    for name, cog in (("plain.tif", False), ("cog.tif", True)):
        path = write_geotiff(labels, tmp_path / name, cog=cog)
        info = _gdalinfo(path)
        assert sorted(info["files"]) == sorted([str(path), f"{path}.aux.xml"])
        band = info["bands"][0]
        assert band["categories"] == NAMES
        assert band["colorInterpretation"] == "Palette" and band["noDataValue"] == 0
        assert [f["name"] for f in info["rat"]["fieldDefn"]] == [
            "Value", "Name", "Red", "Green", "Blue", "Alpha"]  # fmt: skip
        rgba = label_rgba_8bit(2, BACKGROUND_COLOUR)
        assert [r["f"] for r in info["rat"]["row"]] == [
            [v, NAMES[v], *map(int, rgba[v])] for v in range(3)
        ]
        entries = band["colorTable"]["entries"][:3]
        assert [e[:3] for e in entries] == [list(map(int, rgba[v][:3])) for v in range(3)]


def test_write_geotiff_names_labels_only_and_leaves_no_stale_sidecar(tmp_path):
    """Labels of any integer dtype are named (without a colour table, a table of values and
    names); a map, and labels without ``n_textures``, get no sidecar and remove one left at
    their path (an orphan GDAL would read as the new file's: names on a float map)."""
    values = (np.arange(32 * 32).reshape(32, 32) // 300 % 4).astype(np.int32)
    wide = xr.DataArray(values, dims=("y", "x"), attrs={"n_textures": 3})
    path = write_geotiff(wide, tmp_path / "wide.tif")
    names, columns, rows = _pam(path)
    assert names == ["background", "texture 1", "texture 2", "texture 3"]
    assert columns == ["Value", "Name"]  # int32: no colour table, so no colours
    assert rows == [[str(v), names[v]] for v in range(4)]

    orphan = tmp_path / "map.tif.aux.xml"
    shutil.copy(f"{path}.aux.xml", orphan)  # no map.tif: GDAL leaves such a file in place
    plain = xr.DataArray(np.linspace(0, 1, 32 * 32).reshape(32, 32), dims=("y", "x"))
    write_geotiff(plain, tmp_path / "map.tif")
    assert not orphan.exists()
    unnamed = xr.DataArray(values.astype(np.uint8), dims=("y", "x"))
    write_geotiff(unnamed, tmp_path / "unnamed.tif")
    assert not (tmp_path / "unnamed.tif.aux.xml").exists()
    # labels written over named labels of other textures: named anew, 1 texture
    one = xr.DataArray((values > 0).astype(np.uint8), dims=("y", "x"), attrs={"n_textures": 1})
    write_geotiff(one, path)
    assert _pam(path)[0] == ["background", "texture 1"]


@contextlib.contextmanager
def _forgetting_filesystems(s3fs):
    """s3fs keeps one filesystem per set of options, the CLI's made from the environment
    (``AWS_ENDPOINT_URL``) among them: forgotten before (another module's server) and after
    (a later test's CLI would reach this server once it is gone)."""
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        yield
    finally:
        s3fs.S3FileSystem.clear_instance_cache()


def test_a_labels_geotiff_put_in_a_bucket_takes_its_names_along(tmp_path, monkeypatch):
    """At an s3:// URL the output is written here and put there: the sidecar too (on a real
    local S3 server, moto's server mode), and --overwrite with abundances removes it there."""
    s3fs = pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    from _servers import s3_server

    scene = _scene(tmp_path)
    common = ["--textures", "2", "--seed", "0", "--no-progress"]
    with s3_server() as options, _forgetting_filesystems(s3fs):
        monkeypatch.setenv("AWS_ENDPOINT_URL", options["endpoint_url"])
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["key"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["secret"])
        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("gis-categories")
        out = "s3://gis-categories/out/labels.tif"
        assert main(["segment", str(scene), out, *common]) == 0
        fs.get("gis-categories/out/labels.tif", str(tmp_path / "got.tif"))
        fs.get("gis-categories/out/labels.tif.aux.xml", str(tmp_path / "got.tif.aux.xml"))
        assert _pam(tmp_path / "got.tif")[0] == NAMES
        assert main(["segment", str(scene), out, *common, "--abundances", "--overwrite"]) == 0
        fs.invalidate_cache()
        assert fs.exists("gis-categories/out/labels.tif")
        assert not fs.exists("gis-categories/out/labels.tif.aux.xml")
