"""A computed pandas frame as columnar JSON with explicit Basin types and nulls
(no pyarrow on Debian's Dask): read by engine/cluster/dask_wire.ts.

int64: numbers, or decimal strings when a value is beyond 2^53 (`big`); float64: numbers,
with "NaN" / "Infinity" / "-Infinity" as strings (null is null); date: epoch days;
timestamp: epoch microseconds; bool and string as themselves.
"""
import math

import numpy as np

from basin_types import DAY_NS

SAFE = 2 ** 53 - 1


def encode_column(s, t):
    nulls = s.isna().to_numpy()
    out = {"type": t}
    if t == "int64":
        v = s.to_numpy(dtype="int64", na_value=0)
        big = bool(len(v)) and bool(np.abs(v.astype("float64")).max() > SAFE)
        out["big"] = big
        out["values"] = [None if m else (str(x) if big else int(x)) for x, m in zip(v.tolist(), nulls)]
    elif t == "float64":
        v = s.to_numpy(dtype="float64", na_value=0.0)
        out["values"] = [None if m else (x if math.isfinite(x) else ("NaN" if x != x else "Infinity" if x > 0 else "-Infinity")) for x, m in zip(v.tolist(), nulls)]
    elif t in ("date", "timestamp"):
        ns = s.to_numpy(dtype="datetime64[ns]").astype("int64")
        div = DAY_NS if t == "date" else 1000
        out["values"] = [None if m else int(x // div) for x, m in zip(ns.tolist(), nulls)]
    elif t == "bool":
        v = s.to_numpy(dtype=bool, na_value=False)
        out["values"] = [None if m else bool(x) for x, m in zip(v.tolist(), nulls)]
    else:
        out["values"] = [None if m else str(x) for x, m in zip(s.tolist(), nulls)]
    return out


def encode_frame(df, schema):
    return {
        "rows": len(df),
        "names": [f["name"] for f in schema],
        "columns": [encode_column(df.iloc[:, i], f["type"]) for i, f in enumerate(schema)],
    }


# A result goes out in parts of at most this many rows, and a part whose JSON passes
# PART_BYTES is halved: one line of a whole large result passed the longest string the
# engine's JavaScript can hold (about 512 MB) and held every value as a Python object.
PART_ROWS = 65536
PART_BYTES = 64 << 20


def frame_parts(df, schema, dumps):
    """The frame as JSON lines (`dumps` of each part's table), in row order; at least one part."""
    start, n, step = 0, len(df), PART_ROWS
    while True:
        line = dumps(encode_frame(df.iloc[start:start + step], schema))
        if len(line) > PART_BYTES and step > 1:
            step = max(1, step // 2)
            continue
        yield line
        start += step
        if start >= n:
            return
