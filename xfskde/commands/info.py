"""``xfskde info STORE``: shape, chunks, parameters and completeness of a store.

Any store xfskde writes: coefficients (``xfskde coefficients``) or labels (``xfskde segment``).
"""

from __future__ import annotations

import argparse

from ..io import open_blocks, store_status


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="describe a coefficient or label store",
        description=__doc__.split(":", 1)[1].strip(),
    )
    parser.add_argument("store", help="a Zarr store written by xfskde")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = store_status(args.store)
    field = open_blocks(args.store, allow_incomplete=True)
    chunks = field.encoding.get("chunks") or field.encoding.get("preferred_chunks")
    print(f"store     {args.store}")
    print(f"variable  {field.name}")
    state = "complete" if status["complete"] else "INCOMPLETE"
    print(f"status    {state} ({status['blocks_done']}/{status['blocks_total']} blocks)")
    print(f"shape     {dict(field.sizes)}")
    print(f"dtype     {field.dtype}")
    print(f"chunks    {chunks}")
    for key, value in field.attrs.items():
        if key != "coordinates":
            print(f"{key:<9} {value}")
    return 0 if status["complete"] else 1
