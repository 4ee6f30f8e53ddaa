"""xfskde's outputs as a GIS opens them: the regions of labels (``*.geojson``, ``*.gpkg``) read
back by pyogrio and shapely — valid polygons that tile the labelled pixels exactly (no sliver,
no gap, each texture the area of its pixels), wound as RFC 7946 has it, with integer labels and
the scene's CRS — and an area of interest drawn on a crop of a rotated scene as GDAL draws it."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde.cli import main
from xfskde.io.geojson import write_labels_geojson, write_labels_vector
from xfskde.masks import resolve_mask

rasterio = pytest.importorskip("rasterio")
pytest.importorskip("rioxarray")
gpd = pytest.importorskip("geopandas")
pyogrio = pytest.importorskip("pyogrio")
shapely = pytest.importorskip("shapely")
from rasterio.features import rasterize  # noqa: E402
from rasterio.transform import Affine, from_origin  # noqa: E402

PIXEL_AREA = 100.0  # 10 m pixels


def _awkward_labels() -> np.ndarray:
    """Labels with every case a polygonizer can get wrong: blocks of noise (pixels of one label
    touching at corners only), a ring of one texture around another with a hole, a hole of
    the background touching the ring's outside at a corner, a one-pixel island, nodata (0)
    along the left and bottom edges, and textures along the scene's border."""
    rng = np.random.default_rng(3)
    labels = np.repeat(np.repeat(rng.integers(0, 4, (40, 48)), 2, 0), 2, 1).astype(np.uint8)
    labels[30:62, 40:72] = 1
    labels[38:54, 48:64] = 2  # inside the ring of 1
    labels[44:48, 54:58] = 0  # a hole in 2
    labels[40, 60] = 3  # an island in 2
    labels[34:40, 34:40] = 3
    labels[40, 40] = 0  # a background pocket of 1 touching its outside at a corner
    labels[39, 39] = 0
    labels[10, 11] = labels[11, 10] = 2  # two pixels of 2 touching at a corner
    labels[10, 10] = labels[11, 11] = 3
    labels[:, :3] = 0  # nodata along the swath's edge
    labels[-2:, :] = 0
    return np.pad(labels, ((0, 0), (0, 8)), constant_values=1)  # a texture along the border


def _scene_labels(tmp_path, labels: np.ndarray) -> xr.DataArray:
    """``labels`` as the labels of a north-up UTM scene (10 m pixels), as xfskde opens them."""
    ny, nx = labels.shape
    grid = from_origin(300_000, 5_000_000, 10, 10)
    profile = {"driver": "GTiff", "width": nx, "height": ny, "count": 1, "dtype": "uint8",
               "crs": "EPSG:32632", "transform": grid}  # fmt: skip
    with rasterio.open(tmp_path / "labels.tif", "w", **profile) as file:
        file.write(labels, 1)
    opened = xfskde.open_image(tmp_path / "labels.tif").load()
    opened.attrs["n_textures"] = 3
    return opened


def _check_tiling(frame, labels: np.ndarray, transform) -> None:
    """The regions of ``frame`` as a GIS checks them: valid, each texture the area of its
    pixels, no overlap, their union the labelled pixels; exteriors counterclockwise and holes
    clockwise (RFC 7946); and GDAL's rasterizer burns them back onto the labels."""
    assert frame["label"].dtype.kind == "i"
    assert frame.crs.to_epsg() == 32632
    geometries = dict(zip(frame["label"].tolist(), frame.geometry, strict=True))
    assert sorted(geometries) == [1, 2, 3]
    for label, geometry in geometries.items():
        assert geometry.is_valid, (label, shapely.is_valid_reason(geometry))
        assert geometry.area == pytest.approx((labels == label).sum() * PIXEL_AREA, abs=1e-3)
        for part in geometry.geoms:
            assert part.exterior.is_ccw
            assert not any(hole.is_ccw for hole in part.interiors)
    regions = list(geometries.values())
    overlap = sum(a.intersection(b).area for i, a in enumerate(regions) for b in regions[i + 1 :])
    assert overlap == pytest.approx(0.0, abs=1e-6)
    union = shapely.union_all(regions)
    assert union.area == pytest.approx((labels > 0).sum() * PIXEL_AREA, abs=1e-3)
    burnt = rasterize(list(zip(frame.geometry, frame["label"], strict=True)),
                      out_shape=labels.shape, transform=transform, dtype="uint8")  # fmt: skip
    np.testing.assert_array_equal(burnt, labels)


def test_regions_tile_the_labelled_pixels_exactly_as_gdal_polygonize_would(tmp_path):
    """The outlines run along the pixels' edges, shared by neighbouring textures vertex for
    vertex. They were traced between pixel centres texture by texture (marching squares, then
    simplified): every pixel corner cut, the neighbours' cuts crossing, so that on these
    labels the textures overlapped and left gaps, and each lost area (a one-pixel island was
    a diamond of half its area); on noise (5 labels at random, 256²) their union covered 69 %
    of the labelled pixels."""
    labels = _awkward_labels()
    scene = _scene_labels(tmp_path, labels)
    transform = from_origin(300_000, 5_000_000, 10, 10)
    write_labels_geojson(scene, tmp_path / "labels.geojson")
    write_labels_vector(scene, tmp_path / "labels.gpkg")
    for name in ("labels.geojson", "labels.gpkg"):
        assert pyogrio.read_info(tmp_path / name)["geometry_type"] == "MultiPolygon"
        _check_tiling(gpd.read_file(tmp_path / name), labels, transform)
    noise = np.random.default_rng(1).integers(0, 5, (64, 64)).astype(np.uint8)
    write_labels_geojson(_scene_labels(tmp_path, noise), tmp_path / "noise.geojson")
    frame = gpd.read_file(tmp_path / "noise.geojson")
    assert all(frame.geometry.is_valid)
    assert shapely.union_all(frame.geometry).area == (noise > 0).sum() * PIXEL_AREA


def test_segment_writes_regions_of_the_area_its_geotiff_labels(tmp_path):
    """``xfskde segment`` to ``*.tif`` and ``*.geojson`` of the same scene: each texture's
    polygons have the area of its pixels in the GeoTIFF (they lacked a pixel or more each: a
    cut corner per turn of the outline), and tile the labelled area."""
    ny, nx = 96, 128
    yy, xx = np.mgrid[:ny, :nx]
    pixels = np.where(xx < nx // 2, np.sin(2 * np.pi * xx / 6), np.sin(2 * np.pi * yy / 6))
    pixels = (pixels * 1000 + 5000).astype(np.uint16)
    pixels[:, :10] = 0  # nodata: the swath's edge
    profile = {"driver": "GTiff", "width": nx, "height": ny, "count": 1, "dtype": "uint16",
               "crs": "EPSG:32632", "transform": from_origin(300_000, 5_000_000, 10, 10),
               "nodata": 0}  # fmt: skip
    with rasterio.open(tmp_path / "scene.tif", "w", **profile) as file:
        file.write(pixels, 1)
    common = ["--textures", "2", "--seed", "0", "--no-progress"]
    assert main(["segment", str(tmp_path / "scene.tif"), str(tmp_path / "l.tif"), *common]) == 0
    assert main(["segment", str(tmp_path / "scene.tif"), str(tmp_path / "l.geojson"),
                 *common]) == 0  # fmt: skip
    with rasterio.open(tmp_path / "l.tif") as file:
        labels, transform = file.read(1), file.transform
    assert (labels[:, :10] == 0).all() and set(np.unique(labels)) == {0, 1, 2}
    frame = gpd.read_file(tmp_path / "l.geojson")
    for label, geometry in zip(frame["label"], frame.geometry, strict=True):
        assert geometry.is_valid
        assert geometry.area == pytest.approx((labels == label).sum() * PIXEL_AREA, abs=1e-3)
    union = shapely.union_all(frame.geometry)
    assert union.area == pytest.approx((labels > 0).sum() * PIXEL_AREA, abs=1e-3)
    burnt = rasterize(list(zip(frame.geometry, frame["label"], strict=True)),
                      out_shape=labels.shape, transform=transform, dtype="uint8")  # fmt: skip
    np.testing.assert_array_equal(burnt, labels)


def test_an_area_of_interest_on_a_crop_of_a_rotated_scene(tmp_path):
    """A crop (``isel``) of a scene with a rotated GeoTransform keeps the whole scene's
    transform and its own ``xc``/``yc`` centres: a polygon mask is drawn on the crop's pixels
    as GDAL draws it with the crop's transform (it was refused: "does not place its first
    pixel where its xc and yc coords do")."""
    transform = Affine(8.660254, -5.0, 300_000.0, -5.0, -8.660254, 5_000_000.0)  # 30 degrees
    profile = {"driver": "GTiff", "width": 80, "height": 64, "count": 1, "dtype": "uint8",
               "crs": "EPSG:32632", "transform": transform}  # fmt: skip
    with rasterio.open(tmp_path / "rotated.tif", "w", **profile) as file:
        file.write(np.full((64, 80), 7, np.uint8), 1)
    crop = xfskde.open_image(tmp_path / "rotated.tif").isel(y=slice(10, 50), x=slice(20, 70))
    of_crop = transform @ Affine.translation(20, 10)
    ring = [of_crop @ corner for corner in [(5.2, 5.2), (35.7, 3.1), (30.2, 25.2), (5.2, 20.9)]]
    aoi = {"type": "Polygon", "coordinates": [[*ring, ring[0]]],
           "crs": {"type": "name", "properties": {"name": "EPSG:32632"}}}  # fmt: skip
    gdal = rasterize([aoi], out_shape=(40, 50), transform=of_crop).astype(bool)
    assert gdal.sum() > 400
    np.testing.assert_array_equal(resolve_mask(aoi, crop).values, gdal)
