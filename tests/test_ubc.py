"""UBC / Brown patch loader on fixture files written in the published format, and the proxy."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from xfskde.datasets import PatchStack, load_ubc_patches, ubc_proxy

N_PATCHES = 300  # two bitmaps, the second partly filled


def _patch(p: int) -> np.ndarray:
    """A patch that says who it is: its index in the top-left pixels, a gradient elsewhere."""
    out = np.add.outer(np.arange(64), np.arange(64)).astype(np.uint8) + p % 7
    out[0, 0], out[0, 1] = p // 256, p % 256
    return out


def _write_subset(folder, n=N_PATCHES, pairs=None):
    folder.mkdir(parents=True)
    for f in range(-(-n // 256)):
        sheet = np.zeros((1024, 1024), np.uint8)
        for q in range(256):
            p = f * 256 + q
            if p < n:
                r, c = divmod(q, 16)
                sheet[r * 64 : (r + 1) * 64, c * 64 : (c + 1) * 64] = _patch(p)
        Image.fromarray(sheet, "L").save(folder / f"patches{f:04d}.bmp")
    point_ids = np.arange(n) // 3  # three views per 3D point
    (folder / "info.txt").write_text("".join(f"{pid} 0\n" for pid in point_ids))
    if pairs is None:
        pairs = [(0, 1), (0, 5), (298, 299), (297, 299), (255, 256)]
    lines = [f"{i} {point_ids[i]} 0 {j} {point_ids[j]} 0 0\n" for i, j in pairs]
    (folder / "m50_5_5_0.txt").write_text("".join(lines))
    return point_ids


def test_reads_the_published_layout(tmp_path):
    point_ids = _write_subset(tmp_path / "liberty")
    (tmp_path / "liberty" / "m50_2_2_0.txt").write_text("0 0 0 1 0 0 0\n3 1 0 9 3 0 0\n")
    data = load_ubc_patches(tmp_path, "liberty")
    assert len(data) == N_PATCHES and data.subset == "liberty"
    assert isinstance(data.patches, PatchStack)
    assert data.patches.shape == (N_PATCHES, 64, 64) and data.patches.dtype == np.uint8
    np.testing.assert_array_equal(data.point_ids, point_ids)
    for p in (0, 17, 255, 256, 299):  # left to right, top to bottom, across bitmaps
        np.testing.assert_array_equal(data.patches[p], _patch(p))
    batch = data.patches[np.array([[299, 0], [16, 256]])]
    assert batch.shape == (2, 2, 64, 64)
    assert batch[0, 0, 0, 1] == 299 % 256 and batch[1, 1, 0, 0] == 1
    assert data.patches[-1, 0, 1] == 299 % 256
    np.testing.assert_array_equal(data.patches[10:13][:, 0, 1], [10, 11, 12])
    everything = np.asarray(data.patches)
    assert everything.shape == (N_PATCHES, 64, 64) and everything[123, 0, 1] == 123
    # the largest pair file by default; a match is two equal 3D point ids
    assert data.pairs.dtype.names == ("i", "j", "is_match")
    np.testing.assert_array_equal(data.pairs["i"], [0, 0, 298, 297, 255])
    np.testing.assert_array_equal(data.pairs["j"], [1, 5, 299, 299, 256])
    np.testing.assert_array_equal(data.pairs["is_match"], [True, False, True, True, True])
    a, b = data.pair_patches([2])
    np.testing.assert_array_equal(a[0], _patch(298))
    np.testing.assert_array_equal(b[0], _patch(299))
    small = load_ubc_patches(tmp_path, "liberty", pairs=2)
    np.testing.assert_array_equal(small.pairs["is_match"], [True, False])
    same = load_ubc_patches(tmp_path / "liberty", None, pairs="m50_2_2_0.txt")
    assert same.pairs.size == 2


def test_bitmaps_are_decoded_lazily(tmp_path):
    _write_subset(tmp_path / "yosemite")
    data = load_ubc_patches(tmp_path, "yosemite")
    assert not data.patches._cache
    data.patches[260]
    assert list(data.patches._cache) == [1]


def test_missing_folders_and_files(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        load_ubc_patches(tmp_path / "nowhere", "liberty")
    _write_subset(tmp_path / "liberty")
    with pytest.raises(OSError, match=r"no subset folder .*notredame.*\['liberty'\]"):
        load_ubc_patches(tmp_path, "notredame")
    with pytest.raises(OSError, match="pair files for \\[5\\] pairs exist"):
        load_ubc_patches(tmp_path, "liberty", pairs=100000)
    (tmp_path / "liberty" / "patches0001.bmp").unlink()
    with pytest.raises(OSError, match=r"lacks patches0001\.bmp"):
        load_ubc_patches(tmp_path, "liberty")
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match=r"no info\.txt"):
        load_ubc_patches(tmp_path, "empty")


def test_malformed_files(tmp_path):
    folder = tmp_path / "notredame"
    _write_subset(folder)
    info = (folder / "info.txt").read_text().splitlines()
    info[4] = "four 0"
    (folder / "info.txt").write_text("\n".join(info))
    with pytest.raises(ValueError, match=r"info.txt, line 5: expected integers"):
        load_ubc_patches(tmp_path, "notredame")

    folder = tmp_path / "liberty"
    _write_subset(folder)
    (folder / "m50_5_5_0.txt").write_text("0 0 0 1 0\n")
    with pytest.raises(ValueError, match="line 1: expected 7 columns"):
        load_ubc_patches(tmp_path, "liberty")
    (folder / "m50_5_5_0.txt").write_text("0 0 0 1 0 0 0\n0 0 0 300 100 0 0\n")
    with pytest.raises(ValueError, match="pair 2: patch index out of range"):
        load_ubc_patches(tmp_path, "liberty")

    folder = tmp_path / "yosemite"
    _write_subset(folder)
    Image.fromarray(np.zeros((512, 1024), np.uint8), "L").save(folder / "patches0001.bmp")
    data = load_ubc_patches(tmp_path, "yosemite")
    np.testing.assert_array_equal(data.patches[3], _patch(3))
    with pytest.raises(ValueError, match="UBC patch bitmaps are 1024x1024"):
        data.patches[270]
    with pytest.raises(IndexError, match="out of range"):
        data.patches[300]


def test_inconsistent_point_ids_warn(tmp_path):
    folder = tmp_path / "liberty"
    _write_subset(folder)
    (folder / "m50_5_5_0.txt").write_text("0 7 0 1 7 0 0\n")
    with pytest.warns(UserWarning, match="differ from info.txt"):
        data = load_ubc_patches(tmp_path, "liberty")
    assert data.pairs["is_match"][0]


def test_proxy_pairs():
    data = ubc_proxy(24, seed=3)
    assert data.patches.shape == (48, 64, 64) and data.patches.dtype == np.uint8
    assert data.pairs.size == 24 and data.pairs["is_match"].sum() == 12
    np.testing.assert_array_equal(data.pairs["i"], np.arange(0, 48, 2))
    ids_i, ids_j = data.point_ids[data.pairs["i"]], data.point_ids[data.pairs["j"]]
    np.testing.assert_array_equal(ids_i == ids_j, data.pairs["is_match"])
    again = ubc_proxy(24, seed=3)
    np.testing.assert_array_equal(again.patches, data.patches)
    assert not np.array_equal(ubc_proxy(24, seed=4).patches, data.patches)
    # corresponding views are far more alike than non-corresponding ones
    a, b = (p.astype(float) for p in data.pair_patches())
    a, b = (x.reshape(len(x), -1) - x.mean(axis=(1, 2))[:, None] for x in (a, b))
    corr = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    match = data.pairs["is_match"]
    assert np.median(corr[match]) > 0.5 > 0.2 > np.median(corr[~match])
    with pytest.raises(ValueError, match="pairs must be >= 2"):
        ubc_proxy(1)
