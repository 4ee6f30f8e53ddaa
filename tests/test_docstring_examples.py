"""The Examples sections of the docstrings run and print what they say.

The API reference shows them as they are written, so each ``>>>`` line is run by doctest in the
module's namespace (a line marked ``# doctest: +SKIP`` needs a slide or a data set). Modules
with examples are found by reading the sources, so a new one is checked without a list.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "xfskde"
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8")
)


def test_there_are_examples():
    assert {"xfskde.kernel", "xfskde.api", "xfskde.density"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    if name == "xfskde.plot":
        pytest.importorskip("matplotlib", reason="the plot extra draws")
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    module = importlib.import_module(name.removesuffix(".__init__"))
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=False, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
