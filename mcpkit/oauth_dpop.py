"""DPoP (RFC 9449, MCP's SEP-1932): access tokens bound to a key the client keeps.

A bearer token works for whoever holds it. A DPoP-bound token works only beside a *proof*:
a short JWT, signed with the client's private key, made afresh for every request and bound
to that request's method and URL (and, at the MCP server, to the token itself through
``ath``, the token's SHA-256). The authorization server binds the token to the key's
thumbprint (``cnf.jkt``) when the token request carries a proof; a stolen token without the
key is worth nothing.

Theory of operation
-------------------
One :class:`DPoPKey` per :class:`~mcpkit.oauth.OAuth` object: a P-256 key made in memory
(never written anywhere), so tokens bound to it die with the process, as they should. It
remembers the last ``DPoP-Nonce`` each server gave (RFC 9449 sections 8 and 9: a server may
require its own nonce in proofs, and announces a new one in any answer); the key of that
memory is the server's origin, since the authorization server and the MCP server keep
separate nonces. Proofs are signed by joserfc; this module only says what goes in them.
"""

from __future__ import annotations

import base64
import hashlib
import time
from urllib.parse import urlsplit, urlunsplit

from authlib.common.security import generate_token
from joserfc import jwt
from joserfc.jwk import ECKey

#: The one signing algorithm mcpkit's proofs use (the one every DPoP server must accept
#: in practice, and the MCP DPoP extension's example).
ALGORITHM = "ES256"
#: The error with which a server asks for a proof that carries its nonce.
USE_NONCE = "use_dpop_nonce"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def htu(url: str) -> str:
    """A request URL as a proof names it: without query and fragment (RFC 9449 4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def token_hash(access_token: str) -> str:
    """``ath``: base64url (no padding) of the SHA-256 of the token's ASCII."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def supported(authorization_server_metadata: dict[str, object]) -> bool:
    """Whether the authorization server issues DPoP-bound tokens with proofs mcpkit signs."""
    algorithms = authorization_server_metadata.get("dpop_signing_alg_values_supported")
    return isinstance(algorithms, list) and ALGORITHM in algorithms


class DPoPKey:
    """The client's proof-of-possession key, its proofs, and the nonces servers gave."""

    def __init__(self) -> None:
        self._key = ECKey.generate_key("P-256")
        self._public = self._key.as_dict(private=False)
        #: the key's RFC 7638 thumbprint, which a bound token names as ``cnf.jkt``
        self.thumbprint: str = self._key.thumbprint()
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"<DPoPKey {ALGORITHM} jkt={self.thumbprint[:8]}...>"

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request: its own ``jti``, the server's latest nonce."""
        claims: dict[str, object] = {
            "jti": generate_token(24),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self._public}
        return jwt.encode(header, claims, self._key, algorithms=[ALGORITHM])

    def saw_nonce(self, url: str, nonce: str | None) -> bool:
        """Remember ``nonce`` (a ``DPoP-Nonce`` header of an answer from ``url``); True
        when it is new, i.e. when a request refused for want of it is worth sending again."""
        if not nonce or not nonce.isascii() or not nonce.isprintable() or len(nonce) > 1024:
            return False
        origin = _origin(url)
        if self._nonces.get(origin) == nonce:
            return False
        self._nonces[origin] = nonce
        return True
