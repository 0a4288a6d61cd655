"""Commands for people: poke at any MCP server from a shell.

``mcpkit list|call|read|prompt|trace|config TARGET ...`` (see ``mcpkit --help``). A TARGET
is a URL (streamable HTTP), a ``.py`` file or ``module:attribute`` (an mcpkit server, run
with this Python), a server name in an ``mcpServers`` file given with ``--config``, or a
command line that starts a stdio server (quote it: ``"npx -y some-server"``).

Output is for people by default and JSON with ``--json``. Exit codes tell the kinds of
failure apart: 0 done, 1 the tool reported an error (``isError``), 2 a usage or target
problem, 3 a protocol or connection error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import wiretap
from .client import Client, ServerError, SessionError, is_error
from .host import ConfigError, ServerConfig

OK, TOOL_ERROR, USAGE, PROTOCOL = 0, 1, 2, 3
HOSTS = ("claude-desktop", "vscode", "cursor", "claude-code")


class TargetProblem(Exception):
    """A TARGET that names no server this command can start or reach."""


def resolve(target: str, config: str | None = None) -> ServerConfig:
    """What a TARGET stands for, as the entry a host's ``mcpServers`` would hold."""
    if config is not None:
        try:
            servers = json.loads(Path(config).read_text()).get("mcpServers", {})
        except (OSError, ValueError, AttributeError) as exc:
            raise TargetProblem(f"cannot read an mcpServers file from {config}: {exc}") from None
        if target not in servers:
            raise TargetProblem(f"{config} has no server {target!r}; it has: "
                                f"{', '.join(servers) or 'none'}")
        entry = servers[target]
    elif target.startswith(("http://", "https://")):
        entry = {"url": target}
    elif _is_mcpkit_target(target):
        spec = target
        path, _, attribute = target.partition(":")
        if path.endswith(".py"):
            if not Path(path).is_file():
                raise TargetProblem(f"no such file: {path}")
            spec = str(Path(path).resolve()) + (f":{attribute}" if attribute else "")
        entry = {"command": sys.executable, "args": ["-m", "mcpkit", "serve", spec]}
    else:
        words = shlex.split(target)
        if not words:
            raise TargetProblem("an empty TARGET: give a URL, a .py file, module:attribute, "
                                "or the command that starts the server")
        entry = {"command": words[0], "args": words[1:]}
    name = target if config else _short_name(target)
    try:
        return ServerConfig.from_entry(name, entry)
    except ConfigError as exc:
        raise TargetProblem(str(exc)) from None


def _is_mcpkit_target(target: str) -> bool:
    if " " in target:
        return False
    path = target.partition(":")[0]
    return path.endswith(".py") or (":" in target and "/" not in path
                                    and all(part.isidentifier() for part in path.split(".")))


def _short_name(target: str) -> str:
    """A name for the entry: the host of a URL, a module's or file's own name, a program's."""
    if target.startswith(("http://", "https://")):
        return target.split("//", 1)[1].split("/", 1)[0]
    if _is_mcpkit_target(target):
        head = target.partition(":")[0]
        return Path(head).stem if head.endswith(".py") else head.rsplit(".", 1)[-1]
    words = shlex.split(target)
    # The last word that is not an option: "npx -y @scope/server-x" -> "server-x".
    name = next((w for w in reversed(words) if not w.startswith("-")), words[0])
    return Path(name).stem or "server"


def connect(server: ServerConfig, timeout: float, command_wrapper: Sequence[str] = ()) -> Client:
    if server.transport == "http":
        return Client(url=server.url, headers=server.headers, token=server.token,
                      token_env=server.token_env, timeout=timeout, name=server.name)
    return Client([*command_wrapper, server.command], list(server.args), env=server.env,
                  cwd=server.cwd, timeout=timeout, name=server.name)


# -- rendering ---------------------------------------------------------------------------


def _arguments(pairs: Sequence[str], raw_json: str | None, schema: dict[str, Any]) -> dict:
    """``key=value`` pairs typed by the tool's schema (or ``--json`` as given)."""
    if raw_json is not None:
        value = json.loads(raw_json)
        if not isinstance(value, dict):
            raise TargetProblem("--json needs a JSON object of arguments")
        return value
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise TargetProblem(f"arguments are key=value, got {pair!r}")
        kind = properties.get(key, {}).get("type")
        if kind in ("integer", "number", "boolean", "array", "object"):
            try:
                out[key] = json.loads(text)
                continue
            except ValueError:
                raise TargetProblem(f"{key} must be {kind} (JSON), got {text!r}") from None
        out[key] = text
    return out


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {len(block.get('data', '')) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[link {block.get('uri')}]"
    if kind == "resource":
        resource = block.get("resource", {})
        return resource.get("text") or f"[resource {resource.get('uri')}]"
    return json.dumps(block, ensure_ascii=False)


def _show_listing(client: Client, out: Callable[[str], None]) -> dict[str, Any]:
    listing: dict[str, Any] = {"server": client.server_info, "era": client.era}
    caps = client.server_capabilities or {}
    listing["tools"] = client.list_tools() if "tools" in caps else []
    listing["resources"] = client.list_resources() if "resources" in caps else []
    listing["resourceTemplates"] = client.list_resource_templates() if "resources" in caps \
        else []
    listing["prompts"] = client.list_prompts() if "prompts" in caps else []
    info = client.server_info or {}
    out(f"{info.get('name', '?')} {info.get('version', '')} ({client.era}, "
        f"{client.protocol_version})")
    for key, label in (("tools", "Tools"), ("resources", "Resources"),
                       ("resourceTemplates", "Resource templates"), ("prompts", "Prompts")):
        out(f"\n{label} ({len(listing[key])})")
        for item in listing[key]:
            name = item.get("name") if key in ("tools", "prompts") else \
                item.get("uri") or item.get("uriTemplate")
            detail = (item.get("description") or "").strip().splitlines()
            if key == "tools":
                params = item.get("inputSchema", {}).get("properties", {})
                required = set(item.get("inputSchema", {}).get("required", []))
                name += "(" + ", ".join(p + ("" if p in required else "?")
                                        for p in params) + ")"
            out(f"  {name}" + (f"  {detail[0]}" if detail else ""))
    return listing


# -- the commands --------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    emit = print
    try:
        server = resolve(args.target, args.config)
        if args.command == "config":
            emit(json.dumps(host_entry(server, args.host_kind), indent=2))
            return OK
        if args.command == "trace":
            return _trace(server, args)
        with connect(server, args.timeout) as client:
            return _act(client, args, emit)
    except TargetProblem as exc:
        print(f"mcpkit {args.command}: {exc}", file=sys.stderr)
        return USAGE
    except ServerError as exc:
        print(f"mcpkit {args.command}: the server answered with an error: {exc}",
              file=sys.stderr)
        return PROTOCOL
    except (SessionError, OSError) as exc:
        print(f"mcpkit {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return PROTOCOL


def _act(client: Client, args: argparse.Namespace, emit: Callable[[str], None]) -> int:
    quiet = (lambda line: None) if args.json else emit
    if args.command == "list":
        listing = _show_listing(client, quiet)
        if args.json:
            emit(json.dumps(listing, indent=2, ensure_ascii=False))
        return OK
    if args.command == "call":
        tools = {t["name"]: t for t in client.list_tools()}
        if args.tool not in tools:
            raise TargetProblem(f"no tool {args.tool!r}; the server has: "
                                f"{', '.join(tools) or 'none'}")
        arguments = _arguments(args.arguments, args.json_args, tools[args.tool]["inputSchema"])
        result = client.call_tool(args.tool, arguments)
        if args.json:
            emit(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            for block in result.get("content", []):
                emit(_block_text(block))
            if "structuredContent" in result and not result.get("content"):
                emit(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))
        return TOOL_ERROR if is_error(result) else OK
    if args.command == "read":
        result = client.read_resource(args.uri)
        if args.json:
            emit(json.dumps(result, indent=2, ensure_ascii=False))
        for item in [] if args.json else result.get("contents", []):
            emit(item["text"] if "text" in item else
                 f"[{item.get('mimeType', 'binary')}, {len(item.get('blob', '')) * 3 // 4} bytes]")
        return OK
    # prompt
    arguments = dict(pair.partition("=")[::2] for pair in args.arguments)
    result = client.get_prompt(args.name, arguments)
    if args.json:
        emit(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        for message in result.get("messages", []):
            emit(f"{message['role']}: {_block_text(message['content'])}")
    return OK


# -- trace: the literal bytes of a session ------------------------------------------------


def _trace(server: ServerConfig, args: argparse.Namespace) -> int:
    """Run a short session (list, and a call if one is given) through a relay that records
    every byte each way; print them, one message per line, ``>`` for client to server."""
    if server.transport == "http":
        raise TargetProblem("trace records a stdio session's bytes; for HTTP, watch it with "
                            "the MCP Inspector or a proxy")
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "trace.log"
        relay = [sys.executable, "-m", "mcpkit.shell", "--relay", str(log), "--"]
        with connect(server, args.timeout, command_wrapper=relay) as client:
            client.list_tools()
            if args.tool:
                tools = {t["name"]: t for t in client.list_tools()}
                schema = tools.get(args.tool, {}).get("inputSchema", {})
                client.call_tool(args.tool, _arguments(args.arguments, None, schema))
        lines = log.read_bytes().decode("utf-8", "backslashreplace").splitlines()
    text = "\n".join(lines)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return OK


def relay(log_path: str, command: Sequence[str]) -> int:
    """Run ``command`` with both streams passed through, and log each line that passes as
    ``> line`` (to the server) or ``< line`` (from it), the bytes as they came: the relay of
    :mod:`mcpkit.wiretap`, without its timestamps."""
    return wiretap.relay(log_path, command, stamp=False)


# -- config: the entry to paste into a host ------------------------------------------------


def host_entry(server: ServerConfig, host: str) -> dict[str, Any]:
    """The configuration that makes ``host`` start (or reach) ``server``; nothing written."""
    if server.transport == "http":
        body: dict[str, Any] = {"url": server.url}
        if host in ("vscode", "claude-code"):
            body = {"type": "http", **body}
        if server.headers:
            body["headers"] = dict(server.headers)
    else:
        body = {"command": server.command, "args": list(server.args)}
        if host in ("vscode", "claude-code"):
            body = {"type": "stdio", **body}
        if server.env:
            body["env"] = dict(server.env)
    key = "servers" if host == "vscode" else "mcpServers"
    return {key: {server.name: body}}


if __name__ == "__main__":  # the relay that `mcpkit trace` puts between client and server
    if len(sys.argv) > 3 and sys.argv[1] == "--relay" and sys.argv[3] == "--":
        sys.exit(relay(sys.argv[2], sys.argv[4:]))
    sys.exit("usage: python -m mcpkit.shell --relay LOG -- COMMAND...")
