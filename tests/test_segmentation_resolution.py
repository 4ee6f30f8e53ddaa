"""Coarse textures analysed on the image averaged over f × f cells (``resolution``)."""

from __future__ import annotations

import dataclasses
import warnings

import dask.array as da
import numpy as np
import pytest
import xarray as xr

from xfskde.datasets import dead_leaves
from xfskde.exceptions import ParameterError
from xfskde.metrics import rand_index
from xfskde.segmentation import fit_textures, segment
from xfskde.segmentation.defaults import MAX_RESOLUTION, auto_resolution
from xfskde.segmentation.model import BACKGROUND

SETTINGS = dict(features=("color", "bank", "fskde"), size=24.0, stride=8, method="kmeans")


@pytest.fixture(scope="module")
def image():
    """Dead leaves of 64-px bars, quantised to multiples of 1/256: every mean of 2 × 2 or
    4 × 4 of its values is exact in float32, whoever computes it."""
    picture, truth = dead_leaves((256, 320), seed=5, bar_length=64)
    return (np.floor(picture * 256) / 256).astype(np.float32), truth


def _means(picture: np.ndarray, f: int) -> np.ndarray:
    """The reference: NumPy's mean of each whole f × f cell (the image's sides are multiples)."""
    h, w, c = picture.shape
    return picture.reshape(h // f, f, w // f, f, c).mean(axis=(1, 3), dtype=np.float64)


def test_auto_resolution_rule():
    assert auto_resolution(3.7, 30.0) == 1  # real textures: fine structure, every pixel
    assert auto_resolution(9.5, 35.5) == 2  # λ / 4
    assert auto_resolution(18.7, 73.7) == 4
    assert auto_resolution(40.0, 20.0) == 2  # σ / 8
    assert auto_resolution(1000.0, 1000.0) == MAX_RESOLUTION
    assert auto_resolution(0.5, 6.0) == 1


@pytest.mark.parametrize("f", [2, 4])
def test_labels_are_those_of_the_averaged_image_repeated(image, f):
    """The model at resolution f labels each f × f cell as the same model at resolution 1
    labels the averaged image (averaged here by NumPy), and gives the label to its pixels."""
    picture, truth = image
    labels, model = segment(picture, 3, **SETTINGS, resolution=f, return_model=True)
    assert model.resolution == f and model.spec.size == pytest.approx(24.0 / f)
    assert model.spec.stride == round(8 / f)
    fine = dataclasses.replace(model, resolution=1)
    expected = np.asarray(fine.predict(_means(picture, f).astype(np.float32)))
    np.testing.assert_array_equal(labels, np.repeat(np.repeat(expected, f, 0), f, 1))
    assert rand_index(labels, truth) > 0.85  # measured 0.89 at f = 4 (a window of 6 cells)


def test_coarse_labels_do_not_depend_on_chunks_or_sides(image):
    """Dask chunks that are not whole cells, and sides that are not whole cells: the same
    labels, in the input's chunks, with no chunk merged (no warning)."""
    picture, _ = image
    picture = picture[:250, :317]  # 250 = 83 cells of 3 + 1; 317 = 105 cells + 2
    labels, model = segment(picture, 3, **SETTINGS, resolution=3, return_model=True)
    assert labels.shape == picture.shape[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lazy = model.predict(da.from_array(picture, chunks=(100, 130, 3)))
    assert lazy.chunks == ((100, 100, 50), (130, 130, 57))
    np.testing.assert_array_equal(lazy.compute(), labels)
    # the last, partial cells: their pixels take the label of the mean of the pixels present
    assert (labels[-1, :] > 0).all() and (labels[:, -1] > 0).all()


def test_the_coarse_fit_does_not_depend_on_chunks():
    """At a resolution above 1 the fit draws its cells from the coarse image's default plan:
    ``chunks=`` (which cuts the coarse image otherwise) and a Dask input's chunks leave the
    endmembers as they are, bit for bit (with ``chunks=300`` the coarse blocks are 300 pixels,
    the cells 512)."""
    picture, _ = dead_leaves((1100, 1100), seed=5)
    settings = dict(features=("bank", "fskde"), size=24.0, stride=8, method="kmeans")
    grey = picture.mean(axis=-1)
    model = fit_textures(grey, 3, **settings, resolution=2)
    for other in (
        fit_textures(grey, 3, **settings, resolution=2, chunks=300),
        fit_textures(da.from_array(grey, chunks=(256, 700)), 3, **settings, resolution=2),
    ):
        np.testing.assert_array_equal(other.endmembers, model.endmembers)


def test_missing_pixels_stay_missing_at_any_resolution(image):
    picture, _ = image
    holed = picture.copy()
    holed[40:43, 50:53] = np.nan  # crosses cells of 2
    labels = segment(holed, 3, **SETTINGS, resolution=2)
    assert (labels[40:43, 50:53] == BACKGROUND).all()
    assert (labels[38:40, 48:56] > 0).all() and (labels[43:46, 48:56] > 0).all()
    abundances = fit_textures(holed, 3, **SETTINGS, resolution=2).abundances(holed)
    assert np.isnan(abundances[41, 51]).all()
    assert np.allclose(np.nansum(abundances[:40], axis=-1), 1, atol=1e-5)


def test_coarse_results_keep_coords_and_record_the_resolution(image):
    picture, _ = image
    arr = xr.DataArray(
        picture, dims=("y", "x", "c"),
        coords={"y": 0.5 * np.arange(256), "x": 0.5 * np.arange(320)},
    )  # fmt: skip
    labels = segment(arr, 3, **SETTINGS, resolution=2)
    assert labels.dims == ("y", "x") and labels.attrs["resolution"] == 2
    np.testing.assert_array_equal(labels["x"], arr["x"])
    assert labels.attrs["size"] == 12.0 and labels.attrs["stride"] == 4


def test_automatic_resolution_for_coarse_textures():
    """Dead leaves of 64-px bars at 1024²: λ ≈ 10 px, so the image is averaged over 2 × 2
    cells, and the labels are as good as at every pixel (measured 0.977 both)."""
    picture, truth = dead_leaves((1024, 1024), seed=101, bar_length=64)
    labels, model = segment(picture, 3, return_model=True)
    sigma = model.spec.window_obj.sigma * model.resolution  # in pixels
    assert model.resolution == auto_resolution(model.choices["texture_scale_px"], sigma) == 2
    assert model.choices["resolution"].startswith("2: the image averaged over 2 x 2 cells")
    assert rand_index(labels, truth) > 0.95


def test_explicit_windows_are_applied_to_the_pixels(image):
    picture, _ = image
    model = fit_textures(picture, 3, **SETTINGS)
    assert model.resolution == 1 and "resolution" not in model.choices
    for bad in (0, -2, 1.5, "coarse", True, 257):  # 257: cells larger than the image
        with pytest.raises(ParameterError, match="resolution"):
            fit_textures(picture, 3, **SETTINGS, resolution=bad)


def test_mask_at_a_coarse_resolution(image):
    """Outside the mask the cells are background, inside labelled, whatever the chunks."""
    picture, _ = image
    mask = np.zeros(picture.shape[:2], bool)
    mask[:, :160] = True
    labels = segment(picture, 3, **SETTINGS, resolution=2, mask=mask)
    assert (labels[:, 160:] == BACKGROUND).all() and (labels[:, :160] > 0).all()
    lazy = segment(da.from_array(picture, chunks=(128, 96, 3)), 3, **SETTINGS, resolution=2,
                   mask=mask)  # fmt: skip
    np.testing.assert_array_equal(lazy.compute(), labels)


def _nan_cell_means(values: np.ndarray, f: int) -> np.ndarray:
    """The reference: NumPy's nanmean in float64 of each f × f cell's finite values (cells
    padded at the bottom and right by NaN), as float32."""
    h, w, c = values.shape
    padded = np.pad(values.astype(np.float64), ((0, -h % f), (0, -w % f), (0, 0)),
                    constant_values=np.nan)  # fmt: skip
    padded[~np.isfinite(padded)] = np.nan
    cells = padded.reshape(padded.shape[0] // f, f, padded.shape[1] // f, f, c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cell with nothing present
        return np.nanmean(cells, axis=(1, 3)).astype(np.float32)


@pytest.mark.parametrize(
    ("shape", "f", "chunk", "dtype", "nodata"),
    [((1000, 1103, 3), 5, 300, np.uint8, None), ((777, 655, 1), 4, 256, np.uint16, 0),
     ((640, 641, 2), 3, 200, np.float32, None), ((130, 131, 3), 4, 64, np.uint8, 255),
     ((200, 203, 3), 3, 64, np.int16, -1), ((90, 97, 3), 7, 40, np.float32, 0.1),
     ((130, 131, 1), 4, 64, bool, None)],
)  # fmt: skip
def test_the_cells_are_averaged_from_the_blocks_in_their_own_dtype(shape, f, chunk, dtype, nodata):
    """_cell_blocks cuts the image in its own dtype into the cells' plan; each block's cells
    are the means of its values in [0, 1] (_unit_float: integers over their dtype's maximum,
    NaN where every channel is the nodata value) that are finite, whatever the input's chunks,
    and missing pixels are found in the same blocks (_present_block)."""
    import xfskde.segmentation.model as model_module
    from xfskde.segmentation.features import present_pixels

    rng = np.random.default_rng(1)
    x = rng.random(shape) * (2 if dtype is bool else 255 if dtype == np.uint8 else 1000)
    x = x.astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rng.random(shape[:2]) < 0.01] = np.nan
        x[3, :, 0] = np.inf  # one channel not finite: that channel's value is not counted
    if nodata is not None:
        x[:5, :7] = nodata  # a missing corner
        x[8, 9, 0] = nodata  # one channel of several equal to it: present
    unit = model_module._unit_float(x, nodata)
    raw = da.from_array(x, chunks=(chunk, chunk, -1))
    blocks = model_module._cell_blocks(raw, f, None)
    h, w = shape[:2]
    rows, cols = model_module._coarse_plan((h, w), f, None)
    assert blocks.dtype == x.dtype
    assert blocks.chunks[:2] == ((*rows[:-1], rows[-1] - -h % f), (*cols[:-1], cols[-1] - -w % f))
    coarse = model_module._coarse(raw, f, None, nodata)
    expected = _nan_cell_means(unit, f)
    got = coarse.compute()
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # the image converted first gives the same cells, bit for bit
    converted = model_module._coarse(da.from_array(unit, chunks=(chunk, chunk, -1)), f, None)
    assert np.array_equal(converted.compute(), got, equal_nan=True)
    present = blocks.map_blocks(model_module._present_block, nodata, (rows, cols),
                                chunks=(rows, cols), drop_axis=2, dtype=bool)  # fmt: skip
    want = np.zeros((sum(rows), sum(cols)), bool)
    want[:h, :w] = present_pixels(unit)
    np.testing.assert_array_equal(present.compute(), want)
    if nodata is not None:
        assert not want[:5, :7].any() and want[8, 9] == (shape[2] > 1)
    every = model_module._every_pixel_present(np.dtype(dtype), nodata)
    assert every == (np.dtype(dtype).kind in "uib" and nodata is None) and (
        not every or want[:h, :w].all()
    )


@pytest.mark.parametrize(
    ("rows", "cols", "f"),
    [((100, 100, 50), (130, 130, 57), 3), ((2048, 2048), (1000, 1024, 1024), 5),
     ((40, 2, 30), (33, 40), 4)],  # a chunk inside one cell: the cell goes to both
)  # fmt: skip
@pytest.mark.parametrize("trailing", [(), (3,)])
def test_cells_are_repeated_into_the_images_chunks(rows, cols, f, trailing):
    """_repeated gives each cell's value to its f × f pixels in the image's own chunks,
    whatever they are (cut within cells, shorter than a cell), labels and abundances alike,
    and the fill at missing pixels (NaN, or every channel the nodata value)."""
    import xfskde.segmentation.model as model_module

    h, w = sum(rows), sum(cols)
    ch, cw = -(-h // f), -(-w // f)
    rng = np.random.default_rng(7)
    values = rng.random((ch, cw, *trailing)).astype(np.float32)
    result = da.from_array(values, chunks=(17, 23, *trailing))
    full = da.zeros((h, w, 3), np.float32, chunks=(rows, cols, 3))
    expected = np.repeat(np.repeat(values, f, axis=0), f, axis=1)[:h, :w]
    for raw, nodata in ((np.full((h, w, 3), 7, np.uint8), None), (np.zeros((h, w, 3), "f4"), None),
                        (np.full((h, w, 3), 7, np.uint16), 0)):  # fmt: skip
        raw[1, 2] = np.nan if raw.dtype.kind == "f" else (nodata if nodata is not None else 7)
        blocks = model_module._cell_blocks(da.from_array(raw, chunks=(64, 64, 3)), f, None)
        got = model_module._repeated(result, blocks, full, f, np.nan, nodata)
        assert got.chunks == (rows, cols, *((trailing,) if trailing else ()))
        want = expected.copy()
        if raw.dtype.kind == "f" or nodata is not None:  # the one missing pixel
            want[1, 2] = np.nan
        np.testing.assert_array_equal(got.compute(), want)
