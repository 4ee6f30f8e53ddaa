"""The completion record of xfskde's stores: what a writer sets and a reader checks.

A store written block by block (:mod:`xfskde.io.stores`) holds, beside its data, the record
``xfskde_blocks`` — one ``uint8`` entry per block, set once the block is written — and the group
attribute ``xfskde_status``, ``"incomplete"`` until every block and what follows them are
written, then ``"complete"``. The writer (:mod:`.stores`) and the image reader
(:mod:`.images`, which must not read a store with holes as an image) both read them here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import zarr

from ..exceptions import StoreIncompleteError

#: Group attribute: ``"incomplete"`` until :func:`xfskde.io.finalize_store`, then ``"complete"``.
_STATUS_ATTR = "xfskde_status"
#: Group attribute, set by :func:`xfskde.io.stores.finalize_store` where a store holds arrays
#: made from its data (an OME-Zarr image's coarser levels and label images): how many chunks
#: each holds, so that one gone is found (a chunk of fill values is not written, so its absence
#: alone says nothing).
_CHUNKS_ATTR = "xfskde_chunks"
#: The completion record: one ``uint8`` entry per block, set once the block is written.
_BLOCKS = "xfskde_blocks"


def _read_record(group: zarr.Group) -> tuple[np.ndarray, np.ndarray]:
    """The completion record, and which of its entries could not be read.

    An entry that cannot be read (its checksum fails) counts as not written, so that a resume
    writes its block again; only when no entry at all can be read is the error raised.
    """
    record = group[_BLOCKS]
    try:
        return np.asarray(record[...]), np.zeros(record.shape, bool)
    except Exception as first:
        values = np.zeros(record.shape, np.uint8)
        damaged = np.zeros(record.shape, bool)
        for index in np.ndindex(*record.shape):
            try:
                values[index] = record[index]
            except Exception:
                damaged[index] = True
        if damaged.all():
            raise first
        return values, damaged


def _refuse_holes(group: zarr.Group, what: Any) -> None:
    """Refuse to read, as an image, a store whose write did not finish and whose blocks are not
    all written: the others would read as the fill value (0, NaN) — a labels store as
    background, a mask as no foreground. A store whose every block is written but whose write
    stopped after them (an OME-Zarr image before its labels and metadata) reads whole."""
    if group.attrs.get(_STATUS_ATTR) != "incomplete":
        return
    done = _read_record(group)[0] if _BLOCKS in group else np.zeros(0)
    if done.size and bool((done > 0).all()):
        return
    raise StoreIncompleteError(
        f"{what} is a store whose write did not finish ({int((done > 0).sum())} of "
        f"{done.size} blocks written; the others would read as 0): finish its write first, "
        "with resume=True (--resume)"
    )
