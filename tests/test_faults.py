"""Faults and bad input: nothing silently wrong.

Every fault — a writer killed at any moment (SIGKILL), interrupted (Ctrl-C) or terminated
(SIGTERM), a full disk, a damaged or truncated TIFF, a codec that cannot decode, a scheduler
that does not answer, an image too small or without data, a chunk of a store damaged or lost —
gives one clear line and a non-zero exit status through the command line, a typed error through
the API, and leaves nothing that blocks the corrected rerun; a resumed store is bit for bit the
store an uninterrupted run writes, and an interrupted one never says it is complete.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from skimage import data

import xfskde
import xfskde._scheduling
from xfskde.cli import main
from xfskde.datasets import random_textures
from xfskde.exceptions import (
    ImageReadError,
    StoreCorruptError,
    StoreDamagedWarning,
    StoreExistsError,
    StoreFormatError,
    StoreIncompleteError,
)
from xfskde.io import store_status
from xfskde.io.stores import block_record, verify_store

CAMERA = data.camera()
#: The writer of the kill tests: a 256² image in 32² tiles and chunks, 64 blocks.
ARGS = ["--order", "4", "--window", "box", "--size", "5", "--chunks", "32", "--no-progress"]

# A writer slowed at every step that can be cut short: each call that lays out an array, each
# block (before its data, and between its data and its record), and the finalization (before
# and after the metadata is consolidated, i.e. before the status is set). ``run(argv)`` writes
# through the command line, or through the API when argv[0] is "api".
SLOWED = """
import signal, sys, time
import zarr
import xfskde, xfskde.io.stores as stores
from xfskde.cli import main

signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
pause = float(sys.argv[1])

def slowed(function, before=True, after=False, when=lambda *a, **k: True):
    def slow(*args, **kwargs):
        if before and when(*args, **kwargs):
            time.sleep(pause)
        out = function(*args, **kwargs)
        if after and when(*args, **kwargs):
            time.sleep(pause)
        return out
    return slow

stores._write_block = slowed(stores._write_block)
stores._holds_values = slowed(stores._holds_values)  # between a block's data and its record
zarr.Group.create_array = slowed(zarr.Group.create_array, after=True)
zarr.consolidate_metadata = slowed(zarr.consolidate_metadata, after=True)

def run(argv):
    if argv[0] == "api":  # the same store, written through the API
        image = xfskde.open_image(argv[1], chunks=32)
        field = xfskde.local_fskde(image, order=4, window="box", size=5)
        xfskde.write_coefficients(field, argv[2], chunks=32, scheduler=argv[3])
        return 0
    return main(argv)
"""
#: One slowed writer, as a process of its own (for Ctrl-C and SIGTERM).
WRITER = (
    SLOWED
    + """
print("ready", flush=True)
sys.exit(run(sys.argv[2:]))
"""
)
#: A fork server: xfskde imported once, then one forked, slowed writer per line of JSON on
#: stdin, whose process id it prints. Children are reaped by the system (SIGCHLD ignored), so a
#: killed writer is gone at once; their output goes nowhere.
FORKS = (
    SLOWED
    + """
import json, os
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
print("ready", flush=True)
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        try:
            code = run(json.loads(line))
        except BaseException:
            code = 1
        os._exit(code)
    print(pid, flush=True)
"""
)


def _argv(tiff: Path, store: Path, mode: str, scheduler: str) -> list[str]:
    if mode == "api":
        return ["api", str(tiff), str(store), scheduler]
    return ["coefficients", str(tiff), str(store), *ARGS, "--scheduler", scheduler]


def _writer(tiff: Path, store: Path, *, scheduler: str = "synchronous",
            pause: float = 0.02) -> subprocess.Popen:  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(pause),
         *_argv(tiff, store, "cli", scheduler)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


class _Forks:
    """The fork server: ``start(argv)`` runs a slowed writer, returning its process id."""

    def __init__(self, pause: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(FORKS), str(pause)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout.readline().strip() == "ready"
        self._lock = threading.Lock()

    def start(self, argv: list[str]) -> int:
        with self._lock:
            self.proc.stdin.write(json.dumps(argv) + "\n")
            self.proc.stdin.flush()
            return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(pid: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        assert time.monotonic() < deadline, f"writer {pid} still runs"
        time.sleep(0.01)


def _files(store: Path) -> dict[str, bytes]:
    """Every file of a store and its bytes (but zarr's temporary ``*.partial`` files)."""
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file() and not p.name.endswith(".partial")
    }


@pytest.fixture(scope="module")
def forks():
    server = _Forks(pause=0.02)
    yield server
    server.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory, forks):
    """The input TIFF, the store an uninterrupted slowed writer makes of it, and how long the
    writer takes."""
    folder = tmp_path_factory.mktemp("reference")
    tiff = folder / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32))
    store = folder / "clean.zarr"
    start = time.monotonic()
    _wait_gone(forks.start(_argv(tiff, store, "cli", "synchronous")))
    duration = time.monotonic() - start
    assert store_status(store) == {
        "complete": True,
        "blocks_done": 64,
        "blocks_total": 64,
        "blocks_skipped": 0,
    }
    expected = xfskde.local_fskde(CAMERA[:256, :256], order=4, window="box", size=5)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    return tiff, store, duration


def _phase(store: Path) -> str:
    """Where a write was cut: before its store, in its layout, in its blocks, in its
    finalization, or after it."""
    if not store.exists() or not any(store.iterdir()):
        return "before the layout"
    try:
        group = zarr.open_group(store, mode="r")
    except Exception:
        return "in the layout"
    if "xfskde_blocks" not in group:
        return "in the layout"
    status = store_status(store)
    if status["complete"]:
        return "after the status"
    if status["blocks_done"] < status["blocks_total"]:
        return "in the blocks"
    return "in the finalization"


def _kill_and_resume(reference, forks, folder: Path, rng: np.random.Generator, count: int) -> dict:
    """SIGKILL ``count`` slowed writers at random moments, resume each, compare with the clean
    store; returns how many were cut in each phase, and how many survived."""
    tiff, clean, duration = reference
    expected = _files(clean)
    plans = []
    for i in range(count):
        part = rng.random()
        # a quarter in the layout (once the group is there), a quarter in the finalization
        # (once every record is there), half at any moment
        if part < 0.25:
            trigger, delay = "layout", rng.uniform(0.0, 0.25)
        elif part < 0.5:
            trigger, delay = "finalization", rng.uniform(0.0, 0.08)
        else:
            trigger, delay = "start", rng.uniform(0.0, duration)
        mode = "api" if i % 3 == 2 else "cli"
        scheduler = "threads" if i % 2 else "synchronous"
        plans.append((folder / f"killed-{i}.zarr", trigger, delay, mode, scheduler))

    def reached(store: Path, trigger: str) -> bool:
        if trigger == "layout":
            return (store / "zarr.json").exists()
        if trigger == "finalization":
            return len(list((store / "xfskde_blocks").glob("c/*/*"))) == 64
        return True

    def kill(plan):
        store, trigger, delay, mode, scheduler = plan
        pid = forks.start(_argv(tiff, store, mode, scheduler))
        while not reached(store, trigger) and _alive(pid):
            time.sleep(0.002)
        time.sleep(delay)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had finished
        _wait_gone(pid)

    with ThreadPoolExecutor(12) as pool:  # writers mostly wait: a dozen at a time
        list(pool.map(kill, plans))
    phases: dict[str, int] = {}
    survived = partial = 0
    resumed: list[float] = []
    for store, _, delay, mode, scheduler in plans:
        phase = _phase(store)
        phases[phase] = phases.get(phase, 0) + 1
        partial += sum(1 for _ in store.rglob("*.partial")) if store.exists() else 0
        if phase not in ("before the layout", "in the layout"):
            if store_status(store)["complete"]:  # only after its last block and consolidation
                assert _files(store) == expected, (delay, mode, scheduler)
            else:
                with pytest.raises(StoreIncompleteError):
                    xfskde.open_coefficients(store)
                assert main(["info", str(store)]) == 1
        argv = ["coefficients", str(tiff), str(store), *ARGS, "--resume"]
        start = time.monotonic()
        assert main(argv) == 0, (phase, delay, mode, scheduler)
        resumed.append(time.monotonic() - start)
        assert _files(store) == expected, (phase, delay, mode, scheduler)
        assert verify_store(store).whole
        survived += 1
    return {"phases": phases, "survived": survived, "partial files": partial,
            "resume seconds": round(sum(resumed), 1)}  # fmt: skip


def test_sigkill_at_random_points_resumes_to_the_clean_store(reference, forks, tmp_path, capsys):
    """A bounded number of kill points for CI (more under the slow mark, below)."""
    rng = np.random.default_rng(20261123)
    result = _kill_and_resume(reference, forks, tmp_path, rng, 12)
    assert result["survived"] == 12
    with capsys.disabled():
        print(f"\nSIGKILL: 12 kill points, {result}")


@pytest.mark.slow
def test_sigkill_at_many_random_points(reference, forks, tmp_path, capsys):
    result = _kill_and_resume(reference, forks, tmp_path, np.random.default_rng(7), 120)
    assert result["survived"] == 120
    with capsys.disabled():
        print(f"\nSIGKILL: 120 kill points, {result}")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_and_terminate_leave_a_store_to_resume(reference, tmp_path, signum, status):
    tiff, clean, _ = reference
    store = tmp_path / "out.zarr"
    proc = _writer(tiff, store, scheduler="threads", pause=0.05)
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while not ((store / "xfskde_blocks").exists() and store_status(store)["blocks_done"] >= 5):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    lines = err.strip().splitlines()
    assert proc.returncode == status and len(lines) == 1, err
    assert "--resume" in lines[0] and str(store) in lines[0]
    state = store_status(store)
    assert not state["complete"] and 5 <= state["blocks_done"] < 64
    assert f"keeps {state['blocks_done']} of 64 blocks" in lines[0]  # nothing ran after it
    assert main(["coefficients", str(tiff), str(store), *ARGS, "--resume"]) == 0
    assert _files(store) == _files(clean)


# ------------------------------------------------------------------------------ full disk


class _FullDisk(zarr.storage.WrapperStore):
    """A store whose disk fills up after ``room`` chunks of the data array."""

    def __init__(self, store, room: int | list[int] = 0) -> None:
        super().__init__(store)
        self.room = room if isinstance(room, list) else [room]  # shared by zarr's copies

    def _with_store(self, store):
        return type(self)(store, self.room)

    async def set(self, key, value) -> None:
        if key.startswith("fskde/c/"):
            if self.room[0] <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), key)
            self.room[0] -= 1
        await self._store.set(key, value)


def _field(shape=(256, 256)):
    image = xr.DataArray(CAMERA[: shape[0], : shape[1]], dims=("y", "x"), name="in").chunk(32)
    return xfskde.local_fskde(image, order=4, window="box", size=5)


def test_a_full_disk_through_the_api_leaves_a_store_to_resume(tmp_path):
    field = _field()
    path = tmp_path / "f.zarr"
    full = _FullDisk(zarr.storage.LocalStore(path), room=10)
    with pytest.raises(OSError) as info:
        xfskde.write_coefficients(field, full, chunks=32, scheduler="synchronous")
    assert info.value.errno == errno.ENOSPC
    status = store_status(path)
    assert not status["complete"] and status["blocks_done"] == 10
    assert xfskde.write_coefficients(field, path, resume=True) == 54
    np.testing.assert_array_equal(xfskde.open_coefficients(path).values, field.values)
    assert verify_store(path).whole


def test_a_full_disk_through_the_cli_is_one_line(reference, tmp_path, monkeypatch, capsys):
    tiff, clean, _ = reference
    store = tmp_path / "out.zarr"
    real_set = zarr.storage.LocalStore.set
    room = [20]

    async def full_set(self, key, value):
        if key.startswith("fskde/c/"):
            if room[0] <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), key)
            room[0] -= 1
        await real_set(self, key, value)

    monkeypatch.setattr(zarr.storage.LocalStore, "set", full_set)
    argv = ["coefficients", str(tiff), str(store), *ARGS, "--scheduler", "synchronous"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "No space left on device" in err and "keeps 20 of 64 blocks" in err and "--resume" in err
    monkeypatch.undo()  # space freed
    assert main([*argv, "--resume"]) == 0
    assert _files(store) == _files(clean)


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    try:
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                capture_output=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def test_a_really_full_filesystem(reference, tmp_path, capsys):
    """On a 256 KiB tmpfs, where the system lets us mount one (root on Linux); then the same
    filesystem made larger and the write resumed."""
    tiff, clean, _ = reference
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "256k"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        store = disk / "out.zarr"
        argv = ["coefficients", str(tiff), str(store), *ARGS]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "No space left on device" in err, err
        assert not store_status(store)["complete"]
        remount = ["mount", "-o", "remount,size=64m", str(disk)]
        subprocess.run(remount, check=True, capture_output=True, timeout=10)
        if store_status(store)["blocks_done"]:
            argv.append("--resume")
        assert main(argv) == 0
        assert _files(store) == _files(clean)
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True, timeout=10)


# --------------------------------------------------------------------------- damaged TIFFs


def _damaged_tiff(path: Path, compression: str | None, damage: str) -> Path:
    """A tiled TIFF of the camera, then truncated, or with the bytes of one tile overwritten."""
    options = {"tile": (32, 32), "compression": compression}
    tifffile.imwrite(path, CAMERA[:256, :256], **options)
    raw = bytearray(path.read_bytes())
    if damage == "truncated":
        del raw[len(raw) * 2 // 3 :]
    else:
        with tifffile.TiffFile(path) as tif:
            page = tif.pages[0]
            offset, count = page.dataoffsets[20], page.databytecounts[20]
        raw[offset : offset + count] = np.random.default_rng(0).bytes(count)
    path.write_bytes(bytes(raw))
    return path


def test_a_stack_cut_short_is_refused_not_read_as_its_first_page(tmp_path, capsys):
    """A z-stack OME-TIFF cut short loses its OME-XML and its page chain: tifffile only logs
    that and reads on with the pages it found, so it opened as one (256, 256) grey page — the
    first channel of the first plane, pixel size gone — and computed without a word."""
    stack = np.stack([np.roll(CAMERA[:128, :128], 9 * i, axis=1) for i in range(6)])
    path = tmp_path / "stack.ome.tif"
    sizes = {"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    tifffile.imwrite(path, stack.reshape(3, 2, 128, 128), ome=True,
                     metadata={"axes": "ZCYX", **sizes})  # fmt: skip
    assert xfskde.open_image(path, plane={"z": 2}).shape == (2, 128, 128)  # whole, it reads
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) * 2 // 3])
    for plane in (None, {"z": 0}):
        with pytest.raises(xfskde.exceptions.ImageReadError, match="damaged or truncated"):
            xfskde.open_image(path, plane=plane)
    assert main(["info", str(path)]) == 2
    assert main(["segment", str(path), str(tmp_path / "l.zarr"), "--textures", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("is damaged or truncated (tifffile: ") == 2, err
    assert not (tmp_path / "l.zarr").exists()


def test_a_stack_cut_short_in_a_page_says_from_which_page_on(tmp_path):
    """A TZCYX OME-TIFF cut in its third page's data: the refusal counted the strips of the
    last page tifffile could read ("1 of the 1 strips of level 0"), though every plane from
    the third on was gone; it now says from which page on."""
    rng = np.random.default_rng(0)
    stack = (rng.random((2, 2, 3, 96, 128)) * 1000).astype(np.uint16)
    path = tmp_path / "tzcyx.ome.tif"
    tifffile.imwrite(path, stack, ome=True, compression="zlib", metadata={"axes": "TZCYX"})
    with tifffile.TiffFile(path) as tif:
        cut = tif.pages[2].dataoffsets[0] - 5  # its IFD whole, its data not
    path.write_bytes(path.read_bytes()[:cut])
    with pytest.raises(xfskde.exceptions.ImageReadError) as refused:
        xfskde.open_image(path, plane={"t": 0, "z": 0})
    assert (
        f"(truncated: the pages of level 0 after the first 2 lie past its end, at byte "
        f"{cut:,})" in str(refused.value)
    )


def test_damaged_tiffs_raise_image_read_errors_through_the_api(tmp_path):
    """The reading task itself says which file failed (not only the CLI): ImageReadError, with
    the reader's own error as its cause."""
    tiff = _damaged_tiff(tmp_path / "in.tif", "zlib", "overwritten")
    image = xfskde.open_image(tiff, chunks=64)
    with pytest.raises(xfskde.exceptions.ImageReadError, match=f"cannot read {tiff}") as info:
        image.data.compute(scheduler="synchronous")
    assert info.value.__cause__ is not None


def test_a_tiff_cut_before_its_first_page_is_damaged_not_a_missing_series(tmp_path, capsys):
    """GDAL writes a GeoTIFF's page description last: a copy cut short loses it, and the
    refusal read "has no series 0; its series are" with nothing after it."""
    import struct

    path = tmp_path / "cut.tif"
    tifffile.imwrite(path, CAMERA)
    data = bytearray(path.read_bytes())
    data[4:8] = struct.pack("<I", len(data) + 1000)  # the first page: past the end
    path.write_bytes(bytes(data))
    with pytest.raises(ImageReadError, match="holds no image: it is damaged or truncated"):
        xfskde.open_image(path)
    assert main(["info", str(path)]) == 2
    assert "holds no image: it is damaged or truncated" in capsys.readouterr().err


@pytest.mark.parametrize("compression", [None, "zlib", "jpeg"])
def test_a_tiff_cut_short_is_refused_when_opened(tmp_path, capsys, compression):
    """A copy or download cut short keeps its header: it opened, its first blocks computed,
    and a whole slide failed only at the block that reached the cut. Refused when it is
    opened now — by ``open_image``, ``xfskde info`` and every command — saying how much of
    which level is gone; the same file whole opens, and so does one whose last compressed
    tile runs a few bytes past the end (left to its decoder, as libtiff leaves it)."""
    path = tmp_path / "slide.tif"
    image = np.repeat(CAMERA[:, :, None], 3, axis=2)
    options = {"tile": (64, 64), "compression": compression, "photometric": "rgb"}
    with tifffile.TiffWriter(path) as tif:
        tif.write(image, subifds=1, **options)
        tif.write(image[::2, ::2], subfiletype=1, **options)
    whole = path.read_bytes()
    with tifffile.TiffFile(path) as tif:
        page = tif.pages[0]
        cut = page.dataoffsets[40] + 1  # 41 of 64 tiles left, the 41st cut in its second byte
    path.write_bytes(whole[:cut])
    gone = 23 if compression else 24  # the 41st tile is gone too where it is needed whole
    with pytest.raises(ImageReadError, match=f"truncated: {gone} of the 64 tiles of level 0"):
        xfskde.open_image(path)
    assert main(["info", str(path)]) == 2
    assert main(["segment", str(path), str(tmp_path / "l.zarr"), "--textures", "2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    for line in err:
        assert line.endswith(
            f"cannot read {path} (truncated: {gone} of the 64 tiles of "
            f"level 0 lie past its end, at byte {cut:,}): the file was cut short; copy or "
            "download it again"
        ), line
    assert not (tmp_path / "l.zarr").exists()
    path.write_bytes(whole)
    expected = xfskde.open_image(path).values
    if compression != "jpeg":
        np.testing.assert_array_equal(expected, image)
    if compression:  # a tile counted 3 bytes past the end: read as libtiff reads it
        raw = bytearray(whole)
        with tifffile.TiffFile(path) as tif:
            tag = tif.pages[0].tags["TileByteCounts"]
            offset, at = tif.pages[0].dataoffsets[63], tag.valueoffset + 63 * 4
        assert tag.dtype == 4  # LONG
        raw[at : at + 4] = (len(whole) - offset + 3).to_bytes(4, "little")
        path.write_bytes(bytes(raw))
        np.testing.assert_array_equal(xfskde.open_image(path).values, expected)


@pytest.mark.parametrize(
    ("compression", "damage"),
    [
        (None, "truncated"),
        ("zlib", "truncated"),
        ("zlib", "overwritten"),
        ("jpeg", "truncated"),
        ("jpeg", "overwritten"),
    ],
)
def test_damaged_tiffs_are_one_line_naming_the_file(tmp_path, capsys, compression, damage):
    tiff = _damaged_tiff(tmp_path / "in.tif", compression, damage)
    store = tmp_path / "out.zarr"
    argv = ["coefficients", str(tiff), str(store), *ARGS]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"xfskde coefficients: error: cannot read {tiff} (")
    with pytest.raises(Exception) as debug:
        main(["--debug", *argv, "--resume" if store.exists() else "--no-progress"])
    # the reader's own error kept as the cause; a file cut short is told by its size alone
    cut_short = damage == "truncated" and "(truncated: " in str(debug.value)
    assert cut_short or not isinstance(debug.value, xfskde.XfskdeError) or debug.value.__cause__
    # the corrected rerun: the file written again, then --resume if a store was left
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32), compression=compression)
    if store.exists():
        assert not store_status(store)["complete"]
        argv.append("--resume")
    assert main(argv) == 0
    expected = xfskde.local_fskde(xfskde.open_image(tiff), order=4, window="box", size=5)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected.values)


def test_an_unknown_tiff_codec_is_one_line(tmp_path, capsys):
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:128, :128], tile=(64, 64), compression="zlib")
    with tifffile.TiffFile(tiff) as tif:
        offset = tif.pages[0].tags["Compression"].valueoffset
    raw = bytearray(tiff.read_bytes())
    raw[offset : offset + 2] = (61111).to_bytes(2, "little")  # no such compression
    tiff.write_bytes(bytes(raw))
    assert main(["coefficients", str(tiff), str(tmp_path / "o.zarr"), *ARGS]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"cannot read {tiff}" in err and "61111" in err
    assert not (tmp_path / "o.zarr").exists()


def test_a_damaged_zarr_input_is_one_line(tmp_path, capsys):
    source = zarr.create_array(tmp_path / "in.zarr", shape=(64, 64), chunks=(32, 32),
                               dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:64, :64]
    (tmp_path / "in.zarr" / "c" / "1" / "0").write_bytes(b"not zstd")
    argv = ["coefficients", str(tmp_path / "in.zarr"), str(tmp_path / "o.zarr"), *ARGS]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"cannot read {tmp_path / 'in.zarr'}" in err


# -------------------------------------------------------------------------------- schedulers


def test_an_unreachable_scheduler_fails_fast_in_one_line(tmp_path, capsys):
    np.save(tmp_path / "in.npy", CAMERA[:64, :64])
    store = tmp_path / "o.zarr"
    argv = ["coefficients", str(tmp_path / "in.npy"), str(store), "--no-progress"]
    start = time.monotonic()
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert time.monotonic() - start < 5
    err = capsys.readouterr().err.strip()
    assert err == (
        "xfskde coefficients: error: cannot reach the Dask scheduler at tcp://127.0.0.1:1: "
        "connection refused"
    )
    assert main([*argv, "--scheduler", "thread"]) == 2  # a misspelt local scheduler
    assert "got 'thread'" in capsys.readouterr().err
    assert not store.exists()
    assert main(argv) == 0  # the corrected rerun


def test_an_address_that_is_no_scheduler_times_out(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(xfskde._scheduling, "CONNECT_TIMEOUT", 1.0)
    np.save(tmp_path / "in.npy", CAMERA[:64, :64])
    with socket.socket() as server:  # accepts connections, never speaks Dask's protocol
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        start = time.monotonic()
        argv = ["coefficients", str(tmp_path / "in.npy"), str(tmp_path / "o.zarr")]
        assert main([*argv, "--scheduler", address]) == 2
        assert time.monotonic() - start < 15
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and address in err
    assert not (tmp_path / "o.zarr").exists()


def test_the_api_refuses_an_unreachable_scheduler_before_laying_out(tmp_path):
    with pytest.raises(ConnectionError, match="connection refused"):
        xfskde.write_coefficients(_field((64, 64)), tmp_path / "f.zarr",
                                  scheduler="tcp://127.0.0.1:1")  # fmt: skip
    assert not (tmp_path / "f.zarr").exists()


# ------------------------------------------------------------------------ images without data


@pytest.mark.parametrize(
    ("pixels", "options", "message"),
    [
        (np.ones((1, 1), np.float32), [], "has no gradient anywhere (its 1 x 1 pixels"),
        (np.full((40, 30), 7, np.uint8), [], "has no gradient anywhere (its 40 x 30 pixels"),
        (np.full((40, 30), np.nan, np.float32), [], "NaN"),
        (np.full((40, 30), np.nan, np.float32), ["--nan-policy", "omit"], "all NaN"),
    ],
    ids=["one pixel", "constant", "all NaN", "all NaN, omitted"],
)
def test_images_without_data_are_one_line(tmp_path, capsys, pixels, options, message):
    np.save(tmp_path / "in.npy", pixels)
    store = tmp_path / "o.zarr"
    argv = ["coefficients", str(tmp_path / "in.npy"), str(store), "--no-progress", *options]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err, err
    assert not store.exists()  # nothing in the way of the corrected rerun
    np.save(tmp_path / "in.npy", CAMERA[:40, :30])
    assert main(argv) == 0


def test_tiny_images_that_have_gradients_are_computed(tmp_path):
    for shape in [(1, 7), (3, 3), (2, 50)]:
        pixels = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) ** 1.5
        np.save(tmp_path / "in.npy", pixels)
        store = tmp_path / f"{shape}.zarr"
        assert main(["coefficients", str(tmp_path / "in.npy"), str(store), "--no-progress"]) == 0
        expected = xfskde.local_fskde(pixels, order=8, window="gaussian", size=4)
        np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)


# ---------------------------------------------------------------------- damaged and lost chunks


def _written(tmp_path) -> tuple[Path, xr.DataArray]:
    field = _field((128, 96))
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(field, store, chunks=32)
    return store, field


def test_a_flipped_byte_and_a_lost_chunk_are_named(tmp_path, capsys):
    store, field = _written(tmp_path)
    chunk = store / "fskde" / "c" / "1" / "2" / "0"
    raw = bytearray(chunk.read_bytes())
    raw[len(raw) // 2] ^= 0x01  # one bit
    chunk.write_bytes(bytes(raw))
    (store / "fskde" / "c" / "3" / "0" / "0").unlink()
    F = xfskde.open_coefficients(store)
    with pytest.raises(StoreCorruptError, match=r"'fskde/c/1/2/0' is damaged \(checksum mismatch"):
        F[32:64, 64:96].compute()
    with pytest.raises(StoreCorruptError, match=r"'fskde/c/3/0/0' is missing"):
        F[96:, :32].compute()
    np.testing.assert_array_equal(F[:32].values, field[:32].values)  # the rest reads
    with pytest.raises(StoreCorruptError):
        F.compute()
    assert issubclass(StoreCorruptError, ValueError)

    report = verify_store(store)
    assert not report.whole and report.blocks_read == report.blocks_total == 12
    assert [(p.key, p.kind) for p in report.problems] == [
        ("fskde/c/1/2/0", "damaged"),
        ("fskde/c/3/0/0", "missing"),
    ]
    assert main(["info", "--verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "12 of 12 blocks read: 2 damaged or missing" in out
    assert "damaged   fskde/c/1/2/0: checksum mismatch" in out
    assert "missing   fskde/c/3/0/0: the store says it was written" in out
    assert main(["info", str(store)]) == 0  # without --verify: the metadata only

    xfskde.write_coefficients(field, store, chunks=32, overwrite=True)
    assert main(["info", "--verify", str(store)]) == 0
    assert "12 of 12 blocks read: every checksum matches" in capsys.readouterr().out


def _written_store(folder: Path) -> tuple[list[str], Path]:
    """``xfskde coefficients`` of a 128² tiled TIFF to ``folder/out.zarr``, run through: the
    command's arguments and the store."""
    tiff, store = folder / "in.tif", folder / "out.zarr"
    tifffile.imwrite(tiff, CAMERA[:128, :128], tile=(32, 32))
    argv = ["coefficients", str(tiff), str(store), *ARGS, "--scheduler", "synchronous"]
    assert main(argv) == 0
    return argv, store


def test_a_resume_of_a_complete_store_says_so_and_finds_a_lost_chunk(tmp_path, capsys):
    """A complete store with a damaged and a lost chunk was "resumed" with "0 of 64 blocks
    computed", status 0, while info --verify listed both. A resume of a complete store says
    it is complete already and points at --verify (a changed byte is seen only by reading
    every chunk back); a chunk file gone, which one listing of the store shows, is computed
    again (the status "incomplete" first, so a resume cut short says so)."""
    argv, store = _written_store(tmp_path)
    expected = xfskde.open_coefficients(store).values
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    unread = (
        "none was read back: --resume --verify reads each against its checksum and computes the "
        "damaged again"
    )
    assert capsys.readouterr().out == (
        f"{store} is complete already: nothing computed ((128, 128, 5) complex64, chunks (32, 32), "
        f"16 blocks; {unread})\n"
    )
    (store / "fskde" / "c" / "3" / "0" / "0").unlink()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert " 1 of 16 blocks computed " in said.out, said
    # the other 15 were read back, since a chunk gone says the store was damaged
    assert said.err == (
        f"xfskde coefficients: warning: {store} was damaged after its blocks were written: 1 "
        "block had lost its chunk, the other 15 read back whole against their checksums; 1 "
        "block is computed again\n"
    )
    assert store_status(store)["complete"] and verify_store(store).whole
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    # through the API: the status says incomplete from the moment the loss is seen
    (store / "fskde" / "c" / "0" / "1" / "0").unlink()
    field = xfskde.open_image(tmp_path / "in.tif")
    field = xfskde.local_fskde(field, order=4, window="box", size=5)
    with pytest.warns(StoreDamagedWarning, match="1 block had lost its chunk, the other 15 "):
        pending = xfskde.io.write_coefficients(field, store, resume=True, compute=False)
    assert not store_status(store)["complete"] and store_status(store)["blocks_done"] == 15
    assert int(pending.sum().compute()) == 1


def test_undecodable_chunks_record_entries_and_coordinates(tmp_path, capsys):
    store, _ = _written(tmp_path)
    # a chunk whose checksum is right but whose bytes are no Blosc frame: zarr itself appends
    # the checksum to 24 plain bytes
    junk = zarr.create_array(tmp_path / "junk.zarr", shape=(24,), dtype="uint8",
                             compressors=(zarr.codecs.Crc32cCodec(),))  # fmt: skip
    junk[...] = np.frombuffer(b"not a blosc frame at all", np.uint8)
    forged = (tmp_path / "junk.zarr" / "c" / "0").read_bytes()
    (store / "fskde" / "c" / "0" / "0" / "0").write_bytes(forged)
    record = store / "xfskde_blocks" / "c" / "2" / "1"
    record.write_bytes(b"\x01\x00\x00\x00\x00")  # a record entry with a wrong checksum
    with pytest.raises(StoreCorruptError, match=r"'fskde/c/0/0/0' is damaged \(undecodable"):
        xfskde.open_coefficients(store)[:32, :32].compute()
    report = verify_store(store)
    assert {(p.key, p.kind) for p in report.problems} == {
        ("fskde/c/0/0/0", "damaged"),
        ("xfskde_blocks/c/2/1", "damaged"),
    }
    # the damaged entry counts as not written: the status says 11 of 12, a resume rewrites it
    assert store_status(store)["blocks_done"] == 11 and block_record(store)[2, 1] == 0

    y = store / "y" / "c" / "0"
    raw = bytearray(y.read_bytes())
    raw[0] ^= 0x10
    y.write_bytes(bytes(raw))
    with pytest.raises(StoreCorruptError, match=r"'y/c/0' is damaged \(checksum mismatch"):
        xfskde.open_coefficients(store)
    assert main(["info", str(store)]) == 2
    assert "'y/c/0' is damaged" in capsys.readouterr().err
    assert main(["info", "--verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "damaged   y/c/0: checksum mismatch" in out
    y.unlink()
    with pytest.raises(StoreCorruptError, match=r"'y/c/0' is missing"):
        xfskde.open_coefficients(store)


def test_verify_an_incomplete_store(tmp_path, capsys):
    field = _field((96, 96))
    store = tmp_path / "f.zarr"
    pending = xfskde.write_coefficients(field, store, chunks=32, compute=False)
    pending[:4].compute(scheduler="synchronous")
    report = verify_store(store)
    assert report.blocks_read == 4 and report.blocks_total == 9 and not report.whole
    assert {p.kind for p in report.problems} == {"unwritten"}
    assert main(["info", "--verify", str(store)]) == 1
    assert "unwritten 5 blocks not written yet" in capsys.readouterr().out


# ---------------------------------------------------------------------- the completion protocol


def test_a_write_cut_between_consolidation_and_status_is_incomplete(tmp_path, monkeypatch):
    """The status is the last thing written: a finalization cut short leaves the store
    incomplete (never complete without its consolidated metadata), and a resume finishes it."""
    field = _field((64, 64))
    store = tmp_path / "f.zarr"

    class Cut(Exception):
        pass

    real = zarr.consolidate_metadata

    def consolidate_then_die(*args, **kwargs):
        real(*args, **kwargs)
        raise Cut

    monkeypatch.setattr(zarr, "consolidate_metadata", consolidate_then_die)
    with pytest.raises(Cut):
        xfskde.write_coefficients(field, store, chunks=32)
    monkeypatch.undo()
    assert store_status(store) == {
        "complete": False,
        "blocks_done": 4,
        "blocks_total": 4,
        "blocks_skipped": 0,
    }
    with pytest.raises(StoreIncompleteError):
        xfskde.open_coefficients(store)
    assert xfskde.write_coefficients(field, store, resume=True) == 0
    assert store_status(store)["complete"]
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, field.values)


def test_a_layout_cut_short_is_laid_out_again(tmp_path, monkeypatch, capsys):
    field = _field((64, 64))
    store = tmp_path / "f.zarr"
    real = zarr.Group.create_array
    made = []

    def die_on_the_third(self, *args, **kwargs):
        if len(made) == 2:
            raise KeyboardInterrupt
        made.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(zarr.Group, "create_array", die_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        xfskde.write_coefficients(field, store, chunks=32)
    monkeypatch.undo()
    assert zarr.open_group(store).attrs["xfskde_status"] == "incomplete"  # the group is first
    with pytest.raises(StoreIncompleteError, match="laid out"):
        xfskde.open_coefficients(store, allow_incomplete=True)
    with pytest.raises(StoreIncompleteError, match="laid out"):
        verify_store(store)
    assert main(["info", "--verify", str(store)]) == 1
    assert "layout    " in capsys.readouterr().out
    # what the command line says such a store keeps (it said "keeps 0 of 0 blocks")
    from xfskde.commands._options import _left

    assert _left(str(store), interrupted=True) == (
        f"{store} was cut short while it was laid out, before any block: run the same command "
        "with --resume to finish it"
    )
    with pytest.raises(StoreExistsError):
        xfskde.write_coefficients(field, store)
    assert xfskde.write_coefficients(field, store, resume=True) == 4
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, field.values)
    (tmp_path / "empty.zarr").mkdir()  # an empty directory is nothing in the way
    assert xfskde.write_coefficients(field, tmp_path / "empty.zarr") == 4
    zarr.open_group(tmp_path / "foreign.zarr", mode="w")
    with pytest.raises(StoreFormatError):  # a foreign group is not taken for a layout
        xfskde.write_coefficients(field, tmp_path / "foreign.zarr", resume=True)


def test_nothing_is_written_after_an_interrupt_returns(tmp_path, monkeypatch):
    """Ctrl-C while the thread pool computes: no new block starts, and the call returns only
    once the blocks already running have ended, so the count it reports is final."""
    field = _field((128, 128))
    store = tmp_path / "f.zarr"
    import xfskde.io.stores as stores

    real = stores._write_block
    started = threading.Event()

    def slow(*args, **kwargs):
        started.set()
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", slow)

    def interrupt():
        started.wait(10)
        time.sleep(0.3)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            xfskde.write_coefficients(field, store, chunks=32, scheduler="threads")
    finally:
        signal.signal(signal.SIGINT, previous)
    done = store_status(store)["blocks_done"]
    time.sleep(0.6)  # longer than any block that could still be running
    assert 0 < store_status(store)["blocks_done"] == done < 16
    monkeypatch.undo()
    assert xfskde.write_coefficients(field, store, resume=True) == 16 - done
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, field.values)


def test_segment_names_a_damaged_input_too(tmp_path, capsys):
    tiff = _damaged_tiff(tmp_path / "in.tif", "zlib", "truncated")
    argv = ["segment", str(tiff), str(tmp_path / "o.zarr"), "--textures", "2", "--sample", "500",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(
        f"xfskde segment: error: cannot read {tiff}"
    )
    assert main([*argv[:-1], "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


#: A ``segment`` to an OME-Zarr image that SIGKILLs itself at one step after its abundances'
#: blocks: the abundances' pyramid, the labels' pyramid, the labels listed, the finalization.
KILLED_SEGMENT = """
import os, signal, sys
import xfskde.commands.segment as command
import xfskde.io.omezarr as omezarr
from xfskde.cli import main

step, argv = sys.argv[1], sys.argv[2:]
calls = {"pyramid": 0}

def die():
    os.kill(os.getpid(), signal.SIGKILL)

pyramid, register = omezarr._write_pyramid, omezarr._register_labels
finalize = getattr(command, "finalize_store", None)

def pyramid_then(*args, **kwargs):
    calls["pyramid"] += 1
    if step == f"pyramid {calls['pyramid']}":
        die()
    return pyramid(*args, **kwargs)

def register_then(*args, **kwargs):
    register(*args, **kwargs)
    if step == "listed":
        die()

def finalize_then(*args, **kwargs):
    if step == "finalization":
        die()
    return finalize(*args, **kwargs)

omezarr._write_pyramid, omezarr._register_labels = pyramid_then, register_then
command.finalize_store = finalize_then
sys.exit(main(argv))
"""


def test_a_segmentation_image_cut_short_after_its_blocks_never_says_it_is_complete(
    tmp_path, capsys
):
    """`xfskde segment IN OUT.ome.zarr` writes the abundances' blocks, their pyramid, then the
    labels computed from them: the image was marked complete before its labels, so a write
    killed while they were written said "complete" with no label image (or half of one), and
    killed in the pyramid, `xfskde info` refused it as "not a store written by xfskde". Killed
    at each step after the blocks, the image now says it is incomplete (info: exit status 1,
    naming what is unfinished), and a resume makes it the clean run's, file for file."""
    image, _ = random_textures((192, 192), seed=3)
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, (image * 255).astype(np.uint8), tile=(64, 64))
    argv = ["segment", str(tiff), "OUT", "--textures", "3", "--size", "6", "--method", "kmeans",
            "--sample", "2000", "--chunks", "64", "--no-progress"]  # fmt: skip
    clean = tmp_path / "clean.ome.zarr"
    assert main([a if a != "OUT" else str(clean) for a in argv]) == 0
    expected = _files(clean)
    assert any(name.startswith("labels/textures/") for name in expected)
    # pyramid 1: the abundances' coarser levels; pyramid 2: the labels' levels
    for step in ("pyramid 1", "pyramid 2", "listed", "finalization"):
        store = tmp_path / f"{step.replace(' ', '-')}.ome.zarr"
        child = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(KILLED_SEGMENT), step,
             *[a if a != "OUT" else str(store) for a in argv]],
            capture_output=True, text=True,
        )  # fmt: skip
        assert child.returncode == -signal.SIGKILL, (step, child.stderr[-500:])
        status = store_status(store)
        assert not status["complete"] and status["blocks_done"] == status["blocks_total"], step
        capsys.readouterr()
        assert main(["info", str(store)]) == 1, step
        said = capsys.readouterr().out
        assert "INCOMPLETE (9/9 blocks)" in said and "resume the write to finish it" in said, step
        assert main([a if a != "OUT" else str(store) for a in argv] + ["--resume"]) == 0
        assert _files(store) == expected, step
    # a resume of a complete image changes nothing; with other parameters it is refused (it
    # said "wrote ... 4 textures" of an image of 3)
    assert main([a if a != "OUT" else str(clean) for a in argv] + ["--resume"]) == 0
    other = [a if a != "3" else "4" for a in argv]
    assert main([a if a != "OUT" else str(clean) for a in other] + ["--resume"]) == 2
    assert _files(clean) == expected


def test_a_store_with_unwritten_blocks_is_not_read_as_an_image(tmp_path, monkeypatch):
    """open_image read an unfinished labels store, its unwritten blocks as 0 (background): as
    `--mask` it silently dropped their tissue. Now it is refused, naming the blocks written;
    once every block is written (an OME-Zarr image before its labels) it reads whole."""
    import xfskde.io.stores as stores

    labels = xr.DataArray(np.ones((64, 64), np.uint8), dims=("y", "x"), name="labels")
    store = tmp_path / "labels.zarr"
    real, written = stores._write_block, []

    def dies_after_two(*args, **kwargs):
        if len(written) == 2:
            raise RuntimeError("killed")
        written.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", dies_after_two)
    with pytest.raises(RuntimeError, match="killed"):
        xfskde.io.write_blocks(labels, store, name="labels", chunks=32, scheduler="synchronous")
    monkeypatch.undo()
    for source in (store, f"{store}/labels"):
        with pytest.raises(StoreIncompleteError, match="2 of 4 blocks written"):
            xfskde.open_image(source)
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:64, :64])
    argv = ["coefficients", str(tiff), str(tmp_path / "f.zarr"), "--mask", str(store)]
    assert main([*argv, "--no-progress"]) == 2
    xfskde.io.write_blocks(labels, store, name="labels", resume=True)
    assert (xfskde.open_image(store).values == 1).all()
    assert main([*argv, "--no-progress"]) == 0


# ----------------------------------------------------------- an input replaced between runs


def _dies_after(monkeypatch, blocks: int) -> None:
    """Make the block writer fail (a full disk) once ``blocks`` blocks are written."""
    import xfskde.io.stores as stores

    real, calls = stores._write_block, []

    def dies(*args, **kwargs):
        if len(calls) == blocks:
            raise OSError(errno.ENOSPC, "No space left on device")
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", dies)


def _rewritten(path: Path, pixels: np.ndarray, **options) -> None:
    """Write ``path`` again with other pixels of the same shape, its time visibly later."""
    before = path.stat().st_mtime_ns
    tifffile.imwrite(path, pixels, **options)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_resume_after_the_input_was_replaced_computes_every_block_again(
    tmp_path, capsys, monkeypatch
):
    """The input file rewritten between the failed run and its resume — a new export under
    the same name, the same shape — was mixed in: the blocks written before held the old
    pixels, the rest the new ones, and the store said it was complete. The store now records
    the input's version (size and modification time) and a resume from another one warns and
    writes every block again; the same file resumes only its missing blocks."""
    tiff, store = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32))
    argv = ["coefficients", str(tiff), str(store), *ARGS, "--scheduler", "synchronous"]
    _dies_after(monkeypatch, 5)
    assert main(argv) == 2
    monkeypatch.undo()
    assert store_status(store)["blocks_done"] == 5
    capsys.readouterr()
    new = np.ascontiguousarray(CAMERA[256:, 256:])
    _rewritten(tiff, new, tile=(32, 32))
    assert main([*argv, "--resume"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("xfskde coefficients: warning: ")
    assert "was begun from another version of its image (" in err[0], err
    assert "its 5 written blocks are computed again" in err[0], err
    expected = xfskde.local_fskde(new, order=4, window="box", size=5)
    stored = xfskde.open_coefficients(store)
    np.testing.assert_array_equal(stored.values, expected)
    assert stored.attrs["source_version"] == xfskde.open_image(tiff).attrs["source_version"]
    # complete, and the file replaced again: a resume writes it again too, not "nothing to do"
    _rewritten(tiff, CAMERA[:256, :256], tile=(32, 32))
    assert main([*argv, "--resume"]) == 0
    assert "its 64 written blocks are computed again" in capsys.readouterr().err
    expected = xfskde.local_fskde(CAMERA[:256, :256], order=4, window="box", size=5)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    # the same file: nothing to say, nothing computed
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().err == ""


def test_a_file_replaced_by_one_of_the_same_size_and_time_is_another_version(tmp_path, capsys):
    """An uncompressed TIFF copied over the input with its time kept (``cp -p``, ``rsync -t``,
    a backup restored, a script staging tiles within one second) has the same size and
    modification time: a complete store of the first image resumed from it said "nothing to
    do", and an interrupted one kept the first image's blocks beside the second's, both
    passing ``--verify``. A local file's version holds a digest of pieces of its content."""
    tiff, store = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32))
    argv = ["coefficients", str(tiff), str(store), *ARGS, "--scheduler", "synchronous"]
    assert main(argv) == 0
    before, stat = xfskde.open_image(tiff).attrs["source_version"], tiff.stat()
    other = np.ascontiguousarray(CAMERA[256:, 256:])
    tifffile.imwrite(tiff, other, tile=(32, 32))
    os.utime(tiff, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert tiff.stat().st_size == stat.st_size and tiff.stat().st_mtime_ns == stat.st_mtime_ns
    now = xfskde.open_image(tiff).attrs["source_version"]
    assert now != before and now.split(", content ")[0] == before.split(", content ")[0]
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    assert "its 64 written blocks are computed again" in capsys.readouterr().err
    expected = xfskde.local_fskde(other, order=4, window="box", size=5)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    # the same file, its time set again to the second: the same version (nothing computed)
    os.utime(tiff, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    os.utime(tiff, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert xfskde.open_image(tiff).attrs["source_version"] == now
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().err == ""
    # a store recorded before versions held a digest: the same file is the same version,
    # not a stale store written again; another time is still another version
    from xfskde.io._location import same_version
    from xfskde.io.stores import source_changed

    older = now.split(", content ")[0]
    assert same_version(older, now) and not same_version(now, older)
    assert source_changed({"source": str(tiff), "source_version": older}) is None
    assert not same_version(older.replace("Z", "1Z"), now)
    later = f"{older}; in.tif.msk: 10 bytes, modified x"  # a composite: each part's digest
    assert same_version(later, f"{now}; in.tif.msk: 10 bytes, modified x, content 0123456789abcdef")


@pytest.mark.parametrize("other", ["grey", "rgb"])
def test_a_resume_from_another_file_is_refused_not_written_over(tmp_path, capsys, monkeypatch,
                                                                 other):  # fmt: skip
    """Another slide of the same shape (or an RGB file for a grey one) given to --resume was
    taken for another version of the store's image: the complete store was computed again
    from it, with a warning and status 0, and then named the other file as its source. A
    resume from another file is refused, naming both; the same file named by a relative path
    from another folder is the same input, and resumes."""
    first, second, store = tmp_path / "a.tif", tmp_path / "b.tif", tmp_path / "out.zarr"
    tifffile.imwrite(first, CAMERA[:128, :128], tile=(32, 32))
    pixels = CAMERA[128:256, 128:256]
    tifffile.imwrite(second, np.stack([pixels] * 3, -1) if other == "rgb" else pixels,
                     tile=(32, 32))  # fmt: skip
    argv = [str(store), *ARGS, "--scheduler", "synchronous"]
    assert main(["coefficients", str(first), *argv]) == 0
    before = xfskde.open_coefficients(store)
    capsys.readouterr()
    assert main(["coefficients", str(second), *argv, "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"xfskde coefficients: error: cannot resume {store}: it was computed from {first}, not "
        f"{second} (a resume finishes a store from its own input); pass --overwrite to start "
        f"again from {second}, or name another store"
    ]
    after = xfskde.open_coefficients(store)
    assert after.attrs["source"] == str(first)
    np.testing.assert_array_equal(after.values, before.values)
    monkeypatch.chdir(tmp_path)  # the same file, named from its own folder
    assert main(["coefficients", "a.tif", "out.zarr", *ARGS, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "out.zarr is complete already: nothing computed" in said.out


def _png_mask(path: Path, foreground: np.ndarray) -> Path:
    """A mask drawn as an 8-bit PNG (255: foreground), written by PIL."""
    from PIL import Image

    Image.fromarray(np.where(foreground, 255, 0).astype(np.uint8)).save(path)
    return path


def _other_mask_refused(command: str, store, first, second) -> str:
    """The one line a resume of ``store`` with the mask file ``second`` instead of ``first``
    is refused with."""
    return (
        f"xfskde {command}: error: cannot resume {store}: it was computed with the mask "
        f"{first}, not {second} (a resume finishes a store with its own mask); resume with "
        f"--mask {first}, or pass --overwrite to start again with {second}"
    )


@pytest.mark.parametrize("command", ["coefficients", "maps"])
def test_a_resume_with_another_mask_file_is_refused_not_written_over(
    tmp_path, capsys, monkeypatch, command
):
    """A run cut short with ``--mask a.png`` and resumed with ``--mask b.png`` was taken for
    another version of the store's mask: a warning, and every block computed again with the
    other mask. Another mask file is refused like another input file, in one line naming
    both, and the store is left as it is; the same mask named from its own folder resumes
    only the missing blocks, and ``--mask auto`` on both runs resumes too."""
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:256, :256], tile=(32, 32))
    inner = np.zeros((256, 256), bool)
    inner[40:220, 40:220] = True
    first = _png_mask(tmp_path / "a.png", inner)
    second = _png_mask(tmp_path / "b.png", ~inner)
    store = tmp_path / ("out.ome.zarr" if command == "maps" else "out.zarr")
    options = [*ARGS, "--scheduler", "synchronous"]
    if command == "maps":  # an OME-Zarr image's blocks are 64 pixels at the least
        options += ["--chunks", "64"]
    argv = [command, str(tiff), str(store), *options]
    _dies_after(monkeypatch, 5)
    assert main([*argv, "--mask", str(first)]) == 2
    monkeypatch.undo()
    record = block_record(store)
    assert int((record > 0).sum()) == 5
    capsys.readouterr()
    assert main([*argv, "--mask", str(second), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [_other_mask_refused(command, store, first, second)]
    np.testing.assert_array_equal(block_record(store), record)  # nothing written
    monkeypatch.chdir(tmp_path)  # the same mask, named from its own folder
    assert main([*argv, "--mask", "a.png", "--resume"]) == 0
    said = capsys.readouterr()
    assert "warning" not in said.err, said.err
    assert store_status(store)["complete"]
    reference = tmp_path / ("whole.ome.zarr" if command == "maps" else "whole.zarr")
    assert main([command, str(tiff), str(reference), *options, "--mask", str(first)]) == 0
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values,
                                  xfskde.io.open_blocks(reference).values)  # fmt: skip
    # through the API: a field computed with another mask file is refused too
    if command == "coefficients":
        image = xfskde.open_image(tiff, chunks=32)
        field = xfskde.local_fskde(image, order=4, window="box", size=5, mask=str(second))
        with pytest.raises(xfskde.exceptions.StoreParametersError, match="with the mask "):
            xfskde.write_coefficients(field, store, resume=True)
    # --mask auto on both runs: no file, nothing refused; the resume finishes the store
    auto = tmp_path / ("auto.ome.zarr" if command == "maps" else "auto.zarr")
    argv = [command, str(tiff), str(auto), *options, "--mask", "auto"]
    _dies_after(monkeypatch, 5)
    assert main(argv) == 2
    monkeypatch.undo()
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    assert store_status(auto)["complete"]
    assert "computed again" not in capsys.readouterr().err


def test_a_segmentation_resumed_with_another_mask_file_is_refused(tmp_path, capsys, monkeypatch):
    """``xfskde segment --resume`` with another ``--mask`` file than the store's fitted the
    model again on the other mask and wrote every block again, with a warning that took the
    other file for another version of the mask. It is refused in one line naming both masks,
    before the fit (a slide's takes a minute), and the labels are left as they are; so is a
    resume from another image of the same shape."""
    import xfskde.commands.segment as command

    image, _ = random_textures((128, 128), seed=3)
    tiff, store = tmp_path / "in.tif", tmp_path / "labels.zarr"
    tifffile.imwrite(tiff, (image * 255).astype(np.uint8))
    left = np.zeros((128, 128), bool)
    left[:, :80] = True
    first = _png_mask(tmp_path / "a.png", left)
    second = _png_mask(tmp_path / "b.png", ~left)
    argv = ["segment", str(tiff), str(store), "--textures", "2", "--no-progress"]
    assert main([*argv, "--mask", str(first)]) == 0
    labels = xfskde.io.open_blocks(store).values
    assert (labels[:, 80:] == 0).all() and (labels[:, :80] > 0).all()
    capsys.readouterr()
    fit = command.fit_textures

    def not_fitted(*args, **kwargs):
        raise AssertionError("the resume fitted a model before it was refused")

    monkeypatch.setattr(command, "fit_textures", not_fitted)
    assert main([*argv, "--mask", str(second), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [_other_mask_refused("segment", store, first, second)]
    other = tmp_path / "other.tif"
    tifffile.imwrite(other, (image[::-1] * 255).astype(np.uint8))
    other_argv = ["segment", str(other), *argv[2:], "--mask", str(first), "--resume"]
    assert main(other_argv) == 2
    said = capsys.readouterr().err
    assert f"it was computed from {tiff}, not {other}" in said, said
    monkeypatch.setattr(command, "fit_textures", fit)
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values, labels)
    assert main([*argv, "--mask", str(first), "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "is complete already: nothing computed" in said.out, said
    assert " textures, 1 block; none was read back" in said.out, said


def test_overwrite_through_the_api_never_replaces_what_the_data_reads(tmp_path):
    """``overwrite=True`` into the store (or file) the lazy data is read from cleared it
    before a block was read: a field of a Zarr image written over that image, a field of a
    TIFF written over the TIFF, the maps of a stored field written over the field — each
    input was gone, and the write failed reading it (or stopped with a damaged store). The
    store writer, which every writer of the API and the command line goes through, refuses
    it in one line and touches nothing; data already in memory reads nothing, and replaces
    the store it was loaded from."""
    from xfskde.exceptions import ParameterError
    from xfskde.orientation import orientation

    pixels = CAMERA[:128, :128]
    image_store = tmp_path / "image.zarr"
    source = zarr.create_array(image_store, shape=(128, 128), chunks=(64, 64), dtype="uint8",
                               dimension_names=("y", "x"))  # fmt: skip
    source[...] = pixels
    field = xfskde.local_fskde(xfskde.open_image(image_store), order=4)
    refused = f"{image_store} is the image {image_store}: overwrite=True would replace what is "
    with pytest.raises(ParameterError, match=refused):
        xfskde.write_coefficients(field, image_store, overwrite=True)
    with pytest.raises(ParameterError, match=refused):  # the accessor: the same writer
        field.fskde.to_zarr(image_store, overwrite=True)
    np.testing.assert_array_equal(xfskde.open_image(image_store).values, pixels)

    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, pixels, tile=(32, 32))
    field = xfskde.local_fskde(xfskde.open_image(tiff, chunks=64), order=4)
    with pytest.raises(ParameterError, match=f"{tiff} is the image {tiff}: "):
        xfskde.write_coefficients(field, tiff, overwrite=True)
    np.testing.assert_array_equal(tifffile.imread(tiff), pixels)

    store = tmp_path / "field.zarr"
    xfskde.write_coefficients(field, store)
    stored = xfskde.open_coefficients(store)  # its attrs name in.tif: its graph, the store
    expected = stored.values
    with pytest.raises(ParameterError, match=f"{store} is the store {store}: "):
        xfskde.write_ome_zarr({"orientation": orientation(stored)}, store, overwrite=True)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    assert store_status(store)["complete"]
    # loaded into memory first, nothing is read as it is written: replaced as asked
    loaded = stored.load()
    assert xfskde.write_coefficients(loaded, store, overwrite=True, chunks=64) == 4
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)


@pytest.mark.parametrize("output", ["labels.zarr", "labels.ome.zarr"])
def test_a_resumed_segmentation_opens_its_store_once(tmp_path, capsys, monkeypatch, output):
    """A resumed ``xfskde segment`` opened the store it finishes twice before writing: once
    for the blocks it is written in, once more for the model it records (``read_model`` of
    the path: the group, then the blocks again). It is opened once for both, and the resume
    ends with the store an uninterrupted run writes."""
    import xfskde.commands.segment as segment_command
    import xfskde.segmentation.saved as saved

    image, _ = random_textures((256, 256), seed=3)
    tiff, store = tmp_path / "in.tif", tmp_path / output
    tifffile.imwrite(tiff, (image * 255).astype(np.uint8), tile=(64, 64))  # 16 blocks
    options = ["--textures", "2", "--chunks", "64", "--no-progress", "--scheduler", "synchronous"]
    argv = ["segment", str(tiff), str(store), *options]
    _dies_after(monkeypatch, 5)
    assert main(argv) == 2
    monkeypatch.undo()
    assert store_status(store)["blocks_done"] == 5
    opened = []

    def counted(*args, **kwargs):
        opened.append(str(args[0]))
        return xfskde.io.stores.open_blocks(*args, **kwargs)

    monkeypatch.setattr(segment_command, "open_blocks", counted)
    monkeypatch.setattr(saved, "open_blocks", counted)
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "", said.err
    assert opened == [str(store)]
    monkeypatch.undo()
    assert store_status(store)["complete"]
    whole = tmp_path / f"whole-{output}"
    assert main(["segment", str(tiff), str(whole), *options]) == 0
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values,
                                  xfskde.io.open_blocks(whole).values)  # fmt: skip


def test_of_two_writers_that_found_no_store_the_second_is_refused(tmp_path, capsys,
                                                                   monkeypatch):  # fmt: skip
    """Two runs started at once on the same new store both found nothing there; the second
    then laid its store out over the first's (zarr clears a folder it overwrites) and failed
    in zarr's words ("An array exists in store ... at path 'y'"; "keeps 0 of 0 blocks"). A new
    store's group is now claimed at once, exclusively: the second writer is refused with the
    usual line and the first's store is left whole."""
    import xfskde.commands._options as options
    import xfskde.io.stores as stores

    argv, store = _written_store(tmp_path)
    first = xfskde.open_coefficients(store).values
    capsys.readouterr()
    # the second run looked before the first had laid anything out
    monkeypatch.setattr(options, "output_exists", lambda output: False)
    monkeypatch.setattr(stores, "_store_exists", lambda store: False)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"xfskde coefficients: error: {store} already exists (another write laid it out just "
        "now); pass --resume to finish an interrupted write or --overwrite to replace it"
    ]
    monkeypatch.undo()
    assert store_status(store)["complete"]
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, first)
    # and through the API, with an empty folder made beforehand (a new store too)
    (tmp_path / "empty.zarr").mkdir()
    field = xfskde.local_fskde(CAMERA[:64, :64].astype(np.float32), order=3)
    field = xr.DataArray(field, dims=("y", "x", "k"))
    assert xfskde.io.write_coefficients(field, tmp_path / "empty.zarr") == 1
    monkeypatch.setattr(stores, "_store_exists", lambda store: False)
    with pytest.raises(xfskde.exceptions.StoreExistsError, match="already exists"):
        xfskde.io.write_coefficients(field, tmp_path / "empty.zarr")
    assert store_status(tmp_path / "empty.zarr")["complete"]


def test_a_zarr_input_with_a_chunk_rewritten_is_another_version(tmp_path):
    """A Zarr store's version covers its chunks: one chunk written again (a store being
    corrected in place) is seen, and the API resume warns and writes every block again."""
    source = zarr.create_array(tmp_path / "in.zarr", shape=(128, 128), chunks=(32, 32),
                               dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:128, :128]
    store = tmp_path / "out.zarr"
    field = xfskde.local_fskde(xfskde.open_image(tmp_path / "in.zarr"), order=4)
    xfskde.write_coefficients(field, store, chunks=64)
    before = xfskde.open_image(tmp_path / "in.zarr").attrs["source_version"]
    source[32:64, 32:64] = 255 - CAMERA[32:64, 32:64]
    image = xfskde.open_image(tmp_path / "in.zarr")
    assert image.attrs["source_version"] != before
    field = xfskde.local_fskde(image, order=4)
    assert xfskde.io.stores.input_changed(field, store).startswith("its image (")
    with pytest.warns(xfskde.exceptions.InputChangedWarning, match="4 written blocks"):
        assert xfskde.write_coefficients(field, store, resume=True) == 4
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, field.values)


def test_a_zarr_input_rewritten_during_the_write_is_never_marked_complete(
    tmp_path, capsys, monkeypatch
):
    """A Zarr input is not checked block by block (a TIFF is): a chunk rewritten in place while
    the coefficients were written (a store being corrected by another job) left blocks of both
    versions in a store that said "complete". Its version is now compared once more before the
    store is marked complete: the write fails in one line, the store stays incomplete, and the
    resume writes it again from the input as it is."""
    import xfskde.io.stores as stores

    source = zarr.create_array(tmp_path / "in.zarr", shape=(128, 128), chunks=(32, 32),
                               dtype="uint8", dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:128, :128]
    store = tmp_path / "out.zarr"
    argv = ["coefficients", str(tmp_path / "in.zarr"), str(store), *ARGS, "--chunks", "64",
            "--scheduler", "synchronous"]  # fmt: skip
    real, written = stores._write_block, []

    def rewrites_the_input(*args, **kwargs):
        written.append(1)
        if len(written) == 2:  # after the first block: a chunk the last block reads
            source[96:128, 96:128] = 255 - CAMERA[96:128, 96:128]
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", rewrites_the_input)
    assert main(argv) == 2
    monkeypatch.undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "changed while it was written (" in err[0], err
    status = store_status(store)
    assert not status["complete"] and status["blocks_done"] == status["blocks_total"] == 4
    assert main([*argv, "--resume"]) == 0
    assert "its 4 written blocks are computed again" in capsys.readouterr().err
    expected = xfskde.local_fskde(source[...], order=4, window="box", size=5)
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    assert store_status(store)["complete"]


@pytest.mark.parametrize("where", ["local", "memory"])
def test_a_result_written_inside_its_zarr_input_is_not_part_of_it(tmp_path, where, capsys):
    """A store written inside the Zarr store it is computed from (``in.zarr/fskde.zarr``, next
    to the pixels) changed its own input's version: the write was refused as "changed while
    it was written", and every resume computed it again. xfskde's own stores nested in a
    directory are no part of its version (locally and at a URL); any other file still is."""
    import fsspec

    root = (
        str(tmp_path / "in.zarr") if where == "local" else f"memory://faults-{id(tmp_path)}/in.zarr"
    )
    source = zarr.create_array(root, shape=(128, 128), chunks=(32, 32), dtype="uint8",
                               dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:128, :128]
    version = xfskde.open_image(root).attrs["source_version"]
    out = f"{root}/fskde.zarr"
    argv = ["coefficients", root, out, *ARGS, "--scheduler", "threads"]
    assert main(argv) == 0
    assert xfskde.open_image(root).attrs["source_version"] == version
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "is complete already: nothing computed" in said.out, said
    with fsspec.open(f"{root}/notes.txt", "w") as notes:  # a file that is not a result: counted
        notes.write("exported by the scanner")
    assert xfskde.open_image(root).attrs["source_version"] != version


@pytest.mark.parametrize("where", ["local", "memory"])
def test_labels_added_to_an_ome_zarr_input_leave_its_version(tmp_path, where, capsys):
    """Label images added to an OME-Zarr image (``labels/``: by xfskde, napari or QuPath)
    changed its version, so a result computed from it before looked stale and its resume
    computed every block again; its pixels are the same. Its levels still count."""
    root = (str(tmp_path / "in.ome.zarr") if where == "local"
            else f"memory://labels-{id(tmp_path)}/in.ome.zarr")  # fmt: skip
    pixels = xr.DataArray(CAMERA[:96, :96], dims=("y", "x"), name="camera")
    xfskde.write_ome_zarr(pixels, root, pixel_size=0.5, coarsest=48)
    version = xfskde.open_image(root).attrs["source_version"]
    out = str(tmp_path / f"{where}-field.zarr")
    argv = ["coefficients", root, out, *ARGS, "--scheduler", "threads"]
    assert main(argv) == 0
    labels = xr.DataArray((CAMERA[:96, :96] > 128).astype(np.uint8), dims=("y", "x"))
    xfskde.io.write_ome_zarr_labels(labels, root, name="cells")
    assert xfskde.open_image(root).attrs["source_version"] == version
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "is complete already: nothing computed" in said.out, said
    level = zarr.open_array(f"{root}/0", mode="r+")  # a pixel of the image itself: counted
    level[0, 0] = 255 - level[0, 0]
    assert xfskde.open_image(root).attrs["source_version"] != version


def test_a_segmentation_resumed_after_its_mask_file_changed_is_written_again(tmp_path, capsys):
    """A complete OME-Zarr segmentation is left as it is on resume — unless its input or its
    mask file changed since: then it is written again, with the new mask's background."""
    image, _ = random_textures((128, 128), seed=3)
    tiff, mask, out = tmp_path / "in.tif", tmp_path / "mask.tif", tmp_path / "s.ome.zarr"
    tifffile.imwrite(tiff, (image * 255).astype(np.uint8))
    foreground = np.ones((128, 128), np.uint8)
    tifffile.imwrite(mask, foreground)
    argv = ["segment", str(tiff), str(out), "--textures", "2", "--mask", str(mask),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert (zarr.open_array(out / "labels/textures/0", mode="r")[...] > 0).all()
    foreground[:, :40] = 0
    _rewritten(mask, foreground)
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert "was begun from another version of its mask (" in said.err, said.err
    assert "1 of 1 blocks computed" in said.out, said.out
    labels = zarr.open_array(out / "labels/textures/0", mode="r")[...]
    assert (labels[:, :40] == 0).all() and (labels[:, 40:] > 0).all()
    assert store_status(out)["complete"]


def test_a_zarr_input_gone_or_replaced_under_the_tasks_is_refused_not_read_as_zeros(tmp_path):
    """Zarr reads a chunk it cannot find as the array's fill value: a store removed after it
    was opened (or on a worker that does not share its folder) was read as zeros, without an
    error, and a store of the same name put in its place was read instead. Each task now
    checks the array's metadata file first (one stat)."""
    import shutil

    root = tmp_path / "in.zarr"
    source = zarr.create_array(root, shape=(128, 128), chunks=(64, 64), dtype="uint8",
                               dimension_names=("y", "x"))  # fmt: skip
    source[...] = CAMERA[:128, :128]
    field = xfskde.local_fskde(xfskde.open_image(root, chunks=64), order=4)
    np.testing.assert_array_equal(field.values, xfskde.local_fskde(CAMERA[:128, :128], order=4))
    shutil.move(root, tmp_path / "elsewhere.zarr")
    with pytest.raises(xfskde.exceptions.ImageReadError, match="is not there for the task"):
        field.compute(scheduler="synchronous")
    other = zarr.create_array(root, shape=(128, 128), chunks=(64, 64), dtype="uint8",
                              dimension_names=("y", "x"))  # fmt: skip
    other[...] = CAMERA[128:256, :128]
    with pytest.raises(xfskde.exceptions.ImageReadError, match="changed since it was opened"):
        field.compute(scheduler="synchronous")


def test_a_tiff_rewritten_after_it_was_opened_is_refused_not_read(tmp_path):
    """An image opened, then its file rewritten (a new export) before the computation read
    it: the tiles were read from the new file at the old layout's offsets, or another image's
    pixels mixed in. The reading task now refuses a file of another version than the one
    opened, naming both."""
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:128, :128], tile=(32, 32))
    image = xfskde.open_image(tiff, chunks=64)
    field = xfskde.local_fskde(image, order=4)
    _rewritten(tiff, CAMERA[128:256, 128:256].copy(), tile=(32, 32))
    with pytest.raises(xfskde.exceptions.ImageReadError, match="changed since it was opened"):
        field.compute(scheduler="synchronous")
    again = xfskde.local_fskde(xfskde.open_image(tiff, chunks=64), order=4)
    expected = xfskde.local_fskde(CAMERA[128:256, 128:256], order=4)
    np.testing.assert_array_equal(again.values, expected)
    array = tmp_path / "in.npy"  # a .npy file, memory-mapped by the tasks: the same
    np.save(array, CAMERA[:64, :64])
    image = xfskde.open_image(array)
    np.save(array, CAMERA[64:128, :64])
    os.utime(array, ns=(array.stat().st_mtime_ns + 10**9,) * 2)
    with pytest.raises(xfskde.exceptions.ImageReadError, match="changed since it was opened"):
        image.compute()
