"""A palette TIFF reads alike by its path and as a PIL picture of it.

A palette TIFF whose values are data its colour map only shows — a GDAL raster's or
GeoTIFF's classes, an OME-TIFF's label image, an ImageJ lookup table — is read by its path as
its indices (``attrs["source_palette"]``), which the consumers refuse as an image to compute
on. The same file opened with PIL first was read as the RGB of its colour map, and a field
and a segmentation were computed on those colours without a word. The picture is now told
apart by the TIFF tags Pillow read with it, and read as its path is.
"""

import io

import numpy as np
import pytest
import rasterio
import tifffile
import xarray as xr
from rasterio.transform import from_origin

import xfskde
from xfskde.exceptions import ImageReadError
from xfskde.masks import resolve_mask

#: Five classes over 48 x 64 pixels, two planes (a z-stack's labels use both).
INDICES = (np.arange(2 * 48 * 64).reshape(2, 48, 64) * 7 // 5 % 5).astype(np.uint8)
COLOURS = np.zeros((3, 256), np.uint16)
COLOURS[:, :5] = np.array([[255, 255, 255], [200, 30, 30], [30, 200, 30], [0, 0, 90],
                           [90, 90, 9]]).T * 257  # fmt: skip
REFUSED = r"is a palette image \(its values index a colour map of 256 entries, not intensities\)"


def _gdal(path):
    gdal = '<GDALMetadata><Item name="AREA_OR_POINT">Area</Item></GDALMetadata>'
    tifffile.imwrite(path, INDICES[0], photometric="palette", colormap=COLOURS,
                     extratags=[(42112, "s", 0, gdal, True)])  # fmt: skip


def _geotiff(path):  # rasterio's: GeoKeys, a pixel scale and a tie point, no GDAL_METADATA
    with rasterio.open(path, "w", driver="GTiff", width=64, height=48, count=1, dtype="uint8",
                       crs="EPSG:32632", transform=from_origin(300000, 5000, 10, 10),
                       photometric="palette") as raster:  # fmt: skip
        raster.write(INDICES[0], 1)
        raster.write_colormap(1, {i: (*(COLOURS[:, i] >> 8).tolist(), 255) for i in range(5)})


def _imagej(path):
    tifffile.imwrite(path, INDICES[0], photometric="palette", colormap=COLOURS, imagej=True)


WRITERS = {"GDAL": _gdal, "GeoTIFF": _geotiff, "ImageJ": _imagej}


@pytest.mark.parametrize("kind", list(WRITERS))
def test_a_data_palette_picture_reads_as_its_path(tmp_path, kind):
    from PIL import Image

    path = tmp_path / f"{kind}.tif"
    WRITERS[kind](path)
    by_path = xfskde.open_image(path)
    with Image.open(path) as picture:
        by_picture = xfskde.open_image(picture)
    np.testing.assert_array_equal(by_path.values, INDICES[0])
    np.testing.assert_array_equal(by_picture.values, by_path.values)  # not their colours
    assert by_picture.shape == (48, 64) and by_picture.dtype == np.uint8
    assert by_picture.attrs["source_palette"] == by_path.attrs["source_palette"] == 256
    # refused as an image to compute on, by either way in
    for compute in (lambda image: xfskde.local_fskde(image, order=2, size=3),
                    lambda image: xfskde.segment(image, 2),
                    xfskde.gradient):  # fmt: skip
        with pytest.raises(ImageReadError, match=REFUSED):
            compute(by_path)
        with Image.open(path) as picture, pytest.raises(ImageReadError, match=REFUSED):
            compute(picture)
    # a mask reads its indices by either way in
    blank = xr.DataArray(np.zeros((48, 64)), dims=("y", "x"))
    with Image.open(path) as picture:
        np.testing.assert_array_equal(resolve_mask(picture, blank).values, INDICES[0] > 0)
    np.testing.assert_array_equal(resolve_mask(str(path), blank).values, INDICES[0] > 0)
    # converted to RGB, as the refusal says, it is its colours
    with Image.open(path) as picture:
        rgb = xfskde.open_image(picture.convert("RGB"))
    np.testing.assert_array_equal(rgb.values, (COLOURS.T >> 8)[INDICES[0]])


def test_a_page_of_an_ome_label_stack_reads_as_its_plane(tmp_path):
    """An OME-TIFF says so on its first page only: a picture at its second page has the file
    (or the stream) read again for it, and reads as the plane its path gives."""
    from PIL import Image

    path = tmp_path / "labels.ome.tif"
    tifffile.imwrite(path, INDICES, photometric="palette", colormap=COLOURS, ome=True,
                     metadata={"axes": "ZYX"})  # fmt: skip
    by_path = xfskde.open_image(path, plane={"z": 1})
    np.testing.assert_array_equal(by_path.values, INDICES[1])
    assert by_path.attrs["source_palette"] == 256
    stream = io.BytesIO(path.read_bytes())
    for picture in (Image.open(path), Image.open(stream)):
        picture.seek(1)
        picture.load()  # Pillow reads the stream as it loads the picture; this call does not
        stream.seek(5)
        by_picture = xfskde.open_image(picture)
        np.testing.assert_array_equal(by_picture.values, INDICES[1])
        assert by_picture.attrs["source_palette"] == 256
        assert stream.tell() == 5  # the user's stream where it was
        with pytest.raises(ImageReadError, match=REFUSED):
            xfskde.local_fskde(picture, order=2, size=3)


def test_a_picture_palette_and_a_copy_read_as_their_colours(tmp_path):
    """A palette TIFF without such metadata (a scanner's, an image editor's) is its colours
    by either way in; so is a copy of a GDAL picture, which keeps no TIFF tags to tell: what
    the PIL route cannot know it reads as it did."""
    from PIL import Image

    colours = (COLOURS.T >> 8)[INDICES[0]]
    scan = tmp_path / "scan.tif"
    tifffile.imwrite(scan, INDICES[0], photometric="palette", colormap=COLOURS)
    with Image.open(scan) as picture:
        by_picture = xfskde.open_image(picture)
    np.testing.assert_array_equal(by_picture.values, colours)
    np.testing.assert_array_equal(xfskde.open_image(scan).values, colours)
    assert "source_palette" not in by_picture.attrs
    classes = tmp_path / "classes.tif"
    _gdal(classes)
    with Image.open(classes) as picture:
        copy = picture.copy()
    np.testing.assert_array_equal(xfskde.open_image(copy).values, colours)
    assert xfskde.local_fskde(copy, order=2, size=3, channel_axis=-1).shape == (48, 64, 3)
