"""Handing the memory a process has freed back to the operating system between the phases of a
long computation.

glibc keeps the memory a program frees for reuse, in the arena of each thread that freed it,
and returns to the system only what lies at the top of a heap. After segmentation's fit (its
crops, tiles and features, computed on Dask's threads) the process of a 16384² slide of a coarse
texture held 1.49 GiB, of which 0.37 GiB was live; the labels' blocks then allocated on top of
that, and the command peaked at 1.98 GiB. ``malloc_trim(0)`` returns the free pages of every
arena (0.37 GiB left) in a few milliseconds. Other C libraries (macOS's, Windows', musl) have
no such call: there nothing is done.

**What a task needs in a worker.** A worker of a Dask cluster is paused by distributed once its
process holds more than 80 % of its ``memory_limit`` (and restarted at 95 %); a paused worker
starts no task until its memory falls, which memory that no task holds (the imported modules,
the compiled loops) never does. :func:`task_need` estimates what a worker needs to run the
tasks of a graph beside what it already holds, from the largest chunk of any of the graph's
arrays (Dask records each layer's chunk shape and dtype): :data:`TASK_BASE` once, and
:data:`BLOCK_COPIES` times that chunk for each thread. Measured in a fresh worker of one thread,
xfskde imported (peak RSS over the RSS before the first task, numba's cache warm): the
coefficients of order 8 (9 complex64 a pixel) took 95, 203 and 635 MiB in blocks of 512², 1024²
and 2048² (chunks of 18, 72 and 288 MiB: 60 MiB and twice the chunk); segmentation 117–140 MiB
for a grey image (a largest chunk of 4 MiB), 214–234 MiB for an RGB one (12 MiB), in blocks of
256² to 1024². A worker whose numba cache is cold compiles the loops in its first task: about
100 MiB more, once. It is an estimate: the runs that pass it are still watched
(:mod:`xfskde._scheduling`).
"""

from __future__ import annotations

import ctypes
import functools
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__: list[str] = []


@functools.cache
def _malloc_trim() -> Callable[[int], Any] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # the C library the interpreter runs on
    except (AttributeError, OSError):  # musl: no malloc_trim
        return None


def release_free_memory() -> bool:
    """Return the memory this process has freed to the operating system, where the C library
    can (glibc's ``malloc_trim(0)``); True if it could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


#: What a worker needs to run xfskde's tasks besides their blocks: the compiled loops that numba
#: loads, dask.array's modules and the buffers of a block's reading and writing (60 MiB
#: measured for the coefficients; segmentation's feature planes take more of a small block).
TASK_BASE = 100 * 2**20
#: How many times its largest chunk a task holds at once: its input and its result, and their
#: temporaries (1.9–2.0 times measured for the coefficients, the largest chunk of their graph).
BLOCK_COPIES = 2


def largest_chunk(collections: Iterable[Any]) -> int:
    """The bytes of the largest chunk of any array in the graphs of ``collections`` (Dask
    collections; their layers record their chunk shape and dtype), 0 where none says."""
    largest = 0
    for collection in collections:
        graph = collection.__dask_graph__()
        for layer in getattr(graph, "layers", {}).values():
            notes = getattr(layer, "collection_annotations", None) or {}
            shape, dtype = notes.get("chunksize"), notes.get("dtype")
            itemsize = getattr(dtype, "itemsize", None)
            if shape is None or not isinstance(itemsize, int):
                continue
            largest = max(largest, math.prod(int(side) for side in shape) * itemsize)
    return largest


def task_need(chunk: int, threads: int = 1, grown: int = 0) -> int:
    """The bytes a worker of ``threads`` threads needs, beside what it holds already, to run
    tasks whose largest chunk holds ``chunk`` bytes: :data:`TASK_BASE`, less the ``grown``
    bytes the worker has taken since xfskde was loaded there (the code earlier tasks loaded
    stays), and :data:`BLOCK_COPIES` times the chunk for each thread."""
    return max(0, TASK_BASE - grown) + threads * BLOCK_COPIES * chunk
