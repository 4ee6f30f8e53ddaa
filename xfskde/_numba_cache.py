"""Where numba caches xfskde's compiled loops: the user's cache folder, never the package's.

numba's ``cache=True`` writes machine code next to the source, into the package's
``__pycache__``, whenever that folder is writable — inside ``site-packages`` for a regular
install. Those files are not in the install's record, so ``pip install -e`` (or an uninstall)
leaves a ``site-packages/xfskde/`` folder holding only them, which Python then imports as an
empty namespace package instead of the editable checkout. This module registers, ahead of
numba's own locators, one that puts the cache of functions defined in xfskde's files into the
user-wide cache (``~/.cache/numba/<folder>_<hash of the source folder>`` on Linux, following
``XDG_CACHE_HOME``), keyed by the source folder so that an installed and an editable copy never
share an entry. A ``NUMBA_CACHE_DIR`` set by the user still wins, and where the user cache is
not writable numba's own locators take over as before.

:mod:`xfskde` imports this module first, before any module that compiles.
"""

from __future__ import annotations

import os
from typing import Any

from numba.core import caching, config

__all__: list[str] = []

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# public in recent numba; numba 0.61 (the oldest xfskde supports) names it with an underscore
_UserWideCacheLocator = (
    caching.UserWideCacheLocator
    if hasattr(caching, "UserWideCacheLocator")
    else caching._UserWideCacheLocator
)


class _XfskdeCacheLocator(_UserWideCacheLocator):
    """numba's user-wide cache locator, claiming only the functions of xfskde's own files."""

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if config.CACHE_DIR or not os.path.abspath(py_file).startswith(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)


def _install() -> None:
    locators = getattr(caching.CacheImpl, "_locator_classes", None)
    if isinstance(locators, list) and _XfskdeCacheLocator not in locators:
        locators.insert(0, _XfskdeCacheLocator)


_install()
