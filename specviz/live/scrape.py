"""Fetching Prometheus exposition text from a URL a user typed, or from a file, within bounds.

The URL comes from a user and the answer from a server nobody vouches for, so nothing about either is
trusted:

- Only ``http`` and ``https`` URLs are fetched; any other scheme (``file:``, ``ftp:``, ``gopher:``,
  ``javascript:``, ``data:``...) and any URL with a user name or password is refused before a
  connection is made. Credentials are refused rather than sent because the URL is shown on the page,
  kept in messages and may be stored as a run's source; a password in it would leak there.
- Only hosts the access rules allow are connected to (:mod:`specviz.live.access`: loopback by
  default, ``SPECVIZ_METRICS_ALLOW``; link-local and metadata addresses never): each connection
  resolves its host here and connects to the address that was checked.
- Redirects are followed by hand, at most ``SPECVIZ_SCRAPE_MAX_REDIRECTS`` of them, each target
  checked as the user's URL is (a redirect to ``file:`` or ``ftp:`` is refused), and its
  connection as every other.
- Connecting waits ``SPECVIZ_SCRAPE_CONNECT_TIMEOUT_S``; each read ``SPECVIZ_SCRAPE_READ_TIMEOUT_S``;
  and the whole scrape ends at ``SPECVIZ_SCRAPE_DEADLINE_S`` even if the server sends a byte just
  before each read timeout for ever: at the deadline a watchdog shuts the connections down. Host-name
  resolution happens before a socket exists and is bounded by the system resolver's own timeouts.
- The body is counted while it streams, after decompression, and reading stops past
  ``SPECVIZ_SCRAPE_MAX_BYTES``: an endless body or a gzip bomb costs that much memory, no more. A
  ``Content-Length`` over the limit is refused before the body is read; a smaller one is not
  believed, the count is.
- Nothing from the environment joins the request: no proxy, no ``~/.netrc`` credentials
  (``trust_env`` off); certificates are checked against certifi's bundle.
- What comes back must be UTF-8 exposition text (an HTML page, JSON or anything else is refused,
  recognised by its first lines) and must hold speculative-decoding metrics (a family whose name
  contains ``spec_decode`` or ``spec_accept``: vLLM V0 and V1, SGLang, llama.cpp), found by a
  pattern over the names, not by a full parse, which is :mod:`specviz.live.exposition`'s job.

Every failure is one :class:`ScrapeError` with its own message key (``scrape.*``) and the source
shown shortened, without credentials and with control characters escaped; never a traceback.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import re
import socket
import stat
import threading
import urllib.parse
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from typing import Any, Iterator

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection

from specviz import settings
from specviz.errors import SpecvizError

from .access import Access, Refused

__all__ = ["ACCEPT", "ScrapeError", "Answer", "Scraped", "Limits", "check_url", "fetch_url", "fetch_scrape", "fetch_body",
           "fetch_source", "exposition_text", "shown", "without_secrets", "stored_source"]

ACCEPT = "text/plain;version=0.0.4"  # the exposition format every engine here writes
_SCHEMES = ("http", "https")
_CHUNK = 1 << 16
_SHOWN_CHARS = 120  # the most characters of a source a message shows
_LINES_CHECKED = 50  # the first significant lines that must look like exposition text
# A scheme as RFC 3986 spells it; a source that starts with one is a URL, anything else a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# A host and a port where a scheme would be ("localhost:9105/metrics"): a URL written without its scheme.
_HOST_PORT = re.compile(r"^[A-Za-z][A-Za-z0-9.-]*:\d{1,5}(?:/|$)")
# An IPv4 address and its port: no scheme to a URL parser, so a path to fetch_source.
_ADDRESS_PORT = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}(?:/|$)")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
# A sample line: a metric name (or a quoted UTF-8 name inside the braces), labels, then a value
# (a number, NaN or Inf: JSON such as `{"a": {}, "b": 1 }` has labels' shape but no value).
_SAMPLE = re.compile(r"(?:[A-Za-z_:][A-Za-z0-9_:]*(?:\{.*\})?|\{.*\})[ \t]+[-+]?(?:[0-9.]|[Nn]a[Nn]|[Ii]nf)")
# A family or sample name with spec_decode or spec_accept in it, at the start of a sample line or of
# a HELP or TYPE comment, bare or quoted (UTF-8 names); the lazy name prefix keeps the scan linear.
_SPEC_FAMILY = re.compile(r'^(?:#[ \t]+(?:HELP|TYPE)[ \t]+"?|\{")?[A-Za-z_:][A-Za-z0-9_:.]*?spec_(?:decode|accept)', re.M)


class ScrapeError(SpecvizError):
    """A source that could not be read or is not what a live page needs; ``key`` says why
    (``scrape.*`` in the catalogue), ``params["source"]`` names the source as :func:`shown` does."""


@dataclass(frozen=True)
class Answer:
    """What a fetch brought back (:func:`fetch_body`): the final ``status``, the ``body``, and the
    ``url`` it came from, the last a (checked) redirect led to, else the one asked."""

    status: int
    body: bytes
    url: str


@dataclass(frozen=True)
class Scraped:
    """A scrape's exposition text (:func:`fetch_scrape`, :func:`fetch_source`), the ``url`` it came from
    (:class:`Answer`; a file's path as given), and whether a redirect moved it from the one asked."""

    text: str
    url: str
    redirected: bool = False


@dataclass(frozen=True)
class Limits:
    """Bounds of one scrape.

    Attributes
    ----------
    connect_timeout_s : float
        Wait for a connection to be accepted.
    read_timeout_s : float
        Silence allowed between reads, the wait for the answer's headers included.
    deadline_s : float
        The whole scrape, redirects and body included.
    max_bytes : int
        Most bytes of text read (after decompression); files too.
    max_redirects : int
        Redirects followed at most.
    access : Access
        The hosts it may connect to.
    """

    connect_timeout_s: float
    read_timeout_s: float
    deadline_s: float
    max_bytes: int
    max_redirects: int
    access: Access

    @classmethod
    def from_settings(cls) -> Limits:
        """The limits the ``SPECVIZ_SCRAPE_*`` settings give now, and the hosts
        ``SPECVIZ_METRICS_ALLOW`` allows."""
        return cls(connect_timeout_s=settings.get("SPECVIZ_SCRAPE_CONNECT_TIMEOUT_S"),
                   read_timeout_s=settings.get("SPECVIZ_SCRAPE_READ_TIMEOUT_S"),
                   deadline_s=settings.get("SPECVIZ_SCRAPE_DEADLINE_S"),
                   max_bytes=settings.get("SPECVIZ_SCRAPE_MAX_BYTES"),
                   max_redirects=settings.get("SPECVIZ_SCRAPE_MAX_REDIRECTS"),
                   access=Access.from_settings())


def without_secrets(source: str) -> str:
    """``source`` without what may hold a secret: a URL's credentials replaced by ``***``, and an http(s)
    URL's query and fragment left out (a token: an attack pass found ``?token=…`` of a named source
    shown to viewers and stored with its scrapes); a file's path as it is.

    >>> without_secrets("http://user:secret@host:8000/metrics?token=abc")
    'http://***@host:8000/metrics'
    """
    text = _USERINFO.sub(r"\1***@", source)
    return re.split(r"[?#]", text, maxsplit=1)[0] if _scheme(text.strip()) in _SCHEMES else text


def stored_source(source: str) -> str:
    """``source`` as its scrapes are stored and compared: :func:`without_secrets`, with an http(s)
    URL's query and fragment, where there is one, kept as a digest of them (``?sha256=…``, 16 hex
    digits), so that two queries of one endpoint (Prometheus's ``/federate?match[]=…``) stay two
    sources and neither's token is stored (an attack pass: ``?token=…`` in ``snapshots.source``)."""
    text = _USERINFO.sub(r"\1***@", source)
    query = re.search(r"[?#]", text) if _scheme(text.strip()) in _SCHEMES else None
    if query is None:
        return text
    return f"{text[:query.start()]}?sha256={hashlib.sha256(text[query.start():].encode()).hexdigest()[:16]}"


def shown(source: str) -> str:
    """``source`` as a message may show it: :func:`without_secrets`, characters that do not print
    (controls, bidirectional overrides) escaped, and at most 120 characters, the middle cut.

    >>> shown("http://user:secret@host:8000/metrics?token=abc")
    'http://***@host:8000/metrics'
    """
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in without_secrets(source))
    if len(text) > _SHOWN_CHARS:
        half = _SHOWN_CHARS // 2
        text = f"{text[:half - 1]}…{text[-half:]}"
    return text


def _scheme(source: str) -> str | None:
    match = _SCHEME.match(source)
    return match.group(1).lower() if match else None


def check_url(url: str) -> str:
    """``url`` (surrounding whitespace removed) if specviz may fetch it.

    Raises
    ------
    ScrapeError
        ``scrape.no_url`` for none, ``scrape.no_scheme`` without a scheme (``scrape.no_scheme_port``
        where a host or an IPv4 address and a port stand in its place), ``scrape.scheme`` for one other than http or https,
        ``scrape.credentials`` for a user name or password in it, ``scrape.bad_url`` for a URL
        without a host, with a port that is not a number from 1 to 65535, or with whitespace or
        control characters inside.
    """
    url = url.strip()
    if not url:  # said as such, not as a URL of no scheme with a blank for its name (a browser pass)
        raise ScrapeError("scrape.no_url")
    source = shown(url)
    scheme = _scheme(url)
    if scheme is None:
        if _ADDRESS_PORT.match(url):
            raise ScrapeError("scrape.no_scheme_port", source=source, suggested=f"http://{source}")
        raise ScrapeError("scrape.no_scheme", source=source)
    if scheme not in _SCHEMES:
        if _HOST_PORT.match(url):  # "localhost:9105/metrics": a host and its port, the scheme left out
            raise ScrapeError("scrape.no_scheme_port", source=source, suggested=f"http://{source}")
        raise ScrapeError("scrape.scheme", source=source, scheme=shown(scheme)[:20])
    if any(not c.isprintable() or c.isspace() for c in url):
        raise ScrapeError("scrape.bad_url", source=source)
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # a port that is not a number raises here
    except ValueError:
        raise ScrapeError("scrape.bad_url", source=source) from None
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ScrapeError("scrape.credentials", source=source)
    if not parts.hostname or port == 0:
        raise ScrapeError("scrape.bad_url", source=source)
    return url


# The watchdog and the access rules of the scrape running in this context: the connections its
# session opens report their sockets to the one and ask the other where to connect. Context variables
# because urllib3 builds connections deep inside requests.
_WATCHDOG: contextvars.ContextVar[_Watchdog | None] = contextvars.ContextVar("specviz_scrape_watchdog",
                                                                              default=None)
_ACCESS: contextvars.ContextVar[Access | None] = contextvars.ContextVar("specviz_scrape_access", default=None)


class _Watchdog:
    """Shuts down every connection of one scrape at its deadline, waking any read blocked on one.

    A read timeout alone does not end a scrape: it bounds each wait for data, so a server that sends
    a byte before each timeout (in the TLS handshake, the headers, a chunk-size line or the body)
    would go on for ever.

    It holds a duplicate of each socket's descriptor, of its own: shutting that down ends the
    connection for the descriptor urllib3 reads too (TLS wraps the socket in a new object, which the
    original no longer controls), and a descriptor the watchdog owns cannot have been closed and
    reused for another file meanwhile. The duplicates are closed when the scrape ends.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._lock = threading.Lock()
        self._twins: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            for twin in self._twins:
                twin.close()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            twin = sock.dup()
            self._twins.append(twin)
            if self.fired:
                _shut(twin)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for twin in self._twins:
                _shut(twin)


def _shut(twin: socket.socket) -> None:
    try:
        twin.shutdown(socket.SHUT_RDWR)
    except OSError:  # the peer already closed it, or the scrape ended and closed the twin
        pass


class _Watched:
    """Mixin for urllib3's connections: connect only to an address the scrape's access rules allow
    (the host resolved and checked here, the checked address connected to: TLS still checks the
    certificate against the host's name), and hand each new socket to the scrape's watchdog, before
    TLS."""

    def _new_conn(self) -> socket.socket:
        access = _ACCESS.get()
        if access is not None:
            self._dns_host = access.address_for(self._dns_host, self.port)  # type: ignore[attr-defined]
        sock = super()._new_conn()  # type: ignore[misc]
        watchdog = _WATCHDOG.get()
        if watchdog is not None:
            watchdog.watch(sock)
        return sock


class _HTTPConnection(_Watched, HTTPConnection):
    pass


class _HTTPSConnection(_Watched, HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _Adapter(HTTPAdapter):
    """requests' adapter with watched connections and no retries (a retry would restart the clock)."""

    def __init__(self) -> None:
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)
        # A new dict: the pool manager's default is urllib3's module-wide one.
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


class _Session(requests.Session):
    """A session that prepares no redirect of its own: :func:`fetch_body` follows each, checked
    (:func:`_redirect`). Even told not to follow one, requests parses its target to keep it for
    later (``Session.send``'s ``r._next``), and a target that is no URL at all ("http://[::1")
    raised there, before specviz saw it (an attack pass: "could not be reached (ValueError)")."""

    def resolve_redirects(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return iter(())


def _session() -> requests.Session:
    session = _Session()
    session.trust_env = False  # no proxy or ~/.netrc credentials for a host the user picked
    session.mount("http://", _Adapter())
    session.mount("https://", _Adapter())
    return session


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps: requests and urllib3 keep the cause in ``args``, ``reason`` or
    ``__cause__``/``__context__``."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        linked = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        todo.extend(e for e in linked if isinstance(e, BaseException))


def _failure(exc: BaseException, source: str, limits: Limits, watchdog: _Watchdog, answered: bool) -> ScrapeError:
    """The message for a failed exchange, by the types of the exception and its causes, and by
    whether the server had ``answered`` (sent its status and headers) before it failed."""
    if watchdog.fired:  # whatever the shut socket made the read raise
        return ScrapeError("scrape.deadline", source=source, seconds=limits.deadline_s)
    causes = list(_causes(exc))
    kinds = tuple(type(c) for c in causes)

    def has(*types: type) -> bool:
        return any(issubclass(k, types) for k in kinds)

    if has(ConnectionRefusedError):
        return ScrapeError("scrape.refused", source=source)
    if has(socket.gaierror, urllib3.exceptions.NameResolutionError):
        return ScrapeError("scrape.no_host", source=source)
    if has(requests.exceptions.SSLError, urllib3.exceptions.SSLError):
        return ScrapeError("scrape.tls", source=source)
    if has(requests.exceptions.ConnectTimeout):
        return ScrapeError("scrape.connect_timeout", source=source, seconds=limits.connect_timeout_s)
    if has(requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError, TimeoutError):
        return ScrapeError("scrape.body_timeout" if answered else "scrape.read_timeout",
                           source=source, seconds=limits.read_timeout_s)
    if has(requests.exceptions.ContentDecodingError, urllib3.exceptions.DecodeError):
        return ScrapeError("scrape.bad_encoding", source=source)
    if has(requests.exceptions.InvalidURL, urllib3.exceptions.LocationParseError, UnicodeError):
        return ScrapeError("scrape.bad_url", source=source)
    if has(requests.exceptions.ChunkedEncodingError, urllib3.exceptions.ProtocolError, HTTPException):
        return ScrapeError("scrape.broken", source=source)
    return ScrapeError("scrape.unreachable", source=source, kind=type(exc).__name__)


def _redirect(session: requests.Session, response: requests.Response, current: str, source: str) -> str:
    """The checked absolute URL a redirect points to."""
    location = session.get_redirect_target(response) or ""
    try:
        target = urllib.parse.urljoin(current, location)
    except ValueError:  # "http://[::1", no address to join (an attack pass: "could not be reached (ValueError)")
        raise ScrapeError("scrape.redirect_bad", source=source, target=shown(location)) from None
    scheme = _scheme(target)
    if scheme is not None and scheme not in _SCHEMES:  # without a scheme, the target is refused below
        raise ScrapeError("scrape.redirect_scheme", source=source, scheme=shown(scheme)[:20])
    try:
        return check_url(target)
    except ScrapeError:
        raise ScrapeError("scrape.redirect_bad", source=source, target=shown(target)) from None


def _body(response: requests.Response, source: str, limits: Limits) -> bytes:
    """The body, decompressed, counted as it streams and cut off past ``limits.max_bytes``."""
    declared = response.headers.get("Content-Length", "")
    # A claim, refused early and never relied on; ASCII digits only ("²".isdigit() holds, and int() refuses it).
    if declared.isascii() and declared.isdigit() and int(declared) > limits.max_bytes:
        raise ScrapeError("scrape.too_large", source=source, limit=limits.max_bytes)
    body = bytearray()
    # urllib3 bounds each decompressed chunk by the chunk size, so a small gzip bomb cannot expand
    # past one chunk before the count below sees it.
    for chunk in response.iter_content(chunk_size=_CHUNK):
        body += chunk
        if len(body) > limits.max_bytes:
            raise ScrapeError("scrape.too_large", source=source, limit=limits.max_bytes)
    return bytes(body)


def fetch_url(url: str, limits: Limits | None = None) -> str:
    """The exposition text at ``url``, fetched within ``limits`` and checked by :func:`exposition_text`.

    Parameters
    ----------
    url : str
        An http or https URL, typically ``http://host:8000/metrics``.
    limits : Limits, optional
        Bounds of the scrape; :meth:`Limits.from_settings` when omitted.

    Raises
    ------
    ScrapeError
        For every failure, with its own key: the URL refused (:func:`check_url`), the connection
        refused or timed out, a read timeout, the deadline, too many redirects or one to another
        scheme, a status other than 2xx, a body over the size limit, one that is not exposition text
        or holds no speculative-decoding metrics.
    """
    return fetch_scrape(url, limits).text


def fetch_scrape(url: str, limits: Limits | None = None) -> Scraped:
    """:func:`fetch_url`'s text with the URL it came from, which a redirect may have moved: what a
    page says its figures were read from."""
    answer = fetch_body(url, limits)
    return Scraped(exposition_text(answer.body, shown(url.strip())), answer.url, answer.url != check_url(url))


def fetch_body(url: str, limits: Limits | None = None, *, accept: str = ACCEPT, any_status: bool = False,
               source: str | None = None) -> Answer:
    """The HTTP status and body at ``url`` and where they came from, fetched within ``limits``: the one fetch behind every
    URL specviz reads (:func:`fetch_url`, and the JSON of :mod:`specviz.live.prometheus`).

    Parameters
    ----------
    url : str
        An http or https URL (:func:`check_url`).
    limits : Limits, optional
        Bounds of the exchange; :meth:`Limits.from_settings` when omitted.
    accept : str
        The ``Accept`` header.
    any_status : bool
        Read the body of any final (non-redirect) status, for an API that explains its errors in
        the body; by default a status other than 2xx is refused before the body is read.
    source : str, optional
        How messages name the source (already :func:`shown`); ``shown(url)`` when omitted.

    Raises
    ------
    ScrapeError
        As :func:`fetch_url`, short of the checks of the body's content.
    """
    limits = limits or Limits.from_settings()
    asked = current = check_url(url)
    source = source or shown(current)
    headers = {"Accept": accept, "Accept-Encoding": "gzip", "User-Agent": "specviz"}
    answered = False
    with _Watchdog(limits.deadline_s) as watchdog, _session() as session:
        token, access_token = _WATCHDOG.set(watchdog), _ACCESS.set(limits.access)
        try:
            for _ in range(limits.max_redirects + 1):
                with session.get(current, headers=headers, stream=True, allow_redirects=False,
                                 timeout=(limits.connect_timeout_s, limits.read_timeout_s)) as response:
                    if response.is_redirect:
                        current = _redirect(session, response, current, source)
                        continue
                    status = response.status_code
                    if not any_status and not 200 <= status < 300:
                        raise ScrapeError("scrape.http_status", source=source, status=status)
                    answered = True
                    data = _body(response, source, limits)
                    break
            else:
                raise ScrapeError("scrape.redirects", source=source, limit=limits.max_redirects)
            if watchdog.fired:  # a shut socket can read as the end of a body that had no length
                raise ScrapeError("scrape.deadline", source=source, seconds=limits.deadline_s)
        except ScrapeError:
            raise
        except Refused:  # the same words whatever the host is, answers or resolves to
            if current != asked:  # where a redirect led: named
                raise ScrapeError("scrape.redirect_not_allowed", source=source, target=shown(current)) from None
            if near := limits.access.name_like(urllib.parse.urlsplit(asked).hostname or ""):
                raise ScrapeError("scrape.not_allowed_near", source=source, near=near) from None
            raise ScrapeError("scrape.not_allowed", source=source) from None
        except (requests.RequestException, urllib3.exceptions.HTTPError, HTTPException, OSError,
                ValueError) as exc:
            raise _failure(exc, source, limits, watchdog, answered) from None
        finally:
            _WATCHDOG.reset(token)
            _ACCESS.reset(access_token)
    return Answer(status, data, current)


_NOT_REGULAR = ((stat.S_ISDIR, "directory"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device"),
                (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"))


def _read_file(path: Path, source: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, read no further even if it grows."""
    try:
        # O_NONBLOCK: a FIFO cannot block the open; the opened file is checked, not only the name.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                kind = next((kind for test, kind in _NOT_REGULAR if test(mode)), "special file")
                raise ScrapeError("scrape.not_regular", source=source, kind=kind)
            with open(fd, "rb", closefd=False) as file:
                data = file.read(max_bytes + 1)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise ScrapeError("scrape.no_file", source=source) from None
    except OSError as exc:
        raise ScrapeError("scrape.unreadable", source=source, detail=exc.strerror or type(exc).__name__) from None
    if len(data) > max_bytes:
        raise ScrapeError("scrape.too_large", source=source, limit=max_bytes)
    return data


def fetch_source(source: str, limits: Limits | None = None) -> Scraped:
    """The exposition text of ``source``, a URL (:func:`fetch_scrape`) or the path of a file, and where it
    was read from.

    A source that starts with a scheme (``name:``) is a URL and must be http or https, so
    ``file:///etc/passwd`` and ``ftp://...`` are refused, not read; a file whose name has a colon
    before any slash is given as ``./name``. A file gets the same size limit and checks as a body.

    Raises
    ------
    ScrapeError
        As :func:`fetch_url` for a URL; for a file, ``scrape.no_file`` (``scrape.no_scheme_port`` where
        no file has the name and it reads as an IPv4 address and a port), ``scrape.not_regular`` (a
        directory, device or FIFO, refused unread), ``scrape.unreadable``, ``scrape.too_large`` and
        the checks of :func:`exposition_text`.
    """
    limits = limits or Limits.from_settings()
    if _scheme(source.strip()) is not None:
        return fetch_scrape(source, limits)
    name = shown(source)
    try:
        data = _read_file(Path(source), name, limits.max_bytes)
    except ScrapeError as exc:
        if exc.key == "scrape.no_file" and _ADDRESS_PORT.match(source.strip()):
            # "127.0.0.1:9102/metrics": a URL without its scheme, not a missing file (an SRE's pass).
            raise ScrapeError("scrape.no_scheme_port", source=name, suggested=f"http://{name}") from None
        raise
    return Scraped(exposition_text(data, name), source)


def exposition_text(data: bytes, source: str) -> str:
    """``data`` as text, if it looks like Prometheus exposition text with speculative-decoding metrics.

    Only the first 50 lines that are neither blank nor comments are checked line by line (each must
    be a sample: a name, optional labels and a value); the spec-decode families are looked for in the
    whole text. This is a sniff, not a parse.

    Parameters
    ----------
    data : bytes
        A body or a file's content.
    source : str
        The source as messages show it (:func:`shown`).

    Raises
    ------
    ScrapeError
        ``scrape.empty``, ``scrape.not_text`` (not UTF-8, or binary), ``scrape.html``, ``scrape.json``,
        ``scrape.not_exposition`` (with the first line that is no sample) or ``scrape.no_spec_decode``.
    """
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise ScrapeError("scrape.not_text", source=source) from None
    if "\x00" in text:
        raise ScrapeError("scrape.not_text", source=source)
    start = text.lstrip()[:1]
    if not start:
        raise ScrapeError("scrape.empty", source=source)
    significant = 0
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not _SAMPLE.match(line):
            if start == "<":
                raise ScrapeError("scrape.html", source=source)
            if start in "{[":
                raise ScrapeError("scrape.json", source=source)
            raise ScrapeError("scrape.not_exposition", source=source, line=number)
        significant += 1
        if significant == _LINES_CHECKED:
            break
    if not _SPEC_FAMILY.search(text):
        raise ScrapeError("scrape.no_spec_decode", source=source)
    return text
