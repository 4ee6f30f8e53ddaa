"""Segmentation of images whose pixels are not square, and of a GeoTIFF off the happy path.

The FS-KDE field warned (:class:`~xfskde.exceptions.PixelAspectWarning`) when an image's
pixels are not square, but :func:`xfskde.segment`, :func:`xfskde.segmentation.fit_textures`,
:meth:`~xfskde.segmentation.TextureModel.predict` / ``abundances`` and
``xfskde segment`` said nothing, though segmentation's window is round in pixels and its
FS-KDE group measures angles on the pixel grid too. The files are real: an OME-TIFF with
physical sizes written by tifffile, GeoTIFFs written by rasterio.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tifffile

import xfskde
from xfskde.cli import main
from xfskde.exceptions import PixelAspectWarning
from xfskde.segmentation import fit_textures
from xfskde.segmentation.model import BACKGROUND

rioxarray = pytest.importorskip("rioxarray")
rasterio = pytest.importorskip("rasterio")
from affine import Affine  # noqa: E402  (rasterio's dependency)

NY, NX = 96, 128
#: Quick settings: the warning does not depend on them.
QUICK = dict(features=("color", "fskde"), size=4, stride=2, method="kmeans", sample=2000)
CRS = "EPSG:32632"


def _two_textures() -> np.ndarray:
    """Stripes along y on the left, along x on the right, with noise; uint8 in 1..255."""
    yy, xx = np.mgrid[:NY, :NX]
    values = np.where(xx < NX // 2, np.sin(2 * np.pi * xx / 6), np.sin(2 * np.pi * yy / 6))
    noise = np.random.default_rng(3).integers(-20, 21, (NY, NX))
    return np.clip(127 + 100 * values + noise, 1, 255).astype(np.uint8)


def _ome_tiff(path, size_y: float, size_x: float):
    tifffile.imwrite(path, _two_textures(),
                     metadata={"PhysicalSizeY": size_y, "PhysicalSizeX": size_x})  # fmt: skip
    return path


def _geotiff(path, transform: Affine, nodata: int | None = 0):
    pixels = _two_textures()
    pixels[:8, :12] = 0  # the scene's edge: nodata
    with rasterio.open(path, "w", driver="GTiff", height=NY, width=NX, count=1, dtype="uint8",
                       crs=CRS, transform=transform, nodata=nodata) as out:  # fmt: skip
        out.write(pixels, 1)
    return path


def _aspect_warnings(call) -> list[str]:
    """What ``call()`` warns of its pixels' aspect, every warning kept (none filtered as seen
    before), with the result computed: the blocks warn nothing more."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        result = call()
        for part in result if isinstance(result, tuple) else (result,):
            if hasattr(part, "compute"):
                part.compute()
    return [str(w.message) for w in said if w.category is PixelAspectWarning]


def _every_entry_point(image) -> dict[str, list[str]]:
    """The aspect warnings of segment (its fit and labels in one call), fit_textures, and a
    model's predict and abundances, in blocks of 32 pixels (12 blocks)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PixelAspectWarning)
        model = fit_textures(image, 2, **QUICK, chunks=32)
    return {
        "segment": _aspect_warnings(
            lambda: xfskde.segment(image, 2, **QUICK, chunks=32, return_model=True)
        ),
        "fit_textures": _aspect_warnings(lambda: fit_textures(image, 2, **QUICK, chunks=32)),
        "predict": _aspect_warnings(lambda: model.predict(image, chunks=32)),
        "abundances": _aspect_warnings(lambda: model.abundances(image, chunks=32)),
    }


def test_an_ome_tiff_of_oblong_pixels_is_warned_of_once_per_call(tmp_path):
    """1 x 0.5 µm pixels (PhysicalSizeY 1, PhysicalSizeX 0.5): each entry point says so once,
    naming the sizes and what they do to segmentation (segment once, not once for its fit
    and once for its labels; nor once per block); 0.5 x 0.5 µm pixels give no warning."""
    image = xfskde.open_image(_ome_tiff(tmp_path / "oblong.ome.tif", 1.0, 0.5))
    assert image.attrs["source_pixel_size_um"] == [1.0, 0.5]
    said = _every_entry_point(image)
    for entry, messages in said.items():
        assert len(messages) == 1, (entry, messages)
        assert messages[0] == (
            "the image's pixels are 1 x 0.5 µm (y x), not square: segmentation's window is "
            "round in pixels and its gradient angles are measured on the pixel grid, so its "
            "features and labels are not those of the image's units; resample it to square "
            "pixels first (e.g. image.coarsen or image.interp) where the textures' physical "
            "scales and angles matter"
        ), entry
    square = xfskde.open_image(_ome_tiff(tmp_path / "square.ome.tif", 0.5, 0.5))
    assert _every_entry_point(square) == {entry: [] for entry in said}


def test_a_geotiff_of_10_by_20_m_pixels_is_warned_of_on_the_ground(tmp_path):
    """A UTM GeoTIFF of 10 m rows and 20 m columns: measured on the ground (20.01 m wide
    there), as the field measures it; a 10 x 10 m one gives no warning."""
    oblong = _geotiff(tmp_path / "oblong.tif", Affine(20.0, 0.0, 4e5, 0.0, -10.0, 5e6))
    said = _every_entry_point(xfskde.open_image(oblong))
    for entry, messages in said.items():
        assert len(messages) == 1, (entry, messages)
        assert messages[0].startswith(
            "the image's pixels are 10 x 20.01 m on the ground (y x), not square: "
            "segmentation's window is round in pixels"
        ), entry
        assert "reproject it to square pixels first" in messages[0]
    square = _geotiff(tmp_path / "square.tif", Affine(10.0, 0.0, 4e5, 0.0, -10.0, 5e6))
    assert _every_entry_point(xfskde.open_image(square)) == {entry: [] for entry in said}


def test_a_rotated_geotiff_is_warned_of_once(tmp_path):
    """A GeoTransform rotated 17° from the CRS's axes, square 10 m pixels: segment says the
    pixel grid's angles are not from east, once."""
    turned = Affine.translation(4e5, 5e6) @ Affine.rotation(17) @ Affine.scale(10, -10)
    image = xfskde.open_image(_geotiff(tmp_path / "rotated.tif", turned))
    said = _aspect_warnings(lambda: xfskde.segment(image, 2, **QUICK, chunks=32))
    assert len(said) == 1 and said[0].startswith(
        "the image's pixel grid is rotated 17° from its CRS's x axis"
    ), said


def test_the_command_says_it_in_one_line(tmp_path, capsys):
    """``xfskde segment`` fits and labels in two calls: the warning is one line on stderr,
    named as the command's warnings are; square pixels give none."""
    oblong = _ome_tiff(tmp_path / "oblong.ome.tif", 1.0, 0.5)
    argv = ["--textures", "2", "--features", "color,fskde", "--size", "4", "--stride", "2",
            "--method", "kmeans", "--sample", "2000", "--no-progress"]  # fmt: skip
    assert main(["segment", str(oblong), str(tmp_path / "oblong.tif"), *argv]) == 0
    lines = capsys.readouterr().err.splitlines()
    aspect = [line for line in lines if "not square" in line]
    assert len(aspect) == 1, lines
    assert aspect[0].startswith(
        "xfskde segment: warning: the image's pixels are 1 x 0.5 µm (y x), not square: "
        "segmentation's window is round in pixels"
    ), aspect
    square = _ome_tiff(tmp_path / "square.ome.tif", 0.5, 0.5)
    assert main(["segment", str(square), str(tmp_path / "square.tif"), *argv]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_geotiff_s_labels_keep_its_grid_crs_and_nodata(tmp_path):
    """A GeoTIFF in UTM with nodata 0 and its corner at (412340, 5123450): the labels keep
    its coords, CRS and transform, label its nodata pixels BACKGROUND (their nodata), and
    record the window and stride in pixels, as the field records its own; the pixel size the
    model was fitted at is recorded in µm (on the ground)."""
    corner = Affine(10.0, 0.0, 412340.0, 0.0, -10.0, 5123450.0)
    image = xfskde.open_image(_geotiff(tmp_path / "scene.tif", corner))
    labels, model = xfskde.segment(image, 2, **QUICK, return_model=True)
    np.testing.assert_array_equal(labels.y.values, image.y.values)
    np.testing.assert_array_equal(labels.x.values, image.x.values)
    assert labels.x.values[0] == 412345.0 and labels.y.values[0] == 5123445.0
    assert labels.rio.crs == image.rio.crs and labels.rio.crs.to_epsg() == 32632
    assert labels.rio.transform() == corner
    assert labels.rio.nodata == BACKGROUND
    values = labels.values
    assert (values[:8, :12] == BACKGROUND).all() and (values[8:, 12:] != BACKGROUND).all()
    assert labels.attrs["input_nodata"] == 0
    assert labels.attrs["window"] == "gaussian"
    assert labels.attrs["size"] == model.spec.size == 4  # sigma, in pixels
    assert labels.attrs["stride"] == model.spec.stride == 2  # in pixels
    np.testing.assert_allclose(labels.attrs["fit_pixel_size_um"], [1e7, 1e7], rtol=2e-3)
    # the field records its window and stride in pixels too, and no size in metres
    field = xfskde.local_fskde(image, order=4, size=4, stride=2)
    assert (field.attrs["size"], field.attrs["stride"]) == (4, 2)
    assert not [k for k in field.attrs if k.endswith(("_m", "_um", "_units"))]
