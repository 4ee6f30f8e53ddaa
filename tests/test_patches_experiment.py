"""The keypoint experiment (Figures 7 and 8): its rows, its AUCs and its command line."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from PIL import Image

from xfskde.experiments import patches as E


def _parse(argv):
    parser = argparse.ArgumentParser()
    E.add_arguments(parser)
    return parser.parse_args(argv)


@pytest.fixture(scope="module")
def rotated():
    return E.patches_experiment(pairs=160, lengths=[6, 10], rotate=True, seed=1)


def test_rows_are_tidy(rotated):
    assert len(rotated) == 1 + 2 * (len(E.DESCRIPTORS) - 1)
    assert {r["descriptor"] for r in rotated} == set(E.DESCRIPTORS)
    for row in rotated:
        assert set(row) == {"descriptor", "length", "rotated", "auc", "pairs", "data"}
        assert row["rotated"] is True and row["pairs"] == 160 and row["data"] == "proxy"
        assert 0.0 <= row["auc"] <= 1.0
    assert [r["length"] for r in rotated if r["descriptor"] == "intensity"] == [2828]


def test_rotation_invariance_pays_off_on_rotated_patches(rotated):
    auc = {(r["descriptor"], r["length"]): r["auc"] for r in rotated}
    for length in (6, 10):
        # canonical forms see through the random rotations; the plain FS-KDE cannot (Fig. 8)
        assert auc["cos2K F1 canonical", length] > auc["cos2K", length] + 0.05
        assert auc["cos2K Fk canonical", length] > auc["cos2K", length] + 0.05
        assert auc["canonical histogram", length] > auc["histogram", length]
    assert auc["intensity", 2828] < 0.65


def test_auc_is_the_roc_area_of_negated_distances():
    from sklearn.metrics import roc_auc_score

    rows = E.patches_experiment(pairs=40, lengths=[8], seed=2)
    data = E.ubc_proxy(40, seed=2)
    which = E._select_pairs(data, 40, np.random.default_rng(2))
    a, b = (p.astype(float) for p in data.pair_patches(which))
    F, G = E.D.fskde_descriptor(a, 8), E.D.fskde_descriptor(b, 8)
    vec = np.linalg.norm(E.D.as_real_vector(F) - E.D.as_real_vector(G), axis=-1)
    expected = roc_auc_score(data.pairs["is_match"][which], -vec)
    (got,) = [r["auc"] for r in rows if r["descriptor"] == "cos2K"]
    assert got == pytest.approx(expected, abs=1e-12)
    assert all(r["rotated"] is False for r in rows)


def _write_ubc(folder, rng):
    """24 patches = 8 points x 3 views (the views are the same patch, the points differ)."""
    folder.mkdir(parents=True)
    base = rng.integers(0, 256, (8, 64, 64)).astype(np.uint8)
    sheet = np.zeros((1024, 1024), np.uint8)
    for p in range(24):
        r, c = divmod(p, 16)
        sheet[r * 64 : (r + 1) * 64, c * 64 : (c + 1) * 64] = base[p // 3]
    Image.fromarray(sheet, "L").save(folder / "patches0000.bmp")
    (folder / "info.txt").write_text("".join(f"{p // 3} 0\n" for p in range(24)))
    pairs = [(i, j) for i in range(24) for j in range(i + 1, 24)]
    lines = [f"{i} {i // 3} 0 {j} {j // 3} 0 0\n" for i, j in pairs]
    (folder / "m50_276_276_0.txt").write_text("".join(lines))


def test_runs_on_a_ubc_folder(tmp_path, rng):
    _write_ubc(tmp_path / "liberty", rng)
    rows = E.patches_experiment(pairs=40, lengths=[4], root=str(tmp_path), subset="liberty")
    assert {r["data"] for r in rows} == {"ubc:liberty"}
    assert rows[0]["pairs"] == 40  # 20 of the 24 matching pairs and 20 of the others
    # identical views: every distance of a matching pair is zero, so every AUC is 1
    assert all(r["auc"] == 1.0 for r in rows)
    with pytest.raises(OSError, match="no subset folder"):
        E.patches_experiment(pairs=4, lengths=[4], root=str(tmp_path), subset="yosemite")


def test_command_line(capsys, tmp_path, rng):
    _write_ubc(tmp_path / "notredame", rng)
    argv = ["--root", str(tmp_path), "--subset", "notredame", "--pairs", "20", "--lengths", "4"]
    assert E.run(_parse(argv)) == 0
    out = capsys.readouterr().out
    assert "ROC AUC, upright patches, 20 pairs of ubc:notredame" in out
    assert "cos2K Fk canonical" in out and "1.000" in out and "paper (upright)" in out
    with pytest.raises(ValueError, match="--pairs must be >= 2"):
        E.run(_parse(["--pairs", "1"]))
    with pytest.raises(ValueError, match="lengths must be integers >= 3"):
        E.patches_experiment(pairs=4, lengths=[2])


@pytest.mark.slow
def test_documented_proxy_table():
    """The numbers of docs/descriptors.md (2000 proxy pairs, seed 0)."""
    up = {(r["descriptor"], r["length"]): r["auc"] for r in E.patches_experiment(pairs=2000)}
    rot = {
        (r["descriptor"], r["length"]): r["auc"]
        for r in E.patches_experiment(pairs=2000, rotate=True)
    }
    assert up["cos2K", 10] == pytest.approx(0.742, abs=0.002)
    assert up["histogram", 10] == pytest.approx(0.791, abs=0.002)
    assert rot["cos2K F1 canonical", 10] == pytest.approx(0.740, abs=0.002)
    assert rot["cos2K Fk canonical", 10] == pytest.approx(0.707, abs=0.002)
    for length in E.DEFAULT_LENGTHS:
        assert up["cos2K", length] > up["cos2K F1 canonical", length]  # as in the paper
        assert rot["cos2K F1 canonical", length] > rot["cos2K", length]
