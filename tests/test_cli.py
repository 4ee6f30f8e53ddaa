"""The xfskde command line: demo, coefficients, segment, its options, help and errors."""

import argparse
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import tifffile
import xarray as xr
from skimage import data
from skimage import io as skio
from skimage.color import rgb2hsv

import xfskde
from xfskde.cli import build_parser, main
from xfskde.commands._options import nodata_option
from xfskde.datasets import random_textures
from xfskde.metrics import rand_index


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
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["status"] == "complete (4/4 blocks)" and rows["order"] == "6"
    assert main([*args, "--resume"]) == 0  # nothing left to do
    assert main(args) == 2
    assert "exists; pass --resume" in capsys.readouterr().err


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


def test_field_blocks_are_sized_by_their_coefficients(tmp_path, capsys):
    """``--chunks auto``: blocks of at most 64 MiB of coefficients (965 px at stride 1 and
    order 8, where 2048² blocks held 302 MB each), 2048 px from stride 3 on; a resume of a
    store written in other chunks adopts them, and says so (it printed the blocks it had
    planned, not the store's)."""
    from xfskde.commands._options import field_chunk
    from xfskde.local import LocalParameters

    assert field_chunk(LocalParameters(order=8, stride=1)) == 965
    assert field_chunk(LocalParameters(order=8, stride=2)) == 1930
    assert field_chunk(LocalParameters(order=8, stride=3)) == 2048
    assert field_chunk(LocalParameters(order=2, stride=1)) == 1672  # 3 coefficients
    tifffile.imwrite(tmp_path / "in.tif", np.tile(data.camera(), (2, 2)), tile=(256, 256))
    argv = ["coefficients", str(tmp_path / "in.tif"), str(tmp_path / "c.zarr"), "--no-progress"]
    assert main(argv) == 0  # a 1024² image: 965 on the file's 256-px tiles
    assert "chunks (768, 768), 4 of 4 blocks computed" in capsys.readouterr().out
    assert xfskde.io.open_blocks(tmp_path / "c.zarr").encoding["chunks"][:2] == (768, 768)
    assert main([*argv, "--chunks", "2048", "--overwrite"]) == 0  # one block
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0  # planned in 768², resumed in the store's 1024²
    said = capsys.readouterr().out
    assert "is complete already: nothing computed (" in said
    assert "chunks (1024, 1024), 1 block;" in said


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


def test_nan_pixels_of_a_file_with_a_nodata_value_are_omitted_unless_raise_is_given(
    tmp_path, capsys
):
    """A float image with a nodata value (-9999) and NaN pixels too: without --nan-policy both
    are missing, as local_fskde without nan_policy has it (NaN is what a float raster's
    readers give for missing); an explicit --nan-policy raise refuses the NaN pixels."""
    pixels = np.random.default_rng(0).random((64, 64)).astype(np.float32)
    pixels[:8, :8], pixels[40, 40] = -9999, np.nan
    np.save(tmp_path / "dem.npy", pixels)
    args = ["coefficients", str(tmp_path / "dem.npy"), "--nodata", "-9999", "--no-progress",
            "--order", "4", "--window", "box", "--size", "8", "--stride", "8"]  # fmt: skip
    assert main([*args[:2], str(tmp_path / "a.zarr"), *args[2:]]) == 0
    field = xfskde.open_coefficients(tmp_path / "a.zarr")
    expected = xfskde.local_fskde(pixels, order=4, window="box", size=8, stride=8, nodata=-9999)
    np.testing.assert_array_equal(field.values, expected)
    assert field.attrs["nan_policy"] == "omit"
    capsys.readouterr()
    raised = [*args[:2], str(tmp_path / "b.zarr"), *args[2:], "--nan-policy", "raise"]
    assert main(raised) == 2
    assert "NaN" in capsys.readouterr().err


def test_overwrite_replaces_a_file(tmp_path):
    np.save(tmp_path / "image.npy", data.camera()[:32, :32].astype(np.float32))
    out = tmp_path / "out.zarr"
    out.write_text("not a store")
    args = ["coefficients", str(tmp_path / "image.npy"), str(out), "--no-progress"]
    assert main(args) == 2  # exists
    assert main([*args, "--overwrite"]) == 0
    assert xfskde.open_coefficients(out).shape == (32, 32, 9)


def test_overwrite_never_replaces_what_the_command_reads(tmp_path, capsys):
    """--overwrite cleared the output before the input was read: named as the folder holding
    the slide, it deleted the slide and its neighbours; named as the input store, the store;
    named as the input TIFF, the slide became the labels. Each is refused up front, naming
    the input, and nothing is touched; so is a folder of the user's files that is no store."""
    image = (np.random.default_rng(0).random((48, 48, 3)) * 255).astype(np.uint8)
    project = tmp_path / "project"
    project.mkdir()
    tifffile.imwrite(project / "in.tif", image, photometric="rgb")
    (project / "notes.txt").write_text("mine")
    grey = xr.DataArray(image[..., 0], dims=("y", "x"))
    xfskde.io.write_coefficients(xfskde.local_fskde(grey, order=2), tmp_path / "in.zarr")
    before = sorted(p.name for p in project.iterdir())
    cases = [
        ["maps", str(project / "in.tif"), str(project)],  # the folder holding the input
        ["coefficients", str(tmp_path / "in.zarr"), str(tmp_path / "in.zarr")],
        ["segment", str(project / "in.tif"), str(project / "in.tif"), "--textures", "2"],
        ["segment", str(project / "in.tif"), str(tmp_path / "out.zarr"), "--textures", "2",
         "--mask", str(project / "in.tif")],  # a mask the output holds is read too
    ]  # fmt: skip
    cases[-1][2] = str(project)
    for args in cases:
        assert main([*args, "--overwrite", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert " the input " in err or " the mask " in err, err
        assert "--overwrite would replace what is read to compute it; name another output" in err
    assert sorted(p.name for p in project.iterdir()) == before
    assert (project / "notes.txt").read_text() == "mine"
    assert xfskde.open_coefficients(tmp_path / "in.zarr").shape == (48, 48, 3)
    # a folder of other files is no store to replace, on the command line or in Python
    other = tmp_path / "other.zarr"
    other.mkdir()
    (other / "data.csv").write_text("1,2")
    assert main(["maps", str(project / "in.tif"), str(other), "--overwrite"]) == 2
    assert "is a folder of other files, not a Zarr store" in capsys.readouterr().err
    field = xfskde.local_fskde(grey, order=2)
    with pytest.raises(xfskde.exceptions.ParameterError, match="overwrite=True replaces only"):
        xfskde.io.write_coefficients(field, other, overwrite=True)
    assert (other / "data.csv").read_text() == "1,2"
    # a store is replaced, as --overwrite says
    assert main(["coefficients", str(project / "in.tif"), str(tmp_path / "in.zarr"),
                 "--overwrite", "--no-progress", "--order", "2"]) == 0  # fmt: skip


def test_segment_resumes_a_fit_that_differs_by_another_machines_arithmetic(tmp_path, monkeypatch):
    """A resumed segment fits again; where BLAS took other kernels (a cluster's workers in
    another environment) the endmembers came out 1e-8 apart and the unmixing vectors 3e-5,
    and the store was refused as written with other parameters. The same fit by
    ``same_fit`` continues the store with the model it records; another seed is refused."""
    import dataclasses

    import xfskde.commands.segment as segment_command

    image, _ = random_textures((96, 96), seed=1)
    tifffile.imwrite(tmp_path / "in.tif", (image * 255).astype(np.uint8), photometric="rgb")
    out = tmp_path / "labels.zarr"
    args = ["segment", str(tmp_path / "in.tif"), str(out), "--textures", "3", "--no-progress"]
    assert main(args) == 0
    recorded = xfskde.segmentation.read_model(out)
    fit = segment_command.fit_textures

    def on_other_machine(*a, **k):
        model = fit(*a, **k)
        vectors = model.unmixing_vectors
        return dataclasses.replace(
            model, endmembers=np.asarray(model.endmembers) * (1 + 1e-8),
            unmixing_vectors=None if vectors is None else np.asarray(vectors) * (1 + 3e-5),
        )  # fmt: skip

    monkeypatch.setattr(segment_command, "fit_textures", on_other_machine)
    assert main([*args, "--resume"]) == 0
    kept = xfskde.segmentation.read_model(out)
    np.testing.assert_array_equal(kept.endmembers, recorded.endmembers)  # the store's model
    assert main([*args, "--resume", "--seed", "1"]) == 2


def test_warnings_are_one_line_once_when_raised_and_the_error_last(tmp_path, capsys, monkeypatch):
    """Each warning is printed as one line, once, when it is raised — before the work it
    concerns, not after a slide's ten minutes — and a failure's error is the last line."""
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
    assert capsys.readouterr().err == (
        "xfskde info: warning: something to know over two lines\nxfskde info: error: bad\n"
    )

    def warns_during_the_work(args):
        warnings.warn("the mask is not what you think", UserWarning, stacklevel=1)
        warnings.warn("use @, not *", PendingDeprecationWarning, stacklevel=1)  # a library's
        warnings.warn("old API", DeprecationWarning, stacklevel=1)  # programmers' business
        print("working", file=sys.stderr)  # the work, after the warning
        return 0

    monkeypatch.setattr(info, "run", warns_during_the_work)
    assert main(["info", "x"]) == 0
    assert capsys.readouterr().err == (
        "xfskde info: warning: the mask is not what you think\nworking\n"
    )


def test_a_bucket_s_refusal_and_an_unreachable_endpoint_are_the_user_s_to_fix(capsys, monkeypatch):
    """s3fs's 403 is a PermissionError that says only "Forbidden" (printed as the whole
    error), and botocore's EndpointConnectionError (a wrong AWS_ENDPOINT_URL) was "internal
    error … report it", status 1: each is one line naming what to check, status 2."""
    botocore = pytest.importorskip("botocore.exceptions")
    import xfskde.commands.info as info

    def forbidden(args):
        raise PermissionError("Forbidden")

    monkeypatch.setattr(info, "run", forbidden)
    assert main(["info", "s3://locked/scene.tif"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xfskde info: error: Forbidden: the storage service refused access")
    assert "AWS_ACCESS_KEY_ID" in err and len(err.splitlines()) == 1

    def unreachable(args):
        raise botocore.EndpointConnectionError(endpoint_url="http://127.0.0.1:1/b/scene.tif")

    monkeypatch.setattr(info, "run", unreachable)
    assert main(["info", "s3://b/scene.tif"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xfskde info: error: cannot reach the storage service (Could not")
    assert "AWS_ENDPOINT_URL" in err and len(err.splitlines()) == 1


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


# --------------------------------------------------------------------------------- --nodata


def test_nodata_option_takes_auto_a_number_or_none(capsys):
    assert nodata_option("auto") == "auto" and nodata_option("AUTO") == "auto"
    assert nodata_option("none") is None
    assert nodata_option("0") == 0 and type(nodata_option("0")) is int
    assert nodata_option("-9999") == -9999 and nodata_option("0.5") == 0.5
    assert math.isnan(nodata_option("nan"))  # NaN pixels are the missing ones
    for bad in ("zero", "", "inf", "1,2"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"'auto'.*a number.*'none'"):
            nodata_option(bad)
    with pytest.raises(SystemExit) as exit_:
        main(["coefficients", "in.tif", "out.zarr", "--nodata", "zero"])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("xfskde coefficients: error: argument --nodata: expected 'auto'")
    assert last.endswith("got 'zero'")


def _uint16_with_a_hole(tmp_path, tag: bool):
    """A uint16 photograph with no zero pixel but a 64 x 96 block of zeros, as a TIFF (with
    the GDAL_NODATA tag 0 when ``tag``)."""
    pixels = data.camera()[:256, :256].astype(np.uint16) * 200 + 1
    pixels[64:128, 64:160] = 0
    path = tmp_path / ("tagged.tif" if tag else "plain.tif")
    extratags = [(42113, "s", 0, "0", True)] if tag else []
    tifffile.imwrite(path, pixels, tile=(64, 64), extratags=extratags)
    return path, pixels


def test_coefficients_nodata_auto_number_and_none(tmp_path, capsys):
    plain, pixels = _uint16_with_a_hole(tmp_path, tag=False)
    tagged, _ = _uint16_with_a_hole(tmp_path, tag=True)
    params = {"order": 4, "window": "box", "size": 8, "stride": 8}
    argv = ["--order", "4", "--window", "box", "--size", "8", "--stride", "8", "--chunks", "128",
            "--no-progress"]  # fmt: skip
    # the API is the reference: zeros set to NaN and omitted, or every pixel data
    masked = xfskde.local_fskde(pixels, **params, nodata=0)
    unmasked = xfskde.local_fskde(pixels, **params, nodata=None)

    def run(source, name, *extra):
        assert main(["coefficients", str(source), str(tmp_path / name), *argv, *extra]) == 0
        return xfskde.open_coefficients(tmp_path / name)

    zero = run(plain, "zero.zarr", "--nodata", "0")
    np.testing.assert_array_equal(zero.values, masked)
    assert zero.attrs["input_nodata"] == 0 and zero.attrs["nan_policy"] == "omit"
    none = run(plain, "none.zarr", "--nodata", "none")
    np.testing.assert_array_equal(none.values, unmasked)
    assert zero.attrs["input_nodata_source"] == "nodata argument"
    assert none.attrs["input_nodata"] == "none"
    np.testing.assert_array_equal(run(plain, "auto.zarr").values, unmasked)  # no tag: none
    # the file's own nodata (GDAL_NODATA), and --nodata none overriding it
    np.testing.assert_array_equal(run(tagged, "tag-auto.zarr").values, masked)
    np.testing.assert_array_equal(run(tagged, "tag-none.zarr", "--nodata", "none").values, unmasked)
    # the cells on the hole's pixels have no value as nodata (NaN), and no gradient as data but
    # on its inner rim, where they see the step from the photograph to 0; the cells just
    # outside see the step as data, and nothing of it as nodata (1.24-4.6 x larger)
    F0_zero, F0_none = np.abs(zero.values[..., 0]), np.abs(none.values[..., 0])
    assert np.isnan(F0_zero[8:16, 8:20]).all() and np.isfinite(F0_zero[:8]).all()
    assert (F0_none[9:15, 9:19] == 0).all() and (F0_none[8, 8:20] > 1).all()
    rim = np.zeros(F0_zero.shape, bool)
    rim[7, 8:20] = rim[16, 8:20] = rim[8:16, 7] = rim[8:16, 20] = True
    assert (F0_none[rim] > 1.2 * F0_zero[rim]).all()
    # nodata is one of the store's parameters: a resume with another is refused
    capsys.readouterr()
    resumed = ["coefficients", str(plain), str(tmp_path / "zero.zarr"), *argv, "--resume"]
    assert main([*resumed, "--nodata", "none"]) == 2
    err = capsys.readouterr().err
    assert "other parameters" in err and 'input_nodata 0 in the store, "none" now' in err
    assert "use --overwrite to start again" in err and "=True" not in err  # the flag, not the API
    assert main([*resumed, "--nodata", "0"]) == 0


# ------------------------------------------------------------------- segment: missing pixels


def test_plane_of_a_stack_is_segmented_and_a_resume_keeps_it(tmp_path, capsys):
    """--plane z=N: a z-stack (OME-TIFF ZCYX) was refused by every command with no way in."""
    image, truth = random_textures((128, 128), seed=5)
    rgb = np.moveaxis((image * 255).astype(np.uint8), -1, 0)
    stack = np.stack([np.roll(rgb, 40 * z, axis=-1) for z in range(3)])  # z c y x
    path = tmp_path / "stack.ome.tif"
    tifffile.imwrite(path, stack, ome=True, metadata={"axes": "ZCYX"})
    out = tmp_path / "labels.zarr"
    argv = ["segment", str(path), str(out), "--textures", "3", "--no-progress"]
    assert main(argv) == 2
    assert "--plane z=0" in capsys.readouterr().err
    assert main([*argv, "--plane", "z=2", "--mask", "auto"]) == 0
    stored = xfskde.open_image(out)
    assert stored.attrs["source_plane"] == "z=2"
    direct = xfskde.segment(xfskde.open_image(path, plane={"z": 2}), 3, mask="auto")
    np.testing.assert_array_equal(stored.values, direct.values)
    # the command and the API record the mask alike (the command's was "an array")
    assert stored.attrs["mask"] == direct.attrs["mask"]
    assert direct.attrs["mask"].startswith("auto: tissue_mask, ")
    shifted = rand_index(np.roll(truth, 80, axis=-1), stored.values)
    assert shifted > rand_index(truth, stored.values) + 0.2  # plane 2's regions, not plane 0's
    assert main([*argv, "--plane", "z=1", "--mask", "auto", "--resume"]) == 2  # another plane
    assert "other parameters" in capsys.readouterr().err
    assert main([*argv, "--plane", "z=-1", "--mask", "auto", "--resume"]) == 0  # the same one
    field = ["coefficients", str(path), str(tmp_path / "f.zarr"), "--no-progress"]
    assert main([*field, "--plane", "t=0"]) == 2
    assert "not an axis" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: exit 2, the expected form named
        main([*field, "--plane", "z"])
    assert "AXIS=INDEX" in capsys.readouterr().err
    assert main([*field, "--plane", "Z=1"]) == 0
    np.testing.assert_array_equal(
        xfskde.open_coefficients(tmp_path / "f.zarr").values,
        xfskde.local_fskde(xfskde.open_image(path, plane={"z": 1}), order=8).values,
    )


def test_segment_labels_missing_pixels_as_background(tmp_path, capsys):
    """NaN pixels (in any channel) and pixels whose every channel is the nodata value get the
    background label 0; --nodata none segments the nodata pixels as data."""
    pixels = data.astronaut()[:96, :96].astype(np.float32) / 255
    pixels[10:20, 30:40, 1] = np.nan  # one channel is enough
    np.save(tmp_path / "nan.npy", pixels)
    out = tmp_path / "labels.zarr"
    argv = ["--textures", "2", "--sample", "2000", "--no-progress"]
    assert main(["segment", str(tmp_path / "nan.npy"), str(out), *argv]) == 0
    labels = xfskde.io.open_blocks(out).values
    assert not labels[10:20, 30:40].any() and (labels[:10] > 0).all()
    assert (labels > 0).sum() == 96 * 96 - 100

    # nodata pixels: a pixel whose every channel equals the GDAL_NODATA value
    rgb = data.astronaut()[:96, :96].copy()
    rgb[rgb == 0] = 1
    rgb[50:60, 5:25] = 0
    rgb[70, 70, 0] = 0  # one channel only: data
    tifffile.imwrite(tmp_path / "tagged.tif", rgb, extratags=[(42113, "s", 0, "0", True)])
    tifffile.imwrite(tmp_path / "plain.tif", rgb)
    tagged, plain = tmp_path / "tagged.zarr", tmp_path / "plain.zarr"
    assert main(["segment", str(tmp_path / "tagged.tif"), str(tagged), *argv]) == 0
    labels = xfskde.io.open_blocks(tagged)
    assert labels.attrs["input_nodata"] == 0 and labels.attrs["background_label"] == 0
    labels = labels.values
    assert not labels[50:60, 5:25].any() and labels[70, 70] > 0
    assert (labels > 0).sum() == 96 * 96 - 200
    assert main(["segment", str(tmp_path / "plain.tif"), str(plain), *argv, "--nodata", "0"]) == 0
    np.testing.assert_array_equal(xfskde.io.open_blocks(plain).values, labels)
    # --nodata none: the tag is ignored, the labels are those of the untagged file
    untagged = tmp_path / "untagged.zarr"
    assert main(["segment", str(tmp_path / "tagged.tif"), str(untagged), *argv, "--nodata",
                 "none"]) == 0  # fmt: skip
    same = tmp_path / "same.zarr"
    assert main(["segment", str(tmp_path / "plain.tif"), str(same), *argv[:-1]]) == 0
    captured = capsys.readouterr()
    assert "100% Completed" in captured.err  # the bar: on stderr
    np.testing.assert_array_equal(
        xfskde.io.open_blocks(untagged).values, xfskde.io.open_blocks(same).values
    )
    assert (xfskde.io.open_blocks(same).values > 0).all()


def test_segment_bins_the_colours_a_12_bit_tiff_holds(tmp_path):
    """A 12-bit camera's RGB TIFF (uint16 of values 0-4095): the colour bins cover its values
    (recorded in the labels' attrs), as --color-ranges unit would not."""
    image, truth = random_textures((128, 128), seed=4)
    twelve_bit = np.round(image / image.max() * 4095).astype(np.uint16)
    tifffile.imwrite(tmp_path / "camera.tif", twelve_bit, photometric="rgb")
    argv = ["--textures", "3", "--sample", "4000", "--no-progress"]
    rands = {}
    for ranges in ("auto", "unit"):
        out = tmp_path / f"{ranges}.zarr"
        main(["segment", str(tmp_path / "camera.tif"), str(out), *argv, "--color-ranges", ranges])
        labels = xfskde.io.open_blocks(out)
        rands[ranges] = rand_index(truth, labels.values)
        assert ("color_ranges" in labels.attrs) == (ranges == "auto")
    low, high, *_ = xfskde.io.open_blocks(tmp_path / "auto.zarr").attrs["color_ranges"]
    assert low == 0 and 0.05 < high <= 4095 / 65535
    assert rands["auto"] > 0.9 and rands["auto"] > rands["unit"] + 0.03


# ---------------------------------------------------------------------------------- progress


def test_progress_goes_to_stderr_and_stdout_keeps_the_summary(tmp_path, capsys):
    np.save(tmp_path / "image.npy", data.camera()[:128, :128].astype(np.float32))
    out = tmp_path / "out.zarr"
    assert main(["coefficients", str(tmp_path / "image.npy"), str(out), "--chunks", "64"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [captured.out.strip()]  # one line: the summary
    assert captured.out.startswith(f"wrote {out}: (128, 128, 9) complex64")
    assert "[" not in captured.out and "Completed" not in captured.out
    assert "100% Completed" in captured.err


# ---------------------------------------------------------------------------------- --help


def _subcommands(parser, prefix=()):
    """Every (sub)command's parser, with the words that reach it."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*prefix, name))


def _typed(value, several: bool) -> str:
    if isinstance(value, list | tuple):
        return (" " if several else ",").join(_typed(v, several) for v in value)
    return format(value, "g") if isinstance(value, float) else str(value)


def test_every_help_shows_every_default():
    checked = set()
    for words, parser in _subcommands(build_parser()):
        lines = parser.format_help().splitlines()
        for action in parser._actions:
            default = action.default
            if not action.option_strings or any(
                default is nothing for nothing in (None, False, argparse.SUPPRESS)
            ):
                continue
            first = next(i for i, line in enumerate(lines)
                         if line.lstrip().startswith(action.option_strings[0]))  # fmt: skip
            entry = [lines[first]]
            for line in lines[first + 1 :]:
                if not line.startswith("   ") or line.lstrip().startswith("-"):
                    break
                entry.append(line)
            text = " ".join(" ".join(entry).split())
            typed = _typed(default, action.nargs not in (None, "?"))
            said = (f"(default: {typed})", f"({typed})", f"default {typed}")
            assert any(s in text for s in said), (words, action.option_strings, text)
            checked.add((*words, action.option_strings[0]))
    assert {
        ("coefficients", "--size"), ("coefficients", "--nodata"), ("coefficients", "--chunks"),
        ("segment", "--size"), ("segment", "--chunks"), ("info", "--workers"),
        ("demo", "--output"), ("experiment", "patches", "--lengths"),
        ("experiment", "segmentation", "--window-sizes"),
    } <= checked  # fmt: skip
    # --level's default is None, so that segment --model can tell "not given" from level 0
    level = build_parser().parse_args(["coefficients", "in.tif", "out.zarr"])
    helps = {words: sub.format_help() for words, sub in _subcommands(build_parser())}
    assert level.level is None and "(default: 0)" in " ".join(helps[("coefficients",)].split())


# ------------------------------------------------------------------------------- task names


def test_gradient_operator_option(tmp_path):
    pixels = data.camera()[:96, :96]
    np.save(tmp_path / "in.npy", pixels)
    out = tmp_path / "g.zarr"
    argv = ["coefficients", str(tmp_path / "in.npy"), str(out), "--order", "4", "--window",
            "box", "--size", "5", "--gradient", "gaussian", "--gradient-scale", "1.5",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    expected = xfskde.local_fskde(pixels, order=4, window="box", size=5, gradient="gaussian",
                                  gradient_scale=1.5)  # fmt: skip
    stored = xfskde.open_coefficients(out)
    np.testing.assert_array_equal(stored.values, expected)
    assert (stored.attrs["gradient"], stored.attrs["gradient_scale"]) == ("gaussian", 1.5)
    central = [w for w in argv if w not in ("--gradient", "gaussian", "--gradient-scale", "1.5")]
    assert main([*central, "--resume"]) == 2  # central differences: other parameters


def test_segment_writes_a_photos_labels_as_an_indexed_png(tmp_path, capsys):
    """``xfskde segment photo.jpg labels.png``, what a vision researcher types, wrote a Zarr
    store named labels.png (a folder no viewer opens). Now an indexed PNG: each pixel's value
    its label, the library's label colours, label 0 transparent, and the model kept, so that
    ``--model labels.png`` labels another photo alike. A name of another picture format, and a
    PNG from a command that writes no labels, are refused before anything is computed."""
    from PIL import Image

    from xfskde.io import write_labels_png
    from xfskde.io.png import PNG_MAX_PIXELS, png_attrs
    from xfskde.segmentation import read_model

    image, truth = random_textures((128, 128), seed=100)
    Image.fromarray(np.round(image * 255).astype(np.uint8)).save(tmp_path / "photo.jpg")
    photo, out = str(tmp_path / "photo.jpg"), str(tmp_path / "labels.png")
    assert main(["segment", photo, out, "--textures", "3", "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    with Image.open(out) as picture:  # a second reader: PIL, as vision data sets are read
        assert picture.format == "PNG" and picture.mode == "P"
        labels = np.asarray(picture)
        palette = np.reshape(picture.getpalette()[:12], (4, 3))
        assert picture.info["transparency"] == 0  # the background, as NGFF and GDAL draw it
    expected = xfskde.segment(xfskde.open_image(photo), 3)
    np.testing.assert_array_equal(labels, expected.values)
    assert rand_index(truth, labels) > 0.9  # measured 0.96 (a JPEG of the 128² image)
    from xfskde._palette import BACKGROUND_COLOUR, label_rgba_8bit

    np.testing.assert_array_equal(palette, label_rgba_8bit(3, BACKGROUND_COLOUR)[:, :3])
    assert png_attrs(out)["n_textures"] == 3
    capsys.readouterr()
    assert main(["info", out]) == 0  # says what it holds and how to read it
    assert "the texture model of 3 textures; the labels are the palette's indices" in (
        capsys.readouterr().out
    )
    assert read_model(out).attrs() == read_model(expected).attrs()
    again = str(tmp_path / "again.png")
    assert main(["segment", photo, again, "--model", out, "--no-progress"]) == 0
    with Image.open(again) as picture:
        np.testing.assert_array_equal(np.asarray(picture), labels)
    # refused before anything is computed
    capsys.readouterr()
    for argv, message in [
        (["segment", photo, out, "--textures", "3"], "exists; pass --overwrite"),
        (["segment", photo, out, "--textures", "3", "--resume"], "a PNG file, written whole"),
        (["segment", photo, str(tmp_path / "l.jpg"), "--textures", "3"], "writes no .jpg"),
        (["coefficients", photo, str(tmp_path / "maps.png")], "a PNG holds a picture"),
        (
            ["segment", photo, "http://127.0.0.1:9/l.png", "--textures", "3"],
            "a PNG output at http:// cannot be written (a read-only server)",
        ),
    ]:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert not (tmp_path / "l.jpg").exists() and not (tmp_path / "maps.png").exists()
    # the writer itself: labels it cannot hold are refused in one line
    with pytest.raises(xfskde.exceptions.ParameterError, match="integers in 0-255"):
        write_labels_png(np.full((4, 4), 300), tmp_path / "x.png")
    with pytest.raises(xfskde.exceptions.DimensionError, match="more than image readers"):
        write_labels_png(np.zeros((1, PNG_MAX_PIXELS + 1), np.uint8), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
    Image.fromarray(labels).save(tmp_path / "plain.png")  # a PNG that records no model
    with pytest.raises(xfskde.exceptions.ParameterError, match="model"):
        read_model(tmp_path / "plain.png")
    # NumPy labels record no model: given with them, it is kept
    with Image.open(photo) as picture:
        found, model = xfskde.segment(picture, 3, return_model=True)
    write_labels_png(found, tmp_path / "notebook.png", model=model)
    assert read_model(tmp_path / "notebook.png").attrs() == model.attrs()


def test_advice_names_the_commands_options_not_the_apis_keywords(tmp_path, capsys, monkeypatch):
    """A refusal raised from the command line tells the user which option to give: NaN pixels
    under maps' default say --nan-policy omit (they said nan_policy='omit', a Python keyword
    that no command takes)."""
    monkeypatch.chdir(tmp_path)
    image = np.ones((16, 16), np.float32)
    image[4, 5] = np.nan
    tifffile.imwrite(tmp_path / "nan.tif", image)
    assert main(["maps", "nan.tif", "out.ome.zarr", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "xfskde maps: error: image contains NaN or infinite pixels; pass --nan-policy omit to "
        "give every gradient that touches them zero weight, or fill them first\n"
    )
    stack = np.zeros((3, 16, 16), np.uint8)  # (z, y, x): which plane?
    tifffile.imwrite(
        tmp_path / "stack.tif", stack, photometric="minisblack", metadata={"axes": "QYX"}
    )
    assert main(["segment", "stack.tif", "s.zarr", "--textures", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("choose one plane with --plane q=0\n") and "plane={" not in err


@pytest.mark.parametrize(
    ("command", "message", "said"),
    [
        ("segment", "n_textures must be an integer from 1 to 12, got 0",
         "--textures must be an integer from 1 to 12, got 0"),
        ("segment", "only 1 pixels could be sampled, fewer than n_textures = 3: give more",
         "only 1 pixels could be sampled, fewer than --textures 3: give more"),
        ("segment", "color_bins must be an integer >= 2 and <= 256, got 1",
         "--color-bins must be an integer >= 2 and <= 256, got 1"),
        ("segment", "seed must be an integer from 0 to 2**32 - 1, got -1",
         "--seed must be an integer from 0 to 2**32 - 1, got -1"),
        ("segment", "values span 0 to 1: pass match_levels=True (--match-levels) to map them",
         "values span 0 to 1: pass --match-levels to map them"),
        ("segment", "metric='within' needs the covariance: pass metric='euclidean'",
         "--metric within needs the covariance: pass --metric euclidean"),
        ("segment", "large values: give it as nodata=-3.4e+38 (--nodata=-3.4e+38) if so",
         "large values: give it as --nodata=-3.4e+38 if so"),
        ("maps", "name its axes, dims=('c', 'y', 'x') for colour or dims=('z', 'y', 'x') with "
         "plane={'z': 0} for a stack (--dims c,y,x, or --dims z,y,x --plane z=0, on the command "
         "line)", "name its axes, --dims c,y,x for colour or --dims z,y,x with --plane z=0 for a "
         "stack"),
        ("maps", "out.zarr exists; pass resume=True to finish it or overwrite=True to replace it",
         "out.zarr exists; pass --resume to finish it or --overwrite to replace it"),
        ("maps", "the nodata value is not a number; pass nodata= a number, or nodata=None",
         "the nodata value is not a number; pass --nodata a number, or --nodata none"),
        # a Python call beside the option that does the same: the option alone (it read
        # "open_image(--plane...)" and "open_image(..., --mpp 0.5)")
        ("segment", "labels drawn on plane z=1: open it at theirs (--plane, open_image(plane=...))",
         "labels drawn on plane z=1: open it at theirs (--plane)"),
        ("segment", "open the image at 0.5 µm (open_image(..., mpp=0.5), `xfskde segment --mpp "
         "0.5`), or fit a model", "open the image at 0.5 µm (`xfskde segment --mpp 0.5`), or "
         "fit a model"),
        # what the command has no option for is left as it is; a keyword given None is the
        # option left out
        ("maps", "n_textures must be an integer, got 0", "n_textures must be an integer, got 0"),
        ("maps", "use eps=None to keep all", "leave out --eps to keep all"),
        ("info", "pass nan_policy='omit'", "pass nan_policy='omit'"),
        ("segment", "cannot read /data/color_bins.tif", "cannot read /data/color_bins.tif"),
    ],
)  # fmt: skip
def test_the_apis_keywords_are_said_as_options(command, message, said):
    from xfskde.cli import _as_options, _options

    assert _as_options(message, _options(build_parser(), command)) == said


SEGMENT_FORMS = (
    "*.zarr or a name without a suffix (a Zarr store); *.ome.zarr (OME-Zarr); *.ome.tif "
    "(OME-TIFF); *.tif (GeoTIFF); *.png (an indexed PNG); or *.geojson, *.gpkg, *.shp or *.fgb "
    "(regions)"
)
MAPS_FORMS = (
    "*.ome.zarr or a name without a suffix (OME-Zarr); *.ome.tif (OME-TIFF); *.tif (GeoTIFF); "
    "or *.png (the maps as a picture)"
)


@pytest.mark.parametrize(
    ("command", "name", "suffix", "forms"),
    [
        ("segment", "out.txt", ".txt", SEGMENT_FORMS),
        ("segment", "labels.JSON", ".json", SEGMENT_FORMS),
        ("segment", "labels.csv", ".csv", SEGMENT_FORMS),
        ("maps", "maps.nc", ".nc", MAPS_FORMS),
        ("maps", "maps.h5", ".h5", MAPS_FORMS),
        ("maps", "maps.jpeg", ".jpeg", MAPS_FORMS),
        ("coefficients", "f.jp2", ".jp2", "*.zarr or a name without a suffix (a Zarr store)"),
        ("coefficients", "f.vrt", ".vrt", "*.zarr or a name without a suffix (a Zarr store)"),
        ("coefficients", "f.shp.zip", ".shp.zip", "*.zarr or a name without a suffix (a Zarr "
         "store)"),
    ],
)  # fmt: skip
def test_an_output_named_as_a_file_the_command_does_not_write_is_refused(
    tmp_path, capsys, command, name, suffix, forms
):
    """``xfskde segment in.png out.txt`` wrote a Zarr store named out.txt: an output whose
    suffix is a file format the command does not write is refused before anything is read,
    naming the outputs it writes."""
    textures = ["--textures", "2"] if command == "segment" else []
    argv = [command, str(tmp_path / "missing.png"), str(tmp_path / name), *textures]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"xfskde {command}: error: {tmp_path / name}: xfskde {command} writes no {suffix} file: "
        f"name the output {forms}\n"
    )
    assert not (tmp_path / name).exists()


def test_an_output_without_a_suffix_or_of_an_unknown_one_is_a_store(tmp_path, capsys):
    photo = str(tmp_path / "photo.tif")
    tifffile.imwrite(photo, (random_textures((32, 32), seed=1)[0] * 255).astype(np.uint8))
    for name in ("labels", "labels.zarr", "run.v2"):
        argv = ["segment", photo, str(tmp_path / name), "--textures", "2", "--size", "2"]
        assert main([*argv, "--no-progress"]) == 0, capsys.readouterr().err
        assert xfskde.io.open_blocks(tmp_path / name).shape == (32, 32)


@pytest.mark.parametrize("command", ["segment", "maps", "coefficients"])
def test_an_output_folder_that_cannot_be_written_in_is_refused_before_the_work(
    tmp_path, capsys, command
):
    """An output in a folder that does not exist was found only after the fit and the whole
    computation, in words about GDAL's temporary file (``labels.tif.partial.gtiff.tmp``):
    refused before the input is read — it is missing here, and reading it would be the
    error — naming the folder. A Zarr store's missing folders are created as Zarr creates
    them, in a folder that must be one (a file there is refused)."""
    textures = ["--textures", "2"] if command == "segment" else []
    names = {"segment": ["labels.tif", "labels.gpkg", "labels.geojson", "labels.png"],
             "maps": ["maps.tif", "maps.png", "maps.ome.zarr"],
             "coefficients": ["field.zarr"]}[command]  # fmt: skip
    (tmp_path / "a file").write_text("")
    for name in names:
        for folder, why in [("nowhere", "does not exist: create it first"),
                            ("a file", "is not a folder")]:  # fmt: skip
            if name.endswith("zarr") and folder == "nowhere":
                continue  # created
            output = tmp_path / folder / name
            argv = [command, str(tmp_path / "missing.tif"), str(output), *textures]
            assert main(argv) == 2
            assert capsys.readouterr().err == (
                f"xfskde {command}: error: cannot write {output}: the folder "
                f"{tmp_path / folder} {why}\n"
            )
    store = tmp_path / "a file" / "deeper" / "field.zarr"
    assert main([command, str(tmp_path / "missing.tif"), str(store), *textures]) == 2
    assert f"the folder {tmp_path / 'a file'} is not a folder" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_output_folder_is_refused_before_the_work(tmp_path, capsys):
    """A read-only folder, for a file output and for the folder a Zarr store is created in."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        for output in (folder / "labels.tif", folder / "new" / "labels.zarr"):
            argv = ["segment", str(tmp_path / "missing.tif"), str(output), "--textures", "2"]
            assert main(argv) == 2
            assert f"the folder {folder} is not writable" in capsys.readouterr().err
    finally:
        folder.chmod(0o755)


def test_python_dash_m_runs_the_command(tmp_path):
    """``python -m xfskde`` failed ("No module named xfskde.__main__"): it runs the same
    command as the ``xfskde`` script, its name and exit status included."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "xfskde", "--version"], capture_output=True,
                          text=True, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and xfskde.__version__ in done.stdout, done
    refused = subprocess.run([sys.executable, "-m", "xfskde", "maps", str(tmp_path / "none.tif"),
                              str(tmp_path / "m.tif")], capture_output=True, text=True)  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.startswith("xfskde maps: "), refused.stderr
