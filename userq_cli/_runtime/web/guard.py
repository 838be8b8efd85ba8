"""Who may see the page and answer on it: the rules, free of I/O.

- **The token.** Random (`secrets`), or read from ``--web-token-file``. The
  first URL carries it (``/?token=...``); the page it opens sets a cookie
  (``HttpOnly``, ``SameSite=Strict``) and drops the token from the address
  bar. The cookie's value is derived from the token (an HMAC), so a page
  stays signed in across restarts of a listener with the same token file,
  and a new random token signs every browser out.
- **Host.** Every request names a host this listener answers to: an IP
  address, ``localhost``, this machine's name, or the host it was told to
  bind. A page of another site whose name an attacker made resolve to this
  machine (DNS rebinding) names its own host, and is refused.
- **Origin.** A request that changes anything (an answer) is a POST with
  the page's own ``Origin`` and the session's anti-CSRF value in a header
  (derived from the token too); a GET changes nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from collections.abc import Mapping
from pathlib import Path

from ..._support.diagnostics import reason
from ..._support.files import NoWriter, TooLarge, read_named_file

COOKIE = "userq"
CSRF_HEADER = "x-userq-csrf"
#: The shortest token read from a file: 128 bits of base64 (or 24 of hex).
MIN_TOKEN = 22
#: A browser keeps the cookie this long (a listener's token file may be kept
#: for months; a random token dies with its listener anyway).
COOKIE_SECONDS = 30 * 24 * 3600


class TokenError(Exception):
    """The token file cannot be used (startup error)."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def read_token(path: Path) -> str:
    """The token in ``path``: its first line, stripped; at least `MIN_TOKEN`
    characters of `secrets.token_urlsafe`'s alphabet, since it goes in a URL."""
    try:
        data = read_named_file(path, 1 << 20)
    except OSError as exc:
        raise TokenError(f"--web-token-file {path}: {reason(exc)}") from None
    except (NoWriter, TooLarge) as exc:
        raise TokenError(f"--web-token-file {path}: {exc}") from None
    lines = data.decode("utf-8", "replace").strip().splitlines()
    token = lines[0].strip() if lines else ""
    if len(token) < MIN_TOKEN:
        raise TokenError(
            f"--web-token-file {path}: the token must be at least {MIN_TOKEN} characters"
            " (make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    if not all(c.isascii() and (c.isalnum() or c in "-_") for c in token):
        raise TokenError(
            f"--web-token-file {path}: the token may hold only letters, digits, - and _"
        )
    return token


class Guard:
    def __init__(self, token: str, bound_host: str) -> None:
        self._token = token
        self.cookie = _derive(token, "cookie")
        self.csrf = _derive(token, "csrf")
        self._names = _own_names(bound_host)

    def token_matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self._token.encode())

    def signed_in(self, cookies: Mapping[str, str]) -> bool:
        given = cookies.get(COOKIE)
        return given is not None and hmac.compare_digest(given.encode(), self.cookie.encode())

    def host_allowed(self, host_header: str | None) -> bool:
        """Whether a ``Host`` header names this listener. Its port is not
        checked: ``ssh -L 9000:127.0.0.1:8731`` reaches it as localhost:9000."""
        if not host_header:
            return False
        name = host_name(host_header)
        if name is None:
            return False
        try:
            ipaddress.ip_address(name)
            return True  # an address is not a name anyone can rebind
        except ValueError:
            return name.lower().rstrip(".") in self._names

    def refusal(self, headers: Mapping[str, str]) -> tuple[int, str] | None:
        """Why any request is refused, with its status, or None: a Host that
        is not this listener's (421), an Origin of another site (403)."""
        host = headers.get("host")
        if not self.host_allowed(host):
            return 421, "this page is not served under that name"
        origin = headers.get("origin")
        if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
            return 403, "a page of another site may not use this one"
        return None

    def post_allowed(self, headers: Mapping[str, str]) -> str | None:
        """Why a state-changing request is refused, or None: its Origin must
        be this page's (scheme and the Host it was sent to), and it must
        carry the session's anti-CSRF value."""
        origin = headers.get("origin")
        host = headers.get("host")
        if origin is None or host is None:
            return "no Origin"
        if origin not in (f"http://{host}", f"https://{host}"):
            return "another site's Origin"
        given = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.csrf.encode()):
            return "no anti-CSRF value"
        return None

    def cookie_header(self, secure: bool) -> str:
        parts = [
            f"{COOKIE}={self.cookie}",
            "Path=/",
            f"Max-Age={COOKIE_SECONDS}",
            "HttpOnly",
            "SameSite=Strict",
        ]
        if secure:
            parts.append("Secure")
        return "; ".join(parts)


def host_name(host_header: str) -> str | None:
    """The name or address of a ``Host`` header, without its port and
    brackets; None for one that is malformed."""
    value = host_header.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        rest = value[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return value[1:end]
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None
    return name or None


def _derive(token: str, purpose: str) -> str:
    return hmac.new(token.encode(), f"userq web {purpose}".encode(), hashlib.sha256).hexdigest()


def _own_names(bound_host: str) -> frozenset[str]:
    names = {"localhost", bound_host.lower().rstrip(".")}
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.add(name.lower().rstrip("."))
    return frozenset(name for name in names if name)
