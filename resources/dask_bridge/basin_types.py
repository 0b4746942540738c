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
    if t == "date":
        ns = [None if v is None else int(v) * DAY_NS for v in values]
        return pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64").to_numpy(dtype="float64", na_value=np.nan), unit="ns"), index=index)
    if t == "timestamp":
        ns = [None if v is None else int(v) * 1000 for v in values]
        return pd.Series(pd.to_datetime(pd.array(ns, dtype="Int64").to_numpy(dtype="float64", na_value=np.nan), unit="ns"), index=index)
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
