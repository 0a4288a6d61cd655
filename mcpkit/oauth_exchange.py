"""The first leg of enterprise-managed authorization (SEP-990): an ID token for an ID-JAG.

An enterprise whose users sign in at its identity provider (IdP) can let an MCP client get
tokens for an MCP server without asking the user again: the client exchanges the user's ID
token, at the IdP's token endpoint, for an *identity assertion authorization grant* (ID-JAG,
a JWT the IdP signs for one authorization server and one resource) with OAuth 2.0 Token
Exchange (RFC 8693); then it presents that JWT to the MCP server's authorization server as
a JWT-bearer grant (RFC 7523), which :class:`mcpkit.oauth.OAuth` does like any other grant.

This module is the exchange only: one form POST, its answer checked.
"""

from __future__ import annotations

import httpx

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class ExchangeError(Exception):
    """The identity provider did not give an ID-JAG (its error, or a wrong answer)."""


async def id_jag(http: httpx.AsyncClient, idp_token_endpoint: str, id_token: str, *,
                 audience: str, resource: str, client_id: str | None,
                 client_secret: str | None = None, scope: str | None = None,
                 timeout: float = 30.0) -> str:
    """Exchange ``id_token`` at the IdP for an ID-JAG meant for the authorization server
    ``audience`` (its issuer) and the MCP server ``resource``; the JWT."""
    form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG,
            "subject_token": id_token, "subject_token_type": ID_TOKEN,
            "audience": audience, "resource": resource}
    if scope:
        form["scope"] = scope
    auth = None
    if client_id is not None and client_secret is not None:
        auth = httpx.BasicAuth(client_id, client_secret)
    elif client_id is not None:
        form["client_id"] = client_id
    try:
        response = await http.post(idp_token_endpoint, data=form, auth=auth, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ExchangeError(f"the token exchange at {idp_token_endpoint} failed: {exc!r}") \
            from None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ExchangeError(f"the token exchange at {idp_token_endpoint}: HTTP "
                            f"{response.status_code}, not a JSON object")
    if response.status_code != 200 or "error" in answer:
        raise ExchangeError(f"the identity provider refused the token exchange: "
                            f"{answer.get('error', response.status_code)}"
                            + (f" ({answer['error_description']})"
                               if answer.get("error_description") else ""))
    if answer.get("issued_token_type") != ID_JAG or not isinstance(
            answer.get("access_token"), str) or not answer["access_token"]:
        raise ExchangeError(f"the token exchange at {idp_token_endpoint} did not issue an "
                            f"ID-JAG (issued_token_type {answer.get('issued_token_type')!r})")
    return answer["access_token"]
