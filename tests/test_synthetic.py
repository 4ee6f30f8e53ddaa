"""Synthetic data sets: seeded, covered, dead leaves by orientation, lazy chunks consistent."""

import numpy as np
import pytest
from scipy import ndimage

from xfskde import gradient
from xfskde.datasets import dead_leaves, dead_leaves_lazy, random_textures, random_textures_lazy
from xfskde.datasets.synthetic import _region_seeds, _voronoi


def test_dead_leaves_seeded_and_in_range():
    image, labels = dead_leaves((96, 80), seed=3)
    again, labels2 = dead_leaves((96, 80), seed=3)
    other, _ = dead_leaves((96, 80), seed=4)
    assert image.shape == (96, 80, 3) and labels.shape == (96, 80)
    assert image.dtype == np.float64 and labels.dtype == np.int64
    np.testing.assert_array_equal(image, again)
    np.testing.assert_array_equal(labels, labels2)
    assert not np.array_equal(image, other)
    assert image.min() >= 0 and image.max() <= 1
    assert set(np.unique(labels)) == {0, 1, 2}


def test_dead_leaves_labels_follow_voronoi_regions():
    shape = (128, 128)
    _, labels = dead_leaves(shape, seed=5)
    regions = _voronoi(*np.indices(shape).astype(float), _region_seeds(shape, 5))
    # a pixel shows a shape placed near it: labels agree with the regions except near borders
    assert np.mean(labels == regions) > 0.95


def test_dead_leaves_orientations():
    """Region 0 holds vertical bars, 1 horizontal, 2 diagonal: gradients point across them."""
    image, labels = dead_leaves((256, 256), seed=2)
    g = gradient(image, channel_axis=-1)
    doubled = np.angle(g**2)  # the bar edge normal, modulo π, doubled
    # edge normals: along x (vertical bars), along y (horizontal), along (1, -1) for the
    # diagonal bars, which run along x = y (down and to the right on screen)
    expected = {0: 0.0, 1: np.pi, 2: -np.pi / 2}
    for region, angle in expected.items():
        inner = ndimage.binary_erosion(labels == region, iterations=8)
        w = np.abs(g[inner])
        mean = np.angle(np.sum(w * np.exp(1j * doubled[inner])))
        assert abs(np.angle(np.exp(1j * (mean - angle)))) < 0.3, (region, mean)


def test_dead_leaves_bar_size_scales():
    from xfskde.datasets.synthetic import _bar_sizes

    assert _bar_sizes((256, 256), None) == (16, 4)
    assert _bar_sizes((1024, 2048), None) == (64, 16)
    assert _bar_sizes((64, 64), None) == (7, 2)
    with pytest.raises(ValueError, match="bar_length"):
        dead_leaves((64, 64), seed=0, bar_length=1)


@pytest.mark.parametrize("chunks", [(40, 56), 64, (100, 33)])
def test_lazy_matches_in_memory(chunks):
    image, labels = dead_leaves((100, 120), seed=7)
    lazy_image, lazy_labels = dead_leaves_lazy((100, 120), seed=7, chunks=chunks)
    np.testing.assert_array_equal(lazy_image.compute(), image.astype(np.float32))
    np.testing.assert_array_equal(lazy_labels.compute(), labels)


@pytest.mark.parametrize("chunks", [(40, 56), 64, (100, 33), (7, 120)])
def test_lazy_random_textures_match_in_memory(chunks):
    """Smoothing across chunk edges and mirrored at the image edges, exactly as in memory."""
    image, labels = random_textures((100, 120), seed=3)
    lazy_image, lazy_labels = random_textures_lazy((100, 120), seed=3, chunks=chunks)
    np.testing.assert_array_equal(lazy_image.compute(), image.astype(np.float32))
    np.testing.assert_array_equal(lazy_labels.compute(), labels)


def test_random_textures_layout_is_smooth_blobs():
    _, labels = random_textures((256, 256), seed=5)
    fractions = np.bincount(labels.ravel(), minlength=3) / labels.size
    assert fractions.min() > 0.05  # three regions of real size (seed 5)
    boundary = (labels[1:] != labels[:-1]).mean() + (labels[:, 1:] != labels[:, :-1]).mean()
    assert boundary < 0.05  # blobs, not speckle: few neighbours differ


def test_lazy_huge_is_cheap_per_chunk():
    image, labels = dead_leaves_lazy((32768, 32768), seed=1, chunks=1024, bar_length=16)
    assert image.shape == (32768, 32768, 3) and labels.shape == (32768, 32768)
    corner = image[5000:5100, 9000:9064].compute()
    assert corner.shape == (100, 64, 3) and 0 <= corner.min() and corner.max() <= 1
    assert np.unique(corner.reshape(-1, 3), axis=0).shape[0] > 20
    image, labels = random_textures_lazy((32768, 32768), seed=1, chunks=1024)
    corner = image[30000:30100, 9000:9064].compute()
    assert corner.shape == (100, 64, 3) and 0 <= corner.min() and corner.max() <= 1


def test_random_textures_differ_in_colour():
    image, labels = random_textures((128, 128), seed=1)
    assert image.shape == (128, 128, 3) and set(np.unique(labels)) == {0, 1, 2}
    np.testing.assert_array_equal(image, random_textures((128, 128), seed=1)[0])
    means = np.array([image[labels == t].mean(axis=0) for t in range(3)])
    gaps = [np.abs(means[i] - means[j]).max() for i, j in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 0.05


def test_bad_shape():
    with pytest.raises(ValueError, match="shape"):
        dead_leaves((4, 100), seed=0)
    with pytest.raises(TypeError, match="shape"):
        random_textures(5, seed=0)


def test_section_on_glass_is_the_ihc_image_in_an_ellipse_on_glass():
    """The slide the tissue mask and segmentation with mask="auto" are shown on: the section's
    pixels are scikit-image's IHC image's, the rest glass of its colour and noise."""
    from skimage import data

    from xfskde.datasets import section_on_glass
    from xfskde.datasets.slides import GLASS_RGB

    slide, section = section_on_glass()
    assert slide.dtype == np.uint8 and slide.shape == (576, 768, 3)
    assert 0.51 < section.mean() < 0.52  # the ellipse cut by the image's sides: 0.514
    assert not section[:32].any() and not section[:, :128].any() and not section[:, 640:].any()
    ihc = data.immunohistochemistry()
    np.testing.assert_array_equal(slide[32:544, 128:640][section[32:544, 128:640]],
                                  ihc[section[32:544, 128:640]])  # fmt: skip
    glass = slide[~section].astype(float)
    np.testing.assert_allclose(glass.mean(axis=0) + 0.5, GLASS_RGB, atol=0.1)  # floored to uint8
    assert 2.8 < glass.std(axis=0).min() and glass.std(axis=0).max() < 3.2
    np.testing.assert_array_equal(section_on_glass(seed=0)[0], slide)
    assert (section_on_glass(seed=1)[0] != slide).any()


def test_section_in_fluorescence_is_the_ihc_section_s_stains_as_camera_counts():
    """The fluorescence image the mask's ``"fluorescence"`` method is shown on: the section of
    section_on_glass at the same place, each channel a stain's concentration (nuclei,
    marker, density) as counts over the camera's offset; outside it, the offset, the stray
    light and the noise only."""
    from skimage import color, data

    from xfskde.datasets import section_in_fluorescence, section_on_glass
    from xfskde.datasets.slides import CAMERA_OFFSET

    image, section = section_in_fluorescence()
    assert image.dtype == np.uint16 and image.shape == (576, 768, 3)
    np.testing.assert_array_equal(section, section_on_glass()[1])
    dark = image[~section].astype(float)
    # the offset, 5 counts of stray light, floored to integers; read and shot noise √(4² + 5)
    np.testing.assert_allclose(dark.mean(axis=0) + 0.5, CAMERA_OFFSET + 5, atol=0.1)
    assert 4.4 < dark.std(axis=0).min() and dark.std(axis=0).max() < 4.8
    nuclei = color.rgb2hed(data.immunohistochemistry())[..., 0]
    inside = section[32:544, 128:640]
    counts = image[32:544, 128:640, 0][inside].astype(float)
    assert np.corrcoef(counts, nuclei[inside])[0, 1] > 0.95  # the haematoxylin, as DAPI
    assert 2000 < np.percentile(counts, 99) - CAMERA_OFFSET < 3000
    dim, _ = section_in_fluorescence(brightness=0.02)
    assert 40 < np.percentile(dim[32:544, 128:640, 0][inside], 99) - CAMERA_OFFSET < 70
    np.testing.assert_array_equal(section_in_fluorescence(seed=0)[0], image)
    assert (section_in_fluorescence(seed=1)[0] != image).any()


@pytest.mark.parametrize("make", [dead_leaves_lazy, random_textures_lazy])
@pytest.mark.parametrize("chunks", [0, (64, 0), -8, 2.5, (64, 64, 64)])
def test_lazy_data_sets_refuse_chunks_that_are_no_side(make, chunks):
    """chunks=0 was a ZeroDivisionError from inside Dask; now one line naming chunks."""
    from xfskde.exceptions import ParameterError

    with pytest.raises(ParameterError, match=r"^chunks must be a whole number of pixels >= 1"):
        make((64, 64), seed=0, chunks=chunks)
    image, _ = make((64, 64), seed=0, chunks=(32, 64))
    assert image.chunks[:2] == ((32, 32), (64,))
