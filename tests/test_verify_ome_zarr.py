"""A store that is not right never says it is complete: an OME-Zarr image's coarser levels, its
label image and the ``zarr.json`` of every array are checked and repaired as its level 0 is.

The probe: a chunk of level 1 or of ``labels/textures/0`` changed or deleted on disk, and
``xfskde info --verify`` said "every checksum matches" (exit 0), ``--resume --verify`` "each
read back whole", while ome-zarr-py (napari's reader) raised a checksum error or read NaN and
background where the chunk had gone. A truncated ``0/zarr.json`` read whole through the
root's consolidated metadata (exit 0, "complete") while ome-zarr-py failed on it; in a store
whose write did not finish, one raised zarr's ``Expecting ',' delimiter`` naming no file.
Each store here is written by the command line, damaged on disk, checked, resumed, and
compared with the store as it was written (bit for bit).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr
from _stores import without_checksums
from ome_zarr.io import parse_url
from ome_zarr.reader import Reader
from test_resume_damaged import CAMERA, UNREAD, _arrays, _assert_same, _flip

from xfskde.cli import main
from xfskde.datasets import dead_leaves
from xfskde.io import finalize_store, open_blocks, store_status, write_ome_zarr_labels
from xfskde.io.stores import check_metadata, verify_store

#: A segmentation of a 256 x 640 image in 40 blocks of 64²: level 1 is 128 x 320, and so is
#: the label image's.
SEGMENT = ["--textures", "3", "--features", "color,fskde", "--size", "3", "--chunks", "64",
           "--no-progress"]  # fmt: skip
MAPS = ["--order", "4", "--window", "box", "--size", "5", "--chunks", "64", "--no-progress"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, tuple[list[str], Path, dict[str, np.ndarray]]]:
    """A segmentation and maps, each as an OME-Zarr image of two levels, written once: the
    command line that wrote it (its output the first path of ``argv`` to be replaced), the
    store, and its arrays."""
    folder = tmp_path_factory.mktemp("written")
    image, _ = dead_leaves((256, 640), seed=11)
    leaves = folder / "leaves.npy"
    np.save(leaves, (image * 255).astype(np.uint8))
    tiff = folder / "in.tif"
    tifffile.imwrite(tiff, np.tile(CAMERA[:256, :256], (1, 4)), tile=(64, 64))
    found = {}
    for kind, source, options in (("segment", leaves, SEGMENT), ("maps", tiff, MAPS)):
        store = folder / f"{kind}.ome.zarr"
        assert main([kind, str(source), str(store), *options]) == 0
        found[kind] = ([kind, str(source), "STORE", *options], store, _arrays(store))
    return found


def _copy(written, kind: str, tmp_path: Path) -> tuple[list[str], Path, dict[str, np.ndarray]]:
    argv, store, arrays = written[kind]
    copy = tmp_path / store.name
    shutil.copytree(store, copy)
    return [str(copy) if a == "STORE" else a for a in argv], copy, arrays


def _napari(store: Path) -> dict[str, np.ndarray]:
    """Every level of the image and of its label images as ome-zarr-py reads them (napari's
    reader plugin): by their nodes' paths."""
    nodes = Reader(parse_url(str(store)))()
    return {
        f"{Path(node.zarr.path).relative_to(store.resolve())}/{level}": np.asarray(data)
        for node in nodes
        for level, data in enumerate(node.data)
    }


def _verify_lines(out: str) -> list[str]:
    """The lines of ``info --verify`` after its blank line."""
    return out.split("\n\n", 1)[1].splitlines()


# ------------------------------------------------------------- (a) coarser levels and labels


def test_info_verify_reads_the_levels_and_the_label_image(written, tmp_path, capsys):
    """A changed chunk of level 1 and a lost one of the label's level 1: damaged, missing,
    exit 1 (the old verify read level 0 alone: "every checksum matches", exit 0)."""
    _, store, _ = _copy(written, "segment", tmp_path)
    _flip(store / "1" / "c" / "0" / "1" / "2")
    (store / "labels" / "textures" / "1" / "c" / "0" / "0").unlink()
    capsys.readouterr()
    assert main(["info", "--verify", str(store)]) == 1
    assert _verify_lines(capsys.readouterr().out) == [
        "verify    40 of 40 blocks read: 2 damaged or missing",
        "verify    and 31 chunks of the arrays made from them (1, labels/textures/0, "
        "labels/textures/1)",
        "missing   labels/textures/1/c: 1 of the 1 chunks it held when it was written is gone "
        "(it would read as its fill value)",
        "damaged   1/c/0/1/2: checksum mismatch: its bytes changed after they were written",
        "repair    run the command that wrote it again with --resume --verify: it reads every "
        "block back and computes the damaged and missing ones again (or restore it from a "
        "copy)",
    ]
    report = verify_store(store)
    assert not report.whole and report.derived_read == 31 and report.uncounted == ()


def test_segment_resume_writes_the_damaged_levels_and_labels_again(written, tmp_path, capsys):
    """A lost chunk is found by the resume's listing, and then every chunk is read: both are
    written again (the levels and labels from level 0, which is not computed again), bit for
    bit, and napari's reader reads what it read of the store as written."""
    argv, store, expected = _copy(written, "segment", tmp_path)
    napari = _napari(written["segment"][1])
    assert napari["labels/textures/1"].shape == (128, 320)  # the label image's level 1
    _flip(store / "labels" / "textures" / "0" / "c" / "0" / "0")
    (store / "1" / "c" / "2" / "1" / "3").unlink()
    with pytest.raises(ValueError, match="checksum"):  # what napari met before
        _napari(store)
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == (
        f"xfskde segment: warning: {store} was damaged after its blocks were written: 2 chunks "
        "of the arrays made from them (1, labels/textures/0) were damaged or gone, its 40 read "
        "back whole against their checksums; those arrays are written again from its blocks\n"
    )
    assert said.out.startswith(f"wrote {store}: abundances and labels (256, 640), 3 textures, "
                               "0 of 40 blocks computed in ")  # fmt: skip
    _assert_same(store, expected)
    got = _napari(store)
    assert sorted(got) == sorted(napari)
    for name, values in napari.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)
    assert store_status(store)["complete"]
    assert main(["info", "--verify", str(store)]) == 0


def test_a_changed_chunk_of_level_1_alone_is_read_back_when_asked(written, tmp_path, capsys):
    """Nothing gone: --resume reads nothing and says so (not "whole"); --resume --verify
    reads every chunk and writes level 1 again (the old one said "each read back whole")."""
    argv, store, expected = _copy(written, "maps", tmp_path)
    _flip(store / "1" / "c" / "1" / "1" / "2")
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and said.out.endswith(f", 64 blocks; {UNREAD})\n"), said
    assert main([*argv, "--resume", "--verify"]) == 0
    said = capsys.readouterr()
    assert said.err == (
        f"xfskde maps: warning: {store} was damaged after its blocks were written: 1 chunk of "
        "the arrays made from them (1) was damaged or gone, its 64 read back whole against "
        "their checksums; those arrays are written again from its blocks\n"
    )
    assert said.out.startswith(f"wrote {store}: orientation, coherence, energy of 256 x 1024")
    _assert_same(store, expected)
    assert verify_store(store).whole
    assert main([*argv, "--resume", "--verify"]) == 0
    assert capsys.readouterr().out.endswith(", 64 blocks; each read back whole)\n")


def test_a_label_image_added_to_a_complete_image_is_counted(written, tmp_path):
    """write_ome_zarr_labels on a complete image counts the new label image's chunks: one lost
    is found, and one written again with fewer chunks of values (a chunk of background is not
    written) is not taken for one that lost them."""
    _, store, _ = _copy(written, "maps", tmp_path)
    level0 = open_blocks(store)
    values = np.zeros((256, 1024), np.uint8)
    values[:100, :100] = 1  # four chunks of level 0 hold a value, one of level 1
    labels = xr.DataArray(values, dims=("y", "x"), coords={"y": level0.y, "x": level0.x})
    write_ome_zarr_labels(labels, store, name="cells", chunks=64)
    report = verify_store(store)
    assert report.whole and report.uncounted == ()
    assert report.derived_arrays == ("1", "labels/cells/0", "labels/cells/1")
    assert report.derived_read == 48 + 4 + 1
    values[:] = 0
    values[0, 0] = 1
    write_ome_zarr_labels(labels.copy(data=values), store, name="cells", chunks=64,
                          overwrite=True)  # fmt: skip
    assert verify_store(store).whole
    (store / "labels" / "cells" / "0" / "c" / "0" / "0").unlink()
    assert [p[1:] for p in verify_store(store).problems] == [(
        "labels/cells/0/c", "missing",
        "1 of the 1 chunks it held when it was written is gone (it would read as its fill value)",
    )]  # fmt: skip


def test_a_damaged_label_image_the_resume_does_not_write_keeps_it_incomplete(written, tmp_path,
                                                                            capsys):  # fmt: skip
    """A label image added to a maps image loses a chunk: xfskde maps --resume writes the
    pyramid again, not that label image, and it said the store was complete (and verify
    whole, the chunk counted anew). It refuses to complete it, naming the label image; once
    written again, the store is finalized whole."""
    argv, store, _ = _copy(written, "maps", tmp_path)
    level0 = open_blocks(store)
    values = np.zeros((256, 1024), np.uint8)
    values[:100, :100] = 1
    labels = xr.DataArray(values, dims=("y", "x"), coords={"y": level0.y, "x": level0.x})
    write_ome_zarr_labels(labels, store, name="cells", chunks=64)
    (store / "labels" / "cells" / "0" / "c" / "0" / "0").unlink()
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 2
    assert capsys.readouterr().err.endswith(
        f"xfskde maps: error: {store}: labels/cells/0 was found damaged, and the write that "
        "finished the store did not write it again (a label image added by "
        "write_ome_zarr_labels is not among what the image's writer writes): write it again "
        "with xfskde.io.write_ome_zarr_labels, then call xfskde.io.finalize_store, or restore "
        f"the store from a copy; {store} keeps 64 of 64 blocks: fix the cause, then run "
        "the same command with --resume to finish it (or --overwrite to start again)\n"
    )
    assert not store_status(store)["complete"]
    write_ome_zarr_labels(labels, store, name="cells", chunks=64, overwrite=True)
    finalize_store(store)
    assert store_status(store)["complete"] and verify_store(store).whole
    np.testing.assert_array_equal(
        zarr.open_array(store / "labels" / "cells" / "0", mode="r")[...], values
    )


# ---------------------------------------------------------------------------- (b) zarr.json


@pytest.mark.parametrize("node", ["0", "1", "labels/textures/0", "labels", "xfskde_blocks", "y"])
def test_a_damaged_zarr_json_is_found_and_written_back(written, tmp_path, node, capsys):
    """Cut short, the metadata of an array or a group: info (exit 1) and info --verify name
    it; a resume writes it back from the root's consolidated copy, byte for byte."""
    argv, store, expected = _copy(written, "segment", tmp_path)
    metadata = store / node / "zarr.json"
    original = metadata.read_bytes()
    metadata.write_bytes(original[:100])
    capsys.readouterr()
    assert main(["info", str(store)]) == 1
    line = f"{node}/zarr.json: its metadata is not Zarr metadata: "
    assert f"\ndamaged             {line}" in capsys.readouterr().out
    assert main(["info", "--verify", str(store)]) == 1
    lines = _verify_lines(capsys.readouterr().out)
    assert lines[0] == "verify    40 of 40 blocks read: 1 damaged or missing"
    assert lines[2].startswith(f"damaged   {line}") and lines[2].endswith(
        "; a resume writes it again from the copy in the store's consolidated metadata"
    )
    assert [p.key for p in check_metadata(store)] == [f"{node}/zarr.json"]
    if node not in ("0", "labels"):
        return  # the resume is the same for each: two of them, a level 0 and a group
    assert main([*argv, "--resume"]) == 0
    assert capsys.readouterr().err == (
        f"xfskde segment: warning: {store} was damaged after its blocks were written: 1 "
        "zarr.json metadata file was damaged or gone, and written again from the copy in its "
        "consolidated metadata\n"
    )
    assert metadata.read_bytes() == original
    _assert_same(store, expected)
    _napari(store)  # reads
    assert main(["info", "--verify", str(store)]) == 0


def test_a_damaged_root_zarr_json_is_refused_in_one_line(written, tmp_path, capsys):
    """The root's metadata (status, parameters, the image's) has no copy: every command
    refuses in one line naming it and --overwrite, which writes the store again."""
    argv, store, expected = _copy(written, "segment", tmp_path)
    root = store / "zarr.json"
    root.write_bytes(root.read_bytes()[:100])
    capsys.readouterr()
    reason = "Unterminated string starting at: line 4 column 26 (char 78)"
    for command, call in (("info", ["info", str(store)]),
                          ("info", ["info", "--verify", str(store)]),
                          ("segment", [*argv, "--resume", "--verify"])):  # fmt: skip
        assert main(call) == 2
        assert capsys.readouterr().err == (
            f"xfskde {command}: error: {root} is damaged (not JSON: {reason}): the store "
            "cannot be read or resumed without it; write it again with --overwrite\n"
        )
    assert main([*argv, "--overwrite"]) == 0
    _assert_same(store, expected)


def test_a_damaged_zarr_json_of_an_unfinished_store_is_named(written, tmp_path, capsys):
    """A store whose write did not finish holds no consolidated copy: the one line names the
    file (it was zarr's "Expecting ',' delimiter: line 8 column 22 (char 100)")."""
    argv, store, _ = _copy(written, "segment", tmp_path)
    root = json.loads((store / "zarr.json").read_text())
    root.pop("consolidated_metadata")
    root["attributes"]["xfskde_status"] = "incomplete"
    (store / "zarr.json").write_text(json.dumps(root))
    metadata = store / "labels" / "textures" / "0" / "zarr.json"
    metadata.write_bytes(metadata.read_bytes()[:100])
    capsys.readouterr()
    for command, call in (("info", ["info", str(store)]), ("segment", [*argv, "--resume"])):
        assert main(call) == 2
        assert capsys.readouterr().err == (
            f"xfskde {command}: error: {metadata} is damaged (not JSON: Expecting ',' "
            "delimiter: line 8 column 22 (char 100)), and the store, whose write did not "
            "finish, holds no copy of it: write it again with --overwrite\n"
        )
    assert zarr.open_group(store, mode="r").attrs["xfskde_status"] == "incomplete"


# ------------------------------------------------------------------ (c) stores of no checksum


def test_a_store_of_no_checksum_is_never_said_to_be_verified(written, tmp_path, capsys):
    """A chunk replaced by another of the right size: it decodes, so nothing can tell. info
    --verify says it cannot verify the values (exit 1: it said "none damaged or missing",
    exit 0), and --resume --verify that it decoded them (it said "each read back whole")."""
    argv, store, expected = _copy(written, "segment", tmp_path)
    without_checksums(store)
    level0 = store / "0" / "c" / "0"
    (level0 / "2" / "2").write_bytes((level0 / "1" / "1").read_bytes())
    changed = np.asarray(zarr.open_array(store / "0", mode="r")[...])
    assert not np.array_equal(changed, expected["0"], equal_nan=True)  # read without a word
    capsys.readouterr()
    assert main(["info", "--verify", str(store)]) == 1
    assert _verify_lines(capsys.readouterr().out) == [
        "verify    40 of 40 blocks read: none missing or undecodable",
        "verify    and 32 chunks of the arrays made from them (1, labels/textures/0, "
        "labels/textures/1)",
        "verify    cannot verify their values: its chunks carry no checksum (written before "
        "xfskde checksummed them), so only their presence and decoding were checked; write it "
        "again with --overwrite to have them checked",
    ]
    assert verify_store(store).whole and not verify_store(store).checksums
    assert main([*argv, "--resume", "--verify"]) == 0
    assert capsys.readouterr().out.endswith(
        ", 40 blocks; each decoded, but none could be checked: its chunks carry no checksum "
        "(written before xfskde checksummed them); write it again with --overwrite to have them "
        "checked)\n"
    )


def test_a_coefficient_store_of_no_checksum_is_never_said_read_back_whole(tmp_path, capsys):
    """coefficients --resume --verify of a complete store without checksums says that its
    blocks decoded and none could be checked (it said "each read back whole")."""
    image = tmp_path / "in.tif"
    tifffile.imwrite(image, dead_leaves((128, 128), seed=3)[0].mean(axis=-1).astype(np.float32))
    store = tmp_path / "out.zarr"
    argv = ["coefficients", str(image), str(store), "--chunks", "64", "--no-progress"]
    assert main(argv) == 0
    without_checksums(store)
    capsys.readouterr()
    assert main([*argv, "--resume", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "is complete already" in out and "each read back whole" not in out
    assert "each decoded, but none could be checked: its chunks carry no checksum" in out
