"""Real local servers for the remote-data tests: an S3 server (moto's server mode) and an HTTP
file server that honours byte ranges, as S3, GCS and every static web server do.

Both listen on 127.0.0.1 on a free port, in a thread of the test process; clients reach them
over real sockets (s3fs, aiohttp, workers of a LocalCluster), never through a mocked client.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """The standard library's file server, answering ``Range: bytes=a-b`` with 206."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[override]
        wanted = _RANGE.fullmatch(self.headers.get("Range", "").strip())
        path = self.translate_path(self.path)
        if wanted is None or not os.path.isfile(path):
            return super().send_head()
        with open(path, "rb") as file:
            data = file.read()
        first, last = wanted.groups()
        if first:
            start, stop = int(first), min(int(last) + 1 if last else len(data), len(data))
        else:  # the last N bytes
            start, stop = max(0, len(data) - int(last)), len(data)
        if start >= len(data):
            self.send_error(416)
            return None
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{len(data)}")
        self.send_header("Content-Length", str(stop - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(data[start:stop])


class _WholeFileHandler(http.server.SimpleHTTPRequestHandler):
    """The standard library's file server as it is (``python -m http.server``): every request,
    a ``Range`` one too, is answered with the whole file."""

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_server(directory: Path, ranges: bool = True, handler: type | None = None) -> Iterator[str]:
    """Serve ``directory`` read-only over HTTP; yields the base URL (``http://127.0.0.1:N``).
    ``ranges=False`` serves whole files only, as ``python -m http.server`` does; ``handler``:
    a handler class of a test's own (a subclass of the range server's that logs or fails)."""
    kind = handler or (_RangeHandler if ranges else _WholeFileHandler)
    handler = functools.partial(kind, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def s3_server() -> Iterator[dict]:
    """A moto S3 server; yields the s3fs storage options that reach it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield {
            "key": "testing",
            "secret": "testing",
            "endpoint_url": f"http://{host}:{port}",
            "client_kwargs": {"region_name": "eu-west-1"},
        }
    finally:
        server.stop()


def read_while_failing(image: Any, answer: dict, fault: str) -> str:
    """The message of the :class:`~xfskde.exceptions.ImageReadError` that reading ``image``
    raises while its server (a handler whose ``answer`` dict it reads) fails with ``fault``;
    the server answers again afterwards."""
    import pytest

    from xfskde.exceptions import ImageReadError

    answer["now"] = fault
    try:
        with pytest.raises(ImageReadError) as raised:
            image.values  # noqa: B018
    finally:
        answer.clear()
    return str(raised.value)
