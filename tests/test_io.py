"""Images in (TIFF, OME-TIFF pyramids, Zarr, OME-Zarr, PNG/NPY) and coefficient stores out."""

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from skimage import data

import xfskde
import xfskde.io
import xfskde.lazy
from xfskde import cli
from xfskde.datasets import random_textures
from xfskde.exceptions import (
    DimensionError,
    ImageReadError,
    ParameterError,
    StoreExistsError,
    StoreFormatError,
    StoreIncompleteError,
    StoreParametersError,
    XfskdeError,
)
from xfskde.io import store_status
from xfskde.lazy import plan_chunks

CAMERA = data.camera()


def test_tiled_tiff_is_read_lazily_on_whole_tiles(tmp_path):
    path = tmp_path / "slide.tif"
    tifffile.imwrite(path, CAMERA, tile=(128, 128))
    image = xfskde.open_image(path, chunks=300)
    assert image.dims == ("y", "x") and image.dtype == np.uint8 and image.name == "slide"
    assert image.data.chunks == ((256, 256), (256, 256))  # a multiple of the 128 tiles
    graph = dict(image.data.__dask_graph__())
    assert not [v for v in graph.values() if isinstance(v, np.ndarray) and v.size > 1000]
    np.testing.assert_array_equal(image.values, CAMERA)


def test_pyramid_level_and_rgb_tiff(tmp_path):
    path = tmp_path / "pyramid.ome.tif"
    rgb = data.astronaut()
    with tifffile.TiffWriter(path) as tif:
        tif.write(rgb, tile=(128, 128), subifds=1, photometric="rgb")
        tif.write(rgb[::2, ::2], tile=(128, 128), subfiletype=1, photometric="rgb")
    full = xfskde.open_image(path)
    half = xfskde.open_image(path, level=1)
    assert full.dims == ("y", "x", "c") and full.shape == (512, 512, 3)
    np.testing.assert_array_equal(half.values, rgb[::2, ::2])
    with pytest.raises(ParameterError, match="level"):
        xfskde.open_image(path, level=5)


ASTRONAUT = data.astronaut()
LAYOUTS = {
    # name: (array, tifffile.imwrite options, how xfskde._tiff should read it)
    "tiled, ragged edge tiles": (CAMERA[:500, :470], {"tile": (64, 128)}, "memory map"),
    "strips, ragged last strip": (CAMERA[:301], {"rowsperstrip": 37}, "memory map"),
    "tiled float32": (CAMERA[:200, :200].astype(np.float32) / 7, {"tile": (32, 48)}, "memory map"),
    "tiled RGB": (ASTRONAUT[:300, :333], {"tile": (64, 64), "photometric": "rgb"}, "memory map"),
    "tiled big-endian uint16": (CAMERA[:100, :90].astype(">u2") * 200, {"tile": (32, 32),
                                "byteorder": ">"}, "decode"),
    "tiled RGB, zlib": (ASTRONAUT[:300, :333], {"tile": (64, 64), "compression": "zlib",
                                                "photometric": "rgb"}, "decode"),
    "strips, lzw": (CAMERA[:301], {"rowsperstrip": 37, "compression": "lzw"}, "decode"),
    "tiled RGB, JPEG (as in SVS)": (ASTRONAUT[:200, :200], {"tile": (64, 64),
                                    "compression": "jpeg", "photometric": "rgb"}, "decode"),
    "planar RGB": (np.moveaxis(ASTRONAUT[:100, :90], -1, 0),
                   {"photometric": "rgb", "planarconfig": "separate", "tile": (32, 32)}, "zarr"),
}  # fmt: skip


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_tiff_layouts_read_exactly_whatever_the_chunks(tmp_path, layout):
    from xfskde.io._location import locate
    from xfskde.io._tiff import tiff_level

    array, options, how = LAYOUTS[layout]
    path = tmp_path / "layout.tif"
    tifffile.imwrite(path, array, **options)
    expected = tifffile.imread(path)
    location = locate(path)
    reader = tiff_level(location, 0, location.version())
    used = "zarr" if isinstance(reader, zarr.Array) else "memory map" if reader._raw \
        else "decode"  # fmt: skip
    assert used == how
    for chunks in (None, 50, {"y": 70, "x": 33}):
        image = xfskde.open_image(path, chunks=chunks)  # dims in the file's order
        np.testing.assert_array_equal(image.values, expected)


def test_zarr_array_group_and_ome_zarr_multiscale(tmp_path):
    arr = zarr.create_array(tmp_path / "a.zarr", shape=CAMERA.shape, chunks=(100, 100),
                            dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    arr[...] = CAMERA
    image = xfskde.open_image(tmp_path / "a.zarr", chunks=250)
    assert image.data.chunks[0][0] == 200
    np.testing.assert_array_equal(image.values, CAMERA)

    group = zarr.open_group(tmp_path / "ome.zarr", mode="w")
    for i, level in enumerate([CAMERA, CAMERA[::2, ::2]]):
        a = group.create_array(str(i), shape=level.shape, chunks=(64, 64), dtype="uint8")
        a[...] = level
    group.attrs["multiscales"] = [
        {
            "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
            "datasets": [{"path": "0"}, {"path": "1"}],
        }
    ]
    np.testing.assert_array_equal(
        xfskde.open_image(tmp_path / "ome.zarr", level=1), CAMERA[::2, ::2]
    )

    plain = zarr.open_group(tmp_path / "two.zarr", mode="w")
    plain.create_array("a", shape=(4, 4), dtype="uint8")
    plain.create_array("b", shape=(4, 4), dtype="uint8")
    with pytest.raises(ImageReadError, match="arrays"):
        xfskde.open_image(tmp_path / "two.zarr")
    with pytest.raises(ParameterError, match="level"):
        xfskde.open_image(tmp_path / "ome.zarr", level=2)


@pytest.mark.filterwarnings("ignore:Consolidated metadata")
def test_a_float_image_xarray_wrote_to_zarr_keeps_its_fill_value_as_a_number(tmp_path):
    """xarray writes a float variable's _FillValue to Zarr v3 as the base64 text of its bytes
    ('AAAAAAAA+H8=' for NaN): open_image copied it as text, and every float image xarray wrote
    was refused as having a nodata value that is not a number. It is decoded as xarray decodes
    it: NaN's NaN pixels are omitted, -9999's pixels are missing."""
    pixels = np.random.default_rng(0).random((64, 64)).astype(np.float32)
    pixels[:8, :8] = np.nan
    xr.DataArray(pixels, dims=("y", "x"), name="img").to_dataset().to_zarr(tmp_path / "nan.zarr")
    assert isinstance(zarr.open_group(tmp_path / "nan.zarr")["img"].attrs["_FillValue"], str)
    image = xfskde.open_image(tmp_path / "nan.zarr")
    assert np.isnan(image.attrs["_FillValue"])
    params = dict(order=2, window="box", size=4, stride=4)
    field = xfskde.local_fskde(image, **params)
    expected = xfskde.local_fskde(pixels, **params, nan_policy="omit")
    np.testing.assert_array_equal(field.values, expected)
    dem = np.where(np.isnan(pixels), np.float32(-9999), pixels * 100)
    stored = xr.DataArray(dem, dims=("y", "x"), name="dem")
    stored.encoding["_FillValue"] = -9999.0
    stored.to_dataset().to_zarr(tmp_path / "dem.zarr")
    image = xfskde.open_image(tmp_path / "dem.zarr")
    assert image.attrs["_FillValue"] == -9999.0 and image.values[0, 0] == -9999
    field = xfskde.local_fskde(image, **params)
    assert field.attrs["input_nodata"] == -9999
    np.testing.assert_array_equal(field.values, xfskde.local_fskde(dem, **params, nodata=-9999))


def test_channel_names_of_an_ome_tiff_and_an_ome_zarr_are_the_c_coordinate(tmp_path, capsys):
    """A fluorescence image's channels by name (OME-XML ``Channel Name``, OME-Zarr's omero
    ``label``): the ``c`` coordinate, at every level, and a line of ``xfskde info``; names
    that repeat kept (test_ome_channels: not picked by), none for an RGB image's samples."""
    from xfskde.cli import main

    names = ["DAPI", "CD3", "autofluorescence"]
    cyx = np.arange(3 * 64 * 48, dtype=np.uint16).reshape(3, 64, 48)
    with tifffile.TiffWriter(tmp_path / "panel.ome.tif") as tif:
        tif.write(cyx, subifds=1, metadata={"axes": "CYX", "Channel": {"Name": names}})
        tif.write(cyx[:, ::2, ::2], subfiletype=1)
    for level in (0, 1):
        image = xfskde.open_image(tmp_path / "panel.ome.tif", level=level)
        assert image.dims == ("c", "y", "x") and list(image.c.values) == names
    assert main(["info", str(tmp_path / "panel.ome.tif")]) == 0
    assert "channels    DAPI, CD3, autofluorescence" in capsys.readouterr().out
    tifffile.imwrite(tmp_path / "same.ome.tif", cyx,
                     metadata={"axes": "CYX", "Channel": {"Name": ["a", "a", "b"]}})  # fmt: skip
    assert list(xfskde.open_image(tmp_path / "same.ome.tif").c.values) == ["a", "a", "b"]
    rgb = np.zeros((32, 32, 3), np.uint8)
    tifffile.imwrite(tmp_path / "rgb.ome.tif", rgb, photometric="rgb", metadata={"axes": "YXS"})
    assert "c" not in xfskde.open_image(tmp_path / "rgb.ome.tif").coords
    _ome_zarr_panel(tmp_path / "panel.ome.zarr", cyx, names)
    assert list(xfskde.open_image(tmp_path / "panel.ome.zarr").c.values) == names


def _ome_zarr_panel(path, cyx, names, chunks=None):
    """An OME-Zarr (NGFF 0.5) image of one level, (c, y, x) of 0.5 µm pixels, its channels
    named (omero labels)."""
    group = zarr.open_group(path, mode="w")
    group.create_array("0", data=cyx, **({} if chunks is None else {"chunks": chunks}))
    group.attrs["ome"] = {
        "version": "0.5",
        "multiscales": [{"axes": [{"name": "c", "type": "channel"},
                                  {"name": "y", "type": "space"},
                                  {"name": "x", "type": "space"}],
                         "datasets": [{"path": "0", "coordinateTransformations": [
                             {"type": "scale", "scale": [1.0, 0.5, 0.5]}]}]}],
        "omero": {"channels": [{"label": n} for n in names]},
    }  # fmt: skip


def test_channels_are_read_by_name_or_index_and_a_mask_reads_the_same(tmp_path, capsys):
    """open_image(channels=) / --channels: the channels read, by name where the file names
    them or by index, in the order given, recorded; a fluorescence mask found on the file's
    low level reads the same channels (its levels one per channel); what is not there is
    refused in one line naming what is."""
    from xfskde.cli import main
    from xfskde.datasets import section_in_fluorescence

    counts, _ = section_in_fluorescence(seed=0)
    names = ["DAPI", "marker", "autofluorescence"]
    cyx = np.ascontiguousarray(np.moveaxis(counts, -1, 0))
    with tifffile.TiffWriter(tmp_path / "panel.ome.tif") as tif:
        tif.write(cyx, subifds=1, tile=(256, 256),
                  metadata={"axes": "CYX", "Channel": {"Name": names}})  # fmt: skip
        tif.write(cyx[:, ::4, ::4], subfiletype=1, tile=(256, 256))
    path = tmp_path / "panel.ome.tif"
    two = xfskde.open_image(path, channels=["marker", "DAPI"])
    assert list(two.c.values) == ["marker", "DAPI"] and two.attrs["source_channels"] == (
        '["marker", "DAPI"]'
    )
    np.testing.assert_array_equal(two.values, cyx[[1, 0]])
    by_index = xfskde.open_image(path, channels=[2, "0"])  # a string of digits: an index
    assert list(by_index.c.values) == ["autofluorescence", "DAPI"]
    mask = xfskde.masks.tissue_mask(two, method="fluorescence", max_side=256)
    assert len(mask.attrs["background_level"]) == 2 and mask.attrs["source_level"] == 1
    plain = xfskde.open_image(np.zeros((32, 32, 3), np.uint8), channels=[0, 2])
    assert plain.sizes["c"] == 2 and plain.attrs["source_channels"] == "[0, 2]"
    # every channel in order is the image as it is, recorded as such (a resume with
    # --channels 0,1,2 of a store begun without was refused for the record alone)
    every = xfskde.open_image(path, channels=["DAPI", "marker", "autofluorescence"])
    xr.testing.assert_identical(every, xfskde.open_image(path))
    assert "source_channels" not in xfskde.open_image(path, channels=[0, 1, 2]).attrs
    for channels, match in (
        (["CD8"], r"'CD8' is no channel.*DAPI, marker, autofluorescence"),
        (["DAPI", 0], "each channel once"),
        ([3], "index from 0 to 2"),
    ):
        with pytest.raises(ParameterError, match=match):
            xfskde.open_image(path, channels=channels)
    with pytest.raises(ParameterError, match="no colour dim"):
        xfskde.open_image(np.zeros((32, 32)), channels=[0])
    with pytest.raises(ParameterError, match="3 unnamed channels"):
        xfskde.open_image(np.zeros((32, 32, 3)), channels=["DAPI"])
    out = tmp_path / "labels.zarr"
    argv = ["segment", str(path), str(out), "--textures", "2", "--channels", "DAPI,marker",
            "--mask", "fluorescence", "--sample", "3000", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    labels = xfskde.io.open_blocks(out)
    assert labels.attrs["source_channels"] == '["DAPI", "marker"]'
    assert labels.attrs["fit_channel_names"] == '["DAPI", "marker"]'
    capsys.readouterr()
    argv = [*argv[:2], str(tmp_path / "other.zarr"), "--textures", "2", "--channels", "CD8"]
    assert main([*argv, "--no-progress"]) == 2
    assert "'CD8' is no channel of this image" in capsys.readouterr().err


def test_channels_not_picked_are_never_read(tmp_path):
    """open_image(channels=["CD3"]) of an OME-Zarr image stored one channel per chunk, or of
    a tiled OME-TIFF of a page per channel, read (and decoded) every channel: a damaged chunk
    of DAPI, not asked for, failed the read of CD3."""
    names = ["DAPI", "CD3", "PanCK"]
    cyx = np.random.default_rng(3).integers(100, 1000, (3, 128, 128), dtype=np.uint16)
    _ome_zarr_panel(tmp_path / "panel.ome.zarr", cyx, names, chunks=(1, 64, 64))
    (tmp_path / "panel.ome.zarr" / "0" / "c" / "0" / "1" / "1").write_bytes(b"garbage")
    path = tmp_path / "panel.ome.tif"
    tifffile.imwrite(path, cyx, tile=(64, 64), compression="zlib",
                     metadata={"axes": "CYX", "Channel": {"Name": names}})  # fmt: skip
    with tifffile.TiffFile(path) as tif:  # DAPI's last tile: its page, then the tile
        offset = tif.pages[0].dataoffsets[3]
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"garbage!")
    for source in (path, tmp_path / "panel.ome.zarr"):
        with pytest.raises((RuntimeError, ImageReadError)):  # the damage is there to read
            xfskde.open_image(source).compute()
        picked = xfskde.open_image(source, channels=["CD3", "PanCK"], chunks=64)
        assert picked.data.chunks[0] == (2,)  # the channels picked: one chunk, as ever
        np.testing.assert_array_equal(picked.values, cyx[[1, 2]])


def test_arrays_are_wrapped_with_named_dims_and_aligned_chunks():
    rgb = data.astronaut()
    image = xfskde.open_image(rgb, chunks=200)
    assert image.dims == ("y", "x", "c") and image.data.chunks == ((200, 200, 112),) * 2 + ((3,),)
    chw = da.from_array(rgb.transpose(2, 0, 1), chunks=(1, 100, 100))
    planar = xfskde.open_image(chw, chunks=260, dims=("c", "y", "x"))
    assert planar.dims == ("c", "y", "x")  # 260 rounds to 3 of the array's 100-pixel chunks
    assert planar.data.chunks == ((3,), (300, 212), (300, 212))
    assert planar.attrs["source_axes"] == "c y x"
    np.testing.assert_array_equal(planar.values, rgb.transpose(2, 0, 1))
    with pytest.raises(DimensionError, match="dims"):
        xfskde.open_image(np.zeros((2, 30, 30, 5)))


def test_a_first_axis_of_two_to_four_planes_must_be_named(tmp_path):
    """(3, y, x) is planar colour or a three-plane stack (stacks are stored (z, y, x)): read as
    colour, a stack's planes were mixed into one image; now the reader asks, and reads either."""
    stack = np.stack([np.full((40, 50), v, np.uint8) for v in (10, 20, 30)])
    for shape in ((2, 40, 50), (3, 40, 50), (4, 40, 50)):
        with pytest.raises(DimensionError, match=r"dims=\('c', 'y', 'x'\).*--dims c,y,x"):
            xfskde.open_image(np.zeros(shape))
    # one plane first, or at most four channels last: the shape tells
    assert xfskde.open_image(np.zeros((1, 40, 50))).dims == ("c", "y", "x")
    assert xfskde.open_image(np.zeros((40, 50, 3))).dims == ("y", "x", "c")
    plane = xfskde.open_image(stack, dims=("z", "y", "x"), plane={"z": -1})
    assert plane.dims == ("y", "x") and plane.attrs["source_plane"] == "z=2"
    assert (plane.values == 30).all()
    with pytest.raises(ImageReadError, match=r"z \(3 planes\)"):
        xfskde.open_image(stack, dims=("z", "y", "x"))
    with pytest.raises(ParameterError, match="names 2 axes"):
        xfskde.open_image(stack, dims=("y", "x"))
    with pytest.raises(ParameterError, match="each axis once"):
        xfskde.open_image(stack, dims=("c", "y", "y"))
    with pytest.raises(ParameterError, match="sequence of axis names"):
        xfskde.open_image(stack, dims="cyx")
    with pytest.raises(ParameterError, match="dims="):
        xfskde.open_image(stack, plane={"z": 0})
    named = xr.DataArray(stack, dims=("c", "y", "x"))
    assert xfskde.open_image(named, dims=("c", "y", "x")).attrs == {"source_axes": "c y x"}
    np.save(tmp_path / "stack.npy", stack)  # an .npy file alike, read in the tasks
    with pytest.raises(DimensionError, match="--dims c,y,x"):
        xfskde.open_image(tmp_path / "stack.npy")
    plane = xfskde.open_image(tmp_path / "stack.npy", dims=("z", "y", "x"), plane={"z": 1})
    assert plane.attrs["source_plane"] == "z=1" and (plane.values == 20).all()
    assert named.attrs == {}  # the caller's DataArray is not changed
    with pytest.raises(ParameterError, match="records its own"):
        xfskde.open_image(named, dims=("z", "y", "x"))


def test_a_zarr_array_without_dimension_names_is_named_on_the_command_line(tmp_path, capsys):
    """A plain Zarr (3, y, x) array: refused without --dims by info and the commands; with
    --dims z,y,x --plane z=N the plane is computed (equal to that plane's own field) and a
    resume with other names is refused; a store that records its dims refuses other names."""
    stack = np.random.default_rng(0).random((3, 64, 72)).astype(np.float32)
    path = tmp_path / "stack.zarr"
    zarr.create_array(path, shape=stack.shape, chunks=(1, 32, 32), dtype="f4")[:] = stack
    out = tmp_path / "field.zarr"
    assert cli.main(["info", str(path)]) == 2
    assert "--dims c,y,x" in capsys.readouterr().err
    assert cli.main(["info", str(path), "--dims", "z,y,x"]) == 0
    assert "z y x" in capsys.readouterr().out
    argv = ["coefficients", str(path), str(out), "--window", "box", "--size", "4"]
    assert cli.main(argv) == 2
    assert cli.main([*argv, "--dims", "z,y,x", "--plane", "z=1"]) == 0
    field = xr.open_zarr(out)["fskde"]
    assert field.attrs["source_axes"] == "z y x" and field.attrs["source_plane"] == "z=1"
    expected = xfskde.local_fskde(stack[1], order=8, window="box", size=4)
    np.testing.assert_allclose(field.values, expected, rtol=1e-5, atol=1e-6)
    capsys.readouterr()
    assert cli.main([*argv, "--dims", "c,y,x", "--resume"]) == 2
    assert 'source_axes "z y x" in the store' in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # argparse's refusal
        cli.main([*argv, "--dims", "a,b", "--overwrite"])
    assert stopped.value.code == 2 and "argument --dims" in capsys.readouterr().err
    named = tmp_path / "named.zarr"
    array = zarr.create_array(named, shape=stack.shape, dtype="f4", dimension_names="zyx")
    array[:] = stack
    assert xfskde.open_image(named, plane={"z": 0}).dims == ("y", "x")
    with pytest.raises(ParameterError, match="records its own"):
        xfskde.open_image(named, dims=("c", "y", "x"))


def test_a_pil_picture_is_read_as_its_file_is(tmp_path):
    """``PIL.Image.open(...)`` handed to local_fskde, segment or open_image: a palette picture
    (a GIF, a quantised PNG) was its colour-table indices — gradients and colour histograms of
    arbitrary numbers, silently — and an RGBA one had its alpha as a fourth colour; segment
    refused every picture, and every list. Now each reads as its file does: palette decoded to
    RGB, alpha dropped with the transparent pixels missing; a palette PNG with a transparent
    entry (tRNS) read from its file too (imageio read it opaque)."""
    from PIL import Image

    image, truth = random_textures((128, 128), seed=100)
    rgb = Image.fromarray(np.round(image * 255).astype(np.uint8))
    palette = rgb.quantize(32)
    decoded = np.asarray(palette.convert("RGB"))
    assert not np.array_equal(np.asarray(palette), decoded[..., 0])  # indices are not values
    expected = xfskde.local_fskde(decoded, order=4, size=3, channel_axis=-1)
    np.testing.assert_array_equal(
        xfskde.local_fskde(palette, order=4, size=3, channel_axis=-1), expected
    )
    with pytest.raises(DimensionError, match="channel_axis=-1"):  # RGB, not a grey 2-D
        xfskde.local_fskde(palette, order=4, size=3)
    labels = xfskde.segment(palette, 3, sample=3000)
    assert isinstance(labels, np.ndarray)
    np.testing.assert_array_equal(labels, xfskde.segment(decoded, 3, sample=3000))
    assert xfskde.rand_index(truth, labels) > 0.9  # measured 0.931; its indices 0.857
    opened = xfskde.open_image(palette)
    assert opened.dims == ("y", "x", "c") and np.array_equal(opened.values, decoded)
    np.testing.assert_array_equal(  # lists too, as local_fskde takes them (int64 values)
        xfskde.segment(decoded.tolist(), 3, sample=3000),
        xfskde.segment(decoded.astype(np.int64), 3, sample=3000),
    )
    # alpha: opaque everywhere, dropped; transparent pixels, missing (NaN, label 0)
    rgba = np.dstack([decoded, np.full((128, 128), 255, np.uint8)])
    np.testing.assert_array_equal(
        xfskde.local_fskde(Image.fromarray(rgba), order=4, size=3, channel_axis=-1), expected
    )
    rgba[:, :16, 3] = 0
    cut = Image.fromarray(rgba)
    labels = xfskde.segment(cut, 3, sample=3000)
    assert not labels[:, :16].any() and labels[:, 16:].all()
    cut.save(tmp_path / "cut.png")  # read as 8-bit values, as the file is: the same labels
    from_file = xfskde.segment(xfskde.open_image(tmp_path / "cut.png"), 3, sample=3000)
    np.testing.assert_array_equal(labels, from_file.values)
    np.testing.assert_array_equal(xfskde.open_image(cut).values,
                                  xfskde.open_image(tmp_path / "cut.png").values)  # fmt: skip
    # a palette PNG whose entry 0 is transparent: those pixels are missing, file or picture
    palette.info["transparency"] = 0
    palette.save(tmp_path / "palette.png")
    from_file = xfskde.open_image(tmp_path / "palette.png")
    held = np.asarray(palette) == 0
    assert 0 < held.mean() < 0.5 and from_file.dims == ("y", "x", "c")
    assert np.isnan(from_file.values[held]).all() and not np.isnan(from_file.values[~held]).any()
    np.testing.assert_array_equal(from_file.values, xfskde.open_image(palette).values)
    with Image.open(tmp_path / "palette.png") as again:
        assert np.isnan(xfskde.local_fskde(again, order=4, size=3, channel_axis=-1)[held]).all()


def test_transparent_pixels_of_a_png_are_missing(tmp_path):
    """An RGBA (or grey-and-alpha) PNG opens without its alpha channel, its transparent pixels
    NaN and recorded as the nodata: the field omits them and segmentation labels them 0 (they
    were black texture, and the alpha edge a strong gradient)."""
    from PIL import Image

    from xfskde.io.images import image_levels

    rgb = np.dstack([CAMERA[:64, :80]] * 3)
    rgba = np.dstack([rgb, np.full((64, 80), 255, np.uint8)])
    rgba[:, :20, 3] = 0  # a transparent left margin, black under its alpha
    rgba[:, :20, :3] = 0
    Image.fromarray(rgba).save(tmp_path / "cut.png")
    image = xfskde.open_image(tmp_path / "cut.png")
    assert image.dims == ("y", "x", "c") and image.shape == (64, 80, 3)
    assert image.dtype == np.float32 and np.isnan(image.attrs["_FillValue"])
    assert image.attrs["source_dtype"] == "uint8"  # segmentation reads it as 8-bit values
    expected = rgb.astype(np.float32)
    expected[:, :20] = np.nan
    np.testing.assert_array_equal(image.values, expected)
    field = xfskde.local_fskde(image, order=4, size=2)
    np.testing.assert_array_equal(
        field.values,
        xfskde.local_fskde(expected, order=4, size=2, nan_policy="omit", channel_axis=-1),
    )
    assert field.attrs["input_nodata"] == "nan"
    labels = xfskde.segment(image, 2, size=4, sample=2000)
    assert not labels.values[:, :20].any() and labels.values[:, 20:].all()
    Image.fromarray(rgba[..., [0, 3]], mode="LA").save(tmp_path / "grey.png")
    grey = xfskde.open_image(tmp_path / "grey.png")
    assert grey.dims == ("y", "x") and np.isnan(grey.values[:, :20]).all()
    np.testing.assert_array_equal(grey.values[:, 20:], CAMERA[:64, 20:80])
    # an opaque RGB PNG is read as it is
    Image.fromarray(rgb).save(tmp_path / "rgb.png")
    assert xfskde.open_image(tmp_path / "rgb.png").dtype == np.uint8
    # a TIFF with an alpha sample (ExtraSamples), read block by block, and its nodata too
    rgba[30:34, 40:44, :3] = 7
    tifffile.imwrite(tmp_path / "cut.tif", rgba, photometric="rgb", extrasamples=["unassalpha"],
                     tile=(32, 32), extratags=[(42113, "s", 0, "7", True)])  # fmt: skip
    tiff = xfskde.open_image(tmp_path / "cut.tif", chunks=32)
    assert tiff.shape == (64, 80, 3) and tiff.dtype == np.float32
    expected[30:34, 40:44] = np.nan  # GDAL_NODATA 7 in every colour channel
    np.testing.assert_array_equal(tiff.values, expected)
    (level,) = image_levels(tmp_path / "cut.tif")  # what xfskde info reports
    assert level.shape == (64, 80, 3) and level.dtype == np.float32


def test_small_formats_and_errors(tmp_path):
    np.save(tmp_path / "im.npy", CAMERA[:50, :60])
    assert xfskde.open_image(tmp_path / "im.npy").shape == (50, 60)
    from skimage import io as skio

    skio.imsave(tmp_path / "im.png", CAMERA[:40, :30])
    np.testing.assert_array_equal(xfskde.open_image(tmp_path / "im.png"), CAMERA[:40, :30])
    with pytest.raises(FileNotFoundError, match="no such image"):
        xfskde.open_image(tmp_path / "missing.tif")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ImageReadError, match="unknown format"):
        xfskde.open_image(tmp_path / "notes.txt")
    (tmp_path / "store.zarr.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    with pytest.raises(ImageReadError, match=r"store\.zarr\.zip is not a readable Zarr"):
        xfskde.open_image(tmp_path / "store.zarr.zip")
    (tmp_path / "broken.tif").write_bytes(b"not a tiff at all")
    with pytest.raises(ImageReadError, match="cannot read"):
        xfskde.open_image(tmp_path / "broken.tif")
    (tmp_path / "broken.png").write_bytes(b"not a png either")
    with pytest.raises(ImageReadError, match="cannot read"):
        xfskde.open_image(tmp_path / "broken.png")
    (tmp_path / "empty.zarr").mkdir()
    with pytest.raises(ImageReadError, match="not a readable Zarr"):
        xfskde.open_image(tmp_path / "empty.zarr")
    with pytest.raises(ParameterError, match="chunks"):
        xfskde.open_image(CAMERA, chunks=0)


def test_tiffs_by_other_names_open_and_microscope_formats_say_how_to_convert(tmp_path, capsys):
    """A TIFF named for its maker (Zeiss .lsm, MetaMorph .stk, Ventana .bif) was refused as an
    "unknown format"; it is read by its first bytes now — by the API, ``image_levels`` and
    ``xfskde info``. A microscope's own format (.czi, .nd2, .mrxs, ...) is named, with the
    ways to convert it — an Olympus .vsi too, though it starts as a TIFF: its own pixels are
    a thumbnail (the slide is in .ets files beside it)."""
    from xfskde.io.images import image_levels

    tiled = {"tile": (32, 32), "compression": "zlib", "photometric": "rgb"}
    image = np.repeat(CAMERA[:96, :128, None], 3, axis=2)
    tifffile.imwrite(tmp_path / "slide.bif", image, **tiled)
    stack = np.stack([CAMERA[:64, :64]] * 2)
    tifffile.imwrite(tmp_path / "stack.LSM", stack, bigtiff=True, metadata={"axes": "ZYX"})
    np.testing.assert_array_equal(xfskde.open_image(tmp_path / "slide.bif").values, image)
    assert xfskde.open_image(tmp_path / "slide.bif").attrs["source_level"] == 0
    (level,) = image_levels(tmp_path / "stack.LSM")
    assert level.dims == ("z", "y", "x") and level.shape == (2, 64, 64)
    assert cli.main(["info", str(tmp_path / "slide.bif")]) == 0
    assert "format      TIFF\n" in capsys.readouterr().out
    tifffile.imwrite(tmp_path / "thumbnail.vsi", CAMERA[:32, :32])
    (tmp_path / "scan.czi").write_bytes(b"ZISRAWFILE" + bytes(90))
    for name, maker in [("thumbnail.vsi", "Olympus VSI"), ("scan.czi", "Zeiss CZI")]:
        expected = (
            f"cannot read {tmp_path / name}: xfskde does not read {maker} files; convert it to "
            "OME-Zarr (bioformats2raw) or OME-TIFF (bfconvert, QuPath), or read it with its own "
            "reader (bioio) and pass the array or DataArray"
        )
        for reader in (xfskde.open_image, image_levels):
            with pytest.raises(ImageReadError) as refused:
                reader(tmp_path / name)
            assert str(refused.value) == expected
        assert cli.main(["segment", str(tmp_path / name), str(tmp_path / "l.zarr"),
                         "--textures", "2"]) == 2  # fmt: skip
        assert capsys.readouterr().err.strip() == f"xfskde segment: error: {expected}"
    (tmp_path / "raw.dat").write_bytes(b"\x00" * 64)
    with pytest.raises(ImageReadError, match=r"raw\.dat: unknown format"):
        xfskde.open_image(tmp_path / "raw.dat")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_store_roundtrip_is_exact(tmp_path, dtype):
    image = xr.DataArray(CAMERA[:200, :150].astype(dtype), dims=("y", "x")).chunk(64)
    F = xfskde.local_fskde(image, order=5, window="disk", size=3, stride=2)
    assert xfskde.write_coefficients(F, tmp_path / "f.zarr", chunks=40) == 6  # 3 x 2 blocks
    G = xfskde.open_coefficients(tmp_path / "f.zarr")
    assert G.dtype == F.dtype and G.encoding["chunks"] == (40, 40, 6)
    xr.testing.assert_identical(G.compute(), F.compute())
    assert zarr.open_group(tmp_path / "f.zarr").metadata.consolidated_metadata is not None
    assert store_status(tmp_path / "f.zarr") == {
        "complete": True,
        "blocks_done": 6,
        "blocks_total": 6,
        "blocks_skipped": 0,
    }


def test_compressors_raw_default_and_zarr_own(tmp_path):
    image = xr.DataArray(CAMERA[:64, :64], dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=4)
    codecs = {}
    for name, compressors in [("raw", None), ("default", "default"), ("auto", "auto")]:
        xfskde.io.write_blocks(F, tmp_path / f"{name}.zarr", name="fskde", compressors=compressors)
        codecs[name] = zarr.open_array(tmp_path / f"{name}.zarr", path="fskde").compressors
    xfskde.write_coefficients(F, tmp_path / "coefficients.zarr", compressors=None)
    raw = zarr.open_array(tmp_path / "coefficients.zarr", path="fskde").compressors
    # every choice ends with the CRC-32C checksum, after compression
    assert [c.to_dict()["name"] for c in raw] == ["crc32c"]
    assert [c.to_dict()["name"] for c in codecs["raw"]] == ["crc32c"]
    assert [c.to_dict()["name"] for c in codecs["default"]] == ["blosc", "crc32c"]
    assert codecs["default"][0].cname.value == "lz4"
    assert codecs["default"][0].shuffle.value == "bitshuffle"
    assert [c.to_dict()["name"] for c in codecs["auto"]] == ["zstd", "crc32c"]
    for name in ("xfskde_blocks", "x", "y", "k"):  # the record and coordinates too
        assert zarr.open_array(tmp_path / "auto.zarr", path=name).compressors[-1].to_dict() == {
            "name": "crc32c"
        }


def test_progress_bar_suits_the_scheduler(tmp_path, capsys, monkeypatch):
    image = xr.DataArray(CAMERA[:96, :96].astype(np.float32), dims=("y", "x")).chunk(48)
    F = xfskde.local_fskde(image, order=3, window="box", size=3)
    local = xfskde.write_coefficients(
        F, tmp_path / "a.zarr", chunks=48, scheduler="synchronous", progress=True
    )
    captured = capsys.readouterr()  # dask's ProgressBar, on stderr: stdout is for results
    assert local == 4 and "100% Completed" in captured.err and captured.out == ""
    shown = []
    real = distributed.progress
    monkeypatch.setattr(distributed, "progress", lambda *a, **k: shown.append(a) or real(*a, **k))
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as client:
        on_cluster = xfskde.write_coefficients(
            F, tmp_path / "b.zarr", chunks=48, scheduler=client, progress=True
        )
    assert on_cluster == 4 and len(shown) == 1 and "100% Completed" in capsys.readouterr().out
    xr.testing.assert_identical(
        xfskde.open_coefficients(tmp_path / "a.zarr").compute(),
        xfskde.open_coefficients(tmp_path / "b.zarr").compute(),
    )


def test_existing_store_and_mismatched_resume(tmp_path):
    image = xr.DataArray(CAMERA[:64, :64], dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=3)
    xfskde.write_coefficients(F, tmp_path / "f.zarr")
    with pytest.raises(StoreExistsError, match="resume"):
        xfskde.write_coefficients(F, tmp_path / "f.zarr")
    other = xfskde.local_fskde(image, order=4, window="box", size=3)
    with pytest.raises(StoreParametersError, match="other parameters") as refused:
        xfskde.write_coefficients(other, tmp_path / "f.zarr", resume=True)
    # the refusal says what differs: the layout first, then the parameters a user gave
    assert "(shape [64, 64, 4] in the store, [64, 64, 5] now; coordinates;" in str(refused.value)
    assert "order 3 in the store, 4 now" in str(refused.value)
    # the first series of a TIFF records none: said as series 0, not null
    second = F.assign_attrs(source_series=1)
    with pytest.raises(StoreParametersError) as refused:
        xfskde.write_coefficients(second, tmp_path / "f.zarr", resume=True)
    assert "source_series 0 in the store, 1 now" in str(refused.value)
    # a value an attr "chose_<name>" says was chosen follows what the user gave, however short
    # (a resume with another seed named the window the new fit chose first)
    from xfskde.io.stores import _parameter_differences

    said = _parameter_differences(
        json.dumps({"fit_seed": 0, "size": 6, "stride": 5, "chose_size": "a", "chose_stride": "b"}),
        json.dumps({"fit_seed": 123456, "size": 22, "stride": 2, "chose_size": "c",
                    "chose_stride": "d"}),
    )  # fmt: skip
    assert said.startswith("fit_seed 0 in the store, 123456 now; ")
    # but a value given now where the store's was chosen (--size 5) is the user's: first, not
    # among the fitted scales and weights it changes
    said = _parameter_differences(
        json.dumps({"size": 6.0, "chose_size": "a", "weight_fskde": 0.5, "scale_fskde": 9.19,
                    "features": "color,fskde", "endmembers": [1, 2]}),
        json.dumps({"size": 5.0, "weight_fskde": None, "scale_fskde": None,
                    "features": "color", "endmembers": [3, 4]}),
    )  # fmt: skip
    assert said.startswith("size 6.0 in the store, 5.0 now; "), said
    assert xfskde.write_coefficients(other, tmp_path / "f.zarr", overwrite=True) == 1
    with pytest.raises(DimensionError, match="dims"):
        xfskde.write_coefficients(F.transpose("k", "y", "x"), tmp_path / "g.zarr")
    with pytest.raises(FileNotFoundError):
        xfskde.open_coefficients(tmp_path / "nothing.zarr")


WRITER = """
import sys, time
import dask, numpy as np
import xfskde, xfskde.io.stores as io
original = io._write_block
def slow(*args, **kwargs):
    time.sleep(0.05)
    return original(*args, **kwargs)
io._write_block = slow
image = xfskde.open_image(sys.argv[1], chunks=32)
field = xfskde.local_fskde(image, order=4, window="box", size=5)
with dask.config.set(scheduler="synchronous"):
    xfskde.write_coefficients(field, sys.argv[2], chunks=32)
"""


def test_killed_write_is_never_complete_and_resumes_to_the_same_store(tmp_path, monkeypatch):
    source = zarr.create_array(tmp_path / "in.zarr", shape=(256, 256), chunks=(32, 32),
                               dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:256, :256]
    store = tmp_path / "out.zarr"
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(tmp_path / "in.zarr"), str(store)]
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if (store / "xfskde_blocks").exists() and store_status(store)["blocks_done"] >= 10:
                break
            assert proc.poll() is None, "the writer finished before it could be killed"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    status = store_status(store)
    assert not status["complete"] and 10 <= status["blocks_done"] < status["blocks_total"] == 64
    with pytest.raises(StoreIncompleteError, match="incomplete"):
        xfskde.open_coefficients(store)
    partial = xfskde.open_coefficients(store, allow_incomplete=True)
    assert partial.shape == (256, 256, 5)

    image = xfskde.open_image(tmp_path / "in.zarr", chunks=32)
    field = xfskde.local_fskde(image, order=4, window="box", size=5)
    calls = []
    original = xfskde.lazy.local_fskde_block

    def counting(*args, **kwargs):
        calls.append(kwargs["rows"])
        return original(*args, **kwargs)

    monkeypatch.setattr(xfskde.lazy, "local_fskde_block", counting)
    written = xfskde.write_coefficients(field, store, chunks=32, resume=True)
    assert written == 64 - status["blocks_done"] == len(calls)  # only missing blocks computed
    monkeypatch.undo()
    xfskde.write_coefficients(field, tmp_path / "clean.zarr", chunks=32)
    resumed = xfskde.open_coefficients(store).compute()
    clean = xfskde.open_coefficients(tmp_path / "clean.zarr").compute()
    xr.testing.assert_identical(resumed, clean)
    np.testing.assert_array_equal(
        resumed.values, xfskde.local_fskde(CAMERA[:256, :256], order=4, window="box", size=5)
    )


# ----------------------------------------------------------- chunk plans and native tiles


def test_chunks_come_from_plan_chunks_and_the_tiles_are_recorded(tmp_path):
    path = tmp_path / "tiled.tif"
    tifffile.imwrite(path, CAMERA[:500, :470], tile=(64, 128))
    for chunks, target in [(None, 2048), (150, 150), ({"y": 70, "x": 300}, (70, 300))]:
        image = xfskde.open_image(path, chunks=chunks)
        assert image.encoding["preferred_chunks"] == {"y": 64, "x": 128}
        assert image.data.chunks == plan_chunks((500, 470), tiles=(64, 128), target=target)
    # a caller that knows its halo and stride plans again from the recorded tiles
    tiles = tuple(image.encoding["preferred_chunks"][d] for d in ("y", "x"))
    assert plan_chunks(image.shape, tiles=tiles, target=150, halo=9, stride=8) == (
        (128, 128, 128, 116),
        (128, 128, 128, 86),
    )
    strips = tmp_path / "strips.tif"
    # compressed strips are read whole (uncompressed ones, from a memory map, in any chunks)
    tifffile.imwrite(strips, ASTRONAUT[:301], rowsperstrip=37, photometric="rgb",
                     compression="zlib")  # fmt: skip
    rgb = xfskde.open_image(strips, chunks=100)
    assert rgb.encoding["preferred_chunks"] == {"y": 37, "x": 512}  # a strip: the whole width
    assert rgb.data.chunks == ((111, 111, 79), (512,), (3,))  # colour: one chunk

    arr = zarr.create_array(tmp_path / "a.zarr", shape=(300, 200, 3), chunks=(100, 50, 1),
                            dtype="uint8", dimension_names=("y", "x", "band"))  # fmt: skip
    image = xfskde.open_image(tmp_path / "a.zarr", chunks=120)
    assert image.dims == ("y", "x", "band") and image.data.chunks == ((100,) * 3, (100, 100), (3,))
    assert image.encoding["preferred_chunks"] == {"y": 100, "x": 50}
    assert xfskde.open_image(arr).encoding["preferred_chunks"] == {"y": 100, "x": 50}

    dask_image = xfskde.open_image(da.zeros((300, 300), chunks=50), chunks=120)
    assert dask_image.encoding["preferred_chunks"] == {"y": 50, "x": 50}
    assert dask_image.data.chunks == ((100, 100, 100),) * 2
    already = da.zeros((300, 300), chunks=100)
    assert xfskde.open_image(already, chunks=100).data is already  # no rechunk


def test_unsupported_tiff_axes_and_zarr_dims_are_image_read_errors(tmp_path):
    path = tmp_path / "volume.tif"
    tifffile.imwrite(path, np.zeros((2, 16, 16), np.uint8), photometric="minisblack")
    with pytest.raises(ImageReadError, match="axes"):
        xfskde.open_image(path)
    arr = zarr.create_array(tmp_path / "rc.zarr", shape=(8, 8), dtype="uint8",
                            dimension_names=("row", "col"))  # fmt: skip
    with pytest.raises(ImageReadError, match="dims"):
        xfskde.open_image(arr)
    # every error of the library is both an XfskdeError and the built-in callers expected
    assert issubclass(ImageReadError, XfskdeError) and issubclass(ImageReadError, ValueError)
    assert issubclass(StoreExistsError, FileExistsError)


def _stack(shape):
    """A stack whose planes differ: plane i of axis 0 is the camera shifted by 7 i pixels."""
    planes = [np.roll(CAMERA[: shape[-2], : shape[-1]], 7 * i, axis=1) for i in range(shape[0])]
    return np.stack(planes).reshape(shape)


def test_a_plane_of_a_z_stack_or_time_series_is_read_alone(tmp_path):
    """Microscopes write z-stacks and time series (OME-TIFF ZCYX, ImageJ TZYX, OME-Zarr
    tczyx): they were refused with no way in; plane= reads one plane, and only that plane."""
    zcyx = _stack((4 * 2, 96, 80)).reshape(4, 2, 96, 80)
    ome = tmp_path / "stack.ome.tif"
    sizes = {"PhysicalSizeX": 0.25, "PhysicalSizeY": 0.25}
    tifffile.imwrite(ome, zcyx, ome=True, tile=(32, 32), metadata={"axes": "ZCYX", **sizes})
    with pytest.raises(ImageReadError, match=r"z \(4 planes\).*plane=\{'z': 0\}.*--plane z=0"):
        xfskde.open_image(ome)
    for z in (0, 2, -1):
        image = xfskde.open_image(ome, plane={"z": z}, chunks=32)
        assert image.dims == ("c", "y", "x") and image.attrs["source_plane"] == f"z={z % 4}"
        np.testing.assert_array_equal(image.values, zcyx[z])
        assert image.attrs["source_pixel_size_um"] == [0.25, 0.25]
        # one task per block of the plane: the other planes are culled, never read
        reads = [k for k in dict(dask.optimize(image.data)[0].__dask_graph__())
                 if "read-tiff" in str(k[0] if isinstance(k, tuple) else k)]  # fmt: skip
        assert len(reads) == 3 * 3
    tzyx = tmp_path / "series.tif"
    tifffile.imwrite(tzyx, _stack((6, 64, 64)).reshape(2, 3, 64, 64), imagej=True,
                     metadata={"axes": "TZYX"})  # fmt: skip
    with pytest.raises(ImageReadError, match=r"t \(2 planes\), z \(3 planes\)"):
        xfskde.open_image(tzyx)
    with pytest.raises(ImageReadError, match=r"colour: t \(2 planes\); .*--plane t=0 "):
        xfskde.open_image(tzyx, plane={"z": 1})
    image = xfskde.open_image(tzyx, plane={"T": 1, "z": 1})
    np.testing.assert_array_equal(image.values, _stack((6, 64, 64))[4])
    assert image.dims == ("y", "x") and image.attrs["source_plane"] == "t=1,z=1"
    # as --plane and source_plane write it (an AttributeError of a str had no 'items')
    again = xfskde.open_image(tzyx, plane="t=1, z=1")
    np.testing.assert_array_equal(again.values, image.values)
    with pytest.raises(ParameterError, match="plane must be a mapping such as"):
        xfskde.open_image(tzyx, plane=1)
    # OME-Zarr (written by ome-zarr-py, the second reader of the format)
    from ome_zarr.writer import write_image

    tczyx = _stack((3 * 5, 64, 48)).reshape(1, 3, 5, 64, 48)
    write_image(tczyx, zarr.open_group(tmp_path / "stack.ome.zarr", mode="w"), axes="tczyx",
                scaler=None)  # fmt: skip
    image = xfskde.open_image(tmp_path / "stack.ome.zarr", plane={"z": 3})
    assert image.dims == ("c", "y", "x") and image.attrs["source_plane"] == "z=3"
    np.testing.assert_array_equal(image.values, tczyx[0, :, 3])
    # a DataArray is indexed alike, its own attrs untouched
    named = xr.DataArray(zcyx, dims=("z", "c", "y", "x"), attrs={"name": "cells"})
    picked = xfskde.open_image(named, plane={"z": 1})
    np.testing.assert_array_equal(picked.values, zcyx[1])
    assert (
        picked.attrs == {"name": "cells", "source_plane": "z=1"}
        and "source_plane" not in named.attrs
    )
    # refused, naming what is wrong
    with pytest.raises(ParameterError, match=r"'t', which is not an axis .*those it has: z \(4\)"):
        xfskde.open_image(ome, plane={"t": 0})
    with pytest.raises(ParameterError, match=r"out of range.*4 planes along z"):
        xfskde.open_image(ome, plane={"z": 4})
    with pytest.raises(ParameterError, match="must be an integer"):
        xfskde.open_image(ome, plane={"z": 1.5})
    with pytest.raises(ParameterError, match="index it yourself"):
        xfskde.open_image(zcyx, plane={"z": 0})


def test_an_image_of_a_multi_image_tiff_by_index_or_name(tmp_path):
    """A multi-scene OME-TIFF (and the OME-TIFF ``xfskde segment`` writes: abundances, then
    labels) was always read as its first image; series= reads another, with its own pixel
    size, and only that one."""
    path = tmp_path / "scenes.ome.tif"
    first, second = CAMERA[:96, :80], np.ascontiguousarray(CAMERA[100:164, :72].T)
    with tifffile.TiffWriter(path, ome=True) as tif:
        fine, coarse = ({"PhysicalSizeX": p, "PhysicalSizeY": p} for p in (0.5, 2.0))
        tif.write(first, tile=(32, 32), metadata={"Name": "scene A", "axes": "YX", **fine})
        tif.write(np.stack([second, second // 2]), tile=(32, 32),
                  metadata={"Name": "scene B", "axes": "CYX", **coarse})  # fmt: skip
    image = xfskde.open_image(path)
    np.testing.assert_array_equal(image.values, first)
    assert "source_series" not in image.attrs and image.attrs["source_pixel_size_um"] == [0.5, 0.5]
    for series in (1, -1, "scene B"):
        image = xfskde.open_image(path, series=series, chunks=32)
        assert image.dims == ("c", "y", "x") and image.attrs["source_series"] == 1
        np.testing.assert_array_equal(image.values, np.stack([second, second // 2]))
        assert image.attrs["source_pixel_size_um"] == [2.0, 2.0]
        np.testing.assert_allclose(image.x.values[:3], [0.0, 2.0, 4.0])  # its own pixel size
    assert [lv.shape for lv in xfskde.io.images.image_levels(path, series="scene B")] == [
        (2, 72, 64)
    ]
    with pytest.raises(ParameterError, match=r"no image named 'scene C'.*0 'scene A', 1 'scene B'"):
        xfskde.open_image(path, series="scene C")
    with pytest.raises(ParameterError, match="no series 2"):
        xfskde.open_image(path, series=2)
    zarr.create_array(tmp_path / "plain.zarr", shape=(8, 8), dtype="uint8")
    for other in (CAMERA, xr.DataArray(CAMERA, dims=("y", "x")), tmp_path / "plain.zarr"):
        with pytest.raises(ParameterError, match="holds one: drop series"):
            xfskde.open_image(other, series=1)
    with pytest.raises(ParameterError, match="holds one: drop series"):
        xfskde.io.images.image_levels(tmp_path / "plain.zarr", series="scene B")


# ------------------------------------------------------------------------------- stores


def test_store_chunk_default_is_the_data_chunks_or_plan_chunks(tmp_path):
    labels = xr.DataArray(np.ones((3000, 10), np.uint8), dims=("y", "x"))
    assert xfskde.io.write_blocks(labels, tmp_path / "np.zarr", name="labels") == 2
    assert zarr.open_array(tmp_path / "np.zarr", path="labels").chunks == (2048, 10)
    ragged = labels.chunk({"y": (500, 1000, 1500), "x": 10})
    assert xfskde.io.write_blocks(ragged, tmp_path / "dask.zarr", name="labels") == 2
    assert zarr.open_array(tmp_path / "dask.zarr", path="labels").chunks == (1500, 10)
    with pytest.raises(ParameterError, match="chunks"):
        xfskde.io.write_blocks(labels, tmp_path / "bad.zarr", name="labels", chunks=0)
    with pytest.raises(ParameterError, match="compressors"):
        xfskde.io.write_blocks(labels, tmp_path / "bad.zarr", name="labels", compressors="lz4")


def test_regular_dask_field_is_written_without_a_rechunk(tmp_path):
    image = xr.DataArray(CAMERA[:200, :150].astype(np.float32), dims=("y", "x")).chunk(64)
    F = xfskde.local_fskde(image, order=3, window="box", size=3)
    pending = xfskde.write_coefficients(F, tmp_path / "f.zarr", compute=False)
    graph = pending.__dask_graph__()
    writes = [name for name in graph.layers if name.startswith("xfskde-write-")]
    assert len(writes) == 1 and len(graph.layers[writes[0]]) == 4 * 3  # one task per block
    assert graph.dependencies[writes[0]] == {F.data.name}  # the field's own chunks, as they are
    assert not [name for name in graph.layers if name.startswith("rechunk")]
    # irregular chunks are rechunked (the check above would see it)
    ragged = F.chunk({"y": (30, 70, 100)})
    graph = xfskde.write_coefficients(ragged, tmp_path / "g.zarr", compute=False).dask
    assert [name for name in graph.layers if name.startswith("rechunk")]

    with pytest.raises(StoreIncompleteError, match="resume=True"):
        xfskde.io.finalize_store(tmp_path / "f.zarr")  # nothing computed yet
    assert int(pending.sum().compute()) == 12
    xfskde.io.finalize_store(tmp_path / "f.zarr")
    xr.testing.assert_identical(
        xfskde.open_coefficients(tmp_path / "f.zarr").compute(), F.compute()
    )


def test_foreign_stores_are_store_format_errors(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(StoreFormatError, match="not a Zarr store"):
        xfskde.io.open_blocks(tmp_path / "plain")
    with pytest.raises(StoreFormatError, match="not a Zarr store"):
        store_status(tmp_path / "plain")
    group = zarr.open_group(tmp_path / "foreign.zarr", mode="w")
    group.create_array("a", shape=(4, 4), dtype="uint8")
    with pytest.raises(StoreFormatError, match="not a store written by xfskde"):
        xfskde.io.open_blocks(tmp_path / "foreign.zarr")
    with pytest.raises(StoreFormatError, match="not a store written by xfskde"):
        xfskde.io.write_blocks(xr.DataArray(np.zeros((4, 4)), dims=("y", "x")),
                               tmp_path / "foreign.zarr", name="a", resume=True)  # fmt: skip
    labels = xr.DataArray(np.ones((8, 8), np.uint8), dims=("y", "x"))
    xfskde.io.write_blocks(labels, tmp_path / "labels.zarr", name="labels")
    with pytest.raises(StoreFormatError, match="no 'fskde' variable"):
        xfskde.open_coefficients(tmp_path / "labels.zarr")


def test_io_imports_nothing_above_it():
    """io reads images and writes stores: it imports no face of the library (accessor, api...)."""
    foundations = {"exceptions", "_labels", "_pictures", "_grid", "_palette", "_scheduling",
                   "_validation", "_version"}  # fmt: skip
    allowed = {*foundations, "lazy", "io"}
    package = os.path.dirname(xfskde.io.__file__)
    for module in sorted(os.listdir(package)):
        if not module.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(package, module)).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                top = "io" if node.level == 1 else (node.module or "").split(".")[0]
                assert top in allowed, f"xfskde/io/{module} imports {node.module!r}"
                if node.level == 1 and module != "__init__.py":  # images and stores: apart
                    assert {module[:-3], node.module} != {"images", "stores"}
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names]  # fmt: skip
                assert not [n for n in names if n and n.startswith("xfskde")], module


def test_resume_adopts_the_stores_chunks(tmp_path):
    """A resume with other chunks used to write the blocks on a grid of its own and mark the
    store complete with holes in it; now it adopts the store's grid (or refuses other chunks)."""
    image = xr.DataArray(CAMERA[:120, :100].astype(np.float32), dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=3)
    store = tmp_path / "f.zarr"
    pending = xfskde.write_coefficients(F.chunk(40), store, compute=False)
    assert pending.shape == (9,)
    pending[:4].compute(scheduler="synchronous")  # an interrupted write: 4 of 9 blocks
    assert store_status(store)["blocks_done"] == 4
    with pytest.raises(StoreParametersError, match=r"chunks of \(40, 40\)"):
        xfskde.write_coefficients(F.chunk(24), store, chunks=24, resume=True)
    assert xfskde.write_coefficients(F.chunk(24), store, resume=True) == 5  # other Dask chunks
    resumed = xfskde.open_coefficients(store)
    assert resumed.encoding["chunks"][:2] == (40, 40)
    np.testing.assert_array_equal(resumed.values, F.values)  # no hole, no zero block


def test_a_store_with_no_block_written_restarts_with_new_parameters(tmp_path):
    image = xr.DataArray(CAMERA[:64, :64].astype(np.float32), dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=3)
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(F, store, chunks=32, compute=False)  # laid out, nothing written
    G = xfskde.local_fskde(image, order=5, window="gaussian", size=2)
    assert xfskde.write_coefficients(G, store, resume=True) == 1
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, G.values)


def test_resume_adopts_the_stores_codecs_and_refuses_others(tmp_path):
    """The codecs shape the bytes of every chunk: a resume writes with the store's own (when
    compressors is left out) and refuses others given on purpose."""
    image = xr.DataArray(CAMERA[:96, :96].astype(np.float32), dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=3).chunk(32)
    store = tmp_path / "f.zarr"
    pending = xfskde.write_coefficients(F, store, compute=False, compressors=None)
    pending[:3].compute(scheduler="synchronous")
    with pytest.raises(StoreParametersError, match="compressors"):
        xfskde.write_coefficients(F, store, resume=True, compressors="default")
    with pytest.raises(StoreParametersError, match="compressors"):
        xfskde.write_coefficients(F, store, resume=True, compressors="auto")
    assert xfskde.write_coefficients(F, store, resume=True) == 6  # adopts raw + checksum
    assert xfskde.write_coefficients(F, store, resume=True, compressors=None) == 0
    names = [c.to_dict()["name"] for c in zarr.open_array(store, path="fskde").compressors]
    assert names == ["crc32c"]
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, F.values)


def test_resume_checks_dims_and_coordinates(tmp_path):
    """Dims and coordinates are part of what a resume must match: the same pixels on another
    grid (georeferenced coordinates) are another result."""
    pixels = CAMERA[:64, :64].astype(np.float32)
    image = xr.DataArray(pixels, dims=("y", "x"), coords={"y": np.arange(64.0) * 10})
    F = xfskde.local_fskde(image, order=3, window="box", size=3).chunk(32)
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(F, store, compute=False)[:1].compute()
    moved = F.assign_coords(y=F.y + 5.0)
    with pytest.raises(StoreParametersError, match="coordinates"):
        xfskde.write_coefficients(moved, store, resume=True)
    labels = xr.DataArray(np.ones((64, 64), np.uint8), dims=("y", "x")).chunk(32)
    xfskde.io.write_blocks(labels, tmp_path / "l.zarr", name="labels", compute=False)[:1].compute()
    renamed = labels.rename({"x": "col"})
    with pytest.raises(StoreParametersError):
        xfskde.io.write_blocks(renamed, tmp_path / "l.zarr", name="labels", resume=True)
    assert xfskde.write_coefficients(F, store, resume=True) == 3
    params = json.loads(zarr.open_group(store).attrs["xfskde_parameters"])
    assert params["xfskde_dims"] == ["y", "x", "k"] and len(params["xfskde_coordinates_sha256"])


def test_stores_written_before_dims_and_coordinates_were_recorded_still_resume(tmp_path):
    image = xr.DataArray(CAMERA[:64, :64].astype(np.float32), dims=("y", "x"))
    F = xfskde.local_fskde(image, order=3, window="box", size=3).chunk(32)
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(F, store, compute=False)[:1].compute()
    group = zarr.open_group(store, mode="r+")
    old = json.loads(group.attrs["xfskde_parameters"])
    del old["xfskde_dims"], old["xfskde_coordinates_sha256"]
    group.attrs["xfskde_parameters"] = json.dumps(old, sort_keys=True)
    assert xfskde.write_coefficients(F, store, resume=True) == 3
    other = xfskde.local_fskde(image, order=4, window="box", size=3).chunk(32)
    group.attrs["xfskde_status"] = "incomplete"
    with pytest.raises(StoreParametersError):  # the parameters it has are still checked
        xfskde.write_coefficients(other, store, resume=True)


def test_checked_reads_keep_labels_and_work_on_a_cluster(tmp_path):
    """open_blocks reads through a checked reader: the same labelled, Dask-backed result as
    before, readable on a cluster with worker processes (the reader pickles)."""
    image = xr.DataArray(
        CAMERA[:64, :48].astype(np.float32),
        dims=("y", "x"),
        coords={
            "lat": (("y", "x"), np.add.outer(np.arange(64.0), np.arange(48.0))),
            "spatial_ref": 0,  # a scalar coordinate, as rioxarray's CRS
        },
    )
    F = xfskde.local_fskde(image, order=3, window="box", size=3).chunk(16)
    xfskde.write_coefficients(F, tmp_path / "f.zarr")
    G = xfskde.open_coefficients(tmp_path / "f.zarr")
    # the one data array is told from its coordinates, even a scalar one
    assert xfskde.io.open_blocks(tmp_path / "f.zarr").name == "fskde"
    assert xfskde.io.stores.verify_store(tmp_path / "f.zarr").whole
    assert G.chunks is not None and G.coords["lat"].chunks is not None
    assert G.encoding["chunks"] == (16, 16, 4)
    xr.testing.assert_identical(G.compute(), F.compute())
    with distributed.Client(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as client:
        on_cluster = client.compute(G.data.sum()).result()
    np.testing.assert_allclose(on_cluster, F.values.sum(), rtol=1e-6)


# ------------------------------------------------------------------- physical pixel sizes


def _ome_pyramid(path, size=0.25, unit="µm", base=None, factors=(2, 4)):
    """An OME-TIFF of ``base`` (by default a 512 x 384 ramp) and two sub-resolution levels of
    every ``factors``-th pixel, its level 0's pixels ``size`` ``unit`` on a side."""
    if base is None:
        base = (np.arange(512 * 384) % 251).astype(np.uint8).reshape(512, 384)
    meta = {"PhysicalSizeX": size, "PhysicalSizeXUnit": unit,
            "PhysicalSizeY": size, "PhysicalSizeYUnit": unit}  # fmt: skip
    with tifffile.TiffWriter(path) as tif:
        tif.write(base, tile=(64, 64), subifds=len(factors), metadata=meta)
        for f in factors:
            tif.write(base[::f, ::f], tile=(64, 64), subfiletype=1)
    return base


def test_ome_tiff_levels_have_coordinates_in_micrometres(tmp_path):
    path = tmp_path / "slide.ome.tif"
    _ome_pyramid(path, size=250, unit="nm")  # 0.25 µm, told in nanometres
    full = xfskde.open_image(path)
    np.testing.assert_allclose(full.x.values, 0.25 * np.arange(384))
    assert full.y.attrs["units"] == "µm" and full.x.attrs["units"] == "µm"
    assert (full.attrs["source_level"], full.attrs["source_pixel_size_um"]) == (0, [0.25, 0.25])
    assert full.attrs["source"] == str(path)
    # a level's pixel centre is the mean of the centres of the level-0 pixels it covers
    half = xfskde.open_image(path, level=1)
    np.testing.assert_allclose(half.x.values[:3], [0.125, 0.625, 1.125])
    assert half.attrs["source_pixel_size_um"] == [0.5, 0.5]
    quarter = xfskde.open_image(path, level=2)
    np.testing.assert_allclose(quarter.y.values[0], 0.25 * 1.5)


def test_mpp_picks_the_nearest_level(tmp_path):
    path = tmp_path / "slide.ome.tif"
    _ome_pyramid(path)
    read = [xfskde.open_image(path, mpp=m).attrs for m in (0.2, 0.3, 0.5, 0.8, 1.0, 5.0)]
    assert [(a["source_level"], a.get("source_binning", 1)) for a in read] == [
        (0, 1), (0, 1), (1, 1), (0, 3), (2, 1), (2, 5)  # 0.8: 0.75 µm, not the 1 µm level
    ]  # fmt: skip
    with pytest.raises(ParameterError, match="level or mpp"):
        xfskde.open_image(path, level=1, mpp=0.5)
    with pytest.raises(ParameterError, match="mpp must be a positive"):
        xfskde.open_image(path, mpp=-1.0)
    plain = tmp_path / "plain.tif"
    tifffile.imwrite(plain, np.zeros((64, 64), np.uint8))
    with pytest.raises(ParameterError, match="does not record"):
        xfskde.open_image(plain, mpp=0.5)


def test_mpp_reads_the_nearest_pixel_size_of_every_level_and_whole_cells(tmp_path):
    """A 0.325 / 0.65 / 1.3 µm pyramid at mpp=1 was read at 1.3 µm (level 2, 30 % off), where
    level 0 in 3 x 3 cells gives 0.975 µm; at mpp=0.5 it gave 0.65 µm (30 % off) without a
    word, which a model fitted at 0.5 µm then refused, advising mpp=0.5 again."""
    pixels = np.random.default_rng(7).integers(0, 256, (256, 256), dtype=np.uint8)
    path = tmp_path / "pyramid.ome.tif"
    _ome_pyramid(path, 0.325, base=pixels)
    one = xfskde.open_image(path, mpp=1.0)
    assert (one.attrs["source_level"], one.attrs["source_binning"]) == (0, 3)
    np.testing.assert_allclose(one.attrs["source_pixel_size_um"], [0.975, 0.975])
    np.testing.assert_array_equal(one.values, _cell_means(pixels, 3))
    assert xfskde.open_image(path, mpp=1.3).attrs["source_level"] == 2  # a level as it is
    two = xfskde.open_image(path, mpp=2.0)  # level 1 in 3 x 3 cells: 1.95 µm
    assert (two.attrs["source_level"], two.attrs["source_binning"]) == (1, 3)
    # nothing comes within 25 % of 0.5 µm: refused, naming what the slide gives
    with pytest.raises(ParameterError, match=r"mpp=0.5 µm: no level of .* \(0.325 µm, 0.65 µm, "
                       r"1.3 µm\).* within 25%.* nearest is 0.65 µm \(level 1, 30% off\): ask "
                       r"for mpp=0.65, or resample"):  # fmt: skip
        xfskde.open_image(path, mpp=0.5)


def _cell_means(pixels: np.ndarray, f: int) -> np.ndarray:
    """The rounded means of f x f cells of a (y, x, ...) array, its partial cells dropped."""
    ny, nx = pixels.shape[0] // f * f, pixels.shape[1] // f * f
    cut = pixels[:ny, :nx].astype(np.float64)
    return np.rint(cut.reshape(ny // f, f, nx // f, f, *pixels.shape[2:]).mean(axis=(1, 3)))


def test_mpp_between_levels_averages_cells_of_a_finer_one(tmp_path):
    """A slide of one level (a region exported from a scanner, CMU-1-Small-Region.svs) read
    at mpp=2 gave its 0.5 µm pixels, and an Aperio pyramid of 0.5 / 2 / 8 µm at mpp=1 its
    0.5 µm level, without a word: the nearest level, 4 and 2 times finer than asked, so the
    analysis ran at another scale. A finer level is now averaged over whole cells of pixels,
    as its file would hold a level of that size."""
    rng = np.random.default_rng(4)
    pixels = rng.integers(0, 256, (130, 90, 3), dtype=np.uint8)
    single = tmp_path / "region.ome.tif"
    meta = {"axes": "YXS", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    tifffile.imwrite(single, pixels, tile=(32, 32), photometric="rgb", metadata=meta)
    image = xfskde.open_image(single, mpp=2)
    assert image.shape == (32, 22, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(image.values, _cell_means(pixels, 4))
    np.testing.assert_allclose(image.x.values[:2], [0.75, 2.75])  # the means of 0, .5, 1, 1.5
    assert image.attrs["source_pixel_size_um"] == [2.0, 2.0]
    assert (image.attrs["source_level"], image.attrs["source_binning"]) == (0, 4)
    field = xfskde.local_fskde(image.mean("c"), order=3, window="box", size=5)
    assert field.attrs["source_binning"] == 4  # and every result keeps it
    # the chunks are whole cells of the file's tiles, planned for the halo asked
    chunked = xfskde.open_image(single, mpp=1, chunks=16, halo=6)
    assert min(chunked.chunks[0]) >= 6 and chunked.shape == (65, 45, 3)
    np.testing.assert_array_equal(chunked.values, _cell_means(pixels, 2))
    # a level nearer than any cells of it is read as it is; finer than it by 25 % is refused
    assert "source_binning" not in xfskde.open_image(single, mpp=0.6).attrs
    with pytest.raises(ParameterError, match=r"mpp=0.25 µm is finer than the finest level"):
        xfskde.open_image(single, mpp=0.25)
    # a Zarr store (an OME-Zarr image of one level), NaN: a cell with a missing pixel is missing
    values = rng.random((40, 30)).astype(np.float32)
    values[5, 7] = np.nan
    maps = xr.DataArray(values, dims=("y", "x"), name="energy")
    xfskde.write_ome_zarr(maps, tmp_path / "maps.ome.zarr", pixel_size=0.5, coarsest=64)
    image = xfskde.open_image(tmp_path / "maps.ome.zarr", mpp=1.5).squeeze(drop=True)
    assert image.shape == (13, 10) and image.attrs["source_binning"] == 3
    expected = values[:39, :30].reshape(13, 3, 10, 3).mean(axis=(1, 3))
    np.testing.assert_allclose(image.values, expected, rtol=1e-6)
    assert np.isnan(image.values[1, 2]) and np.isnan(image.values).sum() == 1


def test_mpp_of_a_dataarray_averages_its_pixels_by_their_coords(tmp_path):
    """open_image(dataarray, mpp=2) gave the DataArray back at its own 0.5 µm, and level=1
    was ignored, both without a word. mpp now averages it as a file's level would be (its
    pixel size from its coords' units); level is refused, and so is mpp without lengths."""
    pixels = np.random.default_rng(6).integers(0, 256, (130, 90, 3), dtype=np.uint8)
    path = tmp_path / "region.ome.tif"
    meta = {"axes": "YXS", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    tifffile.imwrite(path, pixels, tile=(32, 32), photometric="rgb", metadata=meta)
    opened = xfskde.open_image(path)
    direct = xfskde.open_image(path, mpp=2)
    for image in (opened, opened.compute()):  # lazy and in memory
        binned = xfskde.open_image(image, mpp=2)
        assert isinstance(binned.data, type(image.data))
        np.testing.assert_array_equal(binned.values, direct.values)
        np.testing.assert_allclose(binned.x.values, direct.x.values)
        assert binned.attrs["source_binning"] == 4
        np.testing.assert_allclose(binned.attrs["source_pixel_size_um"], [2.0, 2.0])
    with pytest.raises(ParameterError, match="a DataArray is one image"):
        xfskde.open_image(opened, level=1)
    plain = xr.DataArray(pixels[..., 0], dims=("y", "x"))  # no coords: no pixel size
    with pytest.raises(ParameterError, match="needs the DataArray's pixel size"):
        xfskde.open_image(plain, mpp=2)


def test_mpp_between_the_levels_of_a_pyramid_averages_the_finer_one(tmp_path):
    """An Aperio pyramid of 0.5 / 2 / 8 µm: mpp=1 was its 0.5 µm level (nearest by ratio, tied
    with 2 µm); now that level in 2 x 2 cells. mpp=2 is its level 1 as it is."""
    pixels = np.random.default_rng(5).integers(0, 256, (256, 192), dtype=np.uint8)
    path = tmp_path / "aperio.ome.tif"
    _ome_pyramid(path, 0.5, base=pixels, factors=(4, 16))
    one = xfskde.open_image(path, mpp=1)
    assert (one.attrs["source_level"], one.attrs["source_binning"]) == (0, 2)
    np.testing.assert_array_equal(one.values, _cell_means(pixels, 2))
    two = xfskde.open_image(path, mpp=2)
    assert two.attrs["source_level"] == 1 and "source_binning" not in two.attrs
    three = xfskde.open_image(path, mpp=4)  # level 1 (2 µm) in 2 x 2 cells, not level 2 (8 µm)
    assert (three.attrs["source_level"], three.attrs["source_binning"]) == (1, 2)
    # the tissue mask of a binned image is made from the file's smallest level, as for a level
    from xfskde.masks import _whole_source

    assert _whole_source(one, None)[0] == one.encoding["source"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {
                "description": "Aperio Image Library v12.0.5\n64x64 (64x64) -> 64x64 JPEG/RGB Q=70"
                "|AppMag = 20|MPP = 0.4990"
            },
            (0.499, 0.499),
        ),
        ({"resolution": (2e4, 1e4), "resolutionunit": "CENTIMETER"}, (1.0, 0.5)),
        ({"resolution": (300, 300), "resolutionunit": "INCH"}, None),  # a printing hint
        ({"imagej": True, "resolution": (4.0, 4.0), "metadata": {"unit": "micron"}}, (0.25, 0.25)),
        # Fiji escapes the micro sign of its µm calibration: "unit=\\u00B5m"
        ({"imagej": True, "resolution": (4.0, 4.0), "metadata": {"unit": "\\u00B5m"}}, (0.25,) * 2),
        ({}, None),
    ],
)
def test_pixel_size_from_svs_resolution_tags_and_imagej(tmp_path, options, expected):
    path = tmp_path / "image.tif"
    tifffile.imwrite(path, np.zeros((64, 64), np.uint8), **options)
    image = xfskde.open_image(path)
    if expected is None:
        assert "source_pixel_size_um" not in image.attrs and "x" not in image.coords
    else:
        np.testing.assert_allclose(image.attrs["source_pixel_size_um"], expected)
        np.testing.assert_allclose(image.x.values[1] - image.x.values[0], expected[1])


@pytest.mark.parametrize(
    ("unit", "size"),
    [
        ("\\u00B5m", 0.325),  # the micro sign, escaped as Fiji writes it
        ("\\u03BCm", 0.325),  # the Greek mu, escaped
        ("micron", 0.325),
        ("microns", 0.325),
        ("nm", 0.325e-3),
        ("mm", 325.0),
        ("cm", 3250.0),
        ("inch", 0.325 * 25400),
        ("pixel", None),  # not calibrated
    ],
)
def test_pixel_size_from_an_imagej_description_as_fiji_writes_it(tmp_path, unit, size):
    path = tmp_path / "fiji.tif"
    description = f"ImageJ=1.54f\nimages=1\nunit={unit}\nloop=false\n"
    tifffile.imwrite(path, np.zeros((64, 64), np.uint16), description=description,
                     resolution=(1 / 0.325, 1 / 0.325))  # fmt: skip
    with tifffile.TiffFile(path) as tif:
        assert tif.is_imagej and tif.imagej_metadata["unit"] == unit
    image = xfskde.open_image(path)
    if size is None:
        assert "source_pixel_size_um" not in image.attrs
    else:
        np.testing.assert_allclose(image.attrs["source_pixel_size_um"], (size, size), rtol=1e-6)


def test_results_carry_micrometres_and_the_source(tmp_path):
    path = tmp_path / "slide.ome.tif"
    base = _ome_pyramid(path)
    field = xfskde.local_fskde(xfskde.open_image(path), order=3, window="box", size=8, stride=8)
    np.testing.assert_allclose(field.x.values[:2], 0.25 * np.array([3.5, 11.5]))
    assert field.x.attrs["units"] == "µm"
    assert field.attrs["source_pixel_size_um"] == [0.25, 0.25]
    np.testing.assert_array_equal(
        field.values, xfskde.local_fskde(base, order=3, window="box", size=8, stride=8)
    )


def test_ome_zarr_levels_have_coordinates_in_micrometres(tmp_path):
    maps = xr.DataArray(np.random.default_rng(1).random((40, 60)).astype(np.float32),
                        dims=("y", "x"), name="energy")  # fmt: skip
    xfskde.write_ome_zarr(maps, tmp_path / "maps.ome.zarr", pixel_size=0.5, coarsest=16)
    level0 = xfskde.open_image(tmp_path / "maps.ome.zarr")
    np.testing.assert_allclose(level0.x.values[:2], [0.0, 0.5])
    assert level0.attrs["source_pixel_size_um"] == [0.5, 0.5]
    level1 = xfskde.open_image(tmp_path / "maps.ome.zarr", mpp=1.0)
    assert level1.attrs["source_level"] == 1
    np.testing.assert_allclose(level1.x.values[:2], [0.25, 1.25])


def test_image_levels_describe_what_open_image_reads(tmp_path):
    from xfskde.io.images import image_levels

    path = tmp_path / "slide.ome.tif"
    _ome_pyramid(path)
    levels = image_levels(path)
    assert [(lv.shape, lv.pixel_size, lv.units, lv.tile) for lv in levels] == [
        ((512, 384), (0.25, 0.25), "µm", (64, 64)),
        ((256, 192), (0.5, 0.5), "µm", (64, 64)),
        ((128, 96), (1.0, 1.0), "µm", (64, 64)),
    ]
    for i, level in enumerate(levels):
        image = xfskde.open_image(path, level=i)
        assert image.shape == level.shape and image.dtype == level.dtype
        assert image.attrs["source_pixel_size_um"] == list(level.pixel_size)


def test_write_tasks_say_what_they_do(tmp_path):
    from dask.base import key_split

    image = xr.DataArray(CAMERA[:128, :128].astype(np.float32), dims=("y", "x")).chunk(64)
    field = xfskde.local_fskde(image, order=2, window="box", size=3, stride=2)
    pending = xfskde.write_coefficients(field, tmp_path / "f.zarr", compute=False)
    names = {key_split(k) for k in dict(pending.__dask_graph__())}
    assert {"xfskde-coefficients", "xfskde-write", "xfskde-pending"} <= names
    assert not names & {"blocks", "concatenate", "reshape"}, names


def test_a_write_opens_its_arrays_once_on_threads(tmp_path, monkeypatch):
    """The write tasks of one write share the opened array and completion record on threads
    (each block opened them: two metadata reads, each a round trip to zarr's event loop); a
    task unpickled on a cluster's worker gets its own, unopened."""
    import pickle

    import xfskde.io.stores as stores

    opened = []
    real = stores._opened_targets
    monkeypatch.setattr(stores, "_opened_targets", lambda *a: opened.append(a) or real(*a))
    values = np.random.default_rng(4).random((128, 96)).astype(np.float32)
    maps = xr.DataArray(values, dims=("y", "x"), name="v").chunk(32)
    store = tmp_path / "v.zarr"
    assert xfskde.io.write_blocks(maps, store, name="v", scheduler="threads") == 12
    assert len(opened) == 1
    np.testing.assert_array_equal(xfskde.io.open_blocks(store, name="v").values, values)
    assert xfskde.io.store_status(store)["complete"]
    targets = stores._Targets(store, "v")
    targets.arrays()
    copy = pickle.loads(pickle.dumps(targets))
    assert copy.store == store and copy.name == "v" and copy._arrays is None
    assert copy.arrays()[0].shape == (128, 96)


def test_block_store_of_channel_first_data(tmp_path):
    """An OME-Zarr level is (c, y, x): the store cuts the dims named y and x into blocks and
    keeps c whole, wherever they are; resume, reading back and verifying follow them."""
    from xfskde.io.stores import verify_store

    values = np.random.default_rng(3).random((3, 100, 70)).astype(np.float32)
    maps = xr.DataArray(values, dims=("c", "y", "x"), coords={"c": ["a", "b", "d"]}).chunk(
        {"y": 32, "x": 32}
    )
    store = tmp_path / "cyx.zarr"
    pending = xfskde.io.write_blocks(maps, store, name="0", compute=False)
    assert pending.shape == (12,)  # 4 x 3 blocks of 32 x 32
    pending[:5].compute()
    assert xfskde.io.store_status(store)["blocks_done"] == 5
    assert xfskde.io.write_blocks(maps, store, name="0", resume=True) == 7
    assert zarr.open_array(store / "0").chunks == (3, 32, 32)
    back = xfskde.io.open_blocks(store, name="0")
    assert back.dims == ("c", "y", "x")
    np.testing.assert_array_equal(back.values, values)
    assert verify_store(store, name="0").whole


def test_a_store_written_before_gradient_operators_resumes(tmp_path):
    """Stores laid out before fields recorded their gradient operator were central-difference
    fields: they resume with the default, and are refused with another operator."""
    image = xr.DataArray(CAMERA[:128, :128].astype(np.float32), dims=("y", "x")).chunk(64)
    field = xfskde.local_fskde(image, order=2, window="box", size=3)
    store = tmp_path / "old.zarr"
    pending = xfskde.write_coefficients(field, store, compute=False)
    pending[:1].compute()
    group = zarr.open_group(store, mode="r+")
    old = json.loads(group.attrs["xfskde_parameters"])
    del old["gradient"], old["gradient_scale"]
    group.attrs["xfskde_parameters"] = json.dumps(old, sort_keys=True)
    scharr = xfskde.local_fskde(image, order=2, window="box", size=3, gradient="scharr")
    with pytest.raises(xfskde.exceptions.StoreParametersError):
        xfskde.write_coefficients(scharr, store, resume=True)
    assert xfskde.write_coefficients(field, store, resume=True) == 3


def test_a_dataset_is_refused_with_what_to_pass():
    """An xarray.Dataset (a netCDF file opened whole) gave three unrelated errors, one from
    deep in NumPy; every door now says which DataArray to pass, and the advice works."""
    g = CAMERA[:48, :64].astype(np.float32)
    ds = xr.Dataset({"b4": (("y", "x"), g), "b8": (("y", "x"), g[::-1])})
    advice = r"Dataset \(variables \['b4', 'b8'\]\).*ds\['b4'\]"
    for door in (
        xfskde.open_image,
        lambda d: xfskde.local_fskde(d, order=4),
        lambda d: xfskde.segment(d, 2),
    ):
        with pytest.raises(DimensionError, match=advice):
            door(ds)
    assert xfskde.local_fskde(ds["b4"], order=4).dims == ("y", "x", "k")
    assert xfskde.segment(ds.to_dataarray("band"), 2, size=4, sample=2000).dims == ("y", "x")


def test_a_dataarray_given_chunks_is_planned_as_a_file_and_not_copied():
    """open_image(DataArray, chunks=) used xarray's .chunk: every dim cut by the int (the
    colour dim too), no planner, and a NumPy-backed array copied whole (dask.array.from_array)."""
    pixels = np.zeros((5000, 300, 3), np.uint8)
    image = xr.DataArray(pixels, dims=("y", "x", "band"))
    planned = xfskde.open_image(image, chunks=2048, halo=9, stride=8)
    assert planned.chunks == ((2048, 2048, 904), (300,), (3,))  # plan_chunks's, colour whole
    pixels[0, 0, 0] = 9  # the Dask array slices the caller's array: no copy was made
    assert int(planned[0, 0, 0]) == 9
    lazy = xfskde.open_image(image.chunk({"y": 500}), chunks=2048)
    assert lazy.chunks[0] == (2000, 2000, 1000)  # whole chunks of the input, near the target


def test_a_coefficients_store_given_as_an_image_is_named_not_cut_into_planes(tmp_path, capsys):
    """``xfskde maps fskde.zarr ...`` (the coefficients store instead of the image) was told
    to choose a plane of its k axis, and then that the plane was complex. A source of complex
    numbers is now refused first, saying how to open a coefficients store."""
    from xfskde.cli import main

    field = xfskde.local_fskde(xr.DataArray(CAMERA[:64, :64], dims=("y", "x")), order=4)
    store = tmp_path / "fskde.zarr"
    xfskde.write_coefficients(field, store)
    with pytest.raises(xfskde.exceptions.ImageReadError, match="open_coefficients"):
        xfskde.open_image(store)
    with pytest.raises(xfskde.exceptions.ImageReadError, match=r"complex numbers \(complex128\)"):
        xfskde.open_image(np.zeros((8, 8), complex))
    assert main(["maps", str(store), str(tmp_path / "m.ome.zarr"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "holds complex numbers (complex" in err and "--plane" not in err


def test_a_zipped_zarr_store_is_read_in_place(tmp_path, capsys):
    """A Zarr store zipped (``.zip``), or a single-file OME-Zarr (``.ozx``, NGFF RFC-9), was
    "unknown format"; it is read in place through zarr's ZipStore, as its folder is — levels,
    coordinates, a version of its own — and by worker processes too (the store pickles)."""
    import shutil

    from xfskde.io.images import _refuse_remote_zip, image_levels

    image = xr.DataArray(CAMERA[:128, :96], dims=("y", "x"),
                         coords={"y": np.arange(128) * 0.5, "x": np.arange(96) * 0.5})  # fmt: skip
    image.x.attrs["units"] = image.y.attrs["units"] = "µm"
    field = xfskde.local_fskde(image, order=4, stride=4)
    maps = {"energy": xfskde.orientation.energy(field)}
    xfskde.io.write_ome_zarr(maps, tmp_path / "m.ome.zarr")
    plain = zarr.create_array(tmp_path / "p.zarr", shape=(64, 64), chunks=(32, 32),
                              dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    plain[...] = CAMERA[:64, :64]
    for folder, zipped in (("m.ome.zarr", "m.ozx"), ("p.zarr", "p.zarr.zip")):
        archive = shutil.make_archive(str(tmp_path / "z"), "zip", tmp_path / folder)
        os.replace(archive, tmp_path / zipped)
        inside, outside = xfskde.open_image(tmp_path / zipped), xfskde.open_image(tmp_path / folder)
        xr.testing.assert_identical(inside.drop_attrs().rename(None),
                                    outside.drop_attrs().rename(None))  # fmt: skip
        assert ", modified " in inside.attrs["source_version"]  # a file's: size, time, content
        assert image_levels(tmp_path / zipped) == image_levels(tmp_path / folder)
        np.testing.assert_array_equal(inside.compute(scheduler="processes"), outside.values)
    assert float(xfskde.open_image(tmp_path / "m.ozx").x[1]) == 2.75  # the cells' µm centres
    assert cli.main(["info", str(tmp_path / "p.zarr.zip")]) == 0  # an image
    assert "format    Zarr v3, zipped array" in capsys.readouterr().out
    assert cli.main(["info", str(tmp_path / "m.ozx")]) == 0  # a store xfskde wrote
    assert "status                 complete (1/1 blocks)" in capsys.readouterr().out
    stored = [xfskde.io.open_blocks(tmp_path / name).values for name in ("m.ozx", "m.ome.zarr")]
    np.testing.assert_array_equal(*stored)
    with pytest.raises(xfskde.exceptions.ParameterError, match="a zip file is read, not written"):
        xfskde.write_coefficients(field, tmp_path / "out.zarr.zip")
    with pytest.raises(ImageReadError, match="only from a local file"):
        _refuse_remote_zip(xfskde.io.Location("s3://bucket/m.ozx"))


def test_a_store_that_cannot_be_listed_still_has_a_version(monkeypatch):
    """A public bucket grants reading objects, not listing them: the version of a Zarr store
    there (and of a TIFF, whose is_dir lists its prefix) raised PermissionError and
    open_image with it. The store is known by its metadata, the file by its own info."""
    from fsspec.implementations.memory import MemoryFileSystem

    fs = MemoryFileSystem()
    fs.pipe("/public/x.zarr/zarr.json", b"{}")
    fs.pipe("/public/x.zarr/c/0/0", b"chunk")
    fs.pipe("/public/a.tif", b"tiff")

    def denied(*args, **kwargs):
        raise PermissionError("ListBucket denied")

    monkeypatch.setattr(MemoryFileSystem, "isdir", denied)
    monkeypatch.setattr(MemoryFileSystem, "find", denied)
    try:
        store = xfskde.io.Location("memory://public/x.zarr").version()
        assert store.startswith("1 files, sha256 ")  # its zarr.json
        assert xfskde.io.Location("memory://public/a.tif").version().startswith("4 bytes, ")
    finally:
        monkeypatch.undo()
        fs.rm("/public", recursive=True)  # the memory filesystem is the process's


def test_a_photo_shown_turned_is_read_as_stored_and_says_so(tmp_path):
    """A phone's JPEG stores its pixels as the sensor saw them and an EXIF orientation that
    viewers apply: read as stored (as scikit-image reads it), its maps and labels were of a
    picture turned 90° from the one the user looks at, without a word. They still are (the
    library does not guess which one is meant), but the reader now says so; a photo without
    the tag, or with orientation 1, is quiet."""
    import warnings

    from PIL import Image

    from xfskde.exceptions import ExifOrientationWarning

    picture = Image.fromarray(data.astronaut()[:64, :96])
    for orientation, turned in ((6, "turned 90° clockwise"), (3, "turned 180°")):
        exif = Image.Exif()
        exif[0x0112] = orientation
        picture.save(tmp_path / "photo.jpg", exif=exif)
        with pytest.warns(ExifOrientationWarning, match=f"viewers show it {turned}"):
            image = xfskde.open_image(tmp_path / "photo.jpg")
        assert image.sizes["y"] == 64 and image.sizes["x"] == 96  # as stored
        with Image.open(tmp_path / "photo.jpg") as opened:  # the picture in memory: the same
            with pytest.warns(ExifOrientationWarning, match=r"photo.jpg says .*np.rot90\(values"):
                assert xfskde.local_fskde(opened, order=2, channel_axis=-1).shape[:2] == (64, 96)
            with pytest.warns(ExifOrientationWarning, match=f"viewers show it {turned}"):
                xfskde.open_image(opened)
    tiff = tmp_path / "turned.tif"  # a TIFF's own Orientation tag: the same
    tifffile.imwrite(tiff, data.camera()[:32, :48], extratags=[(274, 3, 1, 8, True)])
    with pytest.warns(ExifOrientationWarning, match=r"turned 90° counter-clockwise \(TIFF"):
        assert xfskde.open_image(tiff).shape == (32, 48)
    for exif_orientation in (None, 1):
        exif = Image.Exif()
        if exif_orientation:
            exif[0x0112] = exif_orientation
        picture.save(tmp_path / "plain.jpg", exif=exif)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ExifOrientationWarning)
            xfskde.open_image(tmp_path / "plain.jpg")
            with Image.open(tmp_path / "plain.jpg") as opened:
                xfskde.open_image(opened)


def test_a_tiff_picture_pillow_turns_is_read_as_stored_as_its_file_is(tmp_path):
    """Pillow turns a TIFF by its Orientation tag as it loads it (and drops the tag), where
    tifffile and open_image(path) read it as stored: segment(Image.open(path)) labelled the
    turned grid, (128, 192) where the file's labels are (192, 128), and still warned "read as
    stored". A TIFF picture is read as stored now, each orientation turned back exactly, the
    same object read again the same way, and the warning names the TIFF's tag."""
    from PIL import Image

    from xfskde.exceptions import ExifOrientationWarning

    stored = np.dstack([data.astronaut()[:48, :80, 0], CAMERA[:48, :80], CAMERA[48:96, :80]])
    for orientation in range(2, 9):
        path = tmp_path / f"camera{orientation}.tif"
        tifffile.imwrite(path, stored, photometric="rgb", extratags=[(274, 3, 1, orientation,
                                                                      True)])  # fmt: skip
        with Image.open(path) as picture:
            with pytest.warns(ExifOrientationWarning, match=f"TIFF Orientation {orientation}"):
                opened = xfskde.open_image(picture)
            np.testing.assert_array_equal(opened.values, stored)  # not Pillow's turned grid
            with pytest.warns(ExifOrientationWarning, match="TIFF"):  # its tag gone: known
                np.testing.assert_array_equal(xfskde.open_image(picture).values, stored)
    with Image.open(tmp_path / "camera6.tif") as picture, pytest.warns(ExifOrientationWarning):
        assert xfskde.segment(picture, 2).shape == (48, 80)


def test_segment_warns_once_of_a_turned_photo(tmp_path):
    """segment(Image.open("photo.jpg"), n) read the picture in its fit and again in its
    labels: a plain script showed the same ExifOrientationWarning three times (the fit's
    warning filters reset Python's record of the ones shown). Once per call now, under any
    filter; another call warns again."""
    import warnings

    from PIL import Image

    from xfskde.exceptions import ExifOrientationWarning

    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(data.astronaut()[:64, :96]).save(tmp_path / "photo.jpg", exif=exif)
    for action in ("default", "always"):
        with Image.open(tmp_path / "photo.jpg") as picture:
            with warnings.catch_warnings(record=True) as shown:
                warnings.simplefilter(action)
                xfskde.segment(picture, 2)
                xfskde.open_image(picture)  # another call: said again
        turned = [w for w in shown if issubclass(w.category, ExifOrientationWarning)]
        assert len(turned) == 2, [str(w.message) for w in turned]
        assert all(w.filename == __file__ for w in turned)


def test_a_cmyk_picture_is_read_as_rgb_as_pillow_converts_it(tmp_path, capsys):
    """A CMYK JPEG (a print file) was read as four channels C, M, Y, K: its gradients those
    of inks, and plot.segmentation drew K as the alpha of an RGBA picture (a blank panel).
    Its file and its PIL picture are read as RGB now, as Pillow converts it, and attrs and
    xfskde info say what the file stores."""
    from PIL import Image

    rgb = Image.fromarray(data.astronaut()[:64, :96])
    rgb.convert("CMYK").save(tmp_path / "print.jpg", quality=95)
    with Image.open(tmp_path / "print.jpg") as picture:
        assert picture.mode == "CMYK"
        expected = np.asarray(picture.convert("RGB"))
        from_picture = xfskde.open_image(picture)
    from_file = xfskde.open_image(tmp_path / "print.jpg")
    assert from_file.sizes == {"y": 64, "x": 96, "c": 3}
    np.testing.assert_array_equal(from_file.values, expected)
    np.testing.assert_array_equal(from_picture.values, expected)
    assert from_file.attrs["source_mode"] == "CMYK, read as RGB as Pillow converts it"
    assert cli.main(["info", str(tmp_path / "print.jpg")]) == 0
    out = capsys.readouterr().out
    assert "colour    stores CMYK (print inks); read as RGB, as Pillow converts it" in out
    assert "(64, 96, 3)" in out


def test_an_animated_picture_is_read_one_frame_at_a_time(tmp_path, capsys):
    """An animated GIF given as a path failed with "cannot tell the dims of ... of shape
    (3, 64, 96, 3)", xfskde info as well, and its PIL picture was read as its first frame
    without a word. Its frames are along t now: a frame is picked with plane (--plane),
    without one the refusal says what the file is; info describes its frames; a picture of
    several frames is refused alike, with how to pass one."""
    from PIL import Image

    frames = [Image.fromarray(data.astronaut()[i * 10 : i * 10 + 64, :96]) for i in range(3)]
    path = tmp_path / "film.gif"
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100)
    with pytest.raises(DimensionError, match=r"film.gif is an animated GIF of 3 frames, along "
                       r"t: pick one, plane=\{'t': 0\}"):  # fmt: skip
        xfskde.open_image(path)
    with Image.open(path) as picture:
        picture.seek(1)
        second = np.asarray(picture.convert("RGB"))
        with pytest.raises(DimensionError, match=r"animated GIF of 3 frames \(at frame 1\): "
                           r"pass one frame, picture.seek\(i\) then picture.copy\(\)"):  # fmt: skip
            xfskde.local_fskde(picture, order=2, channel_axis=-1)
        one = picture.copy()
    image = xfskde.open_image(path, plane={"t": 1})
    assert image.sizes == {"y": 64, "x": 96, "c": 3}
    np.testing.assert_array_equal(image.values, second)
    np.testing.assert_array_equal(xfskde.open_image(one).values, second)
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "frames    an animated GIF of 3 frames, along t" in out
    planes = (
        "t 3 (coefficients, maps and segment read one plane: --plane t=N chooses it, t=0 to t=2)"
    )
    assert f"planes    {planes}" in out and "(3, 64, 96, 3)" in out
    assert cli.main(["segment", str(path), str(tmp_path / "l.png"), "--textures", "2"]) == 2
    assert "animated GIF of 3 frames, along t: pick one, --plane t=0" in capsys.readouterr().err
    frames[0].save(tmp_path / "still.png")  # one frame: no t to pick along
    with pytest.raises(ParameterError, match="plane selects along the named axes"):
        xfskde.open_image(tmp_path / "still.png", plane={"t": 0})


def test_channel_axis_with_an_opened_colour_image_says_to_drop_it(tmp_path):
    """getting-started's channel_axis=-1 with open_image's result (its colour dim is c) was
    told to rename a dim 'dim_2' it does not have."""
    from PIL import Image

    Image.fromarray(data.astronaut()[:32, :32]).save(tmp_path / "rgb.png")
    image = xfskde.open_image(tmp_path / "rgb.png")
    with pytest.raises(ParameterError, match=r"names its colour dim already \('c'\): drop "
                       "channel_axis$"):  # fmt: skip
        xfskde.local_fskde(image, order=2, channel_axis=-1)


def test_a_palette_tiff_is_refused_as_an_image_and_read_by_its_indices_as_a_mask(tmp_path, capsys):
    """A palette TIFF (Photometric 3: each value an index into a colour map) was read as grey
    intensities: its maps and labels were those of the colour map's order. One whose values
    are data the map only shows (GDAL's metadata here: a classification's colour table) is
    refused now by the consumers with the conversion; a mask still reads its indices (two
    classes, white at index 0); ``xfskde info`` says what its values are. (A palette TIFF
    whose colours are the picture is read as RGB: tests/test_pictures.py.)"""
    from xfskde.cli import main
    from xfskde.exceptions import ImageReadError
    from xfskde.masks import resolve_mask

    indices = np.zeros((64, 64), np.uint8)
    indices[:, 32:] = 1
    colours = np.zeros((3, 256), np.uint16)
    colours[:, 0] = 65535  # index 0 white, index 1 black: as intensities, inverted
    gdal = '<GDALMetadata><Item name="AREA_OR_POINT">Area</Item></GDALMetadata>'
    tifffile.imwrite(tmp_path / "drawn.tif", indices, photometric="palette", colormap=colours,
                     extratags=[(42112, "s", 0, gdal, True)])  # fmt: skip
    image = xfskde.open_image(tmp_path / "drawn.tif")
    assert image.attrs["source_palette"] == 256
    for compute in (lambda: xfskde.segment(image, 2),
                    lambda: xfskde.local_fskde(image, order=4, size=3)):  # fmt: skip
        with pytest.raises(ImageReadError, match=r"is a palette image .* convert it to RGB"):
            compute()
    mask = resolve_mask(str(tmp_path / "drawn.tif"), xr.DataArray(np.zeros((64, 64)),
                                                                  dims=("y", "x")))  # fmt: skip
    np.testing.assert_array_equal(mask.values, indices > 0)
    assert main(["maps", str(tmp_path / "drawn.tif"), str(tmp_path / "m.zarr")]) == 2
    assert "is a palette image" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "drawn.tif")]) == 0
    assert "indices of a colour map of 256 entries" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("photometric", "extras", "alpha"),
    [("minisblack", [0, 0, 0, 0, 2], 5), ("rgb", [2, 0, 0], 3), ("rgb", [0, 0, 1], 5)],
    ids=["five-bands-and-alpha", "rgb-alpha-bands", "rgb-bands-alpha"],
)
def test_the_alpha_of_a_multispectral_tiff_makes_its_pixels_missing(
    tmp_path, photometric, extras, alpha
):
    """A drone's multispectral orthomosaic (five bands and alpha, as Metashape writes it) or
    GDAL's RGB + NIR with ALPHA=YES (alpha the first extra sample): the channel ExtraSamples
    marks alpha is dropped and its pixels 0 are missing, wherever it is. Until 2026-11-30 only
    the last of 2 or 4 channels was: a six-band orthomosaic's alpha was read as a band, its
    area outside the flight a texture of its own."""
    from xfskde.datasets import random_textures

    rgb, _ = random_textures((256, 256), seed=3)
    colour = (rgb * 255).astype(np.uint8)
    planes = [colour[..., i] for i in range(3)] + [colour.mean(-1).astype(np.uint8),
                                                   colour[..., 0] // 2]  # fmt: skip
    opacity = np.full((256, 256), 255, np.uint8)
    opacity[:, :60] = 0
    planes.insert(alpha, opacity)
    stored = np.dstack(planes)
    path = tmp_path / "orthomosaic.tif"
    tifffile.imwrite(path, stored, photometric=photometric, extrasamples=extras, tile=(128, 128))
    image = xfskde.open_image(path)
    assert image.sizes["c"] == 5 and image.dtype == np.float32
    values = image.values
    assert np.isnan(values[:, :60]).all() and not np.isnan(values[:, 60:]).any()
    others = np.delete(stored, alpha, axis=-1)
    np.testing.assert_array_equal(values[:, 60:], others[:, 60:])
    labels = xfskde.segment(image, 3)
    assert (labels.values[:, :60] == 0).all() and (labels.values[:, 60:] > 0).all()


def test_a_tiff_that_stores_zero_as_white_is_read_as_viewers_show_it(tmp_path, capsys):
    """Photometric MinIsWhite (0 is white: scanners, some cameras) was read as stored, the
    image's negative: its gradients pointed the other way (directions off by pi) and a
    brightfield mask took its bright glass for dark tissue. It is read inverted, 2^bits - 1
    less the stored value, as PIL and every viewer show it, its nodata alike."""
    from PIL import Image

    camera = data.camera()
    path = tmp_path / "negative.tif"
    tifffile.imwrite(path, 255 - camera, photometric="miniswhite")
    image = xfskde.open_image(path)
    assert image.dtype == np.uint8
    np.testing.assert_array_equal(image.values, camera)
    np.testing.assert_array_equal(image.values, np.asarray(Image.open(path)))
    assert "MinIsWhite" in image.attrs["source_photometric"]
    from xfskde.cli import main

    assert main(["info", str(path)]) == 0
    assert "0 is white (MinIsWhite): read inverted" in capsys.readouterr().out
    twelve = tmp_path / "twelve.tif"
    counts = (camera.astype(np.uint16) * 16).astype(np.uint16)
    tifffile.imwrite(twelve, 4095 - counts, photometric="miniswhite", bitspersample=12,
                     extratags=[(42113, "s", 0, "4095", True)])  # GDAL_NODATA, stored  # fmt: skip
    read = xfskde.open_image(twelve)
    np.testing.assert_array_equal(read.values, counts)
    assert read.attrs["_FillValue"] == 0  # the stored 4095 is read as 0
