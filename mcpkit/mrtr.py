"""Multi round-trip requests (2026-07-28): ``input_required`` results and ``requestState``.

A modern server never sends a request to the client in the middle of a call. When a tool
needs something only the client has (an answer from the user, a sample from the model,
the roots), the server *returns* an ``input_required`` result listing what it needs; the
client obtains it and sends the original request again with ``inputResponses``.

How mcpkit runs the same tool code in both eras: a tool asks through its context
(``ctx.elicit(...)``). In the modern era the server *replays* the tool from the start on
every round; an answer the client already gave is returned at once, and the first question
without an answer raises :class:`InputRequired`, which becomes the ``input_required``
result. Answers from earlier rounds travel in ``requestState``, so the server keeps no
memory between rounds and any instance of it can serve the next one.

The client must echo ``requestState`` unchanged, but it is client-held data, so it is
sealed with an HMAC over the request it belongs to: a modified, foreign or expired state
is refused (-32602) instead of trusted.
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from . import validation
from .jsonrpc import InvalidParams

# Which client capability each kind of input request needs.
CAPABILITY_FOR_METHOD = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

STATE_VERSION = 1
DEFAULT_STATE_TTL_S = 15 * 60


class InputRequired(Exception):
    """Raised inside a replayed tool: these inputs are still missing."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


class MissingClientCapability(Exception):
    """The request needs a capability the client did not declare."""

    def __init__(self, capability: str) -> None:
        super().__init__(f"the client did not declare the {capability!r} capability")
        self.capability = capability


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, raw: bytes) -> bytes:
    import hashlib  # see request_fingerprint
    import hmac

    return hmac.new(key, raw, hashlib.sha256).digest()


def request_fingerprint(method: str, params: dict[str, Any]) -> str:
    """What a state is bound to: the method and its params, minus the round-trip fields."""
    import hashlib  # here, not at the top: loading OpenSSL costs a server 2 ms of start-up

    core = {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}
    digest = hashlib.sha256(
        json.dumps([method, core], sort_keys=True, separators=(",", ":")).encode()
    ).digest()
    return _b64(digest[:16])


class StateSealer:
    """Seals and opens ``requestState`` strings with HMAC-SHA256.

    Every server process that may serve the next round must share ``secret`` (give the
    same one to every worker, e.g. through ``MCPKIT_STATE_SECRET``); by default each
    process draws a random one.
    """

    def __init__(self, secret: bytes | str | None = None, ttl_s: float = DEFAULT_STATE_TTL_S):
        if secret is None:
            secret = os.environ.get("MCPKIT_STATE_SECRET") or os.urandom(32)
        self._key = secret.encode() if isinstance(secret, str) else secret
        self.ttl_s = ttl_s

    def seal(self, fingerprint: str, payload: dict[str, Any]) -> str:
        body = {"v": STATE_VERSION, "f": fingerprint, "exp": int(time.time() + self.ttl_s)}
        body["p"] = payload
        raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
        mac = _mac(self._key, raw)
        return _b64(raw) + "." + _b64(mac)

    def open(self, fingerprint: str, state: Any) -> dict[str, Any]:
        """The payload of a sealed state, or :class:`InvalidParams` saying what is wrong."""
        if not isinstance(state, str) or state.count(".") != 1:
            raise InvalidParams("requestState is malformed: echo it back exactly as received")
        raw_text, mac_text = state.split(".")
        try:
            raw, mac = _unb64(raw_text), _unb64(mac_text)
        except ValueError:
            raise InvalidParams(
                "requestState is malformed: echo it back exactly as received") from None
        import hmac

        if not hmac.compare_digest(mac, _mac(self._key, raw)):
            raise InvalidParams(
                "requestState failed its integrity check: it was modified or issued by "
                "another server"
            )
        body = json.loads(raw)
        if body.get("f") != fingerprint:
            raise InvalidParams("requestState belongs to a different request")
        if body.get("exp", 0) < time.time():
            raise InvalidParams("requestState has expired: start the request again")
        return body["p"]


def answer_fits(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Whether a client's answer is usable for the question asked (else: ask again)."""
    if request.get("method") != "elicitation/create" or answer.get("action") != "accept":
        return True
    schema_ = request.get("params", {}).get("requestedSchema")
    if not schema_:
        return True
    return not validation.compile_schema(schema_)(answer.get("content") or {})
