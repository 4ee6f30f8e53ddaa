"""Pictures as PIL gives them (``PIL.Image.open``) and as their TIFF files are read: each
way in to the same file gives the same grid, and says how it is turned."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import tifffile
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
