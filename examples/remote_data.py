"""Remote data: an image read from a URL and a store written to one, tile by tile.

Cluster users keep slides and scenes in object stores. Everything that takes a path in xfskde
(``open_image``, ``write_coefficients``, ``open_coefficients``, ``store_status``, the CLI) also
takes an fsspec URL — ``s3://``, ``gs://``, ``http(s)://`` (read-only), ``memory://``,
``file://`` — with ``storage_options`` for credentials and endpoints. The script

1. puts a tiled TIFF at a URL (by default ``memory://``, which needs no server; any other
   writable URL with ``--root``, e.g. ``s3://bucket/prefix``),
2. opens it with ``xfskde.open_image`` — the tasks read the tiles they need by byte ranges —
   and computes a local FS-KDE field,
3. writes the field to a store at a URL with ``write_coefficients``, reopens it, and checks
   that it equals the field computed from the same pixels in memory.

    python examples/remote_data.py [--root memory://xfskde-example] [--storage-options JSON]
"""

from __future__ import annotations

import argparse
import io
import json

import fsspec
import numpy as np
import tifffile
from skimage import data

import xfskde

PARAMS = {"order": 4, "window": "gaussian", "size": 3.0, "stride": 4}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="memory://xfskde-example", help="a writable URL")
    parser.add_argument(
        "--storage-options", type=json.loads, default=None,
        help='fsspec options of the URL as JSON, e.g. \'{"endpoint_url": "http://..."}\'',
    )  # fmt: skip
    args = parser.parse_args(argv)
    options = args.storage_options

    # 1. a tiled, compressed TIFF at the URL (tifffile writes it, fsspec puts its bytes there)
    pixels = data.camera()
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, pixels, tile=(128, 128), compression="zlib")
    fs, root = fsspec.core.url_to_fs(args.root, **(options or {}))
    fs.pipe(f"{root}/camera.tif", buffer.getvalue())
    image_url = f"{args.root}/camera.tif"

    # 2. read it lazily from the URL: each task reads its own tiles by byte ranges
    image = xfskde.open_image(image_url, storage_options=options, chunks=256)
    field = xfskde.local_fskde(image, **PARAMS)
    print(f"{image_url}: {dict(image.sizes)} in {image.data.npartitions} tasks")

    # 3. a resumable store at a URL, reopened and compared with the in-memory computation
    store_url = f"{args.root}/camera-fskde.zarr"
    blocks = xfskde.write_coefficients(field, store_url, storage_options=options, overwrite=True)
    back = xfskde.open_coefficients(store_url, storage_options=options)
    status = xfskde.io.store_status(store_url, storage_options=options)
    expected = xfskde.local_fskde(pixels, **PARAMS)
    largest = float(np.abs(back.values - expected).max())
    print(f"{store_url}: {blocks} blocks written, complete={status['complete']}, "
          f"largest difference from the in-memory field {largest:g}")  # fmt: skip
    return {"blocks": blocks, "complete": status["complete"], "largest_difference": largest}


if __name__ == "__main__":
    main()
