"""A resume of a store damaged after it was written: every block that is not right is computed
again before the store says it is complete, and the resume says how many (never "done" over a
damaged chunk).

A complete labels store with one chunk deleted and another overwritten was "resumed" with
"1 of 36 blocks computed", status 0: the lost block was computed again, the damaged one not,
and the store said it was complete while ``xfskde info --verify`` still found it and xarray's
read raised a checksum error. Each store here is written by the library, damaged on disk
(chunk files deleted or changed), resumed, and compared with the store undamaged.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from skimage import data

import xfskde
from xfskde.cli import main
from xfskde.datasets import dead_leaves
from xfskde.exceptions import ParameterError, StoreDamagedWarning
from xfskde.io import store_status, stores
from xfskde.io.stores import verify_store, write_blocks

CAMERA = data.camera()
#: A field of 16 blocks of 32², written in a few tenths of a second.
FIELD = ["--order", "4", "--window", "box", "--size", "5", "--chunks", "32", "--no-progress"]
#: A segmentation of a 192² image into 9 blocks of 64² (an OME-Zarr image takes them from 64).
SEGMENT = ["--textures", "3", "--features", "color,fskde", "--size", "3", "--chunks", "64",
           "--no-progress"]  # fmt: skip
UNREAD = (
    "none was read back: --resume --verify reads each against its checksum and computes the "
    "damaged again"
)


def _flip(chunk: Path) -> None:
    """One byte of a chunk file changed on disk (its checksum no longer matches)."""
    raw = bytearray(chunk.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    chunk.write_bytes(bytes(raw))


def _field(tmp_path: Path) -> xr.DataArray:
    tiff = tmp_path / "in.tif"
    tifffile.imwrite(tiff, CAMERA[:128, :128], tile=(32, 32))
    return xfskde.local_fskde(xfskde.open_image(tiff), order=4, window="box", size=5)


def _labels(tmp_path: Path) -> tuple[xr.DataArray, Path]:
    """A labels store of 16 blocks written by write_blocks, and the labels."""
    labels = xr.DataArray(
        (CAMERA[:128, :128] // 64).astype(np.uint8), dims=("y", "x"),
        coords={"y": np.arange(128.0), "x": np.arange(128.0)},
    )  # fmt: skip
    store = tmp_path / "labels.zarr"
    write_blocks(labels, store, name="labels", chunks=32)
    return labels, store


def _no_warning(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    assert not [w for w in caught if issubclass(w.category, StoreDamagedWarning)], caught
    return result


# ------------------------------------------------------------------------------------ the API


def test_a_lost_and_a_damaged_chunk_are_both_computed_again(tmp_path):
    """The lost chunk (a listing shows it) says the store was damaged, so the other blocks are
    read back, and the damaged one is computed again too (the old resume: only the lost one)."""
    field = _field(tmp_path)
    store = tmp_path / "f.zarr"
    assert xfskde.write_coefficients(field, store, chunks=32) == 16
    expected = xfskde.open_coefficients(store).values
    (store / "fskde" / "c" / "3" / "0" / "0").unlink()
    _flip(store / "fskde" / "c" / "1" / "2" / "0")
    said = (
        r"f.zarr was damaged after its blocks were written: 1 block had lost its chunk, 1 block "
        r"of the 15 read back was damaged \(checksum mismatch or undecodable\); 2 blocks are "
        r"computed again"
    )
    with pytest.warns(StoreDamagedWarning, match=said):
        written = xfskde.write_coefficients(field, store, resume=True)
    assert written == 2
    assert store_status(store)["complete"] and verify_store(store).whole
    np.testing.assert_array_equal(xfskde.open_coefficients(store).values, expected)
    np.testing.assert_array_equal(xr.open_zarr(store)["fskde"].values, expected)


def test_a_changed_chunk_alone_is_read_back_when_asked(tmp_path):
    """Nothing missing: a plain resume reads no chunk (its cost stays one listing), computes
    nothing and warns of nothing; with verify=True it reads every block back and computes the
    damaged one again."""
    labels, store = _labels(tmp_path)
    _flip(store / "labels" / "c" / "2" / "1")
    assert _no_warning(write_blocks, labels, store, name="labels", resume=True) == 0
    assert [(p.key, p.kind) for p in verify_store(store).problems] == [("labels/c/2/1", "damaged")]
    with pytest.raises(ParameterError, match="verify=True reads back the blocks a resume keeps"):
        write_blocks(labels, store, name="labels", overwrite=True, verify=True)
    with pytest.warns(StoreDamagedWarning, match="1 block of the 16 read back was damaged"):
        written = write_blocks(labels, store, name="labels", resume=True, verify=True)
    assert written == 1
    assert store_status(store)["complete"] and verify_store(store).whole
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values, labels.values)
    # whole: verify=True reads every block, finds nothing, computes nothing
    assert _no_warning(write_blocks, labels, store, name="labels", resume=True, verify=True) == 0


def test_a_damaged_record_entry_is_a_sign_of_damage_too(tmp_path):
    """An entry of the record that cannot be read (or is gone from a complete store) says the
    store was damaged: its block is computed again, and the others are read back, which finds
    a changed chunk."""
    labels, store = _labels(tmp_path)
    _flip(store / "xfskde_blocks" / "c" / "0" / "1")  # an entry: checksum mismatch
    (store / "xfskde_blocks" / "c" / "3" / "3").unlink()  # an entry gone
    _flip(store / "labels" / "c" / "1" / "2")  # and a chunk
    said = (
        r"1 block of the 14 read back was damaged \(checksum mismatch or undecodable\), 2 "
        r"entries of its completion record were damaged or gone; 3 blocks are computed again"
    )
    with pytest.warns(StoreDamagedWarning, match=said):
        assert write_blocks(labels, store, name="labels", resume=True) == 3
    assert store_status(store)["complete"] and verify_store(store).whole
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values, labels.values)


def test_verify_and_info_find_a_record_entry_gone_from_a_complete_store(tmp_path, capsys):
    """A record entry deleted from a complete store reads as "not written": a resume computes
    its block again, as it says, but ``verify_store`` found nothing and ``xfskde info
    --verify`` printed "complete (15/16 blocks)" and "every checksum matches", status 0. Both
    now list it, and ``xfskde info`` without --verify says it is damaged."""
    _, store = _labels(tmp_path)
    (store / "xfskde_blocks" / "c" / "3" / "3").unlink()
    report = verify_store(store)
    assert not report.whole
    assert [(p.array, p.key, p.kind) for p in report.problems] == [
        ("xfskde_blocks", "xfskde_blocks/c/3/3", "missing")
    ]
    assert "record entry of block (3, 3) is gone" in report.problems[0].detail
    assert main(["info", str(store), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "complete (15/16 blocks), but DAMAGED: 1 damaged or missing" in out
    assert "every checksum matches" not in out
    assert main(["info", str(store)]) == 1
    out = capsys.readouterr().out
    assert "1 entry of its completion record gone (xfskde_blocks)" in out, out
    # the whole record gone: every entry
    for chunk in (store / "xfskde_blocks" / "c").rglob("*"):
        if chunk.is_file():
            chunk.unlink()
    assert len(verify_store(store).problems) == 16


def test_a_damaged_coordinate_is_written_again(tmp_path):
    """A coordinate array that does not read back (the store cannot be opened) is written again
    from the data's coordinates, which the store's parameters matched."""
    labels, store = _labels(tmp_path)
    _flip(store / "y" / "c" / "0")
    with pytest.warns(StoreDamagedWarning, match="its coordinate 'y' did not read back, and was "):
        assert write_blocks(labels, store, name="labels", resume=True) == 0
    assert store_status(store)["complete"] and verify_store(store).whole
    reopened = xfskde.io.open_blocks(store)
    np.testing.assert_array_equal(reopened.values, labels.values)
    np.testing.assert_array_equal(reopened.y.values, labels.y.values)


def test_forget_damaged_blocks_says_beforehand_what_a_resume_computes(tmp_path):
    labels, store = _labels(tmp_path)
    _flip(store / "labels" / "c" / "0" / "0")
    # nothing gone: listed, not read
    assert _no_warning(stores.forget_damaged_blocks, store) == stores.BlockDamage(0, 0, 0, 0, True)
    assert store_status(store)["complete"]
    with pytest.warns(StoreDamagedWarning):
        damage = stores.forget_damaged_blocks(store, verify=True)
    assert (damage.missing, damage.damaged, damage.entries, damage.read) == (0, 1, 0, 16)
    # marked not written, the status "incomplete": the store no longer says it is complete
    status = store_status(store)
    assert not status["complete"] and status["blocks_done"] == 15
    assert write_blocks(labels, store, name="labels", resume=True) == 1
    np.testing.assert_array_equal(xfskde.io.open_blocks(store).values, labels.values)


# ------------------------------------------------------------------------- the command line


@pytest.fixture(scope="module")
def leaves(tmp_path_factory) -> Path:
    image, _ = dead_leaves((192, 192), seed=11)
    path = tmp_path_factory.mktemp("leaves") / "leaves.npy"
    np.save(path, (image * 255).astype(np.uint8))
    return path


#: per output: the name, the array checked by info --verify, and its chunk keys (y, x)
OUTPUTS = {
    "labels": ("out.zarr", [], "labels/c/{}/{}"),
    "abundances": ("out.zarr", ["--abundances"], "abundances/c/{}/{}/0"),
    "ome": ("out.ome.zarr", [], "0/c/0/{}/{}"),
}


def _arrays(store: Path) -> dict[str, np.ndarray]:
    """Every array of a store (an OME-Zarr image: its levels and its label image too)."""
    found: dict[str, np.ndarray] = {}
    group = zarr.open_group(store, mode="r")

    def walk(node: zarr.Group, prefix: str) -> None:
        for name, array in node.arrays():
            found[prefix + name] = np.asarray(array[...])
        for name, sub in node.groups():
            walk(sub, f"{prefix}{name}/")

    walk(group, "")
    return found


def _assert_same(store: Path, expected: dict[str, np.ndarray]) -> None:
    got = _arrays(store)
    assert sorted(got) == sorted(expected)
    for name, values in expected.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)


@pytest.mark.parametrize("output", list(OUTPUTS))
def test_segment_resume_computes_the_lost_and_the_damaged_blocks(leaves, tmp_path, output,
                                                                 capsys):  # fmt: skip
    """The probe's case: one chunk deleted, one overwritten. The resume says what it found, and
    computes both; the store then reads back equal to the undamaged one (the OME-Zarr image's
    pyramid and label image too, written again from the repaired level 0)."""
    name, extra, key = OUTPUTS[output]
    store = tmp_path / name
    argv = ["segment", str(leaves), str(store), *SEGMENT, *extra]
    assert main(argv) == 0
    expected = _arrays(store)
    (store / key.format(2, 2)).unlink()
    _flip(store / key.format(1, 1))
    capsys.readouterr()
    assert main(["info", "--verify", str(store)]) == 1
    assert "repair    run the command that wrote it again with --resume --verify" in (
        capsys.readouterr().out
    )
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == (
        f"xfskde segment: warning: {store} was damaged after its blocks were written: 1 block "
        "had lost its chunk, 1 block of the 8 read back was damaged (checksum mismatch or "
        "undecodable); 2 blocks are computed again\n"
    )
    assert ", 2 of 9 blocks computed in " in said.out, said.out
    _assert_same(store, expected)
    assert store_status(store)["complete"]
    assert main(["info", "--verify", str(store)]) == 0


def test_segment_resume_of_a_changed_chunk_says_it_read_nothing_then_verify(leaves, tmp_path,
                                                                            capsys):  # fmt: skip
    """A complete store with only a changed chunk: --resume computes nothing and says it read
    no block back (not that the store is whole); --resume --verify computes it again."""
    store = tmp_path / "out.zarr"
    argv = ["segment", str(leaves), str(store), *SEGMENT]
    assert main(argv) == 0
    expected = _arrays(store)
    _flip(store / "labels" / "c" / "0" / "2")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == ""
    assert said.out.startswith(f"{store} is complete already: nothing computed (labels ")
    assert said.out.endswith(f", 9 blocks; {UNREAD})\n"), said.out
    assert main(["info", "--verify", str(store)]) == 1  # still damaged: nothing was read
    capsys.readouterr()
    assert main([*argv, "--resume", "--verify"]) == 0
    said = capsys.readouterr()
    assert "1 block of the 9 read back was damaged" in said.err
    assert ", 1 of 9 blocks computed in " in said.out
    _assert_same(store, expected)
    assert main(["info", "--verify", str(store)]) == 0
    capsys.readouterr()
    assert main([*argv, "--resume", "--verify"]) == 0
    assert capsys.readouterr().out.endswith(", 9 blocks; each read back whole)\n")
    assert main(["segment", str(leaves), str(tmp_path / "new.zarr"), *SEGMENT, "--verify"]) == 2
    assert capsys.readouterr().err == (
        "xfskde segment: error: --verify reads back the blocks --resume keeps: pass --resume "
        "too (xfskde info --verify STORE checks a store without writing to it)\n"
    )


def test_coefficients_resume_verify(tmp_path, capsys):
    tiff, store = tmp_path / "in.tif", tmp_path / "out.zarr"
    tifffile.imwrite(tiff, CAMERA[:128, :128], tile=(32, 32))
    argv = ["coefficients", str(tiff), str(store), *FIELD]
    assert main(argv) == 0
    expected = _arrays(store)
    _flip(store / "fskde" / "c" / "2" / "3" / "0")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().out.endswith(f"16 blocks; {UNREAD})\n")
    assert not verify_store(store).whole
    assert main([*argv, "--resume", "--verify"]) == 0
    said = capsys.readouterr()
    assert "1 block of the 16 read back was damaged" in said.err
    assert " 1 of 16 blocks computed " in said.out
    _assert_same(store, expected)
    assert verify_store(store).whole


def test_maps_resume_computes_the_damaged_blocks_and_the_pyramid_again(tmp_path, capsys):
    """An OME-Zarr image of maps that said it was complete was left as it was by a resume,
    lost chunk or not: its level 0 is repaired, and its pyramid written again from it."""
    tiff, store = tmp_path / "in.tif", tmp_path / "maps.ome.zarr"
    tifffile.imwrite(tiff, np.tile(CAMERA[:256, :256], (1, 4)), tile=(64, 64))
    argv = ["maps", str(tiff), str(store), "--order", "4", "--window", "box", "--size", "5",
            "--chunks", "64", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    expected = _arrays(store)
    assert sorted(k for k in expected if k.isdigit()) == ["0", "1"]  # level 1: 128 x 512
    (store / "0" / "c" / "0" / "3" / "15").unlink()
    _flip(store / "0" / "c" / "0" / "1" / "2")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert "1 block had lost its chunk, 1 block of the 63 read back was damaged" in said.err
    assert said.out.startswith(f"wrote {store}: ")
    _assert_same(store, expected)
    assert main(["info", "--verify", str(store)]) == 0
    # a changed chunk alone: --resume leaves it, and says it read nothing; --verify repairs
    _flip(store / "0" / "c" / "0" / "2" / "5")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().out.endswith(f", 64 blocks; {UNREAD})\n")
    assert main([*argv, "--resume", "--verify"]) == 0
    assert "1 block of the 64 read back was damaged" in capsys.readouterr().err
    _assert_same(store, expected)
    assert main(["info", "--verify", str(store)]) == 0
