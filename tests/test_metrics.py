"""Rand index and adjusted Rand index against scikit-learn and hand-counted pairs."""

import itertools

import dask.array as da
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, rand_score

from xfskde.metrics import adjusted_rand_index, contingency_table, rand_index


def _rand_by_pairs(a, b):
    pairs = list(itertools.combinations(range(len(a)), 2))
    agree = sum((a[i] == a[j]) == (b[i] == b[j]) for i, j in pairs)
    return agree / len(pairs)


@pytest.mark.parametrize("seed", range(20))
def test_matches_sklearn_and_pairs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    a, b = rng.integers(0, 4, n), rng.integers(-2, 3, n) * 7
    assert rand_index(a, b) == pytest.approx(rand_score(a, b), abs=1e-12)
    assert rand_index(a, b) == pytest.approx(_rand_by_pairs(a, b), abs=1e-12)
    assert adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)


def test_images_and_permutations():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, (40, 50))
    assert rand_index(truth, (truth + 1) % 3) == 1.0
    assert adjusted_rand_index(truth, 5 - truth) == 1.0
    noisy = np.where(rng.random(truth.shape) < 0.2, rng.integers(0, 3, truth.shape), truth)
    expected = rand_score(truth.ravel(), noisy.ravel())
    assert rand_index(da.from_array(truth, chunks=7), noisy) == pytest.approx(expected, abs=1e-12)


def test_contingency_table_counts():
    table = contingency_table([0, 0, 1, 1, 1], [3, 4, 4, 4, 3])
    np.testing.assert_array_equal(table, [[1, 1], [1, 2]])


@pytest.mark.parametrize(
    "dtype, low, high",
    [("uint8", 0, 4), ("uint16", 3, 9), ("int32", 0, 3), ("int64", -2, 3), ("bool", 0, 2),
     ("uint64", 2**40, 2**40 + 3), ("int64", 0, 2**21)],
)  # fmt: skip
def test_counting_by_value_is_the_sorted_table(dtype, low, high):
    """Small non-negative labels are counted by value (no sort); the table is that of the
    sorted distinct values whatever the dtype, gaps between values, negative or huge labels."""
    rng = np.random.default_rng(3)
    a = rng.integers(low, high, (70, 90)).astype(dtype)
    b = rng.choice([0, 2, 5], (70, 90)).astype("uint8")  # a gap in the values
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    expected = np.zeros((ia.max() + 1, ib.max() + 1), np.int64)
    np.add.at(expected, (ia.ravel(), ib.ravel()), 1)
    table = contingency_table(a, b)
    assert table.dtype == np.int64
    np.testing.assert_array_equal(table, expected)
    np.testing.assert_array_equal(contingency_table(b, a), expected.T)


def test_large_image_is_linear_time():
    n = 4_000_000  # 8e12 pairs: only a contingency table makes this instant
    truth = np.repeat(np.arange(4), n // 4)
    assert rand_index(truth, truth) == 1.0
    pred = truth.copy()
    pred[: n // 4] = 1  # merge two equal regions: the pairs across them now disagree
    expected = 1 - (n // 4) ** 2 / (n * (n - 1) / 2)
    assert rand_index(truth, pred) == pytest.approx(expected, rel=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="same pixels"):
        rand_index([0, 1], [0, 1, 2])
    with pytest.raises(TypeError, match="integer labels"):
        rand_index([0.5, 1.0], [0, 1])


def test_images_of_other_shapes_are_refused_not_paired_flat():
    """A (2, 3) labeling and a (3, 2) one (a transposed image: its pixels in another order)
    were compared once flattened, pixel by pixel of different pixels, and scored. Now
    refused, naming both shapes; a flat labeling beside an image is still taken in C
    order."""
    truth = np.array([[0, 0, 1], [0, 1, 1]])
    for metric in (rand_index, adjusted_rand_index, contingency_table):
        with pytest.raises(ValueError, match=r"got shapes \(2, 3\) and \(3, 2\)"):
            metric(truth, truth.T)
    assert rand_index(truth, truth.ravel()) == 1.0
    assert rand_index(truth.ravel(), da.from_array(truth, chunks=1)) == 1.0
