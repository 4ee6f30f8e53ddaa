"""The same code on a distributed cluster: worker processes, the CLI by address, a killed worker."""

import os
import signal
import time

import numpy as np
import pytest
import zarr
from skimage import data

import xfskde
from xfskde.cli import main

distributed = pytest.importorskip("distributed")

CAMERA = data.camera()


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit="1.5GiB",
        silence_logs=40,
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture
def camera_zarr(tmp_path):
    arr = zarr.create_array(tmp_path / "camera.zarr", shape=CAMERA.shape, chunks=(64, 64),
                            dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    arr[...] = CAMERA
    return tmp_path / "camera.zarr"


def test_cluster_result_equals_numpy(client, camera_zarr):
    image = xfskde.open_image(camera_zarr, chunks=128)
    field = xfskde.local_fskde(image, order=6, window="gaussian", size=2)
    result = client.compute(field).result()
    np.testing.assert_allclose(
        result.values, xfskde.local_fskde(CAMERA, order=6, window="gaussian", size=2), rtol=1e-6
    )
    # the workers read the pixels: only the path travels in the graph
    graph = dict(field.data.__dask_graph__())
    assert not [v for v in graph.values() if isinstance(v, np.ndarray) and v.size > 4096]


def test_cli_on_an_existing_cluster(client, camera_zarr, tmp_path):
    out = tmp_path / "out.zarr"
    argv = ["coefficients", str(camera_zarr), str(out), "--window", "box", "--size", "8",
            "--stride", "8", "--chunks", "128", "--scheduler", client.scheduler.address,
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    np.testing.assert_array_equal(
        xfskde.open_coefficients(out).values,
        xfskde.local_fskde(CAMERA, order=8, window="box", size=8, stride=8),
    )


def test_a_killed_worker_does_not_lose_or_change_results(client, camera_zarr):
    image = xfskde.open_image(camera_zarr, chunks=64)

    def slow(block):
        time.sleep(0.1)
        return block

    image = image.copy(data=image.data.map_blocks(slow, dtype=image.dtype))
    field = xfskde.local_fskde(image, order=5, window="box", size=5)
    future = client.compute(field.data)
    time.sleep(1.0)
    assert not future.done()
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    result = future.result(timeout=120)
    np.testing.assert_array_equal(result, xfskde.local_fskde(CAMERA, order=5, window="box", size=5))
