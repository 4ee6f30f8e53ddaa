"""Pictures as PIL gives them (``PIL.Image.open``) and as their TIFF files are read: each
way in to the same file gives the same grid, and says how it is turned."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import tifffile
import xarray as xr
from skimage import data

import xfskde
from xfskde.exceptions import ExifOrientationWarning, ImageReadError

#: How viewers show a stored grid for each TIFF orientation (what Pillow turns it into).
_SHOWN = {
    2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
    5: lambda a: a.swapaxes(0, 1), 6: lambda a: np.rot90(a, -1),
    7: lambda a: a[::-1, ::-1].swapaxes(0, 1), 8: lambda a: np.rot90(a, 1),
}  # fmt: skip


def _read(reader):
    """What ``reader()`` returns, and the ExifOrientationWarnings it gave."""
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        values = np.asarray(reader())
    return values, [str(w.message) for w in shown if w.category is ExifOrientationWarning]


@pytest.mark.parametrize("compression", [None, "lzw"], ids=["uncompressed", "lzw"])
@pytest.mark.parametrize("orientation", range(2, 9))
def test_a_turned_tiff_picture_is_read_as_stored_loaded_or_not(tmp_path, orientation, compression):
    """A TIFF picture the user loaded before the call (picture.load(), np.asarray(picture),
    ImageOps.exif_transpose(picture, in_place=True)) had lost its Orientation tag as Pillow
    turned it: it was read as shown, without a word, where the same picture unloaded, and its
    path, were read as stored with a warning — two grids of one file. Pillow turns every TIFF
    as it loads it, so the tag is read again from the file and each way in gives the stored
    grid, with the warning. An uncompressed grey TIFF turned 5-8, which Pillow memory-maps and
    scrambles as it turns it, is read from its file's bytes again: its grid, not noise. A new
    picture made from it, ImageOps.exif_transpose(picture), is read as it is shown, quietly."""
    from PIL import Image, ImageOps

    stored = data.camera()[100:148:, 200:264].copy()  # 48 x 64: a turn shows its transpose
    path = tmp_path / f"turned{orientation}.tif"
    tifffile.imwrite(path, stored, compression=compression,
                     extratags=[(274, "H", 1, orientation, True)])  # fmt: skip

    def loaded(how):
        picture = Image.open(path)
        how(picture)
        return picture

    ways = {
        "path": lambda: xfskde.open_image(path),
        "picture": lambda: xfskde.open_image(Image.open(path)),
        "loaded": lambda: xfskde.open_image(loaded(lambda p: p.load())),
        "as an array first": lambda: xfskde.open_image(loaded(np.asarray)),
        "turned in place": lambda: xfskde.open_image(
            loaded(lambda p: ImageOps.exif_transpose(p, in_place=True))
        ),
    }
    for way, reader in ways.items():
        values, said = _read(reader)
        assert values.shape == stored.shape, way
        np.testing.assert_array_equal(values, stored, err_msg=way)
        assert len(said) == 1 and f"(TIFF Orientation {orientation})" in said[0], (way, said)
    stream = io.BytesIO(path.read_bytes())
    picture = Image.open(stream)
    picture.load()
    stream.seek(7)
    values, said = _read(lambda: xfskde.open_image(picture))
    np.testing.assert_array_equal(values, stored)
    assert len(said) == 1 and stream.tell() == 7  # the user's stream where it was
    labels, said = _read(lambda: xfskde.segment(loaded(lambda p: p.load()), 2))
    assert labels.shape == stored.shape and len(said) == 1
    if compression or orientation < 5:  # Pillow's own turn of a mapped one 5-8: noise
        shown, said = _read(lambda: xfskde.open_image(ImageOps.exif_transpose(Image.open(path))))
        np.testing.assert_array_equal(shown, _SHOWN[orientation](stored))
        assert said == []


def test_a_loaded_tiff_picture_whose_file_is_gone_is_refused(tmp_path):
    """A TIFF picture loaded from a stream since closed cannot say whether Pillow turned it:
    refused in one line with the ways in, where it was read as it happened to be."""
    from PIL import Image

    buffer = io.BytesIO()
    tifffile.imwrite(buffer, data.camera()[:48, :64], extratags=[(274, "H", 1, 3, True)])
    stream = io.BytesIO(buffer.getvalue())
    picture = Image.open(stream)
    picture.load()
    stream.close()
    refused = r"^the TIFF picture was loaded before it was given .* ImageOps.exif_transpose"
    with pytest.raises(ImageReadError, match=refused + r"\(picture\) to read it as it is shown$"):
        xfskde.open_image(picture)


def _as_pillow_converts(path, mode: str) -> tuple[xr.DataArray, np.ndarray]:
    """The 64 x 64 picture at ``path`` as open_image reads it, checked equal to what Pillow
    gives converting it (of ``mode``) to RGB: the image, and Pillow's RGB."""
    from PIL import Image

    with Image.open(path) as picture:
        assert picture.mode == mode
        expected = np.asarray(picture.convert("RGB"))
    image = xfskde.open_image(path)
    assert image.sizes == {"y": 64, "x": 64, "c": 3} and image.dtype == np.uint8
    np.testing.assert_array_equal(image.values, expected)
    return image, expected


def test_a_cmyk_tiff_is_read_as_rgb_as_pillow_converts_it(tmp_path, capsys):
    """A CMYK TIFF (Photometric Separated, a print file) was read as four channels of ink by
    path, where its PIL picture and a CMYK JPEG are read as RGB: its gradients those of inks,
    K a fourth colour. It is read as RGB now, by Pillow's conversion (R = (1 - C)(1 - K) of
    full scale, to Pillow's rounding), interleaved or planar, of 8 or 16 bits, its alpha kept
    as an alpha; inks other than CMYK are refused in one line."""

    from xfskde.cli import main

    rgb = data.astronaut()[::8, ::8]
    ink = np.dstack([255 - rgb, (np.arange(64) * 4).astype(np.uint8)[None, :].repeat(64, 0)])
    path = tmp_path / "print.tif"
    tifffile.imwrite(path, ink, photometric="separated")
    image, expected = _as_pillow_converts(path, "CMYK")
    np.testing.assert_array_equal(image.values[:, 0], rgb[:, 0])  # no black ink: the colours
    assert "CMYK (Separated): read as RGB" in image.attrs["source_photometric"]
    assert "ICC profile is not applied" in image.attrs["source_photometric"]
    planar = tmp_path / "planar.tif"
    tifffile.imwrite(planar, np.moveaxis(ink, -1, 0), photometric="separated",
                     planarconfig="separate")  # fmt: skip
    np.testing.assert_array_equal(xfskde.open_image(planar).transpose("y", "x", "c"), expected)
    deep = tmp_path / "deep.tif"
    tifffile.imwrite(deep, ink.astype(np.uint16) * 257, photometric="separated")
    np.testing.assert_allclose(xfskde.open_image(deep).values / 257, expected, atol=1)
    opacity = np.full((64, 64), 255, np.uint8)
    opacity[:, :8] = 0
    cut = tmp_path / "cut.tif"
    tifffile.imwrite(cut, np.dstack([ink, opacity]), photometric="separated", extrasamples=[2])
    values = xfskde.open_image(cut).values
    assert values.shape == (64, 64, 3) and np.isnan(values[:, :8]).all()
    np.testing.assert_array_equal(values[:, 8:], expected[:, 8:])
    assert [level.shape for level in xfskde.io.images.image_levels(cut)] == [(64, 64, 3)]
    assert xfskde.local_fskde(image, order=2, size=3).shape == (64, 64, 3)
    assert main(["info", str(path)]) == 0
    said = capsys.readouterr().out
    assert "(64, 64, 3)" in said and "print inks (CMYK): read as RGB, as Pillow" in said
    other = tmp_path / "inks.tif"
    tifffile.imwrite(other, ink, photometric="separated", extratags=[(332, "H", 1, 2, True)])
    said = r"stores print inks \(4 inks of InkSet 2, Photometric Separated\), which xfskde"
    with pytest.raises(ImageReadError, match=said + " reads as RGB only as CMYK"):
        xfskde.open_image(other)


def test_a_miniswhite_tiff_is_read_white_high_or_refused(tmp_path, capsys):
    """Photometric MinIsWhite (0 is white) was read inverted for unsigned integers only: a
    fax's or scanned page's bilevel TIFF, floats and a grey image with alpha were read as
    their negatives without a word (xfskde info saying "read inverted" all the same), signed
    integers failed with an OverflowError, and a 16-bit picture (which Pillow leaves stored)
    as its negative. Bilevel and alpha images are inverted now, the picture as its path;
    floats and signed integers, which set no black, are refused in one line."""
    from PIL import Image

    from xfskde.cli import main

    grey = data.camera()[::8, ::8]
    bright = grey > 128
    page = tmp_path / "fax.tif"
    tifffile.imwrite(page, ~bright, photometric="miniswhite", compression="packbits")
    for source in (page, Image.open(page)):
        np.testing.assert_array_equal(xfskde.open_image(source).values, bright)
    deep = tmp_path / "deep.tif"
    tifffile.imwrite(deep, 65535 - grey.astype(np.uint16) * 257, photometric="miniswhite")
    for source in (deep, Image.open(deep)):
        np.testing.assert_array_equal(xfskde.open_image(source).values, grey * np.uint16(257))
    opacity = np.full(grey.shape, 255, np.uint8)
    opacity[:, :8] = 0
    cut = tmp_path / "cut.tif"
    tifffile.imwrite(cut, np.dstack([255 - grey, opacity]), photometric="miniswhite",
                     extrasamples=[2])  # fmt: skip
    values = xfskde.open_image(cut).values
    assert np.isnan(values[:, :8]).all()
    np.testing.assert_array_equal(values[:, 8:], grey[:, 8:])
    refused = r"stores {} values with 0 as white \(Photometric MinIsWhite\), which sets no black"
    floats = tmp_path / "floats.tif"
    tifffile.imwrite(floats, (1 - grey / 255).astype(np.float32), photometric="miniswhite")
    for source in (floats, Image.open(floats)):
        with pytest.raises(ImageReadError, match=refused.format("float32")):
            xfskde.open_image(source)
    assert main(["info", str(floats)]) == 2
    assert "0 as white (Photometric MinIsWhite)" in capsys.readouterr().err
    signed = tmp_path / "signed.tif"
    tifffile.imwrite(signed, grey.astype(np.int16) - 128, photometric="miniswhite")
    with pytest.raises(ImageReadError, match=refused.format("int16")):
        xfskde.open_image(signed)


def test_a_palette_tiff_is_read_as_rgb_through_its_colour_map(tmp_path, capsys):
    """A palette TIFF (Photometric 3) from a scanner or an image editor was refused as an
    image ("convert it to RGB first"), where the same picture as a palette PNG or GIF, and as a
    PIL picture, is read as RGB. It is read as RGB through its colour map now, each 16-bit
    entry's high byte as Pillow reads it — a palette label image too, as its colours. A mask
    still reads its indices (index 0 white: the background), and --mask-classes its labels;
    the labels xfskde writes (an OME-TIFF's label image, a GDAL labels.tif) and a GDAL
    raster's classes are read by their values, as before."""
    from PIL import Image

    from xfskde.masks import resolve_mask

    indices = (data.camera()[::8, ::8] // 64).astype(np.uint8)  # four tones, 64 x 64
    colours = np.zeros((3, 256), np.uint16)
    colours[:, :4] = np.array([[255, 255, 255], [200, 30, 30], [30, 200, 30], [0, 0, 90]]).T * 257
    colours[:, 4] = 0x12FF  # an entry whose high byte is not its rounding: 0x12
    indices[:2, :8] = 4
    path = tmp_path / "scan.tif"
    tifffile.imwrite(path, indices, photometric="palette", colormap=colours)
    image, expected = _as_pillow_converts(path, "P")
    np.testing.assert_array_equal(image.values, (colours.T >> 8)[indices])
    assert image.attrs["source_colormap"] == 256 and "source_palette" not in image.attrs
    as_png = tmp_path / "scan.png"
    Image.open(path).save(as_png)
    np.testing.assert_array_equal(xfskde.open_image(as_png).values, expected)
    level = xfskde.io.images.image_levels(path)[0]
    assert (level.shape, level.dims, level.dtype) == ((64, 64, 3), ("y", "x", "c"), np.uint8)
    assert xfskde.segment(image, 2).shape == (64, 64)
    assert xfskde.local_fskde(image, order=2, size=3).shape == (64, 64, 3)
    blank = xr.DataArray(np.zeros((64, 64)), dims=("y", "x"))
    np.testing.assert_array_equal(resolve_mask(str(path), blank).values, indices > 0)
    np.testing.assert_array_equal(resolve_mask(str(path), blank, classes=["2"]).values,
                                  indices == 2)  # fmt: skip
    classes = tmp_path / "classes.tif"  # GDAL's: a classification and its colour table
    gdal = '<GDALMetadata><Item name="AREA_OR_POINT">Area</Item></GDALMetadata>'
    tifffile.imwrite(classes, indices, photometric="palette", colormap=colours,
                     extratags=[(42112, "s", 0, gdal, True)])  # fmt: skip
    values = xfskde.open_image(classes)
    np.testing.assert_array_equal(values.values, indices)
    assert values.attrs["source_palette"] == 256
    # info says which way each is read (it said "convert it to RGB" of the scan too)
    from xfskde.cli import main

    for file, said in ((path, "entries, read as the RGB they index"),
                       (classes, "entries (classes or labels the map only shows")):  # fmt: skip
        assert main(["info", str(file)]) == 0
        assert said in capsys.readouterr().out
