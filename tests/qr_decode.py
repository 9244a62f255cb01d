"""A small QR code reader for the register's tests: a matrix of modules back to its
text, for the single-block versions a receipt's invoice number needs (1 to 3 at
error correction M), checking what a scanner checks: the format information, the
Reed-Solomon error correction, and byte-mode data. Not a general decoder (no image,
no multi-block versions, no other modes): enough to prove that the receipt's code
says the invoice number."""

from __future__ import annotations

FORMAT_MASK = 0b101010000010010
LEVELS = {0b01: "L", 0b00: "M", 0b11: "Q", 0b10: "H"}
# (version, level) -> (total codewords, error-correction codewords), one block.
BLOCKS = {(1, "M"): (26, 10), (2, "M"): (44, 16), (3, "M"): (70, 26)}
MASKS = [
    lambda r, c: (r + c) % 2 == 0,
    lambda r, c: r % 2 == 0,
    lambda r, c: c % 3 == 0,
    lambda r, c: (r + c) % 3 == 0,
    lambda r, c: (r // 2 + c // 3) % 2 == 0,
    lambda r, c: (r * c) % 2 + (r * c) % 3 == 0,
    lambda r, c: ((r * c) % 2 + (r * c) % 3) % 2 == 0,
    lambda r, c: ((r + c) % 2 + (r * c) % 3) % 2 == 0,
]

EXP = [0] * 512
LOG = [0] * 256
_x = 1
for _i in range(255):
    EXP[_i] = _x
    LOG[_x] = _i
    _x <<= 1
    if _x & 0x100:
        _x ^= 0x11D
for _i in range(255, 512):
    EXP[_i] = EXP[_i - 255]


def _mul(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else EXP[LOG[a] + LOG[b]]


def format_info(m: list[list[bool]]) -> tuple[str, int]:
    """The error-correction level and mask, from the copy beside the top-left finder."""
    spots = [(8, 0), (8, 1), (8, 2), (8, 3), (8, 4), (8, 5), (8, 7), (8, 8), (7, 8)]
    spots += [(5, 8), (4, 8), (3, 8), (2, 8), (1, 8), (0, 8)]
    bits = int("".join("1" if m[r][c] else "0" for r, c in spots), 2) ^ FORMAT_MASK
    return LEVELS[bits >> 13], (bits >> 10) & 7


def _function(n: int, version: int, r: int, c: int) -> bool:
    if (r < 9 and c < 9) or (r < 9 and c >= n - 8) or (r >= n - 8 and c < 9):
        return True
    if r == 6 or c == 6:
        return True
    if version >= 2:  # the one alignment pattern of versions 2 to 6
        at = n - 7
        if abs(r - at) <= 2 and abs(c - at) <= 2:
            return True
    return False


def codewords(m: list[list[bool]]) -> tuple[int, str, list[int]]:
    n = len(m)
    version = (n - 17) // 4
    assert n == 17 + 4 * version and version in (1, 2, 3), n
    level, mask = format_info(m)
    bits: list[int] = []
    c, up = n - 1, True
    while c > 0:
        if c == 6:
            c -= 1
        for r in range(n - 1, -1, -1) if up else range(n):
            for cc in (c, c - 1):
                if not _function(n, version, r, cc):
                    bits.append(int(m[r][cc]) ^ int(MASKS[mask](r, cc)))
        c -= 2
        up = not up
    words = [int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, len(bits) - 7, 8)]
    return version, level, words


def decode(m: list[list[bool]]) -> str:
    """The text of a byte-mode code; AssertionError when anything does not check."""
    version, level, words = codewords(m)
    total, ec = BLOCKS[(version, level)]
    words = words[:total]
    # Every syndrome of a valid Reed-Solomon block is zero.
    for i in range(ec):
        s = 0
        for w in words:
            s = _mul(s, EXP[i]) ^ w
        assert s == 0, f"error correction does not check (syndrome {i})"
    data = words[: total - ec]
    stream = "".join(f"{w:08b}" for w in data)
    assert stream[:4] == "0100", f"not byte mode: {stream[:4]}"
    length = int(stream[4:12], 2)
    raw = bytes(int(stream[12 + 8 * i : 20 + 8 * i], 2) for i in range(length))
    return raw.decode("utf-8")
