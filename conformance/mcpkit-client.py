"""The conformance suite's client under test: mcpkit's Client, one scenario per run.

    conformance client --command "python conformance/mcpkit-client.py" --scenario tools_call

The harness starts a mock server for a scenario and runs the command with the server's URL
appended. The environment says what to do: ``MCP_CONFORMANCE_SCENARIO`` (the scenario),
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (2025-11-25: an ``initialize`` session; 2026-07-28:
stateless, ``_meta`` on every request) and, for scenarios that carry data,
``MCP_CONFORMANCE_CONTEXT`` (JSON). The ``auth/*`` scenarios put the server behind the
suite's mock authorization server: the client gets an :class:`mcpkit.oauth.OAuth` whose
``authorize(url)`` follows the authorization endpoint's redirect with httpx (no browser),
with the credentials the context carries (pre-registration, client credentials). Every
exchange goes through :class:`mcpkit.client.Client`
with its HTTP transport: this file only decides which calls to make. Logs go to stderr;
the exit status is 0 when the calls went through.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from mcpkit import versions  # noqa: E402
from mcpkit.client import Client, ServerError, result_text  # noqa: E402
from mcpkit.oauth import OAuth  # noqa: E402

log = logging.getLogger("mcpkit.conformance")

CLIENT_INFO = {"name": "mcpkit-conformance-client", "version": "0.1.0"}
TIMEOUT_S = 20.0  # the harness gives a client 30 s in all
#: The client ID metadata document the auth/basic-cimd scenario expects as client_id.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


# -- answers to the server's questions -------------------------------------------------


def _example(schema: dict[str, Any]) -> Any:
    """A value for a property: its default, else the first enum member, else by type."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    for option in schema.get("oneOf") or schema.get("anyOf") or ():
        if isinstance(option, dict) and "const" in option:
            return option["const"]
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        return [_example(items)] if isinstance(items, dict) and items else []
    return {"boolean": True, "integer": 1, "number": 1, "object": {}}.get(kind, "conformance")


def elicit(params: dict[str, Any]) -> dict[str, Any]:
    """Accept, with the schema's defaults filled in (SEP-1034) and a value for the rest."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {name: _example(sub) for name, sub in properties.items() if isinstance(sub, dict)}
    return {"action": "accept", "content": content}


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"},
            "model": "mcpkit-conformance", "stopReason": "endTurn"}


ROOTS = [{"uri": "file:///tmp/mcpkit-conformance", "name": "conformance"}]


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a tool's required properties."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    return {name: _example(properties.get(name) or {}) for name in schema.get("required") or ()}


# -- the scenarios -------------------------------------------------------------------


def list_only(client: Client, context: dict[str, Any]) -> None:
    tools = client.list_tools()
    log.info("tools: %s", [t["name"] for t in tools])


def tools_call(client: Client, context: dict[str, Any]) -> None:
    client.list_tools()
    log.info("add_numbers: %s", result_text(client.call_tool("add_numbers", {"a": 5, "b": 3})))


def call_every_tool(client: Client, context: dict[str, Any]) -> None:
    """List the tools and call each one (those the client kept, for invalid-tool-headers)."""
    for tool in client.list_tools():
        result = client.call_tool(tool["name"], arguments_for(tool))
        log.info("%s: %s", tool["name"], result_text(result))


def standard_headers(client: Client, context: dict[str, Any]) -> None:
    """Every method that carries Mcp-Name, on every item the server lists."""
    call_every_tool(client, context)
    for resource in client.list_resources():
        client.read_resource(resource["uri"])
    for prompt in client.list_prompts():
        arguments = {a["name"]: "conformance" for a in prompt.get("arguments") or ()
                     if a.get("required")}
        client.get_prompt(prompt["name"], arguments)


def custom_headers(client: Client, context: dict[str, Any]) -> None:
    client.list_tools()
    for call in context.get("toolCalls") or ():
        result = client.call_tool(call["name"], call.get("arguments") or {})
        log.info("%s: %s", call["name"], result_text(result))


def request_state(client: Client, context: dict[str, Any]) -> None:
    """MRTR: the client's request() does the rounds (state echoed, new ids, no leaks)."""
    client.list_tools()
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                 "test_mrtr_no_result_type"):
        log.info("%s: %s", name, result_text(client.call_tool(name)))


def elicitation_defaults(client: Client, context: dict[str, Any]) -> None:
    client.list_tools()
    result = client.call_tool("test_client_elicitation_defaults")
    log.info("result: %s", result_text(result))


def sse_retry(client: Client, context: dict[str, Any]) -> None:
    client.list_tools()
    log.info("result: %s", result_text(client.call_tool("test_reconnection")))


def schema_echo(client: Client, context: dict[str, Any]) -> None:
    """Send json_schema_2020_12_tool's inputSchema back, exactly as received."""
    tools = {t["name"]: t for t in client.list_tools()}
    schema = tools["json_schema_2020_12_tool"]["inputSchema"]
    client.call_tool("json_schema_echo", {"schema": schema})


def authorized_calls(client: Client, context: dict[str, Any]) -> None:
    """List the tools and call each one: the call may need more scope (step-up)."""
    call_every_tool(client, context)


# -- OAuth ------------------------------------------------------------------------------


def follow_redirect(url: str) -> str:
    """The user's browser, for the mock authorization server: it answers the
    authorization request with a redirect, whose target is the answer."""
    import httpx

    response = httpx.get(url, follow_redirects=False, timeout=10.0)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered HTTP {response.status_code} "
                           "without a redirect")
    return location


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth | None:
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/wif-jwt-bearer":  # a workload presents its platform's JWT
        return OAuth(grant="jwt_bearer", client_id=context.get("client_id"),
                     assertion=context.get("valid_jwt"))
    if scenario == "auth/enterprise-managed-authorization":  # SEP-990: ID token -> ID-JAG
        return OAuth(grant="enterprise", client_id=context.get("client_id"),
                     client_secret=context.get("client_secret"),
                     assertion=context.get("idp_id_token"),
                     idp_token_endpoint=context.get("idp_token_endpoint"),
                     idp_client_id=context.get("idp_client_id"))
    if scenario.startswith("auth/client-credentials"):
        return OAuth(grant="client_credentials", client_id=context.get("client_id"),
                     client_secret=context.get("client_secret"),
                     private_key=context.get("private_key_pem"),
                     signing_algorithm=context.get("signing_algorithm") or "ES256")
    return OAuth(follow_redirect, client_id=context.get("client_id"),
                 client_secret=context.get("client_secret"),
                 client_metadata_url=CLIENT_METADATA_URL,
                 redirect_uri="http://localhost:3030/callback",
                 client_name="mcpkit-conformance-client")


SCENARIOS: dict[str, Callable[[Client, dict[str, Any]], None]] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": list_only,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_echo,
}


def main(argv: list[str]) -> int:
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("MCPKIT_LOG", "INFO"),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if len(argv) < 2:
        print("usage: mcpkit-client.py SERVER_URL (the conformance harness appends it)",
              file=sys.stderr)
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if version is not None and not versions.is_supported(version):
        log.warning("revision %s is not one mcpkit speaks; probing instead", version)
        version = None
    run = SCENARIOS.get(scenario)
    if run is None and scenario.startswith("auth/"):
        run = authorized_calls
    if run is None:
        log.warning("no behaviour for scenario %r: connecting and listing tools", scenario)
        run = list_only
    log.info("scenario %s, revision %s, server %s", scenario, version or "probed", url)
    try:
        with Client(url=url, version=version, timeout=TIMEOUT_S, client_info=CLIENT_INFO,
                    sampling=sample, elicitation=elicit, roots=ROOTS,
                    auth=oauth_for(scenario, context)) as client:
            log.info("connected: %r", client)
            run(client, context)
    except ServerError as exc:
        log.error("%s", exc)
        return 1
    except Exception:
        log.exception("scenario %s failed", scenario)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
