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


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # was: "...; use eps=None to keep every coefficient", which no command line can type
        (
            ["coefficients", "{u16}", "{out}", "--eps", "2"],
            "xfskde coefficients: error: --eps must lie strictly between 0 and 1 (for example "
            "1e-5), got 2.0; leave out --eps to keep every coefficient",
        ),
        # was: "... give a size of at most 1024"
        (
            ["maps", "{u16}", "{out}", "--size", "1e9"],
            "xfskde maps: error: --size 1000000000.0 is a window wider than this 64 x 64 image "
            "(a gaussian of sigma 1e+09 px): every pixel would see all of it, and the padding "
            "around the image grows with it; give a --size of at most 1024",
        ),
        # was: "... give a resolution of at most that, or 'auto'"
        (
            ["segment", "{rgb}", "{out}", "--textures", "2", "--resolution", "200"],
            "xfskde segment: error: --resolution 200 is larger than the image's shorter side "
            "(96 px): give a --resolution of at most that, or 'auto'",
        ),
        # was: "...: leave dims out"
        (
            ["info", "{u16}", "--dims", "y,x,c"],
            "xfskde info: error: --dims y,x,c names 3 axes; {u16} has 2 (shape (64, 64))",
        ),
        (
            ["info", "{rgb}", "--dims", "c,y,x"],
            "xfskde info: error: --dims c,y,x names the axes of an unlabelled array; {rgb} "
            "records its own, ('y', 'x', 'c'): leave --dims out",
        ),
    ],
)
def test_a_refusal_advises_the_option_not_the_parameter(images, tmp_path, capsys, argv, expected):
    names = {**images, "out": str(tmp_path / "out.zarr")}
    argv = [word.format(**names) for word in argv]
    status, line = refusal([*argv, *(["--no-progress"] if argv[0] != "info" else [])], capsys)
    assert status == 2
    assert line == expected.format(**names)
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # was: the current folder read as a Zarr store ("... is not a readable Zarr array")
        (["coefficients", "", "out.zarr"], "argument input: expected the input image's path"),
        # was: "exists; pass --resume ... or --overwrite" (the current folder, as the output)
        (["segment", "{rgb}", "", "--textures", "2"], "argument output: expected the output's"),
        # was: the maps written to a folder named " " in the current folder, exit status 0
        (["maps", "{u16}", " "], "argument output: expected the output's path or URL, got ' '"),
        (["info", ""], "argument STORE|IMAGE: expected a store's or an image's path or URL"),
    ],
)
def test_an_empty_path_is_refused(images, tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    argv = [word.format(**images) for word in argv]
    status, line = refusal([*argv, *(["--no-progress"] if argv[0] != "info" else [])], capsys)
    assert status == 2
    assert line.startswith(f"xfskde {argv[0]}: error: {expected}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rgb.tif", "u16.tif"]


def test_maps_refuses_order_1_naming_the_option(images, tmp_path, capsys):
    # was: "... need F_0 and F_2: at least 3 coefficients along k, got 2; compute the field
    # with order >= 2 (and eps <= exp(-4/order))", the library's words
    out = tmp_path / "out.ome.zarr"
    argv = ["maps", images["u16"], str(out), "--order", "1", "--no-progress"]
    status, line = refusal(argv, capsys)
    assert status == 2
    assert line == (
        "xfskde maps: error: --order 1 gives F_0 and F_1 only, and orientation and coherence "
        "need F_2: give --order 2 or more"
    )
    assert not out.exists()
    assert main(["maps", images["u16"], str(out), "--order", "2", "--no-progress"]) == 0
