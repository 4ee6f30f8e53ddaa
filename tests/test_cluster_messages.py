"""What a Dask distributed user is told, in one line, where the cluster is not as it should be:
a closed Client, a scheduler killed during a run, a cluster with no worker, workers of other
versions, an address where no scheduler answers. Each on a real LocalCluster of worker
processes (or a real server that is no scheduler)."""

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import dask
import numpy as np
import pytest
import tifffile
from skimage import data

import xfskde
from xfskde.cli import main

distributed = pytest.importorskip("distributed")

PIXELS = data.camera()[:256, :256]


@pytest.fixture
def cluster():
    """One worker process of one thread."""
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)  # fmt: skip
    with cluster:
        yield cluster


@pytest.fixture
def tiff(tmp_path):
    path = tmp_path / "in.tif"
    tifffile.imwrite(path, PIXELS, tile=(64, 64))
    return path


def _argv(tiff, out, *more):
    return ["coefficients", str(tiff), str(out), "--window", "box", "--size", "5", "--order",
            "4", "--chunks", "64", "--no-progress", *more]  # fmt: skip


def _expected():
    return xfskde.local_fskde(PIXELS, order=4, window="box", size=5)


def test_a_closed_client_as_scheduler_is_refused_in_one_line(cluster, tiff, tmp_path):
    """A Client closed before the write (passed as scheduler=, or left as Dask's scheduler by
    dask.config.set) failed with "AttributeError: 'NoneType' object has no attribute
    'broadcast'" from inside distributed's Client.run."""
    field = xfskde.local_fskde(xfskde.open_image(tiff, chunks=64), order=4, window="box", size=5)
    client = distributed.Client(cluster, set_as_default=False)
    client.close()
    out = tmp_path / "out.zarr"
    with pytest.raises(xfskde.exceptions.ParameterError) as refused:
        xfskde.write_coefficients(field, out, scheduler=client)
    assert str(refused.value) == (
        "scheduler= is a distributed Client that is closed: pass an open Client (or the "
        "scheduler's address) as scheduler=, or leave scheduler= out to compute locally"
    )
    assert not out.exists()
    with dask.config.set(scheduler=client), pytest.raises(xfskde.exceptions.ParameterError) as cur:
        xfskde.write_coefficients(field, out)
    assert str(cur.value).startswith(
        "Dask's current scheduler (dask.config.set(scheduler=client)) is a distributed Client "
        "that is closed: "
    )
    assert not out.exists()
    # an open one, and Dask's local scheduler once the closed one is no longer current
    with distributed.Client(cluster, set_as_default=False) as open_client:
        xfskde.write_coefficients(field, out, scheduler=open_client)
    np.testing.assert_array_equal(xfskde.open_coefficients(out).values, _expected())


_CLUSTER = """
import sys, time, distributed
if __name__ == "__main__":
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    print(cluster.scheduler_address, flush=True)
    while True:
        time.sleep(1)
"""


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_a_scheduler_killed_during_a_write_is_one_line_and_the_store_resumes(
    tiff, tmp_path, capsys
):
    """The scheduler's process killed while the blocks were written: "internal error:
    FutureCancelledError: finalize-... cancelled for reason: scheduler-connection-lost ...
    report it", status 1, after distributed's traceback of the client's cancelled
    reconnection. Now one line naming the scheduler's address, status 2, and the store's
    --resume finishes the write."""

    class KillsTheSchedulerAtBlock11(distributed.WorkerPlugin):  # by value
        def __init__(self, pid):
            self.pid = pid

        def setup(self, worker):
            import xfskde.io.stores as stores

            real, pid = stores._write_block, self.pid

            def kills(block, store, name, by, bx, *args, **kwargs):
                if (by, bx) == (1, 1):
                    os.kill(pid, signal.SIGKILL)
                return real(block, store, name, by, bx, *args, **kwargs)

            stores._write_block = kills

    # a scheduler in a process of its own (a LocalCluster's, with its worker process)
    process = subprocess.Popen([sys.executable, "-c", _CLUSTER], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)  # fmt: skip
    records = _Records()
    logging.getLogger("distributed").addHandler(records)
    try:
        address = process.stdout.readline().strip()
        with distributed.Client(address, set_as_default=False) as client:
            client.register_plugin(KillsTheSchedulerAtBlock11(process.pid))
        out = tmp_path / "out.zarr"
        status = main(_argv(tiff, out, "--scheduler", address))
        time.sleep(0.5)  # what the closed client's loop still logs
    finally:
        logging.getLogger("distributed").removeHandler(records)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1, err
    done = xfskde.io.store_status(out)["blocks_done"]
    assert err[0] == (
        f"xfskde coefficients: error: the Dask scheduler at {address} went away during the "
        "computation (its process stopped or killed, or its machine or the network down): "
        f"start the cluster again and run again; {out} keeps {done} of 16 blocks: fix the "
        "cause, then run the same command with --resume to finish it (or --overwrite to start "
        "again)"
    ), err
    tracebacks = [r for r in records.records if r.exc_info and r.levelno >= logging.ERROR]
    assert not tracebacks, [r.getMessage() or repr(r.exc_info[1]) for r in tracebacks]
    assert main(_argv(tiff, out, "--resume", "--scheduler", "synchronous")) == 0
    np.testing.assert_array_equal(xfskde.open_coefficients(out).values, _expected())


def test_a_cluster_without_workers_is_waited_for_and_says_so(tiff, tmp_path, capsys, monkeypatch):
    """A cluster with no worker (an adaptive one not started yet) was waited for without a
    word. It still is (its workers may come: here one starts 1 s later, and the store is
    written), but after NO_WORKERS_NOTICE seconds the command says, once, on stderr, that
    it waits for workers."""
    import xfskde._scheduling as scheduling

    monkeypatch.setattr(scheduling, "NO_WORKERS_NOTICE", 0.5, raising=False)
    monkeypatch.setattr(scheduling, "WATCH_EVERY", 0.25)
    cluster = distributed.LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)  # fmt: skip
    with cluster:
        timer = threading.Timer(1.0, cluster.scale, (1,))
        timer.start()
        try:
            out = tmp_path / "out.zarr"
            status = main(_argv(tiff, out, "--scheduler", cluster.scheduler_address))
        finally:
            timer.cancel()
    assert status == 0
    address = cluster.scheduler_address
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        f"xfskde coefficients: warning: waiting for workers: the Dask cluster at {address} has "
        "had no worker for "
    ), err
    assert err[0].endswith(
        f" s (an adaptive cluster starts them once it has tasks): start some (dask worker "
        f"{address}), or interrupt (Ctrl-C) to stop"
    ), err
    np.testing.assert_array_equal(xfskde.open_coefficients(out).values, _expected())


def _other_versions(versions):
    """A plugin that makes a worker's installed metadata say other ``versions`` of some
    packages, as a worker of another environment's would (distributed reads them with
    importlib.metadata). Its class is made here: pickled by value (the workers cannot
    import tests)."""

    class OtherVersions(distributed.WorkerPlugin):
        name = f"other-versions-{'-'.join(sorted(versions))}"

        def setup(self, worker):
            import importlib
            import sys
            import tempfile

            import distributed.versions

            folder = tempfile.mkdtemp(prefix="xfskde-versions-")
            for package, version in versions.items():
                info = os.path.join(folder, f"{package}-{version}.dist-info")
                os.makedirs(info)
                with open(os.path.join(info, "METADATA"), "w") as file:
                    file.write(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
            sys.path.insert(0, folder)
            importlib.invalidate_caches()
            distributed.versions._version_cached.cache_clear()

    return OtherVersions()


def test_workers_of_another_version_are_refused_or_warned_of_in_one_line(
    cluster, tiff, tmp_path, capsys
):
    """Workers whose xfskde is another version than the client's ran its tasks anyway (other
    numbers, or errors that named neither); another NumPy was, at best, distributed's warning
    at connection (a table of many lines, from what the workers said when they joined: here,
    nothing). Now another xfskde is refused in one line naming
    both versions, before anything is written; another NumPy is one warning line, and the
    write is done."""
    import importlib.metadata

    address = cluster.scheduler_address
    mine = {name: importlib.metadata.version(name) for name in ("xfskde", "numpy")}
    with distributed.Client(cluster, set_as_default=False) as client:
        client.register_plugin(_other_versions({"numpy": "1.99.0"}))
        (worker,) = client.scheduler_info()["workers"]
        out = tmp_path / "out.zarr"
        assert main(_argv(tiff, out, "--scheduler", address)) == 0
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            "xfskde coefficients: warning: the Dask cluster runs other versions of packages "
            f"than this client (numpy 1.99.0 on {worker}, {mine['numpy']} here): the same "
            "versions everywhere are safest (distributed runs the tasks anyway)"
        ], err
        np.testing.assert_array_equal(xfskde.open_coefficients(out).values, _expected())

        client.register_plugin(_other_versions({"xfskde": "0.0.9"}))
        refused = (
            f"the workers of the Dask cluster run another version of xfskde than this client "
            f"(xfskde 0.0.9 on {worker}, {mine['xfskde']} here): install the same version "
            "where the workers run (a task of another version computes other numbers, or fails)"
        )
        again = tmp_path / "again.zarr"
        assert main(_argv(tiff, again, "--scheduler", address)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"xfskde coefficients: error: {refused}"], err
        assert not again.exists()
        field = xfskde.local_fskde(xfskde.open_image(tiff, chunks=64), order=4, window="box",
                                   size=5)  # fmt: skip
        with pytest.raises(ImportError) as error:  # the refusal alone: numpy's is no news
            xfskde.write_coefficients(field, again, scheduler=client)
        assert str(error.value) == refused
        assert not again.exists()


def _running_version(version):
    """A plugin that makes a worker's running xfskde say it is ``version`` while its installed
    metadata (what :func:`xfskde._scheduling.check_versions` asks through distributed) says
    the client's: the state of a worker that joins after that check, which nothing compared.
    Pickled by value, as :func:`_other_versions`'s."""

    class RunningVersion(distributed.WorkerPlugin):
        name = f"running-version-{version}"

        def setup(self, worker):
            import xfskde._version

            xfskde._version.__version__ = version

    return RunningVersion()


def test_a_task_on_a_worker_of_another_xfskde_is_refused_in_one_line(
    cluster, tiff, tmp_path, capsys
):
    """A worker running another xfskde that the client's check did not see (one that joined
    after it) computed its blocks with its own code: the coefficients were written and the
    store said complete. Each of the engine's tasks now checks the version that runs it, and
    the write, the fit's sample and the labels stop at the first, in one line."""
    import importlib.metadata

    mine = importlib.metadata.version("xfskde")
    address = cluster.scheduler_address
    with distributed.Client(cluster, set_as_default=False) as client:
        client.register_plugin(_running_version("0.0.9"))
        (worker,) = client.scheduler_info()["workers"]
        refused = (
            f"a worker of the Dask cluster ({worker}) runs another version of xfskde than this "
            f"client (xfskde 0.0.9 there, {mine} here): install the same version where the "
            "workers run (a task of another version computes other numbers, or fails)"
        )
        out = tmp_path / "out.zarr"
        assert main(_argv(tiff, out, "--scheduler", address)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"xfskde coefficients: error: {refused}; {out} keeps 0 of 16 blocks: fix the cause, "
            "then run the same command with --resume to finish it (or --overwrite to start "
            "again)"
        ], err
        rgb = np.stack([PIXELS, PIXELS[::-1], PIXELS.T], axis=-1)
        with dask.config.set(scheduler=client), pytest.raises(ImportError) as error:
            # the fit's sample: map_regions
            xfskde.segmentation.fit_textures(dask.array.from_array(rgb, chunks=128), 2)
        assert str(error.value) == refused


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_address_nothing_listens_on_is_one_line_at_once(tiff, tmp_path, capsys):
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    assert main(_argv(tiff, tmp_path / "out.zarr", "--scheduler", address)) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"xfskde coefficients: error: cannot reach the Dask scheduler at {address}: "
        "connection refused"
    ], err
    with pytest.raises(ConnectionError, match=f"^cannot reach the Dask scheduler at {address}"):
        xfskde._scheduling.compute([dask.array.ones(3)], address)


@contextlib.contextmanager
def _web_server_refusing_everything():
    """A TCP server that answers whatever it reads as web servers answer a request they
    cannot parse (nginx, a proxy): "400 Bad Request", then closes."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n"
                                 b"content-length: 0\r\n\r\n")  # fmt: skip

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def test_an_address_where_something_else_answers_is_one_line(tiff, tmp_path, capsys):
    """A web server's port given as the scheduler's (a dashboard's, a proxy's): distributed
    read its "HTTP/1.1 400" as a message's length and the command ended with "internal error:
    MemoryError: Unable to allocate 3.07 EiB ..."; a dashboard's link was "unknown address
    scheme 'http' (known schemes: [...])"."""
    with _web_server_refusing_everything() as port:
        address = f"tcp://127.0.0.1:{port}"
        started = time.monotonic()
        assert main(_argv(tiff, tmp_path / "out.zarr", "--scheduler", address)) == 2
        assert time.monotonic() - started < 5
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"xfskde coefficients: error: something answered at {address}, but not as a Dask "
        "scheduler does (a web server, a dashboard's port?): give the address of the Dask "
        "scheduler itself (its port is 8786 unless chosen otherwise)"
    ], err
    link = "http://127.0.0.1:8787/status"
    assert main(_argv(tiff, tmp_path / "out.zarr", "--scheduler", link)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"xfskde coefficients: error: --scheduler {link!r} is a web address (a dashboard's?): "
        "give the address of the Dask scheduler itself, such as 'tcp://127.0.0.1:8786' "
        "(Client.scheduler.address, or what `dask scheduler` prints)"
    ], err
    assert not (tmp_path / "out.zarr").exists()
