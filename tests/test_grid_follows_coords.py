"""A result's GeoTransform follows its image's coordinates; rotated and sheared scenes are
measured on the ground.

xarray keeps a scalar coord's attrs through ``sortby``, ``isel`` and a Zarr round trip, so the
GeoTransform of a south-up ``open_image(tif).sortby("y")`` is still the north-up scene's: its
results kept ``e < 0`` with the origin taken from their (ascending) coords, and a stride-8 map
landed 2.5 km south and upside down. A rotated or sheared scene's coords are pixel indices, so
no ground pixel size was found: a texture model of a rotated 10 m scene took 30 m scenes, and
a sheared grid was not flagged at all. Every scene here is a GeoTIFF written by rasterio and
every output is read back by rasterio or rioxarray.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import xfskde
from xfskde._labels import ground_pixel_size
from xfskde.cli import main
from xfskde.exceptions import ParameterError, PixelAspectWarning
from xfskde.io import open_image, write_geotiff
from xfskde.segmentation import fit_textures

rioxarray = pytest.importorskip("rioxarray")
rasterio = pytest.importorskip("rasterio")
from affine import Affine  # noqa: E402  (rasterio's dependency)

N = 120
#: The scene's 12 southernmost rows are nodata (0): they lie at y < SOUTH_EDGE.
SOUTH_EDGE = 5_000_000.0 - 10.0 * (N - 12)
NORTH_UP = Affine(10.0, 0.0, 500000.0, 0.0, -10.0, 5000000.0)
CRS = "EPSG:32633"


def _rotated(step: float, degrees: float = -30.0) -> Affine:
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return Affine(step * c, step * s, 500000.0, step * s, -step * c, 5000000.0)


def _scene(path, transform: Affine = NORTH_UP) -> None:
    """A uint16 scene of two gratings (left and right halves), nodata 0 in its last 12 rows."""
    yy, xx = np.mgrid[:N, :N]
    theta = np.where(xx < N // 2, 0.3, 1.3)
    wave = np.sin((xx * np.cos(theta) + yy * np.sin(theta)) * 2 * np.pi / 8)
    rng = np.random.default_rng(0)
    pixels = (2000 + 800 * wave + rng.normal(0, 30, wave.shape)).astype(np.uint16)
    pixels[-12:] = 0
    with rasterio.open(path, "w", driver="GTiff", width=N, height=N, count=1, dtype="uint16",
                       crs=CRS, transform=transform, nodata=0) as out:  # fmt: skip
        out.write(pixels, 1)


def _energy(image, stride: int):
    field = xfskde.local_fskde(image, order=4, window="box", size=stride, stride=stride)
    return field.fskde.energy()


def _read(path):
    """The file's transform and bounds as rasterio reads them, and its band as rioxarray
    does, rows sorted north-up (a south-up file's y ascends)."""
    with rasterio.open(path) as src:
        transform, bounds = src.transform, tuple(src.bounds)
    band = rioxarray.open_rasterio(path).squeeze("band", drop=True)
    assert band.rio.transform(recalc=True) == transform  # its coords say what its transform does
    return transform, bounds, band.sortby("y", ascending=False)


def _ordered(bounds) -> tuple[float, ...]:
    left, bottom, right, top = bounds
    return min(left, right), min(bottom, top), max(left, right), max(bottom, top)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_south_up_scene_s_results_lie_where_its_pixels_are(tmp_path):
    """``open_image(tif).sortby("y")``: maps at strides 5, 8 and 11 and labels on the scene's
    ground, their GeoTIFFs south-up (``e > 0``, rasterio's bounds top and bottom swapped), the
    values those of the north-up scene's results (at an odd stride, whose samples are the
    cells' centres either way up); they were 1.2 km south, upside down."""
    _scene(tmp_path / "north.tif")
    north = open_image(tmp_path / "north.tif")
    south = north.sortby("y")
    assert (np.diff(south.y.values) > 0).all()
    for stride in (5, 8, 11):
        ref = write_geotiff(_energy(north, stride), tmp_path / f"north{stride}.tif")
        got = write_geotiff(_energy(south, stride), tmp_path / f"south{stride}.tif")
        ref_t, ref_bounds, ref_band = _read(ref)
        got_t, got_bounds, got_band = _read(got)
        side = 10.0 * stride
        assert ref_t == Affine(side, 0.0, 500000.0, 0.0, -side, 5000000.0)  # as before
        assert got_t == Affine(side, 0.0, 500000.0, 0.0, side, 5000000.0 - 10.0 * N)
        if stride in (5, 8):  # cells anchored at either edge are the same cells
            assert got_bounds == (500000.0, 5000000.0, 501200.0, 4998800.0)
            assert _ordered(got_bounds) == ref_bounds == (500000.0, 4998800.0, 501200.0, 5e6)
            np.testing.assert_array_equal(got_band.y, ref_band.y)
        else:  # 120 = 10*11 + 10: the last cell overhangs the edge the cells do not start at
            assert _ordered(got_bounds) == (500000.0, 4998800.0, 501210.0, 5000010.0)
        if stride == 5:
            np.testing.assert_array_equal(np.isnan(got_band), np.isnan(ref_band))
            np.testing.assert_allclose(got_band, ref_band, rtol=1e-4)
    labels = xfskde.segment(south, 2, size=4, sample=2000, seed=0)
    assert labels.spatial_ref.attrs["GeoTransform"] == "500000.0 10.0 0.0 4998800.0 0.0 10.0"
    transform, _, band = _read(write_geotiff(labels, tmp_path / "labels.tif"))
    assert transform == Affine(10.0, 0.0, 500000.0, 0.0, 10.0, 4998800.0)
    nodata = band.y.values < SOUTH_EDGE  # the scene's nodata rows: background, there
    assert nodata.sum() == 12 and (band.values[nodata] == 0).all()
    assert (band.values[~nodata] != 0).mean() > 0.99


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_south_up_zarr_written_by_xarray_gives_maps_on_the_ground(tmp_path, capsys):
    """The scene flipped south-up by rioxarray and stored with ``to_zarr``, its stale
    GeoTransform with it: ``xfskde maps`` writes the north-up scene's map, south-up."""
    _scene(tmp_path / "north.tif")
    band = rioxarray.open_rasterio(tmp_path / "north.tif").squeeze("band", drop=True)
    flipped = band.isel(y=slice(None, None, -1)).rename("B04")
    assert flipped.spatial_ref.attrs["GeoTransform"].endswith(" -10.0")  # stale
    flipped.to_dataset().to_zarr(tmp_path / "south.zarr", mode="w", consolidated=False)
    for name in ("north.tif", "south.zarr"):
        argv = ["maps", str(tmp_path / name), str(tmp_path / f"{name}.maps.tif")]
        assert main([*argv, "--stride", "5", "--no-progress"]) == 0, capsys.readouterr().err
    with rasterio.open(tmp_path / "north.tif.maps.tif") as ref:
        ref_t, ref_bands = ref.transform, ref.read()
    with rasterio.open(tmp_path / "south.zarr.maps.tif") as got:
        got_t, got_bands, names = got.transform, got.read(), got.descriptions
    assert ref_t == Affine(50.0, 0.0, 500000.0, 0.0, -50.0, 5000000.0)
    assert got_t == Affine(50.0, 0.0, 500000.0, 0.0, 50.0, 4998800.0)  # was -50, 4998825
    energy = [i for i, d in enumerate(names) if d == "energy"]
    assert energy and np.isnan(got_bands[energy[0]][0]).all()  # the south's nodata cells, first
    ref_e, got_e = ref_bands[energy[0]], got_bands[energy[0]][::-1]
    np.testing.assert_array_equal(np.isnan(got_e), np.isnan(ref_e))
    np.testing.assert_allclose(got_e, ref_e, rtol=1e-4)


def test_a_north_up_scene_s_outputs_are_as_before(tmp_path):
    """North-up (and a crop of it) GeoTransforms are exactly those of before, to the last
    digit: the coords' steps agree with the file's."""
    _scene(tmp_path / "north.tif")
    north = open_image(tmp_path / "north.tif")
    for stride, text in ((1, "500000.0 10.0 0.0 5000000.0 0.0 -10.0"),
                         (3, "500000.0 30.0 0.0 5000000.0 0.0 -30.0"),
                         (8, "500000.0 80.0 0.0 5000000.0 0.0 -80.0")):  # fmt: skip
        assert _energy(north, stride).spatial_ref.attrs["GeoTransform"] == text
    crop = north.isel(y=slice(5, None), x=slice(7, None))
    assert _energy(crop, 8).spatial_ref.attrs["GeoTransform"] == (
        "500070.0 80.0 0.0 4999950.0 0.0 -80.0"
    )
    labels = xfskde.segment(north, 2, size=4, sample=2000, seed=0)
    transform, bounds, _ = _read(write_geotiff(labels, tmp_path / "labels.tif"))
    assert transform == NORTH_UP and bounds == (500000.0, 4998800.0, 501200.0, 5000000.0)


def test_a_subsample_s_results_have_its_pixel_size(tmp_path):
    """Every other column of a scene: its coords step 20 m, as rioxarray's
    ``rio.transform(recalc=True)`` says; its maps were written 10 m wide, half their width."""
    _scene(tmp_path / "north.tif")
    every_other = open_image(tmp_path / "north.tif").isel(x=slice(None, None, 2))
    recalc = every_other.rio.transform(recalc=True)
    assert tuple(recalc)[:6] == (20.0, 0.0, 499995.0, 0.0, -10.0, 5000000.0)
    written = write_geotiff(_energy(every_other, 6), tmp_path / "every_other.tif")
    transform, bounds, _ = _read(written)
    assert transform == recalc * Affine.scale(6)  # was (60, 0, 499975, 0, -60, 5e6)
    assert bounds == (499995.0, 4998800.0, 501195.0, 5000000.0)


def test_coords_no_transform_can_follow_are_refused(tmp_path):
    """Unevenly spaced coords under a GeoTransform, and a rotated scene's rows reordered: no
    transform places their results, which were written as if the GeoTransform were true."""
    _scene(tmp_path / "north.tif")
    north = open_image(tmp_path / "north.tif")
    uneven = north.isel(x=[*range(40), *range(41, N)])
    with pytest.raises(ParameterError, match=r"x coords are not evenly spaced.*image\.interp"):
        _energy(uneven, 8)
    with pytest.raises(ParameterError, match="x coords are not evenly spaced"):
        xfskde.segment(uneven, 2, size=4, sample=2000)
    _scene(tmp_path / "rotated.tif", _rotated(10.0))
    rotated = open_image(tmp_path / "rotated.tif")
    with pytest.raises(ParameterError, match=r"xc and yc coords do not follow.*rio\.reproject"):
        _energy(rotated.isel(y=slice(None, None, -1)), 8)


@pytest.mark.filterwarnings("ignore::xfskde.exceptions.PixelAspectWarning")
def test_a_rotated_crop_s_results_lie_on_the_crop(tmp_path):
    """A crop of a rotated scene keeps the scene's GeoTransform: its maps were written at the
    scene's corner; the origin now follows its ``xc``/``yc`` centres. The whole scene's are as
    before."""
    transform = _rotated(10.0)
    _scene(tmp_path / "rotated.tif", transform)
    rotated = open_image(tmp_path / "rotated.tif")
    with rasterio.open(write_geotiff(_energy(rotated, 8), tmp_path / "whole.tif")) as src:
        assert src.transform == transform * Affine.scale(8)
    crop = rotated.isel(y=slice(16, None), x=slice(8, None))
    with rasterio.open(write_geotiff(_energy(crop, 8), tmp_path / "crop.tif")) as src:
        expected = transform * Affine.translation(8, 16) * Affine.scale(8)
        assert src.transform.almost_equals(expected, precision=1e-6)
        assert src.width == 14 and src.height == 13


def test_rotated_and_sheared_scenes_are_measured_on_the_ground(tmp_path):
    """A texture model of a rotated 10 m scene records its pixel size and refuses 30 m scenes,
    rotated or north-up; a north-up 10 m model refuses a rotated 30 m scene (both were taken).
    A sheared grid's pixels are measured along its rows and columns."""
    scenes = {"rot10": _rotated(10.0), "rot30": _rotated(30.0), "north10": NORTH_UP,
              "north30": Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 5000000.0),
              "shear": Affine(10.0, 5.0, 500000.0, 0.0, -10.0, 5000000.0)}  # fmt: skip
    images = {}
    for name, transform in scenes.items():
        _scene(tmp_path / f"{name}.tif", transform)
        images[name] = open_image(tmp_path / f"{name}.tif")
    north = ground_pixel_size(images["north10"])
    assert north == pytest.approx((10.004, 10.004), abs=1e-3)  # UTM's scale at 15° E, 0.9996
    assert ground_pixel_size(images["rot10"]) == pytest.approx(north, rel=1e-6)
    assert ground_pixel_size(images["rot30"]) == pytest.approx((30.012, 30.012), abs=1e-3)
    assert ground_pixel_size(images["shear"]) == pytest.approx(
        (10.004 * math.sqrt(1.25), 10.004), abs=1e-3
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PixelAspectWarning)
        model = fit_textures(images["rot10"], 2, size=4, sample=2000, seed=0)
        assert model.pixel_size == pytest.approx((10.004e6, 10.004e6), rel=1e-4)
        for other in ("rot30", "north30"):
            with pytest.raises(ParameterError, match=r"30 m on the ground.* fitted on 10 m"):
                model.predict(images[other])
        model.predict(images["north10"])  # the same ground resolution, north-up
        north_model = fit_textures(images["north10"], 2, size=4, sample=2000, seed=0)
        with pytest.raises(ParameterError, match=r"30 m on the ground.* fitted on 10 m"):
            north_model.predict(images["rot30"])


def test_a_sheared_grid_is_flagged(tmp_path):
    """A sheared GeoTransform ``(10, 5, ., 0, -10)``: its rows' axis is 26.6° off
    perpendicular to its columns', so its gradient angles are not those on the ground; a
    rotated grid is flagged as rotated only, a north-up one not at all."""
    _scene(tmp_path / "shear.tif", Affine(10.0, 5.0, 500000.0, 0.0, -10.0, 5000000.0))
    with pytest.warns(PixelAspectWarning, match=r"sheared: its rows' axis is 26\.6° off perpe"):
        _energy(open_image(tmp_path / "shear.tif"), 8)
    _scene(tmp_path / "rotated.tif", _rotated(10.0))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        _energy(open_image(tmp_path / "rotated.tif"), 8)
    aspect = [str(w.message) for w in said if w.category is PixelAspectWarning]
    assert len(aspect) == 1 and "rotated -30°" in aspect[0]
    _scene(tmp_path / "north.tif")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PixelAspectWarning)
        _energy(open_image(tmp_path / "north.tif"), 8)
