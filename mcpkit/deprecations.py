"""What revision 2026-07-28 deprecates, and the one warning mcpkit logs when it is relied on.

A deprecated feature still works: the specification keeps it, unchanged, until the first
revision released on or after its earliest removal date, and mcpkit serves and uses it in
every era. What changes is advice: new code should not adopt it. So when an application
relies on one in the modern era (a tool that samples the client's model, a client that
offers roots, a request that asks for log messages), mcpkit logs a warning naming the
feature, what replaces it and until when it must still be served: once per feature and
process, on the ``mcpkit.deprecations`` logger, so that a server answering a million
requests says it once. The legacy era is what these features were made for: no warning there.

The table is the specification's registry (``specification/2026-07-28/deprecated``).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from .logs import LazyLogger

log = LazyLogger("mcpkit.deprecations")  # a server that relies on nothing deprecated never logs


class Deprecation(NamedTuple):
    feature: str
    deprecated_in: str  # the revision that deprecated it
    replacement: str  # the migration path the specification gives
    earliest_removal: str  # removable from the first revision released on or after this


#: Key -> the registry's row.
DEPRECATED: dict[str, Deprecation] = {
    "roots": Deprecation(
        "Roots (roots/list)", "2026-07-28",
        "pass directories or files as tool arguments, resource URIs or server configuration",
        "2027-07-28"),
    "sampling": Deprecation(
        "Sampling (sampling/createMessage)", "2026-07-28",
        "call the LLM provider's API from the server", "2027-07-28"),
    "logging": Deprecation(
        "Logging (notifications/message, logging/setLevel)", "2026-07-28",
        "log to stderr (stdio) or through OpenTelemetry", "2027-07-28"),
    "dynamic client registration": Deprecation(
        "OAuth dynamic client registration (RFC 7591)", "2026-07-28",
        "Client ID Metadata Documents (OAuth(client_metadata_url=...))", "2027-07-28"),
    "includeContext": Deprecation(
        'sampling\'s includeContext "thisServer" / "allServers"', "2025-11-25",
        'omit includeContext or send "none"', "2027-07-28"),
}

_warned: set[str] = set()
_lock = threading.Lock()


def warn(key: str, how: str) -> bool:
    """Log the deprecation of ``DEPRECATED[key]`` (``how``: what relied on it), the first
    time only; whether this call logged."""
    with _lock:
        if key in _warned:
            return False
        _warned.add(key)
    row = DEPRECATED[key]
    log.warning("%s is deprecated since MCP %s (%s); it still works, and servers keep it until "
                "the first revision released on or after %s. Instead: %s.",
                row.feature, row.deprecated_in, how, row.earliest_removal, row.replacement)
    return True


def silence() -> None:
    """Give no warning from now on (the course's checks use deprecated features on purpose,
    to test what a learner wrote; their warnings would only be noise in a lab)."""
    with _lock:
        _warned.update(DEPRECATED)


def reset() -> None:
    """Forget which warnings were given (tests, and a notebook that wants to see them again)."""
    with _lock:
        _warned.clear()
