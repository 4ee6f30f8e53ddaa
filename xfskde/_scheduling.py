"""Compute Dask collections on a named scheduler, an address or a Client, with the progress bar
that suits it (Dask's ``ProgressBar`` locally, ``distributed.progress`` on a cluster).

**Failing and interrupting.** A computation that fails or is interrupted (Ctrl-C, or SIGTERM
turned into an interrupt by the command line) starts no further task. On the local thread pool
it returns only once the tasks already running have ended (a thread cannot be stopped half-way),
so that nothing is written behind the caller's back while it cleans up or reports; Dask's
process pool does the same by itself; on a cluster the pending tasks are cancelled.

**Addresses.** A scheduler address is checked before anything is computed: a name that is
neither a local scheduler nor an address (``"thread"``) is a
:class:`~xfskde.exceptions.ParameterError`, and an address that nothing answers on
(``tcp://127.0.0.1:1``) a :class:`ConnectionError` within :data:`CONNECT_TIMEOUT` seconds
(at once when the connection is refused), instead of distributed's 30 s of retries; one
where something else answers (a web server: a dashboard's port) is a :class:`ConnectionError`
saying so, not distributed's attempt to read its answer as a message (a ``MemoryError`` for an
HTTP ``400``, 2026-11), and a web address (``http://...:8787/status``, a dashboard's) a
:class:`~xfskde.exceptions.ParameterError` asking for the scheduler's.

**Clients, schedulers and workers that are not there.** A ``Client`` that is closed (passed as
``scheduler=``, or made Dask's scheduler with ``dask.config.set(scheduler=client)``) is a
:class:`~xfskde.exceptions.ParameterError` before anything is done (it was an
``AttributeError`` deep inside distributed). A scheduler that goes away while a computation
runs (its process killed, its machine or the network down) is a :class:`ConnectionError`
naming its address (a store's writer adds that ``resume`` finishes it), instead of
distributed's ``FutureCancelledError`` and the traceback of the client's cancelled
reconnection. A cluster with no worker is waited for (an adaptive one starts its workers when
it has tasks), but after :data:`NO_WORKERS_NOTICE` seconds the logger ``xfskde`` says, once,
that the computation waits for workers (the command line prints it on stderr).

**Versions.** Workers that run another xfskde than the client compute other numbers, or fail
in ways that name neither: :func:`check_workers` asks every worker (once per client and set
of workers, ``Client.get_versions``) and refuses another xfskde in one line, naming the
versions; other packages that differ (NumPy, Dask, Python ..., which distributed tolerates
with a warning of its own) are one :class:`distributed.versions.VersionMismatchWarning` line.

**Workers that die.** A task whose workers die as often as the scheduler allows (distributed's
``KilledWorker``: most often a worker out of memory) is a
:class:`~xfskde.exceptions.WorkerDiedError` naming the task and what to do.

**Workers short of memory.** distributed pauses a worker whose process holds more than 80 % of
its ``memory_limit``, and a paused worker starts no task until its memory falls — which the
memory of imported modules and compiled code never does: a computation on such workers waited
for ever, saying nothing (``import xfskde`` alone took 187 MiB of a worker's 286 MiB in
2026-11). So, before anything is submitted to a cluster, :func:`check_workers` has every worker
load xfskde, hand its freed memory back to the system and say what it holds, and refuses in one
line where no worker has room for what a task needs (:func:`xfskde._memory.task_need`): naming
the worker, its limit, what a task needs and what to do. While a computation runs, a watcher
looks at the workers every :data:`WATCH_EVERY` seconds: when every worker has been paused with
no task running for :data:`PAUSED_PATIENCE` seconds (their memory grew during the run), the
computation is cancelled and is a :class:`~xfskde.exceptions.WorkerDiedError` saying so.

**What is checked and watched.** What xfskde computes itself goes through :func:`compute` —
its writers, segmentation's fit, the command line's maps — and is checked and watched on
whatever cluster runs it: one named (a ``Client``, an address) or Dask's current
scheduler, the ``Client`` a user made (``Client(LocalCluster(...))``, ``Client("tcp://...")``
become Dask's default). A writer checks before it lays out or replaces its store
(:func:`check_room`), so that a refused ``overwrite`` leaves the old store as it was. The
``Client`` of :func:`connect` (the command line's ``--scheduler ADDRESS``) also watches what
Dask computes through it (``dask.compute``, ``.compute()``: :func:`_watched_get`); what a user
computes through a ``Client`` of their own (``field.compute()``, ``client.compute(labels)``) is
Dask's to run and wait for. What :func:`compute` returns from a cluster comes back in its
chunks and is put together in the caller's process, not on a worker
(:func:`_compute_on_cluster`): the workers' room is checked for chunks, not for whole results.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import sys
import threading
import time
import types
import uuid
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import dask
import dask.threaded

from ._memory import BLOCK_COPIES, largest_chunk, release_free_memory, task_need
from .exceptions import ParameterError, WorkerDiedError

__all__: list[str] = []

LOCAL_SCHEDULERS = ("threads", "processes", "synchronous", "sync", "single-threaded")
#: Seconds to wait for a scheduler address to answer (a refused connection fails at once).
CONNECT_TIMEOUT = 10.0
#: The schemes whose addresses are TCP host:port pairs that can be probed with a socket.
_TCP_SCHEMES = ("tcp", "tls", "ws", "wss")
#: Seconds every worker of a cluster may stay paused, with no task running, before a computation
#: on it is given up: distributed resumes a worker as soon as its memory falls (its results
#: spilled to disk, another client's released), which takes seconds.
PAUSED_PATIENCE = 30.0
#: Seconds between two looks at the workers while a computation runs on a cluster (one
#: ``scheduler_info`` each).
WATCH_EVERY = 2.0
#: Seconds a computation waits on a cluster with no worker before it says so (once).
NO_WORKERS_NOTICE = 5.0
#: The packages whose version on a worker must be the client's (their tasks are its code).
SAME_VERSION = ("xfskde",)
#: The other packages whose versions are compared (those distributed compares, and what
#: computes xfskde's numbers): a difference is a warning, as distributed's own is.
_COMPARED = ("scipy", "numba", "xarray", "zarr")
_MIB = 2**20
_LOG = logging.getLogger("xfskde")


def is_address(scheduler: Any) -> bool:
    """True for the address of a distributed scheduler (any string that is not a local name)."""
    return isinstance(scheduler, str) and scheduler not in LOCAL_SCHEDULERS


def check_address(address: str) -> None:
    """Refuse a scheduler string that is not an address, and an address nobody answers on.

    Raises
    ------
    ParameterError
        For a string that is neither a local scheduler nor ``scheme://host:port`` /
        ``host:port`` (a misspelt ``"thread"``), and for a web address (``http://``).
    ConnectionError
        If a TCP address refuses the connection, its host is unknown, or it does not answer
        within :data:`CONNECT_TIMEOUT` seconds.
    """
    if "://" in address:
        parts = urlsplit(address)
        scheme = parts.scheme
        if scheme in ("http", "https"):
            raise ParameterError(
                f"scheduler {address!r} is a web address (a dashboard's?): give the address of "
                f"the Dask scheduler itself, such as 'tcp://{parts.hostname or 'HOST'}:8786' "
                "(Client.scheduler.address, or what `dask scheduler` prints)"
            )
    else:
        parts, scheme = urlsplit(f"tcp://{address}"), "tcp"
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number
        host, port = None, None
    if "://" not in address and not re.fullmatch(r"[\w.\-\[\]:]+:\d+", address):
        host = None
    if scheme in _TCP_SCHEMES and (host is None or port is None):
        raise ParameterError(
            f"scheduler must be one of {', '.join(repr(s) for s in LOCAL_SCHEDULERS[:3])} or the "
            f"address of a Dask scheduler such as 'tcp://10.0.0.5:8786', got {address!r}"
        )
    if scheme not in _TCP_SCHEMES:
        return  # inproc://, ucx://: left to distributed
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            pass
    except socket.gaierror as exc:
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {address}: unknown host {host!r}"
        ) from exc
    except TimeoutError as exc:
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {address}: no answer within {CONNECT_TIMEOUT:g} s"
        ) from exc
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {reason}") from exc


async def _identify(address: str) -> None:
    """Connect to ``address`` and ask the scheduler who it is, as a Client would."""
    from distributed.comm import connect as open_comm

    comm = await open_comm(address, timeout=CONNECT_TIMEOUT)
    try:
        await comm.write({"op": "identity", "reply": True})
        await comm.read()
    finally:
        comm.abort()


def _check_scheduler(address: str) -> None:
    """Refuse an address where no Dask scheduler answers within :data:`CONNECT_TIMEOUT`, or
    where something else answers (a web server reads the message as a malformed request and
    says so, an answer distributed reads as a message's length: exabytes).

    distributed's own handshake waits without a limit for a peer that accepts the connection
    but never speaks (distributed 2026.8), so the exchange runs, bounded, in a thread of its
    own: a hung one is cancelled, and its socket closed, at the deadline.
    """
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            asyncio.run(asyncio.wait_for(_identify(address), CONNECT_TIMEOUT))
            outcome.append(None)
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=run, name="xfskde-check-scheduler", daemon=True)
    thread.start()
    thread.join(CONNECT_TIMEOUT + 5)
    error = outcome[0] if outcome else TimeoutError()
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        raise ConnectionError(
            f"no Dask scheduler answered at {address} within {CONNECT_TIMEOUT:g} s"
        ) from error
    if isinstance(error, OSError):
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {error}") from error
    if isinstance(error, Exception):  # an answer that is no Dask message: a MemoryError, ...
        raise ConnectionError(
            f"something answered at {address}, but not as a Dask scheduler does (a web server, "
            "a dashboard's port?): give the address of the Dask scheduler itself (its port is "
            "8786 unless chosen otherwise)"
        ) from error
    if error is not None:
        raise error


def connect(address: str) -> Any:
    """A ``distributed.Client`` connected to ``address``, after :func:`check_address` and a
    bounded exchange with the scheduler (something that answers but is no Dask scheduler is a
    :class:`ConnectionError` after :data:`CONNECT_TIMEOUT` seconds, not a hang), and after
    :func:`check_workers` (for a task of any blocks: :data:`xfskde._memory.TASK_BASE`). What
    is computed through it while it is the current client (``dask.compute``, ``.compute()``)
    is watched for workers paused for good (:func:`_watched_get`).

    Raises
    ------
    ParameterError
        Where no worker of the cluster has room for xfskde and a task.
    """
    check_address(address)
    _check_scheduler(address)
    from distributed import Client
    from distributed.versions import VersionMismatchWarning

    with warnings.catch_warnings():  # its table of versions: check_workers says it in a line
        warnings.simplefilter("ignore", VersionMismatchWarning)
        client = Client(address, timeout=CONNECT_TIMEOUT)
    client.get = types.MethodType(_watched_get, client)
    try:
        check_workers(client)
    except BaseException:
        client.close()
        raise
    return client


#: In a worker, what it held the first time :func:`_worker_memory` ran there (xfskde loaded).
_FIRST_HELD: list[int] = []


def _worker_memory(dask_worker: Any) -> dict[str, Any]:
    """What a worker holds, what it has grown by since xfskde was loaded there, and where
    distributed stops it, run on the worker (``Client.run``, which hands it the worker).
    Unpickling this function imports xfskde there, as a task would; the memory the worker has
    freed is handed back first, so that it holds what is live."""
    import dask as worker_dask

    release_free_memory()
    manager = dask_worker.memory_manager
    pause = manager.memory_pause_fraction
    terminate = worker_dask.config.get("distributed.worker.memory.terminate", False)
    stops = [(f, word) for f, word in ((pause, "pauses"), (terminate, "is restarted")) if f]
    fraction, stop = min(stops) if stops else (None, "")
    held = int(dask_worker.monitor.get_process_memory())
    if not _FIRST_HELD:
        _FIRST_HELD.append(held)
    return {
        "rss": held,
        "grown": max(0, held - _FIRST_HELD[0]),
        "limit": manager.memory_limit,
        "fraction": fraction,
        "stop": stop,
        "threads": dask_worker.state.nthreads,
    }


def _mib(size: float) -> str:
    return f"{size / _MIB:.0f} MiB"


#: The (client, workers) whose versions :func:`check_versions` has compared.
_VERSIONS_CHECKED: set[tuple[str, frozenset[str]]] = set()


def _differences(versions: dict[str, Any], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each package of ``names`` whose version on a worker (or, for those distributed
    compares there, on the scheduler) is not the client's: where it is which version. A
    version nobody can say (a package not installed, xfskde run from its source) is left
    out: the import check, or the tasks, say what is missing."""
    from distributed.versions import scheduler_relevant_packages

    mine = versions["client"]["packages"]
    others = {address: (info or {}).get("packages") or {}
              for address, info in versions["workers"].items()}  # fmt: skip
    if isinstance(versions.get("scheduler"), dict):
        scheduler = versions["scheduler"].get("packages") or {}
        others["the scheduler"] = {k: v for k, v in scheduler.items()
                                   if k in scheduler_relevant_packages}  # fmt: skip
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        if mine.get(name) is None:
            continue
        for where, packages in others.items():
            theirs = packages.get(name)
            if theirs is not None and theirs != mine[name]:
                found.setdefault(name, {})[where] = theirs
    return found


def _versions_line(name: str, mine: str, where: dict[str, Any]) -> str:
    """``xfskde 0.0.9 on tcp://...:4 (and 2 more), 0.1.0 here``."""
    shown = sorted(where.items())
    said = ", ".join(f"{version} on {place}" for place, version in shown[:2])
    more = len(shown) - 2
    return f"{name} {said}{f' and {more} more' if more > 0 else ''}, {mine} here"


def check_versions(client: Any, workers: Sequence[str] = ()) -> None:
    """Refuse a cluster whose workers run another xfskde than this client (its tasks are the
    client's code by name: another version computes other numbers, or fails in ways that
    name neither), and warn, in one line, of any other package that differs (those
    distributed compares, and the others that compute xfskde's numbers). Asked once per
    client and set of ``workers`` (their addresses): one ``Client.get_versions``.

    Raises
    ------
    ImportError
        Naming the versions of xfskde, where and here, and what to do.
    """
    from distributed.versions import VersionMismatchWarning, optional_packages, required_packages

    key = (str(getattr(client, "id", id(client))), frozenset(workers))
    if not workers or key in _VERSIONS_CHECKED:
        return
    try:
        versions = client.get_versions(packages=[*SAME_VERSION, *_COMPARED])
    except Exception:  # a scheduler that cannot say: the tasks will
        return
    _VERSIONS_CHECKED.add(key)
    mine = versions["client"]["packages"]
    compared = ["python", *SAME_VERSION, *required_packages, *optional_packages, *_COMPARED]
    found = _differences(versions, list(dict.fromkeys(compared)))
    same = [_versions_line(n, mine[n], found.pop(n)) for n in SAME_VERSION if n in found]
    if same:
        raise ImportError(
            f"the workers of the Dask cluster run another version of xfskde than this client "
            f"({'; '.join(same)}): install the same version where the workers run (a task of "
            "another version computes other numbers, or fails)"
        )
    if found:
        said = "; ".join(_versions_line(n, mine[n], w) for n, w in found.items())
        warnings.warn(
            f"the Dask cluster runs other versions of packages than this client ({said}): "
            "the same versions everywhere are safest (distributed runs the tasks anyway)",
            VersionMismatchWarning,
            stacklevel=3,
        )


def check_workers(client: Any, collections: Sequence[Any] = ()) -> None:
    """Refuse to compute ``collections`` on the cluster of ``client`` where no worker has
    room, below the memory at which distributed pauses it (or restarts it), for what it holds
    with xfskde loaded and what its threads' tasks need (:func:`xfskde._memory.task_need`,
    from the largest chunk of the collections' graphs; none given: the tasks' fixed part).
    Workers without a ``memory_limit`` always have room.

    Raises
    ------
    ParameterError
        Naming the roomiest worker, its limit, what a task needs there, and what to do.
    ImportError
        Where the workers cannot import xfskde (nor, then, run any of its tasks), or run
        another version of it (:func:`check_versions`).
    """
    chunk = largest_chunk(collections)
    states = client.run(_worker_memory, on_error="return")
    check_versions(client, list(states))
    short = []
    for address, state in states.items():
        if isinstance(state, ImportError):
            raise ImportError(
                f"the workers of the Dask cluster cannot import xfskde ({state}): install it "
                "in the environment they run in"
            )
        if isinstance(state, BaseException) or not state["limit"] or not state["fraction"]:
            return  # a worker that cannot say, or that has no limit: it may run the tasks
        stops = state["limit"] * state["fraction"]
        need = task_need(chunk, state["threads"], state["grown"])
        short.append((stops - state["rss"] - need, address, state, stops, need))
    if not short or max(short)[0] >= 0:
        return
    _, address, state, stops, need = max(short)
    fixed = task_need(0, grown=state["grown"])
    parts = f"{_mib(fixed)} for the tasks' code and buffers" + ("" if chunk else ", before blocks")
    if chunk:
        each = f"each of its {state['threads']} threads" if state["threads"] > 1 else "its thread"
        parts += f" and, for {each}, {BLOCK_COPIES} times the largest chunk, {_mib(chunk)}"
    at_least = -(-(state["rss"] + need) / state["fraction"] // (100 * _MIB)) * 100 * _MIB
    smaller = (
        " or compute in smaller chunks= (a block of half the side needs a quarter of the memory)"
        if chunk and state["rss"] + fixed < stops
        else ""
    )
    raise ParameterError(
        f"the workers of the Dask cluster have too little memory for xfskde's tasks: "
        f"{address}{', the roomiest,' if len(short) > 1 else ''} {state['stop']} at {_mib(stops)} "
        f"({state['fraction']:.0%} of its memory_limit of {_mib(state['limit'])}), holds "
        f"{_mib(state['rss'])} with xfskde loaded, and a task needs about {_mib(need)} more "
        f"({parts}): give each worker a memory_limit of at least {_mib(at_least)} (dask worker "
        f"--memory-limit, LocalCluster(memory_limit=)){smaller}"
    )


def _in_task() -> bool:
    """Whether this thread runs a task on a distributed worker (where Dask computes through
    the worker's own client, and a check of the workers, or a watch, would wait on itself)."""
    worker = sys.modules.get("distributed.worker")
    return worker is not None and bool(getattr(worker.thread_state, "key", False))


def _cluster_client(scheduler: Any) -> Any:
    """The ``distributed.Client`` that runs the graph (``scheduler`` None: Dask's current
    scheduler, the default Client if any), or None for Dask's local schedulers and inside a
    task.

    Raises
    ------
    ParameterError
        For a Client that is closed (distributed failed on it with an ``AttributeError``).
    """
    if isinstance(scheduler, str) or _in_task():
        return None
    get = dask.base.get_scheduler(scheduler=scheduler)
    owner = getattr(get, "__self__", scheduler)
    if not (hasattr(owner, "gather") and hasattr(owner, "compute")):
        return None
    if getattr(owner, "status", None) in ("closing", "closed"):
        named = (
            "scheduler= is"
            if scheduler is not None
            else "Dask's current scheduler (dask.config.set(scheduler=client)) is"
        )
        raise ParameterError(
            f"{named} a distributed Client that is closed: pass an open Client (or the "
            "scheduler's address) as scheduler=, or leave scheduler= out to compute locally"
        )
    return owner


def check_room(collections: Sequence[Any], scheduler: Any = None) -> None:
    """:func:`check_workers` for ``collections`` on the cluster that ``scheduler`` (a Client,
    or None for Dask's current scheduler: the default Client if any) runs them on; nothing for
    local schedulers. A writer calls it before it touches its store.

    Raises
    ------
    ParameterError
        Where no worker of that cluster has room for a task of ``collections``.
    """
    client = _cluster_client(scheduler)
    if client is not None:
        check_workers(client, collections)


def refuse_unshared_folder(folder: str | os.PathLike, scheduler: Any = None) -> None:
    """Refuse a local ``folder`` to write in that some worker of the cluster running
    ``scheduler`` (a Client, or None for the active one) does not share: workers started on
    other machines write their blocks themselves and found no file or store there. A file the
    client puts in the folder for a moment must be seen by every worker (the folder's name
    alone could be another folder on their machine). Nothing for local schedulers.

    Raises
    ------
    ParameterError
        Naming the workers (at most three) and what to do.
    """
    client = _cluster_client(scheduler)
    if client is None:
        return
    os.makedirs(folder, exist_ok=True)
    marker = os.path.join(os.fspath(folder), f".xfskde-shared-{uuid.uuid4().hex}")
    with open(marker, "w"):
        pass
    try:
        seen = client.run(os.path.exists, marker)
    finally:
        os.remove(marker)
    missing = sorted(address for address, exists in seen.items() if not exists)
    if missing:
        more = len(missing) - 3
        shown = ", ".join(missing[:3]) + (f" and {more} more" if more > 0 else "")
        raise ParameterError(
            f"the cluster's workers at {shown} do not see {os.fspath(folder)} (they run on "
            "machines that do not share it), where they would write: write to a folder every "
            "worker shares, or to a URL (s3://, gs://)"
        )


def runs_on_cluster(scheduler: Any = None) -> bool:
    """Whether ``scheduler`` (None: Dask's current one) runs tasks on a distributed cluster,
    where a task that is already running cannot be waited for once its result is not wanted."""
    return is_address(scheduler) or _cluster_client(scheduler) is not None


def _compute_local(collections: Sequence[Any], scheduler: Any) -> list:
    """``dask.compute`` on a local scheduler; on the thread pool, one of our own, so that a
    failure or an interrupt returns only once the tasks already running have ended."""
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    if dask.base.get_scheduler(scheduler=scheduler) is not dask.threaded.get:
        return list(dask.compute(*collections, **kwargs))
    workers = dask.config.get("num_workers", None) or dask.threaded.CPU_COUNT
    pool = ThreadPoolExecutor(workers, thread_name_prefix="xfskde")
    try:
        results = list(dask.compute(*collections, pool=pool, **kwargs))
    except BaseException:
        # no new task starts; the running ones end (a second Ctrl-C stops the wait)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=False)
    return results


class _GatherCutShort(logging.Filter):
    """Leaves out asyncio's "Task exception was never retrieved" for distributed's ``AllExit``:
    a gather cut short (Ctrl-C, SIGTERM, a failed task) leaves one waiting task per future in
    the client's loop, which ends with ``AllExit`` when its future is cancelled and which
    nobody awaits any more — a multi-line traceback before the command's one line, about
    nothing that went wrong. Everything else asyncio logs is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return type(exc).__name__ != "AllExit"


_GATHER_CUT_SHORT = _GatherCutShort()


def _worker_died(exc: BaseException) -> str:
    """The one line for distributed's ``KilledWorker``, and what to do (its task's key is
    Dask's fused name of every step, which says nothing to a user)."""
    worker = getattr(getattr(exc, "last_worker", None), "address", None)
    tries = getattr(exc, "allowed_failures", None)
    tried = (
        "each time"
        if not isinstance(tries, int)
        else "once"
        if tries == 0
        else f"{tries + 1} times"
    )
    last = f", the last on {worker}" if worker else ""
    return (
        f"a worker of the Dask cluster died while it computed a block (KilledWorker: killed "
        f"{tried}{last}), most often for lack of memory: give the workers more memory (dask "
        "worker --memory-limit) or compute in smaller chunks="
    )


class _PausedWatch:
    """While it is entered, a thread that looks at the workers of ``client``'s cluster every
    :data:`WATCH_EVERY` seconds and, once no worker has run a task and some (or all) have been
    paused for :data:`PAUSED_PATIENCE` seconds while ``futures`` are not all done, cancels them
    (which ends the wait for them) and keeps what it saw in :attr:`verdict`, the one line to
    raise. A cluster with no worker at all is waited for: an adaptive one starts its workers
    when it has tasks (a batch queue's may take minutes); after :data:`NO_WORKERS_NOTICE`
    seconds without one, the logger ``xfskde`` says so, once (a warning)."""

    def __init__(self, client: Any, futures: Sequence[Any]) -> None:
        self.client, self.futures = client, futures
        self.address = _scheduler_address(client)
        self.verdict: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="xfskde-paused", daemon=True)

    def __enter__(self) -> _PausedWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(WATCH_EVERY + CONNECT_TIMEOUT)  # not for ever: a look may hang

    def _paused(self) -> tuple[dict[str, Any], int | None]:
        """The paused workers and how many workers there are (None: the scheduler did not
        say), where no worker runs a task and some are paused (those hold the tasks not done:
        distributed moves none of them to a worker with room, which idles); else nothing."""
        try:
            workers = self.client.scheduler_info(n_workers=-1)["workers"]
        except Exception:  # the client closing, the scheduler gone: the wait says so itself
            return {}, None
        if any(w.get("metrics", {}).get("task_counts", {}).get("executing")
               for w in workers.values()):  # fmt: skip
            return {}, len(workers)
        paused = {a: w for a, w in workers.items() if w.get("status") == "paused"}
        return paused, len(workers)

    def _watch(self) -> None:
        since, empty_since, said = None, time.monotonic(), False
        while not self._done.wait(WATCH_EVERY):
            if all(future.done() for future in self.futures):
                return
            paused, total = self._paused()
            if total != 0:
                empty_since = time.monotonic()
            elif not said and time.monotonic() - empty_since >= NO_WORKERS_NOTICE:
                said = True
                _LOG.warning(_no_workers_line(self.address, time.monotonic() - empty_since))
            if not paused:
                since = None
                continue
            since = time.monotonic() if since is None else since
            if time.monotonic() - since >= PAUSED_PATIENCE:
                self.verdict = _paused_line(paused, total)
                self.client.cancel(self.futures, reason="xfskde: workers paused", msg=self.verdict)
                return


def _scheduler_address(client: Any) -> str:
    """The address of ``client``'s scheduler, or words for it where it cannot say."""
    with contextlib.suppress(Exception):
        return str(client.scheduler.address)
    return "its address"


def _no_workers_line(address: str, waited: float) -> str:
    """The one line of a computation waiting on a cluster with no worker."""
    return (
        f"waiting for workers: the Dask cluster at {address} has had no worker for "
        f"{waited:.0f} s (an adaptive cluster starts them once it has tasks): start some "
        f"(dask worker {address}), or interrupt (Ctrl-C) to stop"
    )


def _scheduler_lost(client: Any, exc: BaseException) -> bool:
    """Whether ``exc``, which ended a wait on ``client``, says that the client lost its
    scheduler (its futures cancelled with distributed's "scheduler-connection-lost"; the
    client reconnecting, or closed since)."""
    if isinstance(exc, KeyboardInterrupt):
        return False
    reasons = {getattr(exc, "reason", None)}
    for group in getattr(exc, "error_groups", ()):
        reasons.add(getattr(group, "reason", None))
    lost = getattr(client, "status", None) in ("connecting", "closing", "closed")
    return lost or "scheduler-connection-lost" in reasons


def _scheduler_lost_line(address: str) -> str:
    """The one line for a computation whose scheduler went away."""
    return (
        f"the Dask scheduler at {address} went away during the computation (its process "
        "stopped or killed, or its machine or the network down): start the cluster again and "
        "run again"
    )


class _CancelledReconnection(logging.Filter):
    """Leaves out distributed's ERROR record, with its traceback, of a ``CancelledError`` in
    the client's attempt to reconnect to a scheduler gone away: closing that client cancels
    the attempt, which distributed logs as a fault after the computation's one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, asyncio.CancelledError)


_CANCELLED_RECONNECTION = _CancelledReconnection()


def _paused_line(workers: dict[str, Any], total: int | None = None) -> str:
    """The one line for a computation whose ``workers`` stayed paused, no task running on any
    of the ``total`` (default: those paused; at most three named)."""
    shown = []
    for address, worker in sorted(workers.items())[:3]:
        memory, limit = worker.get("metrics", {}).get("memory"), worker.get("memory_limit")
        held = (
            f" with {_mib(memory)} of its memory_limit of {_mib(limit)}" if memory and limit else ""
        )
        shown.append(f"{address}{held}")
    more = len(workers) - len(shown)
    named = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    total = len(workers) if total is None else total
    who = (
        "every worker of the Dask cluster"
        if total <= len(workers)
        else f"{len(workers)} of the {total} workers of the Dask cluster, holding the tasks "
        "not done (the others idle: distributed moves no task off a paused worker),"
    )
    return (
        f"{who} stayed paused for lack of memory, with no task "
        f"running, for {PAUSED_PATIENCE:g} s ({named}): distributed starts no task on a worker "
        "above its pause fraction of its memory_limit (80 % unless configured), and the "
        "computation could not finish; give the workers more memory (dask worker "
        "--memory-limit) or compute in smaller chunks="
    )


def _gather(client: Any, futures: Sequence[Any], packed: Any, progress: bool = False) -> Any:
    """The results ``packed`` of ``futures`` on ``client``'s cluster, waited for with the
    progress bar if ``progress``, watched for workers paused for good (:class:`_PausedWatch`).
    A failure or an interrupt cancels the futures not done.

    Raises
    ------
    WorkerDiedError
        If a task's workers died as often as the scheduler allows, or every worker stayed
        paused.
    ConnectionError
        If the scheduler went away (naming its address).
    """
    with _PausedWatch(client, futures) as watch:
        try:
            if progress:
                from distributed import progress as show_progress

                show_progress(futures)
            return client.gather(packed)
        except BaseException as exc:
            logging.getLogger("asyncio").addFilter(_GATHER_CUT_SHORT)  # once: a set
            client.cancel(futures)  # nothing more starts; running tasks end on their own
            if watch.verdict is not None:
                raise WorkerDiedError(watch.verdict) from exc
            if type(exc).__name__ == "KilledWorker":
                raise WorkerDiedError(_worker_died(exc)) from exc
            if _scheduler_lost(client, exc):
                logging.getLogger("distributed.client").addFilter(_CANCELLED_RECONNECTION)
                raise ConnectionError(_scheduler_lost_line(watch.address)) from exc
            raise


def _watched_get(client: Any, dsk: Any, keys: Any, *args: Any, **kwargs: Any) -> Any:
    """``client.get`` — what ``dask.compute`` and ``.compute()`` call while ``client`` is the
    current client — waiting as :func:`_gather` does: a computation whose workers all stay
    paused, or whose task killed its workers, is a :class:`~xfskde.exceptions.WorkerDiedError`
    instead of a wait for ever, or an internal error. Bound to the client of :func:`connect`
    (whose class stays ``distributed.Client``: code that asks what the scheduler is still
    sees one)."""
    from distributed.client import futures_of
    from distributed.worker import thread_state

    get = type(client).get
    if not kwargs.get("sync", True) or client.asynchronous or getattr(thread_state, "key", False):
        return get(client, dsk, keys, *args, **kwargs)
    for waiting in ("sync", "asynchronous", "direct"):  # the gather's, which is ours here
        kwargs.pop(waiting, None)
    packed = get(client, dsk, keys, *args, sync=False, **kwargs)
    futures = futures_of(packed)
    try:
        return _gather(client, futures, packed)
    finally:
        for future in futures:
            future.release()


def _nested(keys: Any, futures: dict[Any, Any]) -> Any:
    """``keys`` (a key, or nested lists of keys: a collection's ``__dask_keys__``) with each key
    replaced by its future in ``futures``."""
    if isinstance(keys, list):
        return [_nested(key, futures) for key in keys]
    return futures[keys]


def _compute_on_cluster(client: Any, collections: Sequence[Any], progress: bool) -> list:
    """The results of ``collections`` computed on ``client``'s cluster, each assembled here from
    its gathered parts (its chunks) rather than on a worker.

    ``Client.compute`` assembles a collection's result in one more task on a worker, which then
    holds the whole result and every part of it at once: a 72 MiB field gathered from a worker
    of 500 MB, whose tasks need 244 MiB, killed it (2026-12). Here the worker holds only parts,
    each of which the check of the workers counted (:func:`check_workers`), and the client,
    which receives the result anyway, puts them together (Dask's ``__dask_postcompute__``).
    """
    from distributed.client import futures_of

    persisted = client.persist(list(collections))
    futures = futures_of(persisted)
    by_key = {future.key: future for future in futures}
    packed = [_nested(collection.__dask_keys__(), by_key) for collection in persisted]
    try:
        parts = _gather(client, futures, packed, progress)
    finally:
        for future in futures:
            future.release()
    finished = []
    for collection, part in zip(persisted, parts, strict=True):
        finish, extra = collection.__dask_postcompute__()
        finished.append(finish(part, *extra))
    return finished


def compute(
    collections: Sequence[Any], scheduler: Any = None, progress: bool = False, check: bool = True
) -> list:
    """Compute ``collections`` together on ``scheduler`` and return their results (those that
    are no Dask collection as they are): the one place where xfskde computes (its writers,
    segmentation's fit, the command line).

    ``scheduler`` is None (Dask's current one: the default Client, if any — a Client of the
    user's own included), a local scheduler name, a ``distributed.Client`` or a scheduler
    address (connected to for this call, see :func:`connect`). On a cluster the workers are
    checked first (:func:`check_workers`; ``check=False`` where the caller has just done it,
    :func:`check_room`) and watched while the tasks run (:class:`_PausedWatch`).

    Raises
    ------
    ParameterError
        On a cluster none of whose workers has room for a task (:func:`check_workers`),
        before anything is submitted.
    WorkerDiedError
        On a cluster, if a task's workers died as often as the scheduler allows, or if every
        worker stayed paused for lack of memory for :data:`PAUSED_PATIENCE` seconds.
    ConnectionError
        On a cluster whose scheduler went away during the computation.
    ImportError
        On a cluster whose workers run another version of xfskde (:func:`check_versions`).
    """
    results = list(collections)
    lazy = [i for i, item in enumerate(results) if dask.is_dask_collection(item)]
    if len(lazy) < len(results):  # what is in memory already is returned as it is
        values = compute([results[i] for i in lazy], scheduler, progress, check)
        for i, value in zip(lazy, values, strict=True):
            results[i] = value
        return results
    if not results:
        return results
    if is_address(scheduler):
        with connect(scheduler) as client:
            return compute(results, client, progress, check)
    client = _cluster_client(scheduler)
    if client is not None:
        if check:
            check_workers(client, results)
        return _compute_on_cluster(client, results, progress)
    if not progress:
        return _compute_local(results, scheduler)
    from dask.diagnostics import ProgressBar

    with ProgressBar(out=sys.stderr):  # stdout is for results (a pipe, a notebook cell's value)
        return _compute_local(results, scheduler)
