"""The warning about a turned picture says how to work on it as shown, and that way works.

A picture whose orientation tag says viewers show it turned is read as stored, with an
ExifOrientationWarning. The warning recommended ``ImageOps.exif_transpose(picture)`` (and, of
a file, "turn it first (PIL.ImageOps.exif_transpose) and save it"), which for an uncompressed
grey TIFF turned 5-8 gives noise: Pillow memory-maps the file and decodes it into the turned
size before turning it. The warning now gives the NumPy turn of the values read, which is
run here, as written, and compared with the picture as viewers show it: Pillow's own turn of
the same pixels stored compressed, which it decodes right.
"""

import re
import warnings

import numpy as np
import pytest
import tifffile
from skimage import data

import xfskde
from xfskde.exceptions import ExifOrientationWarning

STORED = data.camera()[100:148, 200:264].copy()  # 48 x 64: a turn shows its transpose


def _advice(read):
    """What ``read()`` returns, and the NumPy turn its one ExifOrientationWarning advises."""
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        values = np.asarray(read())
    said = [str(w.message) for w in shown if w.category is ExifOrientationWarning]
    assert len(said) == 1, said
    turn = re.search(r"as it is shown, turn the values read, (np\..+?)(, and save|$)", said[0])
    assert turn is not None, said[0]
    return values, turn.group(1)


@pytest.mark.parametrize("stored", [STORED, STORED.astype(np.uint16) * 200], ids=["u8", "u16"])
@pytest.mark.parametrize("orientation", range(2, 9))
def test_the_advised_turn_reads_a_tiff_as_shown(tmp_path, monkeypatch, orientation, stored):
    from PIL import Image, ImageOps

    path = tmp_path / f"turned{orientation}.tif"
    tag = [(274, "H", 1, orientation, True)]
    tifffile.imwrite(path, stored, extratags=tag)  # uncompressed: the file Pillow scrambles
    tifffile.imwrite(tmp_path / "lzw.tif", stored, compression="lzw", extratags=tag)
    with Image.open(tmp_path / "lzw.tif") as compressed:
        as_shown = np.asarray(ImageOps.exif_transpose(compressed))
    assert as_shown.shape == (stored.shape[::-1] if orientation > 4 else stored.shape)
    with Image.open(path) as picture:
        values, turn = _advice(lambda: xfskde.open_image(picture).values)
    np.testing.assert_array_equal(eval(turn, {"np": np, "values": values}), as_shown)
    # of the file: the same turn, and saved as its warning says, the picture as shown
    values, turn = _advice(lambda: xfskde.open_image(path).values)
    monkeypatch.chdir(tmp_path)
    tifffile.imwrite("shown.tif", eval(turn, {"np": np, "values": values}))
    np.testing.assert_array_equal(tifffile.imread("shown.tif"), as_shown)


@pytest.mark.parametrize("orientation", [3, 6, 7])
def test_the_advised_turn_reads_a_photo_as_shown(tmp_path, orientation):
    """A JPEG's EXIF orientation, of a colour photo: the turn is Pillow's to the pixel."""
    from PIL import Image, ImageOps

    exif = Image.Exif()
    exif[0x0112] = orientation
    path = tmp_path / "photo.jpg"
    Image.fromarray(data.astronaut()[:48, :80]).save(path, exif=exif)
    with Image.open(path) as picture:
        as_shown = np.asarray(ImageOps.exif_transpose(picture))
    with Image.open(path) as picture:
        values, turn = _advice(lambda: xfskde.open_image(picture).values)
    np.testing.assert_array_equal(eval(turn, {"np": np, "values": values}), as_shown)
