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
