"""Compute Dask collections on a named scheduler, an address or a Client, with the progress bar
that suits it (Dask's ``ProgressBar`` locally, ``distributed.progress`` on a cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dask

__all__: list[str] = []

LOCAL_SCHEDULERS = ("threads", "processes", "synchronous", "sync", "single-threaded")


def is_address(scheduler: Any) -> bool:
    """True for the address of a distributed scheduler (any string that is not a local name)."""
    return isinstance(scheduler, str) and scheduler not in LOCAL_SCHEDULERS


def _cluster_client(scheduler: Any) -> Any:
    """The ``distributed.Client`` that runs the graph, or None for Dask's local schedulers."""
    if isinstance(scheduler, str):
        return None
    get = dask.base.get_scheduler(scheduler=scheduler)
    owner = getattr(get, "__self__", scheduler)
    return owner if hasattr(owner, "gather") and hasattr(owner, "compute") else None


def compute(collections: Sequence[Any], scheduler: Any = None, progress: bool = False) -> list:
    """Compute ``collections`` together on ``scheduler`` and return their results.

    ``scheduler`` is None (Dask's current one: the active Client, if any), a local scheduler
    name, a ``distributed.Client`` or a scheduler address (connected to for this call).
    """
    if is_address(scheduler):
        from distributed import Client

        with Client(scheduler) as client:
            return compute(collections, client, progress)
    client = _cluster_client(scheduler)
    if client is not None:
        futures = client.compute(list(collections))
        if progress:
            from distributed import progress as show_progress

            show_progress(futures)
        return client.gather(futures)
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    if not progress:
        return list(dask.compute(*collections, **kwargs))
    from dask.diagnostics import ProgressBar

    with ProgressBar():
        return list(dask.compute(*collections, **kwargs))
