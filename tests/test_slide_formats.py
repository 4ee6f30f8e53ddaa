"""Slides as scanners and converters write them, one step off the tested path: an Aperio SVS's
thumbnail and pages, OME-TIFFs whose pixel size is in their resolution tags, resolution tags
in inches or without a unit, alpha and extra samples — what is read, and what ``xfskde info``
says will be read. Every file is written by tifffile as the software named writes it."""

import numpy as np
import pytest
import tifffile
from skimage import data

import xfskde
from xfskde.cli import main

#: The µm per pixel of the slides below, as Aperio writes it.
MPP = 0.2527


def _rows(text: str) -> dict[str, str]:
    """The ``key  value`` rows of ``xfskde info``'s first block."""
    head = text.strip().split("\n\n")[0]
    return dict(line.split(None, 1) for line in head.splitlines())


def _step(image, dim: str) -> float:
    return float(image[dim][1] - image[dim][0])


def _svs(path, pixels: np.ndarray, metadata: dict | None = None) -> None:
    """An Aperio SVS as ScanScope writes it: the tiled baseline, a stripped thumbnail, two
    reduced levels, then the label and the macro photograph, each page described by a
    header ("1024x768 -> 128x96" for a downsampled copy) and ``|key = value`` items (the
    label's and macro's without MPP). ``metadata=None``: no tifffile description of its own,
    as a scanner writes; ``{}`` adds one, as a converter built on tifffile does."""
    ny, nx = pixels.shape[:2]
    head = "Aperio Image Library v12.0.15 \r\n"
    items = f"|AppMag = 40|StripeWidth = 2040|MPP = {MPP}|Filename = slide"
    jpeg = {"photometric": "rgb", "compression": "jpeg", "metadata": metadata}
    with tifffile.TiffWriter(path) as tif:
        tif.write(pixels, tile=(128, 128), description=f"{head}{nx}x{ny} [0,100 {nx}x{ny}] "
                  f"(128x128) JPEG/RGB Q=70{items}", **jpeg)  # fmt: skip
        thumb = pixels[::8, ::8]
        tif.write(thumb, description=f"{head}{nx}x{ny} -> {nx // 8}x{ny // 8} - {items}", **jpeg)
        for f in (2, 4):
            level = pixels[::f, ::f]
            tif.write(level, tile=(128, 128), description=f"{head}{nx}x{ny} [0,100 {nx}x{ny}] "
                      f"(128x128) -> {nx // f}x{ny // f} JPEG/RGB Q=70{items}", **jpeg)  # fmt: skip
        tif.write(pixels[:40, :60], subfiletype=1, description=f"{head}label 60x40",
                  photometric="rgb", compression="lzw", metadata=metadata)  # fmt: skip
        tif.write(pixels[:40, :100], subfiletype=9, description=f"{head}macro 100x40", **jpeg)


@pytest.fixture
def slide():
    return data.astronaut()[:384, :512]


def test_an_svs_thumbnail_is_measured_in_its_own_pixels(tmp_path, slide):
    """The MPP that every page of an SVS repeats measures the baseline's pixels: the
    thumbnail (series 1, 8 times smaller) read at 0.2527 µm, 8 times too fine, in its
    coordinates and in the OME-TIFF segmented from it; the label and the macro photograph
    are no part of the slide and have no pixel size."""
    path = tmp_path / "slide.svs"
    _svs(path, slide)
    with tifffile.TiffFile(path) as tif:  # the layout tifffile reads as Aperio's
        assert [s.name for s in tif.series] == ["Baseline", "Thumbnail", "Label", "Macro"]
    base = xfskde.open_image(path)
    assert _step(base, "x") == pytest.approx(MPP) and base.y.attrs["units"] == "µm"
    assert xfskde.open_image(path, level=2).attrs["source_pixel_size_um"] == pytest.approx(
        [4 * MPP, 4 * MPP]
    )
    thumb = xfskde.open_image(path, series="Thumbnail")
    assert thumb.shape == (48, 64, 3)
    assert thumb.attrs["source_pixel_size_um"] == pytest.approx([8 * MPP, 8 * MPP])
    assert (_step(thumb, "y"), _step(thumb, "x")) == pytest.approx((8 * MPP, 8 * MPP))
    for name in ("Label", "Macro"):
        other = xfskde.open_image(path, series=name)
        assert "source_pixel_size_um" not in other.attrs and "units" not in other.x.attrs

    out = tmp_path / "thumb.ome.tif"
    argv = ["segment", str(path), str(out), "--series", "Thumbnail", "--textures", "2",
            "--sample", "2000", "--mask", "none", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    with tifffile.TiffFile(out) as tif:  # a second reader of the result's pixel size
        pixels = tifffile.xml2dict(tif.ome_metadata)["OME"]["Image"][0]["Pixels"]
    assert pixels["PhysicalSizeX"] == pytest.approx(8 * MPP)
    assert pixels["PhysicalSizeY"] == pytest.approx(8 * MPP)


def test_svs_pages_a_converter_made_images_of_their_own(tmp_path, slide):
    """A converter built on tifffile adds its own description to each page, and tifffile
    then reads every page as an image of its own (series 2 the 2x-reduced level): each read
    at the baseline's MPP, a reduced level 2 and 4 times too fine."""
    path = tmp_path / "converted.svs"
    _svs(path, slide, metadata={})
    with tifffile.TiffFile(path) as tif:
        assert [s.shape[:2] for s in tif.series[:4]] == [(384, 512), (48, 64), (192, 256),
                                                         (96, 128)]  # fmt: skip
    sizes = [xfskde.open_image(path, series=i).attrs.get("source_pixel_size_um") for i in range(6)]
    assert sizes[:4] == [pytest.approx([MPP * f] * 2) for f in (1, 8, 2, 4)]
    assert sizes[4:] == [None, None]  # the label, the macro


def _info(path, capsys) -> dict[str, str]:
    assert main(["info", str(path)]) == 0
    return _rows(capsys.readouterr().out)


def test_info_names_where_the_pixel_size_is_read(tmp_path, capsys):
    """``pixel_size`` named the file's flavour, not the record read: an OME-TIFF whose
    OME-XML has no PhysicalSize, its size in its resolution tags, said "from the OME-XML",
    and an ImageJ TIFF without a unit "from the ImageJ unit"; resolution tags in inches
    (Pillow's dpi, 50800 for 0.5 µm) said "not recorded", as if the file had none."""
    pixels = data.camera()[:64, :64]
    per_cm = {"resolution": (2e4, 2e4), "resolutionunit": "CENTIMETER"}  # 0.5 µm
    tifffile.imwrite(tmp_path / "ome.ome.tif", pixels, metadata={"axes": "YX"}, **per_cm)
    rows = _info(tmp_path / "ome.ome.tif", capsys)
    assert rows["format"] == "OME-TIFF" and rows["pixel_size"] == "from the TIFF resolution tags"
    tifffile.imwrite(tmp_path / "ij.tif", pixels, imagej=True, **per_cm)
    assert _info(tmp_path / "ij.tif", capsys)["pixel_size"] == "from the TIFF resolution tags"
    tifffile.imwrite(tmp_path / "um.tif", pixels, imagej=True, resolution=(1 / 0.3, 1 / 0.3),
                     metadata={"unit": "um"})  # fmt: skip
    assert _info(tmp_path / "um.tif", capsys)["pixel_size"] == "from the ImageJ unit"
    tifffile.imwrite(tmp_path / "mm.tif", pixels, resolution=(4000, 4000), resolutionunit=4)
    rows = _info(tmp_path / "mm.tif", capsys)
    assert rows["pixel_size"] == "from the TIFF resolution tags (pixels per millimetre)"
    assert xfskde.open_image(tmp_path / "mm.tif").attrs["source_pixel_size_um"] == [0.25, 0.25]

    tifffile.imwrite(tmp_path / "inch.tif", pixels, resolution=(50800, 50800),
                     resolutionunit="INCH")  # fmt: skip
    assert _info(tmp_path / "inch.tif", capsys)["pixel_size"] == (
        "not read: resolution tags in inches (50800 dpi; 0.5 µm were they the sample's), taken "
        "for a printing hint"
    )
    assert "source_pixel_size_um" not in xfskde.open_image(tmp_path / "inch.tif").attrs
    tifffile.imwrite(tmp_path / "none.tif", pixels, resolution=(2, 2), resolutionunit="NONE")
    assert _info(tmp_path / "none.tif", capsys)["pixel_size"] == "not recorded"


def test_info_says_what_becomes_of_an_alpha_channel(tmp_path, capsys):
    """An RGBA slide's alpha is not read as a channel (its transparent pixels are missing),
    and a fourth sample its writer left unspecified is read as a channel: ``info`` showed
    three float32 channels, or four, and said neither."""
    rgba = np.dstack([data.astronaut()[:64, :64], np.full((64, 64), 255, np.uint8)])
    rgba[:8, :8, 3] = 0
    tifffile.imwrite(tmp_path / "alpha.tif", rgba, photometric="rgb", extrasamples=["unassalpha"])
    rows = _info(tmp_path / "alpha.tif", capsys)
    assert rows["alpha"] == (
        "channel 3 (unassociated alpha): not read as a channel; its transparent pixels (alpha 0) "
        "are missing (NaN)"
    )
    image = xfskde.open_image(tmp_path / "alpha.tif").values
    assert image.shape == (64, 64, 3) and np.isnan(image[:8, :8]).all()
    assert np.array_equal(image[8:, 8:], rgba[8:, 8:, :3])

    tifffile.imwrite(tmp_path / "extra.tif", rgba, photometric="rgb", extrasamples=["unspecified"])
    rows = _info(tmp_path / "extra.tif", capsys)
    assert rows["extra_samples"] == "channel 3 (unspecified): read as a channel"
    assert "alpha" not in rows
    assert xfskde.open_image(tmp_path / "extra.tif").shape == (64, 64, 4)


# ------------------------------------------------------------------------- what held


def _pyramid(path, pixels, metadata, **options) -> None:
    """An OME-TIFF pyramid as Bio-Formats and QuPath write it: levels in SubIFDs."""
    with tifffile.TiffWriter(path, bigtiff=options.pop("bigtiff", False),
                             byteorder=options.pop("byteorder", "<")) as tif:  # fmt: skip
        tif.write(pixels, subifds=1, metadata=metadata, **options)
        tif.write(pixels[..., ::2, ::2] if pixels.ndim == 3 and pixels.shape[0] < 5
                  else pixels[::2, ::2], subfiletype=1, **options)  # fmt: skip


@pytest.mark.parametrize(
    "options",
    [
        {"compression": "lzw"},
        {"compression": "zlib", "bigtiff": True},
        {"compression": "zstd", "byteorder": ">"},
        {"compression": "jpeg2000"},
        {"compression": None, "byteorder": ">"},
    ],
)
def test_a_16_bit_fluorescence_pyramid_reads_its_channels_and_nm_sizes(tmp_path, options):
    """Three 16-bit channels named in the OME-XML, pixels of 325 nm, a z step in µm (not
    read: one plane), in every codec, byte order and BigTIFF: values as tifffile reads them,
    0.325 µm and 0.65 µm at level 1, the channels by name."""
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 4096, (3, 128, 128), dtype=np.uint16)
    metadata = {"axes": "CYX", "Channel": {"Name": ["DAPI", "CD3", "CD8"]},
                "PhysicalSizeX": 325, "PhysicalSizeXUnit": "nm",
                "PhysicalSizeY": 325, "PhysicalSizeYUnit": "nm",
                "PhysicalSizeZ": 1.5, "PhysicalSizeZUnit": "µm"}  # fmt: skip
    path = tmp_path / "fluo.ome.tif"
    _pyramid(path, pixels, metadata, tile=(64, 64), photometric="minisblack", **options)
    image = xfskde.open_image(path)
    assert image.dims == ("c", "y", "x") and image.dtype == np.uint16
    assert list(image.c.values) == ["DAPI", "CD3", "CD8"]
    assert _step(image, "x") == pytest.approx(0.325) and image.x.attrs["units"] == "µm"
    assert np.array_equal(image.values, pixels)
    level = xfskde.open_image(path, level=1)
    assert np.array_equal(level.values, pixels[:, ::2, ::2])
    assert level.attrs["source_pixel_size_um"] == pytest.approx([0.65, 0.65])


#: Strips, planes, JPEG in big-endian order; pixels of 0.5 x 0.25 µm (y, x) from resolution
#: tags (per centimetre) or OME-XML.
_LAYOUTS = [
    ({"rowsperstrip": 8, "compression": "lzw", "resolution": (2e4, 2e4)}, (0.5, 0.5)),
    ({"planarconfig": "separate", "tile": (32, 32), "resolution": (4e4, 2e4)}, (0.5, 0.25)),
    ({"compression": "jpeg", "tile": (32, 32), "byteorder": ">",
      "metadata": {"axes": "YXS", "PhysicalSizeX": 0.25, "PhysicalSizeY": 0.5}}, (0.5, 0.25)),
]  # fmt: skip


@pytest.mark.parametrize(("write", "size"), _LAYOUTS)
def test_strips_planes_and_non_square_pixels(tmp_path, write, size):
    """Strips instead of tiles, samples in planes, JPEG in big-endian order, pixels of 0.5 x
    0.25 µm (y, x) from resolution tags or OME-XML: the values tifffile reads, the (y, x)
    steps in µm in that order."""
    rgb = data.astronaut()[:96, :128]
    stored = rgb.transpose(2, 0, 1) if write.get("planarconfig") == "separate" else rgb
    path = tmp_path / ("slide.ome.tif" if "metadata" in write else "slide.tif")
    unit = {"resolutionunit": "CENTIMETER"} if "resolution" in write else {}
    tifffile.imwrite(path, stored, photometric="rgb", **write, **unit)
    image = xfskde.open_image(path)
    assert (_step(image, "y"), _step(image, "x")) == pytest.approx(size)
    assert np.array_equal(image.values, tifffile.imread(path))
