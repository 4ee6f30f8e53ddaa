"""Images in the types the compiled code does not take (half floats, long doubles, values in the
other byte order): read as the nearest it takes, by the field and by segmentation alike."""

import dask.array as da
import numpy as np
import pytest
import tifffile
import xarray as xr
from skimage import data

import xfskde
from xfskde.cli import main

PIXELS = (data.immunohistochemistry()[:96, :96] / 255.0).astype(np.float16)


@pytest.mark.parametrize("wrap", ["numpy", "dask", "dataarray"])
def test_half_floats_are_segmented_as_their_float32_values(wrap):
    """A float16 image (a network's output, a half-float TIFF) was ``NotImplementedError:
    float16`` from inside numba. Its values are float32's exactly: the labels are those of
    the same image in float32, whatever holds it."""
    expected = np.asarray(xfskde.segment(PIXELS.astype(np.float32), 3))
    image = {
        "numpy": PIXELS,
        "dask": da.from_array(PIXELS, chunks=(48, 48, 3)),
        "dataarray": xr.DataArray(PIXELS, dims=("y", "x", "c")),
    }[wrap]
    np.testing.assert_array_equal(np.asarray(xfskde.segment(image, 3)), expected)


def test_long_doubles_are_segmented_as_float64():
    grey = PIXELS[..., 0].astype(np.float64)
    expected = np.asarray(xfskde.segment(grey, 2))
    np.testing.assert_array_equal(np.asarray(xfskde.segment(grey.astype(np.longdouble), 2)),
                                  expected)  # fmt: skip


def test_a_half_float_tiff_is_segmented_by_the_command(tmp_path):
    path = tmp_path / "half.tif"
    tifffile.imwrite(path, PIXELS, photometric="rgb")
    assert tifffile.imread(path).dtype == np.float16
    out = tmp_path / "labels.zarr"
    assert main(["segment", str(path), str(out), "--textures", "3", "--no-progress"]) == 0
    labels = xr.open_zarr(out)["labels"].values
    expected = np.asarray(xfskde.segment(xfskde.open_image(path).astype(np.float32), 3))
    np.testing.assert_array_equal(labels, expected)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4"])
def test_big_endian_values_are_segmented_as_native_ones(dtype):
    """Values in the other byte order (FITS, raw big-endian data) were numba's "Unsupported
    array dtype: >f4" for floats; the field already read them in the machine's order."""
    values = PIXELS.astype(np.float32) * (1 if "f" in dtype else 1000)
    native = values.astype(np.dtype(dtype).newbyteorder("="))
    expected = np.asarray(xfskde.segment(native, 3))
    np.testing.assert_array_equal(np.asarray(xfskde.segment(native.astype(dtype), 3)), expected)


def test_the_field_of_long_doubles_is_the_field_of_their_float64_values():
    """A long double image was a TypingError from inside numba; the field is now computed in
    float64, as for a float64 image (complex128)."""
    grey = PIXELS[..., 0].astype(np.float64)
    field = xfskde.local_fskde(grey.astype(np.longdouble), order=4, window="box", size=5)
    assert field.dtype == np.complex128
    np.testing.assert_array_equal(field, xfskde.local_fskde(grey, order=4, window="box", size=5))
