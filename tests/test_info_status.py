"""``xfskde info``'s first rows say what the rest find.

``info --verify`` printed ``status   complete (12/12 blocks)`` above the rows that listed the
damaged and missing chunks it found (exit status 1): a user reading the first rows saw
"complete". The status row now says the store is damaged (or that its values could not be
verified), the row names kept. And the ``planes`` row of a stack read "(one is read: --plane
z=N)": which one, and by what, it did not say.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
import zarr
from _stores import without_checksums
from skimage import data

import xfskde
from xfskde.cli import main


def _rows(text: str) -> list[tuple[str, str]]:
    """``key  value`` rows of a section, in order (keys repeat: ``damaged``, ``verify``)."""
    return [tuple(line.split(None, 1)) for line in text.splitlines() if line.strip()]


def _sections(out: str) -> list[list[tuple[str, str]]]:
    return [_rows(section) for section in out.split("\n\n")]


def _store(tmp_path: Path) -> Path:
    """A coefficient store of 128 x 96 pixels in chunks of 32: 12 blocks, checksummed."""
    image = xr.DataArray(data.camera()[:128, :96], dims=("y", "x"), name="in").chunk(32)
    store = tmp_path / "f.zarr"
    xfskde.write_coefficients(xfskde.local_fskde(image, order=4, window="box", size=5), store,
                              chunks=32)  # fmt: skip
    return store


def _flip(chunk: Path) -> None:
    raw = bytearray(chunk.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    chunk.write_bytes(bytes(raw))


def test_verify_s_damage_is_in_the_status_row(tmp_path, capsys):
    """One chunk flipped, one lost: the status row (second, as before) says DAMAGED and how
    many, the rows below list them, exit status 1; the store written again reads complete."""
    store = _store(tmp_path)
    _flip(store / "fskde" / "c" / "1" / "2" / "0")
    (store / "fskde" / "c" / "3" / "0" / "0").unlink()
    capsys.readouterr()
    assert main(["info", "--verify", str(store)]) == 1
    head, found = _sections(capsys.readouterr().out)
    assert head[1] == (
        "status",
        "complete (12/12 blocks), but DAMAGED: 2 damaged or missing, listed below",
    )
    assert found[0] == ("verify", "12 of 12 blocks read: 2 damaged or missing")
    assert [key for key, _ in found[1:3]] == ["damaged", "missing"]
    assert main(["info", str(store)]) == 0  # without --verify: the metadata only, sound
    assert _sections(capsys.readouterr().out)[0][1] == ("status", "complete (12/12 blocks)")
    _store(tmp_path / "again")
    assert main(["info", "--verify", str(tmp_path / "again" / "f.zarr")]) == 0
    head, found = _sections(capsys.readouterr().out)
    assert head[1] == ("status", "complete (12/12 blocks)")
    assert found[0] == ("verify", "12 of 12 blocks read: every checksum matches")


def test_damaged_metadata_is_in_the_status_row_and_counted_once(tmp_path, capsys):
    """A coordinate's zarr.json cut short, found without --verify: the status says it. A
    coordinate's chunk flipped: the row above the verify section and the verify section name
    the same chunk, counted once; without --verify, the error that ends the command names
    it, below a status that says it."""
    store = _store(tmp_path)
    metadata = store / "x" / "zarr.json"
    original = metadata.read_bytes()
    metadata.write_bytes(original[:100])
    capsys.readouterr()
    assert main(["info", str(store)]) == 1
    head = _sections(capsys.readouterr().out)[0]
    assert head[1] == (
        "status",
        "complete (12/12 blocks), but DAMAGED: 1 damaged or missing, listed below",
    )
    assert head[2][0] == "damaged" and head[2][1].startswith("x/zarr.json: ")
    metadata.write_bytes(original)
    _flip(store / "y" / "c" / "0")
    assert main(["info", "--verify", str(store)]) == 1
    head, found = _sections(capsys.readouterr().out)
    assert head[1] == (
        "status",
        "complete (12/12 blocks), but DAMAGED: 1 damaged or missing, listed below",
    )
    assert head[2][0] == "damaged" and "chunk 'y/c/0' is damaged" in head[2][1]
    assert found[:2] == [
        ("verify", "12 of 12 blocks read: 1 damaged or missing"),
        ("damaged", "y/c/0: checksum mismatch: its bytes changed after they were written"),
    ]
    # without --verify the chunk is found reading the coordinates: the error, the last line
    assert main(["info", str(store)]) == 2
    said = capsys.readouterr()
    assert _sections(said.out)[0][1] == (
        "status",
        "complete (12/12 blocks), but DAMAGED: 1 damaged or missing, listed below",
    )
    assert "chunk 'y/c/0' is damaged" in said.err.splitlines()[-1]


def test_values_that_could_not_be_verified_are_in_the_status_row(tmp_path, capsys):
    """A store of no checksum: verify exits 1 (its values cannot be checked), and the status
    row says so too, not "complete" alone."""
    store = _store(tmp_path)
    without_checksums(store)
    capsys.readouterr()
    assert main(["info", "--verify", str(store)]) == 1
    head, found = _sections(capsys.readouterr().out)
    assert head[1] == (
        "status",
        "complete (12/12 blocks), but UNVERIFIED: its chunks carry no checksum (verify below)",
    )
    assert found[0] == ("verify", "12 of 12 blocks read: none missing or undecodable")


def test_a_stack_s_planes_row_says_what_is_read_and_how_to_choose(tmp_path, capsys):
    """A z-stack of 3 planes: the row names the commands that read one plane, the option
    that chooses it and the planes there are; without the option the commands refuse the
    stack, with it they read that plane."""
    stack = zarr.create_array(tmp_path / "stack.zarr", shape=(3, 64, 48), chunks=(1, 32, 32),
                              dtype="uint16", dimension_names=("z", "y", "x"))  # fmt: skip
    stack[...] = np.arange(3, dtype=np.uint16)[:, None, None] * 100 + data.camera()[:64, :48]
    assert main(["info", str(tmp_path / "stack.zarr")]) == 0
    rows = dict(_sections(capsys.readouterr().out)[0])
    assert rows["planes"] == (
        "z 3 (coefficients, maps and segment read one plane: --plane z=N chooses it, z=0 to z=2)"
    )
    out = tmp_path / "out.zarr"
    argv = ["coefficients", str(tmp_path / "stack.zarr"), str(out), "--order", "2",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 2
    assert "choose one plane with --plane z=0" in capsys.readouterr().err
    assert main([*argv, "--plane", "z=2"]) == 0
    image = xr.DataArray(stack[2], dims=("y", "x"))
    expected = xfskde.local_fskde(image, order=2)
    np.testing.assert_allclose(xfskde.open_coefficients(out).values, expected.values, rtol=1e-6)
