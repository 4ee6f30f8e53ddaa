"""Values that are no data of the image (a nodata marker its metadata do not name: -9999 in an
image in [0, 1], float32's lowest) are refused in one line that names them, wherever they lie:
in the tiles the levels are measured on, in a block only the labels read, in a pixel that cells
would average away, in another image a model is applied to. And a fit refused for too few
samples says how many pixels there are and how many it needs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import ParameterError
from xfskde.metrics import rand_index
from xfskde.segmentation import fit_textures, segment
from xfskde.segmentation.defaults import EXTREME, LEVEL_SPANS, data_bounds

LOWEST = float(np.finfo(np.float32).min)  # -3.4028235e+38


def _texture(side: int, seed: int = 8) -> np.ndarray:
    image, _ = random_textures((side, side), seed=seed)
    return image.astype(np.float32)


def test_the_bounds_lie_fifty_spans_beyond_the_levels():
    """The span is white - black, at least 1/50 of the levels' magnitude (tiles nearly flat at
    0.95, a slide's glass: 0 and 1.9 stay within); all tiles 0, or no levels: ±1e30 only."""
    assert LEVEL_SPANS == 50 and EXTREME == 1e30
    assert data_bounds((0.0, 1.0)) == (-50.0, 51.0)
    assert data_bounds((100.0, 300.0)) == (-9900.0, 10300.0)
    low, high = data_bounds((0.95, 0.95))
    assert low == pytest.approx(0.0) and high == pytest.approx(1.9)
    assert data_bounds((0.0, 0.0)) == data_bounds(None) == (-1e30, 1e30)
    assert data_bounds((1e29, 9e29)) == (-1e30, 1e30)


@pytest.mark.parametrize("value", [-9999.0, -100.0, 100.0, 1e6])
def test_one_pixel_far_beyond_the_levels_is_refused_by_its_value(value):
    """One pixel of -9999 in a float image in [0, 1] relabelled all of it (Rand against the
    truth 0.989 -> 0.381, the features chosen colour -> FS-KDE), ±100 changed the groups chosen,
    1e6 the window: all silently. Each is refused, named, with the nodata to give."""
    image = _texture(256)
    image[200, 100] = value
    text = f"{value:.0f}"
    said = rf"value {text} .*, \S+ spans beyond the levels it is read in .*more than 50: "
    with pytest.raises(ParameterError, match=said + rf".*nodata={text} \(--nodata={text}\)"):
        segment(image, 3)


def test_values_within_the_bounds_are_data():
    """20 spans beyond the levels (a highlight, a hot pixel) is segmented; named as nodata,
    the -9999 pixel is background and the others keep the clean image's labels."""
    clean = _texture(256)
    bright = clean.copy()
    bright[200, 100] = 20.0
    labels = np.asarray(segment(bright, 3))
    assert labels[200, 100] > 0 and set(np.unique(labels)) == {1, 2, 3}
    hole = clean.copy()
    hole[200, 100] = -9999.0
    labels = np.asarray(segment(hole, 3, nodata=-9999))
    assert labels[200, 100] == 0 and (np.delete(labels.ravel(), 200 * 256 + 100) > 0).all()
    assert rand_index(np.asarray(segment(clean, 3)), labels) > 0.99


def test_a_block_refuses_what_the_tiles_missed():
    """A 16² patch of float32's lowest at a corner of 1024² that the fit's 16 probe tiles miss
    was segmented as a texture, status 0, with numpy's "overflow encountered" warnings: the
    blocks the fit and the labels read are checked too, and name the pixel."""
    image = _texture(1024)
    image[1000:1016, 1000:1016] = LOWEST
    with pytest.raises(ParameterError, match=r"as large as -3\.4028235e\+38 at pixel \(y 10\d\d, "
                       r"x 10\d\d\) .*nodata=-3\.4028235e\+38"):  # fmt: skip
        segment(image, 3)
    model = fit_textures(image[:256, :256], 3)  # clean
    with pytest.raises(ParameterError, match=r"-3\.4028235e\+38 at pixel \(y 1000, x 1000\)"):
        model.predict(image)
    labels = np.asarray(model.predict(image, nodata=LOWEST))
    assert (labels[1000:1016, 1000:1016] == 0).all() and (labels[:1000] > 0).all()


def test_a_model_refuses_another_image_beyond_its_levels():
    """A model applied to another image reads it in the levels it recorded (``value_range``):
    a -9999 patch where that image's tiles do not reach is refused, its levels matched or not;
    outside the mask it is no texture, and not refused."""
    model = fit_textures(_texture(256), 3)
    image = _texture(1024, seed=9)
    image[1000:1004, 1000:1004] = -9999.0
    said = r"value -9999 at pixel \(y 1000, x 1000\), [\d.e+]+ spans"
    for match in (False, True, "channels"):
        with pytest.raises(ParameterError, match=said):
            model.predict(image, match_levels=match)
    mask = np.ones(image.shape[:2], bool)
    mask[990:, 990:] = False
    labels = np.asarray(model.predict(image, mask=mask))
    assert (labels[1000:1004, 1000:1004] == 0).all() and (labels[:990] > 0).all()


def test_cells_do_not_average_a_marker_away():
    """Coarse textures are analysed on f × f cells: one pixel 220 spans beyond the levels is 14
    spans beyond them in its 4 × 4 cell's mean, and -3.4e38 would still pass 1e30 there. Each
    pixel is checked before the cells are averaged, in the labels and in the fit (here one
    that measures nothing on the image: no levels, the 1e30 bound only)."""
    clean = _texture(256)
    model = fit_textures(clean, 3, size=24, resolution=4)
    assert model.resolution == 4
    image = _texture(1024, seed=9)  # where its probe tiles do not reach
    image[1000, 1000] = 200.0
    with pytest.raises(ParameterError, match=r"value 200 at pixel \(y 1000, x 1000\), 2\d\d spans"):
        model.predict(image)
    labels = np.asarray(model.predict(image, nodata=200))
    assert labels[1000, 1000] == 0 and (labels[:996] > 0).all()
    image = clean.copy()
    image[200, 100] = LOWEST
    with pytest.raises(ParameterError, match=r"-3\.4028235e\+38 at pixel \(y 200, x 100\)"):
        fit_textures(image, 3, features=("fskde",), size=24, resolution=4, color_ranges="unit")


def test_a_saturated_level_is_data_and_a_hole_is_not():
    """A hole of -9999 over 4.6 % of an image is its black level itself (the 0.1th
    percentile): it is set against the levels of the other values. A saturated level (cells
    of 1 on a dark field of 0.01-0.02, their rims leading up to it) is no marker, however far
    above the field: segmented."""
    hole = _texture(256)
    hole[:50, :60] = -9999.0
    with pytest.raises(ParameterError, match=r"value -9999 \(in the tiles .*nodata=-9999"):
        segment(hole, 3)
    yy, xx = np.mgrid[:256, :256]
    field = 0.015 + 0.005 * (_texture(256) - 0.5)
    for y, x in ((60, 70), (180, 190)):  # saturated discs, their rims one pixel wide
        disc = np.clip(5.5 - np.hypot(yy - y, xx - x), 0, 1)[..., None]
        field = np.maximum(field, disc.astype(np.float32))
    values = field.ravel()
    rest = values[values != 1]
    # saturated: more than 0.05 % of the values; the others' levels 98 spans below
    assert (values == 1).mean() > 0.002 and np.percentile(rest, 99.9) < 0.018
    assert np.asarray(segment(field, 3)).min() > 0


def test_small_integers_are_counts_not_markers():
    """8- and 16-bit integers are a detector's counts (a hot or saturated pixel is data, and
    no value lies beyond the dtype): not checked. 32-bit integers are."""
    counts = (_texture(256) * 1000).astype(np.uint16)
    counts[200, 100] = 65535  # 65 spans beyond 0-1000
    assert set(np.unique(np.asarray(segment(counts, 3)))) == {1, 2, 3}
    wide = (_texture(256) * 1000).astype(np.int32)
    wide[200, 100] = np.iinfo(np.int32).min
    with pytest.raises(ParameterError, match=r"value -2147483648 .*nodata=-2147483648"):
        segment(wide, 3)


def test_a_geotiff_hole_without_its_nodata_tag_is_refused(tmp_path, capsys):
    """A float GeoTIFF in [0, 1] with a 50 × 60 hole of -9999 and no nodata tag, or a wrong one
    (-1), was segmented with the hole a texture; with the tag but the hole in one band only,
    too. Each is refused in one line saying what to give; given, the hole is background."""
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    image = _texture(256)
    hole = image.copy()
    hole[:50, :60] = -9999.0
    one_band = image.copy()
    one_band[:50, :60, 0] = -9999.0

    def write(name, values, nodata):
        with rasterio.open(tmp_path / name, "w", driver="GTiff", height=256, width=256, count=3,
                           dtype="float32", crs="EPSG:32633", nodata=nodata,
                           transform=from_origin(500000, 4600000, 10, 10)) as f:  # fmt: skip
            f.write(np.moveaxis(values, -1, 0))

    write("none.tif", hole, None)
    write("wrong.tif", hole, -1)
    write("band.tif", one_band, -9999)
    run = ["--textures", "3", "--no-progress"]
    for name in ("none.tif", "wrong.tif"):
        assert main(["segment", str(tmp_path / name), str(tmp_path / f"o-{name}"), *run]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "value -9999" in err and "--nodata=-9999 " in err
    assert main(["segment", str(tmp_path / "band.tif"), str(tmp_path / "o-band.tif"), *run]) == 2
    err = capsys.readouterr().err
    assert re.search(r"its nodata value -9999 .*in some channels but not all", err)
    out = tmp_path / "labels.tif"
    assert main(["segment", str(tmp_path / "none.tif"), str(out), *run, "--nodata=-9999"]) == 0
    with rasterio.open(out) as f:
        labels = f.read(1)
    assert (labels[:50, :60] == 0).all() and (labels[50:] > 0).all()


def test_a_mask_too_small_to_sample_says_how_many_pixels_it_has_and_needs():
    """A 10 × 10 mask was refused as "only 1 pixels could be sampled", which read as if the mask
    had one pixel: the line now says how many pixels are present and how many the fit's sample
    grid needs, and a mask of that many is fitted."""
    image = (_texture(512) * 255).astype(np.uint8)
    mask = np.zeros(image.shape[:2], bool)
    mask[300:310, 300:310] = True
    with pytest.raises(ParameterError) as refused:
        segment(image, 3, mask=mask)
    said = re.search(r"only (\d+) pixels? could be sampled, fewer than n_textures = 3: the image "
                     r"has 100 pixels present \(not missing, and inside the mask if one is "
                     r"given\), and the fit samples one pixel in (\d+)² there, so it needs at "
                     r"least about (\d+) \(n_textures × \d+²\)", str(refused.value))  # fmt: skip
    assert said, str(refused.value)
    found, step, needed = (int(g) for g in said.groups())
    assert found < 3 and step > 1 and needed == 3 * step**2
    side = int(np.ceil(np.sqrt(4 * needed)))
    mask[300 : 300 + side, 300 : 300 + side] = True
    labels = np.asarray(segment(image, 3, mask=mask))
    assert (labels[mask] > 0).all() and not labels[~mask].any()
    holes = image.astype(np.float32) / 255
    holes[~np.pad(np.ones((10, 10), bool), ((300, 202), (300, 202)))] = np.nan
    with pytest.raises(ParameterError, match=r"the image has 100 pixels present"):
        segment(holes, 3)
