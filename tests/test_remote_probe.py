"""Remote data one step off the happy path, on real local servers: an HTTP server that refuses,
fails or hangs up once an image is opened (403, 404, 500, a dropped connection), a Zarr store
removed from its bucket during a run, a bucket that does not exist, and workers that lack the
client's credentials. Each is one line naming the URL and what to do, where it was "the file is
damaged", an "internal error", a store of zeros that said complete, or "[Errno None]".
"""

import contextlib
import os
import pickle
import shutil
import subprocess
import sys
from typing import ClassVar

import cloudpickle
import numpy as np
import pytest
import tifffile
import zarr
from _servers import _RangeHandler, http_server, read_while_failing, s3_server
from skimage import data

import xfskde
from xfskde.exceptions import ImageReadError, ParameterError

s3fs = pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("aiohttp")

IMAGE = data.camera()[:192, :256]
PARAMS = {"order": 4, "window": "gaussian", "size": 2.0, "stride": 2}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe")
    tifffile.imwrite(folder / "slide.tif", IMAGE, tile=(64, 64), compression="zlib")
    array = zarr.create_array(folder / "image.zarr", shape=IMAGE.shape, chunks=(64, 64),
                              dtype=IMAGE.dtype, dimension_names=("y", "x"))  # fmt: skip
    array[...] = IMAGE
    return folder


class _Faulty(_RangeHandler):
    """The range server, answering every request as :attr:`answer` says once it is set: an
    HTTP status, or ``"drop"`` (the connection closed without an answer)."""

    answer: ClassVar[dict] = {}

    def send_head(self):  # type: ignore[override]
        fault = self.answer.get("now")
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return None
        if fault is not None:
            self.send_error(int(fault))
            return None
        return super().send_head()


@contextlib.contextmanager
def _faulty_server(directory):
    answer: dict = {}
    with http_server(directory, handler=type("Handler", (_Faulty,), {"answer": answer})) as url:
        yield url, answer


@pytest.fixture(scope="module")
def faulty(inputs):
    with _faulty_server(inputs) as served:
        yield served


@pytest.fixture(scope="module")
def s3(inputs):
    with s3_server() as options:
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("probe")
        fs.put(str(inputs / "slide.tif"), "probe/slide.tif")
        fs.put(str(inputs / "image.zarr"), "probe/image.zarr", recursive=True)
        yield options


def _opened_then_failing(url: str, answer: dict, fault: str) -> tuple:
    """The image at ``url``, opened while its server answers, and the message of the
    :class:`ImageReadError` its read raises while the server fails with ``fault``."""
    image = xfskde.open_image(url, chunks=64)
    return image, read_while_failing(image, answer, fault)


def _without_credentials(s3, tmp_path) -> dict[str, str]:
    """The environment of a machine that knows the S3 server's endpoint but has none of the
    client's credentials (no AWS_* or FSSPEC_* variables, no credentials or config file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    nowhere = str(tmp_path / "none")
    env.update(AWS_ENDPOINT_URL=s3["endpoint_url"], AWS_DEFAULT_REGION="eu-west-1",
               AWS_SHARED_CREDENTIALS_FILE=nowhere, AWS_CONFIG_FILE=nowhere,
               AWS_EC2_METADATA_DISABLED="true")  # fmt: skip
    return env


def _configured_by_the_environment(s3, monkeypatch):
    """The S3 server reached as the AWS SDKs reach one: endpoint and keys in the environment
    (s3fs's filesystems made before, of another test's server, forgotten)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint_url"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    s3fs.S3FileSystem.clear_instance_cache()


@pytest.mark.parametrize("name", ["slide.tif", "image.zarr"])
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("500", "the server answered 500 Internal Server Error"),
        ("403", "the server answered 403 Forbidden"),
        ("drop", "the connection broke while it was read (ServerDisconnectedError"),
    ],
)
def test_a_server_failing_after_the_image_is_opened_is_named_in_the_tasks(
    faulty, inputs, name, fault, said
):
    """The header read, the server fails for the tiles or chunks: a TIFF's tasks said "the
    file is damaged, truncated or in a codec that cannot be decoded"; a Zarr's raised aiohttp's
    own ClientResponseError or ServerDisconnectedError (the command's "internal error")."""
    url, answer = faulty
    copy = f"{fault}-{name}"  # a file of its own: a TIFF's reader, once open, is kept
    if name.endswith(".zarr"):
        shutil.copytree(inputs / name, inputs / copy)
    else:
        shutil.copy(inputs / name, inputs / copy)
    name = copy
    image, message = _opened_then_failing(f"{url}/{name}", answer, fault)
    assert message.startswith(f"{url}/{name}"), message
    assert said in message and "damaged" not in message, message
    assert "in a task on" in message
    np.testing.assert_array_equal(image.values, IMAGE)  # served again: read whole


@pytest.mark.parametrize("fault", ["404", "drop", "500"])
def test_a_zarr_store_the_server_does_not_serve_is_named_when_opened(faulty, fault):
    """zarr's "No group found in store StorePath(FsspecStore, ...)" for a 404, aiohttp's
    ServerDisconnectedError (an "internal error") for a server that hangs up."""
    url, answer = faulty
    answer["now"] = fault
    try:
        kind = {"404": FileNotFoundError, "drop": ConnectionError, "500": ConnectionError}[fault]
        with pytest.raises(kind) as raised:
            xfskde.open_image(f"{url}/image.zarr")
    finally:
        answer.clear()
    message = str(raised.value)
    assert "StorePath" not in message and f"{url}/image.zarr" in message, message
    expected = {
        "404": f"no such image: {url}/image.zarr (no Zarr metadata there",
        "drop": "the connection broke while it was read",
        "500": "the server answered 500 Internal Server Error for",
    }[fault]
    assert expected in message, message


def test_a_missing_zarr_store_in_a_bucket_is_no_such_image(s3):
    with pytest.raises(FileNotFoundError, match=r"^no such image: s3://probe/none\.zarr"):
        xfskde.open_image("s3://probe/none.zarr", storage_options=s3)


def test_a_zarr_store_removed_from_its_bucket_during_a_run_is_not_read_as_zeros(s3, inputs):
    """Zarr reads a chunk it cannot find as its fill value: a store removed (or moved) after
    it was opened was read as zeros, and the coefficients written from it said complete."""
    fs = s3fs.S3FileSystem(**s3)
    fs.put(str(inputs / "image.zarr"), "probe/moved.zarr", recursive=True)
    image = xfskde.open_image("s3://probe/moved.zarr", chunks=64, storage_options=s3)
    np.testing.assert_array_equal(image[:64, :64].values, IMAGE[:64, :64])
    fs.rm("probe/moved.zarr", recursive=True)
    with pytest.raises(ImageReadError, match=r"^s3://probe/moved\.zarr is gone \("):
        image.values  # noqa: B018
    fs.put(str(inputs / "image.zarr"), "probe/moved.zarr", recursive=True)
    bad = zarr.open_array(zarr.storage.FsspecStore.from_url(
        "s3://probe/moved.zarr", storage_options=s3), mode="r+")  # fmt: skip
    bad.attrs["rewritten"] = True  # its metadata file is another
    with pytest.raises(ImageReadError, match=r"changed since it was opened \(its zarr\.json"):
        image.values  # noqa: B018


def test_a_store_in_a_bucket_that_does_not_exist_is_refused_in_one_line(s3, monkeypatch, capsys):
    """s3fs's "The specified bucket does not exist", said by the command as "[Errno None]
    cannot write s3://... : FileNotFoundError: ..."."""
    from xfskde.cli import main

    field = xfskde.local_fskde(xfskde.open_image(IMAGE[:64, :64]), **PARAMS)
    with pytest.raises(ParameterError, match=r"the bucket nothere does not exist: create it"):
        xfskde.write_coefficients(field, "s3://nothere/out.zarr", storage_options=s3)
    _configured_by_the_environment(s3, monkeypatch)
    argv = ["coefficients", "s3://probe/slide.tif", "s3://nothere/out.zarr", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "xfskde coefficients: error: cannot write s3://nothere/out.zarr: the bucket nothere "
        "does not exist: create it first, or name one that exists\n"
    )


_WORKER = """
import pickle, sys
image = pickle.load(open(sys.argv[1], "rb"))
try:
    image.values
except Exception as error:
    print(type(error).__name__, error)
"""


@pytest.mark.parametrize("name", ["slide.tif", "image.zarr"])
def test_a_task_without_the_client_s_credentials_says_so(s3, tmp_path, monkeypatch, name):
    """A client with credentials in its environment, a worker (another machine's process)
    without: the TIFF's tasks said the file was "damaged", the command line that "no
    credentials reach the bucket" without saying whose."""
    _configured_by_the_environment(s3, monkeypatch)
    image = xfskde.open_image(f"s3://probe/{name}", chunks=64)
    (tmp_path / "image.pkl").write_bytes(pickle.dumps(image))
    env = _without_credentials(s3, tmp_path)
    argv = [sys.executable, "-c", _WORKER, str(tmp_path / "image.pkl")]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    said = result.stdout.strip()
    assert said.startswith(
        f"ImageReadError no credentials to read or write s3://probe/{name} (NoCredentialsError"
    ), (said, result.stderr[-2000:])
    assert "in the environment of every worker" in said and "in a task on" in said


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("500", "the server answered 500 Internal Server Error (its own failure)"),
        ("drop", "the connection broke while it was read (ServerDisconnectedError"),
    ],
)
def test_a_vrt_whose_server_fails_after_it_opened_is_named_in_the_tasks(
    faulty, inputs, fault, said
):
    """A VRT (read through GDAL) whose server fails once it is open: aiohttp's own
    ClientResponseError or ServerDisconnectedError came out of the tasks (the command's
    "internal error", or "the file is damaged" while a store was written)."""
    rasterio = pytest.importorskip("rasterio")
    from _rasters import write_vrt
    from rasterio.transform import from_origin

    transform = from_origin(500000, 4000000, 10, 10)
    for band in ("b1", "b2"):
        with rasterio.open(inputs / f"{fault}-{band}.tif", "w", driver="GTiff", width=128,
                           height=128, count=1, dtype="uint16", crs="EPSG:32631",
                           transform=transform) as dataset:  # fmt: skip
            dataset.write(IMAGE[:128, :128].astype("uint16") + 1, 1)
    write_vrt(inputs / f"{fault}.vrt", [f"{fault}-b1.tif", f"{fault}-b2.tif"], ("B1", "B2"),
              side=128, transform=transform, crs="EPSG:32631")  # fmt: skip
    url, answer = faulty
    image, message = _opened_then_failing(f"{url}/{fault}.vrt", answer, fault)
    assert message.startswith(f"{url}/{fault}.vrt: "), message
    assert said in message and "in a task on" in message, message
    np.testing.assert_array_equal(image.values[0], IMAGE[:128, :128] + 1)


_WRITER = """
import pickle, sys
pending = pickle.load(open(sys.argv[1], "rb"))
try:
    pending.compute(scheduler="synchronous")
except Exception as error:
    print(type(error).__name__, error)
"""


def test_a_write_task_without_the_client_s_credentials_says_so(s3, tmp_path, monkeypatch):
    """The store laid out by the client (credentials in its environment), its blocks written
    by tasks on a machine without them: botocore's bare NoCredentialsError, which the command
    line said as "no credentials to reach the bucket", not whose."""
    _configured_by_the_environment(s3, monkeypatch)
    field = xfskde.local_fskde(xfskde.open_image(IMAGE[:64, :64]), **PARAMS)
    pending = xfskde.write_coefficients(field, "s3://probe/pending.zarr", compute=False)
    (tmp_path / "pending.pkl").write_bytes(cloudpickle.dumps(pending))
    env = _without_credentials(s3, tmp_path)
    argv = [sys.executable, "-c", _WRITER, str(tmp_path / "pending.pkl")]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    said = result.stdout.strip()
    assert said.startswith(
        "PermissionError no credentials to read or write s3://probe/pending.zarr "
        "(NoCredentialsError"
    ), (said, result.stderr[-2000:])
    assert "in the environment of every worker" in said and "in a task on" in said
