"""Remote inputs read through more than one file, on real local servers: a VRT at a URL (fetched
once per opening; its sources checked block by block), a mask in another bucket or at another
endpoint than its image's (its own storage options), and a Zarr store whose server fails for a
chunk mid-run.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import pytest
from _servers import _RangeHandler, http_server, read_while_failing, s3_server

import xfskde
from xfskde.exceptions import ImageReadError

rasterio = pytest.importorskip("rasterio")
s3fs = pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("aiohttp")
from _rasters import write_vrt  # noqa: E402  (rasterio's)
from rasterio.transform import from_origin  # noqa: E402

SIDE = 256
TRANSFORM = from_origin(500000, 4000000, 10, 10)
CRS = "EPSG:32631"


def _band(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 5000, (SIDE, SIDE), dtype=np.uint16)


def _write_band(path, values: np.ndarray) -> None:
    with rasterio.open(path, "w", driver="GTiff", width=SIDE, height=SIDE, count=1,
                       dtype="uint16", crs=CRS, transform=TRANSFORM, tiled=True,
                       blockxsize=128, blockysize=128) as dataset:  # fmt: skip
        dataset.write(values, 1)


def _write_stack(folder, name: str = "stack") -> tuple[np.ndarray, np.ndarray]:
    """Two one-band GeoTIFFs (``{name}-b1.tif``, ``{name}-b2.tif``) and the VRT stacking them
    (``{name}.vrt``); their values."""
    first, second = _band(1), _band(2)
    _write_band(folder / f"{name}-b1.tif", first)
    _write_band(folder / f"{name}-b2.tif", second)
    write_vrt(folder / f"{name}.vrt", [f"{name}-b1.tif", f"{name}-b2.tif"], ("B1", "B2"),
              side=SIDE, transform=TRANSFORM, crs=CRS)  # fmt: skip
    return first, second


class _Logged(_RangeHandler):
    """The range server, noting each request's path in :attr:`log`."""

    log: ClassVar[list] = []

    def send_head(self):  # type: ignore[override]
        self.log.append(self.path)
        return super().send_head()

    def handle_one_request(self) -> None:
        with contextlib.suppress(ConnectionError):  # a client that read the head only
            super().handle_one_request()


@contextlib.contextmanager
def _logged_server(directory):
    log: list[str] = []
    with http_server(directory, handler=type("Handler", (_Logged,), {"log": log})) as url:
        yield url, log


@pytest.fixture
def served(tmp_path):
    with _logged_server(tmp_path) as (url, log):
        yield tmp_path, url, log


def test_a_vrt_at_a_url_is_fetched_once_to_open_and_once_per_block(served):
    """Opening a VRT at a URL asked its server for it 16 times (GDAL opened it three times,
    its sources were read from it twice, its version asked twice, three requests each), and
    each block 5 times (its version, then GDAL's open); now its XML is fetched once per
    opening and once per block, and the pixels are the same."""
    folder, url, log = served
    first, second = _write_stack(folder)
    image = xfskde.open_image(f"{url}/stack.vrt", chunks=128)
    opening = [p for p in log if p == "/stack.vrt"]
    # the XML once, and what open_image asks of any URL (is it there, is it a folder)
    assert len(opening) <= 3, log
    version = image.attrs["source_version"]
    assert f"{url}/stack-b1.tif: " in version and f"{url}/stack-b2.tif: " in version
    log.clear()
    block = image.data.blocks[0, 0, 0].compute(scheduler="synchronous")
    assert log.count("/stack.vrt") == 1, log
    assert image.dims == ("c", "y", "x")
    np.testing.assert_array_equal(block, np.stack([first, second])[:, :128, :128])
    np.testing.assert_array_equal(image.values, np.stack([first, second]))
    assert image.rio.crs.to_epsg() == 32631 and list(image.c.values) == ["B1", "B2"]


def test_a_vrt_source_rewritten_or_removed_mid_run_at_a_url_is_refused_naming_it(served):
    """Each block checked the VRT's own version only: a source rewritten during the run was
    read as its new pixels, mixed with the old ones (a store that said complete), and one
    removed was "the file is damaged or truncated" of the VRT, its name nowhere."""
    folder, url, _ = served
    first, second = _write_stack(folder)
    image = xfskde.open_image(f"{url}/stack.vrt", chunks=128)
    np.testing.assert_array_equal(
        image[:, :128, :128].values, np.stack([first, second])[:, :128, :128]
    )
    _write_band(folder / "stack-b2.tif", second[::-1])
    later = os.stat(folder / "stack-b2.tif").st_mtime + 10  # a second the server tells apart
    os.utime(folder / "stack-b2.tif", (later, later))
    with pytest.raises(ImageReadError) as raised:
        image.values  # noqa: B018
    message = str(raised.value)
    assert message.startswith(f"{url}/stack-b2.tif, a source of the VRT, changed since it was "
                              "opened ("), message  # fmt: skip
    assert message.endswith("open the VRT again (xfskde.open_image) and compute again")
    assert "\n" not in message
    # opened again: its new pixels, read whole
    again = xfskde.open_image(f"{url}/stack.vrt", chunks=128)
    np.testing.assert_array_equal(again.values, np.stack([first, second[::-1]]))
    (folder / "stack-b1.tif").unlink()
    with pytest.raises(ImageReadError) as raised:
        again.values  # noqa: B018
    message = str(raised.value)
    assert message.startswith(f"{url}/stack-b1.tif: the server answered 404"), message
    assert "it was removed, moved or rewritten meanwhile; open it again" in message
    assert "damaged" not in message and "\n" not in message


def test_a_vrt_rewritten_mid_run_at_a_url_is_refused(served):
    folder, url, _ = served
    _write_stack(folder)
    image = xfskde.open_image(f"{url}/stack.vrt", chunks=128)
    image[0, :128, :128].values  # noqa: B018
    write_vrt(folder / "stack.vrt", ["stack-b2.tif", "stack-b1.tif"], ("B2", "B1"),
              side=SIDE, transform=TRANSFORM, crs=CRS)  # fmt: skip
    with pytest.raises(ImageReadError, match=rf"^{url}/stack\.vrt changed since it was opened "
                       r"\(its XML is another: "):  # fmt: skip
        image.values  # noqa: B018


@pytest.fixture(scope="module")
def s3():
    with s3_server() as options:
        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("vrts")
        yield options


def test_a_vrt_source_rewritten_or_removed_in_a_bucket_mid_run_is_refused_naming_it(s3, tmp_path):
    """The same on S3 (moto): a VRT in ``vrts/up/`` naming its bands ``../``; the band's ETag
    changes as it is rewritten."""
    first, second = _write_stack(tmp_path)
    write_vrt(tmp_path / "up.vrt", ["../stack-b1.tif", "../stack-b2.tif"], ("B1", "B2"),
              side=SIDE, transform=TRANSFORM, crs=CRS)  # fmt: skip
    fs = s3fs.S3FileSystem(**s3)
    for name in ("stack-b1.tif", "stack-b2.tif"):
        fs.put(str(tmp_path / name), f"vrts/{name}")
    fs.put(str(tmp_path / "up.vrt"), "vrts/up/up.vrt")
    image = xfskde.open_image("s3://vrts/up/up.vrt", chunks=128, storage_options=s3)
    np.testing.assert_array_equal(image.values, np.stack([first, second]))
    assert "s3://vrts/stack-b2.tif: " in image.attrs["source_version"]
    _write_band(tmp_path / "stack-b2.tif", second[::-1])
    fs.put(str(tmp_path / "stack-b2.tif"), "vrts/stack-b2.tif")
    with pytest.raises(ImageReadError, match=r"^s3://vrts/stack-b2\.tif, a source of the VRT, "
                       r"changed since it was opened \("):  # fmt: skip
        image.values  # noqa: B018
    again = xfskde.open_image("s3://vrts/up/up.vrt", chunks=128, storage_options=s3)
    np.testing.assert_array_equal(again.values, np.stack([first, second[::-1]]))
    fs.rm("vrts/stack-b1.tif")
    with pytest.raises(ImageReadError, match=r"^s3://vrts/stack-b1\.tif is gone \("):
        again.values  # noqa: B018


# ------------------------------------------------------------------ a mask of its own bucket

PARAMS = {"order": 4, "window": "gaussian", "size": 2.0, "stride": 2}
FLAGS = ["--order", "4", "--window", "gaussian", "--size", "2", "--stride", "2", "--no-progress"]


@contextlib.contextmanager
def _s3_server_of_its_own() -> Iterator[dict]:
    """A moto S3 server in a process of its own (moto's servers in this process share one
    store: a bucket made at one is at the other), as ``python -m moto.server`` runs it;
    yields the s3fs storage options that reach it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):  # up within 20 s
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            time.sleep(0.1)
        yield {"key": "other", "secret": "other", "endpoint_url": f"http://127.0.0.1:{port}",
               "client_kwargs": {"region_name": "eu-west-1"}}  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def two_endpoints(tmp_path_factory):
    """Two S3 servers: the image in ``images`` at the first, its mask (a PNG, its left half
    foreground) in ``masks`` at the second, which the first does not have."""
    import tifffile
    from PIL import Image
    from skimage import data

    folder = tmp_path_factory.mktemp("endpoints")
    pixels = data.camera()[:128, :160]
    tifffile.imwrite(folder / "slide.tif", pixels, tile=(64, 64))
    mask = np.zeros(pixels.shape, np.uint8)
    mask[:, :80] = 255
    Image.fromarray(mask).save(folder / "mask.png")
    with s3_server() as first, _s3_server_of_its_own() as second:
        s3fs.S3FileSystem.clear_instance_cache()
        images, masks = s3fs.S3FileSystem(**first), s3fs.S3FileSystem(**second)
        images.mkdir("images")
        images.put(str(folder / "slide.tif"), "images/slide.tif")
        masks.mkdir("masks")
        masks.put(str(folder / "mask.png"), "masks/mask.png")
        assert not images.exists("masks/mask.png")  # two stores
        yield first, second, pixels, mask > 0


def test_a_mask_at_another_endpoint_is_read_with_its_own_storage_options(two_endpoints):
    """``mask="s3://..."`` is reached with the image's storage options; a mask elsewhere is
    given as a Location with its own (``xfskde.io.locate(url, storage_options)``)."""
    first, second, _, foreground = two_endpoints
    image = xfskde.open_image("s3://images/slide.tif", storage_options=first, chunks=64)
    expected = xfskde.local_fskde(image, mask=foreground, **PARAMS)
    with pytest.raises(FileNotFoundError, match=r"no such mask: s3://masks/mask\.png"):
        xfskde.local_fskde(image, mask="s3://masks/mask.png", **PARAMS)  # at the image's
    mask = xfskde.io.locate("s3://masks/mask.png", second)
    field = xfskde.local_fskde(image, mask=mask, **PARAMS)
    np.testing.assert_array_equal(field.values, expected.values)
    assert np.isnan(field.values[:, -10:]).all() and not np.isnan(field.values[:, :30]).any()
    assert field.attrs["mask"] == "s3://masks/mask.png" and field.attrs["mask_version"]


def test_the_command_line_reaches_a_mask_at_another_endpoint(
    two_endpoints, tmp_path, monkeypatch, capsys
):
    """The input reached as the environment says (its endpoint and keys), the mask with
    ``--mask-storage-option KEY=VALUE``: until 2026-11-30 a mask was reached as the input
    was, and one at another endpoint or with other credentials could not be read."""
    from xfskde.cli import main

    first, second, pixels, foreground = two_endpoints
    monkeypatch.setenv("AWS_ENDPOINT_URL", first["endpoint_url"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", first["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", first["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    s3fs.S3FileSystem.clear_instance_cache()
    out = str(tmp_path / "out.zarr")
    argv = ["coefficients", "s3://images/slide.tif", out, *FLAGS, "--mask", "s3://masks/mask.png",
            "--mask-storage-option", f"endpoint_url={second['endpoint_url']}",
            "--mask-storage-option", "key=other", "--mask-storage-option", "secret=other",
            "--mask-storage-option", '{"region_name": "eu-west-1"}'.join(
                ["client_kwargs=", ""])]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    written = xfskde.open_coefficients(out)
    expected = xfskde.local_fskde(xfskde.open_image(pixels), mask=foreground, **PARAMS)
    np.testing.assert_allclose(written.values, expected.values, rtol=1e-6, equal_nan=True)
    assert written.attrs["mask"] == "s3://masks/mask.png"
    # without them, it is looked for at the input's endpoint: "no such mask"
    capsys.readouterr()
    assert main([*argv[: argv.index("--mask-storage-option")], "--overwrite"]) != 0
    assert "no such mask: s3://masks/mask.png" in capsys.readouterr().err
    # with a mask that is no URL, refused in one line
    assert main(["coefficients", "s3://images/slide.tif", out, *FLAGS, "--overwrite",
                 "--mask", "auto", "--mask-storage-option", "anon=true"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err == (
        "xfskde coefficients: error: --mask-storage-option reaches a mask at a URL (s3://, "
        "gs://, https://...); the mask 'auto' is not one: drop --mask-storage-option\n"
    )
    # segment takes it too (maps, as coefficients)
    labels = str(tmp_path / "labels.tif")
    assert main(["segment", "s3://images/slide.tif", labels, "--textures", "2", "--no-progress",
                 "--mask", "none", "--mask-storage-option", "anon=true"]) == 2  # fmt: skip
    assert "the mask 'none' is not one" in capsys.readouterr().err


# ------------------------------------------------------- a Zarr store whose chunks fail mid-run


class _ChunkFaults(_RangeHandler):
    """The range server, answering the requests for chunks (``/c/`` of a Zarr v3 store) as
    :attr:`answer` says once it is set — an HTTP status, or ``"hang"`` (no answer for 5 s) —
    and its metadata as it is."""

    answer: ClassVar[dict] = {}

    def send_head(self):  # type: ignore[override]
        fault = self.answer.get("now")
        if fault is not None and "/c/" in self.path:
            if fault == "hang":
                time.sleep(5)
                return None
            self.send_error(int(fault))
            return None
        return super().send_head()

    def handle_one_request(self) -> None:
        with contextlib.suppress(ConnectionError):  # a client that gave up
            super().handle_one_request()


@pytest.fixture(scope="module")
def chunk_faults(tmp_path_factory):
    import zarr

    folder = tmp_path_factory.mktemp("chunks")
    pixels = np.arange(1, 128 * 160 + 1, dtype=np.uint16).reshape(128, 160)
    array = zarr.create_array(folder / "image.zarr", shape=pixels.shape, chunks=(64, 64),
                              dtype=pixels.dtype, dimension_names=("y", "x"))  # fmt: skip
    array[...] = pixels
    answer: dict = {}
    with http_server(folder, handler=type("Handler", (_ChunkFaults,), {"answer": answer})) as url:
        yield url, answer, pixels


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("403", "the server answered 403 Forbidden for {url}/image.zarr/c/"),
        ("500", "the server answered 500 Internal Server Error for {url}/image.zarr/c/"),
        ("hang", "the connection broke while it was read ("),
    ],
)
def test_a_zarr_chunk_the_server_refuses_fails_or_hangs_on_mid_run_is_one_line(
    chunk_faults, fault, said
):
    """The store's metadata served, its chunks refused (403), failed (500) or not answered
    (a timeout of the client's, given in its storage options): one line naming the store,
    the chunk's URL where the server answered, and what to do; never the fill value."""
    import aiohttp

    url, answer, pixels = chunk_faults
    options = {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=1)}}
    image = xfskde.open_image(f"{url}/image.zarr", chunks=64, storage_options=options)
    np.testing.assert_array_equal(image[:64, :64].values, pixels[:64, :64])
    message = read_while_failing(image, answer, fault)
    assert message.startswith(f"{url}/image.zarr: "), message
    assert said.format(url=url) in message and "in a task on" in message, message
    assert "\n" not in message
    np.testing.assert_array_equal(image.values, pixels)  # served again: read whole


def test_a_zarr_chunk_the_server_answers_404_for_reads_as_the_fill_value(chunk_faults):
    """As the Zarr spec says of a chunk never written (and docs/remote-data.md): not refused."""
    url, answer, pixels = chunk_faults
    image = xfskde.open_image(f"{url}/image.zarr", chunks=64)
    answer["now"] = "404"
    try:
        values = image.values
    finally:
        answer.clear()
    np.testing.assert_array_equal(values, np.zeros_like(pixels))
