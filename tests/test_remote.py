"""Remote data, as cluster users keep it: images and stores at fsspec URLs — ``s3://`` on a real
local S3 server (moto's server mode), ``http://`` on a real file server with byte ranges,
``memory://``, ``file://`` — and relative paths made absolute on the client, so that workers
started in another directory read and write the same files.
"""

import json
import os
import re

import dask
import numpy as np
import pytest
import tifffile
import zarr
from _servers import http_server, s3_server
from skimage import data

import xfskde
from xfskde.exceptions import ImageReadError, ParameterError, StoreCorruptError, StoreExistsError
from xfskde.io import open_coefficients, store_status, write_coefficients
from xfskde.io.stores import verify_store

s3fs = pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("aiohttp")

IMAGE = data.camera()[:320, :384]
PARAMS = {"order": 4, "window": "gaussian", "size": 2.0, "stride": 2}
NAMES = ("slide.tif", "image.zarr", "image.png", "image.npy")


def _write_inputs(directory):
    tifffile.imwrite(directory / "slide.tif", IMAGE, tile=(64, 64), compression="zlib")
    arr = zarr.create_array(directory / "image.zarr", shape=IMAGE.shape, chunks=(64, 64),
                            dtype=IMAGE.dtype, dimension_names=("y", "x"))  # fmt: skip
    arr[...] = IMAGE
    from skimage import io as skio

    skio.imsave(directory / "image.png", IMAGE, check_contrast=False)
    np.save(directory / "image.npy", IMAGE)
    return directory


@pytest.fixture(scope="module")
def expected():
    return xfskde.local_fskde(IMAGE, **PARAMS)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return _write_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture(scope="module")
def s3(inputs):
    """Storage options of a moto S3 server whose bucket ``data`` holds the inputs."""
    with s3_server() as options:
        fs = s3fs.S3FileSystem(**options)
        fs.mkdir("data")
        for name in NAMES:
            fs.put(str(inputs / name), f"data/{name}", recursive=(inputs / name).is_dir())
        yield options


@pytest.fixture(scope="module")
def served(inputs):
    with http_server(inputs) as url:
        yield url


def _field(source, **options):
    return xfskde.local_fskde(xfskde.open_image(source, chunks=128, **options), **PARAMS)


# ---------------------------------------------------------------------------------- inputs


@pytest.mark.parametrize("name", NAMES)
def test_image_from_s3_equals_the_local_file(s3, inputs, expected, name):
    image = xfskde.open_image(f"s3://data/{name}", storage_options=s3, chunks=128)
    np.testing.assert_array_equal(image.values, IMAGE)
    assert image.name == name.split(".")[0]
    np.testing.assert_array_equal(_field(f"s3://data/{name}", storage_options=s3).values, expected)


@pytest.mark.parametrize("name", ["slide.tif", "image.zarr", "image.png"])
def test_image_over_http_equals_the_local_file(served, expected, name):
    field = _field(f"{served}/{name}")
    np.testing.assert_array_equal(field.values, expected)


def test_remote_tiff_is_read_tile_by_tile_in_the_tasks(s3):
    image = xfskde.open_image("s3://data/slide.tif", storage_options=s3, chunks=64)
    graph = dict(image.data.__dask_graph__())
    assert all(k[0].startswith("xfskde-read-tiff-") for k in graph)
    assert image.data.numblocks == (5, 6)
    np.testing.assert_array_equal(image[64:128, 128:192].values, IMAGE[64:128, 128:192])


def test_missing_remote_images_are_file_not_found(s3, served):
    with pytest.raises(FileNotFoundError, match=r"s3://data/nothing\.tif"):
        xfskde.open_image("s3://data/nothing.tif", storage_options=s3)
    with pytest.raises(FileNotFoundError, match=r"nothing\.tif"):
        xfskde.open_image(f"{served}/nothing.tif")


def test_a_server_that_refuses_or_fails_is_not_a_missing_file(capsys):
    """A URL answered 401/403 (it needs a token), 5xx (the server's own failure) or not at
    all was "no such image": the user checked the path. Each now says what the server said."""
    import http.server
    import threading

    from xfskde.cli import main

    class Answering(http.server.BaseHTTPRequestHandler):  # the status its path names
        def do_HEAD(self):
            self.send_response(int(self.path.strip("/").split(".")[0]))
            self.end_headers()

        do_GET = do_HEAD

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answering)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for status, error, said in [
            (401, PermissionError, "the server answered 401 Unauthorized: it needs credentials"),
            (403, PermissionError, "the server answered 403 Forbidden: it needs credentials"),
            (503, ConnectionError, "the server answered 503 Service Unavailable (its own"),
            (404, FileNotFoundError, "no such image"),
        ]:
            with pytest.raises(error, match=re.escape(said)):
                xfskde.open_image(f"{url}/{status}.tif")
            assert main(["segment", f"{url}/{status}.tif", "out.zarr", "--textures", "2"]) == 2
            assert said in capsys.readouterr().err
        # a store's metadata refused by zarr's reader (aiohttp's error: "internal error")
        assert main(["segment", f"{url}/503.zarr", "out.zarr", "--textures", "2"]) == 2
        err = capsys.readouterr().err
        assert "503.zarr/" in err and "the server answered 503 Service Unavailable" in err, err
    finally:
        server.shutdown()
    with pytest.raises(ConnectionError, match=r"cannot reach http://127\.0\.0\.1:1/x\.tif"):
        xfskde.open_image("http://127.0.0.1:1/x.tif")


def test_geotiff_over_http_keeps_its_crs(tmp_path):
    rioxarray = pytest.importorskip("rioxarray")
    import xarray as xr

    y, x = 5e6 - 10 * np.arange(128) - 5, 4e5 + 10 * np.arange(192) + 5
    geo = xr.DataArray(IMAGE[:128, :192], dims=("y", "x"), coords={"y": y, "x": x})
    geo = geo.rio.write_crs("EPSG:32633").rio.write_nodata(0)
    geo.rio.to_raster(tmp_path / "geo.tif", tiled=True, blockxsize=64, blockysize=64)
    local = xfskde.open_image(tmp_path / "geo.tif")
    with http_server(tmp_path) as url:
        remote = xfskde.open_image(f"{url}/geo.tif")
        assert remote.rio.crs.to_epsg() == 32633
        assert remote.rio.transform() == local.rio.transform()
        assert remote.attrs["_FillValue"] == 0
        np.testing.assert_array_equal(remote.values, local.values)
    assert rioxarray is not None


def test_a_tiff_on_a_server_without_byte_ranges_is_refused_when_opened(tmp_path):
    """``python -m http.server`` answers a range with the whole file: the header read from the
    beginning, every tile failed later inside the tasks, reported as a damaged file."""
    tifffile.imwrite(tmp_path / "tiled.tif", IMAGE, tile=(64, 64))
    xfskde.open_image(IMAGE).to_dataset(name="image").to_zarr(
        tmp_path / "image.zarr", consolidated=False
    )
    with http_server(tmp_path, ranges=False) as url:
        with pytest.raises(ImageReadError, match=r"tiled\.tif by parts: its HTTP server sends"):
            xfskde.open_image(f"{url}/tiled.tif")
        # a Zarr store's chunks are whole files: read as they are
        image = xfskde.open_image(f"{url}/image.zarr")
        np.testing.assert_array_equal(image.values, IMAGE)
    with http_server(tmp_path) as url:  # the same file where ranges are honoured
        np.testing.assert_array_equal(xfskde.open_image(f"{url}/tiled.tif").values, IMAGE)


def test_a_zarr_written_by_xarray_on_s3_keeps_its_coordinates(s3):
    """A scene saved with ``to_zarr`` to a bucket: opened by the group's URL, or by its array's,
    it keeps the coordinate variables stored beside it."""
    import xarray as xr

    y, x = 5e6 - 10 * np.arange(64) - 5, 4e5 + 10 * np.arange(96) + 5
    scene = xr.DataArray(IMAGE[:64, :96], dims=("y", "x"), coords={"y": y, "x": x})
    fs = s3fs.S3FileSystem(**s3)
    scene.to_dataset(name="B04").to_zarr(fs.get_mapper("data/scene.zarr"), consolidated=False)
    for url in ("s3://data/scene.zarr", "s3://data/scene.zarr/B04"):
        image = xfskde.open_image(url, storage_options=s3)
        np.testing.assert_array_equal(image.x, x)
        np.testing.assert_array_equal(image.y, y)
        np.testing.assert_array_equal(image.values, IMAGE[:64, :96])


# ---------------------------------------------------------------------------------- stores


def test_store_on_s3_writes_resumes_and_reads_back(s3, expected):
    url = "s3://data/out/field.zarr"
    field = _field("s3://data/slide.tif", storage_options=s3)
    pending = write_coefficients(field, url, storage_options=s3, compute=False)
    assert pending.shape == (9,)  # 3 x 3 blocks of 64 x 64 cover the 160 x 192 field
    pending[:1].compute()  # one block written, then the run "dies"
    status = store_status(url, storage_options=s3)
    assert (status["complete"], status["blocks_done"]) == (False, 1)
    with pytest.raises(StoreExistsError, match=url):
        write_coefficients(field, url, storage_options=s3)
    assert write_coefficients(field, url, storage_options=s3, resume=True) == 8
    assert store_status(url, storage_options=s3)["complete"]
    back = open_coefficients(url, storage_options=s3)
    np.testing.assert_array_equal(back.values, expected)
    assert verify_store(url, storage_options=s3).whole


def test_damaged_chunk_on_s3_is_named(s3):
    url = "s3://data/out/damaged.zarr"
    write_coefficients(_field(IMAGE), url, storage_options=s3)
    fs = s3fs.S3FileSystem(**s3)
    key = "fskde/c/0/1/0"
    raw = bytearray(fs.cat(f"data/out/damaged.zarr/{key}"))
    raw[len(raw) // 2] ^= 0xFF
    fs.pipe(f"data/out/damaged.zarr/{key}", bytes(raw))
    report = verify_store(url, storage_options=s3)
    assert [(p.key, p.kind) for p in report.problems] == [(key, "damaged")]
    with pytest.raises(StoreCorruptError, match=key):
        open_coefficients(url, storage_options=s3).compute()


def test_failed_write_on_s3_leaves_nothing_in_the_way(s3, expected):
    import dask.array as da

    def fail(block):
        raise RuntimeError("boom")

    image = xfskde.open_image(IMAGE, chunks=128)
    broken = image.copy(data=da.map_blocks(fail, image.data, dtype=image.dtype))
    url = "s3://data/out/failed.zarr"
    with pytest.raises(RuntimeError, match="boom"):
        write_coefficients(xfskde.local_fskde(broken, **PARAMS), url, storage_options=s3)
    assert not s3fs.S3FileSystem(**s3).exists("data/out/failed.zarr")
    write_coefficients(_field(IMAGE), url, storage_options=s3)  # the corrected rerun
    np.testing.assert_array_equal(open_coefficients(url, storage_options=s3).values, expected)


def test_store_over_http_reads_back_and_refuses_writes(tmp_path, expected):
    write_coefficients(_field(IMAGE), tmp_path / "field.zarr")
    with http_server(tmp_path) as url:
        back = open_coefficients(f"{url}/field.zarr")
        np.testing.assert_array_equal(back.values, expected)
        assert store_status(f"{url}/field.zarr")["complete"]
        with pytest.raises(ParameterError, match="read-only"):
            write_coefficients(_field(IMAGE), f"{url}/new.zarr")


def test_memory_store_is_finalised(expected):
    url = "memory://xfskde-tests/field.zarr"
    assert write_coefficients(_field(IMAGE), url) == 9
    assert store_status(url) == {
        "complete": True,
        "blocks_done": 9,
        "blocks_total": 9,
        "blocks_skipped": 0,
    }
    np.testing.assert_array_equal(open_coefficients(url).values, expected)
    write_coefficients(_field(IMAGE), url, overwrite=True)
    assert store_status(url)["complete"]


def test_file_urls_are_local_paths(inputs, tmp_path, expected):
    field = _field(f"file://{inputs / 'slide.tif'}")
    np.testing.assert_array_equal(field.values, expected)
    write_coefficients(field, f"file://{tmp_path / 'f.zarr'}")
    np.testing.assert_array_equal(open_coefficients(tmp_path / "f.zarr").values, expected)


def test_storage_options_with_a_local_path_are_refused(inputs):
    with pytest.raises(ParameterError, match="storage_options"):
        xfskde.open_image(inputs / "slide.tif", storage_options={"anon": True})


def test_a_missing_filesystem_names_its_extra(monkeypatch):
    import fsspec

    def missing(protocol):
        raise ImportError("Install gcsfs to access Google Storage")

    monkeypatch.setattr(fsspec, "get_filesystem_class", missing)
    with pytest.raises(ImportError, match=r"pip install 'xfskde\[gcs\]'"):
        xfskde.open_image("gs://bucket/slide.tif")


# --------------------------------------------------------------------------- relative paths


def test_relative_paths_are_made_absolute_on_the_client(inputs, tmp_path, monkeypatch, expected):
    monkeypatch.chdir(inputs)
    field = _field("slide.tif")
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path / "out")
    pending = write_coefficients(field, "rel.zarr", compute=False)
    monkeypatch.chdir(tmp_path)  # the tasks run "elsewhere": the paths they hold are absolute
    pending.compute()
    xfskde.io.finalize_store(tmp_path / "out" / "rel.zarr")
    np.testing.assert_array_equal(open_coefficients(tmp_path / "out" / "rel.zarr").values,
                                  expected)  # fmt: skip
    assert not os.path.exists(tmp_path / "rel.zarr")


# ------------------------------------------------------------------------------- a cluster


@pytest.fixture(scope="module")
def elsewhere_client(tmp_path_factory):
    """A LocalCluster whose worker processes start in a directory of their own."""
    distributed = pytest.importorskip("distributed")
    home = tmp_path_factory.mktemp("workers-home")
    before = os.getcwd()
    os.chdir(home)
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit="1GiB", silence_logs=40,
        )  # fmt: skip
    finally:
        os.chdir(before)
    with distributed.Client(cluster) as client:
        assert set(client.run(os.getcwd).values()) == {str(home)}
        yield client
    cluster.close()


def test_cluster_in_another_directory_reads_and_writes_relative_paths(
    elsewhere_client, inputs, tmp_path, monkeypatch, expected
):
    monkeypatch.chdir(inputs)
    field = _field("slide.tif")
    write_coefficients(field, os.path.relpath(tmp_path / "out.zarr"), scheduler=elsewhere_client)
    np.testing.assert_array_equal(open_coefficients(tmp_path / "out.zarr").values, expected)


def test_memory_stores_are_refused_on_other_processes(elsewhere_client):
    field = _field(IMAGE)
    for scheduler in (elsewhere_client, "processes"):
        with pytest.raises(ParameterError, match=r"memory://xfskde-tests/c\.zarr lives in this"):
            write_coefficients(field, "memory://xfskde-tests/c.zarr", scheduler=scheduler)


def test_cluster_reads_and_writes_s3(elsewhere_client, s3, expected):
    url = "s3://data/out/cluster.zarr"
    field = _field("s3://data/image.zarr", storage_options=s3)
    assert write_coefficients(field, url, storage_options=s3, scheduler=elsewhere_client) == 9
    back = open_coefficients(url, storage_options=s3)
    np.testing.assert_array_equal(elsewhere_client.compute(back).result().values, expected)


# --------------------------------------------------------------------------------- example


@pytest.mark.parametrize("where", ["memory", "s3"])
def test_remote_data_example(s3, where):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "remote_data.py"
    spec = importlib.util.spec_from_file_location("_example_remote_data", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    argv = [] if where == "memory" else ["--root", "s3://data/example",
                                         "--storage-options", json.dumps(s3)]  # fmt: skip
    with dask.config.set(scheduler="threads"):  # memory:// lives in this process only
        result = example.main(argv)
    assert result == {"blocks": 4, "complete": True, "largest_difference": 0.0}


# ----------------------------------------------------------------------------- the command


def test_cli_reads_and_writes_s3_configured_by_the_environment(s3, monkeypatch, capsys, expected):
    """A user reaches a bucket as the AWS SDKs do: endpoint and keys in the environment."""
    from xfskde.cli import main

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint_url"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    out = "s3://data/out/cli.zarr"
    argv = ["coefficients", "s3://data/slide.tif", out, "--order", "4", "--window", "gaussian",
            "--size", "2", "--stride", "2", "--chunks", "128", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert main(argv) == 2  # exists: refused, not overwritten
    assert "--resume" in capsys.readouterr().err
    assert main(["info", out, "--verify"]) == 0
    assert "complete" in capsys.readouterr().out
    np.testing.assert_array_equal(open_coefficients(out, storage_options=s3).values, expected)
    assert main(["info", "s3://data/slide.tif"]) == 0  # an image at a URL is described
    described = capsys.readouterr().out
    assert "(320, 384)" in described and "adobe_deflate" in described


def test_cli_writes_file_outputs_to_a_bucket_whole(s3, inputs, monkeypatch, tmp_path):
    """A GeoTIFF, a PNG and a GeoJSON output at an s3:// URL were refused as local files (a
    north-up scene's maps, which must be a GeoTIFF, could not go to a bucket at all): written
    in a scratch folder and put there whole, the same bytes' labels as a local run's; over an
    existing one only with --overwrite."""
    import tifffile as tiff

    from xfskde.cli import main

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3["endpoint_url"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    fs = s3fs.S3FileSystem(**s3)
    common = ["--textures", "2", "--no-progress"]
    assert main(["segment", str(inputs / "slide.tif"), str(tmp_path / "l.tif"), *common]) == 0
    local = tiff.imread(tmp_path / "l.tif")
    for name in ("l.tif", "l.png", "l.geojson"):
        out = f"s3://data/files/{name}"
        assert main(["segment", "s3://data/slide.tif", out, *common]) == 0
        assert fs.exists(out) and fs.size(out) > 0
        assert main(["segment", "s3://data/slide.tif", out, *common]) == 2  # exists
    fs.get("data/files/l.tif", str(tmp_path / "got.tif"))
    np.testing.assert_array_equal(tiff.imread(tmp_path / "got.tif"), local)
    assert main(["segment", "s3://data/slide.tif", "s3://data/files/l.tif", *common,
                 "--overwrite"]) == 0  # fmt: skip


def test_cli_without_credentials_says_how_to_give_them(s3, tmp_path):
    """A shell without AWS credentials (a new machine, a cron job): botocore's
    NoCredentialsError was "internal error … report it" with exit status 1. It is a fault the
    user fixes: one line naming how, exit status 2. In a process of its own, as a shell runs
    it (s3fs keeps the filesystems it made, and their credentials, for the process)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FSSPEC_"))}
    nowhere = str(tmp_path / "none")  # no credentials file, no config, no instance metadata
    env.update(AWS_ENDPOINT_URL=s3["endpoint_url"], AWS_DEFAULT_REGION="eu-west-1",
               AWS_SHARED_CREDENTIALS_FILE=nowhere, AWS_CONFIG_FILE=nowhere,
               AWS_EC2_METADATA_DISABLED="true")  # fmt: skip
    argv = [sys.executable, "-m", "xfskde.cli", "info", "s3://data/slide.tif"]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("xfskde info: error: no credentials to reach the bucket "
                                     "(NoCredentialsError: ")  # fmt: skip
    assert "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in result.stderr
    assert "FSSPEC_S3_ANON=true" in result.stderr and len(result.stderr.splitlines()) == 1


def test_cli_on_a_cluster_in_another_directory_with_relative_paths(
    elsewhere_client, inputs, tmp_path, monkeypatch, expected
):
    from xfskde.cli import main

    monkeypatch.chdir(inputs)
    out = os.path.relpath(tmp_path / "cli.zarr")
    address = elsewhere_client.scheduler.address
    assert main(["coefficients", "slide.tif", out, "--order", "4", "--window", "gaussian",
                 "--size", "2", "--stride", "2", "--chunks", "128", "--no-progress",
                 "--scheduler", address]) == 0  # fmt: skip
    np.testing.assert_array_equal(open_coefficients(tmp_path / "cli.zarr").values, expected)


def test_auto_mask_of_an_s3_image_reads_it_as_it_was_opened(s3, inputs):
    """mask="auto" re-reads the image's file for its low-resolution level with the storage
    options it was opened with (kept in encoding, never in the attrs a store records)."""
    from xfskde.masks import tissue_mask

    image = xfskde.open_image("s3://data/slide.tif", storage_options=s3)
    assert image.encoding["source"].storage_options == s3 and "anon" not in str(image.attrs)
    remote = tissue_mask(image, max_side=192)
    local = tissue_mask(xfskde.open_image(inputs / "slide.tif"), max_side=192)
    assert remote.attrs["source"] == "s3://data/slide.tif" and remote.shape == (160, 192)
    np.testing.assert_array_equal(remote.values, local.values)


def test_a_mask_in_the_image_s_bucket_is_read_with_its_storage_options(s3, inputs):
    """An image opened with storage_options (no AWS_* environment) and its regions in the
    same bucket: the mask was read without them (botocore's bare NoCredentialsError)."""
    fs = s3fs.S3FileSystem(**s3)
    ring = [[40, 30], [300, 30], [300, 200], [40, 200], [40, 30]]
    fs.pipe("data/aoi.geojson", json.dumps({"type": "Polygon", "coordinates": [ring]}).encode())
    image = xfskde.open_image("s3://data/slide.tif", storage_options=s3)
    remote = xfskde.masks.resolve_mask("s3://data/aoi.geojson", image)
    expected = np.zeros(IMAGE.shape, bool)
    expected[30:200, 40:300] = True
    np.testing.assert_array_equal(remote.values, expected)
    assert remote.attrs["source"] == "s3://data/aoi.geojson"


def test_remote_inputs_record_a_version_that_a_rewrite_changes(s3, served, tmp_path):
    """What a resume compares (``source_version``): an S3 object's size and ETag, an S3 Zarr
    store's listing (each chunk's ETag) — both changed by a rewrite, the same when read
    again — and an HTTP store's listing."""
    fs = s3fs.S3FileSystem(**s3)
    tifffile.imwrite(tmp_path / "a.tif", IMAGE)
    tifffile.imwrite(tmp_path / "b.tif", IMAGE[::-1].copy())
    source = zarr.create_array(tmp_path / "c.zarr", shape=IMAGE.shape, chunks=(64, 64),
                               dtype=IMAGE.dtype, dimension_names=("y", "x"))  # fmt: skip
    source[...] = IMAGE

    def version(url):
        return xfskde.open_image(url, storage_options=s3).attrs["source_version"]

    fs.put(str(tmp_path / "a.tif"), "data/changing.tif")
    first = version("s3://data/changing.tif")
    assert first.startswith(f"{(tmp_path / 'a.tif').stat().st_size} bytes, ETag ")
    assert version("s3://data/changing.tif") == first
    # after a listing of its folder (GDAL's look for a JPEG 2000's sidecars), whose info of
    # the object holds other fields and its time in local time: the same object, the same
    # version (it hashed to another, and reads were refused as changed)
    fs.invalidate_cache()
    fs.ls("data/", detail=True)
    location = xfskde.io.locate("s3://data/changing.tif", storage_options=s3)
    fs_of, _ = location.filesystem()
    fs_of.ls("data/", detail=True)
    assert location.version() == first
    fs.put(str(tmp_path / "b.tif"), "data/changing.tif")  # the same size, other pixels
    assert version("s3://data/changing.tif") != first

    fs.put(str(tmp_path / "c.zarr"), "data/changing.zarr", recursive=True)
    first = version("s3://data/changing.zarr")
    assert first == version("s3://data/changing.zarr") and " files, sha256 " in first
    source[64:128, 0:64] = 255 - IMAGE[64:128, 0:64]  # one chunk, the same size on disk
    fs.put(str(tmp_path / "c.zarr/c/1/0"), "data/changing.zarr/c/1/0")
    assert version("s3://data/changing.zarr") != first

    over_http = xfskde.open_image(f"{served}/image.zarr").attrs["source_version"]
    assert " files, sha256 " in over_http
