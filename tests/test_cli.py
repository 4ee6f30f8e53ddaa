"""The xfskde command line: demo, coefficients, info and its errors."""

import subprocess
import sys

import numpy as np
import pytest
import tifffile
from skimage import data
from skimage import io as skio
from skimage.color import rgb2hsv

import xfskde
from xfskde.cli import main


def test_demo_writes_a_store_and_a_picture(tmp_path, capsys):
    assert main(["demo", "--output", str(tmp_path)]) == 0
    assert (tmp_path / "camera.png").stat().st_size > 10_000
    F = xfskde.open_coefficients(tmp_path / "camera.zarr")
    assert F.shape == (512, 512, 9)
    np.testing.assert_array_equal(
        F.values, xfskde.local_fskde(data.camera(), order=8, window="gaussian", size=3)
    )
    assert "camera.png" in capsys.readouterr().out


def test_demo_without_matplotlib_composes_the_png_with_numpy(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main(["demo", "--output", str(tmp_path)]) == 0
    picture = skio.imread(tmp_path / "camera.png")
    assert picture.shape == (512, 1024, 3)
    np.testing.assert_array_equal(picture[:, :512, 0], data.camera())  # the photograph, left
    F = xfskde.open_coefficients(tmp_path / "camera.zarr").values
    hue = rgb2hsv(picture[:, 512:])[..., 0]
    strong = np.abs(F[..., 1]) / np.abs(F[..., 0]) > 0.5  # clearly oriented pixels
    expected = np.mod(-np.angle(F[..., 1]), 2 * np.pi) / (2 * np.pi)
    gap = np.abs(hue[strong] - expected[strong])
    assert strong.sum() > 1000 and np.median(np.minimum(gap, 1 - gap)) < 0.01


def test_coefficients_and_info(tmp_path, capsys):
    tifffile.imwrite(tmp_path / "in.tif", data.camera(), tile=(128, 128))
    out = tmp_path / "out.zarr"
    args = ["coefficients", str(tmp_path / "in.tif"), str(out), "--order", "6", "--window",
            "box", "--size", "8", "--stride", "8", "--chunks", "256", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    assert "Mpx/s" in capsys.readouterr().out
    F = xfskde.open_coefficients(out)
    np.testing.assert_array_equal(
        F.values, xfskde.local_fskde(data.camera(), order=6, window="box", size=8, stride=8)
    )
    assert main(["info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "complete (4/4 blocks)" in text and "order     6" in text
    assert main([*args, "--resume"]) == 0  # nothing left to do
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["coefficients", "missing.tif", "o.zarr"], "no such image"),
        (["coefficients", "{tif}", "o.zarr", "--order", "0"], "order"),
        (["coefficients", "{tif}", "o.zarr", "--size", "-1"], "size"),
        (["coefficients", "{tif}", "o.zarr", "--chunks", "0"], "--chunks"),
        (["info", "missing.zarr"], "no such"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    tifffile.imwrite(tmp_path / "in.tif", data.camera()[:64, :64])
    argv = [a.format(tif=tmp_path / "in.tif") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    with pytest.raises((ValueError, OSError)):
        main(["--debug", *argv])


def test_console_script_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "xfskde.cli", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("demo", "coefficients", "info"):
        assert command in result.stdout


def test_every_subcommand_and_experiment_is_reachable():
    result = subprocess.run(
        [sys.executable, "-m", "xfskde.cli", "experiment", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    for name in ("segmentation", "patches", "detection"):
        assert name in result.stdout


def test_a_run_that_fails_before_any_block_leaves_nothing_in_the_way(tmp_path, capsys):
    """A NaN image under --nan-policy raise fails in its first block: the skeleton store it laid
    out is removed, so the corrected run needs neither --resume nor --overwrite."""
    pixels = np.random.default_rng(0).random((64, 64)).astype(np.float32)
    pixels[10, 10] = np.nan
    np.save(tmp_path / "nan.npy", pixels)
    out = tmp_path / "out.zarr"
    args = ["coefficients", str(tmp_path / "nan.npy"), str(out), "--no-progress"]
    assert main(args) == 2
    assert "NaN" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--nan-policy", "omit"]) == 0
    assert xfskde.open_coefficients(out).shape == (64, 64, 9)


def test_overwrite_replaces_a_file(tmp_path):
    np.save(tmp_path / "image.npy", data.camera()[:32, :32].astype(np.float32))
    out = tmp_path / "out.zarr"
    out.write_text("not a store")
    args = ["coefficients", str(tmp_path / "image.npy"), str(out), "--no-progress"]
    assert main(args) == 2  # exists
    assert main([*args, "--overwrite"]) == 0
    assert xfskde.open_coefficients(out).shape == (32, 32, 9)


def test_warnings_are_one_line_after_success_and_dropped_on_failure(tmp_path, capsys, monkeypatch):
    import warnings

    import xfskde.commands.info as info

    def warns_then(outcome):
        def run(args):
            warnings.warn("something to know\nover two lines", UserWarning, stacklevel=1)
            warnings.warn("something to know\nover two lines", UserWarning, stacklevel=1)
            if outcome is not None:
                raise outcome
            return 0

        return run

    monkeypatch.setattr(info, "run", warns_then(None))
    assert main(["info", "x"]) == 0
    assert capsys.readouterr().err == "xfskde info: warning: something to know over two lines\n"
    monkeypatch.setattr(info, "run", warns_then(xfskde.exceptions.ParameterError("bad")))
    assert main(["info", "x"]) == 2
    assert capsys.readouterr().err == "xfskde info: error: bad\n"  # the one line that matters


def test_a_bug_is_one_line_with_status_1_and_debug_shows_it(capsys, monkeypatch):
    import xfskde.commands.info as info

    monkeypatch.setattr(info, "run", lambda args: 1 // 0)
    assert main(["info", "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("xfskde info: internal error: ZeroDivisionError: ") and "--debug" in err
    assert len(err.splitlines()) == 1
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "info", "x"])


def test_sigterm_is_handled_only_while_a_command_runs(monkeypatch):
    import signal

    import xfskde.commands.info as info

    before = signal.getsignal(signal.SIGTERM)
    seen = []
    monkeypatch.setattr(info, "run", lambda args: seen.append(signal.getsignal(signal.SIGTERM)))
    assert main(["info", "x"]) == 0
    assert seen[0] is not before and signal.getsignal(signal.SIGTERM) is before
