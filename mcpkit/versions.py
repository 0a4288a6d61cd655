"""Protocol revisions, their eras, and the ``_meta`` keys the modern era puts on messages.

MCP revisions are dates. They fall into two eras:

- the *legacy* era (2024-11-05 .. 2025-11-25): a connection starts with an ``initialize``
  handshake that fixes the version and both sides' capabilities for its lifetime;
- the *modern* era (2026-07-28 onwards): no handshake. Every request carries the version,
  the client's identity and capabilities in ``params._meta``, so any server instance can
  answer any request (which is what lets HTTP servers scale out with no sticky sessions).
"""

from __future__ import annotations

from typing import Literal

Era = Literal["legacy", "modern"]

#: mcpkit's own release (``mcpkit.__version__``; the default clientInfo version).
PACKAGE_VERSION = "0.1.0"

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Newest first: the order a server lists them in and a client prefers them in.
SUPPORTED_VERSIONS: tuple[str, ...] = MODERN_VERSIONS[::-1] + LEGACY_VERSIONS[::-1]
LATEST_VERSION = MODERN_VERSIONS[-1]
LATEST_LEGACY_VERSION = LEGACY_VERSIONS[-1]

# Keys of params._meta on modern requests (RequestMetaObject in the schema).
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# Key of result._meta (ResultMetaObject) and of notifications on a listen stream.
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

#: The server capabilities each revision defines (ServerCapabilities in its schema). A
#: capability a revision does not define gates nothing under it: 2024-11-05 has no
#: ``completions``, yet its servers answer ``completion/complete``.
SERVER_CAPABILITIES: dict[str, frozenset[str]] = {
    "2024-11-05": frozenset({"experimental", "logging", "prompts", "resources", "tools"}),
    "2025-03-26": frozenset({"completions", "experimental", "logging", "prompts", "resources",
                             "tools"}),
    "2025-06-18": frozenset({"completions", "experimental", "logging", "prompts", "resources",
                             "tools"}),
    "2025-11-25": frozenset({"completions", "experimental", "logging", "prompts", "resources",
                             "tasks", "tools"}),
    "2026-07-28": frozenset({"completions", "experimental", "extensions", "logging", "prompts",
                             "resources", "tools"}),
}


def defines_server_capability(version: str | None, capability: str) -> bool:
    """Whether ``version`` has the server capability ``capability``; a revision newer than
    mcpkit knows keeps everything the latest one has."""
    known = SERVER_CAPABILITIES.get(version or "")
    if known is None:
        known = SERVER_CAPABILITIES[LATEST_VERSION]
    return capability in known


LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)


def era_of(version: str) -> Era:
    """The era of a known revision. Unknown dates after the last legacy one count as modern."""
    if version in LEGACY_VERSIONS:
        return "legacy"
    if version in MODERN_VERSIONS or version > LATEST_LEGACY_VERSION:
        return "modern"
    return "legacy"


def is_supported(version: str) -> bool:
    return version in SUPPORTED_VERSIONS


def negotiate_legacy(requested: str) -> str:
    """The version a legacy server answers ``initialize`` with.

    The spec's rule: if the server supports the requested version it MUST answer with the
    same one; otherwise it answers with another it supports (the latest), and the client
    decides whether it can live with that.
    """
    if requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY_VERSION


def at_least(version: str, minimum: str) -> bool:
    """Whether ``version`` is ``minimum`` or newer (revisions are ISO dates: they sort)."""
    return version >= minimum


def log_level_allows(threshold: str | None, level: str) -> bool:
    """Whether a message at ``level`` passes a client's ``threshold`` (None: nothing passes)."""
    if threshold is None:
        return False
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
