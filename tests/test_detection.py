"""The person-detection experiment (section 5.2, Figure 9) and its offline proxy."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import skimage.transform

import xfskde
from xfskde.datasets.inria import person_proxy
from xfskde.descriptors import histogram_cells
from xfskde.experiments.detection import block_features, detection_experiment, rotate_and_crop


@pytest.fixture(scope="module")
def proxy():
    return person_proxy(60, 40, seed=3)


def test_proxy_layout(proxy):
    assert proxy.X_train.shape == (60, 160, 96) and proxy.X_test.shape == (40, 160, 96)
    assert proxy.y_train.tolist() == [1, 0] * 30 and proxy.margin == 16 and proxy.root is None
    assert 0 <= proxy.X_train.min() and proxy.X_train.max() <= 1
    again = person_proxy(60, 40, seed=3)
    np.testing.assert_array_equal(again.X_test, proxy.X_test)
    with pytest.raises(ValueError, match="positive_digit"):
        person_proxy(positive_digit=10)


def test_rotate_and_crop(proxy):
    X = proxy.X_train[:3]
    np.testing.assert_array_equal(rotate_and_crop(X, 16, degrees=0), X[:, 16:-16, 16:-16])
    turned = rotate_and_crop(X, 16, seed=5)
    angles = np.random.default_rng(5).uniform(-15, 15, 3)
    for x, t, a in zip(X, turned, angles, strict=True):
        expected = skimage.transform.rotate(x, a, order=1, mode="reflect")[16:-16, 16:-16]
        np.testing.assert_allclose(t, expected, atol=1e-6)
        # no edge artefacts: the crop never reaches beyond the turned window's own pixels
        inside = skimage.transform.rotate(np.ones_like(x), a, order=0, cval=0)[16:-16, 16:-16]
        assert inside.min() == 1


def test_block_features_are_the_descriptors(proxy):
    X = proxy.X_test[:2, 16:-16, 16:-16]
    hist = block_features(X, "gradient histogram", 6)
    np.testing.assert_allclose(hist[1], histogram_cells(X[1], 6).ravel())
    assert hist.shape == (2, 16 * 8 * 6)
    fs = block_features(X, "cos2K FS-KDE", 8)  # 4 complex coefficients, 7 real numbers per cell
    assert fs.shape == (2, 16 * 8 * 7)
    kernel = xfskde.Cos2KKernel.for_length(4)
    F = xfskde.local_fskde(X[0], order=kernel.order, window="box", size=8, stride=8, eps=1e-5)
    # the real vector keeps Parseval distances (section 2.2)
    G = xfskde.local_fskde(X[1], order=kernel.order, window="box", size=8, stride=8, eps=1e-5)
    d = np.sqrt(np.sum(xfskde.distance(F, G) ** 2))
    np.testing.assert_allclose(np.linalg.norm(fs[0] - fs[1]), d, rtol=1e-4)
    assert block_features(X, "HOG", 4).shape == (2, 15 * 7 * 4 * 4)
    np.testing.assert_array_equal(block_features(X, "intensity", 4), X.reshape(2, -1))
    with pytest.raises(ValueError, match="length"):
        block_features(X, "HOG", 5)
    with pytest.raises(ValueError, match="descriptor"):
        block_features(X, "SIFT", 8)


def test_experiment_rows_and_learning():
    rows = detection_experiment(lengths=(8,), n_train=400, n_test=200, seed=1,
                                descriptors=("HOG", "cos2K FS-KDE"))  # fmt: skip
    assert [(r["descriptor"], r["length"], r["rotated"]) for r in rows] == [
        ("HOG", 8, False), ("cos2K FS-KDE", 8, False)
    ]  # fmt: skip
    assert rows[0]["n_features"] == 15 * 7 * 4 * 8 and rows[1]["n_features"] == 128 * 7
    for row in rows:  # the figures are learnable: well above chance (0.5) on 200 test windows
        assert row["accuracy"] > 0.65 and row["dataset"] == "proxy"
    with pytest.raises(ValueError, match="lengths"):
        detection_experiment(lengths=(3,))


def test_command(capsys):
    from xfskde.commands import experiment

    parser = argparse.ArgumentParser()
    experiment.add_parser(parser.add_subparsers())
    args = parser.parse_args(
        ["experiment", "detection", "--lengths", "4", "--train", "24", "--test", "16", "--rotate"]
    )
    code = args.func(args)
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("proxy  upright") == 4 and out.count("proxy  rotated") == 4
    assert "upright − rotated" in out and "the cos2K FS-KDE the least" in out
