"""napari opens the maps stores as docs/ome-zarr.md and docs/tissue.md say, and the
segmentation's as docs/segmentation.md says, and draws them.

The Python blocks of the three pages' napari sections run in a child process (this file, run as
a script) against stores written here; the child hands back what napari made of them (layers,
scales, positions, data, contrast limits, colour maps, pixels drawn), and the test compares
that with the stores read with zarr and with matplotlib's ``twilight`` and ``tab10``.

napari draws with OpenGL, so the child needs an X server: a private Xvfb, started here, or the
``$DISPLAY`` there is. It uses Qt's ``xcb`` platform: Qt's ``offscreen`` platform has no OpenGL
context without an X server, and with one it draws the overlays but none of the layers' data (a
black canvas with napari 0.9.2, PyQt5 5.15 and PyQt6 6.11 on Mesa's llvmpipe).
"""

from __future__ import annotations

import os
import pickle
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("napari")
pytest.importorskip("napari_ome_zarr")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
PIXEL = 0.5  # micrometres per input pixel
STRIDE = 8
SHAPE = (256, 320)  # input pixels: a 32 × 40 map
SCREENSHOT = (240, 320)  # (height, width) of the canvas screenshot
SLIDE_LEVELS = 3


def _napari_block(page: str, heading: str = "Open it in napari") -> str:
    """The Python block of a docs page's section ``heading`` (a ``##`` section)."""
    text = (ROOT / "docs" / page).read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _fibres(shape, left_deg: float, right_deg: float, seed: int = 0) -> np.ndarray:
    """Stripes running at left_deg in the left half, right_deg in the right half, and noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float32)

    def stripes(deg):
        a = np.deg2rad(deg)
        return np.sin(2 * np.pi / 9 * (-xx * np.sin(a) + yy * np.cos(a)))

    pixels = np.where(xx < shape[1] / 2, stripes(left_deg), stripes(right_deg))
    return (pixels + rng.normal(0, 0.3, shape)).astype(np.float32)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """maps.ome.zarr (docs/ome-zarr.md's name) and slide.ome.tif with slide-maps.ome.zarr."""
    import tifffile
    import xarray as xr

    import xfskde
    from xfskde.orientation import coherence, energy, orientation

    folder = tmp_path_factory.mktemp("napari")
    pixels = _fibres(SHAPE, 30, 120)
    coords = {"y": np.arange(SHAPE[0]), "x": np.arange(SHAPE[1])}
    image = xr.DataArray(pixels, dims=("y", "x"), coords=coords)
    field = xfskde.local_fskde(image, order=8, window="box", size=STRIDE, stride=STRIDE)
    maps = {"orientation": orientation, "coherence": coherence, "energy": energy}
    maps = {name: reduce(field) for name, reduce in maps.items()}
    side = np.broadcast_to(np.arange(SHAPE[1]) >= SHAPE[1] // 2, SHAPE).astype(np.uint8) + 1
    side = xr.DataArray(side, dims=("y", "x"), coords=coords)  # 1 left, 2 right
    xfskde.write_ome_zarr(maps, folder / "maps.ome.zarr", labels={"side": side},
                          pixel_size=PIXEL, coarsest=16)  # fmt: skip

    # docs/tissue.md's files, small: an RGB OME-TIFF pyramid in µm, and its maps
    rgb = (128 + 60 * pixels[..., None] * np.array([1.0, 0.7, 0.9])).clip(0, 255).astype(np.uint8)
    meta = {"PhysicalSizeX": PIXEL, "PhysicalSizeXUnit": "µm",
            "PhysicalSizeY": PIXEL, "PhysicalSizeYUnit": "µm"}  # fmt: skip
    with tifffile.TiffWriter(folder / "slide.ome.tif") as tif:
        tif.write(rgb, tile=(64, 64), subifds=SLIDE_LEVELS - 1, photometric="rgb", metadata=meta)
        for level in range(1, SLIDE_LEVELS):
            step = 2**level
            tif.write(rgb[::step, ::step], tile=(64, 64), subfiletype=1, photometric="rgb")
    # docs/segmentation.md's: `xfskde segment` of three random textures to an OME-Zarr image
    from xfskde.cli import main
    from xfskde.datasets import random_textures

    textures, _ = random_textures((96, 128), seed=3)
    np.save(folder / "textures.npy", (textures * 255).astype(np.uint8))
    argv = [str(folder / "textures.npy"), str(folder / "textures.ome.zarr"), "--textures", "3",
            "--size", "4", "--sample", "3000", "--no-progress"]  # fmt: skip
    assert main(["segment", *argv]) == 0

    slide = xfskde.open_image(folder / "slide.ome.tif")  # coordinates in µm
    field = xfskde.local_fskde(slide, order=8, window="gaussian", size=6, stride=STRIDE)
    xfskde.write_ome_zarr({"orientation": orientation(field), "coherence": coherence(field),
                           "energy": energy(field)}, folder / "slide-maps.ome.zarr",
                          coarsest=16)  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def display():
    """A private Xvfb's display; else the $DISPLAY there is; else skip."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        if not os.environ.get("DISPLAY"):
            pytest.skip("napari needs an X server: apt-get install xvfb")
        yield os.environ["DISPLAY"]
        return
    read, write = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 30)
        number = os.read(read, 16).decode().strip() if ready else ""
        assert number.isdigit(), "Xvfb did not start"
        yield f":{number}"
    finally:
        os.close(read)
        server.terminate()
        server.wait(timeout=10)


# ----------------------------------------------------------------------------- the child


def _layers(viewer) -> list[dict]:
    import napari

    found = []
    for layer in viewer.layers:
        image = isinstance(layer, napari.layers.Image)
        levels = layer.data if layer.multiscale else [layer.data]
        found.append({
            "type": type(layer).__name__,
            "name": layer.name,
            "scale": [float(s) for s in layer.scale],
            "origin": [float(w) for w in layer.data_to_world((0,) * layer.ndim)],
            "units": [str(u) for u in layer.units],
            "levels": [np.asarray(level) for level in levels],
            "contrast_limits": [float(c) for c in layer.contrast_limits] if image else None,
            "colormap": layer.colormap.name if image else None,
        })  # fmt: skip
    return found


def _child(folder: str, out: str) -> None:
    """Run the docs' blocks in ``folder`` and pickle what napari shows to ``out``."""
    import napari

    napari.run = lambda *args, **kwargs: None  # the blocks' last line: no event loop here
    os.chdir(folder)
    record = {}

    namespace: dict = {}
    exec(compile(_napari_block("ome-zarr.md"), "docs/ome-zarr.md", "exec"), namespace)
    viewer, orientation = namespace["viewer"], namespace["orientation"]
    record["ome-zarr"] = _layers(viewer)
    for layer in viewer.layers:
        layer.visible = layer is orientation
    record["figure"] = viewer.export_figure()  # the layers' extent, a screen pixel per label
    viewer.reset_view()
    record["screenshot"] = viewer.screenshot(size=SCREENSHOT, canvas_only=True)
    viewer.close()

    import zarr

    import xfskde

    namespace = {"xfskde": xfskde, "root": zarr.open_group("slide-maps.ome.zarr", mode="r")}
    exec(compile(_napari_block("tissue.md"), "docs/tissue.md", "exec"), namespace)
    viewer = namespace["viewer"]
    record["tissue"] = _layers(viewer)
    record["grid"] = bool(viewer.canvas.grid.enabled)
    viewer.close()

    namespace = {}
    block = _napari_block("segmentation.md", "To napari and other NGFF viewers")
    exec(compile(block, "docs/segmentation.md", "exec"), namespace)
    viewer, labels = namespace["viewer"], namespace["labels"]
    record["segmentation"] = _layers(viewer)
    record["label colours"] = {i: labels.get_color(i) for i in range(1, 4)}
    record["label opacity"] = float(labels.opacity)
    record["segmentation figure"] = viewer.export_figure()  # a screen pixel per label pixel
    viewer.close()
    Path(out).write_bytes(pickle.dumps(record))


def _open_in_napari(folder: Path, display: str, out: Path) -> dict:
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, __file__, str(folder), str(out)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    if done.returncode and 'Could not load the Qt platform plugin "xcb"' in done.stderr:
        pytest.skip("Qt's xcb platform needs libraries: apt-get install libxcb-icccm4 "
                    "libxcb-keysyms1 libxcb-xinerama0 libxcb-cursor0")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return pickle.loads(out.read_bytes())


# ----------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def shown(folder, display, tmp_path_factory) -> dict:
    return _open_in_napari(folder, display, tmp_path_factory.mktemp("shown") / "record.pickle")


def _metadata(store: Path):
    import zarr

    root = zarr.open_group(store, mode="r")
    multiscale = root.attrs["ome"]["multiscales"][0]
    transforms = multiscale["datasets"][0]["coordinateTransformations"]
    return root, multiscale, transforms[0]["scale"][1:], transforms[1]["translation"][1:]


def test_layers_are_the_stores_channels_in_micrometres(folder, shown):
    root, multiscale, scale, translation = _metadata(folder / "maps.ome.zarr")
    channels = root.attrs["ome"]["omero"]["channels"]
    layers = shown["ome-zarr"]
    images = [layer for layer in layers if layer["type"] == "Image"]
    assert [layer["type"] for layer in layers] == ["Image"] * 3 + ["Labels"]
    # one layer per channel, named after the multiscale and the channel's label
    assert [layer["name"] for layer in images] == [
        f"{multiscale['name']}: {channel['label']}" for channel in channels
    ]
    assert [channel["label"] for channel in channels] == ["orientation", "coherence", "energy"]
    assert layers[3]["name"].rsplit("/", 1)[-1] == "side"
    # the scale: the input's pixel size in µm times the stride; the first sample at the centre
    # of the first 8 × 8 cell, pixel 3.5 (the translation the docs' block puts back)
    recorded = root.attrs["xfskde"]
    pixel_size, stride = recorded["um_per_coordinate"], recorded["attrs"]["stride"]
    assert scale == [p * stride for p in pixel_size] == [PIXEL * STRIDE] * 2
    assert translation == [3.5 * PIXEL] * 2
    for layer in images:
        assert layer["scale"] == scale
        assert layer["origin"] == pytest.approx(translation, abs=1e-12)
        assert layer["units"] == ["micrometer"] * 2
    assert layers[3]["scale"] == pixel_size and layers[3]["origin"] == [0.0, 0.0]
    # the data: every level of every channel, and of the labels, is the store's
    for c, layer in enumerate(images):
        assert len(layer["levels"]) == len(multiscale["datasets"]) == 3  # 32×40, 16×20, 8×10
        for level, dataset in zip(layer["levels"], multiscale["datasets"], strict=True):
            np.testing.assert_array_equal(level, root[dataset["path"]][c])
    labels = root["labels/side"]
    assert len(layers[3]["levels"]) == 3
    for level, path in zip(layers[3]["levels"], ("0", "1", "2"), strict=True):
        np.testing.assert_array_equal(level, labels[path][...])
    # the contrast limits: the omero windows; the colour maps: the docs' and the reader's
    for layer, channel in zip(images, channels, strict=True):
        assert layer["contrast_limits"] == [channel["window"]["start"], channel["window"]["end"]]
    assert images[0]["contrast_limits"] == [0.0, pytest.approx(np.pi)]
    assert [layer["colormap"] for layer in images] == ["twilight", "gray", "magenta"]


def test_the_orientation_is_drawn_in_place_in_twilight(folder, shown):
    import matplotlib

    root, _, _, _ = _metadata(folder / "maps.ome.zarr")
    angles = root["0"][0]  # level 0 of the orientation, (32, 40)
    assert np.isfinite(angles).all()
    expected = matplotlib.colormaps["twilight"](angles / np.pi)[..., :3] * 255
    # the figure spans the layers' extent with a screen pixel per label pixel (0.5 µm): each
    # 4 µm map sample is an 8 × 8 block of its colour, exactly over the 8 × 8 pixels it stands
    # for; without the translation the blocks would straddle two samples
    figure = shown["figure"]
    assert figure.shape == (*SHAPE, 4) and (figure[..., 3] == 255).all()
    blocks = figure[..., :3].astype(float).reshape(32, STRIDE, 40, STRIDE, 3)
    assert np.abs(blocks - expected[:, None, :, None]).max() <= 2
    # the two halves: 30° fibres on the left, 120° on the right, two distinct colours
    left, right = np.median(angles[:, :18]), np.median(angles[:, 22:])
    assert abs(np.rad2deg(left) - 30) < 3 and abs(np.rad2deg(right) - 120) < 3
    assert np.abs(figure[128, 40, :3].astype(float) - figure[128, 280, :3]).max() > 60
    # the canvas, of the size asked, centred on the map (napari keeps the zoom: the middle of
    # the map fills it): nothing but the map's colours, the left half's left of the centre
    shot = shown["screenshot"]
    assert shot.shape == (*SCREENSHOT, 4) and (shot[..., 3] == 255).all()
    colours = shot[..., :3].reshape(-1, 3).astype(float)
    drawn = colours.any(axis=1)  # twilight has no black: black is the canvas around the map
    assert drawn.mean() > 0.3
    unique = np.unique(colours[drawn], axis=0)
    nearest = np.abs(unique[:, None] - expected.reshape(1, -1, 3)).max(axis=2).min(axis=1)
    assert nearest.max() <= 2 and len(unique) > 20
    middle = shot[SCREENSHOT[0] // 2, :, :3].astype(float)
    quarter = SCREENSHOT[1] // 4
    np.testing.assert_allclose(middle[quarter], expected[:, :20].mean(axis=(0, 1)), atol=20)
    np.testing.assert_allclose(middle[-quarter], expected[:, 20:].mean(axis=(0, 1)), atol=20)


def test_the_tissue_page_block_shows_the_slide_under_its_maps(folder, shown):
    _, multiscale, scale, translation = _metadata(folder / "slide-maps.ome.zarr")
    layers = shown["tissue"]
    assert [layer["name"] for layer in layers] == ["slide"] + [
        f"{multiscale['name']}: {name}" for name in ("orientation", "coherence", "energy")
    ]
    slide = layers[0]
    assert slide["scale"] == [PIXEL, PIXEL] and slide["units"] == ["micrometer"] * 2
    assert [level.shape for level in slide["levels"]] == [
        (SHAPE[0] >> i, SHAPE[1] >> i, 3) for i in range(SLIDE_LEVELS)
    ]
    # maps from open_image's coordinates in µm: 4 µm samples, the first at 1.75 µm
    assert scale == [PIXEL * STRIDE] * 2 and translation == [3.5 * PIXEL] * 2
    for layer in layers[1:]:
        assert layer["scale"] == scale and layer["origin"] == pytest.approx(translation)
        assert layer["units"] == ["micrometer"] * 2
    assert [layer["colormap"] for layer in layers[1:]] == ["twilight", "gray", "magenta"]
    assert shown["grid"]


def test_a_segmentation_opens_with_the_textures_colours(folder, shown):
    """docs/segmentation.md's block: the abundances, one image layer per texture, and the
    labels drawn in the library's label colours (matplotlib's tab10, as in its pictures and a
    labels GeoTIFF's colour table), each pixel the colour of its label in the store."""
    import matplotlib
    import zarr

    layers = shown["segmentation"]
    assert [layer["type"] for layer in layers] == ["Image"] * 3 + ["Labels"]
    assert [layer["name"].rsplit(": ", 1)[-1] for layer in layers[:3]] == [
        "texture 1", "texture 2", "texture 3"]  # fmt: skip
    tab10 = matplotlib.colormaps["tab10"].colors
    for label, colour in shown["label colours"].items():
        np.testing.assert_allclose(colour, (*tab10[label - 1], 1.0), atol=1 / 255)
    stored = zarr.open_group(folder / "textures.ome.zarr", mode="r")["labels/textures/0"][...]
    assert set(np.unique(stored)) == {1, 2, 3}
    np.testing.assert_array_equal(layers[3]["levels"][0], stored)
    figure = shown["segmentation figure"]
    assert figure.shape == (*stored.shape, 4)
    # over the canvas's black, at the layer's opacity
    expected = shown["label opacity"] * np.asarray(tab10)[stored - 1] * 255
    assert np.abs(figure[..., :3] - expected).max() <= 2


if __name__ == "__main__":
    _child(*sys.argv[1:])
