"""xfskde.plot.segmentation and label_rgb: the pixels drawn are the labels and their boundaries."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from skimage.segmentation import find_boundaries

from xfskde import plot
from xfskde.exceptions import ParameterError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NEUTRAL = (0.85, 0.85, 0.85)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _scene(ny: int = 24, nx: int = 32):
    """Labels 1..3 in three blocks, a background corner, a truth shifted by two columns."""
    labels = np.ones((ny, nx), np.uint8)
    labels[:, nx // 2 :] = 2
    labels[ny // 2 :, nx // 2 :] = 3
    labels[:4, :5] = 0
    truth = np.zeros((ny, nx), np.int64)  # a truth numbered from 0: only its changes matter
    truth[:, nx // 2 + 2 :] = 1
    rng = np.random.default_rng(0)
    grey = rng.uniform(0, 1, (ny, nx))
    return grey, labels, truth


def _layer(ax, name: str) -> np.ndarray:
    (image,) = [im for im in ax.images if im.get_label() == name]
    return np.asarray(image.get_array())


def test_label_rgb_colours_are_distinct_and_the_background_neutral():
    labels = np.arange(40).reshape(5, 8)  # 0 .. 39: more labels than any palette
    rgba = plot.label_rgb(labels)
    assert rgba.shape == (5, 8, 4)
    np.testing.assert_allclose(rgba[0, 0], (*NEUTRAL, 1.0))
    colours = rgba.reshape(-1, 4)[1:, :3]
    assert len({tuple(np.round(c, 6)) for c in colours}) == 39
    assert np.all(np.abs(colours - NEUTRAL).max(axis=1) > 0.05)  # no texture looks like 0
    # label i has the i-th colour whatever else is present (skimage's label2rgb would not)
    np.testing.assert_array_equal(plot.label_rgb(np.array([[3]]))[0, 0], rgba[0, 3])
    clear = plot.label_rgb(labels, background=None, alpha=0.4)
    np.testing.assert_array_equal(clear[0, 0], 0.0)
    np.testing.assert_allclose(clear[0, 1:, 3], 0.4)
    given = plot.label_rgb(np.array([[1, 2, 3]]), colors=["red", (0, 0, 1)])
    np.testing.assert_allclose(given[0, :, :3], [[1, 0, 0], [0, 0, 1], [1, 0, 0]])  # cycled


def test_label_rgb_refuses_what_is_not_a_label_image():
    with pytest.raises(ParameterError, match="integer"):
        plot.label_rgb(np.zeros((3, 3)))
    with pytest.raises(ParameterError, match=">= 0"):
        plot.label_rgb(np.array([[-1, 2]]))
    with pytest.raises(ParameterError, match="alpha"):
        plot.label_rgb(np.ones((2, 2), int), alpha=2)


def test_panels_show_the_image_the_labels_and_find_boundaries():
    grey, labels, truth = _scene()
    axes = plot.segmentation(grey, labels, truth=truth, boundary_color="yellow")
    assert isinstance(axes, plot.SegmentationAxes) and all(a is not None for a in axes)
    assert axes.image.figure is axes.overlay.figure
    np.testing.assert_array_equal(_layer(axes.image, "input"), grey)
    np.testing.assert_array_equal(_layer(axes.overlay, "input"), grey)
    assert axes.image.images[0].get_cmap().name == "gray"
    colours = _layer(axes.labels, "labels")
    np.testing.assert_allclose(colours, plot.label_rgb(labels))
    np.testing.assert_allclose(colours[labels == 0, :3], np.broadcast_to(NEUTRAL, (20, 3)))
    firsts = np.array([colours[labels == v][0, :3] for v in (1, 2, 3)])
    assert np.all(colours[labels == 2, :3] == firsts[1])
    assert min(np.abs(a - b).max() for i, a in enumerate(firsts) for b in firsts[i + 1 :]) > 0.2
    # the boundaries drawn are exactly find_boundaries', in their colours, transparent elsewhere
    drawn = _layer(axes.overlay, "boundaries")
    expected = find_boundaries(labels, mode="thick")
    np.testing.assert_array_equal(drawn[..., 3] > 0, expected)
    np.testing.assert_allclose(drawn[expected, :3], np.broadcast_to((1, 1, 0), (expected.sum(), 3)))
    truth_drawn = _layer(axes.overlay, "truth boundaries")
    np.testing.assert_array_equal(truth_drawn[..., 3] > 0, find_boundaries(truth, mode="thick"))
    np.testing.assert_allclose(truth_drawn[truth_drawn[..., 3] > 0, :3][0], (0, 1, 1))
    names = [im.get_label() for im in axes.overlay.images]
    assert names == ["input", "labels", "truth boundaries", "boundaries"]  # boundaries on top
    tint = _layer(axes.overlay, "labels")
    np.testing.assert_allclose(tint[labels > 0, 3], 0.3)
    np.testing.assert_array_equal(tint[labels == 0, 3], 0.0)  # the background is not tinted
    # pixel indices: extents are the pixels' outer edges
    for ax in axes:
        np.testing.assert_allclose(ax.images[0].get_extent(), (-0.5, 31.5, 23.5, -0.5))
    (legend,) = axes.image.figure.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["texture 1", "texture 2", "texture 3", "background", "boundaries",
                     "truth boundaries"]  # fmt: skip


def test_other_modes_and_no_tint():
    grey, labels, _ = _scene()
    ax = plt.figure().add_subplot()
    axes = plot.segmentation(grey, labels, ax=ax, mode="inner", alpha=0, legend=False)
    assert axes.image is None and axes.labels is None and axes.overlay is ax
    assert [im.get_label() for im in ax.images] == ["input", "boundaries"]
    inner = find_boundaries(labels, mode="inner")
    np.testing.assert_array_equal(_layer(ax, "boundaries")[..., 3] > 0, inner)


def test_a_shape_mismatch_is_refused_in_one_line():
    grey, labels, truth = _scene()
    with pytest.raises(ParameterError, match=r"image's resolution") as error:
        plot.segmentation(grey, labels[::2, ::2])
    assert "\n" not in str(error.value) and "(12, 16)" in str(error.value)
    with pytest.raises(ParameterError, match="truth"):
        plot.segmentation(grey, labels, truth=truth[:, :-1])
    with pytest.raises(ParameterError, match="integer"):
        plot.segmentation(grey, labels.astype(float))


def test_dataarray_in_micrometres_is_placed_by_its_cell_edges():
    grey, labels, truth = _scene()
    ny, nx = grey.shape
    coords = {"y": 10.0 + 0.5 * np.arange(ny), "x": 0.25 + 0.5 * np.arange(nx)}  # 0.5 µm pixels
    image = xr.DataArray(grey, dims=("y", "x"), coords=coords)
    for dim in "yx":
        image[dim].attrs["units"] = "µm"
    label_da = xr.DataArray(labels, dims=("y", "x"), coords=coords)
    axes = plot.segmentation(image, label_da, truth=xr.DataArray(truth, dims=("y", "x")))
    edges = (0.0, 16.0, 10.0 + 0.5 * ny - 0.25, 9.75)  # left, right, bottom, top: cell edges
    for ax in axes:
        for im in ax.images:
            np.testing.assert_allclose(im.get_extent(), edges)
        np.testing.assert_allclose(ax.get_xlim(), edges[:2])
        assert ax.get_xlabel() == "x (µm)"
    assert axes.image.get_ylabel() == "y (µm)"
    drawn = _layer(axes.overlay, "boundaries")
    np.testing.assert_array_equal(drawn[..., 3] > 0, find_boundaries(labels))
    # a NumPy image with DataArray labels: the labels' coordinates place it
    axes = plot.segmentation(grey, label_da, legend=False)
    np.testing.assert_allclose(axes.overlay.images[0].get_extent(), edges)
    # a transposed DataArray is read by its dims' names
    axes = plot.segmentation(image.T, label_da.T, legend=False)
    np.testing.assert_array_equal(_layer(axes.image, "input"), grey)


def test_descending_crs_coordinates():
    grey, labels, _ = _scene(8, 8)
    coords = {"y": 5000.0 - 10 * np.arange(8), "x": 300.0 + 10 * np.arange(8)}  # metres, north up
    image = xr.DataArray(grey, dims=("y", "x"), coords=coords)
    axes = plot.segmentation(image, labels, legend=False)
    np.testing.assert_allclose(axes.overlay.images[0].get_extent(), (295, 375, 4925, 5005))


def test_rgb_uint8_float_and_band_first_inputs():
    grey, labels, _ = _scene()
    rgb = np.stack([grey, 1 - grey, 0.5 * grey], axis=-1)
    axes = plot.segmentation(rgb, labels, legend=False)
    np.testing.assert_allclose(_layer(axes.image, "input"), rgb)
    assert axes.image.images[0].get_array().shape == (24, 32, 3)
    rgb8 = (rgb * 255).astype(np.uint8)
    axes = plot.segmentation(rgb8, labels, legend=False)
    np.testing.assert_array_equal(_layer(axes.overlay, "input"), rgb8)
    rgb16 = (rgb * 65535).astype(np.uint16)  # scaled to [0, 1] for imshow
    axes = plot.segmentation(rgb16, labels, legend=False)
    np.testing.assert_allclose(_layer(axes.image, "input"), rgb, atol=1e-4)
    bands = xr.DataArray(rgb8.transpose(2, 0, 1), dims=("band", "y", "x"))  # rioxarray's layout
    axes = plot.segmentation(bands, labels, legend=False)
    np.testing.assert_array_equal(_layer(axes.image, "input"), rgb8)
    np.testing.assert_array_equal(
        _layer(axes.overlay, "boundaries")[..., 3] > 0, find_boundaries(labels)
    )


def test_a_pil_picture_is_shown_in_its_colours():
    """A palette picture (a GIF) was drawn as its colour-table indices, in grey; an RGBA one
    is drawn with its alpha, as it is shown anywhere else."""
    from PIL import Image

    grey, labels, _ = _scene()
    rgb8 = (np.stack([grey, 1 - grey, 0.5 * grey], axis=-1) * 255).astype(np.uint8)
    palette = Image.fromarray(rgb8).quantize(16)
    axes = plot.segmentation(palette, labels, legend=False)
    np.testing.assert_array_equal(_layer(axes.image, "input"), np.asarray(palette.convert("RGB")))
    rgba = np.dstack([rgb8, np.full(labels.shape, 128, np.uint8)])
    axes = plot.segmentation(Image.fromarray(rgba), labels, legend=False)
    np.testing.assert_array_equal(_layer(axes.image, "input"), rgba)
    plt.close("all")


def test_a_fluorescence_image_is_shown_channel_by_channel_stretched():
    """16-bit counts on a dark background are shown as napari shows channels: each between
    its 0.1th and 99.9th percentiles (it was divided by 65 535: black, the nuclei at 4 %);
    three channels as RGB, two in magenta and green, five in the cycle (they were refused)."""
    from xfskde.datasets import section_in_fluorescence

    image, section = section_in_fluorescence()
    labels = section.astype(np.uint8)
    shown = _layer(plot.segmentation(image, labels, legend=False).image, "input")
    assert shown.shape == image.shape and shown.min() >= 0 and shown.max() <= 1
    for c in range(3):
        np.testing.assert_allclose(np.percentile(shown[..., c], [0.1, 99.9]), [0, 1], atol=0.01)
        assert np.median(shown[..., c][~section]) < 0.05  # the background dark
    two = _layer(plot.segmentation(image[..., :2], labels, legend=False).image, "input")
    nuclei = (image[..., 0] > np.percentile(image[..., 0], 99)) & (image[..., 1] < 200)
    np.testing.assert_allclose(two[nuclei].mean(axis=0)[[0, 2]], two[nuclei].mean(axis=0)[0])
    assert two[nuclei].mean(axis=0)[0] > 3 * two[nuclei].mean(axis=0)[1]  # magenta
    five = xr.DataArray(np.dstack([image, image[..., :2]]), dims=("y", "x", "c"))
    assert _layer(plot.segmentation(five, labels, legend=False).image, "input").shape[-1] == 3
    twelve_bit = (image // 16).astype(np.uint16)  # a 12-bit camera's counts, shown alike
    coarse = _layer(plot.segmentation(twelve_bit, labels, legend=False).image, "input")
    assert np.abs(coarse - shown).mean() < 0.01  # (but for the 16 times coarser levels)


def test_dask_labels_and_given_axes():
    da = pytest.importorskip("dask.array")
    grey, labels, _ = _scene()
    _, row = plt.subplots(1, 3)
    axes = plot.segmentation(grey, da.from_array(labels, chunks=8), ax=[None, *row[1:]])
    assert axes.image is None and axes.labels is row[1] and not row[0].images
    np.testing.assert_allclose(_layer(row[1], "labels"), plot.label_rgb(labels))
    assert row[1].get_legend() is not None  # under the labels' panel
    with pytest.raises(ParameterError, match="three"):
        plot.segmentation(grey, labels, ax=row[:2])


def _make_figures():
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "docs" / "make_figures.py"
    spec = importlib.util.spec_from_file_location("_make_figures", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_figures_renumber_the_labels_to_match_the_truth():
    truth = np.array([[0, 0, 1, 1, 2, 2]])
    labels = np.array([[3, 3, 1, 1, 2, 0]])  # 0: background, stays 0
    np.testing.assert_array_equal(_make_figures()._matched(labels, truth), [[1, 1, 2, 2, 3, 0]])


@pytest.mark.slow  # a segmentation: its compiled kernels' first call takes seconds
def test_docs_segmentation_figure_is_written(tmp_path):
    """docs/make_figures.py's segmentation picture, quick (128²)."""
    (path,) = _make_figures().main(["--quick", "--only", "segmentation_random_textures",
                                    "--out", str(tmp_path)])  # fmt: skip
    data = path.read_bytes()
    assert path.name == "segmentation_random_textures.png"
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and 10_000 < len(data) < 250_000
