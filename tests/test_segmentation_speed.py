"""Where the fit of a model spreads its work over the cores, and that it computes the same
values so: the features bit for bit those computed in one thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from xfskde.datasets import random_textures
from xfskde.segmentation import features as features_module
from xfskde.segmentation import model as model_module
from xfskde.segmentation._bank import bank_ranges, bank_responses
from xfskde.segmentation.defaults import AUTO_GRADIENT_SCALES
from xfskde.segmentation.features import FeatureSpec, feature_depth, grid_features


@pytest.mark.parametrize(
    ("groups", "window"),
    [
        (("color", "bank", "fskde"), "gaussian"),
        (("color", "bank", "hist", "fskde"), "box"),
        (("bank", "fskde"), "disk"),
        (("color", "fskde"), "gaussian"),  # no bank: the votes here, the windows beside
        (("bank",), "gaussian"),
    ],
)
def test_grid_features_beside_are_those_of_one_thread_bit_for_bit(groups, window, monkeypatch):
    """A crop's features with ``beside`` (the bank's votes in the calling thread, the other
    groups in a second one, the bank's histograms windowed by both) equal those computed in
    one thread to the last bit, missing pixels and several gradient scales included; with the
    bank and other groups, the second thread windows some of them."""
    image, _ = random_textures((160, 160), seed=3)
    crop = image[:120, :130].astype(np.float32)
    crop[40:52, 60:75] = np.nan
    ranges = bank_ranges(bank_responses(crop.mean(axis=-1), 0.5))
    spec = FeatureSpec(features=groups, window=window, size=9.0, gradient_scales=(0.0, 2.0),
                       bank_ranges=ranges if "bank" in groups else None)  # fmt: skip
    depth = feature_depth(spec)
    block = np.pad(crop, ((depth, depth), (depth, depth), (0, 0)), constant_values=np.nan)
    rows, cols = np.arange(0, 120, 4) + depth, np.arange(0, 130, 4) + depth
    expected = grid_features(block, spec, rows, cols)
    windowed_by: set[int] = set()
    windowed = features_module._windowed

    def recorded(*args, **kwargs):
        windowed_by.add(threading.get_ident())
        return windowed(*args, **kwargs)

    monkeypatch.setattr(features_module, "_windowed", recorded)
    got = grid_features(block, spec, rows, cols, beside=True)
    assert list(got) == list(expected)
    for name, values in expected.items():
        assert got[name].shape == values.shape and got[name].dtype == np.float32
        np.testing.assert_array_equal(got[name].view(np.uint32), values.view(np.uint32))
    if "bank" in groups and len(groups) > 1:  # the other groups' windows in the second thread
        assert len(windowed_by) == 2  # (without, which thread takes each window is a race)


def test_the_region_scale_crop_and_a_one_block_fit_share_their_work(monkeypatch):
    """The region scale's crop (one block, computed by the calling thread alone) and a fit
    whose sample is one block (one task, the second core waiting) compute their features with
    a second thread, and the fit gives the same model to the last bit as in one thread; a fit
    of several blocks computes each in one thread."""
    from xfskde.segmentation import fit_textures

    image, _ = random_textures((256, 256), seed=104)
    ranges = bank_ranges(bank_responses(image.mean(axis=-1), 0.5))
    spec = FeatureSpec(features=("color", "bank", "fskde"), size=8.0, stride=2,
                       gradient_scales=AUTO_GRADIENT_SCALES, bank_ranges=ranges)  # fmt: skip
    weights = {"color": 1.0, "bank": 1.0, "fskde": 1.0}
    halo = feature_depth(spec) + model_module._shift(spec, "stable", True, "within")
    arr = model_module._prepare(image, None, halo, None).raw
    calls: list[bool] = []

    def recorded(*args, beside=False, **kwargs):
        calls.append(beside)
        return grid_features(*args, beside=beside, **kwargs)

    monkeypatch.setattr(model_module, "grid_features", recorded)
    fits = {}
    for beside in (False, True):
        calls.clear()
        fits[beside] = model_module._fit_prepared(
            arr, None, spec, 3, weights, "stable", 4000, 0, None, signal=True,
            metric="within", beside=beside,
        )  # fmt: skip
        assert calls == [beside]
    a, b = fits[False], fits[True]
    for name in ("endmembers", "unmixing_vectors"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        np.testing.assert_array_equal(x.view(np.uint64), y.view(np.uint64))
    assert a.attrs() == b.attrs()

    calls.clear()
    crop = image.astype(np.float32)
    args = {**dict(features=spec.features, window="gaussian", bank_bins=11), "bank_ranges": ranges,
            "color_ranges": None, "gradient_unit": 1.0, "color_bins": 16, "angle_bins": 16,
            "n_coefficients": 8, "gradient_scales": (0.0,)}  # fmt: skip
    model_module._region_scale(model_module._prepare(crop, None, 0, None).raw, None, args,
                               "gaussian", 10.0, 1, 256)  # fmt: skip
    assert calls == [True]

    calls.clear()
    fit_textures(
        random_textures((1100, 1100), seed=104)[0], 3, size=6.0, features=("color", "bank")
    )
    assert len(calls) > 1 and not any(calls)  # blocks side by side, each in one thread
