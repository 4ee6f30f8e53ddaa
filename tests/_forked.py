"""Scripts run as a new Python process would run them, forked from one that has imported the
library's dependencies already.

The examples and the docs' code blocks each run in a process of their own, as a user runs
them. Started with ``python script.py``, each paid 3-5 s before its first line did anything:
importing numpy, SciPy, scikit-learn (SciPy's statistics with it), Dask, distributed, xarray,
Zarr, numba and scikit-image. :class:`ForkedPython` starts one server process per test process
that imports those once and, for each script, forks a child that runs it as ``__main__`` in
the folder given, its output to files, and exits with its status — a process of its own, as
before, that finds those modules imported. The server imports xfskde itself too (every
script begins with ``import xfskde``), and nothing of it beyond what ``import xfskde``
imports: a script finds the package as a new process finds it. Measured: the examples' and
the docs' 33 runs 152.6 s -> 94.4 s on 2 cores. The server holds no thread when it forks:
it only imports.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import NamedTuple

#: The server: imports, then for each request (a JSON line: the script or code, its folder,
#: two output files) forks a child running it, and answers the child's pid, then its status.
SERVER = """
import json, os, runpy, sys, traceback

import dask.array, distributed, matplotlib, numba, numpy, scipy.ndimage, scipy.stats
import skimage.filters, sklearn.cluster, sklearn.covariance, sklearn.mixture, tifffile, xarray
import zarr
import xfskde

print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.chdir(request["cwd"])
        for fd, name in ((1, "stdout"), (2, "stderr")):
            out = os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, fd)
            os.close(out)
        sys.stdin.close()
        code = 0
        try:
            if "script" in request:
                sys.argv = [request["script"], *request["args"]]
                sys.path[0] = os.path.dirname(os.path.abspath(request["script"]))
                runpy.run_path(request["script"], run_name="__main__")
            else:
                sys.argv = ["-c", *request["args"]]
                sys.path[0] = ""
                exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
            if not isinstance(done.code, int | None):
                print(done.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class Finished(NamedTuple):
    """What :func:`subprocess.run` gives, as far as the tests read it."""

    returncode: int
    stdout: str
    stderr: str


class ForkedPython:
    """One server (:data:`SERVER`); :meth:`run` runs a script or code in a child of it."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(SERVER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout.readline().strip() == "ready"
        self._outputs = tempfile.TemporaryDirectory(prefix="xfskde-forked-")

    def _line(self, deadline: float | None) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], deadline)
        if not ready:
            raise subprocess.TimeoutExpired("forked python", deadline or 0)
        return self.proc.stdout.readline()

    def run(
        self,
        cwd: Path,
        *,
        script: Path | None = None,
        code: str | None = None,
        args: tuple[str, ...] = (),
        timeout: float = 120,
    ) -> Finished:
        """``python script args...`` or ``python -c code args...`` in ``cwd``, as
        :func:`subprocess.run` with ``capture_output=True, text=True, timeout=timeout``."""
        out, err = (Path(self._outputs.name) / name for name in ("stdout", "stderr"))
        request = {"cwd": str(cwd), "args": list(args), "stdout": str(out), "stderr": str(err)}
        request.update({"script": str(script)} if script is not None else {"code": code})
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        pid = int(self._line(10))
        try:
            status = int(self._line(timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._line(10)  # its status, after the kill
            raise
        return Finished(status, out.read_text(), err.read_text())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self._outputs.cleanup()
