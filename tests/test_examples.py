"""Every example script runs, follows the conventions, and shows what it says it shows.

Each ``examples/*.py`` is a script with ``main(argv=None)`` and a ``__main__`` guard that runs
in seconds by default and prints what it found. Notebooks (``examples/*.ipynb``) are executed by
the I/O tests, not here.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))
TIMEOUT_S = 60  # each example must be small by default (< 30 s on 2 shared cores)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_examples():
    assert {"angle_sets.py", "local_fields.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_follows_the_conventions(script):
    tree = ast.parse(script.read_text())
    assert ast.get_docstring(tree), f"{script.name} needs a module docstring saying what it shows"
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains and mains[0].args.args[0].arg == "argv", f"{script.name}: def main(argv=None)"
    assert mains[0].args.defaults, f"{script.name}: main's argv must default to None"
    guards = [
        n for n in tree.body
        if isinstance(n, ast.If) and "__name__" in ast.unparse(n.test)
        and "__main__" in ast.unparse(n.test)
    ]  # fmt: skip
    assert guards, f"{script.name} needs an `if __name__ == '__main__':` guard"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_runs(script, tmp_path, forked_python):
    # as `python script.py` runs it, in a process of its own (forked: tests/_forked.py)
    result = forked_python.run(tmp_path, script=script, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), "an example should say what it found"
    assert not list(tmp_path.glob("*.png")), "figures only with --plot"


def test_angle_sets_shows_figure_1(capsys):
    results = _load("angle_sets").main([])
    # the FS-KDE only rotates (eq. 2) and its shape does not change ...
    assert results["rotation_error"] < 1e-12
    assert results["density_shape_change"] < 1e-10
    # ... while the histogram's does, even after the best whole-bin shift
    assert results["histogram_shape_change"] > 0.1
    # canonical forms (eq. 9) and canonical distances ignore the rotation
    assert results["canonical_change"] < 1e-12
    assert results["rotated set: canonical"] < 1e-9
    assert results["rotated set: canonical fk"] < 1e-9
    assert results["rotated set: distance"] > 0.1
    # for a different set, eq. 10 is an upper bound of the exact minimum over rotations
    exact, fk = results["another set: canonical"], results["another set: canonical fk"]
    assert 0 < exact <= fk + 1e-12 and exact < results["another set: distance"]
    assert "K = 9" in capsys.readouterr().out


def test_angle_sets_plot(tmp_path):
    path = tmp_path / "figure.png"
    _load("angle_sets").main(["--plot", str(path)])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.chdir(tmp_path)
    _load("angle_sets").main(["--plot"])
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_local_fields_values(tmp_path):
    results = _load("local_fields").main(["--size", "64", "--plot", str(tmp_path / "f.png")])
    assert results["cells_vs_dense"] < 1e-5  # stride 8 samples the dense box field
    assert results["rot90_error"] < 1e-6  # the rot90 rule holds exactly (float32)
    assert 0 < results["coherent_fraction"] < 1
    assert -180 <= results["peak_degrees"] < 180 and results["mean_weight"] > 0
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_local_fields_rejects_a_bad_size():
    with pytest.raises(SystemExit) as error:
        _load("local_fields").main(["--size", "4"])
    assert error.value.code == 2


def test_orientation_values(tmp_path):
    results = _load("orientation").main(["--size", "96", "--plot", str(tmp_path / "o.png")])
    # the central-difference bias: 1.54°, 0.67°, 0.37° at periods 8, 12, 16 (7.5° steps)
    assert results["grating_error_degrees_8"] < 1.6
    assert results["grating_error_degrees_12"] < 0.7
    assert results["grating_error_degrees_16"] < 0.4
    assert max(results[f"grating_1_minus_coherence_{p}"] for p in (8, 12, 16)) < 1e-9
    # the brick wall's mortar lines are horizontal and vertical
    assert results["coherent_fraction"] > 0.3 and results["near_axes_fraction"] > 0.9
    assert 0 < results["median_coherence"] < 1 and results["mean_energy"] > 0
    assert results["median_difference_degrees"] < 1.5  # skimage's structure tensor
    assert results["lazy_vs_eager"] < 1e-6
    assert (tmp_path / "o.png").stat().st_size > 1000


def test_orientation_rejects_a_bad_sigma():
    with pytest.raises(SystemExit) as error:
        _load("orientation").main(["--size", "96", "--sigma", "20"])
    assert error.value.code == 2


def test_segmentation_example_on_a_folder_of_tiles(tmp_path, capsys):
    """examples/segmentation.py --tiles: a colour mosaic of labelled tiles (named as
    NCT-CRC-HE-100K's), segmented; three differently coloured noise tiles come apart."""
    import numpy as np
    import skimage.io

    rng = np.random.default_rng(0)
    for name, colour in (
        ("ADI", [1.0, 0.9, 0.9]),
        ("LYM", [0.3, 0.1, 0.5]),
        ("STR", [0.9, 0.4, 0.6]),
    ):
        tile = (rng.random((64, 64, 1)) * 0.3 + 0.7) * colour
        skimage.io.imsave(tmp_path / f"{name}-X.png", (tile * 255).astype(np.uint8),
                          check_contrast=False)  # fmt: skip
    assert _load("segmentation").main(["--tiles", str(tmp_path), "--size", "96"]) == 0
    out = capsys.readouterr().out
    assert "mosaic of ADI, LYM, STR" in out
    automatic = float(out.split("automatic")[1].split("Rand index")[1].split()[0])
    assert automatic > 0.9


def test_cohort_example_labels_every_slide_alike(capsys):
    """examples/cohort.py: a model fitted on one slide labels each texture alike on the others
    (one label per row of the table; the darker one with --match-levels), reproduces in Python,
    and refuses another magnification."""
    assert _load("cohort").main([]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("texture"))) + 1 :][:3]
    for row in table:
        labels = row.split()[1:]
        assert len(labels) == 4 and len(set(labels)) == 1  # slides 1-4
    assert len({row.split()[1] for row in table}) == 3  # three textures, three labels
    rands = [float(x.split("Rand index")[1]) for x in lines if "Rand index" in x]
    # slides 1-3, the 0.25 µm slide4 read in 2 x 2 cells (0.965 / 0.968 / 0.968 / 0.975)
    assert len(rands) == 5 and min(rands[:4]) > 0.9
    assert rands[4] < rands[2] - 0.1  # the darker slide without --match-levels: 0.816
    assert "equals the command's labels: True" in captured.out
    assert "averaged over 2 x 2 pixels (0.5 µm)" in captured.err
    assert "--mpp 0.5" in captured.err and "refused (exit status 2)" in captured.out


def test_fluorescence_example_masks_the_tissue_and_matches_each_channel(capsys):
    """examples/fluorescence.py: the section found on its dark background, and the model of
    the first section labels the second, exposed otherwise channel by channel, as it labelled
    it before: with its channels matched one by one (0.999), not together (0.705) or not at
    all (0.897)."""
    assert _load("fluorescence").main([]) == 0
    out = capsys.readouterr().out
    assert "mask: fluorescence: tissue_mask, fluorescence" in out
    found = out.split("second section labelled: ")[1]
    assert float(found.split(",")[0]) > 0.99 and float(found.split(": ")[1].split()[0]) < 0.025
    rands = {what: float(out.split(what)[1].split("Rand index")[1].split()[0])
             for what in ("channels matched", "matched together", "not matched")}  # fmt: skip
    assert rands["channels matched"] > 0.99
    assert max(rands["matched together"], rands["not matched"]) < 0.95


def test_ome_zarr_example_shows_what_it_says(tmp_path):
    """The store's levels and transforms, its maps, each region's bars, and its OME-TIFF copy."""
    results = _load("ome_zarr").main(["--size", "256", "--out", str(tmp_path / "m.ome.zarr")])
    assert results["levels"] >= 2 and results["level0_error"] < 1e-6  # float32 of float64
    assert results["cell_um"] == 4.0 and results["first_centre_um"] == 1.75  # pixel 3.5 × 0.5
    assert results["region_0_error_degrees"] < 5 and results["region_1_error_degrees"] < 5
    assert results["tiff_levels_equal"] == 1.0 and results["tiff_pixel_um"] == 4.0


def test_photos_reads_pictures_and_writes_an_indexed_png():
    results = _load("photos").main(["--size", "192"])
    assert results["photo"] > 0.945  # measured 0.962 (the GIF decoded; its indices: 0.931)
    assert results["labels_read_back"] == 1.0  # PIL reads the PNG's labels back
    assert results["cutout"] > 0.94  # measured 0.957, with the model the PNG keeps
    assert results["margin_background"] == 1.0  # the transparent margin: label 0


def test_time_lapse_tracks_the_fibres_frame_by_frame():
    results = _load("time_lapse").main([])
    assert results["frames"] == 6.0  # the field keeps the stack's time dim
    assert results["max_error_deg"] < 2.0  # measured 0.75°: each frame's fibres' angle
    assert results["min_coherence"] > 0.5  # measured 0.62: stripes under noise
    assert results["lazy_difference"] < 1e-6  # a Dask stack gives the same field


def test_qupath_segments_inside_an_annotation_and_gives_the_textures_back():
    results = _load("qupath").main(["--size", "384"])
    assert results["outside_labelled"] == 0.0  # nothing outside the annotation
    assert results["inside_labelled"] == 1.0
    assert results["rand_inside"] > 0.9  # measured 0.966 at 512²
    assert results["regions_are_labels"] == 1.0  # the regions drawn back: the labels
    assert results["model_same_labels"] == 1.0  # --model of the GeoJSON labels alike
