"""The same code on a distributed cluster: worker processes, the CLI by address, a killed worker."""

import os
import signal
import time

import cloudpickle
import dask
import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from _xr_checks import assert_keeps_labels
from skimage import data

import xfskde
from xfskde.cli import main
from xfskde.io import store_status

distributed = pytest.importorskip("distributed")

CAMERA = data.camera()


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit="1GiB",
        silence_logs=40,
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def _zarr_image(path, pixels, chunks=64):
    arr = zarr.create_array(path, shape=pixels.shape, chunks=(chunks, chunks), dtype=pixels.dtype,
                            dimension_names=("y", "x"))  # fmt: skip
    arr[...] = pixels
    return path


@pytest.fixture
def camera_zarr(tmp_path):
    return _zarr_image(tmp_path / "camera.zarr", CAMERA)


def test_cluster_result_equals_numpy(client, camera_zarr):
    image = xfskde.open_image(camera_zarr, chunks=128)
    field = xfskde.local_fskde(image, order=6, window="gaussian", size=2, stride=2)
    result = client.compute(field).result()
    eager = xfskde.local_fskde(image.compute(), order=6, window="gaussian", size=2, stride=2)
    assert_keeps_labels(result, eager)
    xr.testing.assert_allclose(result, eager, rtol=1e-6)
    np.testing.assert_allclose(
        result.values,
        xfskde.local_fskde(CAMERA, order=6, window="gaussian", size=2, stride=2),
        rtol=1e-6,
    )
    # the workers read the pixels: the graph sent to the scheduler is a fraction of the image
    graph = dict(field.data.__dask_graph__())
    assert len(cloudpickle.dumps(graph)) < CAMERA.nbytes / 4


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


def _private_mounts() -> bool:
    """Whether this process may run a command in a mount namespace of its own (root, or
    unprivileged user namespaces): how a test gives the client a folder the workers lack."""
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return False
    probe = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             "mount -t tmpfs none /mnt 2>/dev/null || mount -t tmpfs none /tmp"]  # fmt: skip
    return subprocess.run(probe, capture_output=True).returncode == 0


def test_a_folder_the_workers_do_not_share_is_refused(client, camera_zarr, tmp_path):
    """Workers started on other machines write the blocks (a Zarr store's, a GeoTIFF's tiles)
    themselves: where they did not share the output's folder, a store failed with "[Errno None]
    ... does not exist" and the advice to resume (which did the same again), a GeoTIFF with
    an internal error. The client now leaves a file in the folder for a moment and every
    worker must see it; here the command runs in a mount namespace of its own whose folder
    is a memory filesystem that the cluster's workers (started outside it) cannot see."""
    import subprocess
    import sys

    from xfskde._scheduling import refuse_unshared_folder

    shared = tmp_path / "shared"
    refuse_unshared_folder(shared, client)  # seen by every worker: nothing to say
    assert shared.is_dir() and not any(shared.iterdir())
    if not _private_mounts():
        pytest.skip("no mount namespace for a folder the workers lack (needs unshare)")
    private = tmp_path / "private"
    private.mkdir()
    address = client.scheduler.address
    commands = {
        "out.zarr": "coefficients",
        "maps.tif": "maps",
        "labels.zarr": "segment --textures 2",
    }  # segment: refused before its fit
    for output, command in commands.items():
        line = (f"mount -t tmpfs none {private} && exec {sys.executable} -m xfskde.cli "
                f"{command} {camera_zarr} {private / output} --scheduler {address} "
                "--no-progress")  # fmt: skip
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               line], capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 2, done.stderr
        said = done.stderr.strip().splitlines()
        assert len(said) == 1 and "the cluster's workers at tcp://" in said[0], said
        assert f"do not see {private} (they run on machines that do not share it)" in said[0]
    assert not any(private.iterdir())  # nothing reached the workers' side of the folder
    # inputs there: a TIFF failed with "[Errno 2] No such file", and a Zarr store was read as
    # its fill value (zeros: refused here only for having no gradient, silently wrong else)
    tifffile.imwrite(tmp_path / "camera.tif", CAMERA, tile=(64, 64))
    for source in ("camera.tif", "camera.zarr"):
        out = tmp_path / f"{source}.out.zarr"
        line = (f"mount -t tmpfs none {private} && cp -r {tmp_path / source} {private} && "
                f"exec {sys.executable} -m xfskde.cli coefficients {private / source} {out} "
                f"--scheduler {address} --no-progress")  # fmt: skip
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               line], capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 2, done.stderr
        said = done.stderr.strip().splitlines()
        assert len(said) == 1, said
        assert f"{private / source} is not there for the task that reads it, on " in said[0]
        assert "does not share its folder (read it from a folder every worker" in said[0]


def test_geotiffs_are_written_by_the_cluster(client, camera_zarr, tmp_path, monkeypatch):
    """write_geotiff on a cluster (the workers write their tiles under a distributed lock: a
    thread lock cannot even be sent to them), and the CLI's GeoTIFF output by address, both
    named relative to a working directory the workers do not have (they failed with
    "labels.tif.partial: No such file or directory": the workers opened the relative name in
    their own)."""
    rioxarray = pytest.importorskip("rioxarray")
    from xfskde.io.geotiff import write_geotiff

    image = xfskde.open_image(camera_zarr, chunks=128)
    field = xfskde.local_fskde(image, order=4, window="box", size=8, stride=2)
    coherence = field.fskde.coherence()
    monkeypatch.chdir(tmp_path)  # the workers' working directory is the test's, not this
    written = write_geotiff(coherence, "coherence.tif")  # computed and written by the workers
    assert written == tmp_path / "coherence.tif"
    back = rioxarray.open_rasterio(tmp_path / "coherence.tif").squeeze("band", drop=True)
    np.testing.assert_array_equal(back.values, coherence.compute(scheduler="sync").values)
    out = tmp_path / "labels.tif"
    argv = ["segment", str(camera_zarr), "labels.tif", "--textures", "2", "--size", "6",
            "--sample", "2000", "--scheduler", client.scheduler.address,
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    labels = rioxarray.open_rasterio(out).squeeze("band", drop=True)
    assert labels.shape == CAMERA.shape and set(np.unique(labels.values)) == {1, 2}


def _slow(block: np.ndarray) -> np.ndarray:
    time.sleep(0.1)  # a slow reader: the computation is still running when a worker dies
    return block


def _kill_a_busy_worker(client, future, n_held: int) -> str:
    """Once the workers hold ``n_held`` results, SIGKILL the one that holds the most."""
    deadline = time.monotonic() + 60
    while True:
        held = client.has_what()
        if sum(map(len, held.values())) >= n_held:
            break
        assert time.monotonic() < deadline, "the computation never got going"
        time.sleep(0.05)
    assert not future.done()  # mid-computation
    victim = max(held, key=lambda worker: len(held[worker]))
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    return victim


def _check_killed_worker(client, pixels, path, chunks, **params):
    image = xfskde.open_image(path, chunks=chunks)
    uninterrupted = xfskde.local_fskde(image, **params).compute(scheduler="sync")
    image = image.copy(data=image.data.map_blocks(_slow, dtype=image.dtype))
    field = xfskde.local_fskde(image, **params)
    future = client.compute(field)
    victim = _kill_a_busy_worker(client, future, n_held=8)
    result = future.result(timeout=120)
    assert victim not in client.scheduler_info()["workers"]  # it really died (and was replaced)
    assert_keeps_labels(result, field)
    xr.testing.assert_identical(result, uninterrupted)  # complete and bit-identical
    np.testing.assert_allclose(result.values, xfskde.local_fskde(pixels, **params), rtol=1e-6)


def test_a_killed_worker_does_not_lose_or_change_results(client, camera_zarr):
    _check_killed_worker(client, CAMERA, camera_zarr, 64, order=5, window="box", size=5)


@pytest.mark.slow
def test_a_killed_worker_on_a_larger_image(client, tmp_path):
    pixels = np.tile(CAMERA, (4, 4))  # 2048 x 2048, 256 chunks
    path = _zarr_image(tmp_path / "big.zarr", pixels, chunks=128)
    _check_killed_worker(client, pixels, path, 128, order=8, window="gaussian", size=3, stride=4)


def test_a_worker_killed_for_memory_is_one_line_and_the_store_resumes(tmp_path, capsys):
    """A worker killed while it computed a block (its nanny's memory limit, the kernel's OOM
    killer) came back as distributed's KilledWorker: "internal error: KilledWorker: ... report
    it", status 1. It is the one line of a failed write, status 2: what happened, what to do,
    and what the store keeps for --resume."""

    class KillsAtBlock11(distributed.WorkerPlugin):  # by value: the workers cannot import tests
        def setup(self, worker):
            import xfskde.io.stores as stores

            real = stores._write_block

            def dies(block, store, name, by, bx, *args, **kwargs):
                if (by, bx) == (1, 1):
                    os.kill(os.getpid(), signal.SIGKILL)
                return real(block, store, name, by, bx, *args, **kwargs)

            stores._write_block = dies

    pixels = CAMERA[:256, :256]
    tiff, out = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, pixels, tile=(128, 128))
    argv = ["coefficients", str(tiff), str(out), "--window", "box", "--size", "5", "--order", "4",
            "--chunks", "128", "--no-progress"]  # fmt: skip
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        client.register_plugin(KillsAtBlock11())
        assert main([*argv, "--scheduler", cluster.scheduler_address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        "xfskde coefficients: error: a worker of the Dask cluster died while it computed a "
        "block (KilledWorker: killed once, the last on tcp://"
    ), err
    assert ("most often for lack of memory: give the workers more memory (dask worker "
            "--memory-limit) or compute in smaller --chunks; ") in err[0]  # fmt: skip
    done = store_status(out)["blocks_done"]
    assert done < 4 and err[0].endswith(
        f"{out} keeps {done} of 4 blocks: fix the cause, then run the same command with "
        "--resume to finish it (or --overwrite to start again)"
    ), err
    assert main([*argv, "--resume", "--scheduler", "synchronous"]) == 0
    np.testing.assert_array_equal(
        xfskde.open_coefficients(out).values,
        xfskde.local_fskde(pixels, order=4, window="box", size=5),
    )


def test_a_cluster_run_stopped_by_sigterm_prints_no_asyncio_traceback(tmp_path, capsys, caplog):
    """SIGTERM during a run on a cluster printed asyncio's "Task exception was never retrieved
    ... distributed.client.AllExit" traceback (the gather's waiting tasks, cancelled) before
    the one line saying what the store keeps."""
    import gc
    import threading

    class SlowBlocks(distributed.WorkerPlugin):
        def setup(self, worker):
            import xfskde.io.stores as stores

            real = stores._write_block

            def slow(*args, **kwargs):
                time.sleep(0.3)
                return real(*args, **kwargs)

            stores._write_block = slow

    tiff, out = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32))
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                       dashboard_address=None, silence_logs=50)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        client.register_plugin(SlowBlocks())
        timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        try:
            status = main(["coefficients", str(tiff), str(out), "--window", "box", "--size", "5",
                           "--order", "4", "--chunks", "32", "--no-progress",
                           "--scheduler", cluster.scheduler_address])  # fmt: skip
        finally:
            timer.cancel()
        time.sleep(0.5)  # the cancelled waits end in the client's loop
    gc.collect()
    assert status == 143
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("xfskde coefficients: terminated (SIGTERM); "), err
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()], caplog.text


def _within(seconds, function, *args, **kwargs):
    """``function(*args, **kwargs)`` in a thread: what it returns or raises, or a failure if it
    has not returned within ``seconds`` (a computation waiting for ever)."""
    import threading

    outcome = {}

    def run():
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s: the computation hung"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_workers_without_room_for_xfskde_are_refused_before_anything_runs(
    camera_zarr, tmp_path, capsys
):
    """A worker of 300 MB (286 MiB: distributed pauses it above 229 MiB) held 249 MiB once it
    had imported xfskde for its first task, so it paused and the command waited for ever,
    saying nothing. Now the workers load xfskde and say what they hold before anything is
    submitted, and the command refuses in one line: the worker, its limit, what a task needs,
    what to do; no store is laid out."""
    out = tmp_path / "out.zarr"
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       memory_limit="300MB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster:
        argv = ["coefficients", str(camera_zarr), str(out), "--window", "box", "--size", "5",
                "--no-progress", "--scheduler", cluster.scheduler_address]  # fmt: skip
        assert _within(120, main, argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        "xfskde coefficients: error: the workers of the Dask cluster have too little memory for "
        "xfskde's tasks: tcp://127.0.0.1:"
    ), err
    assert " pauses at 229 MiB (80% of its memory_limit of 286 MiB), holds " in err[0]
    assert " MiB with xfskde loaded, and a task needs about " in err[0]
    assert "give each worker a memory_limit of at least " in err[0]
    assert "(dask worker --memory-limit, LocalCluster(memory_limit=))" in err[0]
    assert not out.exists()


def test_a_task_larger_than_the_workers_room_is_refused_naming_chunks(tmp_path):
    """Room for xfskde but not for a block of these chunks: refused before it is submitted,
    naming the largest chunk and smaller chunks; the same field in smaller chunks runs."""
    from xfskde._scheduling import compute

    pixels = np.tile(CAMERA, (2, 2))  # 1024²
    path = _zarr_image(tmp_path / "camera.zarr", pixels, chunks=256)
    params = {"order": 8, "window": "box", "size": 5}
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       memory_limit="500MB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        large = xfskde.local_fskde(xfskde.open_image(path, chunks=1024), **params).data
        small = xfskde.local_fskde(xfskde.open_image(path, chunks=256), **params).data
        with pytest.raises(xfskde.exceptions.ParameterError) as refused:
            _within(60, compute, [large], client)
        (worker,) = client.has_what()
        assert not client.has_what()[worker]  # nothing was submitted
        (rss,) = client.run(_rss).values()  # with xfskde loaded
        (result,) = _within(120, compute, [small], client)
    said = str(refused.value)
    assert "(100 MiB for the tasks' code and buffers and, for its thread, 2 times the largest " \
           "chunk, 72 MiB)" in said, said  # fmt: skip
    assert said.endswith(
        "or compute in smaller chunks= (a block of half the side needs a quarter of the memory)"
    )
    np.testing.assert_allclose(result, xfskde.local_fskde(pixels, **params), rtol=1e-6)
    from xfskde._memory import TASK_BASE, largest_chunk

    assert largest_chunk([large]) == 1024 * 1024 * 9 * 8  # 9 complex64 a pixel: 72 MiB
    # what the worker had for blocks: less than a 1024² block needs (what a worker holds with
    # xfskde loaded varies with the environment: 195 MiB here, 292 MiB in CI's fresh one)
    assert 0.8 * 500e6 - rss - TASK_BASE < 2 * 1024**2 * 9 * 8


def test_a_result_is_put_together_on_the_client_not_on_a_worker(client, camera_zarr):
    """What xfskde computes on a cluster comes back in its chunks, assembled here: a worker
    that put a field together held it whole beside its chunks (a 72 MiB field killed a
    worker of 500 MB that had room for each chunk, the test above, in CI)."""
    from xfskde._scheduling import compute

    image = xfskde.open_image(camera_zarr, chunks=128)
    field = xfskde.local_fskde(image, order=4, size=2)
    with distributed.get_task_stream(client) as stream:
        (result, total) = compute([field, field.data.real.sum()], client)
    ran = {str(task["key"]) for task in stream.data}
    assert ran and not [key for key in ran if "finalize" in key], ran
    eager = xfskde.local_fskde(image.compute(), order=4, size=2)
    assert_keeps_labels(result, eager)
    xr.testing.assert_allclose(result, eager, rtol=1e-6)
    np.testing.assert_allclose(total, result.real.sum(), rtol=1e-5)
    assert not client.futures  # the chunks gathered are released on the workers


def _rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fill(worker, fraction):
    """Make ``worker`` (this process) hold ``fraction`` of its memory_limit, until it ends:
    memory that no task holds, as a leak or a cache would."""
    more = int(fraction * worker.memory_manager.memory_limit) - _rss()
    if more > 0:
        worker.xfskde_test_ballast = np.ones(more, np.uint8)  # touched: resident


class FillsAtFirstBlock(distributed.WorkerPlugin):
    """A worker that has written its first block of a store then holds 88 % of its
    memory_limit (the first it writes: the scheduler's order of the blocks varies, and a block
    named here was once the last, which ended the write before the worker was paused)."""

    def setup(self, worker):
        import xfskde.io.stores as stores

        real = stores._write_block

        def fills(block, store, name, by, bx, *args, **kwargs):
            written = real(block, store, name, by, bx, *args, **kwargs)
            if not hasattr(worker, "xfskde_test_filled"):
                worker.xfskde_test_filled = True
                _fill(worker, 0.88)
                # long enough for distributed's memory monitor to pause the worker before its
                # thread takes the other blocks (they raced it, and won once in CI)
                time.sleep(0.5)
            return written

        stores._write_block = fills


@pytest.fixture
def one_worker():
    """A cluster of one worker process of one thread and 1 GB (954 MiB: paused above 763)."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       memory_limit="1GB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster:
        yield cluster


def test_workers_paused_for_good_during_a_write_end_it_in_one_line(
    one_worker, tmp_path, monkeypatch
):
    """A worker whose memory grew past 80 % of its limit during the run (here it holds 88 %
    from its first block on) is paused by distributed, and runs nothing more: the write waited
    for ever. Now it ends once every worker has been paused, with no task running, for
    PAUSED_PATIENCE seconds, with a WorkerDiedError saying so (the store keeps its blocks)."""
    import xfskde._scheduling as scheduling

    monkeypatch.setattr(scheduling, "PAUSED_PATIENCE", 3.0, raising=False)
    monkeypatch.setattr(scheduling, "WATCH_EVERY", 0.5, raising=False)
    out = tmp_path / "out.zarr"
    with distributed.Client(one_worker) as client:
        client.register_plugin(FillsAtFirstBlock())
        field = xfskde.local_fskde(xfskde.open_image(
            _zarr_image(tmp_path / "in.zarr", CAMERA[:256, :256]), chunks=64), order=4,
            window="box", size=3)  # fmt: skip
        started = time.monotonic()
        with pytest.raises(xfskde.exceptions.WorkerDiedError) as died:
            _within(90, xfskde.write_coefficients, field, out, scheduler=client)
        took = time.monotonic() - started
        (worker,) = client.scheduler_info()["workers"].values()
        assert worker["status"] == "paused"  # it still is: distributed would wait for ever
    said = str(died.value)
    assert said.startswith(
        "every worker of the Dask cluster stayed paused for lack of memory, with no task "
        "running, for 3 s (tcp://127.0.0.1:"
    ), said
    assert " with " in said and " MiB of its memory_limit of 954 MiB): " in said
    assert said.endswith(
        "distributed starts no task on a worker above its pause fraction of its memory_limit "
        "(80 % unless configured), and the computation could not finish; give the workers more "
        "memory (dask worker --memory-limit) or compute in smaller chunks="
    ), said
    assert took < 30, took
    assert 0 < store_status(out)["blocks_done"] < 16


def _fills_at_first(block):
    """The worker's first block fills it to 88 % of its memory_limit (whichever block that
    is: with block (0, 0) named, it ran last at times, and the computation was done before the
    worker was paused)."""
    worker = distributed.get_worker()
    if not hasattr(worker, "xfskde_test_filled"):
        worker.xfskde_test_filled = True
        _fill(worker, 0.88)
    else:  # long enough for distributed's memory monitor (every 0.1 s) to pause the worker
        time.sleep(0.5)  # before the other blocks are done (they raced it, and won in CI)
    return block + 1


def test_what_is_computed_through_connect_is_watched(one_worker, monkeypatch):
    """The command line computes through the Client of connect(), with dask.compute and
    .compute() (segmentation's fit): a paused cluster ended those too, not only compute()."""
    import dask.array as da

    import xfskde._scheduling as scheduling
    from xfskde._scheduling import connect

    monkeypatch.setattr(scheduling, "PAUSED_PATIENCE", 3.0, raising=False)
    monkeypatch.setattr(scheduling, "WATCH_EVERY", 0.5, raising=False)
    with connect(one_worker.scheduler_address) as client:
        assert da.ones((4, 4), chunks=2).sum().compute() == 16  # dask's own compute: watched
        blocks = da.zeros((8, 8), chunks=2).map_blocks(_fills_at_first, dtype=float)
        with pytest.raises(xfskde.exceptions.WorkerDiedError, match="stayed paused for lack"):
            _within(90, blocks.compute)
        assert not client.futures  # cancelled, none left behind


def _dies(block):
    distributed.get_worker()  # a ValueError anywhere else: only a worker dies
    os.kill(os.getpid(), signal.SIGKILL)
    return block


def test_a_worker_killed_under_connect_is_one_line():
    """Segmentation's fit computed through the command line's Client came back as
    distributed's KilledWorker: "internal error: KilledWorker: ... report it", status 1."""
    import dask.array as da

    from xfskde._scheduling import connect

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)  # fmt: skip
    with cluster, connect(cluster.scheduler_address):
        blocks = da.zeros((4, 4), chunks=2).map_blocks(_dies, dtype=float)
        with pytest.raises(xfskde.exceptions.WorkerDiedError) as died:
            _within(90, blocks.compute)
    assert str(died.value).startswith(
        "a worker of the Dask cluster died while it computed a block (KilledWorker: killed "
        "once, the last on tcp://"
    )


@pytest.fixture
def small_worker():
    """A cluster of one worker process of one thread and 500 MB (477 MiB: paused above 381),
    room for xfskde and a block of 512² coefficients of order 8, not for one of 1024²."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       memory_limit="500MB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster:
        yield cluster


def test_a_write_through_a_client_of_ones_own_is_checked_before_its_layout(one_worker, tmp_path):
    """A Client made with distributed.Client (not connect()) is Dask's default scheduler: a
    write that cannot fit on its workers was refused only once its store was laid out (an
    empty store left behind, and, for an overwrite, the old one gone). Now it is refused in one
    line before anything is written or submitted; a write that fits gives the same values. (A
    worker of 1 GB: a task of 2048² needs 676 MiB beside what the worker holds, 190-270 MiB as
    the versions installed go, one of 512² 136 MiB: the one refused, the other taken, on any.)"""
    pixels = np.tile(CAMERA, (4, 4))  # 2048²
    path = _zarr_image(tmp_path / "camera.zarr", pixels, chunks=256)
    params = {"order": 8, "window": "box", "size": 5}
    out = tmp_path / "out.zarr"
    with distributed.Client(one_worker) as client:
        large = xfskde.local_fskde(xfskde.open_image(path, chunks=2048), **params)
        with pytest.raises(xfskde.exceptions.ParameterError) as refused:
            _within(60, xfskde.write_coefficients, large, out)
        (worker,) = client.has_what()
        assert not client.has_what()[worker]  # nothing was submitted
        assert not out.exists()  # nothing was laid out
        small = xfskde.local_fskde(xfskde.open_image(path, chunks=512), **params)
        assert _within(120, xfskde.write_coefficients, small, out) == 16
    said = str(refused.value)
    assert "\n" not in said and said.startswith(
        "the workers of the Dask cluster have too little memory for xfskde's tasks: tcp://"
    ), said
    assert " 2 times the largest chunk, 288 MiB)" in said and "smaller chunks=" in said, said
    np.testing.assert_allclose(
        xfskde.open_coefficients(out).values, xfskde.local_fskde(pixels, **params), rtol=1e-6
    )


def test_segmentations_fit_through_a_client_of_ones_own_is_checked(camera_zarr):
    """segment()'s fit computed its crop, tiles and samples with .compute() on the default
    Client: on workers with no room for xfskde (300 MB: paused as soon as xfskde is loaded)
    it waited for ever. Now it is refused in one line before its first task is submitted."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       memory_limit="300MB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        image = xfskde.open_image(camera_zarr, chunks=128)
        with pytest.raises(xfskde.exceptions.ParameterError) as refused:
            _within(60, xfskde.segment, image, 2, sample=2000)
        (worker,) = client.has_what()
        assert not client.has_what()[worker]
    said = str(refused.value)
    assert "\n" not in said and " pauses at 229 MiB (80% of its memory_limit of 286 MiB)" in said
    assert "give each worker a memory_limit of at least " in said, said


def test_an_overwrite_refused_for_memory_leaves_the_old_store_and_says_so(
    small_worker, tmp_path, capsys
):
    """`xfskde coefficients ... --overwrite` on workers too small for its blocks laid the new
    store out over the old, complete one before the memory check refused it: the old store
    was gone, and the note said the new one "keeps 0 of 1 blocks". Now the check comes first:
    the old store is left as it was, and the note says so."""
    pixels = np.tile(CAMERA, (2, 2))  # 1024²: one block of 72 MiB of coefficients
    tiff, out = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, pixels, tile=(256, 256))
    argv = ["coefficients", str(tiff), str(out), "--window", "box", "--size", "5", "--chunks",
            "1024", "--no-progress"]  # fmt: skip
    assert main([*argv, "--scheduler", "threads"]) == 0
    before = xfskde.open_coefficients(out).values
    capsys.readouterr()
    argv += ["--overwrite", "--scheduler", small_worker.scheduler_address]
    assert _within(60, main, argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "have too little memory for xfskde's tasks" in err[0], err
    assert err[0].endswith(f"; {out} was not touched: it is complete, as before"), err
    assert store_status(out) == {"complete": True, "blocks_done": 1, "blocks_total": 1,
                                 "blocks_skipped": 0}  # fmt: skip
    np.testing.assert_array_equal(xfskde.open_coefficients(out).values, before)


def test_a_store_replaced_before_a_failure_is_not_said_untouched(tmp_path):
    """The note of a failed write says "not touched" only of a store the run left as it was:
    one that an overwrite wrote again is just complete."""
    from xfskde.commands._options import writing
    from xfskde.exceptions import ParameterError

    out = tmp_path / "out.zarr"
    field = xfskde.local_fskde(xr.DataArray(CAMERA[:64, :64], dims=("y", "x")), order=2,
                               window="box", size=3)  # fmt: skip
    xfskde.write_coefficients(field, out, scheduler="synchronous")
    for rewrite, note in ((False, "was not touched: it is complete, as before"),
                          (True, "is complete")):  # fmt: skip
        with pytest.raises(ParameterError) as failed, writing(str(out)):
            if rewrite:
                xfskde.write_coefficients(field, out, overwrite=True, scheduler="synchronous")
            raise ParameterError("refused")
        assert failed.value.__notes__ == [f"{out} {note}"]


def _filled_or_slept(fill):
    if fill:
        _fill(distributed.get_worker(), 0.88)
    else:  # long enough for distributed's memory monitor (every 0.1 s) to pause the worker
        time.sleep(0.5)
    return fill


def test_one_worker_paused_for_good_while_the_others_idle_ends_the_run(monkeypatch):
    """The memory check asks for one worker with room; a run whose tasks are on a worker that
    then paused for good, the others idle, waited for ever (distributed moves no task off a
    paused worker: a write stopped at 54 of 64 blocks). It ends as an all-paused run does,
    naming the paused worker among the cluster's."""
    import xfskde._scheduling as scheduling

    monkeypatch.setattr(scheduling, "PAUSED_PATIENCE", 3.0, raising=False)
    monkeypatch.setattr(scheduling, "WATCH_EVERY", 0.5, raising=False)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1GB", dashboard_address=None,
                                       silence_logs=50)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        first, other = sorted(client.scheduler_info()["workers"])
        futures = [client.submit(_filled_or_slept, i == 0, workers=[first], pure=False,
                                 allow_other_workers=False) for i in range(8)]  # fmt: skip
        with pytest.raises(xfskde.exceptions.WorkerDiedError) as died:
            _within(90, scheduling._gather, client, futures, futures)
        workers = client.scheduler_info()["workers"]
        assert (workers[first]["status"], workers[other]["status"]) == ("paused", "running")
    said = str(died.value)
    assert said.startswith(
        "1 of the 2 workers of the Dask cluster, holding the tasks not done (the others idle: "
        "distributed moves no task off a paused worker), stayed paused for lack of memory, with "
        f"no task running, for 3 s ({first} with "
    ), said
