"""Where a webhook may be sent (DESIGN.md §12, "Webhook URLs").

A tenant names the URL and the service POSTs to it from inside the operator's
network, so an unchecked URL lets a tenant reach what only the service can reach:
the cloud metadata endpoint (credentials), the database port, an internal admin
page, and read back what answered in the attempt log. This module is the one
place that decides; registration (``events/webhook_service.py``) and every delivery
(``events/worker.py``) call :func:`check_url`.

The rules:

- ``https://`` only; ``http://`` as well when the operator allows private networks
  (``TILLBOOK_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true``: local development and tests).
- No credentials (``user:pass@``), no whitespace, CR, LF or other control or format
  characters, no backslash; a host and a port from 1 to 65535; at most
  :data:`MAX_URL_LENGTH` characters, as stored.
- The host is resolved, and the URL is refused when *any* address is not a public
  one: loopback, private (RFC 1918, CGNAT 100.64.0.0/10, fc00::/7), link-local,
  multicast, unspecified, reserved or documentation ranges, or a cloud metadata
  address. IPv6 forms that carry an IPv4 address (``::ffff:127.0.0.1``, NAT64,
  6to4) are judged by that address. A host written as a number in the forms the
  C resolver accepts (``2130706433``, ``0x7f.1``, ``0177.1``) is read the way
  ``getaddrinfo`` reads it, so an injected resolver sees the same addresses.
- With private networks allowed, loopback and private addresses pass; link-local,
  metadata and the rest never do.

Resolution is checked again at every delivery, and the worker then connects to an
address that was checked (see :meth:`Target.pinned`): a name that resolves to a
public address at the check and to 10.0.0.1 a moment later (DNS rebinding) cannot
steer the connection.

A refusal names the address when the tenant wrote it (``address 10.0.0.1 is
private; refused``) and only its class when a host name resolved to it (``host
db.internal resolves to a private address; refused``): the tenant learns that the
name is internal, not the operator's address plan.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import httpx

from tillbook.config import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses it resolves to, as text ("10.0.0.1", "fe80::1%eth0").
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

MAX_URL_LENGTH = 2000  # Webhook.url is String(2000)
_SHOWN = 100  # at most this much of a refused URL is quoted back

# Instance metadata services: never a webhook receiver, whatever the setting.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS VPC DNS
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::253",  # AWS VPC DNS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (classic)
        "168.63.129.16",  # Azure WireServer
    )
)

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_PRIVATE_V4 = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")  # deprecated, still routed privately
_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class UrlRefused(Exception):
    """The URL, or an address it resolves to, may not receive webhooks.

    ``str(exc)`` is a complete sentence fit to show the tenant."""


@dataclass(frozen=True)
class _Reason:
    """Why an address is refused: how to say it of an address and of a host."""

    adjective: str  # "address 10.0.0.1 is private"
    noun: str  # "host x resolves to a private address"
    private_network: bool  # allowed when the operator allows private networks


LOOPBACK = _Reason("loopback", "a loopback address", True)
PRIVATE = _Reason("private", "a private address", True)
LINK_LOCAL = _Reason("link-local", "a link-local address", False)
METADATA = _Reason("a cloud metadata address", "a cloud metadata address", False)
MULTICAST = _Reason("multicast", "a multicast address", False)
UNSPECIFIED = _Reason("unspecified", "an unspecified address", False)
RESERVED = _Reason("reserved (not publicly routable)", "a reserved address", False)


def classify(address: IPAddress) -> _Reason | None:
    """Why ``address`` may not receive webhooks, or None for a public address.

    Own tables rather than ``ipaddress``'s ``is_private``/``is_global`` alone: their
    ranges changed between Python versions, and CGNAT and the metadata hosts are
    in neither."""
    if address in METADATA_ADDRESSES:
        return METADATA
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            inner = classify(embedded)
            if inner is not None:
                return inner
            if address.ipv4_mapped is not None or address in _NAT64:
                return None  # the IPv4 address is where the connection goes
        if address.is_unspecified:
            return UNSPECIFIED
        if address.is_loopback:
            return LOOPBACK
        if address.is_link_local:
            return LINK_LOCAL
        if address.is_multicast:
            return MULTICAST
        if address in _UNIQUE_LOCAL or address in _SITE_LOCAL:
            return PRIVATE
        if address.is_reserved or not address.is_global:
            return RESERVED
        return None
    if address in _THIS_NETWORK:
        return UNSPECIFIED  # 0.0.0.0 reaches this host
    if address.is_loopback:
        return LOOPBACK
    if address.is_link_local:
        return LINK_LOCAL
    if address.is_multicast:
        return MULTICAST
    if address in _CGNAT or any(address in net for net in _PRIVATE_V4):
        return PRIVATE
    if address.is_reserved or not address.is_global:
        return RESERVED
    return None


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """``getaddrinfo`` in the event loop's executor: the addresses a connection could use."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


@dataclass(frozen=True)
class UrlPolicy:
    allow_private: bool = False
    resolver: Resolver = field(default=system_resolver)
    timeout: float = 10.0  # seconds for one resolution

    @classmethod
    def from_settings(cls, settings: Settings, resolver: Resolver | None = None) -> UrlPolicy:
        return cls(
            allow_private=settings.webhook_allow_private_networks,
            resolver=resolver or system_resolver,
            timeout=settings.webhook_timeout,
        )


@dataclass(frozen=True)
class Target:
    """A URL that passed the policy, with the addresses that were checked."""

    url: httpx.URL
    host: str  # ASCII (IDNA) host, as the Host header and TLS SNI carry it
    port: int
    addresses: tuple[IPAddress, ...]

    def pinned(self, address: IPAddress) -> httpx.URL:
        """The URL with its host replaced by ``address``, one of the checked ones.

        The sender keeps the original name in the ``Host`` header and in TLS (SNI
        and certificate verification, the ``sni_hostname`` request extension), so
        the receiver sees the request it expects while the socket goes only where
        the policy looked."""
        if address not in self.addresses:
            raise UrlRefused(f"address {address} was not checked")
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # the same host, without needing an IPv6 socket
        return self.url.copy_with(host=str(address))


def shown(url: str) -> str:
    """A URL as quoted back in an error: repr (so CR/LF are visible), at most 100 characters."""
    return repr(url if len(url) <= _SHOWN else url[:_SHOWN] + "…")


def _bad_character(url: str) -> bool:
    for ch in url:
        if ch.isspace() or ch == "\\":
            return True
        if unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Cs"):
            return True
    return False


def parse(url: str, *, allow_private: bool) -> httpx.URL:
    """The syntactic rules; raises :class:`UrlRefused`. httpx parses, because httpx sends:
    two parsers that disagree about the host are how checks get bypassed."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRefused(f"must be at most {MAX_URL_LENGTH} characters")
    if _bad_character(url):
        raise UrlRefused("must not contain whitespace, CR, LF, a backslash or control characters")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise UrlRefused(f"{shown(url)} is not a valid URL") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if parsed.scheme not in schemes:
        if parsed.scheme == "http":
            raise UrlRefused("must use https:// (http:// only where private networks are allowed)")
        raise UrlRefused(f"{shown(url)} is not an {' or '.join(schemes)} URL")
    if parsed.userinfo:
        raise UrlRefused("must not carry credentials (user:password@)")
    if not parsed.raw_host:
        raise UrlRefused(f"{shown(url)} names no host")
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise UrlRefused(f"port {parsed.port} is not from 1 to 65535")
    return parsed


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one, in any form ``getaddrinfo`` takes as a
    number (``inet_aton``: ``127.1``, ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1``)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host and host[0].isdigit() and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


async def resolve(host: str, port: int, policy: UrlPolicy) -> tuple[IPAddress, ...]:
    """Every address ``host`` stands for, each once, in the resolver's order."""
    literal = literal_address(host)
    if literal is not None:
        return (literal,)
    try:
        raw = await asyncio.wait_for(policy.resolver(host, port), policy.timeout)
    except TimeoutError:
        raise UrlRefused(f"host {host} did not resolve within {policy.timeout:g} s") from None
    except (OSError, UnicodeError):
        raise UrlRefused(f"host {host} does not resolve") from None
    found: dict[IPAddress, None] = {}
    for text in raw:
        try:
            found[ipaddress.ip_address(text)] = None
        except ValueError:
            raise UrlRefused(f"host {host} resolves to something that is not an address") from None
    if not found:
        raise UrlRefused(f"host {host} does not resolve")
    return tuple(found)


def check_addresses(
    host: str, addresses: Sequence[IPAddress], *, allow_private: bool, literal: bool
) -> None:
    """Refuse when any address is not allowed: one bad answer among good ones is enough,
    since the connection could go to any of them."""
    for address in addresses:
        reason = classify(address)
        if reason is None or (allow_private and reason.private_network):
            continue
        if literal:
            standard = host.partition("%")[0] == str(address).partition("%")[0]
            written = host if standard or ":" in host else f"{host} ({address})"
            raise UrlRefused(f"address {written} is {reason.adjective}; refused")
        raise UrlRefused(f"host {host} resolves to {reason.noun}; refused")


async def check_url(url: str, policy: UrlPolicy) -> Target:
    """Parse, resolve and check ``url``; raises :class:`UrlRefused` with the reason."""
    parsed = parse(url, allow_private=policy.allow_private)
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    addresses = await resolve(host, port, policy)
    check_addresses(
        host,
        addresses,
        allow_private=policy.allow_private,
        literal=literal_address(host) is not None,
    )
    return Target(url=parsed, host=host, port=port, addresses=addresses)
