"""Where the fit of a model spreads its work over the cores, and that it computes the same
values so: each group's features bit for bit those computed alone."""

from __future__ import annotations

import threading

import numpy as np

from xfskde.datasets import random_textures
from xfskde.segmentation import model as model_module
from xfskde.segmentation._bank import bank_ranges, bank_responses
from xfskde.segmentation.features import FeatureSpec, feature_depth, grid_features


def test_the_region_scale_crop_computes_the_bank_beside_the_other_groups(monkeypatch):
    """The region scale's features of a crop (one block, computed by the calling thread
    alone): the filter bank in that thread, the colour and FS-KDE groups in a second one at
    the same time, each group equal bit for bit to the features of all groups at once; a
    spec without the bank, or with the bank alone, stays in the calling thread."""
    image, _ = random_textures((160, 160), seed=3)
    crop = image[:120, :130].astype(np.float32)
    ranges = bank_ranges(bank_responses(crop.mean(axis=-1), 0.5))
    spec = FeatureSpec(features=("color", "bank", "fskde"), size=9.0, bank_ranges=ranges)
    depth = feature_depth(spec)
    block = np.pad(crop, ((depth, depth), (depth, depth), (0, 0)), constant_values=np.nan)
    rows, cols = np.arange(0, 120, 4) + depth, np.arange(0, 130, 4) + depth
    expected = grid_features(block, spec, rows, cols)

    threads: dict[tuple[str, ...], str] = {}

    def recorded(block, spec, rows, cols, *args, **kwargs):
        threads[spec.features] = threading.current_thread().name
        return grid_features(block, spec, rows, cols, *args, **kwargs)

    monkeypatch.setattr(model_module, "grid_features", recorded)
    got = model_module._grid_features_beside(block, spec, rows, cols)
    main = threading.current_thread().name
    assert threads[("bank",)] == main and threads[("color", "fskde")] != main
    assert list(got) == ["color", "bank", "fskde"]
    for name, values in expected.items():
        assert got[name].dtype == values.dtype == np.float32
        np.testing.assert_array_equal(got[name].view(np.uint32), values.view(np.uint32))
    for alone in (("color", "fskde"), ("bank",)):
        threads.clear()
        one = FeatureSpec(features=alone, size=9.0, bank_ranges=ranges if "bank" in alone else None)
        got = model_module._grid_features_beside(block, one, rows, cols)
        assert threads == {alone: main}
        np.testing.assert_array_equal(
            np.concatenate(list(got.values()), axis=-1),
            np.concatenate(list(grid_features(block, one, rows, cols).values()), axis=-1),
        )


def test_a_fit_of_one_block_computes_its_bank_beside_its_other_groups(monkeypatch):
    """A fit whose sample is one block (one task, the second core waiting) computes the filter
    bank in the task's thread and the other groups in a second one, and fits the same model to
    the last bit as the same fit in one thread; a fit of several blocks keeps each block in
    one thread."""
    from xfskde.segmentation import fit_textures
    from xfskde.segmentation.defaults import AUTO_GRADIENT_SCALES

    image, _ = random_textures((256, 256), seed=104)
    ranges = bank_ranges(bank_responses(image.mean(axis=-1), 0.5))
    spec = FeatureSpec(features=("color", "bank", "fskde"), size=8.0, stride=2,
                       gradient_scales=AUTO_GRADIENT_SCALES, bank_ranges=ranges)  # fmt: skip
    weights = {"color": 1.0, "bank": 1.0, "fskde": 1.0}
    halo = feature_depth(spec) + model_module._shift(spec, "stable", True, "within")
    arr = model_module._prepare(image, None, halo, None).raw
    calls: dict[tuple[str, ...], int] = {}

    def recorded(block, spec, rows, cols, *args, **kwargs):
        calls[spec.features] = threading.get_ident()
        return grid_features(block, spec, rows, cols, *args, **kwargs)

    monkeypatch.setattr(model_module, "grid_features", recorded)
    fits = {}
    for beside in (False, True):
        calls.clear()
        fits[beside] = model_module._fit_prepared(
            arr, None, spec, 3, weights, "stable", 4000, 0, None, signal=True,
            metric="within", beside=beside,
        )  # fmt: skip
        if beside:
            assert set(calls) == {("bank",), ("color", "fskde")}
            assert calls[("bank",)] != calls[("color", "fskde")]
        else:
            assert set(calls) == {spec.features}
        assert threading.get_ident() not in calls.values()  # in Dask's threads
    a, b = fits[False], fits[True]
    for name in ("endmembers", "unmixing_vectors"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        np.testing.assert_array_equal(x.view(np.uint64), y.view(np.uint64))
    assert a.attrs() == b.attrs()

    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        model_module, "grid_features", lambda block, spec, *a, **k: seen.append(spec.features)
        or grid_features(block, spec, *a, **k),
    )  # fmt: skip
    fit_textures(
        random_textures((1100, 1100), seed=104)[0], 3, size=6.0, features=("color", "bank")
    )
    assert len(seen) > 1 and set(seen) == {("color", "bank")}  # blocks side by side, each whole
