"""Segmentation's defaults: the filter-bank and multi-scale gradient groups, the texture-scale
rule, the stable endmember fit, and ``segment(image, n)`` recording what it chose."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.ndimage as ndi
import xarray as xr

import xfskde
from xfskde.datasets import dead_leaves, random_textures, texture_mosaic, texture_mosaic_set
from xfskde.metrics import rand_index
from xfskde.segmentation import FeatureSpec, TextureModel, fit_textures, segment
from xfskde.segmentation._bank import BANK_FILTERS, bank_bins, bank_responses
from xfskde.segmentation.defaults import (
    BOUNDARY_RATIO,
    CHANNEL_SPAN,
    FINE_SIZE,
    FSKDE_SHARE,
    GREY_CHROMA,
    GREY_LEVELS_RATIO,
    IDLE_SHARE,
    LABEL_FRACTION,
    REGION_FLOOR,
    REGION_WIDER,
    UNIT_WHITE,
    auto_features,
    auto_stride,
    auto_weights,
    boundary_share,
    bounded_window,
    channel_ranges,
    chroma_ratio,
    color_range,
    gradient_unit,
    group_signal,
    idle_groups,
    keeps_grey_levels,
    label_window,
    region_scale,
    scale_window,
    signal_weights,
    texture_scale,
)
from xfskde.segmentation.features import (
    feature_depth,
    grid_features,
    grid_projections,
    vote_step,
)
from xfskde.segmentation.unmixing import fit_endmembers, fit_stable_endmembers

RANGES = tuple((-0.3, 0.3) if i else (0.0, 1.0) for i in range(len(BANK_FILTERS)))


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def _interior(image, spec, step=1):
    halo = feature_depth(spec)
    rows = np.arange(halo, image.shape[0] - halo, step)
    cols = np.arange(halo, image.shape[1] - halo, step)
    return halo, rows, cols


def test_bank_group_is_the_local_histogram_of_each_filter(rng):
    """The "bank" group under a box window: per filter, the histogram of its binned responses
    over the box (np.histogram of the responses, computed here on the whole image), / 16."""
    image = rng.random((90, 96, 3)).astype(np.float32)
    spec = FeatureSpec(features=("bank",), window="box", size=5, bank_bins=6, bank_ranges=RANGES)
    halo, rows, cols = _interior(image, spec, 7)
    assert halo == 2 + 34  # the box's radius and the widest filter's
    got = grid_features(image, spec, rows, cols)["bank"]
    assert got.shape == (len(rows), len(cols), 6 * len(BANK_FILTERS))
    np.testing.assert_allclose(got.sum(-1), 1, atol=1e-5)  # every filter's histogram sums to 1
    responses = bank_responses(image.mean(-1), 0.5)
    for i, y in enumerate(rows[:3]):
        for j, x in enumerate(cols[:3]):
            patch = responses[y - 2 : y + 3, x - 2 : x + 3]
            for f, (lo, hi) in enumerate(RANGES):
                values = np.clip(patch[..., f], lo, np.nextafter(hi, lo, dtype=np.float32))
                ref, _ = np.histogram(values, bins=6, range=(lo, hi))
                np.testing.assert_allclose(
                    got[i, j, 6 * f : 6 * f + 6], ref / 25 / len(BANK_FILTERS), atol=1e-6
                )


def test_gradient_scales_are_local_fskdes_of_gaussian_derivatives(rng):
    """Each gradient scale's "fskde" planes are the density of xfskde.local_fskde with
    gradient="gaussian" at that σ (0: the paper's central differences); projections of every
    group, the bank included, equal the features times the vectors."""
    image = rng.random((80, 84, 3)).astype(np.float32)
    spec = FeatureSpec(features=("color", "bank", "fskde"), size=2.5, n_coefficients=5,
                       gradient_scales=(0, 1.5), bank_ranges=RANGES)  # fmt: skip
    _, rows, cols = _interior(image, spec, 3)
    got = grid_features(image, spec, rows, cols)
    assert got["fskde"].shape[-1] == 2 * 9
    theta = np.linspace(-np.pi, np.pi, 9, endpoint=False) + np.pi / 9
    for i, scale in enumerate((0, 1.5)):
        op = {"gradient": "gaussian", "gradient_scale": scale} if scale else {}
        F = xfskde.local_fskde(image, order=spec.kernel, window="gaussian", size=2.5,
                               channel_axis=-1, **op)  # fmt: skip
        expected = xfskde.evaluate(F, theta)[rows][:, cols] * 2 * np.pi / 9
        np.testing.assert_allclose(got["fskde"][..., 9 * i : 9 * i + 9], expected, atol=2e-6)
    X = np.concatenate([got[k] for k in spec.features], axis=-1)
    E = rng.random((3, X.shape[-1]))
    sizes = {k: got[k].shape[-1] for k in spec.features}
    starts = np.cumsum([0, *sizes.values()])
    tables = {k: E[:, a:b].T for k, a, b in zip(sizes, starts[:-1], starts[1:], strict=True)}
    projected = grid_projections(image, spec, tables, rows, cols)
    np.testing.assert_allclose(projected, X @ E.T, rtol=1e-5, atol=1e-5)


def test_feature_spec_refusals():
    with pytest.raises(ValueError, match="bank_ranges"):
        FeatureSpec(features=("bank",))
    with pytest.raises(ValueError, match="gradient_scales"):
        FeatureSpec(gradient_scales=(-1,))
    with pytest.raises(ValueError, match="bank_ranges"):
        FeatureSpec(features=("bank",), bank_ranges=((0, 1),))
    spec = FeatureSpec(features=("fskde",), gradient_scales=(1, 4), size=3)
    assert feature_depth(spec) == 12 + 16  # the window's radius and the σ = 4 derivative's


def test_texture_scale_of_smoothed_noise(rng):
    """White noise smoothed by a Gaussian of σ has autocorrelation exp(-r² / 4σ²): 1/e at 2σ."""
    for sigma in (2.0, 4.0):
        tiles = [ndi.gaussian_filter(rng.standard_normal((128, 128)), sigma) for _ in range(8)]
        assert texture_scale(tiles) == pytest.approx(2 * sigma, rel=0.12)
    tiles[0][:40, :40] = np.nan  # missing pixels are left out of the pairs
    assert texture_scale(tiles[:1]) == pytest.approx(8, rel=0.15)
    # and so are the offsets they leave without pairs: strips of 6 rows present measured 6.1
    # of 32 (its rings' offsets 6 rows apart or more counted as 0)
    strips = [ndi.gaussian_filter(rng.standard_normal((128, 128)), 4.0) for _ in range(32)]
    for strip in strips:
        strip[6:] = np.nan
    assert texture_scale(strips) == pytest.approx(8, rel=0.12)  # as whole tiles; it was 6.1
    assert texture_scale([np.ones((64, 64))]) == 1.0  # nothing to measure


def test_region_scale_grows_with_the_regions(rng):
    """Features constant over square regions of side B (plus noise) stay alike over about the
    regions' size: R grows in proportion to B; the window is bounded by R / 5."""
    scales = []
    for side in (8, 16, 32):
        n = 256 // side
        values = rng.random((n, n, 5))
        noise = 0.01 * rng.standard_normal((256, 256, 5))
        field = np.kron(values, np.ones((side, side, 1))) + noise
        scales.append(region_scale(field[::2, ::2], 2.0))
    assert 0.3 * 8 < scales[0] < 8 and scales[1] == pytest.approx(2 * scales[0], rel=0.25)
    assert scales[2] == pytest.approx(4 * scales[0], rel=0.25)
    field[40:60, 40:60] = np.nan  # absent samples are left out
    assert region_scale(field[::2, ::2], 2.0) == pytest.approx(scales[2], rel=0.1)
    assert bounded_window(30.0, 100.0) == 20.0 and bounded_window(30.0, 400.0) == 30.0
    assert bounded_window(30.0, 10.0) == 6.0


def test_window_and_stride_rules():
    assert scale_window(0.5, (4096, 4096)) == 8.0  # at least 8
    assert scale_window(5.0, (4096, 4096)) == 40.0  # 8 λ
    assert scale_window(50.0, (600, 900)) == 50.0  # at most min(H, W) / 12
    assert scale_window(50.0, (40, 40)) == 6.0  # never below the paper's
    assert [auto_stride(s) for s in (1, 6, 12, 40)] == [1, 2, 3, 10]
    assert auto_features(1) == ("bank", "lbp", "fskde") and auto_features(3)[0] == "color"
    assert auto_features(2) == auto_features(3)  # two fluorescence channels are colour too
    from xfskde.windows import Window

    spreads = [Window(k, n).sigma for k, n in (("gaussian", 6.0), ("box", 13), ("disk", 8.0))]
    assert spreads == pytest.approx([6.0, 13 / np.sqrt(12), 4.0])


def test_stable_fit_finds_pure_textures_where_kmeans_splits_the_mixtures(rng):
    """Three pure feature vectors and many mixtures of two of them (pixels on boundaries, whose
    features change across them): the stable fit recovers the pure vectors, k-means on every
    sample has two centres pulled into the mixtures."""
    pure = np.eye(3) * 4 + 1
    n_pure, n_mixed = 1500, 1200
    labels = rng.integers(0, 3, n_pure)
    X_pure = pure[labels] + 0.05 * rng.standard_normal((n_pure, 3))
    t = rng.random(n_mixed)[:, None]
    X_mixed = t * pure[0] + (1 - t) * pure[1] + 0.05 * rng.standard_normal((n_mixed, 3))
    X = np.concatenate([X_pure, X_mixed])
    change = np.concatenate([rng.random(n_pure) * 0.1, 1 + rng.random(n_mixed)])
    stable = fit_stable_endmembers(X, change, 3, seed=0)
    error = np.abs(stable[:, None] - pure[None]).sum(-1).min(axis=0)
    assert error.max() < 0.1
    plain = fit_endmembers(X, 3, method="kmeans", seed=0)
    assert np.abs(plain[:, None] - pure[None]).sum(-1).min(axis=0).max() > 0.5
    np.testing.assert_array_equal(stable, fit_stable_endmembers(X, change, 3, seed=0))


def test_segment_with_no_arguments_records_its_choices():
    """segment(image, n) on colour textures: every choice in the attrs, good labels."""
    image, truth = random_textures((256, 256), seed=100)
    arr = xr.DataArray(image, dims=("y", "x", "c"))
    labels = segment(arr, 3)
    a = labels.attrs
    # colour alone tells these textures apart: the labels of neither of the window check's
    # fits need the bank or the FS-KDE (idle_groups), so the fit computes colour only
    assert a["features"] == "color" and a["gradient_scales"] == [0.0]
    # what the method unmixed: colour only (it said "with cos^2K FS-KDE features" whatever)
    assert a["method"] == "ORTSEG (occlusion of random textures) unmixing local colour histograms"
    assert a["chose_groups"] == (
        "bank, fskde left out before the fit: the labels of neither of the window check's fits "
        "(sigma 6 and 12) needed them; then color kept"
    )
    assert "bank_filters" not in a and "bank_ranges" not in a and a["fit_channels"] == 3
    assert a["chose_size"].startswith("sigma 6: labels at sigma 6 and 12 agree")
    assert a["chose_size_agreement"] >= 0.9 and a["chose_texture_scale_px"] > 0
    assert 1.0 <= a["chose_size_boundaries"] <= BOUNDARY_RATIO
    assert a["stride"] == auto_stride(a["size"])
    assert a["chose_fit"].startswith("stable" if a["size"] > 6 else "kmeans")
    # the automatic weights (1, 1, 0.5) times min(1, S/N)² of the recorded S/N
    signals = dict(part.split() for part in a["chose_signal"][4:].split(":")[0].split(", "))
    assert list(signals) == ["color"]  # the groups the fit computed
    for name, base in (("color", 1.0),):
        factor = min(1.0, float(signals[name])) ** 2
        assert a[f"weight_{name}"] == pytest.approx(base * factor, rel=0.03, abs=1e-4)
    assert a["weight_color"] == 1.0  # colour tells these textures apart: S/N above 1
    assert rand_index(truth, labels.values) > 0.95  # measured 0.972


def test_the_fskde_weighs_a_fifth_of_the_automatic_groups():
    """0.5 beside the bank and the local binary patterns (grey), 0.5 beside the bank and
    colour: a fifth of the sum either way; weights given explicitly replace it."""
    for channels, expected in [(1, 0.5), (3, 0.5)]:
        features = auto_features(channels)
        w = auto_weights(features)
        assert w["fskde"] == expected
        assert w["fskde"] / sum(w[name] for name in features) == pytest.approx(FSKDE_SHARE)
    image, _ = random_textures((96, 96), seed=1)
    model = fit_textures(image, 3, size=6, weights={"fskde": 1.0})
    assert model.weights == {"color": 1.0, "bank": 1.0, "fskde": 1.0}


def test_group_signal_is_the_spread_between_textures_over_the_noise(rng):
    """Two equal textures' features δ apart with noise of variance v per feature, and changes
    measured as the rule assumes (two differences of independent draws): S / N = δ² / 4 over
    D v; a group whose textures do not differ scores about 0."""
    n, D, v = 20000, 12, 0.01
    noise = lambda: rng.normal(0, np.sqrt(v), (n, D))  # noqa: E731
    change = np.linalg.norm(noise() - noise(), axis=1) + np.linalg.norm(noise() - noise(), axis=1)
    label = rng.integers(0, 2, n)
    delta = np.zeros(D)
    delta[:3] = 0.4  # |δ|² = 0.48
    features = label[:, None] * delta + noise()
    expected = 0.48 / 4 / (D * v)
    assert group_signal(features, change) == pytest.approx(expected, rel=0.1)
    assert group_signal(noise(), change) < 0.05


def test_signal_weights_only_weigh_noisy_groups_down():
    weights = {"color": 1.0, "bank": 1.0, "fskde": 0.5}
    got = signal_weights(weights, {"color": 0.4, "bank": 2.0, "fskde": 14.0})
    assert got == {"color": pytest.approx(0.16), "bank": 1.0, "fskde": 0.5}
    assert signal_weights(weights, {}) == weights
    # relative to the most telling group; a sample in which no group tells anything keeps them
    got = signal_weights(weights, {"color": 0.25, "bank": 0.5, "fskde": 0.0})
    assert got == {"color": pytest.approx(0.25), "bank": 1.0, "fskde": 0.0}
    assert signal_weights(weights, {"color": 0.0, "bank": 0.0, "fskde": 0.0}) == weights


def test_a_tiny_image_whose_sample_tells_nothing_keeps_its_weights():
    """On a 20 × 23 image every window sees nearly the whole image: no group's S / N is above
    0, and weighing them all to zero would leave one label; the weights are kept."""
    image, _ = random_textures((256, 256), seed=100)
    labels, model = segment(image[:20, :23], 3, return_model=True)
    assert model.weights == {"color": 1.0, "bank": 1.0, "fskde": 0.5}
    assert len(np.unique(np.asarray(labels))) == 3


def test_an_image_of_a_few_rows_is_segmented_as_its_dims_say(tmp_path):
    """A 3 × 500 RGB image (a DataArray of dims y, x, c; a TIFF of axes YXS) was refused deep
    in the window check, whose crop is a NumPy array, as one whose channels might come first,
    with advice to pass what had been passed."""
    import tifffile

    from xfskde.cli import main

    image, _ = random_textures((256, 256), seed=100)
    strip = xr.DataArray(image[100:103, :500], dims=("y", "x", "c"))
    labels = segment(strip, 2)
    assert labels.shape == (3, 256) and len(np.unique(labels.values)) == 2
    tifffile.imwrite(tmp_path / "strip.tif", (image[:7, :3] * 255).astype(np.uint8),
                     photometric="rgb")  # fmt: skip
    out = tmp_path / "labels.zarr"
    assert main(["segment", str(tmp_path / "strip.tif"), str(out), "--textures", "2"]) == 0


def test_colour_that_only_adds_noise_is_weighed_down():
    """Colour dead leaves whose largest texture k-means split along the bars' colours (seed
    104: Rand 0.70 before the rule): the colour group's S / N is below 1, its weight falls,
    the choice is recorded, and the textures are found; weights given are kept as given."""
    image, truth = dead_leaves((256, 256), seed=104, bar_length=16)
    labels, model = segment(image, 3, return_model=True)
    assert model.fit_method == "stable"
    assert model.choices["signal"].startswith("S/N color 0.")
    # colour (S / N 0.48) weighed down and counted a quarter in how steady a sample is, then
    # moving 0.08 % of the sample's labels: left out; the bank (0.68) moves 0.21 %: kept
    # (before the steadiness counted each group so: colour kept at 0.14 %, the bank left out)
    assert model.spec.features == ("bank", "fskde") and model.weights["bank"] < 0.6
    assert model.choices["groups"].startswith("bank, fskde: color left out")
    assert model.weights["fskde"] == 0.5  # its S / N is far above 1
    assert rand_index(truth, np.asarray(labels)) > 0.95  # measured 0.988
    given = fit_textures(image, 3, weights={"color": 1.0})
    assert given.weights == {"color": 1.0, "bank": 1.0, "fskde": 0.5}
    assert "signal" not in given.choices


def test_a_group_that_is_noise_does_not_decide_which_samples_are_steady():
    """Grey random textures (discs of flat grey under noise): the local binary patterns' codes
    are the noise's (S / N 0.49 at seed 104); counted fully in how steady each sample is, they
    made the steady samples a random draw, the grey levels' S / N fell below 5 x the bank's
    (they are what tells these discs apart: left out) and Rand to 0.770. Each group
    now counts as its weight is scaled, min(1, S / N)²; the steady samples and the S / N are
    measured again."""
    image, truth = random_textures((512, 512), seed=104)
    labels, model = segment(image.mean(axis=-1), 3, return_model=True)
    steady = model.choices["steady"].split(":")[0].removeprefix("samples steady in ")
    counts = dict(part.split(" x ") for part in steady.split(", "))
    assert set(counts) == {"bank", "lbp", "fskde"} and float(counts["lbp"]) < 0.5
    assert model.choices["grey_levels"].startswith("kept")
    assert rand_index(truth, np.asarray(labels)) > 0.9  # measured 0.914; 0.770 before
    # every group above S / N 1 (a mosaic of real textures): every group counts fully
    mosaic = segment(texture_mosaic((256, 256), seed=3)[0], 3, return_model=True)[1]
    assert "steady" not in mosaic.choices and "signal" in mosaic.choices


def test_how_steady_a_sample_is_sums_the_groups_counted():
    """_change: ‖ΔF_y‖ + ‖ΔF_x‖ over the features of the groups counted, each group's squared
    differences times its count."""
    from xfskde.segmentation.model import _change

    rng = np.random.default_rng(0)
    dy, dx = rng.random((5, 3, 4)), rng.random((5, 3, 4))  # 5 samples, 3 groups of 4 features
    squares = np.stack([(dy**2).sum(axis=-1), (dx**2).sum(axis=-1)], axis=-1)
    whole = np.linalg.norm(dy.reshape(5, -1), axis=1) + np.linalg.norm(dx.reshape(5, -1), axis=1)
    np.testing.assert_allclose(_change(squares, {"a": 1.0, "b": 1.0, "c": 1.0}), whole)
    two = np.linalg.norm(dy[:, ::2].reshape(5, -1), axis=1)
    two += np.linalg.norm(dx[:, ::2].reshape(5, -1), axis=1)
    np.testing.assert_allclose(_change(squares, {"a": 1.0, "b": 0.0, "c": 1.0}), two)
    quarter = np.sqrt((dy[:, 0] ** 2).sum(-1) / 4 + (dy[:, 1:] ** 2).sum((1, 2)))
    quarter += np.sqrt((dx[:, 0] ** 2).sum(-1) / 4 + (dx[:, 1:] ** 2).sum((1, 2)))
    np.testing.assert_allclose(_change(squares, {"a": 0.25, "b": 1.0, "c": 1.0}), quarter)


def test_a_group_the_labels_do_not_need_is_left_out():
    """idle_groups: a group whose endmember features are the same for every texture adds the
    same cost to every mixture (no label changes without it); one that alone tells two of
    the textures apart is kept; one group always stays."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 3000)
    first = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # texture 0 against 1 and 2
    second = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # 0 and 1 against 2
    E = np.concatenate([first, second, np.full((3, 4), 0.2)], axis=1)
    X = E[truth] + 0.1 * rng.standard_normal((3000, 8))
    groups = {"a": slice(0, 2), "b": slice(2, 4), "c": slice(4, 8)}
    dropped, changed = idle_groups(X, E, None, groups)
    assert dropped == ["c"] and changed["c"] == 0.0  # exactly: a constant cost
    assert changed["a"] > 0.1 and changed["b"] > 0.1 > IDLE_SHARE
    # the within-texture metric's unmixing vectors are what the samples are projected on
    M = np.diag([1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0])
    assert idle_groups(X, E, E @ M, groups)[0] == ["c"]
    only = {"a": slice(0, 4)}
    assert idle_groups(X[:, :4], E[:, :4], None, only) == ([], {})  # the last group stays
    loose = idle_groups(X, E, None, groups, share=1.0)[0]
    assert len(loose) == 2  # any share: one group kept
    assert IDLE_SHARE == 0.001


def test_groups_no_check_fit_needs_are_not_fitted():
    """_with_groups: the fit computes the groups either of the window check's fits kept (in
    stacking order), without the ranges of those left out, and says so; None (no check) or
    every group needed leaves the settings as they were."""
    from xfskde.segmentation.model import _with_groups

    args = {"features": ("color", "bank", "fskde"), "window": "gaussian",
            "bank_ranges": ((0.0, 1.0),) * 16, "color_ranges": ((0.1, 0.9),) * 3}  # fmt: skip
    assert _with_groups(args, None) == (args, None) and _with_groups(args, None)[0] is args
    assert _with_groups(args, ("color", "bank", "fskde"))[0] is args
    assert _with_groups(args, ("color", "bank", "fskde"))[1] is None
    kept, why = _with_groups(args, ("fskde", "color"))
    assert kept["features"] == ("color", "fskde") and kept["window"] == "gaussian"
    assert kept["bank_ranges"] is None and kept["color_ranges"] == args["color_ranges"]
    assert args["features"] == ("color", "bank", "fskde")  # the caller's settings untouched
    assert why == (
        "bank left out before the fit: the labels of neither of the window check's fits "
        "(sigma 6 and 12) needed it"
    )
    assert _with_groups(args, ("bank",))[0]["color_ranges"] is None


def test_groups_are_not_left_out_on_what_a_crop_of_the_image_shows():
    """The window check's crop of a larger image may hold one texture: here the middle one,
    whose colours the right one shares in another orientation. Its fits then need colour
    alone, yet the fit must keep the gradients (measured: the groups the crop's fits needed,
    colour alone, gave Rand 0.679; all fitted, 0.995)."""
    rng = np.random.default_rng(1)
    n = 1024

    def texture(sigma, palette):
        noise = ndi.gaussian_filter(rng.normal(size=(n, n)), sigma)
        level = np.clip(((noise / noise.std() + 2.5) / 5 * 6).astype(int), 0, 5)
        return palette[level]

    grey, colours = rng.random((6, 3)) * 0.6 + 0.2, rng.random((6, 3)) * 0.6 + 0.2
    textures = [texture((3, 3), colours), texture((1, 8), grey), texture((8, 1), grey)]
    x = np.arange(n)[None, :].repeat(n, 0)
    truth = np.where(x < 0.2 * n, 0, np.where(x < 0.78 * n, 1, 2))  # the crop: x 256..767
    image = np.choose(truth[..., None], textures).astype(np.float32)
    model = fit_textures(image, 3)
    assert "before the fit" not in model.choices.get("groups", "")
    assert "fskde" in model.spec.features
    assert rand_index(truth, np.asarray(model.predict(image))) > 0.95  # measured 0.995
    # a mask is no reason not to: outside it the crop is missing pixels, which the check's
    # fits do not sample
    small, truth = random_textures((256, 256), seed=100)
    mask = np.zeros((256, 256), bool)
    mask[:, :200] = True
    assert "before the fit" in fit_textures(small, 3).choices["groups"]
    masked = fit_textures(small, 3, mask=mask)
    assert "before the fit" in masked.choices["groups"]
    labels = np.asarray(masked.predict(small, mask=mask))
    assert (labels[:, 200:] == 0).all()
    assert rand_index(truth[:, :200], labels[:, :200]) > 0.95


def test_segment_leaves_out_the_groups_it_does_not_need(monkeypatch):
    """Random textures at σ = 6: colour tells them apart, the bank and the FS-KDE move
    0.03 % of the labels of the window check's fits' samples: the fit computes colour only,
    and neither does predicting compute the filter bank or the gradients; its labels are
    those of the full model on all but a few pixels; groups given explicitly are all kept."""
    import xfskde.segmentation.model as model_module

    image, truth = random_textures((256, 256), seed=100)
    labels, model = segment(image, 3, return_model=True)
    assert model.spec.features == ("color",) and model.spec.bank_ranges is None
    assert set(model.scales) == set(model.weights) == {"color"}
    assert model.endmembers.shape == (3, 48)
    assert feature_depth(model.spec) == model.spec.window_obj.halo(1)  # no bank's reach
    # the full model: every group fitted, none left out, by the check or the fit
    monkeypatch.setattr(model_module, "idle_groups", lambda *args: ([], {}))
    full = fit_textures(image, 3)
    assert full.spec.features == ("color", "bank", "fskde")
    assert "groups" not in full.choices
    # the same partition (labels may be numbered otherwise): measured 2 px of 65 536 differ
    assert rand_index(full.predict(image), np.asarray(labels)) > 0.9998  # measured 0.99996
    assert rand_index(truth, np.asarray(labels)) > 0.95  # measured 0.972
    given = fit_textures(image, 3, weights=model.weights)  # weights given: all groups kept
    assert given.spec.features == ("color", "bank", "fskde")


def test_a_model_keeps_the_channels_it_was_fitted_on():
    """Dead leaves in colour whose colour the rule leaves out: the model reads no colour
    histogram, yet an image of other channels is refused, as before, and the channels
    survive the attrs."""
    image, _ = dead_leaves((256, 256), seed=104, bar_length=16)
    model = fit_textures(image, 3)
    assert model.channels == 3 and model.attrs()["fit_channels"] == 3
    assert TextureModel.from_attrs(model.attrs()).channels == 3
    grey = TextureModel.from_attrs({**model.attrs(), "fit_channels": "1"})  # GeoTIFF text
    assert grey.channels == 1
    model.predict(image)
    for other in (image[..., :1], image[..., :2]):
        with pytest.raises(xfskde.exceptions.ParameterError, match="channel"):
            model.predict(other)
    older = {k: v for k, v in model.attrs().items() if k != "fit_channels"}
    assert TextureModel.from_attrs(older).channels is None


def test_grey_textures_take_the_window_from_their_scale():
    """A grey mosaic of real textures: no colour group, no σ = 6 check, σ = 8λ."""
    image, truth = texture_mosaic((256, 256), seed=3)
    labels, model = segment(image, 3, return_model=True)
    assert model.spec.features == ("bank", "lbp", "fskde")
    assert model.weights == {"bank": 1.0, "lbp": 1.0, "fskde": 0.5}
    scale, region = model.choices["texture_scale_px"], model.choices["region_scale_px"]
    expected = bounded_window(scale_window(scale, (256, 256)), region)
    assert model.fit_size == expected > 6  # the fit's window; the labels' is narrower
    assert model.spec.size == label_window(expected)
    assert "(crop 256x256 px)" in model.choices["size"]  # the image, not the 512 px asked
    assert "size_agreement" not in model.choices
    # measured 0.887 (0.928 with metric="euclidean": this image is one the within-texture
    # metric loses on; the 30 held-out 256² mosaics gain, 0.832 -> 0.845)
    assert model.metric == "within" and rand_index(truth, labels) > 0.85


def test_chroma_ratio_is_the_colour_beyond_an_affine_function_of_grey():
    g = np.array([[1.0, -1.0], [1.0, -1.0]])  # grey: mean 0, standard deviation 1
    a = np.array([[1.0, 1.0], [-1.0, -1.0]])  # colour orthogonal to it, root mean square 1
    coloured = 0.5 + 0.1 * np.stack([g + a, g - a, g], axis=-1)
    assert chroma_ratio([coloured]) == pytest.approx(np.sqrt(2.0))  # residuals a, -a, 0
    grey = np.repeat((0.5 + 0.1 * g)[..., None], 3, axis=-1)
    assert chroma_ratio([grey]) == pytest.approx(0.0, abs=1e-12)
    ramp = 0.2 + (0.5 + 0.1 * g)[..., None] * np.array([0.1, 0.9, 0.3])  # a linear colour map
    assert chroma_ratio([ramp]) == pytest.approx(0.0, abs=1e-12)
    with_hole = np.concatenate([coloured, np.full((2, 2, 3), np.nan)])
    assert chroma_ratio([with_hole]) == pytest.approx(np.sqrt(2.0))  # absent pixels left out
    assert chroma_ratio([np.full((4, 4, 3), 0.3)]) == 0.0
    flat_colour = np.full((4, 4, 3), 0.3) + np.array([0.0, 0.1, 0.0])
    assert chroma_ratio([flat_colour]) == 0.0  # one colour: nothing to tell apart
    isoluminant = np.stack([0.5 + 0.1 * a, 0.5 - 0.1 * a, np.full_like(a, 0.5)], axis=-1)
    assert chroma_ratio([isoluminant]) == np.inf  # the grey is flat, the colours are not
    assert chroma_ratio([np.zeros((4, 4, 1))]) == 0.0  # no colour channels
    # at any scale: an int64 image of 0-255 is divided by 2^63 - 1 (values near 1e-17), and
    # was taken for a flat grey (random textures 0.971 as uint8, 0.791 as int64)
    tiny = 1e-17
    assert chroma_ratio([coloured * tiny]) == pytest.approx(np.sqrt(2.0))
    assert chroma_ratio([flat_colour * tiny]) == 0.0


def test_a_grey_image_in_colour_channels_is_segmented_as_grey():
    """A grey mosaic stored as RGB, and shown through a linear colour map: the same features
    and labels as the grey image, the choice recorded (as RGB with its colour histograms this
    mosaic scored 0.74)."""
    grey, truth = texture_mosaic((256, 256), seed=3)
    labels, model = segment(grey, 3, return_model=True)
    for rgb in (np.repeat(grey[..., None], 3, axis=-1), 0.1 + grey[..., None] * [0.8, 0.3, 0.6]):
        got, as_rgb = segment(rgb.astype(np.float32), 3, return_model=True)
        assert as_rgb.spec.features == ("bank", "lbp", "fskde") == model.spec.features
        assert as_rgb.weights == model.weights
        assert as_rgb.choices["features"].startswith("bank, lbp, fskde: the image is grey in 3")
        assert rand_index(np.asarray(got), labels) > 0.99
    assert rand_index(truth, labels) > 0.85  # 0.887, as in the test above
    # colour weighted by the caller is kept
    kept = fit_textures(np.repeat(grey[..., None], 3, axis=-1), 3, weights={"color": 1.0})
    assert kept.spec.features == ("color", "bank", "fskde") and "features" not in kept.choices
    assert GREY_CHROMA < 0.2  # below every colour image measured (H&E tiles from 0.21)


def test_boundary_share_counts_pixels_next_to_another_label():
    half = np.zeros((10, 10), dtype=np.uint8)
    half[:, 5:] = 1
    assert boundary_share(half) == pytest.approx(9 / 81)  # one column of the 9 x 9 compared
    checker = np.indices((6, 6)).sum(axis=0) % 2
    assert boundary_share(checker) == 1.0
    assert boundary_share(np.ones((5, 5))) == 0.0 and boundary_share(np.ones((1, 5))) == 0.0
    # only the pixels present count, each against its neighbours present
    present = np.ones((10, 10), bool)
    present[:, 7:] = False  # the edge at column 7 is no boundary drawn
    edged = half.copy()
    edged[:, 7:] = 0
    assert boundary_share(edged, present) == pytest.approx(9 / 63)
    assert boundary_share(edged, np.ones((10, 10), bool)) == boundary_share(edged)
    assert boundary_share(edged, np.zeros((10, 10), bool)) == 0.0


def test_a_fine_window_that_follows_the_elements_is_widened():
    """Colour textures whose σ = 6 labels agree with σ = 12's (Rand >= 0.9) but draw many
    more boundaries, around the textures' elements, take the wider window of the rule: a grey
    mosaic through a curved two-stain colour map (colour beyond grey 0.2, like H&E's), where
    σ = 6 scored 0.716 and the wider window scores 0.778."""
    grey, truth = texture_mosaic((256, 256), seed=7)
    v = grey[..., None]
    stained = (1 - v) ** 2 * [0.3, 0.1, 0.45] + 2 * v * (1 - v) * [0.85, 0.35, 0.6]
    stained = (stained + v**2 * [0.95, 0.85, 0.92]).astype(np.float32)
    assert chroma_ratio([stained]) > GREY_CHROMA
    labels, model = segment(stained, 3, return_model=True)
    c = model.choices
    assert c["size_agreement"] >= 0.9 and c["size_boundaries"] > BOUNDARY_RATIO
    assert model.spec.size > 6 and "times the boundaries" in c["size"]
    assert rand_index(truth, np.asarray(labels)) > 0.75


def test_two_sections_far_apart_are_segmented():
    """Serial sections side by side on one slide: the window check's crop was centred on the
    foreground's centre of mass, on the glass between them, and segment failed with "only 0
    pixels could be sampled". The crop is now the one that holds the most tissue."""
    texture, truth = random_textures((384, 1536), seed=3)
    yy, xx = np.mgrid[0:384, 0:1536]
    tissue = ((yy - 192) ** 2 + (xx - 200) ** 2 < 170**2) | (
        (yy - 192) ** 2 + (xx - 1336) ** 2 < 170**2
    )
    rng = np.random.default_rng(0)
    glass = (np.array([236, 234, 238]) + rng.normal(0, 3, (384, 1536, 3))) / 255
    slide = np.where(tissue[..., None], texture, glass).astype(np.float32)
    labels = np.asarray(segment(slide, 3, mask=tissue))
    assert (labels[~tissue] == 0).all() and (labels[tissue] > 0).all()
    assert rand_index(truth[tissue], labels[tissue]) > 0.95


def test_data_in_a_corner_of_an_image_otherwise_missing_are_segmented():
    """A scene whose data lie in one corner, the rest nodata, and no mask: the window check's
    central crop held no pixel ("only 0 pixels could be sampled"); it is now taken where the
    image holds the most."""
    texture, truth = random_textures((256, 256), seed=2)
    image = np.full((1536, 1536, 3), np.nan, np.float32)
    image[:256, :256] = texture
    labels = np.asarray(segment(image, 3))
    assert (labels[256:] == 0).all() and (labels[:256, 256:] == 0).all()
    assert rand_index(truth, labels[:256, :256]) > 0.9  # 0.944


def test_the_window_check_compares_the_labels_of_the_foreground_only():
    """Outside a mask both of the window check's fits label the background, which counted as
    agreement and drew the mask's edge as a boundary of both, pulling the ratio of their
    boundaries towards 1: the colour mosaic above, centred on glass twice its side, had its
    fine window kept (agreement 0.996, boundaries 1.33 times) where alone it is widened (0.906,
    1.80). On the foreground only the check finds what it finds on the tissue alone (0.936,
    1.71: the fits' samples lie elsewhere)."""
    grey, _ = texture_mosaic((256, 256), seed=7)
    v = grey[..., None]
    stained = (1 - v) ** 2 * [0.3, 0.1, 0.45] + 2 * v * (1 - v) * [0.85, 0.35, 0.6]
    stained = (stained + v**2 * [0.95, 0.85, 0.92]).astype(np.float32)
    alone = fit_textures(stained, 3).choices
    rng = np.random.default_rng(0)
    slide = (0.92 + 0.01 * rng.standard_normal((512, 512, 1))).repeat(3, axis=-1)
    slide = slide.astype(np.float32)
    slide[128:384, 128:384] = stained
    mask = np.zeros((512, 512), bool)
    mask[128:384, 128:384] = True
    model = fit_textures(slide, 3, mask=mask)
    on_glass = model.choices
    assert model.spec.size > FINE_SIZE  # widened, as alone
    assert abs(on_glass["size_agreement"] - alone["size_agreement"]) < 0.05
    assert abs(on_glass["size_boundaries"] - alone["size_boundaries"]) < 0.1


def test_a_patch_among_missing_pixels_is_measured_as_the_patch_alone():
    """A 128² patch of random textures in a 768² image otherwise NaN. Every automatic choice
    was made on the missing pixels too: the probe tiles held 9 % of the patch in one tile of
    16 (texture scale 3.9 px, alone 6.9), the window check counted the NaN both its fits
    label BACKGROUND as agreement (0.999, alone 0.728), the window's bound was 1/12 of the
    image's side, not of the patch's, and the region scale read the zero features of the
    missing samples as one wide region (76 px, alone 20). Each is now measured on the patch,
    and so are the levels a prediction compares with the model's (the black level was 0.068
    where the model's is 0.077)."""
    texture, _ = random_textures((128, 128), seed=2)
    patch = np.full((768, 768, 3), np.nan, np.float32)
    patch[500:628, 300:428] = texture
    alone = fit_textures(texture, 3)
    among = fit_textures(patch, 3)
    a, b = alone.choices, among.choices
    assert b["texture_scale_px"] == pytest.approx(a["texture_scale_px"], rel=0.15)
    assert b["size_agreement"] == pytest.approx(a["size_agreement"], abs=0.05)
    assert b["size_boundaries"] == pytest.approx(a["size_boundaries"], abs=0.1)
    assert b["region_scale_px"] == pytest.approx(a["region_scale_px"], rel=0.15)
    assert among.spec.size == alone.spec.size
    assert "the foreground's extent 128x128 px / 12 = 10.7" in b["size"]
    # and the levels a prediction checks the image against are measured as the fit's were
    from xfskde.segmentation.model import _image_levels, _prepare

    levels = _image_levels(_prepare(patch, None, 8).unit, None)
    assert levels == pytest.approx(alone.value_range, abs=0.005)


def test_the_foreground_extent_is_the_mask_or_the_pixels_present_in_memory():
    import dask.array as da

    from xfskde.segmentation.model import _extent, _prepare

    image = np.zeros((300, 200, 3), np.float32)
    image[50:150, 20:60] = np.nan
    mask = np.zeros((30, 20), bool)  # a mask pixel covers 10 x 10 image pixels
    mask[3:9, 2:4] = True
    assert _extent(_prepare(image, None, 8), mask) == (60, 20)
    image[:] = np.nan
    image[100:133, 10:190] = 0.5
    assert _extent(_prepare(image, None, 8), None) == (33, 180)
    as_array = xr.DataArray(image, dims=("y", "x", "c"))
    assert _extent(_prepare(as_array, None, 8), None) == (33, 180)
    # on disk (Dask): finding the missing pixels would read the image whole
    assert _extent(_prepare(da.from_array(image, chunks=100), None, 8), None) == (300, 200)
    whole = np.zeros((300, 200, 3), np.uint8)  # integers without nodata: all present
    assert _extent(_prepare(whole, None, 8), None) == (300, 200)


def test_a_large_image_is_fitted_on_a_tile_of_each_drawn_block(monkeypatch):
    """Above 16 tiles' worth of pixels the fit computes the features of one random tile (512²,
    ``FIT_TILE``: here 128²) with its halo of each block it draws, not of the whole block."""
    import xfskde.segmentation.model as model_module

    block = ((100, 130), (200, 240))  # a 30 x 40 block: its whole interior
    assert model_module._fit_tile(*block, seed=3) == block
    monkeypatch.setattr(model_module, "FIT_TILE", 16)
    (top, bottom), (left, right) = model_module._fit_tile(*block, seed=3)
    assert bottom - top == 16 == right - left and 100 <= top <= 114 and 200 <= left <= 224
    assert model_module._fit_tile(*block, seed=3) == ((top, bottom), (left, right))
    monkeypatch.setattr(model_module, "FIT_TILE", 128)
    seen = []
    sample_block = model_module._sample_block

    def recorded(block, *args, **kwargs):
        seen.append(block.shape)
        return sample_block(block, *args, **kwargs)

    monkeypatch.setattr(model_module, "_sample_block", recorded)
    image, truth = random_textures((640, 640), seed=100)  # 16 x 128² < 640²: tiled
    labels, fitted = segment(image, 3, size=6, chunks=320, return_model=True)
    measured = dataclasses.replace(
        fitted.spec, features=("color", "bank", "fskde"), bank_ranges=((0.0, 1.0),) * 16
    )  # the groups the fit read
    halo = feature_depth(measured) + model_module._shift(measured, fitted.fit_method, True)
    assert len(seen) == 4 and all(shape[:2] == (128 + 2 * halo,) * 2 for shape in seen)
    assert rand_index(truth, np.asarray(labels)) > 0.95


def test_an_image_of_up_to_16_cells_is_fitted_on_every_cell_whole(monkeypatch):
    """The fit reads the whole of an image of at most 16 cells of 512² (2048² and smaller),
    whatever the seed: with one random 256² tile of each cell (until 2026-11-30) a 1536²
    image was read a random quarter at a time, and the 30 held-out mosaics at 1536² scored
    0.947 / 0.939 / 0.926 at seeds 0-2 (one mosaic 0.981 / 0.868 / 0.819), whole cells
    0.949 / 0.949 / 0.947."""
    import xfskde.segmentation.model as model_module

    read = {}
    map_regions = model_module.map_regions

    def recorded(function, image, regions, **kwargs):
        if kwargs["name"] == "xfskde-segment-sample":
            read.setdefault(kwargs["token"][1], []).append(sorted(regions))
        return map_regions(function, image, regions, **kwargs)

    monkeypatch.setattr(model_module, "map_regions", recorded)
    image, _ = dead_leaves((1100, 1100), seed=2)  # 9 cells; > 16 x 256² px: tiled before
    for seed in (0, 1):
        fit_textures(image, 3, size=6, features=("color",), seed=seed, method="kmeans")
    assert read[0] == read[1]  # the same regions at both seeds
    (regions,) = read[0]
    covered = np.zeros(image.shape[:2], bool)
    for (top, bottom), (left, right) in regions:
        covered[top:bottom, left:right] = True
    assert len(regions) == 9 and covered.all()


def test_the_window_check_fits_on_tiles_across_an_image_larger_than_its_crop(monkeypatch):
    """Random textures of 1024² (held-out seed 205) whose central 512² crop holds two of the
    three textures: both of the check's 3-texture fits on the crop split one of them, their
    labels disagreed (Rand 0.820), and the window was widened to σ 85 (Rand 0.924). The fits
    now draw their sample from a tile of each cell of the image (4 tiles of 256², as many
    pixels as the crop), and their labels, compared on the crop, agree: σ 6 (0.994)."""
    import xfskde.segmentation.model as model_module

    read = []
    map_regions = model_module.map_regions

    def recorded(function, image, regions, **kwargs):
        if kwargs["name"] == "xfskde-segment-sample":
            read.append(sorted(regions))
        return map_regions(function, image, regions, **kwargs)

    monkeypatch.setattr(model_module, "map_regions", recorded)
    image, truth = random_textures((1024, 1024), seed=205)
    assert len(np.unique(truth[256:768, 256:768])) == 3  # but one at 0.5 % of the crop
    labels, model = segment(image, 3, return_model=True)
    assert model.choices["size"].startswith("sigma 6: labels at sigma 6 and 12 (fitted on tiles")
    assert model.choices["size_agreement"] > 0.98  # 0.990
    assert rand_index(truth, np.asarray(labels)) > 0.98
    # the check's two fits: four 256² tiles each, one in each 512² cell
    checks = [regions for regions in read if len(regions) == 4 and all(
        (r[1] - r[0], c[1] - c[0]) == (256, 256) for r, c in regions)]  # fmt: skip
    assert len(checks) == 2
    for regions in checks:
        cells = {(r[0] // 512, c[0] // 512) for r, c in regions}
        assert cells == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_the_check_tiles_lie_where_each_quadrant_holds_the_most():
    """Where the crop misses pixels each quadrant's tile lies where it holds the most of the
    foreground, and a quadrant holding none is not read: the tiles of the others share the
    crop's pixels."""
    from xfskde.segmentation.model import _fit_tile, _placed_tiles

    present = np.zeros((100, 100), bool)  # a 1000² image, mapped 10 px a cell
    present[10:30, 10:30] = True  # in the first quadrant only, about (200, 200)
    present[60:100, 70:100] = True  # the last, its lower right part
    quadrants = ((500, 500), (500, 500))
    centres = _placed_tiles(present, (1000, 1000), quadrants, read=2 * 200**2)
    assert set(centres) == {(0, 0), (1, 1)}  # two quadrants: tiles of 200²
    assert all(abs(c - 200) <= 10 for c in centres[(0, 0)])
    (top, bottom), (left, right) = _fit_tile((500, 1000), (500, 1000), 0, 200, centres[(1, 1)])
    assert (bottom - top, right - left) == (200, 200)  # within its quadrant
    assert present[top // 10 : bottom // 10, left // 10 : right // 10].all()  # all data


def test_the_window_check_tiles_find_a_patch_of_data_among_missing_pixels():
    """A 256² patch of texture in a 1536² image of missing pixels: the check's tiles are
    placed where the data is (random ones would miss it), in the one quadrant holding it."""
    texture, _ = random_textures((256, 256), seed=2)
    image = np.full((1536, 1536, 3), np.nan, np.float32)
    image[:256, :256] = texture
    model = fit_textures(image, 3)
    assert "fitted on tiles" in model.choices["size"]
    assert model.choices["size_agreement"] > 0.9


def test_the_window_check_tiles_cover_what_a_masked_crop_misses():
    """Random textures of 1024² (held-out seed 205) with a corner of missing data that the
    central crop reaches: the crop was kept, its two textures split by both fits alike, they
    disagreed (Rand 0.82) and the window went to σ 35 (Rand 0.930 on the pixels present).
    Tiles placed where each quadrant holds data see the three textures: σ 6 (0.994)."""
    image, truth = random_textures((1024, 1024), seed=205)
    image = image.astype(np.float32)
    image[:300, 700:] = np.nan
    labels, model = segment(image, 3, return_model=True)
    assert "fitted on tiles" in model.choices["size"]
    assert model.choices["size"].startswith("sigma 6")
    present = np.isfinite(image[..., 0])
    assert rand_index(truth[present], np.asarray(labels)[present]) > 0.98


def test_the_region_scale_is_measured_where_regions_meet():
    """A 1024² mosaic whose central 512² crop lies in one region: there the features
    decorrelate within the window itself (R = 71 px, 2.2σ), which bounded σ to 14 (Rand
    0.766); a crop of twice the side is measured instead, and σ = 8λ stays (0.884)."""
    image, truth = texture_mosaic((1024, 1024), layout="stripes", transform="both", seed=1000)
    labels, model = segment(image, 3, return_model=True)
    sigma = model.fit_size * model.resolution
    assert model.choices["region_scale_px"] >= REGION_FLOOR * sigma
    assert sigma > 30 and "bounded" not in model.choices["size"]
    assert rand_index(truth, np.asarray(labels)) > 0.85


def test_a_crop_holding_parts_of_few_regions_is_measured_wider():
    """A held-out 1024² blob mosaic (blobs-both-s1000) whose central crop of 516² reads a
    region scale of 2.51 σ — above the window's own 2.5 σ, but the crop holds only parts of a
    few regions: it bounded σ 32.3 to 16.2 (Rand 0.945). Below REGION_WIDER (3 σ) the crop of
    twice the side, here the whole image, is measured: the regions are wide, and σ = 8λ stays
    (0.969)."""
    (_, image, truth) = texture_mosaic_set(
        "held_out", (1024, 1024), layouts=("blobs",), transforms=("both",)
    )[0]  # seed 1000
    labels, model = segment(image, 3, return_model=True)
    sigma = model.fit_size * model.resolution
    assert model.choices["region_scale_px"] >= REGION_WIDER * sigma
    assert sigma > 30 and "bounded" not in model.choices["size"]
    assert rand_index(truth, np.asarray(labels)) > 0.96


def test_explicit_settings_are_the_papers_ortseg():
    """Named settings are taken as given: the paper's ORTSEG-FS-KDE features and nothing
    chosen but what is left at auto."""
    image, _ = dead_leaves((96, 96), seed=2)
    model = fit_textures(image, 3, features=("color", "fskde"), size=6, stride=1,
                         method="kmeans", sample=3000)  # fmt: skip
    assert model.endmembers.shape == (3, 16 * 3 + 15) and set(model.choices) == {"metric"}
    assert model.metric == "euclidean"  # left at auto: the paper's, with k-means
    assert model.spec.gradient_scales == (0.0,) and model.spec.bank_ranges is None
    with pytest.raises(xfskde.exceptions.ParameterError, match="method"):
        fit_textures(image, 3, method="farthest")
    with pytest.raises(xfskde.exceptions.ParameterError, match="size"):
        fit_textures(image, 3, size="big")


def test_wide_windows_fit_away_from_boundaries():
    """A window wider than the paper's takes the stable fit, with its reason recorded; on a
    held-out mosaic of real textures it keeps the three apart better than k-means on every
    sampled pixel, which spends a centre on the boundaries (measured 0.971 against 0.954; 0.962
    against 0.737 before the local binary patterns, whose histograms keep each texture
    compact)."""
    image, truth = texture_mosaic((512, 512), layout="voronoi", seed=1000)
    model = fit_textures(image, 3, size=24)
    assert model.choices["fit"].startswith("stable") and model.spec.stride == 6
    assert model.spec.features == ("bank", "lbp", "fskde")  # grey: no colour group
    plain = fit_textures(image, 3, size=24, method="kmeans")
    stable = rand_index(truth, model.predict(image))
    assert stable > 0.96 and stable > rand_index(truth, plain.predict(image)) + 0.01


def test_the_stable_fit_labels_through_a_narrower_window():
    """The rule fits the stable fit at its window and draws the labels through 0.7 of it:
    on a held-out mosaic 0.964 at the fit's window, 0.968 at the narrower one (the 24
    held-out mosaics 0.943 -> 0.947). The fit is the one of the wider window given
    explicitly, and the model's attrs record both windows."""
    image, truth = texture_mosaic((512, 512), layout="voronoi", seed=1000)
    model = fit_textures(image, 3)
    wide = model.fit_size
    assert model.fit_method == "stable" and wide > 6 and model.resolution == 1
    assert model.spec.size == label_window(wide) == pytest.approx(LABEL_FRACTION * wide, abs=0.01)
    assert model.spec.stride == auto_stride(model.spec.size) < auto_stride(wide)
    assert model.choices["labels"].startswith(f"sigma {model.spec.size:g}: 0.7 of the fit's")
    given = fit_textures(image, 3, size=wide, method="stable", metric="within")
    assert given.fit_size is None and given.spec.size == wide  # a given size is both windows
    np.testing.assert_array_equal(given.endmembers, model.endmembers)
    narrow = rand_index(truth, np.asarray(model.predict(image)))
    assert narrow > rand_index(truth, np.asarray(given.predict(image))) + 0.002
    assert narrow > 0.96
    again = TextureModel.from_attrs(model.attrs())
    assert model.attrs()["fit_size"] == wide and again.fit_size == wide
    assert again.spec == model.spec
    paper = fit_textures(image, 3, size=6)
    assert paper.fit_size is None and "labels" not in paper.choices


def test_bins_of_the_bank_cover_the_range():
    responses = np.array([[-1.0, 0.0, 0.299, 0.3, 5.0, np.nan]] * len(BANK_FILTERS)).T
    bins = bank_bins(responses, RANGES, 6)
    assert bins[:, 1].tolist() == [0, 3, 5, 5, 5, 0]


def test_wide_windows_read_the_image_lattice(rng):
    """σ >= 32: every ⌊σ/16⌋-th pixel of the image's lattice votes, each tap weighing that
    much more: the sum by hand over the lattice pixels, close to the exact window, and the same
    wherever the block starts."""
    from xfskde.segmentation._filters import Lattice, separable_dense

    spec = FeatureSpec(features=("color",), size=40, color_bins=4)
    assert vote_step(spec) == 2 and vote_step(FeatureSpec(size=31.9)) == 1
    planes = rng.random((400, 410, 2)).astype(np.float32)
    profile = spec.window_obj.profile()
    L = len(profile)
    rows, cols = np.array([3, 10, 11]), np.array([0, 7, 50])
    lattice = Lattice(2, origin=(5, 8))  # block pixel (0, 0) is image pixel (5, 8)
    got = separable_dense(planes, profile, rows, cols, lattice)
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            ys = [r + t for t in range(L) if (r + t + 5) % 2 == 0]
            xs = [c + t for t in range(L) if (c + t + 8) % 2 == 0]
            w = np.outer(profile[np.array(ys) - r], profile[np.array(xs) - c]) * 4
            expected = np.einsum("yx,yxn->n", w, planes[np.ix_(ys, xs)])
            np.testing.assert_allclose(got[i, j], expected, rtol=2e-5)
    exact = separable_dense(planes, profile, rows, cols)
    np.testing.assert_allclose(got, exact, rtol=0.02)  # white noise: the worst case
    image, _ = random_textures((360, 360), seed=3)
    halo = feature_depth(spec)
    centres = np.array([halo + 4])
    a = grid_features(image, spec, centres, centres)["color"]
    b = grid_features(image[1:, 3:], spec, centres - 1, centres - 3, origin=(1, 3))["color"]
    np.testing.assert_array_equal(a, b)  # the lattice is the image's, not the block's


def test_wide_window_labels_do_not_depend_on_chunking():
    image, _ = dead_leaves((192, 192), seed=8)
    labels, model = segment(image, 3, features=("color", "fskde"), size=33, stride=4,
                            method="kmeans", return_model=True)  # fmt: skip
    assert vote_step(model.spec) == 2
    import dask.array as da

    lazy = model.predict(da.from_array(image, chunks=(150, 170, 3)))
    np.testing.assert_array_equal(lazy.compute(), labels)


def test_colour_bins_cover_the_values_an_image_holds():
    """12-bit data in uint16 and floats in camera units are binned over the values they hold:
    the same segmentation as the image in [0, 1] (with [0, 1] bins, the 12-bit image's colours
    all fall in the first bin of 16 and the floats in the last)."""
    image, truth = random_textures((256, 256), seed=5)
    unit = (image / image.max()).astype(np.float32)
    twelve_bit = np.round(unit * 4095).astype(np.uint16)
    camera = unit * np.float32(4095)
    labels, model = segment(unit, 3, return_model=True)
    assert rand_index(truth, labels) > 0.93  # measured 0.941; 12-bit 0.947, camera 0.947
    assert model.spec.color_ranges is None and "color_ranges" not in model.attrs()
    white = float(np.percentile(unit, 99.9))
    for other, top in ((twelve_bit, 4095 / 65535), (camera, 4095)):
        got, fitted = segment(other, 3, return_model=True)
        assert rand_index(np.asarray(got), labels) > 0.97  # measured 0.977-0.978
        assert rand_index(truth, np.asarray(got)) > 0.93
        assert len(fitted.spec.color_ranges) == 3 and len(set(fitted.spec.color_ranges)) == 1
        low, high = fitted.spec.color_ranges[0]
        assert low == 0 and high == pytest.approx(white * top, rel=0.02)
        assert fitted.attrs()["color_ranges"] == [0.0, high] * 3
    # the paper's [0, 1] bins: what the 12-bit image got before the ranges were measured
    unit_bins = fit_textures(twelve_bit, 3, color_ranges="unit")
    assert unit_bins.spec.color_ranges is None
    lost = rand_index(truth, np.asarray(segment(twelve_bit, 3, model=unit_bins)))
    assert lost < rand_index(truth, labels) - 0.05  # measured 0.845
    # a model fitted on the image in [0, 1] refuses the 12-bit one (it would bin it over
    # [0, 1] too), and takes the same image as 8 bits
    with pytest.raises(xfskde.exceptions.ParameterError, match="another bit depth"):
        model.predict(twelve_bit)
    eight_bit = np.round(unit * 255).astype(np.uint8)
    assert rand_index(np.asarray(model.predict(eight_bit)), labels) > 0.99
    assert model.attrs()["value_range"] == list(model.value_range)


def test_a_grey_image_in_floats_of_0_to_255_is_segmented_as_in_uint8():
    """``imread(...).astype(float)``: the same pixels as floats of 0-255. Their gradients were
    255 times the uint8 image's, and the FS-KDE outweighed the bank where the groups' features
    are summed before their weights apply (the stable fit's steady samples): Rand 0.738
    against 0.967 as uint8. The gradients are now divided by the image's white level."""
    _, image, truth = texture_mosaic_set("held_out", (512, 512))[0]  # voronoi-plain-s1000
    grey = np.round((image - image.min()) / np.ptp(image) * 255)
    in_uint8, model = segment(grey.astype(np.uint8), 3, return_model=True)
    as_floats, fitted = segment(grey, 3, return_model=True)
    assert model.spec.gradient_unit == 1.0 and model.attrs()["gradient_unit"] == 1.0
    assert "gradient_unit" not in model.choices
    assert fitted.choices["gradient_unit"].startswith(f"{fitted.spec.gradient_unit:.4g}: the span")
    assert fitted.spec.gradient_unit == pytest.approx(np.percentile(grey, 99.9), rel=0.02)
    assert rand_index(truth, np.asarray(as_floats)) > 0.95  # measured 0.967, as uint8
    assert rand_index(np.asarray(in_uint8), np.asarray(as_floats)) > 0.99
    again = TextureModel.from_attrs(fitted.attrs())
    assert again.spec.gradient_unit == fitted.spec.gradient_unit
    older = {k: v for k, v in fitted.attrs().items() if k != "gradient_unit"}
    assert TextureModel.from_attrs(older).spec.gradient_unit == 1.0  # results written before


def test_colour_range_rule():
    """[0, 1] (None) for values in it reaching half of it; else from black (or 0) to white."""
    rng = np.random.default_rng(0)
    eight_bit = [rng.uniform(0.1, 0.9, (64, 64, 3))]
    assert color_range(eight_bit) is None
    assert color_range([t * 0.2 for t in eight_bit]) == pytest.approx((0, 0.18), abs=0.01)
    assert color_range([t * 1000 for t in eight_bit]) == pytest.approx((0, 900), rel=0.01)
    low, high = color_range([t - 0.5 for t in eight_bit])
    assert low == pytest.approx(-0.4, abs=0.01) and high == pytest.approx(0.4, abs=0.01)
    nan = np.full((8, 8, 3), np.nan)
    assert color_range([np.zeros((8, 8, 3)), nan]) == pytest.approx((-5e-4, 5e-4))
    assert color_range([nan]) is None
    assert UNIT_WHITE == 0.5
    # an offset up to the values' span keeps 0 as black (a camera's dark offset of 100 under
    # counts of 100-400); a larger one (10 000 + 0-255, elevations) starts at the values
    assert color_range([100 + t * 375 for t in eight_bit]) == pytest.approx((0, 437), rel=0.01)
    low, high = color_range([10_000 + t * 255 for t in eight_bit])
    assert low == pytest.approx(10_025, abs=1) and high == pytest.approx(10_230, abs=1)
    assert gradient_unit([10_000 + t * 255 for t in eight_bit]) == pytest.approx(204, abs=1)


def test_a_narrow_channel_is_binned_over_its_own_range():
    """A channel whose values span under a quarter of the common range (the blue band of a
    scene in reflectance beside its near infrared, a dim fluorescence channel) is binned over a
    quarter of it centred on its values; the others keep the common one, [0, 1] (None) where
    every channel does."""
    rng = np.random.default_rng(0)
    rgb = rng.uniform(0.1, 0.9, (64, 64, 3))
    assert channel_ranges([rgb]) is None
    assert channel_ranges([rgb * 0.06]) == ((0.0, pytest.approx(0.054, abs=0.001)),) * 3
    narrow = rgb * [1.0, 1.0, 0.1] + [0, 0, 0.5]  # blue within 0.51-0.59
    (r, g, (low, high)) = channel_ranges([narrow])
    assert r == g == (0.0, 1.0) and CHANNEL_SPAN == 0.25
    assert (low, high) == pytest.approx((0.55 - 0.125, 0.55 + 0.125), abs=0.002)
    counts = rgb * [4000.0, 400.0, 40.0]  # gains 1 : 0.1 : 0.01, common range 0-3600
    bright, *dim = channel_ranges([counts])
    assert bright == (0.0, pytest.approx(3600, rel=0.01))
    for (low, high), middle in zip(dim, (200, 20), strict=True):  # a quarter of 0-3600 each
        assert (low, high) == pytest.approx((middle - 450, middle + 450), abs=10)
    flat = np.concatenate([rgb[..., :2], np.full((64, 64, 1), 0.5)], -1)  # one bin either way
    assert channel_ranges([flat]) is None


def test_a_scene_of_reflectances_gets_its_dim_bands_colours():
    """Four bands of reflectance (blue 0.02-0.06 ... near infrared 0.25-0.55, floats in [0, 1])
    were binned over [0, 1]: the blue band in one bin of 16 and the green in two."""
    image, truth = random_textures((512, 512), seed=100)
    nir = 0.5 * image.mean(-1) + 0.5 * image[..., 1]
    bands = np.concatenate([image, nir[..., None]], -1)
    scene = np.array([0.02, 0.04, 0.03, 0.25]) + np.array([0.04, 0.06, 0.08, 0.3]) * bands
    labels, model = segment(scene.astype(np.float32), 3, return_model=True)
    assert rand_index(truth, np.asarray(labels)) > 0.97  # measured 0.991; 0.928 with [0, 1]
    # every band spans under a quarter of [0, 1] (the near infrared 0.33-0.50): a quarter each
    for (low, high), band in zip(model.spec.color_ranges, np.moveaxis(scene, -1, 0), strict=True):
        assert high - low == pytest.approx(CHANNEL_SPAN)
        assert low < np.percentile(band, 1) and np.percentile(band, 99) < high
    assert model.choices["color_ranges"].startswith("channel(s) 0, 1, 2, 3 span under 0.25")


def test_colour_ranges_refusals():
    image, _ = random_textures((64, 64), seed=1)
    with pytest.raises(xfskde.exceptions.ParameterError, match="color_ranges"):
        fit_textures(image, 3, color_ranges="dtype")
    with pytest.raises(ValueError, match="color_ranges"):
        FeatureSpec(color_ranges=((0.5, 0.2),))
    with pytest.raises(ValueError, match="color_ranges"):
        FeatureSpec(color_ranges=((0.0, np.inf),))
    # a model fitted on three channels refuses an image of four, or of one
    rgba = np.concatenate([image, np.ones((64, 64, 1))], axis=-1).astype(np.float32)
    model = fit_textures(image, 3, sample=2000)
    for other in (rgba, image[..., 0]):
        with pytest.raises(xfskde.exceptions.ParameterError, match="channel"):
            model.predict(other)


def test_two_channels_are_segmented_by_their_balance():
    """Two fluorescence channels whose regions differ only in which channel is bright (their
    mean, all the grey groups see, is 0.5 everywhere): the colour group tells them apart."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.55, 0.9, (128, 128)).astype(np.float32)
    truth = np.arange(128)[None, :].repeat(128, 0) // 64
    image = np.stack([np.where(truth, a, 1 - a), np.where(truth, 1 - a, a)], axis=-1)
    labels, model = segment(image, 2, return_model=True)
    assert "features" not in model.choices  # two channels are colour
    assert model.spec.features == ("color",)  # the grey groups see nothing: left out
    assert rand_index(truth, np.asarray(labels)) > 0.99
    grey = segment(image, 2, features=("bank", "fskde"), weights={"bank": 1.0, "fskde": 0.25})
    assert rand_index(truth, np.asarray(grey)) < 0.7  # what two channels got before


def test_a_channel_missing_throughout_is_named():
    """A band missing at every pixel (outside the scene's footprint, a detector that failed):
    a pixel missing in one channel is missing in all, so nothing is left — it was a
    ValueError listing the bank's 16 filters. Named now, with the channels to keep; channels
    missing in different places (no pixel present in all) get the general refusal. A model
    applied to an image with a band missing throughout labelled all of it background; it is
    refused too, saying the model needs the band."""
    texture, truth = random_textures((128, 128), seed=2)
    four = np.concatenate([texture, np.full((128, 128, 1), np.nan)], axis=-1).astype(np.float32)
    four = four[..., [0, 3, 1, 2]]  # the missing band second
    with pytest.raises(xfskde.exceptions.ParameterError) as refused:
        segment(four, 3)
    assert str(refused.value) == (
        "channel 1 (of 4, from 0) is missing (NaN or the nodata value) at every pixel of 256 "
        "random tiles, and a pixel missing in one channel is missing in all: nothing to "
        "segment; leave it out (image.isel(c=[0, 2, 3]); --channels)"
    )
    labels, model = segment(texture, 3, return_model=True)
    assert rand_index(truth, np.asarray(labels)) > 0.9
    bands = texture.astype(np.float32)
    bands[..., 2] = np.nan  # the model's image with a band gone: all of it was label 0, silently
    with pytest.raises(xfskde.exceptions.ParameterError) as refused:
        model.predict(bands)
    assert str(refused.value).endswith(
        "missing in all: nothing to segment; the model reads every channel of the image it was "
        "fitted on: give it"
    )
    crossed = texture.astype(np.float32)
    crossed[:64, :, 0] = np.nan
    crossed[64:, :, 1] = np.nan
    with pytest.raises(xfskde.exceptions.ParameterError, match="no pixel is present in every"):
        segment(crossed, 3)


def test_images_with_nothing_or_little_to_segment():
    """All missing, or flat: one clear refusal (it was a ValueError listing the 16 filters, and
    three arbitrary labels on a flat image). A small patch of data in a large missing image,
    and a blank centre (where the window check's crop falls), are segmented."""
    with pytest.raises(xfskde.exceptions.ParameterError, match=r"no pixel is present.*nodata"):
        segment(np.full((64, 64), np.nan, np.float32), 3)
    # a mask whose regions lie on missing data: the mask is named, not the image
    half = np.full((64, 64), 0.5, np.float32)
    half[:, :32] = np.nan
    inside = np.zeros((64, 64), bool)
    inside[10:50, 5:25] = True
    with pytest.raises(xfskde.exceptions.ParameterError, match=r"present in every channel inside "
                       r"the mask.*give a mask over the data"):  # fmt: skip
        segment(half, 3, mask=inside)
    with pytest.raises(xfskde.exceptions.ParameterError, match="the same at all"):
        segment(np.full((64, 64, 3), 0.5, np.float32), 3)
    texture, truth = random_textures((128, 128), seed=2)
    patch = np.full((768, 768, 3), np.nan, np.float32)
    patch[500:628, 300:428] = texture
    labels = np.asarray(segment(patch, 3))
    assert not labels[:500].any() and rand_index(truth, labels[500:628, 300:428]) > 0.8
    blank = np.full((512, 512, 3), 0.95, np.float32)
    blank[:128, :128] = texture
    assert set(np.unique(np.asarray(segment(blank, 3)))) == {1, 2, 3}


def test_an_undeclared_nodata_marker_is_named_not_overflowed():
    """A float raster whose missing pixels hold -3.4e38 (float32's lowest: ArcGIS's default)
    without a nodata tag failed with the filters' own "fill must be finite, got -inf". The
    value is named, with how to give it; given, those pixels are background."""
    image, _ = random_textures((128, 128), seed=2)
    grey = image.mean(axis=-1).astype(np.float32)
    grey[:40, :60] = np.float32(-3.4e38)
    with pytest.raises(xfskde.exceptions.ParameterError,
                       match=r"as large as -3\.4e\+38 .*nodata=-3\.4e\+38"):  # fmt: skip
        segment(grey, 2)
    labels = np.asarray(segment(grey, 2, nodata=-3.4e38))
    assert (labels[:40, :60] == 0).all() and (labels[40:] > 0).all()


def test_a_fit_needs_as_many_distinct_samples_as_textures():
    """A 2 x 2 image was fitted as two textures of one endmember, all zeros (its FS-KDE group
    had no spread and no noise, which read as an infinite S/N and weighed the bank to 0), with
    only scikit-learn's warning; samples with fewer distinct values than textures are now
    refused in one line, and a group whose features do not spread has no signal."""
    import warnings

    from xfskde.segmentation.defaults import group_signal
    from xfskde.segmentation.model import _refuse_too_few_distinct

    assert group_signal(np.zeros((50, 4)), np.zeros(50)) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, model = segment(np.array([[162, 68], [10, 4]], np.uint8), 2, return_model=True)
    assert np.abs(model.endmembers[0] - model.endmembers[1]).max() > 0
    two = np.repeat(np.eye(2, 5), 50, axis=0)
    fewer = r"only 2 distinct values at the 100 sampled.*n_textures = 3"
    with pytest.raises(xfskde.exceptions.ParameterError, match=fewer):
        _refuse_too_few_distinct(two, 3)
    _refuse_too_few_distinct(two, 2)
    with pytest.raises(xfskde.exceptions.ParameterError, match="the same at all 100"):
        _refuse_too_few_distinct(np.full((100, 5), 0.3) + 1e-9 * two[:, :1], 2)


def test_large_dask_chunks_are_split_for_segmentation():
    """A Dask image in 2048² chunks (a Zarr store's, open_image's default) is segmented in
    ~512² blocks: one 2048² block was one thread and +1 GiB (4096² RGB: 3.0 s against 1.7 s),
    a 4096² one 9.6 s and +2.1 GiB. The labels are those of the NumPy image."""
    import dask.array as da

    image, _ = random_textures((1536, 1536), seed=3)
    model = fit_textures(image[:512, :512], 3, size=6, sample=2000)
    lazy = model.predict(da.from_array(image, chunks=(1536, 1536, 3)))
    assert max(lazy.chunks[0]) <= 512 and lazy.numblocks[:2] == (3, 3)
    np.testing.assert_array_equal(lazy.compute(), model.predict(image))
    kept = model.predict(da.from_array(image, chunks=(768, 768, 3)))  # within 2 x 512: kept
    assert kept.chunks[0] == (768, 768)


@pytest.mark.parametrize("shape", [(2, 3), (5, 5), (9, 7)])
def test_images_smaller_than_the_sample_grid_are_segmented_in_bounds(shape):
    """A block with fewer pixels than a fifth of the sample: the fit's neighbour grid reached
    further than the halo and its windows read and wrote past the block (a segmentation fault
    or 'malloc(): corrupted top size' on 2 x 3 and 5 x 5 images; NUMBA_BOUNDSCHECK=1 named
    separable_binned). Now it stays within the halo."""
    image = np.random.default_rng(0).random(shape).astype(np.float32)
    labels = np.asarray(segment(image, 2))
    assert labels.shape == shape and set(np.unique(labels)) <= {1, 2}


def _grey_levels(side=256, noise=0.0, seed=0):
    """Three vertical bands of flat grey (25 | 125 | 225 of 255), with Gaussian noise."""
    image = np.full((side, side), 25.0)
    image[:, side // 3 : 2 * side // 3] = 125.0
    image[:, 2 * side // 3 :] = 225.0
    image += np.random.default_rng(seed).normal(0.0, noise, image.shape)
    truth = np.zeros((side, side), int)
    truth[:, side // 3 : 2 * side // 3] = 1
    truth[:, 2 * side // 3 :] = 2
    return np.clip(image, 0, 255).astype(np.uint8), truth


def test_regions_of_flat_grey_are_told_apart_by_their_grey_levels():
    """Grey regions without texture: the filter bank sees only their boundaries, and its
    intensity filter (one of sixteen) was outweighed by them — two bands one label, the
    boundaries another (Rand 0.75). The grey levels' histograms, whose S / N here is hundreds
    of times the bank's, join the fit and tell them apart."""
    image, truth = _grey_levels()
    labels = segment(xr.DataArray(image, dims=("y", "x")), 3)
    assert rand_index(truth, np.asarray(labels)) > 0.98  # 0.985; 0.752 without grey levels
    assert labels.attrs["chose_grey_levels"].startswith("kept: their S/N")
    assert labels.attrs["features"].startswith("color")
    noisy, truth = _grey_levels(noise=5.0, seed=1)
    # 0.969 since the local binary patterns' windows are renormalised to the pixels that vote
    # in them (their S / N here 0.69 -> 1.07: kept, where they had been left out); 0.992 before,
    # 0.990 before the grey levels; the 18 images of three bands 0.9825 -> 0.9808
    assert rand_index(truth, np.asarray(segment(noisy, 3))) > 0.96


def test_grey_levels_of_matched_textures_are_left_out():
    """Real textures whose grey levels are matched (the mosaics' mean and spread per texture):
    their grey levels' S / N is within a few times the bank's, so they are left out and the
    model is the bank and FS-KDE's, as before the grey levels were tried."""
    grey, truth = texture_mosaic((256, 256), seed=3)
    labels, model = segment(grey, 3, return_model=True)
    assert model.spec.features == ("bank", "lbp", "fskde")
    assert model.choices["grey_levels"].startswith("left out: their S/N")
    assert rand_index(truth, labels) > 0.85
    assert keeps_grey_levels({"color": 50.0, "bank": 10.0})[0] is (50.0 >= GREY_LEVELS_RATIO * 10)
    assert keeps_grey_levels({"color": 600.0, "bank": 3.7})[0]
    assert not keeps_grey_levels({"color": 30.0, "bank": 12.0})[0]  # a mosaic: 2.5 x
    # named groups or weights: no trial, nothing recorded
    named = fit_textures(grey, 3, features=("bank", "fskde"))
    assert "grey_levels" not in named.choices
