"""Keeping API keys out of everything ragmeter writes (docs/judge.md, "Secrets").

Keys come only from the environment. Base URLs are reduced before they are recorded anywhere
(no user info, query or fragment), and every error detail, log line and judge reply passes
through a :class:`Redactor` that masks the literal key, the parts of it that endpoints echo in
their messages (``sk-relia...9d2c41``, ``sk-proj-****9d2c``), credentials carried in the base
URL, ``Authorization`` headers and ``Bearer`` tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "Redactor",
    "clean_url",
    "endpoint_id",
    "is_secret_param",
    "mask_url",
    "url_secrets",
]

MASK = "***"

_AUTH_HEADER = re.compile(
    r"(?i)(authorization|api[-_]?key|x-api-key)(\s*[:=]\s*)([^\s,;'\"]+(?:\s+[^\s,;'\"]+)?)"
)
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")
_SK = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
# a key shown in part: visible characters around an elision ("sk-relia...9d2c41",
# "sk-proj-*****9d2c", "…9d2c"), the way OpenAI-compatible servers print a wrong key
# (anchored at the start of a word, so a reply of megabytes is scanned in linear time)
_ELIDED = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<pre>[A-Za-z0-9_-]*)"
    r"(?:\.{2,}|\u2026|\*{2,}|\u2022{2,})(?P<post>[A-Za-z0-9_-]*)"
)
_WORD = re.compile(r"[A-Za-z0-9_-]{6,}")
ELIDED_MIN = 4  # visible characters next to an elision that identify the key
FRAGMENT_MIN = 6  # a bare word that is part of the key
REPLY_MIN = 8  # secrets shorter than this are placeholders, not masked inside model replies

# query-string parameters that carry credentials (Azure's api-key, Google's key, tokens,
# signatures); matched on the lower-cased name without separators
_SECRET_PARAM_WORDS = ("key", "token", "secret", "passw", "pwd", "auth", "sig", "credential")


def is_secret_param(name: str) -> bool:
    """True for a query or config key whose value is a credential.

    >>> [is_secret_param(n) for n in ("api-key", "key", "access_token", "sig", "model", "v")]
    [True, True, True, True, False, False]
    """
    flat = re.sub(r"[^a-z]", "", name.lower())
    return any(w in flat for w in _SECRET_PARAM_WORDS)


_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@?#\s]+@)?")
_QUERY_PAIR = re.compile(r"(?P<sep>[?&;])(?P<name>[^=&;#]+)=(?P<value>[^&;#]*)")


def mask_url(text: str) -> str:
    """A URL with its credentials masked and everything else kept (what configs record).

    User info becomes ``***@`` and the value of every query parameter that carries a
    credential (``api-key``, ``key``, ``token``, ``sig``, ...) becomes ``***``; text that is not
    a URL is returned as it is.

    >>> mask_url("https://me.openai.azure.com/v1?api-version=2024-06-01&api-key=abc123")
    'https://me.openai.azure.com/v1?api-version=2024-06-01&api-key=***'
    >>> mask_url("postgresql://user:pw@db/ragmeter?sslmode=require")
    'postgresql://***@db/ragmeter?sslmode=require'
    >>> mask_url("not a url ?key=1")
    'not a url ?key=1'
    """
    m = _URL.match(text)
    if m is None:
        return text
    head = m.group("scheme") + ("***@" if m.group("userinfo") else "")
    rest = text[m.end() :]
    q = rest.find("?")
    if q < 0:
        return head + rest

    def pair(p: re.Match[str]) -> str:
        if not is_secret_param(p.group("name")):
            return p.group(0)
        return f"{p.group('sep')}{p.group('name')}={MASK}"

    return head + rest[:q] + _QUERY_PAIR.sub(pair, rest[q:])


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its password and secret-looking query values.

    >>> url_secrets("https://u:pw-123@host/v1?api-version=2024&api-key=abcd1234")
    ['pw-123', 'abcd1234']
    """
    if not url:
        return []
    try:
        parts = urlsplit(url.strip())
        out = [parts.password] if parts.password else []
    except ValueError:  # an unparsable port or host: nothing reliable to pull out
        return []
    out.extend(v for k, v in parse_qsl(parts.query, keep_blank_values=False) if is_secret_param(k))
    return [s for s in out if s]


def clean_url(url: str | None) -> str | None:
    """The base URL without user info, query string or fragment (what results record).

    >>> clean_url("https://user:pw@example.com:8443/v1/?key=abc#frag")
    'https://example.com:8443/v1/'
    >>> clean_url(None) is None
    True
    """
    if url is None:
        return None
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def endpoint_id(url: str | None) -> str:
    """Scheme, host, port and path of a base URL: the ``endpoint`` of a cache key.

    A trailing slash is dropped and the scheme and host are lower-cased, so that spellings of
    one server share cache entries; the default port of the scheme is made explicit.

    >>> endpoint_id("HTTP://LocalHost:8000/v1/")
    'http://localhost:8000/v1'
    >>> endpoint_id("https://api.openai.com/v1")
    'https://api.openai.com:443/v1'
    """
    if not url:
        return ""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


class Redactor:
    """Masks secrets in any text before it is shown, logged or stored.

    Besides the whole key it masks the parts of it that endpoints echo: an elided key whose
    visible start is a prefix or whose visible end is a suffix of the key (at least
    ``ELIDED_MIN`` characters), and any word of at least ``FRAGMENT_MIN`` characters, with a
    digit in it, that occurs inside the key.

    >>> r = Redactor(["sk-test-SENTINEL-7f3a"])
    >>> r("bad key sk-test-SENTINEL-7f3a; Authorization: Bearer abc.def")
    'bad key ***; Authorization: ***'
    >>> r("headers {'authorization': 'Bearer xyz'}")
    "headers {'authorization': '***'}"
    >>> r("Incorrect API key provided: sk-tes...7f3a. Key ending in ENTINEL-7f3a.")
    'Incorrect API key provided: ***. Key ending in ***.'
    >>> r("sk-test-***********7f3a and the end...")
    '*** and the end...'

    :meth:`reply` masks a model's reply, where words like "bearer" or "authorization" are data:
    only the configured secrets and their parts, and only secrets of at least ``REPLY_MIN``
    characters (a placeholder such as ``EMPTY`` or ``none`` is not a secret worth rewriting a
    reply for).

    >>> r.reply("Bearer bonds need authorization: yes; key sk-test-SENTINEL-7f3a")
    'Bearer bonds need authorization: yes; key ***'
    >>> Redactor(["none"]).reply('{"verdict": "none"}')
    '{"verdict": "none"}'
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: list[str] = []
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 4 and secret not in self._secrets:
            self._secrets = sorted([*self._secrets, secret], key=len, reverse=True)

    def __call__(self, text: str | None) -> str | None:
        if text is None:
            return None
        out = _BEARER.sub(MASK, str(text))
        out = _AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + MASK, out)
        out = self._mask(out, self._secrets)
        out = _SK.sub(MASK, out)
        return out

    def reply(self, text: str) -> str:
        """``text`` of a model's reply with the configured secrets, whole or in part, masked."""
        return self._mask(text, [s for s in self._secrets if len(s) >= REPLY_MIN])

    @staticmethod
    def _mask(text: str, secrets: list[str]) -> str:
        if not secrets:
            return text
        for s in secrets:
            text = text.replace(s, MASK)

        def elided(m: re.Match[str]) -> str:
            pre, post = m.group("pre"), m.group("post")
            for s in secrets:
                if (len(pre) >= ELIDED_MIN and s.startswith(pre)) or (
                    len(post) >= ELIDED_MIN and s.endswith(post)
                ):
                    return MASK
            return m.group(0)

        def fragment(m: re.Match[str]) -> str:
            word = m.group(0)
            # a key's random characters include digits; a plain word that happens to occur
            # in the key ("required" in "sk-no-key-required") is left alone
            keyish = any(c.isdigit() for c in word)
            return MASK if keyish and any(word in s for s in secrets) else word

        # the regex passes cost a Python call per word: run them only when a piece of a secret
        # that they could match occurs at all (substring tests run at C speed)
        if any(s[:ELIDED_MIN] in text or s[-ELIDED_MIN:] in text for s in secrets):
            text = _ELIDED.sub(elided, text)
        n = FRAGMENT_MIN
        windows = {s[i : i + n] for s in secrets for i in range(len(s) - n + 1)}
        if any(w in text for w in windows):
            text = _WORD.sub(fragment, text)
        return text
