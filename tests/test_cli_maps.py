"""``xfskde maps``: orientation, coherence and energy of a slide, straight to an OME-Zarr pyramid
that ome-zarr-models and ome-zarr-py accept, with the values of the API, resumable."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import tifffile
import zarr
from ome_zarr.io import parse_url
from ome_zarr.reader import Reader
from ome_zarr_models.v05.image import Image

import xfskde
from xfskde.cli import main
from xfskde.commands._options import warn_if_large
from xfskde.orientation import coherence, energy, orientation

PARAMS = ["--order", "6", "--window", "gaussian", "--size", "3", "--stride", "4",
          "--chunks", "256", "--no-progress"]  # fmt: skip


@pytest.fixture(scope="module")
def slide(tmp_path_factory):
    """A 3-level pyramidal OME-TIFF of 0.25 µm pixels: curved stripes and a flat region."""
    yy, xx = np.mgrid[0:768, 0:1024]
    base = 128 + 100 * np.sin(0.002 * (xx - 300) ** 2 / 8 + 0.25 * yy)
    base[500:, :400] = 128
    base = base.astype(np.uint8)
    meta = {"PhysicalSizeX": 0.25, "PhysicalSizeXUnit": "µm",
            "PhysicalSizeY": 0.25, "PhysicalSizeYUnit": "µm"}  # fmt: skip
    path = tmp_path_factory.mktemp("slide") / "slide.ome.tif"
    with tifffile.TiffWriter(path) as tif:
        tif.write(base, tile=(128, 128), subifds=2, metadata=meta)
        tif.write(base[::2, ::2], tile=(128, 128), subfiletype=1)
        tif.write(base[::4, ::4], tile=(128, 128), subfiletype=1)
    return path


def _expected(slide, **kwargs):
    image = xfskde.open_image(slide, **kwargs)
    field = xfskde.local_fskde(image, order=6, window="gaussian", size=3.0, stride=4)
    return field, [orientation(field), coherence(field), energy(field)]


def test_maps_of_a_slide_two_readers_and_the_apis_values(slide, tmp_path, capsys):
    out = tmp_path / "maps.ome.zarr"
    assert main(["maps", str(slide), str(out), *PARAMS]) == 0
    summary = capsys.readouterr().out
    assert "192 x 256 cells of 1 micrometer, 1 level, in" in summary  # not "1 levels"
    Image.from_zarr(zarr.open_group(out, mode="r"))  # ome-zarr-models: a valid NGFF 0.5 image
    node = next(iter(Reader(parse_url(str(out)))()))  # ome-zarr-py reads its pyramid
    levels = [np.asarray(d) for d in node.data]
    assert [lv.shape for lv in levels] == [(3, 192, 256)]
    field, maps = _expected(slide)
    for channel, expected in enumerate(maps):
        np.testing.assert_allclose(levels[0][channel], expected.values, rtol=1e-6, equal_nan=True)
    multiscale = zarr.open_group(out, mode="r").attrs["ome"]["multiscales"][0]
    scale, shift = multiscale["datasets"][0]["coordinateTransformations"]
    # a stride-4 cell of 0.25 µm pixels is 1 µm, centred on the mean of its pixels' centres
    assert scale["scale"][1:] == [1.0, 1.0]
    np.testing.assert_allclose(shift["translation"][1:], float(field.x[0]))
    np.testing.assert_allclose(float(field.x[0]), 0.25 * 1.5)
    assert main(["info", str(out)]) == 0
    described = capsys.readouterr().out
    assert "status                 complete (" in described
    assert "source_pixel_size_um" in described


def test_pixels_not_square_are_told_by_both_sides(tmp_path, capsys):
    """1 x 0.5 µm pixels: the summary said cells of 0.5 micrometer, and --mpp 0.5 was refused
    as finer than the finest level "(0.7071 µm)", naming neither side."""
    path = tmp_path / "aniso.ome.tif"
    pixels = np.random.default_rng(2).integers(0, 256, (128, 128), dtype=np.uint8)
    tifffile.imwrite(path, pixels, metadata={"PhysicalSizeX": 0.5, "PhysicalSizeY": 1.0})
    out = tmp_path / "aniso.ome.zarr"
    assert main(["maps", str(path), str(out), *PARAMS]) == 0
    said = capsys.readouterr()
    assert "32 x 32 cells of 4 x 2 micrometer (y by x), 1 level, in" in said.out
    assert "not square" in said.err
    assert main(["maps", str(path), str(tmp_path / "fine.ome.zarr"), *PARAMS, "--mpp", "0.5"]) == 2
    said = capsys.readouterr().err
    assert "(1 x 0.5 µm (y x x; 0.7071 µm mean), level 0)" in said, said
    # mpp weighs the geometric mean of the sides; f x f cells keep their aspect
    binned = xfskde.open_image(path, mpp=1.4)
    assert binned.attrs["source_binning"] == 2 and binned.attrs["source_pixel_size_um"] == [2, 1]


def test_mpp_picks_the_level(slide, tmp_path):
    out = tmp_path / "coarse.ome.zarr"
    assert main(["maps", str(slide), str(out), *PARAMS, "--mpp", "1"]) == 0
    level0 = zarr.open_group(out, mode="r")["0"]
    assert level0.shape == (3, 48, 64)  # level 2 (192 x 256) at stride 4
    _, maps = _expected(slide, level=2)
    np.testing.assert_allclose(level0[1], maps[1].values, rtol=1e-6)


def test_an_interrupted_run_resumes(slide, tmp_path, monkeypatch, capsys):
    import xfskde.io.stores as stores

    out = tmp_path / "maps.ome.zarr"
    real = stores._write_block
    calls = []

    def dies_after_two(*args, **kwargs):
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        calls.append(args[3:5])
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", dies_after_two)
    # stride 1: level 0 is 768 x 1024 in chunks of 128 (maps take the field's chunks from 64)
    argv = ["maps", str(slide), str(out), *PARAMS, "--chunks", "128", "--stride", "1",
            "--scheduler", "synchronous"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "keeps 2 of 48 blocks" in err and "--resume" in err
    monkeypatch.setattr(stores, "_write_block", real)
    assert main(argv) == 2  # exists: refused without --resume
    assert main([*argv, "--resume"]) == 0
    assert xfskde.io.store_status(out)["complete"]
    image = xfskde.open_image(slide)
    field = xfskde.local_fskde(image, order=6, window="gaussian", size=3.0)
    np.testing.assert_allclose(zarr.open_group(out, mode="r")["0"][2], energy(field).values,
                               rtol=1e-6)  # fmt: skip


def test_a_far_larger_output_is_warned_of(tmp_path, capsys):
    source = tmp_path / "small.tif"
    tifffile.imwrite(source, np.zeros((64, 64), np.uint8), compression="zlib")
    args = argparse.Namespace(input=str(source), command="coefficients")
    warn_if_large(args, 1.3e9, "store")
    err = capsys.readouterr().err
    assert "about 1.3 GB before compression" in err and "--stride" in err
    warn_if_large(args, 50e6, "store")  # under 100 MB: no warning
    assert capsys.readouterr().err == ""


def test_a_far_larger_segmentation_image_names_what_makes_it_smaller(tmp_path, capsys, monkeypatch):
    """An OME-Zarr segmentation holds float32 abundances per texture: far larger than a
    JPEG slide. The warning told the user to pass --order (segment has none) or a larger
    --stride (the abundances are written at every pixel whatever the stride); it now says what
    the labels alone take, and how to write only them."""
    import xfskde.commands._options as options
    from xfskde.datasets import random_textures

    image, _ = random_textures((96, 96), seed=2)
    source = tmp_path / "small.tif"
    tifffile.imwrite(source, (image * 255).astype(np.uint8), compression="zlib")
    monkeypatch.setattr(options, "LARGE_BYTES", 1e3)  # as if it were a slide
    monkeypatch.setattr(options, "LARGE_RATIO", 1)
    argv = ["segment", str(source), str(tmp_path / "s.ome.zarr"), "--textures", "2",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "the image will hold about 98.3 kB before compression" in err, err
    assert "the labels alone take 9.2 kB (an output named .zarr" in err, err
    assert "--order" not in err and "--stride" not in err


def test_maps_of_the_tissue_only(tmp_path, capsys):
    """--mask auto: the glass of a brightfield slide is not computed, its maps are NaN."""
    from test_masks import _slide

    rgb, tissue = _slide((768, 1024), seed=3)
    path = tmp_path / "slide.tif"
    tifffile.imwrite(path, rgb, tile=(128, 128), photometric="rgb")
    out = tmp_path / "maps.ome.zarr"
    assert main(["maps", str(path), str(out), *PARAMS, "--mask", "auto"]) == 0
    level0 = zarr.open_group(out, mode="r")["0"][...]
    cells = tissue[1::4, 1::4]  # the pixel under each stride-4 sample
    assert np.isnan(level0[:, ~cells]).mean() > 0.95  # the glass: no value
    assert np.isfinite(level0[:, cells]).mean() > 0.95  # the tissue: values
    image = xfskde.open_image(path)
    field = xfskde.local_fskde(image, order=6, window="gaussian", size=3.0, stride=4)
    inside = np.isfinite(level0[2])
    np.testing.assert_allclose(level0[2][inside], energy(field).values[inside], rtol=1e-6)
    assert main(["coefficients", str(path), str(tmp_path / "c.zarr"), *PARAMS, "--mask",
                 str(tmp_path / "nothing.tif")]) == 2  # fmt: skip
    assert "nothing.tif" in capsys.readouterr().err


def test_skipped_blocks_are_recorded_and_reported(tmp_path, capsys):
    """Blocks with no tissue are recorded as skipped; info counts them; verify accepts them;
    the values equal an unmasked run's inside the mask."""
    from test_masks import _slide

    from xfskde._grid import MaskFootprint
    from xfskde.io import store_status, verify_store
    from xfskde.masks import tissue_mask

    rgb, _ = _slide((768, 1024), seed=3)
    path = tmp_path / "slide.tif"
    tifffile.imwrite(path, rgb, tile=(128, 128), photometric="rgb")
    out = tmp_path / "c.zarr"
    args = ["coefficients", str(path), str(out), *PARAMS, "--chunks", "128", "--no-progress"]
    assert main([*args, "--mask", "auto"]) == 0
    capsys.readouterr()
    # what the mask says, block by block, independently of the writer
    footprint = MaskFootprint(tissue_mask(xfskde.open_image(path)).values, (768, 1024))
    expected = sum(
        footprint.background((r, r + 128), (c, c + 128))
        for r in range(0, 768, 128)
        for c in range(0, 1024, 128)
    )
    status = store_status(out)
    assert 0 < expected < 48 and status["blocks_skipped"] == expected
    assert status["blocks_done"] == status["blocks_total"] == 48
    assert main(["info", str(out)]) == 0
    report = capsys.readouterr().out
    assert f"{48 - expected} computed, {expected} skipped" in report
    assert verify_store(out).whole
    stored = xfskde.open_coefficients(out).values
    plain = tmp_path / "plain.zarr"
    assert main([*args[:2], str(plain), *args[3:]]) == 0
    assert store_status(plain)["blocks_skipped"] == 0
    whole = xfskde.open_coefficients(plain).values
    inside = ~np.isnan(stored).all(axis=-1)  # outside the mask: no value (NaN), not computed
    assert 0.2 < inside.mean() < 1 and np.isnan(stored[~inside]).all()
    np.testing.assert_array_equal(stored[inside], whole[inside])


def test_maps_as_a_picture_show_each_orientation_in_its_hue(tmp_path, capsys, monkeypatch):
    """``xfskde maps fibres.tif survey.png``, as OrientationJ's colour survey is made: the
    picture the library draws (hue the axial orientation over [0, π), brightness the
    coherence; plot.axial_rgb), one pixel per cell, its parameters kept. Two fields of stripes
    at 30° and 120° show two hues half a circle apart; flat ground is dark. It was refused
    ("a PNG holds labels") before, and needs no matplotlib."""
    from PIL import Image

    from xfskde.io.png import png_attrs
    from xfskde.plot import axial_rgb

    y, x = np.mgrid[0:128, 0:128].astype(float)
    first = np.cos(2 * np.pi * (x * np.sin(np.pi / 6) - y * np.cos(np.pi / 6)) / 8)
    second = np.cos(2 * np.pi * (x * np.sin(2 * np.pi / 3) - y * np.cos(2 * np.pi / 3)) / 8)
    image = np.where(x < 64, first, second)
    image[96:, :] = 0.0  # flat: no orientation, no coherence
    tifffile.imwrite(tmp_path / "fibres.tif", ((image + 1) * 100).astype(np.uint8))
    out = tmp_path / "survey.png"
    argv = ["--size", "3", "--stride", "2", "--no-progress"]
    assert main(["maps", str(tmp_path / "fibres.tif"), str(out), *argv]) == 0
    assert "orientation (hue) and coherence (brightness) of 64 x 64 cells" in (
        capsys.readouterr().out
    )
    with Image.open(out) as picture:
        assert picture.mode == "RGB" and picture.size == (64, 64)
        rgb = np.asarray(picture) / 255.0
    field = xfskde.local_fskde(xfskde.open_image(tmp_path / "fibres.tif"), order=8,
                               window="gaussian", size=3, stride=2)  # fmt: skip
    expected = axial_rgb(orientation(field).values, coherence(field).values)
    np.testing.assert_allclose(rgb, expected, atol=0.6 / 255)
    left, right = expected[16:32, 8:24].mean((0, 1)), expected[16:32, 40:56].mean((0, 1))
    assert np.abs(left - right).max() > 0.5  # two hues, half the circle apart
    assert rgb[56:, :].max() < 0.05  # the flat ground, beyond the window of its edge: dark
    assert png_attrs(out)["order"] == 8 and png_attrs(out)["stride"] == 2
    capsys.readouterr()
    assert main(["info", str(out)]) == 0
    assert "a picture of the maps (hue orientation" in capsys.readouterr().out
    assert main(["maps", str(tmp_path / "fibres.tif"), str(out), *argv, "--resume"]) == 2
    assert "a PNG file, written whole" in capsys.readouterr().err
    # more cells than a PNG holds: refused before anything is computed, naming --stride
    monkeypatch.setattr("xfskde.io.png.PNG_MAX_PIXELS", 1000)
    big = tmp_path / "big.png"
    assert main(["maps", str(tmp_path / "fibres.tif"), str(big), *argv]) == 2
    assert "64 x 64 pixels are more than image readers open" in (said := capsys.readouterr().err)
    assert "give a --stride" in said and not big.exists()
    labels = tmp_path / "labels.png"
    assert main(["segment", str(tmp_path / "fibres.tif"), str(labels), "--textures", "2",
                 "--no-progress"]) == 2  # fmt: skip
    assert "the labels: 128 x 128 pixels" in capsys.readouterr().err and not labels.exists()


def test_maps_of_a_scene_without_a_gradient_are_refused_as_coefficients_are(tmp_path, capsys):
    """A scene all nodata: ``xfskde coefficients`` refused it, ``segment`` too, and ``maps``
    wrote all-NaN maps with status 0. Now each of its outputs is refused alike (and not
    kept), naming why; a scene with data is written as before."""
    rasterio = pytest.importorskip("rasterio")
    empty, scene = str(tmp_path / "empty.tif"), str(tmp_path / "scene.tif")
    profile = {"driver": "GTiff", "width": 64, "height": 48, "count": 1, "dtype": "uint16",
               "nodata": 0}  # fmt: skip
    pixels = np.random.default_rng(0).integers(1, 1000, (48, 64)).astype(np.uint16)
    for path, values in ((empty, np.zeros_like(pixels)), (scene, pixels)):
        with rasterio.open(path, "w", **profile) as file:
            file.write(values, 1)
    for name in ("maps.tif", "maps.ome.zarr", "maps.ome.tif", "maps.png"):
        out = tmp_path / name
        assert main(["maps", empty, str(out), "--no-progress"]) == 2
        assert capsys.readouterr().err == (
            f"xfskde maps: error: {empty} has no gradient anywhere (its 48 x 64 pixels are all "
            "equal, or all NaN under --nan-policy omit, or all nodata): every map is zero or "
            f"NaN, so {out} was not kept\n"
        )
        assert not out.exists()
        assert main(["maps", scene, str(out), "--no-progress"]) == 0 and out.exists()


def test_a_south_up_scene_to_ome_zarr_is_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    """A south-up scene (y increasing, with a CRS) to ``*.ome.zarr`` was refused only after
    the fit, about "the map 'texture 1'" and ``xfskde.io.write_geotiff``: refused before, as a
    north-up one is, naming ``*.tif``; ``maps`` to a PNG is drawn as before."""
    rasterio = pytest.importorskip("rasterio")
    pytest.importorskip("rioxarray")
    from affine import Affine

    from xfskde.commands import segment

    scene = str(tmp_path / "south-up.tif")
    south_up = Affine(10, 0, 500_000, 0, 10, 4_597_000)  # y grows down the rows
    profile = {"driver": "GTiff", "width": 64, "height": 48, "count": 1, "dtype": "uint16",
               "crs": "EPSG:32633", "transform": south_up}  # fmt: skip
    with rasterio.open(scene, "w", **profile) as file:
        file.write(np.random.default_rng(0).integers(1, 1000, (48, 64)).astype(np.uint16), 1)

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted")

    monkeypatch.setattr(segment, "fit_textures", no_fit)
    for argv in (["segment", scene, str(tmp_path / "l.ome.zarr"), "--textures", "2"],
                 ["maps", scene, str(tmp_path / "m.ome.zarr")]):  # fmt: skip
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"xfskde {argv[0]}: error: {scene} is georeferenced (a CRS: its x and y are "
            "coordinates on the ground, not pixels) and an OME-Zarr image (or an OME-TIFF, its "
            "copy) is a grid of pixels: write a GeoTIFF (xfskde.io.geotiff.write_geotiff; on "
            "the command line, name the output *.tif, not *.ome.zarr nor *.ome.tif)\n"
        )
    picture = tmp_path / "maps.png"  # a picture of the maps is drawn as before
    assert main(["maps", scene, str(picture), "--no-progress"]) == 0 and picture.exists()
