"""The layer table in mcpkit's package docstring is the import graph's law: every import
(module level, under TYPE_CHECKING, inside a function) goes to a row above, or earlier in
the same row. A module missing from the table fails too, so the table stays complete."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import mcpkit

PACKAGE = Path(mcpkit.__file__).parent


def _table() -> list[str]:
    """Module patterns, bottom first, as the docstring's table lists them (a row may go on
    over indented lines)."""
    doc = mcpkit.__doc__ or ""
    block = doc.split(".. layers (bottom up)", 1)[1].split("\n\n", 2)[1]
    order: list[str] = []
    for line in block.splitlines():
        if not line.strip() or line.startswith("="):
            continue
        continued = line[0].isspace()  # an indented line goes on with the row above
        modules = line.split() if continued else re.split(r"  +", line, maxsplit=1)[1].split()
        order += ["mcpkit" if m == "mcpkit" else f"mcpkit.{m}" for m in modules]
    return order


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.split(".")[0] == "mcpkit" and m != name}


def _rank(name: str, order: list[str]) -> int:
    for rank, pattern in enumerate(order):
        if name == pattern or (pattern.endswith("*") and fnmatch.fnmatch(name, pattern)):
            return rank
    if name == "mcpkit.transports":
        return -1  # an empty package __init__: it imports nothing
    raise AssertionError(f"{name} is not in the layer table of mcpkit/__init__.py: add it")


def test_every_module_is_in_the_table() -> None:
    order = _table()
    assert "mcpkit.framing" in order and "mcpkit.cli" in order  # the table was read
    for name in _modules():
        if name != "mcpkit.transports":
            _rank(name, order)


def test_imports_only_go_down_the_table() -> None:
    order = _table()
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        rank = _rank(name, order) if name != "mcpkit.transports" else -1
        for target in _imports(name, path, set(modules)):
            same_pattern = order[rank].endswith("*") and rank == _rank(target, order)
            if _rank(target, order) > rank or (_rank(target, order) == rank
                                               and not same_pattern):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "imports that go up the layer table:\n" + "\n".join(sorted(wrong))


def test_a_stdio_server_loads_only_what_its_first_request_needs():
    """Start-up is mostly imports (bench/README.md): a server process answering a tools/list
    must not have loaded logging, OpenSSL's hashes, dataclasses, HTTP or the client."""
    import subprocess
    import sys

    code = ("import sys\nfrom mcpkit import Server\nserver = Server('s', '1')\n"
            "@server.tool\ndef echo(text: str) -> str:\n    return text\n"
            "server.run()\nprint(sorted(sys.modules), file=sys.stderr)\n")
    request = (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
               b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
               b'"io.modelcontextprotocol/clientCapabilities":{},'
               b'"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}\n')
    done = subprocess.run([sys.executable, "-c", code], input=request, capture_output=True,
                          timeout=30)
    assert b'"echo"' in done.stdout, done.stderr
    loaded = set(eval(done.stderr.decode().strip().splitlines()[-1]))
    heavy = {"logging", "hashlib", "hmac", "secrets", "dataclasses", "mcpkit.client",
             "mcpkit.session", "mcpkit.transports.http", "asyncio", "jsonschema", "opentelemetry"}
    assert not heavy & loaded, sorted(heavy & loaded)
