"""Evaluates resolved Basin expressions (engine/native/addon.ts NativeExpr) on a pandas
partition, with the native kernels' semantics (native/src/ops/expr*.cc): SQL three-valued
logic, null on division by zero, truncated modulo, round-half-to-even float -> int casts.

The plan's expressions arrive already type-checked by engine/plan/resolve.ts (literals
coerced, every node typed), so this file only computes.
"""
import math

import numpy as np
import pandas as pd

import basin_text
from basin_types import DAY_NS, PANDAS_DTYPES, BridgeError, from_plan_values, null_series

# Functions the bridge computes; any other `fn` fails before the plan is submitted.
SUPPORTED_FNS = {
    "str.len", "str.lower", "str.upper", "str.strip", "str.contains", "str.startsWith", "str.endsWith",
    "str.replace", "str.slice", "concatStr",
    "dt.year", "dt.month", "dt.day", "dt.hour", "dt.minute", "dt.second", "dt.weekday",
    "when", "isIn", "abs", "round", "sqrt", "log", "exp", "pow",
}


def unsupported_fn(e):
    """The first function in `e` the bridge cannot compute, or None."""
    if e["kind"] == "fn" and e["name"] not in SUPPORTED_FNS:
        return e["name"]
    for c in children(e):
        bad = unsupported_fn(c)
        if bad:
            return bad
    return None


def children(e):
    k = e["kind"]
    if k == "binary":
        return [e["left"], e["right"]]
    if k == "fillNull":
        return [e["arg"], e["fill"]]
    if k in ("unary", "cast"):
        return [e["arg"]]
    if k == "fn":
        return e["args"]
    return []


def evaluate(e, df):
    """The expression's value on every row of `df`, as a Series aligned with df.index."""
    k = e["kind"]
    n = len(df)
    if k == "col":
        return df.iloc[:, e["index"]]
    if k == "lit":
        if e["value"] is None:
            return null_series(e["type"], n, df.index)
        return from_plan_values([e["value"]] * n, e["type"], df.index)
    if k == "binary":
        return binary(e, evaluate(e["left"], df), evaluate(e["right"], df))
    if k == "unary":
        a = evaluate(e["arg"], df)
        op = e["op"]
        if op == "isNull":
            return a.isna().astype("boolean")
        if op == "isNotNull":
            return a.notna().astype("boolean")
        if op == "not":
            return ~a
        return -as_type(a, e["type"])
    if k == "fillNull":
        a = as_type(evaluate(e["arg"], df), e["type"])
        f = as_type(evaluate(e["fill"], df), e["type"])
        return a.mask(a.isna(), f)
    if k == "cast":
        return cast(evaluate(e["arg"], df), e["arg"]["type"], e["type"], e.get("strict", True), e.get("label", ""))
    if k == "fn":
        return fn(e, [evaluate(a, df) for a in e["args"]], df)
    raise BridgeError("BASIN_INTERNAL", f"unknown expression kind {k!r}")


def as_type(s, t):
    """Numeric widening (int64 -> float64) where an operator mixes the two."""
    if t == "float64" and str(s.dtype) != "Float64":
        return s.astype("Float64")
    return s


def null_mask(*series):
    m = series[0].isna()
    for s in series[1:]:
        m = m | s.isna()
    return m


def masked(values, mask, t, index):
    """A nullable series of type `t` from plain numpy values and a null mask (a float NaN
    the mask leaves is a value, as in the local engine, not a null)."""
    if t == "float64":
        data = np.asarray(values, dtype=np.float64)
        return pd.Series(pd.arrays.FloatingArray(data.copy(), np.asarray(mask, dtype=bool) | np.zeros(len(data), dtype=bool)), index=index)
    arr = pd.array(values, dtype=PANDAS_DTYPES[t]) if t not in ("date", "timestamp") else values
    out = pd.Series(arr, index=index)
    return out.mask(np.asarray(mask, dtype=bool)) if t not in ("date", "timestamp") else out.where(~np.asarray(mask, dtype=bool))


def libm(f, *arrays):
    """`f` (Python's math function, which is the C library's, as the native kernels call) on
    every element: numpy's own vectorised log/exp/pow can differ in the last bit."""
    def one(*xs):
        try:
            return f(*xs)
        except (ValueError, OverflowError):  # a domain or range error: not a finite number
            return math.nan
    return np.frompyfunc(one, len(arrays), 1)(*arrays).astype(np.float64) if len(arrays[0]) else np.zeros(0)


def finite(values, nulls, index):
    """A float64 series from math results: null where an input was null or the result is not finite."""
    return masked(np.where(nulls, 0.0, values), nulls | ~np.isfinite(values), "float64", index)


def c_round(y):
    """C's round(): to the nearest integer, halves away from zero (exact, unlike floor(y + 0.5))."""
    t = np.trunc(y)
    return np.where(np.abs(y - t) >= 0.5, t + np.sign(y), t)


def floats(s):
    return s.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)


def ints(s):
    return s.to_numpy(dtype="int64", na_value=0)


COMPARE = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


def binary(e, left, right):
    op, t = e["op"], e["type"]
    if op == "and":
        return left.astype("boolean") & right.astype("boolean")
    if op == "or":
        return left.astype("boolean") | right.astype("boolean")
    if op in COMPARE:
        lt, rt = e["left"]["type"], e["right"]["type"]
        if lt != rt:  # int64 vs float64
            left, right = left.astype("Float64"), right.astype("Float64")
        nulls = null_mask(left, right)
        if "float64" in (lt, rt):
            # float_order.h: NaN equals NaN and is above every number.
            x, y = floats(left), floats(right)
            xn, yn = np.isnan(x), np.isnan(y)
            with np.errstate(all="ignore"):
                c = np.where(xn & yn, 0, np.where(xn, 1, np.where(yn, -1, (x > y).astype(np.int64) - (x < y).astype(np.int64))))
            return pd.Series(pd.arrays.BooleanArray(COMPARE[op](c, 0), nulls.to_numpy(dtype=bool)), index=left.index)
        res = COMPARE[op](left, right).astype("object")
        return pd.Series(pd.array(res.where(~nulls, None).tolist(), dtype="boolean"), index=left.index)
    left, right = as_type(left, t), as_type(right, t)
    if op == "add":
        return left + right
    if op == "sub":
        return left - right
    if op == "mul":
        return left * right
    zero = null_mask(left, right) | (right == 0).fillna(False)
    if op == "div":
        with np.errstate(all="ignore"):
            return masked(floats(left) / np.where(zero, 1.0, floats(right)), zero, "float64", left.index)
    # mod: the sign of the dividend (C's % and fmod), null when dividing by zero
    if t == "int64":
        a, b = ints(left), ints(right)
        b = np.where(zero, 1, b)
        return masked(np.fmod(a, b), zero, "int64", left.index)
    with np.errstate(all="ignore"):
        return masked(np.fmod(floats(left), np.where(zero, 1.0, floats(right))), zero, "float64", left.index)


def cast_error(text, to, label):
    where = f" in {label}" if label else ""
    raise BridgeError("BASIN_CAST", f'cannot cast "{text}" to {to}{where} (clean the value first, fillNull / filter it out, or cast with {{ strict: false }} to get null)')


def format_double(v):
    """Native FormatDouble (DuckDB's text): Python's repr, and nan / inf / -inf."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = repr(float(v))
    return s if ("." in s or "e" in s) else s + ".0"


def format_timestamp(ts):
    s = ts.strftime("%Y-%m-%d %H:%M:%S")
    frac = ts.microsecond
    if frac:
        s += (".%06d" % frac).rstrip("0")
    return s


def parse_strings(s, to, strict, label):
    """Strings parsed as the local engine parses them (basin_text.parse_column): a value
    that does not parse is an error when strict, else null."""
    try:
        parsed, bad = basin_text.parse_column(s, to)
    except basin_text.OutOfRange as e:
        where = f" in {label}" if label else ""
        raise BridgeError("BASIN_CAST", f'cannot cast "{e.args[0]}" to {to}{where}: it lies {basin_text.RANGE_NOTE}; filter such values out first, or run this pipeline on the local cluster')
    if strict and bad.any():
        cast_error(s.iloc[int(np.argmax(bad))], to, label)
    return parsed


def epoch_ns(s):
    return s.astype("datetime64[ns]").to_numpy().astype("int64")


def cast(s, frm, to, strict=True, label=""):
    if frm == to:
        return s
    idx = s.index
    nulls = s.isna().to_numpy()
    if to == "string":
        if frm == "float64":
            vals = [None if m else format_double(v) for v, m in zip(floats(s), nulls)]
        elif frm == "bool":
            vals = [None if m else ("true" if v else "false") for v, m in zip(s.to_numpy(dtype=bool, na_value=False), nulls)]
        elif frm == "date":
            vals = [None if m else v.strftime("%Y-%m-%d") for v, m in zip(s, nulls)]
        elif frm == "timestamp":
            vals = [None if m else format_timestamp(v) for v, m in zip(s, nulls)]
        else:
            vals = [None if m else str(v) for v, m in zip(ints(s), nulls)]
        return pd.Series(pd.array(vals, dtype="string"), index=idx)
    if frm == "string" and to != "string":
        return parse_strings(s, to, strict, label)
    if to == "int64":
        if frm == "float64":
            f = floats(s)
            bad = ~nulls & (~np.isfinite(f) | (np.abs(np.nan_to_num(f)) > 9.2e18))
            if strict and bad.any():
                cast_error(format_double(f[bad][0]), to, label)
            return masked(np.rint(np.where(bad | nulls, 0, f)).astype("int64"), bad | nulls, "int64", idx)
        if frm == "bool":
            return s.astype("Int64")
        if frm == "date":
            return masked(epoch_ns(s.fillna(pd.Timestamp(0))) // DAY_NS, nulls, "int64", idx)
        if frm == "timestamp":
            return masked(epoch_ns(s.fillna(pd.Timestamp(0))) // 1000, nulls, "int64", idx)
    if to == "float64":
        return cast(s, frm, "int64").astype("Float64") if frm in ("date", "timestamp") else s.astype("Float64")
    if to == "bool":
        return (s != 0).astype("boolean").mask(s.isna())
    if to in ("date", "timestamp"):
        if frm == "timestamp":  # to date
            return s.dt.floor("D")
        if frm == "date":
            return s
        unit = DAY_NS if to == "date" else 1000
        return pd.Series(pd.to_datetime(ints(s) * unit, unit="ns"), index=idx).where(~nulls)
    raise BridgeError("BASIN_INTERNAL", f"cast from {frm} to {to}")


ASCII_SPACE = " \t\n\r\v\f"


def fn(e, args, df):
    name, o, t = e["name"], e.get("options") or {}, e["type"]
    a = args[0] if args else None
    if name == "str.len":
        return a.str.len().astype("Int64")
    if name in ("str.lower", "str.upper"):
        return basin_text.case_map(a, name == "str.upper")
    if name == "str.strip":
        # ASCII whitespace only, as the local engine strips (native/src/ops/expr_fn.h IsSpace):
        # Python's default also strips U+00A0, U+2003, U+0085, U+001C-U+001F and more.
        return a.str.strip(ASCII_SPACE)
    if name == "str.contains":
        return basin_text.contains(a, o["pattern"], o.get("literal", False))
    if name == "str.startsWith":
        return a.str.startswith(o["pattern"]).astype("boolean")
    if name == "str.endsWith":
        return a.str.endswith(o["pattern"]).astype("boolean")
    if name == "str.replace":
        return basin_text.replace(a, o["pattern"], o["with"], o.get("literal", False), o.get("all", False))
    if name == "str.slice":
        start, length = o["start"], o.get("length")
        def piece(v):
            # ops/expr_string.cc Slice: the window [start, start + length) (a negative start
            # counts from the end), clipped to the string, after the length is added.
            n = len(v)
            lo = start if start >= 0 else n + start
            hi = n if length is None else lo + length
            lo = max(0, min(lo, n))
            return v[lo:max(lo, min(hi, n))]
        return pd.Series(pd.array([None if v is pd.NA else piece(v) for v in a], dtype="string"), index=a.index)
    if name == "concatStr":
        out = args[0]
        for x in args[1:]:
            out = out + x
        return out
    if name.startswith("dt."):
        part = {"dt.year": "year", "dt.month": "month", "dt.day": "day", "dt.hour": "hour", "dt.minute": "minute", "dt.second": "second"}
        if name == "dt.weekday":
            return (a.dt.dayofweek + 1).astype("Int64")
        return getattr(a.dt, part[name]).astype("Int64")
    if name == "when":
        out = as_type(args[-1], t)
        for i in range(len(args) // 2 - 1, -1, -1):
            cond = args[2 * i].fillna(False).astype(bool)
            out = as_type(args[2 * i + 1], t).where(cond, out)
        return out
    if name == "isIn":
        values = o["values"]
        hit = a.isin(values).astype("boolean")
        res = hit.mask(a.isna())
        if o.get("hasNull"):
            res = res.mask(~hit.fillna(False))
        return res
    f = floats(a) if a is not None else None
    nulls = a.isna().to_numpy() if a is not None else None
    with np.errstate(all="ignore"):
        if name == "abs":
            return a.abs()
        if name == "round":
            if t == "int64":
                return a
            d = o.get("decimals", 0)
            # DuckDB's formula, as native RoundDouble: std::round (half away from zero) of x
            # scaled; x itself (decimals >= 0) or 0 (decimals < 0) where that is not finite.
            m = 10.0 ** abs(d)
            r = c_round(f * m) / m if d >= 0 else c_round(f / m) * m
            r = np.where(np.isfinite(r), r, f if d >= 0 else 0.0)
            return masked(np.where(nulls, 0, r), nulls, "float64", a.index)
        # native/src/ops/expr_math.cc: a result that is not a finite number is null.
        if name == "sqrt":
            return finite(np.sqrt(f), nulls, a.index)
        if name == "exp":
            return finite(libm(math.exp, f), nulls, a.index)
        if name == "log":
            base = o.get("base")
            r = libm(math.log, f) if base is None else libm(math.log10, f) if base == 10 else libm(math.log2, f) if base == 2 else libm(math.log, f) / math.log(base)
            return finite(r, nulls, a.index)
        if name == "pow":
            b = args[1]
            return finite(libm(math.pow, f, floats(b)), nulls | b.isna().to_numpy(), a.index)
    raise BridgeError("BASIN_INTERNAL", f"function {name}() is not translated")
