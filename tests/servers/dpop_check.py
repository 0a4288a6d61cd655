"""What a DPoP server checks in a proof (RFC 9449 section 4.3), written from the RFC for the
test servers of tests/test_oauth.py: the authorization server's token endpoint and the
resource server in front of an MCP app. Independent of mcpkit.oauth_dpop on purpose: a
proof mcpkit gets wrong must fail here."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any
from urllib.parse import urlsplit

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OKPKey, RSAKey

USE_NONCE = "use_dpop_nonce"  # the error that asks for a proof with the server's nonce
ASYMMETRIC = {"ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"}


class ProofError(Exception):
    """Why a proof is refused (the text a server would put in error_description)."""


def _b64_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(
        b"=").decode()


def check(proof: str | None, method: str, url: str, *, seen_jtis: set[str],
          access_token: str | None = None, jkt: str | None = None,
          nonce: str | None = None) -> dict[str, Any]:
    """The proof's claims and ``"jkt"`` (its key's thumbprint) if it is good for a
    ``method`` request to ``url``; raises :class:`ProofError` saying why not."""
    if not proof:
        raise ProofError("no DPoP header")
    if "," in proof:
        raise ProofError("more than one DPoP proof")
    try:
        header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    except (ValueError, IndexError):
        raise ProofError("not a JWT") from None
    if not isinstance(header, dict):
        raise ProofError("not a JWT")
    if header.get("typ") != "dpop+jwt":
        raise ProofError("typ is not dpop+jwt")
    if header.get("alg") not in ASYMMETRIC:
        raise ProofError("alg is not an asymmetric algorithm")
    public = header.get("jwk")
    if not isinstance(public, dict) or "d" in public:
        raise ProofError("jwk missing, or holds a private key")
    key_class = {"EC": ECKey, "RSA": RSAKey, "OKP": OKPKey}.get(public.get("kty"))
    if key_class is None:
        raise ProofError("unknown key type")
    key = key_class.import_key(public)
    try:
        claims = jwt.decode(proof, key, algorithms=[header["alg"]]).claims
    except JoseError as exc:
        raise ProofError(f"signature does not verify ({exc})") from None
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti:
        raise ProofError("no jti")
    if jti in seen_jtis:
        raise ProofError("jti replayed")
    if claims.get("htm") != method:
        raise ProofError(f"htm {claims.get('htm')!r} is not {method}")
    htu = claims.get("htu")
    target = urlsplit(url)
    if not isinstance(htu, str) or "?" in htu or "#" in htu:
        raise ProofError("htu missing, or has a query or fragment")
    named = urlsplit(htu)
    if (named.scheme, named.netloc, named.path.rstrip("/")) != (
            target.scheme, target.netloc, target.path.rstrip("/")):
        raise ProofError(f"htu {htu!r} is not {url!r}")
    if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > 60:
        raise ProofError("iat outside the window")
    if access_token is not None and claims.get("ath") != _b64_sha256(access_token):
        raise ProofError("ath is not the token's hash")
    thumbprint = key.thumbprint()
    if jkt is not None and thumbprint != jkt:
        raise ProofError("the proof's key is not the one the token is bound to")
    if nonce is not None and claims.get("nonce") != nonce:
        raise ProofError(USE_NONCE)
    seen_jtis.add(jti)
    return {**claims, "jkt": thumbprint}
