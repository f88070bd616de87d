"""Where specviz may fetch metrics from: a request the server makes for a visitor goes only where an
administrator allows.

- ``SPECVIZ_METRICS_ALLOW`` lists the host names and networks (CIDR, or single addresses) that may be
  read; the default is the loopback networks only. ``*`` allows any host.
- Always refused, whatever is allowed: the link-local networks (``169.254.0.0/16``, ``fe80::/10``),
  where the cloud providers' metadata services answer (``169.254.169.254`` on AWS, GCP, Azure and
  OCI; ``fd00:ec2::254`` on AWS over IPv6; ``100.100.100.200`` on Alibaba Cloud), and the
  unspecified addresses (``0.0.0.0/8``, ``::``), which reach this host.
- The check runs on the address each connection is made to: :mod:`specviz.live.scrape` resolves a
  name here and connects to the address that was checked, redirects included, so a name that
  resolves to a refused address, a name whose answer changes between two looks (DNS rebinding) and
  a redirect to a refused host are all refused before a packet is sent to them.
- A refusal says nothing about the host: not its status, not whether it answered, not whether its
  name resolves (the same message, before any connection).
- ``SPECVIZ_METRICS_SOURCES`` and ``SPECVIZ_PROMETHEUS_SOURCES`` name sources (``name=URL`` pairs, as
  an administrator sets Grafana's data sources); in viewer mode the Live page offers only these.
  A named source is read under the same rules: name its host in ``SPECVIZ_METRICS_ALLOW`` too.

The command line keeps its freedom for the person at the terminal, behind ``--allow-any-host``
(:meth:`Access.anywhere`), which still refuses the addresses above.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Union

from specviz import settings
from specviz.errors import InputError

__all__ = ["Access", "Refused", "ALWAYS_REFUSED", "named_sources"]

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

ALWAYS_REFUSED: tuple[Network, ...] = tuple(ipaddress.ip_network(n) for n in (
    "169.254.0.0/16", "fe80::/10",  # link-local: AWS, GCP, Azure and OCI metadata at 169.254.169.254
    "fd00:ec2::254/128",  # AWS metadata over IPv6
    "100.100.100.200/32",  # Alibaba Cloud metadata
    "0.0.0.0/8", "::/128",  # "this host" by another name
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix: an IPv4 address in its last 32 bits
# A label of a host name (RFC 1123): letters, digits and inner hyphens.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def _carried(address: Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 address an IPv6 address carries to be reached through (``::ffff:169.254.169.254``;
    NAT64's ``64:ff9b::a9fe:a9fe``; 6to4's ``2002:a9fe:a9fe::``), so that no spelling of a refused
    address passes for another."""
    if address.version != 6:
        return ()
    carried = [address.ipv4_mapped, address.sixtofour]
    if address in _NAT64:
        carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return tuple(a for a in carried if a is not None)


class Refused(Exception):
    """A connection the access rules refuse; :mod:`specviz.live.scrape` turns it into one message
    that names the source, never the address."""


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


@dataclass(frozen=True)
class Access:
    """The hosts a scrape may connect to.

    Attributes
    ----------
    any_host : bool
        Any host but the always-refused networks.
    hosts : frozenset of str
        Host names allowed by name (lower case), whatever they resolve to but the always-refused.
    networks : tuple
        Networks whose addresses are allowed.
    """

    any_host: bool
    hosts: frozenset[str]
    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, text: str) -> Access:
        """The rules a comma-separated list gives: ``*``, host names and networks.

        Raises
        ------
        InputError
            ``access.bad_entry`` for an entry that is none of these.
        """
        hosts, networks, any_host = set(), [], False
        for entry in (e.strip() for e in text.split(",")):
            if not entry:
                continue
            if entry == "*":
                any_host = True
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = entry.lower().rstrip(".")
            if not all(_LABEL.fullmatch(part) for part in name.split(".")):
                raise InputError("access.bad_entry", entry=entry[:80])
            hosts.add(name)
        return cls(any_host, frozenset(hosts), tuple(networks))

    @classmethod
    def from_settings(cls) -> Access:
        """The rules of ``SPECVIZ_METRICS_ALLOW`` (loopback only by default)."""
        return cls.parse(str(settings.get("SPECVIZ_METRICS_ALLOW")))

    @classmethod
    def anywhere(cls) -> Access:
        """Any host but the always-refused networks: the command line's ``--allow-any-host``."""
        return cls(True, frozenset(), ())

    def name_like(self, host: str) -> str | None:
        """``localhost`` where ``host`` is a near miss of it ("locahost", "localhsot") and loopback is
        allowed, for a refusal to ask about; None otherwise. Only the name is compared: nothing is
        resolved, and no name the rules allow is offered (an attack pass: a guess near an internal
        host's name had been answered with it)."""
        name = host.lower().rstrip(".")
        loopback = ipaddress.ip_address("127.0.0.1")
        if name == "localhost" or not self._allowed(loopback, by_name="localhost" in self.hosts):
            return None
        return "localhost" if difflib.SequenceMatcher(None, name, "localhost").ratio() >= 0.8 else None

    def _allowed(self, address: Address, by_name: bool) -> bool:
        if any(a.version == n.version and a in n for a in (address, *_carried(address)) for n in ALWAYS_REFUSED):
            return False
        address = getattr(address, "ipv4_mapped", None) or address  # ::ffff:127.0.0.1 is 127.0.0.1
        return by_name or self.any_host or any(address.version == n.version and address in n
                                               for n in self.networks)

    def address_for(self, host: str, port: int) -> str:
        """The address to connect to for ``host``: the host itself if it is an allowed address, else
        the first address its name resolves to that the rules allow.

        Raises
        ------
        Refused
            When no address of the host is allowed, or the name does not resolve and is not
            allowed by name (a refusal says no more than that).
        socket.gaierror
            When a name allowed by name does not resolve.
        """
        literal = _address(host)
        if literal is not None:
            if self._allowed(literal, by_name=False):
                return str(literal)
            raise Refused()
        by_name = host.lower().rstrip(".") in self.hosts
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror:
            if by_name:
                raise
            raise Refused() from None
        for *_, sockaddr in found:
            address = _address(str(sockaddr[0]))
            if address is not None and self._allowed(address, by_name):
                return str(address)
        raise Refused()


def named_sources(setting: str) -> dict[str, str]:
    """The sources a setting names, ``name=URL`` pairs separated by commas, in their order.

    Raises
    ------
    InputError
        ``access.bad_source`` for a pair without a name or a URL.
    """
    sources: dict[str, str] = {}
    for pair in (p.strip() for p in str(settings.get(setting)).split(",")):
        if not pair:
            continue
        name, _, url = pair.partition("=")
        if not name.strip() or not url.strip():
            raise InputError("access.bad_source", setting=setting, pair=pair[:80])
        sources[name.strip()] = url.strip()
    return sources
