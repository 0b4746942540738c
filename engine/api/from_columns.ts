import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import { fitsInt64, isDType, type DType } from "../common/types.js";
import { DataFrame } from "./dataframe.js";
import { callerLocation } from "./source_location.js";
import { own } from "../common/own.js";

/** A value accepted by fromColumns. */
export type InputValue = number | bigint | string | boolean | Date | null | undefined;

export interface FromColumnsOptions {
  /** Number of partitions (rows split evenly), or the size of each partition. */
  partitions?: number | number[];
  /** Types that override inference, by column. */
  types?: Record<string, DType>;
}

type Cell = number | string | boolean | null;

function inferType(name: string, values: InputValue[], loc: string | undefined): DType {
  const kinds = new Set<string>();
  let fractional = false;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (v instanceof Date) kinds.add("timestamp");
    else if (typeof v === "bigint") kinds.add("int64");
    else if (typeof v === "number") {
      kinds.add("number");
      // A whole number int64 cannot hold (1e19) makes the column float64, as DuckDB types such a literal.
      if (!fitsInt64(v)) fractional = true;
    } else kinds.add(typeof v);
  }
  if (kinds.has("int64") && kinds.has("number") && !fractional) kinds.delete("number");
  if (kinds.size > 1)
    throw new BasinError(
      "BASIN_PLAN",
      `column "${name}" mixes ${[...kinds].join(" and ")} values; give it one type`,
      loc,
    );
  const k = [...kinds][0] ?? "string";
  if (k === "number") return fractional ? "float64" : "int64";
  if (k === "boolean") return "bool";
  if (k === "string" || k === "int64" || k === "timestamp") return k;
  throw new BasinError(
    "BASIN_PLAN",
    `column "${name}" holds ${k} values; use numbers, strings, booleans, Dates or null`,
    loc,
  );
}

/** A Date's time in ms; an Invalid Date is the user's mistake, said so. */
function validTime(v: Date, name: string, loc: string | undefined): number {
  const ms = v.getTime();
  if (Number.isNaN(ms))
    throw new BasinError("BASIN_PLAN", `column "${name}" holds an Invalid Date; give valid Dates or null`, loc);
  return ms;
}

/** Converts a value to its JSON-safe plan form: dates as epoch days / microseconds. */
function toCell(v: InputValue, type: DType, name: string, loc: string | undefined): Cell {
  if (v === null || v === undefined) return null;
  const bad = (): never => {
    throw new BasinError("BASIN_PLAN", `column "${name}" is ${type} but holds ${JSON.stringify(String(v))}`, loc);
  };
  switch (type) {
    case "int64":
      if (typeof v === "bigint") {
        if (v < -(2n ** 63n) || v >= 2n ** 63n)
          throw new BasinError(
            "BASIN_PLAN",
            `column "${name}": ${v} does not fit in int64; make the column float64`,
            loc,
          );
        // Past 2^53 a number would round: the exact digits travel as text.
        return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
      }
      return typeof v === "number" && fitsInt64(v) ? v : bad();
    case "float64":
      return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : bad();
    case "bool":
      return typeof v === "boolean" ? v : bad();
    case "string":
      return typeof v === "string" ? v : bad();
    case "timestamp": {
      if (!(v instanceof Date)) return bad();
      const us = BigInt(validTime(v, name, loc)) * 1000n;
      // Past 2^53 µs (about 2255 on) a product of doubles would round: the exact digits travel as text.
      return Number.isSafeInteger(Number(us)) ? Number(us) : us.toString();
    }
    case "date":
      return v instanceof Date ? Math.floor(validTime(v, name, loc) / 86_400_000) : bad();
  }
}

export function partitionSizes(rows: number, p: number | number[] | undefined, loc: string | undefined): number[] {
  if (Array.isArray(p)) {
    if (p.some((n) => !Number.isInteger(n) || n < 0) || p.reduce((a, b) => a + b, 0) !== rows)
      throw new BasinError(
        "BASIN_PLAN",
        `partition sizes ${JSON.stringify(p)} must be non-negative integers adding up to ${rows} rows`,
        loc,
      );
    return p;
  }
  const n = p ?? 1;
  if (!Number.isInteger(n) || n < 1)
    throw new BasinError("BASIN_PLAN", `partitions must be a positive integer, got ${n}`, loc);
  return Array.from({ length: n }, (_, i) => Math.floor((rows * (i + 1)) / n) - Math.floor((rows * i) / n));
}

/**
 * A frame from in-memory columns.
 *
 * @example
 * const df = fromColumns({ city: ["Zürich", "東京", null], n: [1, 2, 3] }, { partitions: 2 });
 */
export function fromColumns(data: Record<string, InputValue[]>, options: FromColumnsOptions = {}): DataFrame {
  const loc = callerLocation();
  const entries = Object.entries(data ?? {});
  if (entries.length === 0) throw new BasinError("BASIN_PLAN", "fromColumns() needs at least one column", loc);
  const rows = entries[0][1]?.length ?? 0;
  for (const [name, values] of entries) {
    if (!Array.isArray(values)) throw new BasinError("BASIN_PLAN", `column "${name}" must be an array`, loc);
    if (values.length !== rows)
      throw new BasinError(
        "BASIN_PLAN",
        `column "${name}" has ${values.length} values but "${entries[0][0]}" has ${rows}; columns must be the same length`,
        loc,
      );
  }
  const schema: Field[] = entries.map(([name, values]) => {
    const t = own(options.types, name);
    if (t !== undefined && !isDType(t))
      throw new BasinError("BASIN_PLAN", `type "${String(t)}" for "${name}" is not a Basin type`, loc);
    return { name, type: t ?? inferType(name, values, loc) };
  });
  const cells = entries.map(([name, values], c) => values.map((v) => toCell(v, schema[c].type, name, loc)));
  let at = 0;
  const partitions = partitionSizes(rows, options.partitions, loc).map((n) => {
    const part = Object.fromEntries(schema.map((f, c) => [f.name, cells[c].slice(at, at + n)]));
    at += n;
    return part;
  });
  return new DataFrame({ kind: "values", partitions, schema, loc });
}
