"""An area of interest kept as a GIS vector file in a bucket or on a web server — a GeoPackage,
FlatGeobuf, KML or zipped shapefile at ``s3://`` (a real local moto server, reached with the
storage options of the other inputs) or ``http://`` (a real local file server) — is drawn as the
same file read locally draws it. They were refused ("a GeoPackage is read from a local file;
download it"), though a GeoJSON was read at the same URL; a shapefile at a URL, whose sidecar
files GDAL cannot reach, is refused in one line that says to zip it.
"""

import numpy as np
import pytest
from _servers import http_server, s3_server

import xfskde
from xfskde.exceptions import ParameterError
from xfskde.io import Location
from xfskde.masks import resolve_mask

geopandas = pytest.importorskip("geopandas")
shapely = pytest.importorskip("shapely")
s3fs = pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("aiohttp")

IMAGE = np.arange(100 * 200, dtype=np.uint16).reshape(100, 200)
#: Written by GDAL's drivers; on an image without a CRS the vertices are its pixels.
DRIVERS = {"aoi.gpkg": "GPKG", "aoi.fgb": "FlatGeobuf", "aoi.kml": "KML",
           "aoi.shp.zip": "ESRI Shapefile"}  # fmt: skip
#: Pixel centres inside the region (x 40..170, y 30..80, and a triangle cut out of it).
REGION = shapely.difference(shapely.box(40, 30, 170, 80), shapely.Polygon([(60, 40), (90, 40),
                                                                           (60, 70)]))  # fmt: skip


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("aoi")
    frame = geopandas.GeoDataFrame({"name": ["field"]}, geometry=[REGION], crs="EPSG:4326")
    for name, driver in DRIVERS.items():
        frame.to_file(directory / name, driver=driver)
    frame.to_file(directory / "two.gpkg", layer="first")
    frame.to_file(directory / "two.gpkg", layer="second")
    (directory / "damaged.gpkg").write_bytes(b"SQLite format 3\0" + bytes(200))
    np.save(directory / "image.npy", IMAGE)
    return directory


@pytest.fixture(scope="module")
def s3(files):
    """Storage options of a moto S3 server whose bucket ``aoi-masks`` holds the files."""
    with s3_server() as options:
        # s3fs keeps a filesystem per set of options, with what it listed: another module's
        # server on the same endpoint left a bucket there in its cache (FileExistsError)
        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("aoi-masks")
        for path in files.iterdir():
            fs.put(str(path), f"aoi-masks/{path.name}")
        yield options


@pytest.fixture(scope="module")
def served(files):
    with http_server(files) as url:
        yield url


def _expected():
    rows, cols = np.mgrid[:100, :200] + 0.5
    return shapely.contains_xy(REGION, cols, rows)


@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_vector_aoi_in_a_bucket_is_the_local_file_s_mask(files, s3, name):
    local = resolve_mask(str(files / name), IMAGE)
    assert local.values.sum() == _expected().sum() > 0
    remote = resolve_mask(Location(f"s3://aoi-masks/{name}", s3), IMAGE)
    np.testing.assert_array_equal(remote.values, local.values)
    assert remote.attrs["source"] == f"s3://aoi-masks/{name}" and remote.attrs["source_version"]


@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_vector_aoi_over_http_is_the_local_file_s_mask(files, served, name):
    remote = resolve_mask(f"{served}/{name}", IMAGE)
    np.testing.assert_array_equal(remote.values, resolve_mask(str(files / name), IMAGE).values)
    np.testing.assert_array_equal(remote.values, _expected())


def test_an_aoi_beside_an_s3_image_is_read_with_its_storage_options(files, s3):
    """``open_image("s3://...", storage_options=...)`` then ``mask="s3://.../aoi.gpkg"``: the
    mask is reached with the image's options (no AWS_* environment here)."""
    image = xfskde.open_image("s3://aoi-masks/image.npy", storage_options=s3)
    remote = resolve_mask("s3://aoi-masks/aoi.gpkg", image)
    np.testing.assert_array_equal(remote.values, _expected())


def test_a_shapefile_at_a_url_is_refused_saying_to_zip_it(served):
    with pytest.raises(ParameterError, match=r"aoi\.shp: .*zip them as aoi\.shp\.zip") as error:
        resolve_mask(f"{served}/aoi.shp", IMAGE)
    assert "\n" not in str(error.value)


def test_a_remote_file_of_several_layers_or_damaged_is_refused_naming_its_url(s3, served):
    with pytest.raises(ParameterError, match=r"two\.gpkg holds 2 layers \(first, second\)"):
        resolve_mask(Location("s3://aoi-masks/two.gpkg", s3), IMAGE)
    with pytest.raises(ParameterError, match=r"cannot read http://.*/damaged\.gpkg as a Geo") as e:
        resolve_mask(f"{served}/damaged.gpkg", IMAGE)
    assert "vsimem" not in str(e.value)
    with pytest.raises(FileNotFoundError, match=r"s3://aoi-masks/nothing\.gpkg"):
        resolve_mask(Location("s3://aoi-masks/nothing.gpkg", s3), IMAGE)
