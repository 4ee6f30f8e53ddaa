"""The command line at the edges of its options: each refusal is one line on stderr,
``xfskde CMD: error: ...`` naming the option, with exit status 2 (never a traceback, an
internal error, or a run that quietly ignores what it was given)."""

import numpy as np
import pytest
import tifffile

import xfskde
from xfskde.cli import main
from xfskde.exceptions import ParameterError


@pytest.fixture
def images(tmp_path):
    """A 64² uint16 TIFF and a 96² RGB TIFF, as a microscope and a camera write them."""
    rng = np.random.default_rng(0)
    tifffile.imwrite(tmp_path / "u16.tif", (rng.random((64, 64)) * 4000).astype(np.uint16))
    tifffile.imwrite(tmp_path / "rgb.tif", (rng.random((96, 96, 3)) * 255).astype(np.uint8))
    return {"u16": str(tmp_path / "u16.tif"), "rgb": str(tmp_path / "rgb.tif")}


def refusal(argv, capsys):
    """The exit status of ``xfskde argv`` and its one error line (argparse's usage lines,
    which come before it, left out); fails if there is not exactly one."""
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse: the usage, then one error line
        status = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    errors = [line for line in err.splitlines() if ": error: " in line]
    others = [
        line
        for line in err.splitlines()
        if line.strip() and ": error: " not in line and not line.startswith(("usage:", " "))
    ]
    assert len(errors) == 1 and not others, err
    return status, errors[0]


def test_a_gradient_scale_wider_than_the_image_is_refused_not_a_memory_error(
    images, tmp_path, capsys
):
    # was: "internal error: MemoryError: Unable to allocate 59.6 GiB", exit status 1 (and a
    # scale of 1000 on this 64² image took 8 minutes)
    for command, out in (("coefficients", "c.zarr"), ("maps", "m.ome.zarr")):
        argv = [command, images["u16"], str(tmp_path / out), "--gradient", "gaussian",
                "--gradient-scale", "1e9", "--no-progress"]  # fmt: skip
        status, line = refusal(argv, capsys)
        assert status == 2
        assert line == (
            f"xfskde {command}: error: --gradient-scale 1e+09 is wider than this 64 x 64 image: "
            "its Gaussian derivatives would see all of it, and the padding around the image "
            "grows with it; give a --gradient-scale of at most 64"
        )
        assert not (tmp_path / out).exists()


def test_a_gradient_scale_up_to_the_image_side_is_computed(images, tmp_path, capsys):
    out = tmp_path / "c.zarr"
    argv = ["coefficients", images["u16"], str(out), "--gradient", "gaussian",
            "--gradient-scale", "64", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    image = tifffile.imread(images["u16"])
    expected = xfskde.local_fskde(image, order=8, gradient="gaussian", gradient_scale=64)
    np.testing.assert_allclose(xfskde.open_coefficients(out).values, expected, rtol=1e-5)


def test_the_library_refuses_the_same_gradient_scale(images):
    image = tifffile.imread(images["u16"])
    with pytest.raises(ParameterError, match=r"gradient_scale 1e\+09 is wider than this 64 x 64"):
        xfskde.local_fskde(image, order=8, gradient="gaussian", gradient_scale=1e9)


@pytest.mark.parametrize(
    ("command", "option", "value", "expected"),
    [
        # was: series 0 read, as if --series had not been given
        ("coefficients", "--series", "", "argument --series: expected an image's index"),
        # was: "/tmp/... is not a readable Zarr array or group": '' taken for the folder
        (
            "coefficients",
            "--mask",
            "",
            "argument --mask: expected auto, none, fluorescence, "
            "brightfield or a mask's path or URL, got ''",
        ),
        # was: "source must be the path or URL of a result ..., got ''", no option named
        (
            "segment",
            "--model",
            "",
            "argument --model: expected the path or URL of an earlier "
            "result of xfskde segment, got ''",
        ),
        # was: run with the default number of workers
        (
            "segment",
            "--workers",
            "0",
            "argument --workers: expected a whole number, at least 1, got '0'",
        ),
        # was: "max_workers must be greater than 0" (the thread pool's)
        (
            "segment",
            "--workers",
            "-1",
            "argument --workers: expected a whole number, at least 1, got '-1'",
        ),
        (
            "coefficients",
            "--workers",
            "2.5",
            "argument --workers: expected a whole number, at least 1, got '2.5'",
        ),
        # was: "plane names 'z', ...", the parameter's name, not the option's
        ("coefficients", "--plane", "z=0", "--plane names 'z', which is not an axis of"),
        # was: "channels: '9' is no channel ..."
        (
            "segment",
            "--channels",
            "9",
            "--channels: '9' is no channel of this image (it has 3 "
            "unnamed channels; or an index from 0 to 2)",
        ),
    ],
)
def test_an_edge_value_is_one_line_naming_its_option(
    images, tmp_path, capsys, command, option, value, expected
):
    argv = [command, images["rgb"], str(tmp_path / "out.zarr"), option, value, "--no-progress"]
    if command == "segment":
        argv += ["--textures", "2"]
    status, line = refusal(argv, capsys)
    assert status == 2
    assert line.startswith(f"xfskde {command}: error: ")
    assert expected in line
    assert not (tmp_path / "out.zarr").exists()


def test_info_refuses_workers_below_one(images, capsys):
    # was: accepted (exit status 0), and with --verify a thread pool's own message
    status, line = refusal(["info", images["u16"], "--workers", "0"], capsys)
    assert status == 2
    assert line.endswith("error: argument --workers: expected a whole number, at least 1, got '0'")


def test_segment_refuses_resume_with_overwrite(images, tmp_path, capsys):
    # was: both accepted, and the run did one of them (coefficients and maps refuse both)
    argv = ["segment", images["rgb"], str(tmp_path / "out.zarr"), "--textures", "2",
            "--resume", "--overwrite", "--no-progress"]  # fmt: skip
    status, line = refusal(argv, capsys)
    assert status == 2
    assert line == "xfskde segment: error: argument --overwrite: not allowed with argument --resume"
    assert not (tmp_path / "out.zarr").exists()
