"""Translates a Basin plan (engine/common/plan.ts, PLAN_VERSION 2, with the expressions
resolved by the engine in each node's `native` field) into dask.dataframe calls.

`check` walks the whole plan first: a node or function the bridge cannot translate
fails before anything is submitted, naming the operation and its source location.
Partition order is kept wherever Basin defines an order (head, first/last, sort ties).
"""
import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

import basin_csv_location
import basin_parquet
import basin_text
from basin_exprs import evaluate, unsupported_fn
from basin_types import BridgeError, conform, conform_frame, empty_frame, from_plan_values

PLAN_VERSION = 2
SUPPORTED_NODES = {"scanCsv", "scanFile", "values", "project", "filter", "aggregate", "head", "sort", "join"}
SUPPORTED_AGGS = {"sum", "mean", "min", "max", "count", "std", "var", "median", "nunique", "first", "last", "quantile", "corr"}

ORDER_P, ORDER_R = "__basin_part", "__basin_row"


def task(fn):
    """`fn` as a dask task named by its arguments: a subplan that occurs twice in a plan
    (TPC-H Q15's revenue, Q21's lineitem) is one set of tasks, computed once."""
    return dask.delayed(fn, pure=True)


def inputs_of(node):
    if node["kind"] == "join":
        return [node["left"], node["right"]]
    return [node["input"]] if "input" in node else []


def node_exprs(node):
    nat = node.get("native") or {}
    out = []
    for key in ("exprs", "keys"):
        out += [x["expr"] for x in nat.get(key, [])]
    for a in nat.get("aggs", []):
        out += [x for x in (a.get("arg"), a.get("arg2")) if x]
    if nat.get("predicate"):
        out.append(nat["predicate"])
    return out


def check(plan):
    """Fails, naming the operation, when any part of the plan has no Dask translation."""
    if plan.get("version") != PLAN_VERSION:
        raise BridgeError("BASIN_PLAN", f"this plan has version {plan.get('version')}, but the Dask bridge reads version {PLAN_VERSION}; use the bridge shipped with this Basin")
    stack = [plan["root"]]
    while stack:
        node = stack.pop()
        kind, loc = node["kind"], node.get("loc")
        if kind == "scanFile" and node["format"] != "parquet":
            reader = {"json": "readJson", "arrow": "readArrow"}.get(node["format"], node["format"])
            raise BridgeError("BASIN_PLAN", f"{reader}() cannot run on a Dask cluster yet (the Dask backend reads CSV and Parquet); convert the file to Parquet, or compute this pipeline on the local cluster", loc)
        if kind not in SUPPORTED_NODES:
            raise BridgeError("BASIN_PLAN", f"{kind}() cannot run on a Dask cluster yet (the Dask backend translates {', '.join(sorted(SUPPORTED_NODES))}); compute this pipeline on the local cluster", loc)
        for e in node_exprs(node):
            bad = unsupported_fn(e)
            if bad:
                raise BridgeError("BASIN_PLAN", f"{bad}() cannot run on a Dask cluster yet; compute this pipeline on the local cluster", loc)
        for a in (node.get("native") or {}).get("aggs", []):
            if a["op"] not in SUPPORTED_AGGS:
                raise BridgeError("BASIN_PLAN", f"{a['op']}() cannot run on a Dask cluster yet", loc)
        stack.extend(inputs_of(node))


def translate(node):
    """The dask DataFrame computing `node`."""
    kind = node["kind"]
    schema = node["schema"]
    meta = empty_frame(schema)
    if kind == "scanCsv":
        return scan_csv(node, meta)
    if kind == "scanFile":
        return scan_parquet(node, meta)
    if kind == "values":
        parts = [task(values_partition)(p, schema) for p in node["partitions"]] or [task(values_partition)({}, schema)]
        return dd.from_delayed(parts, meta=meta, verify_meta=False)
    child = translate(node["input"]) if "input" in node else None
    nat = node.get("native") or {}
    if kind == "project":
        return child.map_partitions(project_partition, nat["exprs"], schema, meta=meta)
    if kind == "filter":
        return child.map_partitions(filter_partition, nat["predicate"], meta=meta)
    if kind == "head":
        return child.head(node["n"], npartitions=-1, compute=False)
    if kind == "sort":
        return sort(child, node, meta)
    if kind == "aggregate":
        return aggregate(child, node, nat, meta)
    if kind == "join":
        return join(translate(node["left"]), translate(node["right"]), node, meta)
    raise BridgeError("BASIN_PLAN", f"{kind}() cannot run on a Dask cluster", node.get("loc"))


# --- sources -------------------------------------------------------------------------

def values_partition(part, schema):
    n = len(next(iter(part.values()))) if part else 0
    return pd.DataFrame({f["name"]: from_plan_values(part.get(f["name"], [None] * n), f["type"]) for f in schema}) if schema else pd.DataFrame(index=range(n))


def scan_csv(node, meta):
    opts = node["options"]
    file_schema = node["fileSchema"]
    columns = node.get("columns") or [f["name"] for f in file_schema]
    read = [f for f in file_schema if f["name"] in columns]
    parts = [task(read_csv_file)(path, opts, file_schema, read, node.get("loc")) for path in node["files"]]
    ddf = dd.from_delayed(parts, meta=empty_frame(read), verify_meta=False)
    pred = (node.get("native") or {}).get("predicate")
    if pred:
        ddf = ddf.map_partitions(filter_partition, pred, meta=ddf._meta)
    return ddf


def scan_parquet(node, meta):
    """One partition per run of row groups, as the plan's `parts` cut them (engine/cluster/dask/bridge_plan.ts)."""
    nat = node["native"]
    columns, loc = nat["columns"], node.get("loc")
    parts = [task(read_parquet_part)(p["file"], p["rowGroups"], columns, loc) for p in node["parts"]]
    if not parts:  # every row group pruned away
        parts = [task(empty_frame)(columns)]
    ddf = dd.from_delayed(parts, meta=meta, verify_meta=False)
    if nat.get("predicate"):
        ddf = ddf.map_partitions(filter_partition, nat["predicate"], meta=meta)
    return ddf


def read_parquet_part(path, groups, columns, loc):
    try:
        return basin_parquet.read(path, groups, columns)
    except BridgeError as e:
        raise BridgeError(e.code, e.message, e.location or loc)


def read_csv_file(path, opts, file_schema, read, loc):
    """One whole file (a quoted field may hold a newline, so files are not split at bytes)."""
    try:
        raw = pd.read_csv(
            path, sep=opts["delimiter"], header=0 if opts["header"] else None,
            names=None if opts["header"] else [f["name"] for f in file_schema],
            dtype=str, keep_default_na=False, na_values=opts["nullValues"], usecols=[f["name"] for f in read],
            on_bad_lines="skip" if opts.get("onBadLines") == "skip" else "error", engine="c",
            # In a file of one column a blank line is a null row, as the local reader reads it.
            skip_blank_lines=len(file_schema) != 1,
            encoding="latin-1" if opts.get("encoding") == "latin1" else "utf-8",
            encoding_errors="replace" if opts.get("encoding") == "replace" else "strict",
        )
    except FileNotFoundError:
        raise BridgeError("BASIN_IO", f"{path} does not exist on the Dask workers; put the data where every worker can read it (a shared file system)", loc)
    except UnicodeDecodeError as e:
        raise BridgeError("BASIN_PARSE", f"{path}: byte {e.start + 1} is not valid UTF-8; if the file is Latin-1 pass encoding: \"latin1\", or encoding: \"replace\"", loc)
    except (pd.errors.ParserError, ValueError) as e:
        raise BridgeError("BASIN_PARSE", f"{path}: {e}", loc)
    # Values parse as the local reader parses them (native/src/io/csv.cc): strictly, no
    # spaces, ISO dates only; a value that does not parse fails the read, or drops its
    # row with onBadLines: "skip".
    out, dropped = {}, np.zeros(len(raw), dtype=bool)
    names = [x["name"] for x in file_schema]

    def value_at(row, f):
        # Rows skipped as bad lines would shift the count: then only the data row is named.
        if opts.get("onBadLines") == "skip":
            return f"{path}: data row {row + 1}"
        return basin_csv_location.where(path, opts["delimiter"], opts["header"], row, names.index(f["name"]), len(names) == 1)

    for f in read:
        s = raw[f["name"]].astype("string")
        if f["type"] == "string":
            out[f["name"]] = s
            continue
        try:
            out[f["name"]], bad = basin_text.parse_column(s, f["type"], csv=True)
        except basin_text.OutOfRange as e:
            raise BridgeError("BASIN_IO", f'{value_at(e.args[1], f)}: column "{f["name"]}" holds a {f["type"]} {basin_text.RANGE_NOTE} ("{e.args[0]}"); filter those rows out of the file, read the column as a string (dtypes: {{ {f["name"]}: "string" }}), or run this pipeline on the local cluster', loc)
        if bad.any():
            if opts.get("onBadLines") != "skip":
                i = int(np.argmax(bad))
                raise BridgeError("BASIN_PARSE", f'{value_at(i, f)}: cannot parse "{s.iloc[i][:40]}" as {f["type"]} in column "{f["name"]}" (pass dtypes: {{ {f["name"]}: "string" }} to read it as text, or fix the value)', loc)
            dropped |= bad
    frame = pd.DataFrame(out, columns=[f["name"] for f in read])
    return (frame[~dropped] if dropped.any() else frame).reset_index(drop=True)


# --- row operations ------------------------------------------------------------------

def project_partition(df, exprs, schema):
    cols = [conform(evaluate(x["expr"], df), f["type"]).reset_index(drop=True) for x, f in zip(exprs, schema)]
    out = pd.concat(cols, axis=1) if cols else pd.DataFrame(index=range(len(df)))
    out.columns = [f["name"] for f in schema]
    return out


def filter_partition(df, predicate):
    keep = evaluate(predicate, df).fillna(False).astype(bool).to_numpy()
    return df[keep].reset_index(drop=True)


def order_codes(col):
    """Each value's dense rank (int64) in the local engine's order, computed on the exact
    values (Series.rank on a nullable Float64 column calls values within ~1e-8 of each other
    ties, and a float64 on the way would round int64 past 2^53): NaN above every number and
    equal to NaN, -0.0 equal to 0.0 (float_order.h), strings by their bytes (code points).
    A null's rank is 0; the null flag places it."""
    dt = str(col.dtype)
    nan = None
    if dt == "Float64":
        v = col.to_numpy(dtype="float64", na_value=0.0)
        nan = np.isnan(v)
        v = np.where(nan, 0.0, v) + 0.0  # -0.0 + 0.0 is 0.0
    elif dt in ("Int64", "boolean"):
        v = col.to_numpy(dtype="int64", na_value=0)
    elif col.dtype.kind == "M":
        v = col.to_numpy(dtype="datetime64[ns]").view("int64")
    elif col.dtype.kind in "iufb":
        v = col.to_numpy()
    else:
        v = col.to_numpy(dtype=object, na_value="")
    rank = np.unique(v, return_inverse=True)[1].astype("int64").reshape(-1)
    if nan is not None and nan.any():
        rank[nan] = rank.max(initial=0) + 1
    return rank


def sort_frame(df, keys, limit):
    """A stable sort by the keys, each with its direction and null placement."""
    if len(df) == 0:
        return df
    by = {}
    for i, k in enumerate(keys):
        col = df.iloc[:, k["index"]]
        nulls = col.isna().to_numpy()
        by[f"n{i}"] = np.where(nulls, 0 if k["nullsFirst"] else 1, 1 if k["nullsFirst"] else 0)
        rank = order_codes(col)
        by[f"v{i}"] = -rank if k["descending"] else rank
    order = np.lexsort([by[c] for c in reversed(list(by))])
    out = df.iloc[order].reset_index(drop=True)
    return out if limit is None else out.head(limit)


def sort(child, node, meta):
    keys = [{**k, "index": [f["name"] for f in node["input"]["schema"]].index(k["name"])} for k in node["keys"]]
    limit = node.get("limit")
    if limit is not None:  # top-n: each partition's first `limit`, then the first `limit` of those
        child = child.map_partitions(sort_frame, keys, limit, meta=meta)
    return child.repartition(npartitions=1).map_partitions(sort_frame, keys, limit, meta=meta)


# --- aggregation ---------------------------------------------------------------------

def with_order(df, partition_info=None):
    out = df.copy()
    out[ORDER_P] = (partition_info or {}).get("number", 0)
    out[ORDER_R] = np.arange(len(df), dtype="int64")
    return out


def aggregate_inputs(df, keys, aggs):
    """The key columns k0.., and each aggregation's inputs a0.., b0.. (corr)."""
    cols = {f"k{i}": conform(evaluate(k["expr"], df), k["type"]) for i, k in enumerate(keys)}
    for i, a in enumerate(aggs):
        if a.get("arg"):
            cols[f"a{i}"] = evaluate(a["arg"], df)
        if a.get("arg2"):
            cols[f"b{i}"] = evaluate(a["arg2"], df)
    out = pd.DataFrame(cols, index=df.index) if cols else pd.DataFrame(index=df.index)
    for c in (ORDER_P, ORDER_R):
        if c in df.columns:
            out[c] = df[c]
    return out.reset_index(drop=True)


def corr_groups(x, y, ids, groups):
    """Pearson's r per group (`ids`: each row's group, 0..groups-1) as the local engine computes
    it (native/src/ops/groupby.cc: ComputeCoMoments, CorrFinal): over the rows where both are
    not null, shifted sums from the group's first pair; null with no pairs, NaN (0 / 0) with
    one pair or no spread on either side, NaN from a NaN or an infinity."""
    both = (x.notna() & y.notna()).to_numpy()
    xv = x.to_numpy(dtype="float64", na_value=np.nan)[both]
    yv = y.to_numpy(dtype="float64", na_value=np.nan)[both]
    ids = np.asarray(ids, dtype=np.int64)[both]
    sums = lambda w: np.bincount(ids, weights=w, minlength=groups)  # in row order, as locally
    n = np.bincount(ids, minlength=groups).astype("float64")
    kx, ky = np.zeros(groups), np.zeros(groups)
    seen, first = np.unique(ids, return_index=True)
    kx[seen], ky[seen] = xv[first], yv[first]
    with np.errstate(all="ignore"):
        dx, dy = xv - kx[ids], yv - ky[ids]
        sx, sy = sums(dx), sums(dy)
        m2x, m2y = sums(dx * dx) - sx * sx / n, sums(dy * dy) - sy * sy / n
        cxy = sums(dx * dy) - sx * sy / n
        m2x, m2y = np.where(m2x < 0, 0.0, m2x), np.where(m2y < 0, 0.0, m2y)  # NonNegative: NaN stays
        sdx = np.where(n > 1, np.sqrt(m2x / n), 0.0)
        sdy = np.where(n > 1, np.sqrt(m2y / n), 0.0)
        r = (cxy / n) / (sdx * sdy)
    none = n == 0
    return pd.arrays.FloatingArray(np.where(none, 0.0, r), none)


def as_float(s, nulls):
    """A Float64 result, null where `nulls` (too few values); a NaN elsewhere (inf - inf) is a value."""
    v = s.to_numpy(dtype="float64", na_value=np.nan)
    return pd.Series(pd.arrays.FloatingArray(np.where(nulls, 0.0, v), np.asarray(nulls, dtype=bool)), index=s.index)


def nan_agg(op, v, q):
    """One group's aggregation over float64 values `v` (nulls dropped) that hold a NaN: the
    local engine's NaN is a value, equal to itself and above every number (float_order.h).
    Also median/quantile over infinities."""
    if op == "count":
        return len(v)
    if op == "nunique":
        return len(np.unique(v[~np.isnan(v)])) + 1
    if op in ("first", "last"):
        return v[0] if op == "first" else v[-1]
    if op == "min":
        rest = v[~np.isnan(v)]
        return rest.min() if len(rest) else np.nan
    if op in ("median", "quantile"):
        srt = np.sort(v)  # NaN last
        h = (0.5 if op == "median" else q) * (len(srt) - 1)
        lo = int(np.floor(h))
        f = h - lo
        return srt[lo] if f == 0 else srt[lo] * (1 - f) + srt[lo + 1] * f  # quantile.h's Interpolate
    if op in ("std", "var") and len(v) < 2:
        return None
    return np.nan  # sum, mean, max, std, var


def one_agg(a, i, g, whole, nan_aware=True):
    """One aggregation per group, vectorized by pandas (`g` groups `whole`, or is None for one group)."""
    op = a["op"]
    if op == "count" and not a.get("arg"):
        return g.size() if g is not None else pd.Series([len(whole)])
    nan = nan_values(whole[f"a{i}"]) if op != "corr" and nan_aware else None
    odd = nan is not None and (nan.any() or (op in ("median", "quantile") and np.isinf(whole[f"a{i}"].to_numpy(dtype="float64", na_value=0.0)).any()))
    if odd:
        r = nan_agg_groups(a, i, g, whole, nan)
        if r is not None:
            return r
    if op in ("sum", "mean") and str(whole[f"a{i}"].dtype) == "Float64":
        r = inf_sum_groups(op, whole[f"a{i}"], g)
        if r is not None:
            return r
    s = g[f"a{i}"] if g is not None else whole[f"a{i}"]
    single = g is None
    n = s.count()
    n = pd.Series([n]) if single else n
    if op == "corr":
        # Row groups by the grouper's codes, in its result order (that of n).
        ids = np.zeros(len(whole), dtype=np.int64) if single else g.grouper.group_info[0]
        return pd.Series(corr_groups(whole[f"a{i}"], whole[f"b{i}"], ids, len(n)), index=n.index)
    call = {
        "count": lambda: s.count(), "nunique": lambda: s.nunique(dropna=True),
        "sum": lambda: s.sum(min_count=1), "min": lambda: s.min(), "max": lambda: s.max(),
        "first": lambda: s.first() if not single else (s.dropna().iloc[0] if n[0] else None),
        "last": lambda: s.last() if not single else (s.dropna().iloc[-1] if n[0] else None),
        "mean": lambda: s.mean(), "median": lambda: s.median(), "quantile": lambda: s.quantile(a["q"]),
        "std": lambda: s.std(ddof=1), "var": lambda: s.var(ddof=1),
    }[op]
    r = call()
    if single:
        r = pd.Series([None if (op not in ("count", "nunique") and n[0] == 0) else r], dtype="object")
    if op in ("mean", "median", "quantile", "std", "var"):
        return as_float(r.astype("object").where(r.notna(), np.nan).astype("float64"), (n < (2 if op in ("std", "var") else 1)).to_numpy())
    return r


def infinities(s):
    """Where a Float64 series holds +inf, and where -inf."""
    v = s.to_numpy(dtype="float64", na_value=0.0)
    return v == np.inf, v == -np.inf


def with_infinities(r, pos, neg):
    """Sums `r` over a group's finite values (null where there were none), with the group's
    infinities added back: +inf, -inf, or NaN for both, as the local engine's plain sum gives.
    pandas' grouped sum is Kahan-compensated, and makes inf + 3 NaN; so infinities are
    counted apart (`pos`, `neg`: how many per group) and never enter it."""
    null = r.isna().to_numpy()
    data = r.astype("object").where(~null, np.nan).to_numpy(dtype="float64")
    inf = (np.asarray(pos) > 0) | (np.asarray(neg) > 0)
    with np.errstate(invalid="ignore"):
        data = np.where(inf & null, 0.0, data) + np.where(np.asarray(pos) > 0, np.inf, 0.0) + np.where(np.asarray(neg) > 0, -np.inf, 0.0)
    null = null & ~inf
    return pd.Series(pd.arrays.FloatingArray(np.where(null, 0.0, data), null), index=r.index)


def inf_sum_groups(op, src, g):
    """one_agg's sum or mean of a Float64 input holding an infinity (None when it holds none)."""
    pos, neg = infinities(src)
    if not (pos.any() or neg.any()):
        return None
    finite = src.mask(pos | neg)
    if g is None:
        total, n = pd.Series([finite.sum(min_count=1)], dtype="object"), np.array([src.count()])
        r = with_infinities(total, [pos.sum()], [neg.sum()])
    else:
        index = g.size().index
        by = lambda v: pd.Series(v, index=src.index).groupby(g.grouper)
        total = by(finite).sum(min_count=1).reindex(index)
        n = by(src).count().reindex(index).to_numpy(dtype="int64")
        r = with_infinities(total, by(pos).sum().reindex(index).to_numpy(), by(neg).sum().reindex(index).to_numpy())
    if op == "sum":
        return r
    with np.errstate(all="ignore"):
        v = r.to_numpy(dtype="float64", na_value=np.nan) / np.maximum(n, 1)
    return pd.Series(pd.arrays.FloatingArray(np.where(n > 0, v, 0.0), n == 0), index=r.index)


def nan_agg_groups(a, i, g, whole, nan):
    """one_agg for a float64 input holding NaN (or an infinity, for median and quantile, which
    interpolate as quantile.h does): nan_agg on the groups that hold one, pandas on the others."""
    op = a["op"]
    src = whole[f"a{i}"]
    plain = one_agg(a, i, g, whole.assign(**{f"a{i}": src.mask(nan)}), nan_aware=False)
    if op == "count":
        return None
    # Each row's group by the grouper's codes, in its result order (plain's): a key of
    # several columns with a null cannot be looked up in plain's index (KeyError).
    ids = np.zeros(len(whole), dtype=np.int64) if g is None else np.asarray(g.grouper.group_info[0], dtype=np.int64)
    res = [None if x is pd.NA or x is None else x for x in plain.astype("object")]
    vals = src.to_numpy(dtype="float64", na_value=np.nan)
    valid = src.notna().to_numpy()
    odd = valid & (np.isnan(vals) | (np.isinf(vals) if op in ("median", "quantile") else False))
    order = np.argsort(ids, kind="stable")  # rows of each group together, in row order
    starts = np.searchsorted(ids[order], np.arange(len(res) + 1))
    for pos in np.unique(ids[odd]):
        rows = order[starts[pos]:starts[pos + 1]]
        res[pos] = nan_agg(op, vals[rows][valid[rows]], a.get("q"))
    if op == "nunique":
        return pd.Series(pd.array(res, dtype="Int64"), index=plain.index)
    mask = np.array([x is None for x in res], dtype=bool)
    data = np.array([np.nan if x is None else float(x) for x in res], dtype=np.float64)
    return pd.Series(pd.arrays.FloatingArray(data, mask), index=plain.index)


PARTIAL_AGGS = {"sum", "count", "min", "max", "mean"}


def grouping(df, nkeys):
    """The groups of the key columns k0.. (null keys form groups), in first-seen order; None without keys."""
    key_cols = [f"k{i}" for i in range(nkeys)]
    return df.groupby(key_cols if nkeys > 1 else key_cols[0], dropna=False, sort=False) if nkeys else None


def key_frame(g, nkeys):
    """One row per group of `g`: its keys k0.., and the group index to align results with."""
    index = g.size().index
    frame = index.to_frame(index=False) if isinstance(index, pd.MultiIndex) else pd.DataFrame({"k0": index})
    frame.columns = [f"k{i}" for i in range(nkeys)]
    return frame, index


def nan_values(s):
    """Where a Float64 series holds NaN as a value (not a null)."""
    return np.isnan(s.to_numpy(dtype="float64", na_value=0.0)) if str(s.dtype) == "Float64" else None


def with_nan(r, flag):
    """`r` as Float64, NaN (a value, not a null) where `flag`."""
    data = r.astype("object").where(r.notna(), np.nan).to_numpy(dtype="float64")
    data[flag] = np.nan
    return pd.Series(pd.arrays.FloatingArray(data, r.isna().to_numpy() & ~flag), index=r.index)


def partial_states(df, nkeys, aggs):
    """Each group's states in this partition: k0.., then per aggregation n{i} (values that are not null,
    or rows for count()), v{i} (sum, min or max; the sum for mean) over the values that are not NaN,
    and for a float64 input x{i}, how many values are NaN (the local engine's NaN is a value above every
    number: it makes a sum, mean and max NaN, and a min only when there is nothing else)."""
    nan_cols = {}
    for i, a in enumerate(aggs):
        nan = nan_values(df[f"a{i}"]) if a.get("arg") and a["op"] != "count" else None
        if nan is not None:
            nan_cols[f"x{i}"] = nan.astype("int64")
            drop = nan
            if a["op"] in ("sum", "mean"):  # p{i}, q{i}: how many are +inf, -inf (with_infinities)
                pos, neg = infinities(df[f"a{i}"])
                nan_cols[f"p{i}"], nan_cols[f"q{i}"] = pos.astype("int64"), neg.astype("int64")
                drop = nan | pos | neg
            nan_cols[f"a{i}"] = df[f"a{i}"].mask(drop)
    if nan_cols:
        df = df.assign(**nan_cols)
    g = grouping(df, nkeys)
    if g is not None:
        frame, index = key_frame(g, nkeys)
        size = g.size()
    else:
        frame, index, size = pd.DataFrame(index=range(1)), None, pd.Series([len(df)])
    for i, a in enumerate(aggs):
        op = a["op"]
        if op == "count" and not a.get("arg"):
            frame[f"n{i}"] = size.to_numpy(dtype="int64")
            continue
        s = g[f"a{i}"] if g is not None else df[f"a{i}"]
        n = s.count()
        v = {"sum": lambda: s.sum(min_count=1), "mean": lambda: s.sum(min_count=1), "min": s.min, "max": s.max, "count": lambda: None}[op]()
        if g is None:
            n = pd.Series([n])
            v = None if v is None else pd.Series([v], dtype=df[f"a{i}"].dtype)
        for c in (f"x{i}", f"p{i}", f"q{i}"):
            if c in df.columns:
                x = g[c].sum() if g is not None else pd.Series([int(df[c].sum())])
                x = x.reindex(index).to_numpy(dtype="int64") if g is not None else x.to_numpy(dtype="int64")
                frame[c] = x
                n = n + (pd.Series(x, index=index) if g is not None else pd.Series(x))
        frame[f"n{i}"] = n.reindex(index).to_numpy(dtype="int64") if g is not None else n.to_numpy(dtype="int64")
        if v is not None:
            frame[f"v{i}"] = (v.reindex(index) if g is not None else v).reset_index(drop=True)
    return frame


def combine_states(df, nkeys, aggs, schema):
    """Every group's aggregations from the partitions' states (df holds all of a group's states)."""
    g = grouping(df, nkeys)
    if g is not None:
        frame, index = key_frame(g, nkeys)
        cols = [frame[f"k{i}"] for i in range(nkeys)]
    else:
        index, cols = None, []
    for i, a in enumerate(aggs):
        op = a["op"]
        part = (lambda c: g[c]) if g is not None else (lambda c: df[c])
        n = part(f"n{i}").sum()
        if op == "count":
            r = n
        elif op in ("sum", "mean"):
            r = part(f"v{i}").sum(min_count=1)
        else:
            r = getattr(part(f"v{i}"), op)()
        if g is None:
            n, r = pd.Series([n]), pd.Series([r], dtype="object" if op != "count" else "int64")
        else:
            n, r = n.reindex(index), r.reindex(index)
        counts = n.to_numpy(dtype="int64")
        if f"p{i}" in df.columns:
            inf = [part(c).sum() for c in (f"p{i}", f"q{i}")]
            inf = [(x.reindex(index) if g is not None else pd.Series([x])).to_numpy(dtype="int64") for x in inf]
            r = with_infinities(r, *inf)
        if op == "mean":
            with np.errstate(all="ignore"):
                v = r.astype("object").where(r.notna(), np.nan).to_numpy(dtype="float64") / np.maximum(counts, 1)
            r = pd.Series(pd.arrays.FloatingArray(np.where(counts > 0, v, 0.0), counts == 0))  # inf - inf stays NaN
        if f"x{i}" in df.columns and op != "count":
            x = part(f"x{i}").sum()
            x = (x.reindex(index) if g is not None else pd.Series([x])).to_numpy(dtype="int64")
            flag = x > 0 if op != "min" else (x > 0) & (x == counts)
            r = with_nan(r.reset_index(drop=True), flag)
        cols.append(r.reset_index(drop=True))
    return agg_frame(cols, schema)


def agg_frame(cols, schema):
    """The aggregate's output frame: columns in the schema's names and dtypes."""
    out = {}
    for c, f in zip(cols, schema):
        out[f["name"]] = conform(c.astype("object").where(c.notna(), None) if f["type"] != "float64" and str(c.dtype) == "object" else c, f["type"]).reset_index(drop=True)
    return pd.DataFrame(out, columns=[f["name"] for f in schema])


def aggregate_partition(df, keys, aggs, schema):
    """Every group's aggregations, in first-seen order (df holds whole groups)."""
    if ORDER_P in df.columns:
        df = df.sort_values([ORDER_P, ORDER_R], kind="mergesort")
    g = grouping(df, len(keys))
    results = [one_agg(a, i, g, df) for i, a in enumerate(aggs)]
    if g is not None:
        frame, index = key_frame(g, len(keys))
        cols = [frame[c] for c in frame.columns] + [r.reindex(index).reset_index(drop=True) for r in results]
    else:
        cols = [r.reset_index(drop=True) for r in results]
    return agg_frame(cols, schema)


def aggregate(child, node, nat, meta):
    keys = [{**k, "type": f["type"]} for k, f in zip(nat["keys"], node["schema"])]
    aggs = nat["aggs"]
    if any(a["op"] in ("first", "last") for a in aggs):
        child = child.map_partitions(with_order, meta={**{c: child._meta[c].dtype for c in child.columns}, ORDER_P: "int64", ORDER_R: "int64"})
    inputs = child.map_partitions(aggregate_inputs, keys, aggs)
    key_cols = [f"k{i}" for i in range(len(keys))]
    if all(a["op"] in PARTIAL_AGGS for a in aggs):
        # Each partition's groups first (sums, counts, min/max), then only those states move.
        states = inputs.map_partitions(partial_states, len(keys), aggs, meta=partial_states(inputs._meta, len(keys), aggs))
        grouped = states.shuffle(key_cols, npartitions=max(states.npartitions, 1)) if keys else states.repartition(npartitions=1)
        return grouped.map_partitions(combine_states, len(keys), aggs, node["schema"], meta=meta)
    if keys:
        # Every group in one partition: a hash shuffle on the keys (dask's own), then pandas per partition.
        grouped = inputs.shuffle(key_cols, npartitions=max(inputs.npartitions, 1))
    else:
        grouped = inputs.repartition(npartitions=1)
    return grouped.map_partitions(aggregate_partition, keys, aggs, node["schema"], meta=meta)


# --- joins ---------------------------------------------------------------------------

NULL_KEY = "__basin_nullkey"


def join_keys(n):
    return [f"__basin_key{j}" for j in range(n)]


def plain_key(s):
    """A key column as plain numpy (pandas merges and hashes those far faster than nullable
    arrays); nulls become a filler value, kept from matching by NULL_KEY."""
    if str(s.dtype) in ("Int64", "boolean"):
        return s.to_numpy(dtype="int64", na_value=0)
    if str(s.dtype) == "Float64":
        return s.to_numpy(dtype="float64", na_value=0.0)
    if s.dtype.kind == "M":
        return s.to_numpy(dtype="datetime64[ns]").view("int64")
    return s.to_numpy(dtype=object, na_value="")


def join_side(df, on, prefix, null_code):
    """The side's columns renamed by position, its keys as plain numpy columns, and a code
    (0, or null_code where a key is null) so that null keys never match."""
    out = df.copy()
    out.columns = [f"{prefix}{i}" for i in range(len(df.columns))]
    for j, i in enumerate(on):
        out[f"__basin_key{j}"] = plain_key(df.iloc[:, i])
    has_null = df.iloc[:, on].isna().any(axis=1).to_numpy() if len(df) else np.zeros(0, dtype=bool)
    out[NULL_KEY] = np.where(has_null, null_code, 0).astype("int64")
    return out


def join_output(df, node, left_names, right_names, schema):
    cols = []
    for o in node["output"]:
        if o["side"] == "left":
            s = df[f"l{left_names.index(o['source'])}"]
        elif o["side"] == "right":
            s = df[f"r{right_names.index(o['source'])}"]
        else:
            li = left_names.index(node["leftOn"][o["source"]])
            ri = right_names.index(node["rightOn"][o["source"]])
            s = df[f"l{li}"].mask(df[f"l{li}"].isna(), df[f"r{ri}"])
        cols.append(s.reset_index(drop=True))
    return conform_frame(pd.concat(cols, axis=1) if cols else pd.DataFrame(index=range(len(df))), schema)


def join(left, right, node, meta):
    left_names = [f["name"] for f in node["left"]["schema"]]
    right_names = [f["name"] for f in node["right"]["schema"]]
    lon = [left_names.index(n) for n in node["leftOn"]]
    ron = [right_names.index(n) for n in node["rightOn"]]
    for li, ri in zip(lon, ron):  # int64 meets float64: compare as floats
        lt, rt = node["left"]["schema"][li]["type"], node["right"]["schema"][ri]["type"]
        if lt != rt:
            left = left.assign(**{left_names[li]: left[left_names[li]].astype("Float64")})
            right = right.assign(**{right_names[ri]: right[right_names[ri]].astype("Float64")})
    l = left.map_partitions(join_side, lon, "l", 1, meta=join_side(left._meta, lon, "l", 1))
    r = right.map_partitions(join_side, ron, "r", 2, meta=join_side(right._meta, ron, "r", 2))
    keys = join_keys(len(lon))
    args = (node, keys, left_names, right_names)
    # Partition pairs joined by pandas, as the plan's strategy says (engine/plan/passes/join_strategy.ts):
    # the whole right side next to every left partition, or both sides hash-partitioned by key.
    if node.get("strategy") == "broadcast":
        whole = task(concat_parts)(r.to_delayed(optimize_graph=False), r._meta)
        parts = [task(join_partition)(p, whole, *args) for p in l.to_delayed(optimize_graph=False)]
    else:
        n = max(l.npartitions, r.npartitions)
        ls, rs = l.shuffle(keys, npartitions=n), r.shuffle(keys, npartitions=n)
        parts = [task(join_partition)(a, b, *args) for a, b in zip(ls.to_delayed(optimize_graph=False), rs.to_delayed(optimize_graph=False))]
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def concat_parts(parts, meta):
    return pd.concat(parts, ignore_index=True) if parts else meta


def join_partition(l, r, node, keys, left_names, right_names):
    """One partition of the join: left rows in their order (pandas' merge keeps it), with their matches."""
    how = node["how"]
    nulls = bool(len(l)) and bool(l[NULL_KEY].any()) or bool(len(r)) and bool(r[NULL_KEY].any())
    on = keys + [NULL_KEY] if nulls else keys
    if how in ("semi", "anti"):
        found = l[on].merge(r[on].drop_duplicates(), how="left", on=on, indicator=True)["_merge"].to_numpy() == "both"
        m = l[found == (how == "semi")]
    else:
        m = l.merge(r, how=how, on=on)
    return join_output(m, node, left_names, right_names, node["schema"])
