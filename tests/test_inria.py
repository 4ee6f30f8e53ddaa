"""The INRIA person loader on fixture folders written in the published layout."""

from __future__ import annotations

import numpy as np
import pytest
import skimage.color
import skimage.io

from xfskde.datasets import load_inria_person


def _write(path, image):
    path.parent.mkdir(parents=True, exist_ok=True)
    skimage.io.imsave(path, image, check_contrast=False)


def _positive(rows, cols, value):
    """A normalised positive: a constant frame with a ramp in the central 64 × 128 window."""
    image = np.full((rows, cols), 255, np.uint8)
    top, left = (rows - 128) // 2, (cols - 64) // 2
    image[top : top + 128, left : left + 64] = value + np.arange(64, dtype=np.uint8)[None, :]
    return image


@pytest.fixture
def inria(tmp_path):
    root = tmp_path / "INRIAPerson"
    for i in range(2):
        _write(root / "train_64x128_H96" / "pos" / f"crop{i}a.png", _positive(160, 96, 10 + i))
        _write(root / "test_64x128_H96" / "pos" / f"crop{i}a.png", _positive(134, 70, 20 + i))
    rng = np.random.default_rng(0)
    for split in ("Train", "Test"):
        for i in range(2):
            image = rng.integers(0, 200, (180, 200, 3), dtype=np.uint8)  # colour, like INRIA
            _write(root / split / "neg" / f"neg{i}.jpg" if i else root / split / "neg" / "n.png",
                   image)  # fmt: skip
    return root


def test_positives_are_the_central_window(inria):
    data = load_inria_person(inria, negatives_per_image=3)
    assert data.X_train.shape == (2 + 6, 128, 64) and data.X_train.dtype == np.float32
    assert data.X_test.shape == (2 + 6, 128, 64)
    np.testing.assert_array_equal(data.y_train, [1, 1, 0, 0, 0, 0, 0, 0])
    for X, base in ((data.X_train, 10), (data.X_test, 20)):
        for i in range(2):  # exactly the ramp: no frame pixel (255) got in
            expected = (base + i + np.arange(64)) / 255.0
            np.testing.assert_allclose(X[i], np.broadcast_to(expected, (128, 64)), atol=1e-6)


def test_negatives_are_seeded_windows_of_the_images(inria):
    a = load_inria_person(inria, negatives_per_image=4, seed=1)
    b = load_inria_person(inria, negatives_per_image=4, seed=1)
    c = load_inria_person(inria, negatives_per_image=4, seed=2)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train[2:], c.X_train[2:])
    # each negative window is found verbatim in its (grey) source image
    grey = skimage.color.rgb2gray(skimage.io.imread(inria / "Train" / "neg" / "n.png"))
    window = a.X_train[2]  # sorted files: "n.png" < "neg1.jpg", so its windows come first
    hits = [
        (r, c) for r in range(grey.shape[0] - 127) for c in range(grey.shape[1] - 63)
        if abs(grey[r, c] - window[0, 0]) < 1e-6
        and np.allclose(grey[r : r + 128, c : c + 64], window, atol=1e-6)
    ]  # fmt: skip
    assert len(hits) == 1


def test_margin_keeps_context(inria):
    data = load_inria_person(inria, negatives_per_image=1, margin=16)
    assert data.X_train.shape == (4, 160, 96) and data.X_test.shape == (4, 160, 96)
    np.testing.assert_array_equal(data.X_train[0, 16:-16, 16:-16],
                                  load_inria_person(inria).X_train[0])  # fmt: skip
    assert data.X_train[0, 0, 0] == 1.0  # the training frame itself
    # test positives (70 × 134) are smaller than 96 × 160: reflect-padded by 13 on each side
    padded = np.pad(_positive(134, 70, 20) / 255.0, 13, mode="reflect")
    np.testing.assert_allclose(data.X_test[0], padded, atol=1e-6)


def test_list_files_choose_the_images(inria):
    (inria / "train_64x128_H96" / "pos.lst").write_text("train_64x128_H96/pos/crop1a.png\n")
    data = load_inria_person(inria, negatives_per_image=1)
    assert data.y_train.tolist() == [1, 0, 0]
    np.testing.assert_allclose(data.X_train[0, 0, 0], 11 / 255, atol=1e-6)
    (inria / "train_64x128_H96" / "pos.lst").write_text("pos/missing.png\n")
    with pytest.raises(OSError, match=r"pos\.lst lists 'pos/missing\.png'"):
        load_inria_person(inria)


def test_missing_and_malformed_folders_name_the_path(inria, tmp_path):
    with pytest.raises(OSError, match="nowhere"):
        load_inria_person(tmp_path / "nowhere")
    for f in (inria / "Test" / "neg").iterdir():
        f.unlink()
    with pytest.raises(OSError, match=r"Test/neg holds no PNG/JPG"):
        load_inria_person(inria)
    (inria / "Test" / "neg").rmdir()
    with pytest.raises(OSError, match=r"Test/neg is missing"):
        load_inria_person(inria)
    _write(inria / "train_64x128_H96" / "pos" / "small.png", np.zeros((100, 60), np.uint8))
    with pytest.raises(OSError, match=r"small\.png is 60×100"):
        load_inria_person(inria)
    (inria / "train_64x128_H96" / "pos" / "small.png").write_bytes(b"not a png")
    with pytest.raises(OSError, match=r"cannot read image .*small\.png"):
        load_inria_person(inria)


@pytest.mark.parametrize(
    ("name", "value"), [("negatives_per_image", 0), ("margin", -1), ("max_images", 0)]
)
def test_bad_parameters(inria, name, value):
    with pytest.raises(ValueError, match=name):
        load_inria_person(inria, **{name: value})
