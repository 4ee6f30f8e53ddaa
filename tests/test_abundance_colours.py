"""A texture's abundance channel has its label's colour: the ``omero`` colours of the
abundances that ``xfskde segment`` writes to an OME-Zarr image (and the OME-XML ``Channel
Color`` of its OME-TIFF copy) are those of the ``image-label`` colours beside them. They were
the maps' palette, cyan for texture 1 (label colour blue 1F77B4) and yellow for texture 2
(orange FF7F0E)."""

from __future__ import annotations

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr

from xfskde.cli import main
from xfskde.datasets import dead_leaves
from xfskde.io import write_ome_tiff, write_ome_zarr

#: tab10's first three: labels 1, 2, 3 (xfskde._palette).
TAB10 = ["1F77B4", "FF7F0E", "2CA02C"]


def _label_hex(group: zarr.Group) -> list[str]:
    colors = group.attrs["ome"]["image-label"]["colors"]
    rgba = {c["label-value"]: c["rgba"] for c in colors}
    return ["".join(f"{v:02X}" for v in rgba[i][:3]) for i in sorted(rgba) if i]


def _ome_colours(path) -> list[str]:
    with tifffile.TiffFile(path) as tif:
        pixels = tifffile.xml2dict(tif.ome_metadata)["OME"]["Image"]
        channels = (pixels[0] if isinstance(pixels, list) else pixels)["Pixels"]["Channel"]
    # OME's Color: RGBA as one signed 32-bit integer, red in the high byte
    return [f"{(int(c['Color']) & 0xFFFFFFFF) >> 8:06X}" for c in channels]


@pytest.fixture(scope="module")
def slide(tmp_path_factory):
    image, _ = dead_leaves((96, 96), seed=11)
    path = tmp_path_factory.mktemp("colours") / "leaves.ome.tif"
    metadata = {"axes": "YXS", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    tifffile.imwrite(path, (image * 255).astype(np.uint8), photometric="rgb", metadata=metadata)
    return path


def test_segment_abundances_are_in_their_labels_colours(slide, tmp_path):
    out = tmp_path / "seg.ome.zarr"
    argv = ["segment", str(slide), str(out), "--textures", "3", "--features", "color,fskde",
            "--size", "3", "--coefficients", "4", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    root = zarr.open_group(out, mode="r")
    channels = root.attrs["ome"]["omero"]["channels"]
    assert [c["label"] for c in channels] == ["texture 1", "texture 2", "texture 3"]
    assert [c["color"] for c in channels] == TAB10  # was 00FFFF, FFFF00, FF0000
    assert _label_hex(root["labels/textures"]) == TAB10
    # ome-zarr-py reads them as the channels' colours
    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader

    node = next(iter(Reader(parse_url(str(out)))()))  # napari's colour maps: black to it
    read = [[round(v * 255) for v in c[1]] for c in node.metadata["colormap"]]
    assert read == [[int(h[i : i + 2], 16) for i in (0, 2, 4)] for h in TAB10]
    tif = tmp_path / "seg.ome.tif"
    assert main([*argv[:2], str(tif), *argv[3:]]) == 0
    assert _ome_colours(tif) == TAB10  # QuPath's channel colours, as the labels' palette


def test_maps_keep_their_colours_and_other_channels_are_not_textures(tmp_path):
    """Only a segmentation's abundances take the label colours: maps keep theirs, in the
    OME-TIFF's Channel Color too; channels that are not one per texture keep the palette."""
    rng = np.random.default_rng(0)
    maps = {n: xr.DataArray(rng.random((32, 32)), dims=("y", "x"))
            for n in ("coherence", "energy", "third")}  # fmt: skip
    tif = write_ome_tiff(maps, tmp_path / "maps.ome.tif")
    assert _ome_colours(tif) == ["00FF00", "FF00FF", "FF0000"]
    planes = xr.DataArray(rng.random((2, 32, 32)), dims=("texture", "y", "x"),
                          attrs={"n_textures": 3})  # fmt: skip
    group = write_ome_zarr(planes, tmp_path / "two.ome.zarr")  # 2 channels, 3 textures
    assert [c["color"] for c in group.attrs["ome"]["omero"]["channels"]] == ["00FFFF", "FFFF00"]
    three = xr.concat([planes, planes[:1]], dim="texture")
    group = write_ome_zarr(three, tmp_path / "three.ome.zarr")
    assert [c["color"] for c in group.attrs["ome"]["omero"]["channels"]] == TAB10
