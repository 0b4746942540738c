// Type rules of the scalar functions (the generic "fn" expression node): checks the
// argument types, validates and normalizes the literal options (durations become
// microseconds, regexes are compiled once here to fail at plan time), and picks the
// result type. The kernels (native/src/ops/expr_*.cc) trust what this produces.
import type { SourceLocation } from "../common/errors.js";
import {
  DAY_MICROS,
  DIFF_UNITS,
  DURATION_UNITS,
  parseDuration,
  STRPTIME_SPECIFIERS,
  unsupportedSpecifier,
} from "../common/duration.js";
import { exprToString, type ExprNode, type Scalar } from "../common/expr.js";
import { isNumeric, type DType } from "../common/types.js";
import { native } from "../native/addon.js";
import type { NativeExpr, NativeFnOptions } from "../graph/kernel_args.js";
import { coerceLiteral, describe, fail, isNullLit } from "./resolve_base.js";

type FnNode = Extract<ExprNode, { kind: "fn" }>;

const isTemporal = (t: DType): boolean => t === "date" || t === "timestamp";

/** Wraps `e` in a cast unless it already has type `to` (null literals are retyped). */
function castTo(e: NativeExpr, to: DType, at: SourceLocation | undefined): NativeExpr {
  if (isNullLit(e)) return { ...e, type: to };
  const c = coerceLiteral(e, to, at);
  return c.type === to ? c : { kind: "cast", arg: c, type: to };
}

/** Unifies the types of values meeting in one column (when/then branches). */
function commonType(types: DType[]): DType | undefined {
  if (types.length === 0) return undefined;
  if (types.every((t) => t === types[0])) return types[0];
  if (types.every(isNumeric)) return "float64";
  return undefined;
}

function regexError(pattern: string): string | null {
  return native().checkRegex(pattern);
}

/**
 * Resolves a function node whose arguments are already resolved.
 *
 * @example
 * resolveFn(col("s").str.len().node as FnNode, [{ kind: "col", index: 0, type: "string" }], undefined).type // "int64"
 */
export function resolveFn(e: FnNode, args: NativeExpr[], at: SourceLocation | undefined): NativeExpr {
  const o = e.options ?? {};
  const call = `${e.name}()`;
  const out = (type: DType, options: NativeFnOptions = {}, a: NativeExpr[] = args): NativeExpr => ({
    kind: "fn",
    name: e.name,
    args: a,
    options,
    type,
  });

  // Argument i must satisfy `ok` (`what` says what it must be); a null literal takes type `nullAs`.
  const need = (i: number, ok: (t: DType) => boolean, what: string, nullAs: DType): NativeExpr => {
    const a = args[i];
    if (isNullLit(a)) return (args[i] = { ...a, type: nullAs });
    if (!ok(a.type)) fail(`${call} needs ${what}, but ${describe(e.args[i], a.type)}`, at);
    return a;
  };
  const str = (key: string): string => {
    const v = o[key];
    if (typeof v !== "string") fail(`${call} needs a string ${key}, got ${JSON.stringify(v)}`, at);
    return v;
  };
  const int = (key: string, min = -Infinity): number => {
    const v = o[key];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
      fail(
        `${call} needs an integer ${key}${min > -Infinity ? ` of at least ${min}` : ""}, got ${JSON.stringify(v)}`,
        at,
      );
    return v;
  };
  const flag = (key: string, dflt: boolean): boolean => {
    const v = o[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "boolean") fail(`${call} option ${key} must be true or false, got ${JSON.stringify(v)}`, at);
    return v;
  };
  const pattern = (key: string, literal: boolean): string => {
    const p = str(key);
    if (!literal) {
      const why = regexError(p);
      if (why !== null)
        fail(
          `${call}: the regular expression ${JSON.stringify(p)} does not compile: ${why} (pass { literal: true } to match the text as is)`,
          at,
        );
    }
    return p;
  };
  const duration = (key: string): number => {
    const text = str(key);
    const micros = parseDuration(text);
    if (micros === undefined)
      fail(
        `${call}: "${text}" is not a duration; write <integer><unit> with unit one of ${DURATION_UNITS.join(", ")}, as in "15m" or "-2h"`,
        at,
      );
    return micros;
  };
  const string = () => need(0, (t) => t === "string", "a string column", "string");
  const temporal = () => need(0, isTemporal, "a date or timestamp column", "timestamp");
  const numeric = (i = 0) => need(i, isNumeric, "a number", "float64");

  switch (e.name) {
    case "str.len":
      string();
      return out("int64");
    case "str.lower":
    case "str.upper":
    case "str.strip":
      string();
      return out("string");
    case "str.contains": {
      string();
      const literal = flag("literal", false);
      return out("bool", { pattern: pattern("pattern", literal), literal });
    }
    case "str.startsWith":
    case "str.endsWith":
      string();
      return out("bool", { pattern: str("pattern") });
    case "str.replace": {
      string();
      const literal = flag("literal", false);
      return out("string", {
        pattern: pattern("pattern", literal),
        with: str("with"),
        literal,
        all: flag("all", false),
      });
    }
    case "str.slice": {
      string();
      const length = o.length === undefined || o.length === null ? null : int("length", 0);
      return out("string", { start: int("start"), length });
    }
    case "str.split":
      string();
      return out("string", { sep: str("sep"), index: int("index") });
    case "str.toDate":
    case "str.toTimestamp": {
      string();
      const format = str("format");
      const bad = unsupportedSpecifier(format);
      if (bad)
        fail(
          `${call}: format ${JSON.stringify(format)} uses ${bad}; the supported specifiers are ${[...STRPTIME_SPECIFIERS].map((c) => `%${c}`).join(" ")}`,
          at,
        );
      return out(e.name === "str.toDate" ? "date" : "timestamp", {
        format,
        strict: flag("strict", true),
        label: exprToString(e.args[0]),
      });
    }
    case "concatStr":
      if (args.length === 0) fail("concatStr() needs at least one expression", at);
      return out(
        "string",
        {},
        args.map((a) => castTo(a, "string", at)),
      );

    case "dt.year":
    case "dt.month":
    case "dt.day":
    case "dt.hour":
    case "dt.minute":
    case "dt.second":
    case "dt.weekday":
      temporal();
      return out("int64");
    case "dt.floor": {
      const t = temporal().type;
      const every = duration("every");
      if (every <= 0) fail(`${call} needs a positive duration, got "${String(o.every)}"`, at);
      if (t === "date" && every % DAY_MICROS !== 0)
        fail(
          `${call} of a date needs whole days ("1d", "7d"), got "${String(o.every)}"; cast the date to timestamp first`,
          at,
        );
      return out(t, { micros: every });
    }
    case "dt.offsetBy": {
      const t = temporal().type;
      const by = duration("by");
      // A date moved by whole days stays a date; by hours it becomes a timestamp (as in DuckDB).
      const type: DType = t === "date" && by % DAY_MICROS === 0 ? "date" : "timestamp";
      return out(type, { micros: by });
    }
    case "dt.diff": {
      temporal();
      const unit = str("unit");
      const micros = DIFF_UNITS[unit];
      if (micros === undefined)
        fail(`${call}: unknown unit "${unit}"; use one of ${Object.keys(DIFF_UNITS).join(", ")}`, at);
      const other = coerceLiteral(args[1], args[0].type, at);
      if (!isTemporal(other.type))
        fail(`${call} needs a date or timestamp to subtract, but ${describe(e.args[1], other.type)}`, at);
      return out("int64", { micros }, [args[0], other]);
    }

    case "when": {
      const n = (args.length - 1) / 2;
      for (let i = 0; i < n; i++) need(2 * i, (t) => t === "bool", "a bool condition", "bool");
      const values = [...Array.from({ length: n }, (_, i) => 2 * i + 1), args.length - 1];
      const typed = values.filter(
        (i) =>
          !isNullLit(args[i]) &&
          !(args[i].kind === "lit" && args[i].type === "string" && values.some((j) => isTemporal(args[j].type))),
      );
      const type = commonType(typed.map((i) => args[i].type)) ?? (typed.length === 0 ? "int64" : undefined);
      if (type === undefined) {
        const shown = typed.map((i) => describe(e.args[i], args[i].type)).join(", ");
        fail(
          `when().then()/otherwise() values must have one type (numbers mix), but ${shown}; cast them to one type`,
          at,
        );
      }
      const coerced = args.map((a, i) => (values.includes(i) ? castTo(a, type, at) : a));
      return out(type, {}, coerced);
    }
    case "isIn": {
      const t = args[0].type;
      const list = o.values;
      if (!Array.isArray(list)) fail(`${call} needs a list of values`, at);
      const hasNull = list.some((v) => v === null);
      const kept: Scalar[] = [];
      for (const v of list as Scalar[]) {
        if (v === null) continue;
        const lit = coerceLiteral(
          {
            kind: "lit",
            value: v,
            type:
              typeof v === "string"
                ? "string"
                : typeof v === "boolean"
                  ? "bool"
                  : Number.isInteger(v)
                    ? "int64"
                    : "float64",
          },
          t,
          at,
        );
        const ok = lit.type === t || (isNumeric(t) && isNumeric(lit.type));
        if (!ok)
          fail(
            `${call} values must be ${t} like ${exprToString(e.args[0])}, but ${JSON.stringify(v)} is ${lit.type}`,
            at,
          );
        const value = lit.kind === "lit" ? lit.value : v;
        if (t === "int64" && !Number.isInteger(value)) continue; // can never equal an integer
        kept.push(typeof value === "boolean" ? Number(value) : value);
      }
      return out("bool", { values: kept, hasNull });
    }
    case "abs":
      return out(numeric().type);
    case "round": {
      const decimals = o.decimals === undefined ? 0 : int("decimals");
      return out(numeric().type, { decimals });
    }
    case "sqrt":
    case "exp":
      numeric();
      return out("float64");
    case "log": {
      numeric();
      const base = o.base ?? null;
      if (base !== null && (typeof base !== "number" || !(base > 0) || base === 1))
        fail(`log() needs a positive base other than 1, got ${JSON.stringify(base)}`, at);
      return out("float64", { base });
    }
    case "pow":
      numeric(0);
      numeric(1);
      return out("float64");
  }
}
