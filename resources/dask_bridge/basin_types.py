"""Basin column types as pandas dtypes, and the errors the bridge reports.

Every column is held in a nullable pandas dtype so that nulls stay nulls (never
NaN stand-ins): int64 -> Int64, float64 -> Float64 (NaN and null stay distinct),
bool -> boolean, string -> string, date and timestamp -> datetime64[ns] (NaT).
"""
import numpy as np
import pandas as pd

PANDAS_DTYPES = {
    "int64": "Int64",
    "float64": "Float64",
    "bool": "boolean",
    "string": "string",
    "date": "datetime64[ns]",
    "timestamp": "datetime64[ns]",
}

DAY_NS = 86_400 * 1_000_000_000
NAT = -(2**63)  # numpy's NaT as int64


class BridgeError(Exception):
    """An error with a Basin error code (engine/common/errors.ts) and a source location."""

    def __init__(self, code, message, location=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.location = location

    def __reduce__(self):  # raised on a worker, re-raised in the bridge
        return (BridgeError, (self.code, self.message, self.location))

    def to_json(self):
        out = {"name": "BasinError", "code": self.code, "message": self.message}
        if self.location:
            out["location"] = self.location
        return out


def empty_frame(schema):
    """A zero-row frame with the schema's columns and dtypes (dask's `meta`)."""
    return pd.DataFrame({f["name"]: pd.Series([], dtype=PANDAS_DTYPES[f["type"]]) for f in schema})


def null_series(t, n, index=None):
    """`n` nulls of Basin type `t`."""
    if t in ("date", "timestamp"):
        return pd.Series(np.full(n, np.datetime64("NaT"), dtype="datetime64[ns]"), index=index)
    return pd.Series(pd.array([None] * n, dtype=PANDAS_DTYPES[t]), index=index)


def from_plan_values(values, t, index=None):
    """A column from plan JSON values (dates as epoch days, timestamps as epoch microseconds)."""
    if t in ("date", "timestamp"):
        # Exact int64 nanoseconds (a float64 on the way would round microseconds off).
        unit = DAY_NS if t == "date" else 1000
        ns = np.full(len(values), NAT, dtype=np.int64)
        for i, v in enumerate(values):
            if v is not None:
                x = int(v) * unit
                if not NAT < x < 2**63:
                    raise BridgeError("BASIN_PLAN", f"a {t} in this pipeline's data or literals lies outside 1677-09-22 … 2262-04-11, which the Dask bridge cannot hold (pandas keeps nanoseconds); run this pipeline on the local cluster")
                ns[i] = x
        return pd.Series(ns.view("datetime64[ns]"), index=index)
    if t == "float64":
        # NaN, ±inf and -0.0 come as JSON's NaN / Infinity tokens and -0.0 (json.loads reads
        # them): values, not nulls, which pd.array would make of NaN.
        mask = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        data = np.fromiter((0.0 if v is None else float(v) for v in values), dtype=np.float64, count=len(values))
        return pd.Series(pd.arrays.FloatingArray(data, mask), index=index)
    if t == "int64":
        # Exact int64s: values past 2^53 come as decimal strings, which pd.array cannot
        # take beside a None ("cannot safely cast non-equivalent object to int64").
        mask = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        data = np.array([0 if v is None else int(v) for v in values], dtype=np.int64).reshape(-1)
        return pd.Series(pd.arrays.IntegerArray(data, mask), index=index)
    return pd.Series(pd.array(list(values), dtype=PANDAS_DTYPES[t]), index=index)


def conform(series, t):
    """The series in the pandas dtype of Basin type `t` (after pandas picked another one)."""
    want = PANDAS_DTYPES[t]
    if str(series.dtype) == want:
        return series
    if t in ("date", "timestamp"):
        return pd.to_datetime(series)
    if t == "string":
        return series.astype("object").where(series.notna(), None).astype("string")
    if t == "float64" and series.dtype == object:
        return series.astype("Float64")
    return series.astype(want)


def conform_frame(df, schema):
    """The frame with exactly the schema's names and dtypes, and a fresh index."""
    cols = {f["name"]: conform(df.iloc[:, i], f["type"]).reset_index(drop=True) for i, f in enumerate(schema)}
    return pd.DataFrame(cols) if cols else pd.DataFrame(index=range(len(df)))
