"""The docstrings are true: their examples run, and they document every parameter.

The API reference shows them as they are written, so each ``>>>`` line is run by doctest in the
module's namespace (a line marked ``# doctest: +SKIP`` needs a slide or a data set). Modules
with examples are found by reading the sources, so a new one is checked without a list.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
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


# modules whose every public function and method documents each of its parameters (the
# API reference renders them; tests/test_docs.py checks the names of xfskde.__all__ alike)
DOCUMENTED = [
    "kernel",
    "density",
    "canonical",
    "api",
    "accessor",
    "orientation",
    "descriptors",
    "plot",
]
SECTION = re.compile(
    r"^(Parameters|Other Parameters)\n-{3,}\n(.*?)(?=\n\n\S[^\n]*\n-{3,}\n|\Z)", re.S | re.M
)


def _documented(doc: str) -> set[str]:
    names = set()
    for _, body in SECTION.findall(doc):
        for line in body.splitlines():
            if line and not line[0].isspace():
                head = line.split(" : ")[0]
                names.update(name.strip().lstrip("*") for name in head.split(","))
    return names


def _callables(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                function = getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(function):
                    yield f"{name}.{attr}", function
        elif inspect.isfunction(obj):
            yield name, obj


@pytest.mark.parametrize("module", DOCUMENTED)
def test_every_parameter_is_documented(module):
    mod = importlib.import_module(f"xfskde.{module}")
    for name, function in _callables(mod):
        parameters = inspect.signature(function).parameters.values()
        named = {
            p.name for p in parameters
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }  # fmt: skip
        documented = _documented(inspect.getdoc(function) or "")
        assert named <= documented, f"xfskde.{module}.{name}: {sorted(named - documented)}"
        absent = documented - {p.name for p in parameters}
        varkw = any(p.kind == p.VAR_KEYWORD for p in parameters)
        assert varkw or not absent, f"xfskde.{module}.{name} documents no {sorted(absent)}"
