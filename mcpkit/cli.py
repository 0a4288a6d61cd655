"""The ``mcpkit`` command: ``mcpkit serve TARGET`` runs a server over stdio (or ``--http``);
``mcpkit list|call|read|prompt|trace|config TARGET`` poke at any server (:mod:`mcpkit.shell`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from .framing import DEFAULT_MAX_MESSAGE_SIZE, FRAMINGS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpkit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a server (stdio by default)")
    serve.add_argument("target", help="module:attribute or path/to/server.py[:attribute]")
    serve.add_argument("--framing", choices=FRAMINGS, default="ndjson",
                       help="stdio framing (default: ndjson, as the spec says)")
    serve.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                       help="largest message accepted, in bytes (default 4 MiB)")
    serve.add_argument("--log-level", default=os.environ.get("MCPKIT_LOG_LEVEL", "WARNING"),
                       help="stderr log level (default WARNING)")
    serve.add_argument("--http", action="store_true",
                       help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    serve.add_argument("--host", default="127.0.0.1",
                       help="HTTP: address to bind (default 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="HTTP: port (default 8000)")
    serve.add_argument("--workers", type=int, default=1,
                       help="HTTP: worker processes (share MCPKIT_STATE_SECRET; default 1)")
    serve.add_argument("--token", default=None,
                       help="HTTP: require 'Authorization: Bearer TOKEN' (or MCPKIT_HTTP_TOKEN)")
    serve.add_argument("--resource", default=None, metavar="URL",
                       help="HTTP: take JWT access tokens from an authorization server; this "
                            "is the server's canonical URL, the tokens' audience")
    serve.add_argument("--auth-issuer", default=None, metavar="URL",
                       help="HTTP, with --resource: the authorization server (token issuer)")
    serve.add_argument("--auth-jwks", default=None, metavar="URL",
                       help="HTTP, with --resource: where the issuer publishes its keys")
    serve.add_argument("--auth-scope", action="append", default=None, metavar="SCOPE",
                       help="HTTP, with --resource: a scope every request needs (repeatable)")
    serve.add_argument("--allow-host", action="append", default=None, metavar="HOST",
                       help="HTTP: also accept this Host header (repeatable; loopback always)")
    serve.add_argument("--allow-origin", action="append", default=None, metavar="ORIGIN",
                       help="HTTP: also accept this Origin (repeatable; loopback always)")
    _add_shell_commands(commands)
    args = parser.parse_args(argv)
    if args.command == "serve":
        auth_options = (args.resource, args.auth_issuer, args.auth_jwks)
        if any(auth_options) and not all(auth_options):
            parser.error("--resource, --auth-issuer and --auth-jwks go together")
    else:
        logging.basicConfig(stream=sys.stderr, level="WARNING",
                            format="%(name)s %(levelname)s %(message)s")
        from .shell import run  # the client side: not imported by `mcpkit serve`

        return run(args)

    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    protocol_out = None
    if not args.http:
        # Set stdout aside before the target is imported: a print() at import time must
        # reach stderr, not the wire.
        from .transports.stdio import claim_stdout

        protocol_out, restore = claim_stdout()
    from .launch import TargetError, load_target  # after claim_stdout: it imports the server

    try:
        server = load_target(args.target)
    except TargetError as exc:
        print(f"mcpkit serve: {exc}", file=sys.stderr)
        return 2
    if args.http:
        from .launch import run_http

        run_http(server, args.host, args.port, target=args.target, workers=args.workers,
                 max_body_size=args.max_message_size, log_level=args.log_level,
                 token=args.token, allowed_hosts=args.allow_host,
                 allowed_origins=args.allow_origin,
                 auth={"resource": args.resource, "issuer": args.auth_issuer,
                       "jwks_url": args.auth_jwks, "scopes": args.auth_scope or []}
                 if args.resource else None)
        return 0
    from .transports.stdio import serve_stdio

    try:
        serve_stdio(server, stdout=protocol_out, framing=args.framing,
                    max_message_size=args.max_message_size)
    finally:
        restore()
    return 0


def _add_shell_commands(commands: Any) -> None:
    """The commands of :mod:`mcpkit.shell` (parsed here, so `mcpkit serve` never imports it)."""
    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("target", help="a URL, a .py file, module:attribute, a server "
                                           "name (with --config), or a quoted command line")
        parser.add_argument("--config", help="an mcpServers JSON file; TARGET names an entry")
        parser.add_argument("--timeout", type=float, default=30.0,
                            help="seconds per request (default 30)")
        parser.add_argument("--json", action="store_true", help="JSON output, for scripts")

    listing = commands.add_parser("list", help="list a server's tools, resources and prompts")
    common(listing)
    call = commands.add_parser("call", help="call a tool: mcpkit call TARGET TOOL key=value")
    common(call)
    call.add_argument("tool")
    call.add_argument("arguments", nargs="*", help="key=value (typed by the tool's schema)")
    call.add_argument("--args", dest="json_args", metavar="JSON",
                      help="the arguments as one JSON object instead")
    read = commands.add_parser("read", help="read a resource")
    common(read)
    read.add_argument("uri")
    prompt = commands.add_parser("prompt", help="get a prompt: mcpkit prompt TARGET NAME k=v")
    common(prompt)
    prompt.add_argument("name")
    prompt.add_argument("arguments", nargs="*")
    trace = commands.add_parser("trace", help="show the literal bytes of a stdio session")
    common(trace)
    trace.add_argument("tool", nargs="?", help="a tool to call during the session")
    trace.add_argument("arguments", nargs="*")
    trace.add_argument("--out", help="also write the trace to this file")
    config = commands.add_parser("config", help="print a host's configuration entry for it")
    common(config)
    config.add_argument("--for", dest="host_kind", required=True,
                        choices=("claude-desktop", "vscode", "cursor", "claude-code"))


if __name__ == "__main__":
    sys.exit(main())
