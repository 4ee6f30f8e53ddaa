"""Handing the memory a process has freed back to the operating system between the phases of a
long computation.

glibc keeps the memory a program frees for reuse, in the arena of each thread that freed it,
and returns to the system only what lies at the top of a heap. After segmentation's fit (its
crops, tiles and features, computed on Dask's threads) the process of a 16384² slide of a coarse
texture held 1.49 GiB, of which 0.37 GiB was live; the labels' blocks then allocated on top of
that, and the command peaked at 1.98 GiB. ``malloc_trim(0)`` returns the free pages of every
arena (0.37 GiB left) in a few milliseconds. Other C libraries (macOS's, Windows', musl) have
no such call: there nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable
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
