"""``xfskde info``: stores aligned and summarised, input images with their levels and pixel sizes,
and a reader that goes away (``| head``)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from skimage import data

import xfskde
from xfskde.cli import main

ROOT = Path(xfskde.__file__).resolve().parents[1]


def _sections(text: str) -> list[list[str]]:
    """The output's blocks of lines, split at blank lines."""
    return [block.splitlines() for block in text.strip().split("\n\n")]


def _rows(lines: list[str]) -> dict[str, str]:
    return dict(line.split(None, 1) for line in lines)


def _value_column(line: str) -> int:
    """Where the value of a ``key  value`` line starts."""
    key = line.split(None, 1)[0]
    return len(line) - len(line[len(key) :].lstrip())


def _table(lines: list[str]) -> list[list[str]]:
    """A table's cells, cut at the header's column starts (cells are two spaces apart)."""
    header = lines[0]
    starts = [0] + [i + 2 for i in range(len(header) - 2) if header[i : i + 2] == "  "
                     and header[i + 2] != " "]  # fmt: skip
    ends = [*starts[1:], None]
    return [[line[a:b].strip() for a, b in zip(starts, ends, strict=True)] for line in lines]


# -------------------------------------------------------------------------------------- stores


def test_a_label_store_is_aligned_and_its_endmembers_summarised(tmp_path, capsys):
    np.save(tmp_path / "in.npy", data.astronaut()[:96, :96])
    out = tmp_path / "labels.zarr"
    argv = ["segment", str(tmp_path / "in.npy"), str(out), "--textures", "3", "--sample", "2000"]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["info", str(out)]) == 0
    (lines,) = _sections(capsys.readouterr().out)
    assert len({_value_column(line) for line in lines}) == 1  # every value in one column
    rows = _rows(lines)
    endmembers = np.asarray(zarr.open_group(out, mode="r")["labels"].attrs["endmembers"])
    assert endmembers.ndim == 1 and endmembers.size % 3 == 0  # three rows, one after the other
    assert rows["endmembers"] == f"{endmembers.shape} float64 array"
    assert rows["n_textures"] == "3" and rows["color_bins"] == "16"
    assert rows["status"] == "complete (1/1 blocks)" and rows["variable"] == "labels"
    assert max(len(line) for line in lines) < 250


def test_a_coefficient_store_and_its_verify_section_are_aligned(tmp_path, capsys):
    camera = xr.DataArray(data.camera()[:64, :64], dims=("y", "x"))
    field = xfskde.local_fskde(camera, order=4, window="box", size=8, stride=8)
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(field, store, chunks=4)
    assert main(["info", "--verify", str(store)]) == 0
    described, verified = _sections(capsys.readouterr().out)
    assert len({_value_column(line) for line in described}) == 1
    assert _rows(described)["coefficient_convention"].startswith("F_k = H_k")
    assert verified == ["verify    4 of 4 blocks read: every checksum matches"]


# -------------------------------------------------------------------------------------- images


def test_a_pyramidal_ome_tiff_lists_its_levels_and_pixel_sizes(tmp_path, capsys):
    pixels = data.astronaut()[:384, :320]
    path = tmp_path / "slide.ome.tif"
    options = {"tile": (128, 128), "photometric": "rgb", "compression": "zlib"}
    metadata = {"axes": "YXS", "PhysicalSizeX": 0.25, "PhysicalSizeXUnit": "µm",
                "PhysicalSizeY": 0.3, "PhysicalSizeYUnit": "µm"}  # fmt: skip
    with tifffile.TiffWriter(path) as tif:
        tif.write(pixels, subifds=2, metadata=metadata, **options)
        tif.write(pixels[::2, ::2], subfiletype=1, **options)
        tif.write(pixels[::4, ::4], subfiletype=1, **options)
    assert main(["info", str(path)]) == 0
    head, levels = _sections(capsys.readouterr().out)
    rows = _rows(head)
    assert rows["image"] == str(path) and rows["format"] == "OME-TIFF"
    assert rows["axes"] == "YXS" and rows["levels"] == "3"
    assert rows["pixel_size"] == "from the OME-XML PhysicalSizeY/X"
    assert _table(levels) == [
        ["level", "shape", "dtype", "tile/chunk", "pixel size (y, x)"],
        ["0", "(384, 320, 3)", "uint8", "(128, 128)", "(0.3, 0.25) µm"],
        ["1", "(192, 160, 3)", "uint8", "(128, 128)", "(0.6, 0.5) µm"],
        ["2", "(96, 80, 3)", "uint8", "(128, 128)", "(1.2, 1) µm"],
    ]
    with tifffile.TiffFile(path) as tif:  # a second reader of what the table says
        assert [lv.shape for lv in tif.series[0].levels] == [(384, 320, 3), (192, 160, 3),
                                                            (96, 80, 3)]  # fmt: skip


def test_tiff_resolution_tags_give_the_pixel_size_of_each_level(tmp_path, capsys):
    pixels = data.camera()[:256, :256]
    path = tmp_path / "scan.tif"
    with tifffile.TiffWriter(path) as tif:  # 20000 px/cm across, 10000 down: 0.5 x 1 µm
        tif.write(pixels, subifds=1, resolution=(20000, 10000), resolutionunit="CENTIMETER")
        tif.write(pixels[::2, ::2], subfiletype=1)  # no unit of its own: scaled from level 0
    assert main(["info", str(path)]) == 0
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["pixel_size"] == "from the TIFF resolution tags"
    table = _table(levels)
    assert [row[4] for row in table[1:]] == ["(1, 0.5) µm", "(2, 1) µm"]
    assert table[1][3] == f"({tifffile.TiffFile(path).pages[0].rowsperstrip}, 256)"
    assert _rows(head)["tiles"] == "strips"

    # an Aperio SVS says its µm per pixel in its description, which wins over the tags
    aperio = (
        "Aperio Image Library v12.0.15\r\n256x256 (128x128) JPEG/RGB Q=70|AppMag = 20|MPP = 0.499"
    )
    tifffile.imwrite(tmp_path / "slide.svs", pixels, tile=(128, 128), description=aperio,
                     resolution=(20000, 10000), resolutionunit="CENTIMETER")  # fmt: skip
    assert main(["info", str(tmp_path / "slide.svs")]) == 0
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["format"] == "SVS" and _rows(head)["pixel_size"] == "from the SVS MPP"
    assert _table(levels)[1] == ["0", "(256, 256)", "uint8", "(128, 128)", "(0.499, 0.499) µm"]


def test_geotiff_overviews_get_the_geotransform_pixel_size(tmp_path, capsys):
    pytest.importorskip("rioxarray")
    ys, xs = 5_000_000 - 10.0 * np.arange(600) - 5, 400_000 + 10.0 * np.arange(512) + 5
    image = xr.DataArray(np.random.default_rng(0).random((600, 512), np.float32),
                         dims=("y", "x"), coords={"y": ys, "x": xs})  # fmt: skip
    path = tmp_path / "cog.tif"
    image.rio.write_crs("EPSG:32633").rio.to_raster(path, driver="COG", blocksize=256)
    assert main(["info", str(path)]) == 0
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["format"] == "GeoTIFF"
    assert _rows(head)["crs"] == "EPSG:32633 (WGS 84 / UTM zone 33N)"
    import rasterio  # a second reader: GDAL's own overviews and their resolution

    expected = []
    with rasterio.open(path) as full:
        count = len(full.overviews(1))
    for i in range(-1, count):
        with rasterio.open(path, overview_level=None if i < 0 else i) as level:
            (dx, dy), shape = level.res, (level.height, level.width)
        expected.append([str(i + 1), str(shape), "float32", "(256, 256)", f"({dy:g}, {dx:g}) m"])
    assert count >= 1 and _table(levels)[1:] == expected
    assert expected[:2] == [
        ["0", "(600, 512)", "float32", "(256, 256)", "(10, 10) m"],
        ["1", "(300, 256)", "float32", "(256, 256)", "(20, 20) m"],
    ]
    # the CRS of a store of its coefficients, and of the scene written to Zarr by xarray
    assert main(["coefficients", str(path), str(tmp_path / "c.zarr"), "--stride", "8",
                 "--no-progress"]) == 0  # fmt: skip
    image.rio.write_crs("EPSG:32633").to_dataset(name="B04").to_zarr(tmp_path / "s.zarr")
    capsys.readouterr()
    for store in ("c.zarr", "s.zarr"):
        assert main(["info", str(tmp_path / store)]) == 0
        sections = _sections(capsys.readouterr().out)
        assert _rows(sections[0])["crs"] == "EPSG:32633 (WGS 84 / UTM zone 33N)", store
    # the scene's pixel size from its coordinate arrays, in its CRS's unit, as the GeoTIFF's
    assert _table(sections[1])[1] == ["0", "(600, 512)", "float32", "(300, 256)", "(10, 10) m"]


def test_ome_zarr_zarr_png_and_npy_images(tmp_path, capsys):
    pixels = data.camera()[:200, :160]
    group = zarr.open_group(tmp_path / "image.zarr", mode="w")
    datasets = []
    for i in range(2):
        level = pixels[:: 2**i, :: 2**i]
        group.create_array(str(i), shape=level.shape, chunks=(64, 64), dtype="uint8")[...] = level
        scale = {"type": "scale", "scale": [0.5 * 2**i, 0.4 * 2**i]}
        datasets.append({"path": str(i), "coordinateTransformations": [scale]})
    axes = [{"name": n, "type": "space", "unit": "micrometer"} for n in "yx"]
    group.attrs["ome"] = {"version": "0.5", "multiscales": [{"axes": axes, "datasets": datasets}]}
    assert main(["info", str(tmp_path / "image.zarr")]) == 0
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["format"] == "OME-Zarr 0.5 multiscales (Zarr v3)"
    assert _table(levels)[1:] == [
        ["0", "(200, 160)", "uint8", "(64, 64)", "(0.5, 0.4) µm"],
        ["1", "(100, 80)", "uint8", "(64, 64)", "(1, 0.8) µm"],
    ]

    zarr.create_array(tmp_path / "plain.zarr", shape=(90, 70), chunks=(32, 32), dtype="float32")
    assert main(["info", str(tmp_path / "plain.zarr")]) == 0  # not an xfskde store: an image
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["format"] == "Zarr v3 array"
    assert _table(levels)[1] == ["0", "(90, 70)", "float32", "(32, 32)", "unknown"]

    from PIL import Image

    # a photograph's dpi is a printing hint, not a pixel size: open_image ignores it, so does info
    Image.fromarray(pixels).save(tmp_path / "scan.png", dpi=(254, 127))
    np.save(tmp_path / "array.npy", pixels.astype(np.float32))
    assert main(["info", str(tmp_path / "scan.png")]) == 0
    assert _table(_sections(capsys.readouterr().out)[1])[1] == [
        "0", "(200, 160)", "uint8", "(200, 160)", "unknown"
    ]  # fmt: skip
    assert main(["info", str(tmp_path / "array.npy")]) == 0
    assert _table(_sections(capsys.readouterr().out)[1])[1] == [
        "0", "(200, 160)", "float32", "(200, 160)", "unknown"
    ]  # fmt: skip
    assert main(["info", "--verify", str(tmp_path / "array.npy")]) == 2
    assert "--verify checks the chunks of a store" in capsys.readouterr().err


def test_stacks_and_multi_image_tiffs_name_what_they_hold_and_the_option(tmp_path, capsys):
    """A Zarr z-stack made ``info`` fail (it opened the image for a CRS, which needs a
    plane); a stack's rows say which planes there are and how to read one."""
    stack = zarr.create_array(tmp_path / "stack.zarr", shape=(3, 64, 48), chunks=(1, 32, 32),
                              dtype="uint16", dimension_names=("z", "y", "x"))  # fmt: skip
    stack[...] = 7
    assert main(["info", str(tmp_path / "stack.zarr")]) == 0
    head, levels = _sections(capsys.readouterr().out)
    assert _rows(head)["planes"] == (
        "z 3 (coefficients, maps and segment read one plane: --plane z=N chooses it, z=0 to z=2)"
    )
    assert _table(levels)[1] == ["0", "(3, 64, 48)", "uint16", "(32, 32)", "unknown"]
    tifffile.imwrite(tmp_path / "series.tif", np.zeros((2, 4, 3, 32, 32), np.uint8),
                     imagej=True, metadata={"axes": "TZCYX"})  # fmt: skip
    assert main(["info", str(tmp_path / "series.tif")]) == 0
    rows = _rows(_sections(capsys.readouterr().out)[0])
    assert rows["dims"] == "t z c y x"
    assert rows["planes"] == (
        "t 2, z 4 (coefficients, maps and segment read one plane: --plane t=N,z=N chooses it, "
        "t=0 to t=1, z=0 to z=3)"
    )
    tifffile.imwrite(tmp_path / "rgb.tif", np.zeros((32, 32, 3), np.uint8))
    assert main(["info", str(tmp_path / "rgb.tif")]) == 0
    rows = _rows(_sections(capsys.readouterr().out)[0])
    assert "planes" not in rows and rows["series"] == "1"  # colour is no plane
    with tifffile.TiffWriter(tmp_path / "scenes.ome.tif", ome=True) as tif:
        tif.write(np.zeros((32, 32), np.uint8), metadata={"Name": "left", "axes": "YX"})
        tif.write(np.zeros((3, 16, 16), np.uint8), metadata={"Name": "right", "axes": "CYX"})
    assert main(["info", str(tmp_path / "scenes.ome.tif")]) == 0
    assert _rows(_sections(capsys.readouterr().out)[0])["series"] == (
        "2: 0 'left' YX, 1 'right' CYX (the first is read; --series N|NAME reads another)"
    )


# -------------------------------------------------------------------------- a closed pipe


@pytest.mark.parametrize("what", ["store", "image"])
def test_info_survives_a_reader_that_went_away(tmp_path, what):
    if what == "store":
        camera = xr.DataArray(data.camera()[:32, :32], dims=("y", "x"))
        field = xfskde.local_fskde(camera, order=2, window="box", size=4)
        target = tmp_path / "f.zarr"
        xfskde.write_coefficients(field, target)
    else:
        target = tmp_path / "in.tif"
        tifffile.imwrite(target, data.camera()[:32, :32])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "xfskde.cli", "info", str(target)]
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads: the first write fails
    try:
        gone = subprocess.run(command, stdout=writer, stderr=subprocess.PIPE, env=env, text=True)
    finally:
        os.close(writer)
    assert (gone.returncode, gone.stderr) == (141, "")
    head = subprocess.run(
        f"{' '.join(map(str, command))} | head -1", shell=True, env=env, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    key = "store" if what == "store" else "image"
    assert head.stdout.split() == [key, str(target)] and head.stderr == ""


def test_a_store_whose_input_changed_since_says_it_is_stale(tmp_path, capsys):
    """A store computed from a file that has changed since (a new export under the same name)
    looked like the file's results; info now says so, with both versions. The same file, a
    moved one and a remote one say nothing."""
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, data.camera()[:64, :64])
    store = tmp_path / "out.zarr"
    assert main(["coefficients", str(tiff), str(store), "--order", "4", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["info", str(store)]) == 0
    assert "STALE" not in capsys.readouterr().out
    tifffile.imwrite(tiff, data.camera()[64:128, :64])
    os.utime(tiff, ns=(tiff.stat().st_mtime_ns + 10**9,) * 2)
    assert main(["info", str(store)]) == 0
    stale = [line for line in capsys.readouterr().out.splitlines() if line.startswith("STALE")]
    assert len(stale) == 1 and f"{tiff} has changed since this store was computed" in stale[0]
    tiff.unlink()
    assert main(["info", str(store)]) == 0
    assert "STALE" not in capsys.readouterr().out


def test_info_says_a_palette_png_stores_indices_read_as_their_colours(tmp_path, capsys):
    """``xfskde info labels.png`` on the palette PNG segment writes described its level as
    (H, W, 3) float32 only: what open_image reads (the indices' RGB colours, NaN where
    transparent), not what the file stores. It says both now."""
    from PIL import Image

    indices = np.zeros((6, 10), np.uint8)
    indices[:, 5:] = 2
    picture = Image.fromarray(indices, mode="L").convert("P")
    picture.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0])
    picture.save(tmp_path / "labels.png", transparency=0)
    Image.fromarray(np.zeros((6, 10, 3), np.uint8)).save(tmp_path / "rgb.png")
    assert main(["info", str(tmp_path / "labels.png")]) == 0
    out = capsys.readouterr().out
    assert (
        "palette   stores (6, 10) indices into a palette of 3 colours, index 0 transparent; "
        "read as their RGB colours (transparent pixels missing: NaN), as the levels below say "
        "(the indices: np.asarray(PIL.Image.open(path)); as --mask the indices are read)\n"
    ) in out
    assert "(6, 10, 3)  float32" in out  # what open_image gives
    assert main(["info", str(tmp_path / "rgb.png")]) == 0
    assert "\npalette " not in capsys.readouterr().out
