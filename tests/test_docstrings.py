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


# every module of the package that says what it exports (``__all__``), but the package itself
# (tests/test_docs.py checks what it re-exports): the command-line modules (xfskde.commands)
# have none, ``xfskde --help`` documents them (tests/test_cli.py)
EXPORTING = sorted(
    ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix("__init__").strip(".")
    for path in PACKAGE.rglob("*.py")
    if path != PACKAGE / "__init__.py" and "\n__all__ = " in path.read_text(encoding="utf-8")
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


# The public modules: the API reference renders each one's ``__all__`` (docs/api.md), so every
# public function, method and property of every one documents each of its parameters once, in
# the signature's order, every entry one line with a description, found by reading the package
# so that a new module is checked without a list. io._location is private but rendered through
# xfskde.io (Location, locate), and its other functions are held to the same, as are the
# sections of each (below).
PUBLIC = [name for name in EXPORTING if not any(part.startswith("_") for part in name.split("."))]
STRICT = sorted({*PUBLIC, "io._location"})


def test_the_public_modules_are_checked():
    """Found by reading the package, so a list that found nothing would pass: the paper's
    modules, the plots and the data sets are there, and what is left out is public."""
    assert {"kernel", "density", "canonical", "descriptors", "plot", "local", "io"} <= set(STRICT)
    assert {"datasets.synthetic", "experiments.patches", "metrics", "gradients"} <= set(STRICT)
    assert {"masks", "io.images", "segmentation.model", "lazy"} <= set(STRICT)
    assert "commands.maps" not in EXPORTING and "_grid" in EXPORTING


SECTION = re.compile(
    r"^(Parameters|Other Parameters)\n-{3,}\n(.*?)(?=\n\n\S[^\n]*\n-{3,}\n|\Z)", re.S | re.M
)


def _entries(doc: str) -> list[list[str]]:
    """The names of each entry of the Parameters sections, in order (``F, G : ...`` is one
    entry of two names)."""
    entries = []
    for _, body in SECTION.findall(doc):
        for line in body.splitlines():
            if line and not line[0].isspace():
                head = line.split(" : ")[0]
                entries.append([name.strip().lstrip("*") for name in head.split(",")])
    return entries


def _documented(doc: str) -> set[str]:
    return {name for entry in _entries(doc) for name in entry}


def _heads(doc: str) -> dict[str, str]:
    """The first line of each parameter's entry (``name : type``), by name."""
    heads = {}
    for _, body in SECTION.findall(doc):
        for line in body.splitlines():
            if line and not line[0].isspace():
                for name in line.split(" : ")[0].split(","):
                    heads[name.strip().lstrip("*")] = line
    return heads


def _check_sections(where: str, function) -> None:
    """A parameter with a default is marked so on its entry's first line (``x : int,
    optional``, or ``default ...``: the reference's type column shows that line), and a
    function that returns something has a Returns (or Yields) section."""
    doc = inspect.getdoc(function) or ""
    heads = _heads(doc)
    signature = inspect.signature(function)
    for p in signature.parameters.values():
        head = heads.get(p.name, "")
        if p.default is not p.empty and head:
            assert "optional" in head or "default" in head, (
                f"{where}: {p.name} has a default ({p.default!r}) but {head!r} says nothing"
            )
    returns = signature.return_annotation  # a string: ``from __future__ import annotations``
    if returns not in (inspect.Signature.empty, "None", None, "NoReturn"):
        assert re.search(r"^(Returns|Yields)\n-{3,}\n", doc, re.M), (
            f"{where} returns {returns} but has no Returns section"
        )


def _shown_here(module, obj) -> bool:
    """Whether the API reference shows ``obj`` as ``module``'s: defined there, or re-exported
    from a private module (``xfskde.local.sample_count``, defined in ``xfskde._grid``, which the
    reference does not render); what a module re-exports from a public one is checked there."""
    defined = getattr(obj, "__module__", None) or ""
    private = any(part.startswith("_") for part in defined.split("."))
    return defined == module.__name__ or (defined.startswith("xfskde.") and private)


def _callables(module):
    """The public functions and methods that the reference shows as ``module``'s."""
    for name in module.__all__:
        obj = getattr(module, name)
        if not _shown_here(module, obj):
            continue
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                function = getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(function):
                    yield f"{name}.{attr}", function
        elif inspect.isfunction(obj):
            yield name, obj


def _check_parameters(where: str, function) -> None:
    """Each parameter documented, and nothing else, once, in the signature's order."""
    parameters = inspect.signature(function).parameters.values()
    order = [p.name for p in parameters if p.name not in ("self", "cls")]
    named = [
        p.name for p in parameters
        if p.name in order and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]  # fmt: skip
    said = [name for entry in _entries(inspect.getdoc(function) or "") for name in entry]
    documented = set(said)
    assert set(named) <= documented, f"{where}: {sorted(set(named) - documented)}"
    absent = documented - set(order)
    varkw = any(p.kind == p.VAR_KEYWORD for p in parameters)
    assert varkw or not absent, f"{where} documents no {sorted(absent)}"
    assert len(said) == len(documented), f"{where} documents some parameter twice: {said}"
    # ``*args`` and ``**kwargs`` where they stand (numpydoc); the keys of ``**kwargs`` anywhere
    assert [name for name in said if name in order] == [n for n in order if n in documented], (
        f"{where} documents its parameters in another order than its signature: {said}"
    )


def _check_entries(where: str, doc: str) -> None:
    """Every entry of a Parameters section is one line, ``name : type`` or a list of names,
    followed by its description: a list of names wrapped onto the next line renders as an
    entry of its own (LocalParameters' ``gradient_scale``)."""
    for _, body in SECTION.findall(doc):
        lines = [line for line in body.splitlines() if line.strip()]
        for i, line in enumerate(lines):
            if line[0].isspace():
                continue
            assert not line.rstrip().endswith(","), f"{where}: entry wrapped: {line!r}"
            follows = lines[i + 1] if i + 1 < len(lines) else ""
            assert follows[:1].isspace(), f"{where}: entry without a description: {line!r}"


def _members(module):
    """Every public class, function, method and property that the reference shows as
    ``module``'s."""
    for name in module.__all__:
        obj = getattr(module, name)
        if not _shown_here(module, obj):
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield name, obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (
                    isinstance(member, property | staticmethod | classmethod)
                    or inspect.isfunction(member)
                ):
                    yield f"{name}.{attr}", member


@pytest.mark.parametrize("module", STRICT)
def test_every_parameter_is_documented(module):
    mod = importlib.import_module(f"xfskde.{module}")
    for name, function in _callables(mod):
        _check_parameters(f"xfskde.{module}.{name}", function)


@pytest.mark.parametrize("module", STRICT)
def test_every_function_marks_its_defaults_and_says_what_it_returns(module):
    mod = importlib.import_module(f"xfskde.{module}")
    for name, function in _callables(mod):
        _check_sections(f"xfskde.{module}.{name}", function)


@pytest.mark.parametrize("module", STRICT)
def test_every_member_has_a_docstring(module):
    """The API reference shows a method or property without one as a bare name."""
    mod = importlib.import_module(f"xfskde.{module}")
    for name, member in _members(mod):
        doc = inspect.getdoc(getattr(member, "__func__", member))
        assert doc, f"xfskde.{module}.{name} has no docstring"
        _check_entries(f"xfskde.{module}.{name}", doc)
