"""ISO 4217: the currencies a company may keep its books in or trade in, with their
minor units (the decimal places an amount in them has).

A fixed table rather than a dependency: the list changes a few times a decade, and
the one fact the books need beyond the code (how many decimals a price in it may
have) is not in most currency libraries. Funds, metals and testing codes (XAU, XTS,
XXX …) are left out: nobody prices goods in them."""

from __future__ import annotations

# Codes whose minor unit is not 2.
_MINOR_UNITS = {
    **dict.fromkeys(
        "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(), 0
    ),
    **dict.fromkeys("BHD IQD JOD KWD LYD OMR TND".split(), 3),
    **dict.fromkeys("CLF UYW".split(), 4),
}

_CODES = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD
    BTN BWP BYN BZD CAD CDF CHF CLF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN
    ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR
    ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL
    MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN
    PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP
    STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYI UYU UYW UZS VED
    VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
    """.split()
)


def is_currency(code: str) -> bool:
    """An ISO 4217 code of a currency goods are priced in (upper case, as stored)."""
    return code in _CODES


def minor_units(code: str) -> int:
    """Decimal places of an amount in ``code`` (JPY 0, EUR 2, KWD 3)."""
    return _MINOR_UNITS.get(code, 2)


def normalise(text: str) -> str:
    """A code as a client may type it (`` eur``): stripped and upper case."""
    return text.strip().upper()
