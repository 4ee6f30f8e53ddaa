"""Rotation-invariant uniform LBP codes (xfskde.segmentation._lbp) against scikit-image."""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from skimage.feature import local_binary_pattern

from xfskde.exceptions import ParameterError
from xfskde.segmentation._lbp import lbp_codes, lbp_reach

SETTINGS = [(8, 1), (16, 2), (24, 3), (8, 2.5)]
SHAPES = [(40, 57), (9, 9), (13, 7), (3, 20), (70, 300)]  # up to 300: dc's last bits vary


def _skimage(grey: np.ndarray, points: int, radius: float) -> np.ndarray:
    """skimage's codes (it warns about float images: ours are what we mean to compare)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return local_binary_pattern(grey, points, radius, method="uniform")


def _offsets(points: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """The sample offsets of the LBP definition: angle 2πp/P, rows downwards, 5 decimals."""
    angle = 2 * np.pi * np.arange(points) / points
    return np.round(-radius * np.sin(angle), 5), np.round(radius * np.cos(angle), 5)


def _image(kind: str, shape: tuple[int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "uint8":
        return rng.integers(0, 256, shape).astype(np.float32) / np.float32(255)
    if kind == "uniform":
        return rng.random(shape, dtype=np.float32)
    # flat patches of 4 × 3 px at 7 levels (i / 7 is not exact in binary: ties and near-ties)
    levels = rng.integers(0, 7, (shape[0] // 4 + 1, shape[1] // 3 + 1))
    patches = np.kron(levels, np.ones((4, 3)))[: shape[0], : shape[1]]
    return (patches / 7).astype(np.float32)


def _interior(a: np.ndarray, reach: int) -> np.ndarray:
    return a[reach : a.shape[0] - reach, reach : a.shape[1] - reach]


@pytest.mark.parametrize(("points", "radius"), SETTINGS)
@pytest.mark.parametrize("kind", ["uint8", "uniform", "flat"])
def test_codes_equal_skimage(points, radius, kind):
    for seed, shape in enumerate(SHAPES):
        grey = _image(kind, shape, seed)
        got = lbp_codes(grey, points, radius)
        expected = _skimage(grey, points, radius)
        reach = lbp_reach(radius)
        np.testing.assert_array_equal(_interior(got, reach), _interior(expected, reach))
        # the edges too: pixels outside the image are read as 0, as skimage reads them
        np.testing.assert_array_equal(got, expected)


def test_flat_image_has_ties_everywhere():
    """Constant images: every sample ties with its centre, and the interpolation's rounding
    (which depends on the pixel's position) decides each bit, as in skimage."""
    for value in (0.3, 0.1, 1 / 3, 0.7):
        grey = np.full((140, 260), value, np.float32)
        for points, radius in SETTINGS:
            got = lbp_codes(grey, points, radius)
            np.testing.assert_array_equal(got, _skimage(grey, points, radius))
            reach = lbp_reach(radius)
            assert set(np.unique(_interior(got, reach))) <= set(range(points + 2))
    grey = np.full((12, 12), 0.5, np.float32)  # exact in binary: all samples tie exactly
    assert np.all(lbp_codes(grey, 8, 1)[1:-1, 1:-1] == 8)


def test_other_settings_and_inputs_equal_skimage():
    rng = np.random.default_rng(7)
    grey = rng.random((23, 31), dtype=np.float32)
    for points, radius in [(1, 1), (2, 1.5), (5, 1.3), (12, 0.7), (4, 4), (3, 1e-6), (32, 5)]:
        np.testing.assert_array_equal(
            lbp_codes(grey, points, radius), _skimage(grey, points, radius)
        )
    # float64 is read as float32; other layouts and integer images are accepted
    wide = rng.random((17, 19))
    np.testing.assert_array_equal(lbp_codes(wide, 8, 1), _skimage(wide.astype(np.float32), 8, 1))
    np.testing.assert_array_equal(lbp_codes(grey.T, 8, 1), _skimage(grey.T.copy(), 8, 1))
    ints = rng.integers(0, 256, (15, 16)).astype(np.uint8)
    np.testing.assert_array_equal(lbp_codes(ints, 16, 2), _skimage(ints, 16, 2))
    out = np.full(grey.shape, 99, np.uint8)
    assert lbp_codes(grey, 8, 1, out=out) is out
    np.testing.assert_array_equal(out, _skimage(grey, 8, 1))
    assert lbp_codes(np.zeros((0, 5), np.float32), 8, 1).shape == (0, 5)


@pytest.mark.parametrize(("points", "radius"), SETTINGS)
def test_codes_range_and_dtype(points, radius):
    grey = _image("uint8", (30, 30), 3)
    codes = lbp_codes(grey, points, radius)
    assert codes.dtype == np.uint8
    assert codes.shape == grey.shape
    assert codes.min() >= 0
    assert codes.max() <= points + 1
    # both uniform and non-uniform patterns occur in a random image
    assert (codes <= points).any()
    assert (codes == points + 1).any()


def test_reach():
    assert [lbp_reach(r) for r in (1, 2, 2.5, 3, 0.7, 3.000004, 2.999996, 3.00001)] == [
        1,
        2,
        3,
        3,
        1,
        3,
        3,
        4,
    ]
    assert lbp_reach(1e-6) == 0
    # the largest offset of a pixel read by any sample's interpolation, for any P
    for radius in (0.7, 1, 1.5, 2, 2.5, 3, 4.2):
        for points in (1, 3, 4, 8, 16, 24, 36):
            rp, cp = _offsets(points, radius)
            read = np.concatenate([np.floor(rp), np.ceil(rp), np.floor(cp), np.ceil(cp)])
            assert np.abs(read).max() == lbp_reach(radius)  # sample 0 reaches it
    # a block with a halo of lbp_reach gives its interior the codes of the whole image
    grey = _image("uniform", (50, 60), 11)
    for points, radius in SETTINGS:
        reach = lbp_reach(radius)
        whole = lbp_codes(grey, points, radius)
        block = lbp_codes(grey[10 - reach : 30 + reach, 20 - reach : 45 + reach], points, radius)
        np.testing.assert_array_equal(_interior(block, reach), whole[10:30, 20:45])


@pytest.mark.parametrize("value", [0.3, 0.1, 1 / 3, 0.7])
def test_a_block_at_its_origin_has_the_codes_of_the_whole_image(value):
    """On a flat image every sample ties with its centre and the interpolation's last bits,
    which depend on the pixel's row and column, decide each bit: a block given its position
    in the image (``origin``) has the whole image's codes in its interior, however the image
    is cut; at its own positions it does not."""
    grey = np.full((90, 120), value, np.float32)
    for points, radius in SETTINGS:
        reach = lbp_reach(radius)
        whole = lbp_codes(grey, points, radius)
        differ = False
        for top, left in [(7, 13), (21, 40), (33, 5)]:
            block = grey[top - reach : top + 40 + reach, left - reach : left + 50 + reach]
            at = lbp_codes(block, points, radius, origin=(top - reach, left - reach))
            inner = whole[top : top + 40, left : left + 50]
            np.testing.assert_array_equal(_interior(at, reach), inner)
            own = _interior(lbp_codes(block, points, radius), reach)
            differ |= not np.array_equal(own, inner)
        # what the origin mends, wherever the position decides a tie
        assert differ or len(np.unique(_interior(whole, reach))) == 1


@pytest.mark.parametrize(("points", "radius"), [(8, 1), (16, 2), (24, 3), (12, 2.5)])
def test_rotation_invariance(points, radius):
    """Turning the image by 90° turns the codes (P a multiple of 4: the samples map onto
    samples), computed without skimage."""
    rng = np.random.default_rng(points)
    grey = rng.permutation(45 * 38).reshape(45, 38).astype(np.float32)  # no ties
    codes = lbp_codes(grey, points, radius)
    reach = lbp_reach(radius)
    for turns in (1, 2, 3):
        turned = lbp_codes(np.rot90(grey, turns), points, radius)
        np.testing.assert_array_equal(
            _interior(turned, reach), _interior(np.rot90(codes, turns), reach)
        )
    # and the codes are not trivially constant
    assert len(np.unique(_interior(codes, reach))) > 3


def test_grey_scale_invariance():
    """An increasing map of the values keeps the codes where the samples lie on pixels (P = 4,
    integer R: any strictly increasing map); with interpolated samples, an increasing affine map
    (a nonlinear one does not commute with the bilinear interpolation)."""
    rng = np.random.default_rng(5)
    grey = (rng.permutation(40 * 36).reshape(40, 36) + 1).astype(np.float32)  # no ties, > 0
    squared = grey.astype(np.float64) ** 2 + 3  # exact in float32: below 2**24
    assert squared.max() < 2**24
    for radius in (1, 2, 3):
        reach = lbp_reach(radius)
        codes = lbp_codes(grey, 4, radius)
        assert len(np.unique(_interior(codes, reach))) >= 4
        np.testing.assert_array_equal(
            _interior(lbp_codes(squared.astype(np.float32), 4, radius), reach),
            _interior(codes, reach),
        )
    for points, radius in SETTINGS:
        reach = lbp_reach(radius)
        np.testing.assert_array_equal(
            _interior(lbp_codes(4 * grey + 3, points, radius), reach),
            _interior(lbp_codes(grey, points, radius), reach),
        )


def _readers(shape, y0, x0, points, radius):
    """The pixels whose centre or whose samples' interpolations read pixel (y0, x0)."""
    rp, cp = _offsets(points, radius)
    found = np.zeros(shape, bool)
    for r in range(shape[0]):
        for c in range(shape[1]):
            if (r, c) == (y0, x0):
                found[r, c] = True
                continue
            for dr, dc in zip(rp, cp, strict=True):
                rows = {math.floor(r + dr), math.ceil(r + dr)}
                cols = {math.floor(c + dc), math.ceil(c + dc)}
                if y0 in rows and x0 in cols:
                    found[r, c] = True
                    break
    return found


@pytest.mark.parametrize(("points", "radius"), SETTINGS)
def test_nan_gives_no_vote_code(points, radius):
    grey = _image("uniform", (21, 24), 2)
    y0, x0 = 10, 11
    grey[y0, x0] = np.nan
    codes = lbp_codes(grey, points, radius)
    expected = _readers(grey.shape, y0, x0, points, radius)
    np.testing.assert_array_equal(codes == points + 2, expected)
    # they reach exactly lbp_reach from the NaN, and the other pixels keep skimage's codes
    ys, xs = np.nonzero(expected)
    assert max(np.abs(ys - y0).max(), np.abs(xs - x0).max()) == lbp_reach(radius)
    np.testing.assert_array_equal(codes[~expected], _skimage(grey, points, radius)[~expected])
    # a NaN on the edge and one in a corner
    grey[0, 5] = grey[20, 23] = np.nan
    codes = lbp_codes(grey, points, radius)
    expected |= _readers(grey.shape, 0, 5, points, radius)
    expected |= _readers(grey.shape, 20, 23, points, radius)
    np.testing.assert_array_equal(codes == points + 2, expected)


def test_threads_give_the_same_codes():
    blocks = [_image("uniform", (64, 70), seed) for seed in range(4)]
    expected = [lbp_codes(b, 24, 3) for b in blocks]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda b: lbp_codes(b, 24, 3), blocks))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("points", [0, -8, 254, 300, 8.0, 2.5, True, "8", None])
def test_refuses_points(points):
    with pytest.raises(ParameterError, match=r"^points must be"):
        lbp_codes(np.zeros((5, 5), np.float32), points, 1)


@pytest.mark.parametrize("radius", [0, -1, 0.0, math.nan, math.inf, -math.inf, "1", None, True])
def test_refuses_radius(radius):
    with pytest.raises(ParameterError, match=r"^radius must be"):
        lbp_codes(np.zeros((5, 5), np.float32), 8, radius)
    with pytest.raises(ParameterError, match=r"^radius must be"):
        lbp_reach(radius)


@pytest.mark.parametrize(
    "grey",
    [
        np.zeros(5, np.float32),
        np.zeros((4, 5, 3), np.float32),
        np.float32(1),
        [[0.0, 1.0], [1.0, 0.0]],
        np.zeros((4, 4), np.complex64),
    ],
)
def test_refuses_grey(grey):
    with pytest.raises(ParameterError, match=r"^grey must be"):
        lbp_codes(grey, 8, 1)


@pytest.mark.parametrize(
    "out",
    [np.zeros((5, 5), np.int32), np.zeros((5, 4), np.uint8), np.zeros((5, 10), np.uint8)[:, ::2]],
)
def test_refuses_out(out):
    with pytest.raises(ParameterError, match=r"^out must be"):
        lbp_codes(np.zeros((5, 5), np.float32), 8, 1, out=out)


def test_the_lbp_feature_group_is_the_windowed_histogram_of_skimages_codes():
    """The segmentation's ``"lbp"`` group at a grid of samples: at each scale of LBP_SCALES,
    the windowed one-hot histogram of scikit-image's codes of the channels' mean smoothed by
    scipy's Gaussian of LBP_SMOOTHING px, weighed 1 / (number of scales) — read here as the
    colour histogram of an image whose one channel is the code, in the middle of its bin."""
    from scipy.ndimage import gaussian_filter

    from xfskde.segmentation._lbp import LBP_BINS, LBP_SCALES, LBP_SMOOTHING
    from xfskde.segmentation.features import FeatureSpec, feature_depth, grid_features

    rng = np.random.default_rng(5)
    block = rng.random((90, 80, 3), dtype=np.float32)
    spec = FeatureSpec(features=("lbp",), size=4.0)
    depth = feature_depth(spec)
    rows, cols = np.arange(depth, 90 - depth, 3), np.arange(depth, 80 - depth, 4)
    got = grid_features(block, spec, rows, cols)["lbp"]
    assert got.shape == (len(rows), len(cols), LBP_BINS) == (len(rows), len(cols), 28)
    grey = gaussian_filter(block.mean(axis=-1), LBP_SMOOTHING, truncate=4.0)
    start = 0
    for points, radius in LBP_SCALES:
        codes = _skimage(grey, points, radius)
        as_colour = ((codes + 0.5) / (points + 2)).astype(np.float32)[..., None]
        colour = FeatureSpec(features=("color",), size=4.0, color_bins=points + 2)
        want = grid_features(as_colour, colour, rows, cols)["color"] / len(LBP_SCALES)
        np.testing.assert_allclose(got[..., start : start + points + 2], want, atol=1e-6)
        start += points + 2
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, atol=1e-5)  # one vote per pixel


def test_missing_pixels_give_the_lbp_group_no_vote():
    """A pixel whose circle of samples at any scale reads a missing pixel, or a smoothed value
    that did, votes nothing at any scale (one set of pixels votes, to which the group's
    windows are renormalised); every other pixel votes its code, the same as without the
    missing one."""
    from xfskde.segmentation._lbp import LBP_SCALES, LBP_SMOOTHING, lbp_voting
    from xfskde.segmentation.features import FeatureSpec, block_votes, voting_pixels

    rng = np.random.default_rng(6)
    block = rng.random((40, 40, 1), dtype=np.float32)
    holed = block.copy()
    holed[20, 20] = np.nan
    spec = FeatureSpec(features=("lbp",), size=4.0)
    smoothing = int(4 * LBP_SMOOTHING + 0.5)  # scipy's radius at truncate=4
    # the smoothed values the hole reached, then every pixel whose circle reads one of them
    reached = np.zeros((40, 40), bool)
    reached[20 - smoothing : 21 + smoothing, 20 - smoothing : 21 + smoothing] = True
    silent = reached.copy()
    for points, radius in LBP_SCALES:
        rows, cols = _offsets(points, radius)
        for dr, dc in zip(rows, cols, strict=True):
            for r in (math.floor(dr), math.ceil(dr)):
                for c in (math.floor(dc), math.ceil(dc)):
                    silent |= np.roll(reached, (-r, -c), axis=(0, 1))
    valid = ~np.isnan(holed[..., 0])
    np.testing.assert_array_equal(lbp_voting(valid), ~silent)
    np.testing.assert_array_equal(voting_pixels(valid, spec), ~silent)
    assert voting_pixels(~np.isnan(block[..., 0]), spec) is None  # every pixel votes
    pairs = zip(block_votes(block, spec), block_votes(holed, spec), strict=True)
    for (name, full), (_, vote) in pairs:
        assert name == "lbp"
        weight = np.broadcast_to(vote.weight, vote.bins.shape)
        assert (weight[silent] == 0).all() and (weight[~silent] == 0.5).all()
        assert (vote.bins[~silent] == full.bins[~silent]).all()


def test_lbp_voting_is_where_every_scale_codes():
    """lbp_voting, from the pixels present alone, is where lbp_codes of the smoothed grey give
    no pixel the no-vote code at any scale, on random holes and cut edges."""
    from xfskde.segmentation._lbp import LBP_SCALES, lbp_voting, smoothed_grey

    rng = np.random.default_rng(0)
    for trial in range(30):
        grey = rng.random((50, 61), dtype=np.float32)
        valid = rng.random(grey.shape) > 0.002 + 0.01 * (trial % 4)
        if trial % 3 == 0:
            valid[:, :7] = False  # beyond an image's edge, as a block's padding holds it
        smooth = smoothed_grey(np.where(valid, grey, np.nan), valid)
        coded = np.ones(grey.shape, bool)
        for points, radius in LBP_SCALES:
            coded &= lbp_codes(smooth, points, radius) <= points + 1
        np.testing.assert_array_equal(lbp_voting(valid), coded)


def test_lbp_windows_are_renormalised_to_the_pixels_that_vote_in_them():
    """Near a missing region and the image's edge each scale's histogram of the patterns sums
    to its share (1 / number of scales), as the other groups' sum to 1 over the pixels
    present: the group's windows are renormalised to the pixels that vote in it. (Renormalised
    to the pixels present, they summed to less, and a flat grey image's patterns changed with
    the distance from its edge.) The projections, the patterns' windowed apart, are the
    features times the vectors."""
    from xfskde.segmentation._lbp import LBP_SCALES
    from xfskde.segmentation.features import FeatureSpec, grid_features, grid_projections

    rng = np.random.default_rng(8)
    block = rng.random((80, 90, 1), dtype=np.float32)
    block[:12] = np.nan  # beyond the image's edge, as a block's padding holds it
    block[40:52, 30:41] = np.nan
    spec = FeatureSpec(features=("color", "lbp"), size=3.0, color_bins=6)
    rows, cols = np.arange(12, 68, 2), np.arange(12, 78, 3)
    got = grid_features(block, spec, rows, cols)
    present = ~np.isnan(block[rows][:, cols, 0])
    colour, patterns = got["color"][present], got["lbp"][present]
    np.testing.assert_allclose(colour.sum(axis=-1), 1.0, atol=1e-5)
    start = 0
    for points, _ in LBP_SCALES:
        share = patterns[:, start : start + points + 2].sum(axis=-1)
        np.testing.assert_allclose(share, 1 / len(LBP_SCALES), atol=1e-5)
        start += points + 2
    X = np.concatenate([got["color"], got["lbp"]], axis=-1)
    E = rng.random((3, X.shape[-1]))
    tables = {"color": E[:, :6].T, "lbp": E[:, 6:].T}
    projected = grid_projections(block, spec, tables, rows, cols)
    np.testing.assert_allclose(projected[present], (X @ E.T)[present], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(128, 128), (256, 256), (200, 300, 3)])
def test_a_flat_image_is_refused_not_cut_by_its_edges(shape):
    """A flat image (grey, or grey in three channels) at any size is refused: its patterns'
    histograms near the edges summed to less than in the middle, and from 128² on the fit cut
    it into three labels by the distance from its edge. With a missing region too."""
    from xfskde.exceptions import ParameterError
    from xfskde.segmentation import segment

    for value in (0.3, 0.8):
        flat = np.full(shape, value, np.float32)
        with pytest.raises(ParameterError, match="the same at all"):
            segment(flat, 3)
    flat[30:60, 40:90] = np.nan
    with pytest.raises(ParameterError, match="the same at all"):
        segment(flat, 3)


def test_lbp_labels_near_missing_pixels_do_not_depend_on_chunking():
    """A grey image with a missing region and the patterns in its model: the same labels and
    abundances computed whole, in two passes over small chunks, or in chunks of another
    size — the patterns' projections travel between the passes in planes of their own with
    the pixels that vote in them."""
    import dask.array as da

    from xfskde.datasets import texture_mosaic
    from xfskde.segmentation import segment

    grey, _ = texture_mosaic((192, 192), seed=3)
    grey = grey.astype(np.float32) / 255
    grey[60:90, 100:140] = np.nan
    labels, model = segment(grey, 3, return_model=True, size=6.0)
    assert "lbp" in model.spec.features
    assert not labels[60:90, 100:140].any() and labels[:60].all()
    for chunks in (40, 64, 100):
        lazy = model.predict(da.from_array(grey, chunks=chunks), chunks=chunks)
        np.testing.assert_array_equal(np.asarray(lazy), labels)
    a = model.abundances(grey)
    np.testing.assert_allclose(model.abundances(da.from_array(grey, chunks=48)), a, atol=1e-5)


def test_a_model_records_its_lbp_codes_and_refuses_others():
    """A model with the ``"lbp"`` group records what its codes were — each (P, R), then the
    smoothing — and reads back as the same model; attrs recording other codes (a model of
    another version) are refused, naming them, not read as features they are not."""
    from xfskde.datasets import texture_mosaic
    from xfskde.segmentation import TextureModel, fit_textures

    image, _ = texture_mosaic((128, 128), seed=3)
    model = fit_textures(image, 3, features=("lbp", "fskde"), size=6, method="kmeans")
    attrs = model.attrs()
    assert attrs["lbp_scales"] == [8.0, 1.0, 16.0, 2.0, 0.7]
    again = TextureModel.from_attrs(attrs)
    np.testing.assert_array_equal(
        np.asarray(again.predict(image)), np.asarray(model.predict(image))
    )
    other = {**attrs, "lbp_scales": [8.0, 1.0, 16.0, 2.0, 0.0]}
    with pytest.raises(ParameterError, match=r"records local binary patterns .* 0\.0\]"):
        TextureModel.from_attrs(other, source="labels.zarr")
    auto = fit_textures(image, 3, size=6, method="kmeans").attrs()  # grey: the group chosen
    assert "lbp" in auto["features"] and "lbp_scales" in auto
    bank_only = fit_textures(image, 3, features=("bank",), size=6, method="kmeans").attrs()
    assert "lbp_scales" not in bank_only
