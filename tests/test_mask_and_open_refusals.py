"""Arguments of the mask functions and of open_image that were taken silently, or crashed with
a bare NumPy or Python error, refused in one line naming the parameter and what to do."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from PIL import Image

from xfskde.exceptions import DimensionError, ParameterError
from xfskde.io import open_image
from xfskde.io.images import image_levels
from xfskde.masks import background_blocks, mask_samples, resolve_mask, tissue_mask


def _scene() -> np.ndarray:
    """A 64 x 64 image: a bright square (foreground, by "nonzero") on 0, and one lone pixel."""
    image = np.zeros((64, 64), np.uint8)
    image[16:48, 16:48] = 200
    image[2, 60] = 200
    return image


@pytest.fixture
def pyramid(tmp_path):
    """A real two-level tiled TIFF (256² and 128²), as tifffile writes a pyramid."""
    path = tmp_path / "pyramid.tif"
    image = np.zeros((256, 256), np.uint8)
    image[64:192, 64:192] = 200
    with tifffile.TiffWriter(path) as tif:
        tif.write(image, tile=(64, 64), subifds=1)
        tif.write(image[::2, ::2], tile=(64, 64), subfiletype=1)
    return path


# ------------------------------------------------------------------------------ tissue_mask


def test_a_level_is_refused_where_no_file_level_is_read(pyramid):
    """level= was ignored for an array and for a DataArray that is not a whole level of its
    file (a crop): the mask was block-averaged from the image given, whatever it said."""
    for image in (np.ones((8, 8)), open_image(pyramid)[:100, :100]):
        with pytest.raises(ParameterError, match=r"^level=1 picks a pyramid level of a file; "
                           r"this image is not a whole level of one .*drop level"):  # fmt: skip
            tissue_mask(image, method="nonzero", level=1)
    # where a level is read, it still is: the whole image, or its path
    for image in (open_image(pyramid), pyramid):
        mask = tissue_mask(image, method="nonzero", level=1, margin=0)
        assert mask.attrs["source_level"] == 1 and mask.shape == (128, 128)
        assert mask.values[32:96, 32:96].all() and mask.values.sum() == 64 * 64
    with pytest.raises(ParameterError, match=r"level must be in 0\.\.1 for .*pyramid.tif"):
        tissue_mask(pyramid, level=2)


def test_a_bool_or_fractional_level_is_refused(pyramid):
    """level=True was read as level 1; 1.5 crashed with a bare list-index TypeError."""
    for level in (True, 1.5):
        with pytest.raises(TypeError, match=rf"^level must be an integer, .*got {level!r}$"):
            tissue_mask(pyramid, level=level)
        with pytest.raises(TypeError, match=rf"^level must be an integer, .*got {level!r}$"):
            open_image(pyramid, level=level)


@pytest.mark.parametrize("fraction", [2.0, -0.5, float("nan")])
def test_a_min_fraction_outside_0_1_is_refused(fraction):
    """2.0 dropped every object and filled every hole (all foreground), -0.5 was taken as 0,
    NaN crashed with 'cannot convert float NaN to integer'."""
    with pytest.raises(ParameterError, match=r"^min_fraction must be a share of the mask's "
                       r"pixels in \[0, 1\] \(default 1e-4\), got "):  # fmt: skip
        tissue_mask(_scene(), method="nonzero", min_fraction=fraction)
    with pytest.raises(TypeError, match=r"^min_fraction must be a number in \[0, 1\]"):
        tissue_mask(_scene(), method="nonzero", min_fraction=True)


def test_min_fraction_in_range_keeps_its_meaning():
    kept = tissue_mask(_scene(), method="nonzero", min_fraction=0, margin=0).values
    dropped = tissue_mask(_scene(), method="nonzero", min_fraction=1e-3, margin=0).values
    assert kept.sum() == 32 * 32 + 1 and kept[2, 60]  # the lone pixel is an object
    assert dropped.sum() == 32 * 32 and not dropped[2, 60]  # fewer than 4 pixels: dropped
    assert not tissue_mask(_scene(), method="nonzero", min_fraction=1.0).values.any()


def test_bool_and_non_positive_sizes_are_refused():
    """max_side=True was taken as 1 (a 1 x 1 mask), margin=True as 1."""
    with pytest.raises(TypeError, match=r"^max_side must be a positive integer, got True$"):
        tissue_mask(_scene(), max_side=True)
    with pytest.raises(ParameterError, match=r"^max_side must be a positive integer, got 0$"):
        tissue_mask(_scene(), max_side=0)
    with pytest.raises(TypeError, match=r"^margin must be an integer >= 0, got True$"):
        tissue_mask(_scene(), margin=True)
    with pytest.raises(ParameterError, match=r"^margin must be an integer >= 0, got -1$"):
        tissue_mask(_scene(), margin=-1)
    small = tissue_mask(_scene(), method="nonzero", max_side=16, margin=0)
    assert small.shape == (16, 16) and small.values[4:12, 4:12].all()


def test_storage_options_are_refused_for_an_image_in_memory():
    """They were ignored for an array (a local path refuses them)."""
    for image in (_scene(), xr.DataArray(_scene(), dims=("y", "x"))):
        given = rf"^storage_options were given for a {type(image).__name__}, which is read as it is"
        with pytest.raises(ParameterError, match=given):
            tissue_mask(image, storage_options={"anon": True})


def test_a_zarr_array_or_a_picture_is_masked_as_its_array():
    """They crashed with a bare 'expected str, bytes or os.PathLike object'."""
    expected = tissue_mask(_scene(), method="nonzero").values
    stored = zarr.create_array(store={}, shape=(64, 64), dtype="u1", chunks=(32, 32))
    stored[:] = _scene()
    for image in (stored, Image.fromarray(_scene())):
        np.testing.assert_array_equal(tissue_mask(image, method="nonzero").values, expected)


# ------------------------------------------------------------------------------- open_image


def test_stride_and_halo_are_checked():
    """stride=0 crashed with ZeroDivisionError, -3 and halo=-5 were taken, 2.9 was cut to 2."""
    array = da.zeros((1000, 1000), chunks=50)
    for stride in (0, -3):
        message = rf"^stride must be a positive integer, got {stride}$"
        with pytest.raises(ParameterError, match=message):
            open_image(array, chunks=100, stride=stride)
    with pytest.raises(TypeError, match=r"^stride must be a positive integer, got 2\.9$"):
        open_image(array, chunks=100, stride=2.9)
    with pytest.raises(ParameterError, match=r"^halo must be an integer >= 0, got -5$"):
        open_image(array, chunks=100, halo=-5)
    assert open_image(array, chunks=100, stride=3).chunks == ((150,) * 6 + (100,),) * 2
    assert open_image(array, chunks=100, stride=3.0).chunks == ((150,) * 6 + (100,),) * 2


def test_chunks_with_another_key_than_y_and_x_are_refused(pyramid):
    """{"z": 0} and {"q": 5} were taken and not read."""
    with pytest.raises(ParameterError, match=r"^chunks takes the keys 'y' \(a chunk's rows\) "
                       r"and 'x' \(its columns\) only, got 'z': this image's dims are "
                       r"\('y', 'x'\)"):  # fmt: skip
        open_image(pyramid, chunks={"z": 0})
    planes = xr.DataArray(np.zeros((4, 64, 64)), dims=("band", "lat", "lon"))
    with pytest.raises(ParameterError, match=r"got 'q': this image's dims are \('band', 'lat', "
                       r"'lon'\), its spatial ones 'y' and 'x' to chunks"):  # fmt: skip
        open_image(planes, chunks={"q": 5})
    assert open_image(planes, chunks={"y": 32, "x": 16}).chunks == ((4,), (32, 32), (16,) * 4)
    assert open_image(pyramid, chunks={"y": 128}).chunks == ((128, 128), (256,))


def test_storage_options_with_an_image_in_memory_are_refused():
    """They were ignored for an array, a DataArray and a Zarr object."""
    stored = zarr.create_array(store={}, shape=(8, 8), dtype="u1", chunks=(8, 8))
    for source in (np.zeros((8, 8)), xr.DataArray(np.zeros((8, 8)), dims=("y", "x")), stored):
        with pytest.raises(ParameterError, match=r"^storage_options were given for a "
                           rf"{type(source).__name__}, which is read as it is: they apply to "
                           r"URLs \(s3://, gs://, http://, \.\.\.\) only; drop them$"):  # fmt: skip
            open_image(source, storage_options={"anon": True})
    assert open_image(np.zeros((8, 8)), storage_options={}).shape == (8, 8)


def test_image_levels_of_an_image_in_memory_are_refused(pyramid):
    """A bare 'expected str, bytes or os.PathLike object, not ndarray'."""
    for source in (np.zeros((8, 8)), open_image(pyramid)):
        with pytest.raises(TypeError, match=r"^source must be the path or URL of an image "
                           rf"file or store, got a {type(source).__name__}: "):  # fmt: skip
            image_levels(source)
    assert [level.sides for level in image_levels(pyramid)] == [(256, 256), (128, 128)]


# ------------------------------------------------------------- background_blocks, samples


def _mask() -> xr.DataArray:
    mask = xr.DataArray(np.zeros((4, 4), bool), dims=("y", "x"))
    mask[1, 2] = True  # image rows 25..50, columns 50..75 of a 100 x 100 image
    return mask


def test_background_blocks_refuses_an_empty_image_or_a_mask_not_2d():
    """(0, 0) crashed with ZeroDivisionError, a 3-D mask with a bare unpacking error."""
    message = r"^image_shape's ny must be a positive integer, got 0$"
    with pytest.raises(ParameterError, match=message):
        background_blocks(_mask(), (0, 0))
    with pytest.raises(TypeError, match=r"^image_shape must be the image's \(ny, nx\)"):
        background_blocks(_mask(), 100)
    message = r"^a mask must be 2-D \(y, x\), got shape \(4, 4, 2\)$"
    with pytest.raises(DimensionError, match=message):
        background_blocks(xr.DataArray(np.zeros((4, 4, 2), bool)), (100, 100))
    for mask in (_mask(), _mask().values, _mask().T):  # an array, an (x, y) DataArray alike
        skip = background_blocks(mask, (100, 100))
        assert not skip((0, 30), (60, 70)) and skip((0, 25), (0, 100)) and skip((0, 100), (0, 50))


def test_mask_samples_refuses_a_stride_below_1_and_a_result_not_lazy():
    """A stride of 0 or -1 was taken (every sample read the mask's first pixels)."""
    result = da.zeros((25, 25, 3), chunks=(10, 10, 3))
    for stride in (0, -1):
        message = rf"^stride must be a positive integer, got {stride}$"
        with pytest.raises(ParameterError, match=message):
            mask_samples(_mask(), result, (100, 100), stride)
    with pytest.raises(TypeError, match=r"^result must be the lazy Dask array of the stride grid"):
        mask_samples(_mask(), np.zeros((25, 25)), (100, 100), 4)
    with pytest.raises(DimensionError, match=r"^result must have the samples' rows and columns"):
        mask_samples(_mask(), da.zeros(25, chunks=10), (100, 100), 4)
    with pytest.raises(DimensionError, match=r"^a mask must be 2-D \(y, x\)"):
        mask_samples(xr.DataArray(np.zeros((4, 4, 2), bool)), result, (100, 100), 4)
    inside = mask_samples(_mask(), result, (100, 100), 4).compute()
    expected = np.zeros((25, 25), bool)
    expected[6:13, 13:19] = True  # samples at 4 i + 1: rows 25..49, columns 50..74
    np.testing.assert_array_equal(inside[..., 0], expected)
    np.testing.assert_array_equal(mask_samples(_mask(), result, (100, 100), 4.0).compute(), inside)


# ------------------------------------------------------------------------------ resolve_mask


def test_resolve_mask_places_a_mask_on_a_numpy_image():
    """A NumPy image crashed with "'numpy.ndarray' object has no attribute 'attrs'"."""
    mask = np.zeros((4, 4), bool)
    mask[1, 2] = True
    placed = resolve_mask(mask, np.zeros((8, 8)))
    same = resolve_mask(mask, xr.DataArray(np.zeros((8, 8)), dims=("y", "x")))
    assert placed.dims == ("y", "x")
    np.testing.assert_array_equal(placed.values, mask)
    np.testing.assert_array_equal(placed.values, same.values)
    with pytest.raises(TypeError, match=r"^image must be a DataArray \(xfskde\.open_image"):
        resolve_mask(mask, "slide.tif")
    with pytest.raises(ParameterError, match=r"^margin must be an integer >= 0, got -3$"):
        resolve_mask(mask, np.zeros((8, 8)), margin=-3)  # refused, though not used here


@pytest.mark.parametrize("source", [5, None, 3.2, [[1, 2], [3, 4]]])
def test_open_image_of_no_image_kind_is_one_line_naming_the_kinds(source):
    """A number, None or a list reached os.fspath: "expected str, bytes or os.PathLike object,
    not int", which named neither open_image's parameter nor what it takes."""
    with pytest.raises(TypeError) as error:
        open_image(source)
    assert str(error.value) == (
        "source must be a path or URL, a NumPy, Dask or Zarr array, an xarray DataArray or a "
        f"PIL picture, got {type(source).__name__}"
    )
