"""Secrets at rest, constant-time digests and HMAC helpers.

The master key is passed in by the caller (``config.master_key()``): kit reads no
settings, so it stays below everything that does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from typing import Literal

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from typing_extensions import TypedDict

from tillbook.kit.shapes import answer


def encrypt(plaintext: str, key: bytes, *, context: bytes = b"tillbook") -> str:
    """AES-GCM under ``key`` (the master key); ``context`` is bound as associated data."""
    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode(), context)
    return base64.urlsafe_b64encode(nonce + sealed).decode()


def decrypt(token: str, key: bytes, *, context: bytes = b"tillbook") -> str:
    raw = base64.urlsafe_b64decode(token.encode())
    return AESGCM(key).decrypt(raw[:12], raw[12:], context).decode()


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time string comparison."""
    return hmac.compare_digest(a.encode(), b.encode())


def hmac_hex(key: str | bytes, message: bytes) -> str:
    key_bytes = key.encode() if isinstance(key, str) else key
    return hmac.new(key_bytes, message, hashlib.sha256).hexdigest()


def random_token(prefix: str, length: int) -> str:
    """``prefix`` followed by ``length`` url-safe random characters."""
    return prefix + secrets.token_urlsafe(length)[:length]


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = Scrypt(salt=salt, length=32, n=2**14, r=8, p=1).derive(password.encode())
    return "scrypt$" + base64.b64encode(salt).decode() + "$" + base64.b64encode(digest).decode()


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, salt_b64, digest_b64 = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    salt = base64.b64decode(salt_b64)
    expected = base64.b64decode(digest_b64)
    actual = Scrypt(salt=salt, length=32, n=2**14, r=8, p=1).derive(password.encode())
    return hmac.compare_digest(actual, expected)


# A register's PIN (DESIGN.md §15): checked on the device, offline, with WebCrypto,
# which offers PBKDF2 and not scrypt; the parameters travel to the branch's
# registers, so they are fixed here and written into every stored hash.
PIN_ITERATIONS = 100_000
PIN_SCHEME = "pbkdf2-sha256"


def hash_pin(pin: str, *, iterations: int = PIN_ITERATIONS) -> str:
    """``pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>``: a 16-byte random salt,
    32 bytes of PBKDF2-HMAC-SHA256."""
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations, 32)
    return "$".join(
        (
            PIN_SCHEME,
            str(iterations),
            base64.b64encode(salt).decode(),
            base64.b64encode(digest).decode(),
        )
    )


@answer
class PinParameters(TypedDict):
    algorithm: Literal["PBKDF2-SHA256"]
    iterations: int
    salt: str
    hash: str


def pin_parameters(stored: str) -> PinParameters | None:
    """What a register needs to check a PIN offline (the algorithm, iterations, salt
    and hash, base64), or None for a value that is no PIN hash."""
    parts = stored.split("$")
    if len(parts) != 4 or parts[0] != PIN_SCHEME or not parts[1].isdigit():
        return None
    return {
        "algorithm": "PBKDF2-SHA256",
        "iterations": int(parts[1]),
        "salt": parts[2],
        "hash": parts[3],
    }
