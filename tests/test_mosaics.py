"""Real-texture mosaics: shapes, dtypes, determinism, regions, transforms, normalisation."""

import time

import numpy as np
import pytest
from scipy import ndimage

from xfskde.datasets import class_tiles, texture_mosaic, texture_mosaic_set
from xfskde.datasets.mosaics import (
    LAYOUTS,
    MOSAIC_CONFIGS,
    TEXTURES,
    TRANSFORMS,
    _fold,
    local_textures,
)


def test_the_default_textures_ship_with_scikit_image():
    assert local_textures() == TEXTURES == ("brick", "grass", "gravel")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_shape_dtype_range_and_every_label(layout, transform):
    image, labels = texture_mosaic((72, 96), layout=layout, transform=transform, seed=5)
    assert image.shape == labels.shape == (72, 96)
    assert image.dtype == np.float32 and labels.dtype == np.uint8
    assert image.min() >= 0.0 and image.max() <= 1.0
    assert np.isfinite(image).all()
    assert set(np.unique(labels).tolist()) == {0, 1, 2}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_deterministic_by_seed(layout):
    a = texture_mosaic((64, 64), layout=layout, transform="both", seed=3)
    b = texture_mosaic((64, 64), layout=layout, transform="both", seed=3)
    c = texture_mosaic((64, 64), layout=layout, transform="both", seed=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[1], c[1])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_regions_are_large_and_their_boundaries_short(layout):
    shape = (128, 128)
    for seed in range(4):
        _, labels = texture_mosaic(shape, layout=layout, seed=seed)
        counts = np.bincount(labels.ravel(), minlength=3)
        assert counts.min() >= 0.4 * labels.size / 3, (seed, counts)  # half an equal share
        # boundary pixels (a 4-neighbour with another label) are a thin set
        changes = np.count_nonzero(labels[1:] != labels[:-1])
        changes += np.count_nonzero(labels[:, 1:] != labels[:, :-1])
        assert changes < 0.06 * labels.size, (seed, changes)


@pytest.mark.parametrize("layout", ["voronoi", "stripes"])
def test_voronoi_and_stripe_regions_are_contiguous(layout):
    for seed in range(4):
        _, labels = texture_mosaic((128, 128), layout=layout, seed=seed)
        for k in range(3):
            pieces, _ = ndimage.label(labels == k)
            sizes = np.bincount(pieces.ravel())[1:]
            assert sizes.max() >= 0.97 * sizes.sum(), (seed, k, sorted(sizes)[-3:])


def test_layout_does_not_depend_on_size():
    _, small = texture_mosaic((64, 64), layout="voronoi", seed=2)
    _, large = texture_mosaic((256, 256), layout="voronoi", seed=2)
    assert np.mean(large[2::4, 2::4] == small) > 0.97


@pytest.mark.parametrize("transform", ["rotate", "rescale", "both", "perspective"])
def test_transform_changes_pixels_not_layout(transform):
    plain, labels = texture_mosaic((96, 96), seed=7)
    moved, labels2 = texture_mosaic((96, 96), transform=transform, seed=7)
    np.testing.assert_array_equal(labels, labels2)
    for k in range(3):
        inside = labels == k
        assert np.mean(np.abs(plain[inside] - moved[inside]) > 0.02) > 0.5, k


@pytest.mark.parametrize("transform", [None, "rotate", "perspective"])
def test_perspective_changes_the_texture_scale_across_the_image(transform):
    """An isotropic texture's scale — the 1/e lag of its autocorrelation, measured on 36
    patches of 64² and fitted by a plane — is the same across a plain or rotated canvas and
    changes by PERSPECTIVE_RATIO or more (foreshortened along the tilt, more in the corners)
    across a perspective one, whatever the tilt's direction."""
    from scipy import ndimage as ndi

    from xfskde.datasets.mosaics import PERSPECTIVE_RATIO, _canvas
    from xfskde.segmentation.defaults import texture_scale

    noise = np.random.default_rng(0).standard_normal((512, 512))
    grain = ndi.gaussian_filter(noise, 3.0, mode="wrap").astype(np.float32)
    centres = np.arange(0, 384, 64) + 32
    yy, xx = np.meshgrid(centres, centres, indexing="ij")
    design = np.stack([np.ones(yy.size), yy.ravel(), xx.ravel()], axis=1)
    ratios = []
    for seed in range(4):
        canvas = _canvas(grain, (384, 384), np.random.default_rng(seed), transform)
        scales = [
            texture_scale([canvas[i : i + 64, j : j + 64]])
            for i in range(0, 384, 64)
            for j in range(0, 384, 64)
        ]
        plane = design @ np.linalg.lstsq(design, np.array(scales), rcond=None)[0]
        ratios.append(plane.max() / plane.min())
    if transform == "perspective":
        assert 0.9 * PERSPECTIVE_RATIO < min(ratios), ratios
        assert max(ratios) < 2.0 * PERSPECTIVE_RATIO, ratios
    else:
        assert max(ratios) < 1.25, ratios


def test_rotation_turns_the_brick_edges():
    """Bricks' mortar lines are axis-aligned; a rotated brick canvas has other edge angles."""
    from xfskde.datasets.mosaics import _canvas, _named_texture

    def axis_share(img):
        gy, gx = np.gradient(img.astype(np.float64))
        w = np.hypot(gy, gx)
        doubled = np.exp(2j * np.arctan2(gy, gx))  # 0°/90°/180° all give a real doubled angle
        return abs(np.sum(w * doubled.real**2)) / np.sum(w)

    brick = _named_texture("brick")
    straight = _canvas(brick, (128, 128), np.random.default_rng(0), None)
    turned = _canvas(brick, (128, 128), np.random.default_rng(3), "rotate")
    assert axis_share(straight) > axis_share(turned) + 0.1


def test_normalisation_matches_mean_and_std():
    image, labels = texture_mosaic((192, 192), layout="stripes", seed=1)
    means = [image[labels == k].mean() for k in range(3)]
    stds = [image[labels == k].std() for k in range(3)]
    assert np.ptp(means) < 0.06 and np.ptp(stds) < 0.04
    raw, _ = texture_mosaic((192, 192), layout="stripes", normalize=None, seed=1)
    assert not np.array_equal(raw, image)
    flat, _ = texture_mosaic((192, 192), layout="stripes", normalize="histogram", seed=1)
    assert abs(float(flat.mean()) - 0.5) < 0.05


def test_scale_zooms_the_textures():
    """Half the zoom puts about twice as many edges on a line: more gradient energy."""
    full, labels = texture_mosaic((128, 128), seed=2)
    half, labels2 = texture_mosaic((128, 128), scale=0.5, seed=2)
    np.testing.assert_array_equal(labels, labels2)
    energy = [np.mean(np.abs(np.diff(im, axis=1))) for im in (full, half)]
    assert energy[1] > 1.3 * energy[0]
    with pytest.raises(ValueError, match="scale"):
        texture_mosaic((32, 32), scale=0.0)


def test_mirrored_tiling_is_continuous():
    t = np.linspace(-50.0, 50.0, 10001)
    f = _fold(t, 8)
    assert f.min() >= 0.0 and f.max() <= 7.0
    assert np.abs(np.diff(f)).max() <= 0.011  # no jump anywhere: no seam
    np.testing.assert_allclose(_fold(np.array([0.0, 7.0, 8.0, 14.0, 15.0]), 8), [0, 7, 6, 0, 1])


def test_user_textures_and_two_regions():
    rng = np.random.default_rng(0)
    noise = rng.random((40, 30))
    stripes = np.tile((np.arange(30) % 6 < 3).astype(float), (40, 1))
    image, labels = texture_mosaic((64, 80), n_regions=2, textures=(noise, stripes), seed=0)
    assert set(np.unique(labels).tolist()) == {0, 1}
    # region 1 shows the vertical stripes: they change along x only
    inner = ndimage.binary_erosion(labels == 1, iterations=2)
    across = np.abs(np.diff(image, axis=1))[inner[:, 1:] & inner[:, :-1]].mean()
    along = np.abs(np.diff(image, axis=0))[inner[1:] & inner[:-1]].mean()
    assert across > 5 * along
    _, labels_default = texture_mosaic((64, 80), n_regions=2, seed=0)
    assert set(np.unique(labels_default).tolist()) == {0, 1}


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"shape": (8, 64)}, ValueError),
        ({"shape": 64}, TypeError),
        ({"n_regions": 4}, ValueError),
        ({"n_regions": 1}, ValueError),
        ({"layout": "spiral"}, ValueError),
        ({"transform": "shear"}, ValueError),
        ({"normalize": "zscore"}, ValueError),
        ({"textures": ("brick", "marble", "grass")}, ValueError),
    ],
)
def test_bad_arguments(kwargs, error):
    args = {"shape": (32, 32), **kwargs}
    with pytest.raises(error):
        texture_mosaic(args.pop("shape"), **args)


def test_small_mosaics_are_fast():
    texture_mosaic((64, 64), seed=0)  # loads and caches the photographs
    start = time.perf_counter()
    for seed in range(5):
        texture_mosaic((64, 64), layout=LAYOUTS[seed % 3], transform="both", seed=seed)
    assert time.perf_counter() - start < 2.0


def test_splits_share_no_seed_and_cover_every_combination():
    tuning = {c.seed for c in MOSAIC_CONFIGS["tuning"]}
    held_out = {c.seed for c in MOSAIC_CONFIGS["held_out"]}
    assert not tuning & held_out
    for configs in MOSAIC_CONFIGS.values():
        combos = {(c.layout, c.transform) for c in configs}
        assert combos == {(a, b) for a in LAYOUTS for b in TRANSFORMS}
        assert len({c.name for c in configs}) == len(configs)


def test_mosaic_set_builds_the_named_configs():
    items = texture_mosaic_set("tuning", (48, 48), layouts=("stripes",), transforms=(None,))
    assert [name for name, _, _ in items] == ["stripes-plain-s0", "stripes-plain-s1"]
    _, image, labels = items[0]
    ref_image, ref_labels = texture_mosaic((48, 48), layout="stripes", seed=0)
    np.testing.assert_array_equal(image, ref_image)
    np.testing.assert_array_equal(labels, ref_labels)
    with pytest.raises(ValueError, match="split"):
        texture_mosaic_set("test")


def test_colour_mosaics_keep_their_colours_and_the_grey_layout():
    """RGB textures (stained tissue tiles, say) in colour: each channel is the grey mosaic of
    that channel, same layout, offsets, angles and scales; grey textures repeat in all three."""
    rng = np.random.default_rng(1)
    rgb = [rng.random((40, 50, 3)), rng.random((30, 30, 3)) * [1.0, 0.5, 0.2], rng.random((50, 40))]
    kwargs = dict(layout="blobs", transform="both", normalize=None, seed=2, scale=0.8)
    image, labels = texture_mosaic((64, 72), textures=tuple(rgb), color=True, **kwargs)
    assert image.shape == (64, 72, 3) and image.dtype == np.float32
    for c in range(3):
        planes = tuple(t[..., c] if t.ndim == 3 else t for t in rgb)
        grey, grey_labels = texture_mosaic((64, 72), textures=planes, **kwargs)
        np.testing.assert_array_equal(grey_labels, labels)
        np.testing.assert_allclose(image[..., c], grey, atol=1e-6)
    assert image[labels == 1][:, 2].mean() < 0.5 * image[labels == 1][:, 0].mean()
    named, named_labels = texture_mosaic((48, 48), seed=4, color=True)
    plain, plain_labels = texture_mosaic((48, 48), seed=4)
    np.testing.assert_array_equal(named_labels, plain_labels)
    for c in range(3):
        np.testing.assert_array_equal(named[..., c], plain)
    # normalised per channel: every texture's channels at mean 0.5
    normed, nl = texture_mosaic((128, 128), textures=tuple(rgb), color=True, seed=2)
    for k in range(3):
        assert np.abs(normed[nl == k].mean(axis=0) - 0.5).max() < 0.06


def test_class_tiles_reads_one_tile_per_class(tmp_path):
    """Classes from name prefixes (NCT-CRC-HE-100K's ``TUM-AACHEHDV.tif``) or sub-folders; the
    first file by path wins; grey stays grey, alpha is dropped."""
    import skimage.io

    rng = np.random.default_rng(0)
    red = (rng.random((20, 24, 3)) * [255, 0, 0]).astype(np.uint8)
    blue = (rng.random((20, 24, 3)) * [0, 0, 255]).astype(np.uint8)
    skimage.io.imsave(tmp_path / "TUM-B.png", blue, check_contrast=False)
    skimage.io.imsave(tmp_path / "TUM-A.png", red, check_contrast=False)
    rgba = np.dstack([blue, np.full((20, 24), 255, np.uint8)])
    skimage.io.imsave(tmp_path / "STR-X.png", rgba, check_contrast=False)
    (tmp_path / "ADI").mkdir()
    grey = (rng.random((16, 16)) * 255).astype(np.uint8)
    skimage.io.imsave(tmp_path / "ADI" / "any-name.tif", grey, check_contrast=False)
    (tmp_path / "notes.txt").write_text("not a tile")
    tiles = class_tiles(tmp_path)
    assert list(tiles) == ["ADI", "STR", "TUM"]
    np.testing.assert_array_equal(tiles["TUM"], red)  # TUM-A before TUM-B
    np.testing.assert_array_equal(tiles["STR"], blue)
    np.testing.assert_array_equal(tiles["ADI"], grey)
    image, labels = texture_mosaic(
        (48, 48), textures=(tiles["TUM"], tiles["STR"], tiles["ADI"]), color=True,
        normalize=None, seed=1,
    )  # fmt: skip
    assert image[labels == 0][:, 0].mean() > 0.3 > image[labels == 0][:, 2].mean()
    with pytest.raises(FileNotFoundError, match="not a folder"):
        class_tiles(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no tile"):
        class_tiles(tmp_path / "empty")
