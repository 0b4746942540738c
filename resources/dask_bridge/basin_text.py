"""Text semantics of the local engine, in Python: its regular expressions (std::regex
ECMAScript matched on UTF-8 bytes, native/src/ops/expr_string.cc), its case mapping
(native/src/ops/case_map.h) and its strict parsers for numbers, dates and timestamps
(native/src/io/csv.cc), so that the Dask bridge gives the local engine's answers.
"""
import re

import numpy as np
import pandas as pd

# --- regular expressions -----------------------------------------------------------------
#
# Basin's regexes are ECMAScript, matched on the UTF-8 bytes (resolve_fn.ts has already
# checked that std::regex compiles them). Python's `re` on bytes patterns has the same
# ASCII \d \w \s \b, and the same backtracking, leftmost-first alternation; what differs is
# translated: `$` matches only at the very end (Python's also before a final "\n"), `.`
# matches any byte but "\n" and "\r" (Python's also "\r"), and \cX, \0 and \uXXXX escapes.


def translate_regex(pattern):
    """The ECMAScript `pattern` as a Python bytes pattern with the same matches."""
    src = pattern.encode("utf-8")
    out = bytearray()
    i, n, in_class = 0, len(src), False
    while i < n:
        c = src[i:i + 1]
        if c == b"\\" and i + 1 < n:
            nxt = src[i + 1:i + 2]
            if nxt == b"c" and i + 2 < n and src[i + 2:i + 3].isalpha():
                out += b"\\x%02x" % (src[i + 2] % 32)
                i += 3
                continue
            if nxt == b"0" and not (i + 2 < n and src[i + 2:i + 3].isdigit()):
                out += b"\\x00"
                i += 2
                continue
            if nxt == b"u" and re.fullmatch(rb"[0-9A-Fa-f]{4}", src[i + 2:i + 6] or b""):
                cp = int(src[i + 2:i + 6], 16)
                out += b"\\x%02x" % cp if cp < 0x100 else re.escape(chr(cp).encode("utf-8"))
                i += 6
                continue
            out += src[i:i + 2]
            i += 2
            continue
        if in_class:
            if c == b"]":
                in_class = False
            elif c == b"[" or src[i:i + 2] in (b"&&", b"~~", b"||"):
                out += b"\\"  # literal in an ECMAScript class; Python reads them as set operations
        else:
            if c == b"[":
                in_class = True
                out += c
                i += 1
                if src[i:i + 1] == b"^":
                    out += b"^"
                    i += 1
                continue
            if c == b"$":
                out += rb"\Z"
                i += 1
                continue
            if c == b".":
                out += rb"[^\n\r]"
                i += 1
                continue
        out += c
        i += 1
    return bytes(out)


_compiled = {}


def compile_regex(pattern):
    if pattern not in _compiled:
        _compiled[pattern] = re.compile(translate_regex(pattern))
    return _compiled[pattern]


def parse_replacement(fmt):
    """std::match_results::format's ECMAScript rules: $& the match, $n / $nn a group (two
    digits when both are digits; nothing for a group the pattern lacks or that did not
    take part), $` the text before the match (since the previous match), $' the text after
    it, $$ a "$"; any other "$" is itself. Tokens: bytes, or ("g", n), "pre", "suf"."""
    b = fmt.encode("utf-8")
    toks, lit, i, n = [], bytearray(), 0, len(b)
    while i < n:
        c = b[i:i + 1]
        if c != b"$" or i + 1 >= n:
            lit += c
            i += 1
            continue
        nxt = b[i + 1:i + 2]
        if nxt == b"$":
            lit += b"$"
            i += 2
            continue
        if nxt in (b"&", b"`", b"'") or nxt.isdigit():
            if lit:
                toks.append(bytes(lit))
                lit = bytearray()
            if nxt == b"&":
                toks.append(("g", 0))
                i += 2
            elif nxt == b"`":
                toks.append("pre")
                i += 2
            elif nxt == b"'":
                toks.append("suf")
                i += 2
            else:
                num, i = int(nxt), i + 2
                if b[i:i + 1].isdigit():
                    num, i = num * 10 + int(b[i:i + 1]), i + 1
                toks.append(("g", num))
            continue
        lit += b"$"
        i += 1
    if lit:
        toks.append(bytes(lit))
    return toks


def regex_replace(value, rx, toks, all_):
    """As the native Replace: std::regex_iterator's matches, where an empty match right
    after a match or inside a character's UTF-8 bytes is no match."""
    s = value.encode("utf-8")
    out = bytearray()
    done, prev_end, matched = 0, 0, False
    groups = rx.groups
    for m in rx.finditer(s):
        at, end = m.span()
        prefix_from, prev_end = prev_end, end
        if at == end and ((matched and at == done) or (at < len(s) and (s[at] & 0xC0) == 0x80)):
            continue
        matched = True
        out += s[done:at]
        for t in toks:
            if isinstance(t, bytes):
                out += t
            elif t == "pre":
                out += s[prefix_from:at]
            elif t == "suf":
                out += s[end:]
            elif t[1] <= groups:
                g = m.group(t[1])
                if g is not None:
                    out += g
        done = end
        if not all_:
            break
    out += s[done:]
    return out.decode("utf-8", errors="replace")


def contains(series, pattern, literal):
    if literal:
        return series.str.contains(pattern, regex=False).astype("boolean")
    rx = compile_regex(pattern)
    vals = [None if v is pd.NA else rx.search(v.encode("utf-8")) is not None for v in series]
    return pd.Series(pd.array(vals, dtype="boolean"), index=series.index)


def replace(series, pattern, with_, literal, all_):
    if literal:
        if pattern == "":
            return series
        count = -1 if all_ else 1
        vals = [None if v is pd.NA else v.replace(pattern, with_, count) for v in series]
    else:
        rx, toks = compile_regex(pattern), parse_replacement(with_)
        vals = [None if v is pd.NA else regex_replace(v, rx, toks, all_) for v in series]
    return pd.Series(pd.array(vals, dtype="string"), index=series.index)


# --- case mapping ----------------------------------------------------------------------------
#
# native/src/ops/case_map.h: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic by a
# fixed table, one code point to one (ß → ẞ, never "SS"); every other character is kept.

_PAIRS = ((0x100, 0x12F, 0), (0x132, 0x137, 0), (0x139, 0x148, 1), (0x14A, 0x177, 0), (0x179, 0x17E, 1))


def _to_lower(c):
    if c < 0x80:
        return c + 32 if 0x41 <= c <= 0x5A else c
    if 0xC0 <= c <= 0xDE and c != 0xD7:
        return c + 0x20
    for lo, hi, par in _PAIRS:
        if lo <= c <= hi:
            return c + 1 if c % 2 == par else c
    if c == 0x130:
        return 0x69
    if c == 0x178:
        return 0xFF
    if 0x391 <= c <= 0x3A9 and c != 0x3A2:
        return c + 0x20
    if 0x410 <= c <= 0x42F:
        return c + 0x20
    if 0x400 <= c <= 0x40F:
        return c + 0x50
    if c == 0x1E9E:
        return 0xDF
    return c


def _to_upper(c):
    if c < 0x80:
        return c - 32 if 0x61 <= c <= 0x7A else c
    if 0xE0 <= c <= 0xFE and c != 0xF7:
        return c - 0x20
    if c == 0xFF:
        return 0x178
    if c == 0xDF:
        return 0x1E9E
    if c == 0xB5:
        return 0x39C
    for lo, hi, par in _PAIRS:
        if lo <= c <= hi:
            return c - 1 if c % 2 != par else c
    if c == 0x131:
        return 0x49
    if c == 0x17F:
        return 0x53
    if c == 0x3C2:
        return 0x3A3
    if 0x3B1 <= c <= 0x3C9:
        return c - 0x20
    if 0x430 <= c <= 0x44F:
        return c - 0x20
    if 0x450 <= c <= 0x45F:
        return c - 0x50
    return c


LOWER = {c: _to_lower(c) for c in range(0x2000) if _to_lower(c) != c}
UPPER = {c: _to_upper(c) for c in range(0x2000) if _to_upper(c) != c}


def case_map(series, upper):
    table = UPPER if upper else LOWER
    vals = [None if v is pd.NA else v.translate(table) for v in series]
    return pd.Series(pd.array(vals, dtype="string"), index=series.index)


# --- strict parsers (native/src/io/csv.cc: ParseInt64, ParseFloat64, ParseDate, ParseTimestamp) ----

INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
FLOAT_RE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.ASCII | re.IGNORECASE)
DATE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
TS_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z?)?", re.ASCII)
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
_DIM = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_int(v):
    if not INT_RE.fullmatch(v):
        return None
    x = int(v)
    return x if I64_MIN <= x <= I64_MAX else None


def parse_float(v):
    if not FLOAT_RE.fullmatch(v) or v[:2] in ("+-", "++"):
        return None
    low = v.lower()
    if "nan" in low:
        return float("-nan") if low.startswith("-") else float("nan")
    return float(v)


def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _ymd(y, m, d):
    y, m, d = int(y), int(m), int(d)
    if m < 1 or m > 12 or d < 1:
        return None
    dim = 29 if m == 2 and ((y % 4 == 0 and y % 100 != 0) or y % 400 == 0) else _DIM[m - 1]
    return None if d > dim else days_from_civil(y, m, d)


def parse_date(v):
    """Epoch days of "YYYY-MM-DD", or None."""
    m = DATE_RE.fullmatch(v)
    return _ymd(*m.groups()) if m else None


def parse_timestamp(v):
    """Epoch microseconds of "YYYY-MM-DD[( |T)hh:mm:ss[.f…]][Z]", or None."""
    m = TS_RE.fullmatch(v)
    if not m:
        return None
    days = _ymd(*m.group(1, 2, 3))
    if days is None:
        return None
    if m.group(4) is None:
        return days * 86_400_000_000
    hh, mm, ss = int(m.group(4)), int(m.group(5)), int(m.group(6))
    if hh > 23 or mm > 59 or ss > 59:
        return None
    frac = int((m.group(7) or "")[:6].ljust(6, "0"))
    return days * 86_400_000_000 + (hh * 3600 + mm * 60 + ss) * 1_000_000 + frac


def parse_bool(v, csv):
    """The CSV reader takes true/false in any case and 1/0; casts take true, TRUE, True, 1 (and the false ones)."""
    if csv:
        low = v.lower() if len(v) <= 5 else ""
        return True if low in ("true", "1") else False if low in ("false", "0") else None
    return True if v in ("true", "TRUE", "True", "1") else False if v in ("false", "FALSE", "False", "0") else None


NS_MIN, NS_MAX = -(2**63) + 1, 2**63 - 1  # -2**63 is NaT


class OutOfRange(Exception):
    """A date or timestamp pandas' nanosecond columns cannot hold; args: (text, index)."""


def parse_column(series, to, csv=False):
    """(values, bad) for a string series: the parsed values in the pandas dtype of Basin
    type `to`, and the positions of non-null values that did not parse (null there).
    Raises OutOfRange for a date/timestamp that parses but lies outside pandas' range."""
    texts = series.to_numpy(dtype=object, na_value=None)
    n = len(texts)
    nulls = np.array([v is None for v in texts], dtype=bool)
    bad = np.zeros(n, dtype=bool)

    def each(parse, dtype):
        """The parsed values (0 where null or bad), marking the bad ones."""
        data = np.zeros(n, dtype=dtype)
        for i, v in enumerate(texts):
            if v is not None:
                x = parse(v)
                if x is None:
                    bad[i] = True
                else:
                    data[i] = x
        return data

    if to == "float64":
        return pd.Series(pd.arrays.FloatingArray(each(parse_float, np.float64), nulls | bad), index=series.index), bad
    if to == "int64":
        return pd.Series(pd.arrays.IntegerArray(each(parse_int, np.int64), nulls | bad), index=series.index), bad
    if to == "bool":
        data = each(lambda v: parse_bool(v, csv), bool)
        return pd.Series(pd.arrays.BooleanArray(data, nulls | bad), index=series.index), bad
    if to in ("date", "timestamp"):
        data = np.full(n, NS_MIN - 1, dtype=np.int64)  # NaT
        unit = 86_400_000_000_000 if to == "date" else 1000
        for i, v in enumerate(texts):
            if v is not None:
                x = parse_date(v) if to == "date" else parse_timestamp(v)
                if x is None:
                    bad[i] = True
                    continue
                x *= unit
                if x < NS_MIN or x > NS_MAX:
                    raise OutOfRange(v, i)
                data[i] = x
        return pd.Series(data.view("datetime64[ns]"), index=series.index), bad
    raise ValueError(to)


RANGE_NOTE = "outside 1677-09-22 … 2262-04-11, which the Dask bridge cannot hold (pandas keeps nanoseconds)"
