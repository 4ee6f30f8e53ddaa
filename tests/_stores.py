"""Stores made as older or damaged versions of the library's would leave them."""

from __future__ import annotations

import json
from pathlib import Path


def without_checksums(store: Path) -> None:
    """The store as xfskde wrote it before it checksummed chunks: no ``crc32c`` codec in any
    array's metadata (its own and the root's consolidated copy), no checksum after any chunk."""

    def strip(metadata: dict) -> bool:
        if metadata["node_type"] != "array":
            return False
        codecs = metadata["codecs"]
        metadata["codecs"] = [c for c in codecs if c.get("name") != "crc32c"]
        return len(metadata["codecs"]) != len(codecs)

    root = json.loads((store / "zarr.json").read_text())
    for metadata in root["consolidated_metadata"]["metadata"].values():
        strip(metadata)
    (store / "zarr.json").write_text(json.dumps(root))
    for path in store.rglob("*/zarr.json"):
        metadata = json.loads(path.read_text())
        if strip(metadata):
            path.write_text(json.dumps(metadata))
            for chunk in (p for p in (path.parent / "c").rglob("*") if p.is_file()):
                chunk.write_bytes(chunk.read_bytes()[:-4])
