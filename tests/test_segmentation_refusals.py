"""The public functions of segmentation (features, unmixing, defaults, saved) and the GeoJSON
writer refuse what they cannot read in one line that names the parameter, instead of crashing
deep inside (an ``IndexError``, a ``TypeError`` of an ``int``, a numba typing error, a heap
corruption), or accept array_like input as NumPy's functions do; and the GeoJSON writer puts
the regions at a URL through the library's own locations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from xfskde.exceptions import ParameterError
from xfskde.io.geojson import labels_geojson, read_geojson, write_labels_geojson
from xfskde.segmentation import defaults, features, unmixing
from xfskde.segmentation._bank import BANK_FILTERS
from xfskde.segmentation.features import FeatureSpec
from xfskde.segmentation.saved import read_model, same_fit

RNG = np.random.default_rng(0)
TILE3 = RNG.random((32, 32, 3))
TILE1 = RNG.random((32, 32))


# ------------------------------------------------------------------------------ features


def test_vote_reach_refuses_scales_it_cannot_read_and_takes_one_number():
    """vote_reach(("hist",), ()) was "TypeError: 'int' object is not iterable" and a NaN or
    negative scale, or an unknown group, a reach of 1 as if nothing were wrong; one number is
    one scale, as FeatureSpec reads it."""
    with pytest.raises(ParameterError, match=r"gradient_scales must be one or more numbers"):
        features.vote_reach(("hist",), ())
    for scales in ((math.nan,), (-1.0,), "a"):
        with pytest.raises(ParameterError, match=r"gradient_scales must be one or more numbers"):
            features.vote_reach(("fskde",), scales)
    with pytest.raises(ParameterError, match=r"features must be a non-empty subset"):
        features.vote_reach(("bogus",))
    assert features.vote_reach(("fskde",), 5) == features.vote_reach(("fskde",), (5.0,)) == 20
    assert features.vote_reach("bank") == features.vote_reach(("bank",)) > 1


def test_feature_spec_refuses_with_parameter_errors_that_say_what_to_do():
    """gradient_unit=0 and "bank" without bank_ranges were plain ValueErrors where the other
    checks are ParameterErrors; a gradient_unit of None or text, ranges that are no pairs, a
    color_bins of inf and features=5 were TypeErrors, OverflowErrors or plain ValueErrors, and
    infinite bank_ranges were kept (every value in one bin)."""
    with pytest.raises(ParameterError, match=r"gradient_unit must be a finite number > 0"):
        FeatureSpec(gradient_unit=0)
    for unit in (None, "a", math.inf):
        with pytest.raises(ParameterError, match=r"gradient_unit"):
            FeatureSpec(gradient_unit=unit)
    with pytest.raises(ParameterError, match=r'"bank" group needs bank_ranges.*fit_textures'):
        FeatureSpec(features=("bank",))
    n = len(BANK_FILTERS)
    for ranges in ([1] * n, 5, [(0.0, math.inf)] * n, [(0.0, 1.0)]):
        with pytest.raises(ParameterError, match=rf"bank_ranges must be {n} finite"):
            FeatureSpec(features=("bank",), bank_ranges=ranges)
    for ranges in ([1], 5, [("a", "b")]):
        with pytest.raises(ParameterError, match=r"color_ranges must be one finite"):
            FeatureSpec(color_ranges=ranges)
    for bins in (math.inf, math.nan):
        with pytest.raises(ParameterError, match=r"color_bins must be an integer"):
            FeatureSpec(color_bins=bins)
    for feats in (5, None):
        with pytest.raises(ParameterError, match=r"features must be a non-empty subset"):
            FeatureSpec(features=feats)
    with pytest.raises(ParameterError, match=r"gradient_scales"):
        FeatureSpec(gradient_scales="a")
    kept = FeatureSpec(features=("bank",), bank_ranges=[(0, 1)] * n, gradient_unit=2)
    assert kept.bank_ranges == ((0.0, 1.0),) * n and kept.gradient_unit == 2.0


def test_grid_features_refuse_samples_whose_windows_leave_the_block():
    """Samples whose windows reach beyond the block were read and written outside the
    compiled windows' arrays (glibc: "double free or corruption", the process aborted), and
    rows a little too near the start wrapped round to the block's end; a grey (h, w) block was
    a numba typing error. Samples inside are computed as before, from lists too."""
    spec = FeatureSpec(features=("color", "hist", "fskde"))
    small = np.zeros((16, 16, 1))
    with pytest.raises(ParameterError, match=r"rows must lie within \[24, -9\].*feature_depth"):
        features.grid_features(small, spec, np.arange(2, 6), np.arange(2, 6))
    block = RNG.random((64, 64, 1))
    with pytest.raises(ParameterError, match=r"rows must lie within \[24, 39\].*got 0\.\.3"):
        features.grid_features(block, spec, np.arange(4), np.arange(30, 34))
    with pytest.raises(ParameterError, match=r"cols must be a 1-D array of integers"):
        features.grid_features(block, spec, np.arange(30, 34), np.array([30.5]))
    with pytest.raises(ParameterError, match=r"block must be \(h, w, C\).*block\[\.\.\., None\]"):
        features.grid_features(block[..., 0], spec, np.arange(30, 34), np.arange(30, 34))
    got = features.grid_features(block.tolist(), spec, [30, 31], [32, 33])
    want = features.grid_features(block, spec, np.array([30, 31]), np.array([32, 33]))
    for name in spec.features:
        np.testing.assert_array_equal(got[name], want[name])
    u = np.zeros((16, 16, 2), np.float32)
    with pytest.raises(ParameterError, match=r"rows must lie within"):
        features.windowed_projections(u, np.ones((16, 16), bool), spec, [2], [2])
    with pytest.raises(ParameterError, match=r"projections must be \(h, w, m\) and valid"):
        features.windowed_projections(u, np.ones((8, 8), bool), spec, [2], [2])


def test_pixel_projections_refuse_tables_that_do_not_fit_the_groups():
    """A table of fewer rows than its group's features was read beyond its end (garbage
    projections, silently); a missing group's table was a KeyError, no table a
    StopIteration."""
    spec = FeatureSpec(features=("color",))
    block = RNG.random((16, 16, 1))
    with pytest.raises(ParameterError, match=r"the table of 'color' has 3 rows"):
        features.pixel_projections(block, spec, {"color": np.ones((3, 2))})
    with pytest.raises(ParameterError, match=r"the tables have \{'color': 20\} rows"):
        features.pixel_projections(block, spec, {"color": np.ones((20, 2))})
    with pytest.raises(ParameterError, match=r"tables must hold a \(D_group, m\) array"):
        features.pixel_projections(block, spec, {})
    with pytest.raises(ParameterError, match=r"tables must hold a \(D_group, m\) array"):
        features.pixel_projections(block, FeatureSpec(features=("color", "hist")),
                                   {"color": np.ones((16, 2))})  # fmt: skip
    table = RNG.random((16, 2))
    np.testing.assert_array_equal(
        features.pixel_projections(block, spec, {"color": table.tolist()}),
        features.pixel_projections(block, spec, {"color": table}),
    )


def test_color_bins_and_channel_mean_refuse_what_is_no_block():
    """color_bins with 0 bins gave 255 everywhere (uint8 wrapped round), a grey (h, w) block
    a numba typing error; channel_mean of an (h, w) block averaged its columns."""
    with pytest.raises(ParameterError, match=r"n_bins must be an integer >= 1, got 0"):
        features.color_bins(np.zeros((4, 4, 1)), 0)
    with pytest.raises(ParameterError, match=r"block must be \(h, w, C\)"):
        features.color_bins(np.zeros((4, 4)), 16)
    with pytest.raises(ParameterError, match=r"block must be \(h, w, C\)"):
        features.channel_mean(np.zeros((4, 4)))
    np.testing.assert_array_equal(features.color_bins([[[0.5]]], 16), [[[8]]])
    np.testing.assert_array_equal(features.channel_mean([[[0.25, 0.75]]]), [[0.5]])


# ------------------------------------------------------------------------------ unmixing


def test_abundances_take_array_like_features_and_refuse_what_does_not_match():
    """A list of features was "AttributeError: 'list' object has no attribute 'shape'";
    integer features multiplied the endmembers cast to integers (0.4 -> 0); features of
    another width than the endmembers a matmul error; complex features lost their imaginary
    part; a 1-D or empty set of endmembers an IndexError or no texture at all."""
    E = np.array([[0.4, 0.6], [0.9, 0.1]])
    np.testing.assert_array_equal(unmixing.abundances([[0.5, 0.5]], np.eye(2)), [[0.5, 0.5]])
    np.testing.assert_array_equal(
        unmixing.abundances(np.array([[1, 0], [0, 1]]), E),
        unmixing.abundances(np.array([[1.0, 0.0], [0.0, 1.0]]), E),
    )
    assert unmixing.abundances(np.array([[1, 0]]), E)[0].tolist() == [0.0, 1.0]
    with pytest.raises(ParameterError, match=r"the features have 3 columns and the endmembers 2"):
        unmixing.abundances(np.ones((4, 3)), E)
    with pytest.raises(ParameterError, match=r"features must be real numbers"):
        unmixing.abundances(np.ones((1, 2)) * 1j, E)
    for bad in (np.ones(2), np.zeros((0, 2))):
        with pytest.raises(ParameterError, match=r"endmembers must be \(m, D\)"):
            unmixing.abundances(np.ones((1, 2)), bad)
    with pytest.raises(ParameterError, match=r"vectors must have the endmembers' shape"):
        unmixing.abundances(np.ones((1, 2)), E, np.ones((3, 2)))
    with pytest.raises(ParameterError, match=r"endmembers must be \(m, D\)"):
        unmixing.unmixing_gram(np.ones(3))  # was a number, E Eᵀ of a vector
    with pytest.raises(ParameterError, match=r"b must be \(n, m\) and gram \(m, m\)"):
        unmixing.abundances_from_projections(np.ones((2, 3)), np.eye(2))  # was 3 abundances


def test_endmember_fits_refuse_counts_and_shapes_they_cannot_fit():
    """n_textures=0 or 1.5 reached scikit-learn, whose message names its own n_components or
    n_clusters; a change of another length than the samples was a boolean-index IndexError;
    refine_by_labels without vectors a matmul error."""
    X = RNG.random((40, 3))
    for n in (0, 1.5, None):
        with pytest.raises(ParameterError, match=r"n_textures must be an integer >= 1"):
            unmixing.fit_endmembers(X, n)
        with pytest.raises(ParameterError, match=r"n_textures must be an integer >= 1"):
            unmixing.fit_stable_endmembers(X, np.ones(40), n)
    with pytest.raises(ParameterError, match=r"change \(n,\), got shapes \(40, 3\) and \(39,\)"):
        unmixing.fit_stable_endmembers(X, np.ones(39), 2)
    with pytest.raises(ParameterError, match=r"the features have 3 columns and the endmembers 2"):
        unmixing.fit_within_metric(X, None, np.ones((2, 2)))
    with pytest.raises(ParameterError, match=r"vectors must be the unmixing vectors"):
        unmixing.refine_by_labels(X, X[:2], None)
    with pytest.raises(ParameterError, match=r"vectors must be the unmixing vectors"):
        unmixing.resplit_closest(X, X[:2], None)


# ------------------------------------------------------------------------------ defaults


def test_channel_ranges_refuse_no_tiles_and_tiles_of_other_channels():
    """channel_ranges([]) was an IndexError (its channels are counted on the tiles); tiles of
    1 and 3 channels were reshaped as if all had the first's. Its siblings give what they
    document for no tile."""
    with pytest.raises(ParameterError, match=r"channel_ranges needs one or more tiles.*none"):
        defaults.channel_ranges([])
    with pytest.raises(ParameterError, match=r"tiles of \[1, 3\] channels"):
        defaults.channel_ranges([TILE3, TILE1[:24]])
    assert defaults.value_levels([]) is None
    assert defaults.color_range([]) is None
    assert defaults.gradient_unit([]) == 1.0
    assert defaults.chroma_ratio([]) == 0.0
    assert defaults.texture_scale([]) == 1.0


def test_tile_functions_refuse_one_array_and_tiles_they_cannot_read():
    """One array given for the list of tiles was read row by row as tiles (texture_scale of
    a colour tile 0.620 where [tile] gives 0.645, channel_ranges of it one channel); a grey
    (y, x) tile was read by chroma_ratio as x channels (35.5 for grey noise); tiles of other
    sizes were a NumPy error of inhomogeneous shapes, a 0-d tile an IndexError."""
    for name in ("value_levels", "color_range", "channel_ranges", "gradient_unit",
                 "chroma_ratio", "texture_scale"):  # fmt: skip
        function = getattr(defaults, name)
        for tiles in (TILE3, None):
            with pytest.raises(ParameterError, match=r"tiles must be a list of arrays"):
                function(tiles)
    assert defaults.chroma_ratio([TILE1]) == 0.0  # one channel: left out
    assert defaults.chroma_ratio([TILE3, TILE1]) == defaults.chroma_ratio([TILE3])
    with pytest.raises(ParameterError, match=r"texture_scale needs tiles of one \(h, w\)"):
        defaults.texture_scale([TILE3, TILE3[:24]])
    with pytest.raises(ParameterError, match=r"tiles must be \(y, x\) or \(y, x, c\)"):
        defaults.chroma_ratio([np.float64(3.0)])
    with pytest.raises(ParameterError, match=r"chroma_ratio needs tiles of the same channels"):
        defaults.chroma_ratio([TILE3, TILE3[..., :2]])


def test_rule_functions_refuse_numbers_and_shapes_they_cannot_use():
    """A NaN texture scale was a window of NaN pixels (scale_window) or "cannot convert float
    NaN to integer" (auto_stride, auto_resolution); levels of one value a tuple-unpacking
    error; mismatched shapes NumPy's broadcasting errors; an unknown group a KeyError."""
    with pytest.raises(ParameterError, match=r"scale must be a finite number, got nan"):
        defaults.scale_window(math.nan, (100, 100))
    with pytest.raises(ParameterError, match=r"shape must be the image's \(H, W\)"):
        defaults.scale_window(1.0, ())
    with pytest.raises(ParameterError, match=r"sigma must be a finite number, got inf"):
        defaults.auto_stride(math.inf)
    with pytest.raises(ParameterError, match=r"scale must be a finite number, got nan"):
        defaults.auto_resolution(math.nan, 10.0)
    with pytest.raises(ParameterError, match=r"levels must be \(black, white\)"):
        defaults.data_bounds((1.0,))
    with pytest.raises(ParameterError, match=r"channels must be an integer >= 1, got '3'"):
        defaults.auto_features("3")
    with pytest.raises(ParameterError, match=r"features must be groups among"):
        defaults.auto_weights(("foo",))
    assert defaults.auto_weights("bank") == defaults.auto_weights(("bank",))
    with pytest.raises(ParameterError, match=r"present must have the labels' shape \(4, 4\)"):
        defaults.boundary_share(np.zeros((4, 4)), np.ones((3, 3), bool))
    with pytest.raises(ParameterError, match=r"features must be \(n, D\) and change \(n,\)"):
        defaults.group_signal(np.ones((3, 2)), [])
    with pytest.raises(ParameterError, match=r"names must be one or more of the groups"):
        defaults.group_columns({"bank": slice(0, 3)}, ["color"])
    with pytest.raises(ParameterError, match=r"groups must hold one or more"):
        defaults.idle_groups(np.ones((3, 3)), np.eye(3), None, {})
    with pytest.raises(ParameterError, match=r"features must be \(ny, nx, D\)"):
        defaults.region_scale(np.ones((4, 4)), 1.0)


# -------------------------------------------------------------------------------- saved


def test_read_model_and_same_fit_refuse_what_is_no_result():
    """read_model(None) was zarr's "No group found in store None", read_model(5) or [] zarr's
    "Unsupported type for store_like", read_model("") a search of the working directory;
    same_fit(None, None) an AttributeError."""
    for source in (None, 5, [], ""):
        with pytest.raises(ParameterError, match=r"source must be the path or URL of a result"):
            read_model(source)
    with pytest.raises(ParameterError, match=r"fitted must be a TextureModel"):
        same_fit(None, None)


# ------------------------------------------------------------------------------ GeoJSON


def _labels() -> np.ndarray:
    labels = np.zeros((24, 32), np.int16)
    labels[:, 16:] = 1
    labels[8:16, 4:12] = 2
    return labels


def test_write_labels_geojson_puts_the_regions_in_a_bucket(tmp_path):
    """At an s3:// URL the built-in open was "FileNotFoundError"; written through the
    library's locations (fsspec) the object holds the same bytes as the local file (on a real
    local S3 server, moto's server mode). An http(s) URL is refused in one line."""
    s3fs = pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    from _servers import s3_server

    labels = _labels()
    write_labels_geojson(labels, tmp_path / "local.geojson")
    local = (tmp_path / "local.geojson").read_bytes()
    assert json.loads(local) == json.loads(json.dumps(labels_geojson(labels)))
    with s3_server() as options:
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("regions")
        try:
            write_labels_geojson(labels, "s3://regions/out/labels.geojson",
                                 storage_options=options)  # fmt: skip
            fs.invalidate_cache()
            assert fs.cat("regions/out/labels.geojson") == local
        finally:
            s3fs.S3FileSystem.clear_instance_cache()
    with pytest.raises(ParameterError, match=r"nothing can be written at an http:// URL"):
        write_labels_geojson(labels, "http://127.0.0.1:9/labels.geojson")
    assert read_geojson(tmp_path / "local.geojson") == json.loads(local)
