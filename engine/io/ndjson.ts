// Newline-delimited JSON: one flat object per line. Types are inferred from a
// sample of lines; nested objects and arrays are an error naming the file, line
// and key (Basin has no nested types; flatten them before reading). Files are
// split into byte ranges that end on newlines, like CSV blocks.
import { closeSync, openSync, statSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import type { DType, Field } from "../common/types.js";
import { native, type Handle, type JsColumn } from "../native/addon.js";
import { readAt } from "./read_at.js";
import { floorMillis } from "../common/civil_text.js";
import { own } from "../common/own.js";

const NEWLINE = 10;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `bytes` as text, or BASIN_PARSE naming the line (`line` is the first one's number)
 * of the first byte that is not UTF-8: a replacement character would change the data.
 */
function decodeUtf8(bytes: Uint8Array, path: string, line: () => number, stream = false): string {
  try {
    return utf8.decode(bytes, { stream });
  } catch {
    // Found again line by line, only to name it.
    const strict = new TextDecoder("utf-8", { fatal: true });
    let i = 0;
    for (let at = 0; at < bytes.length; i++) {
      const nl = bytes.indexOf(NEWLINE, at);
      const end = nl < 0 ? bytes.length : nl;
      try {
        strict.decode(bytes.subarray(at, end), { stream: nl < 0 && stream });
      } catch {
        break;
      }
      at = end + 1;
    }
    throw new BasinError(
      "BASIN_PARSE",
      `${path}:${line() + i}: the line is not valid UTF-8; save the file as UTF-8 (or convert it, e.g. with iconv)`,
    );
  }
}

export function withFile<T>(path: string, f: (fd: number, size: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new BasinError("BASIN_IO", `cannot open ${path}: ${(e as Error).message}`);
  }
  try {
    return f(fd, statSync(path).size);
  } finally {
    closeSync(fd);
  }
}

/**
 * Byte ranges of about `blocksize` bytes, each ending just after a newline (or at
 * the end of the file).
 *
 * @example
 * jsonBlocks("events.ndjson", 64 << 20) // [{ start: 0, end: 67108901 }, ...]
 */
export function jsonBlocks(path: string, blocksize: number): { start: number; end: number }[] {
  return withFile(path, (fd, size) => {
    const blocks: { start: number; end: number }[] = [];
    let start = 0;
    while (start < size) {
      let end = Math.min(size, start + blocksize);
      // Move the cut forward to just after the next newline.
      for (let pos = end; end < size; pos += 1 << 16) {
        const chunk = readAt(fd, pos, 1 << 16);
        const nl = chunk.indexOf(NEWLINE);
        if (nl >= 0) {
          end = pos + nl + 1;
          break;
        }
        if (chunk.length === 0) {
          end = size;
          break;
        }
      }
      blocks.push({ start, end });
      start = end;
    }
    return blocks;
  });
}

/** The 1-based line number of byte `pos` (counted only when an error needs it). */
export function lineAt(fd: number, pos: number): number {
  let line = 1;
  for (let at = 0; at < pos; at += 1 << 20) {
    const chunk = readAt(fd, at, Math.min(1 << 20, pos - at));
    for (let i = chunk.indexOf(NEWLINE); i >= 0; i = chunk.indexOf(NEWLINE, i + 1)) line++;
  }
  return line;
}

type Kind = "int" | "float" | "bool" | "string" | "nested";

function kindOf(v: unknown): Kind | null {
  if (v === null) return null;
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  return "nested";
}

const KIND_NAMES: Record<Kind, string> = {
  int: "integers",
  float: "numbers",
  bool: "booleans",
  string: "strings",
  nested: "nested values",
};

/** Parses one line; `where` names it in errors. */
function parseLine(text: string, where: () => string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new BasinError(
      "BASIN_PARSE",
      `${where()}: not valid JSON (${(e as Error).message}); every line must be one JSON object`,
    );
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new BasinError(
      "BASIN_PARSE",
      `${where()}: expected a JSON object like {"a": 1}, found ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`,
    );
  const obj = v as Record<string, unknown>;
  // JSON.parse keeps a repeated key's last value: a line that repeats one is damaged
  // (or ambiguous), so it is an error rather than a silent choice.
  if (
    stringsBeforeColon(text) !== Object.keys(obj).length &&
    !Object.values(obj).some((x) => typeof x === "object" && x)
  )
    throw new BasinError("BASIN_PARSE", `${where()}: a key appears more than once in the line; keep one of them`);
  return obj;
}

/** The strings followed by ':' in a JSON text: the keys of a flat object, repeats included. */
function stringsBeforeColon(text: string): number {
  let keys = 0;
  for (let at = text.indexOf('"'); at >= 0;) {
    let end = text.indexOf('"', at + 1);
    // A quote after an odd run of backslashes is escaped.
    for (;;) {
      let slashes = 0;
      while (text[end - 1 - slashes] === "\\") slashes++;
      if (end < 0 || slashes % 2 === 0) break;
      end = text.indexOf('"', end + 1);
    }
    if (end < 0) break;
    let next = end + 1;
    while (text[next] === " " || text[next] === "\t") next++;
    if (text[next] === ":") keys++;
    at = text.indexOf('"', next);
  }
  return keys;
}

function nestedError(where: string, key: string): BasinError {
  return new BasinError(
    "BASIN_PARSE",
    `${where}: key "${key}" holds a nested object or array, which Basin cannot read; flatten it into plain keys (numbers, strings, booleans) first`,
  );
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const TS_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Microseconds since the epoch of an ISO date or date-time (UTC unless it says otherwise), or null. */
export function parseTimestamp(s: string): bigint | null {
  const m = TS_RE.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = [+m[1], +m[2], +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)];
  // Out-of-range parts are not rolled over ("1990-18-26" is not a date in 1991).
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(2000, mo, 0)).getUTCDate() || h > 23 || mi > 59 || sec > 59)
    return null;
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return null;
  // setUTCFullYear, not Date.UTC: that reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, sec, 0);
  const ms = date.getTime();
  if (Number.isNaN(ms)) return null;
  let us = BigInt(ms) * 1000n + BigInt(((m[7] ?? "") + "000000").slice(0, 6));
  const tz = m[8];
  if (tz && tz !== "Z") {
    const sign = tz[0] === "-" ? -1n : 1n;
    const digits = tz.slice(1).replace(":", "");
    us -= sign * BigInt(+digits.slice(0, 2) * 60 + +digits.slice(2, 4)) * 60_000_000n;
  }
  return us;
}

export interface JsonInferOptions {
  sampleRows: number;
  parseDates: string[];
  dtypes: Record<string, DType>;
}

/**
 * Column names (in order of first appearance) and types of a newline-delimited JSON
 * file, from its first `sampleRows` lines.
 *
 * @example
 * inferJson("events.ndjson", { sampleRows: 1000, parseDates: ["at"], dtypes: {} })
 */
export function inferJson(path: string, opts: JsonInferOptions): Field[] {
  return withFile(path, (fd, size) => {
    const kinds = new Map<string, { kinds: Set<Kind>; dates: boolean; firstLine: Map<Kind, number> }>();
    let pos = 0,
      line = 0,
      seen = 0,
      rest = "";
    while (seen < opts.sampleRows && pos < size) {
      const chunk = readAt(fd, pos, 1 << 20);
      pos += chunk.length;
      const lines = (rest + decodeUtf8(chunk, path, () => line + 1, pos < size)).split("\n");
      rest = pos < size ? (lines.pop() ?? "") : "";
      for (const raw of lines) {
        line++;
        const text = raw.trim();
        if (text === "") continue;
        const obj = parseLine(text, () => `${path}:${line}`);
        for (const [key, v] of Object.entries(obj)) {
          const k = kindOf(v);
          if (k === "nested" && !own(opts.dtypes, key)) throw nestedError(`${path}:${line}`, key);
          let e = kinds.get(key);
          if (!e) kinds.set(key, (e = { kinds: new Set(), dates: true, firstLine: new Map() }));
          if (k === null) continue;
          e.kinds.add(k);
          if (!e.firstLine.has(k)) e.firstLine.set(k, line);
          if (k !== "string" || !DATE_RE.test(v as string)) e.dates = false;
        }
        if (++seen >= opts.sampleRows) break;
      }
    }
    const fields: Field[] = [];
    for (const [name, e] of kinds) {
      let type: DType;
      const ks = e.kinds;
      if (ks.size === 0) type = "string";
      else if (ks.size === 1)
        type = ({ int: "int64", float: "float64", bool: "bool", string: "string", nested: "string" } as const)[
          [...ks][0]
        ];
      else if (ks.size === 2 && ks.has("int") && ks.has("float")) type = "float64";
      else {
        const which = [...ks].map((k) => `${KIND_NAMES[k]} (line ${e.firstLine.get(k)})`).join(" and ");
        type =
          own(opts.dtypes, name) ??
          fail(
            `${path}: key "${name}" holds ${which}; give it one type with dtypes: { ${JSON.stringify(name)}: "string" }`,
          );
      }
      if (opts.parseDates.includes(name)) {
        if (type !== "string")
          fail(
            `parseDates names key "${name}", but it holds ${[...ks].map((k) => KIND_NAMES[k]).join(" and ")}, not date strings`,
          );
        type = e.dates && ks.size > 0 ? "date" : "timestamp";
      }
      fields.push({ name, type: own(opts.dtypes, name) ?? type });
    }
    // A key dtypes names and the sample lacks is read with that type, null where a line
    // lacks it: it may first appear later, or only in other files.
    for (const [name, type] of Object.entries(opts.dtypes)) if (!kinds.has(name)) fields.push({ name, type });
    return fields;
  });
}

function fail(message: string): never {
  throw new BasinError("BASIN_PARSE", message);
}

/** Converts one JSON value to a column's type, or returns undefined when it does not fit. */
export function convert(v: unknown, t: DType): number | bigint | boolean | string | undefined {
  switch (t) {
    case "int64":
      return typeof v === "number" && Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63 ? BigInt(v) : undefined;
    case "float64":
      return typeof v === "number" ? v : undefined;
    case "bool":
      return typeof v === "boolean" ? v : undefined;
    case "string":
      return typeof v === "string"
        ? v
        : typeof v === "number" || typeof v === "boolean" || typeof v === "object"
          ? JSON.stringify(v)
          : undefined;
    case "date": {
      if (typeof v !== "string") return undefined;
      const us = parseTimestamp(v);
      return us === null ? undefined : Math.floor(Number(floorMillis(us)) / 86_400_000);
    }
    case "timestamp": {
      if (typeof v !== "string") return undefined;
      return parseTimestamp(v) ?? undefined;
    }
  }
}

/**
 * Parses the lines in bytes [start, end) of a file into a table with `columns`.
 *
 * @example
 * scanJson("events.ndjson", 0, 4096, [{ name: "id", type: "int64" }])
 */
export function scanJson(path: string, start: number, end: number, columns: Field[]): Handle {
  return withFile(path, (fd) => {
    const lines = decodeUtf8(readAt(fd, start, end - start), path, () => lineAt(fd, start)).split("\n");
    // Line numbers are counted only for an error message.
    const where = (i: number) => `${path}:${lineAt(fd, start) + i}`;
    const byName = new Map(columns.map((c, i) => [c.name, i]));
    const values: unknown[][] = columns.map(() => []);
    let rows = 0;
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i].trim();
      if (text === "") continue;
      const obj = parseLine(text, () => where(i));
      for (const c of values) c.push(null);
      for (const [key, v] of Object.entries(obj)) {
        const c = byName.get(key);
        if (c === undefined) continue; // a column not read (projection), or a key the sample did not have
        if (v === null) continue;
        const t = columns[c].type;
        if (typeof v === "object" && t !== "string") throw nestedError(where(i), key);
        // Beyond 2^53 JSON.parse has rounded the number: its digits give the exact value.
        // A number or nested value read as a string is its text as written (exact digits).
        const x =
          t === "int64" && typeof v === "number" && !Number.isSafeInteger(v)
            ? exactInt(rawValue(text, key))
            : t === "string" && typeof v !== "string"
              ? minified(rawValue(text, key))
              : convert(v, t);
        if (x === undefined && t === "int64" && typeof v === "number")
          throw new BasinError(
            "BASIN_PARSE",
            `${where(i)}: key "${key}" is ${rawValue(text, key)}, which int64 cannot hold exactly; fix the line, or read the key as a float with dtypes: { ${JSON.stringify(key)}: "float64" }`,
          );
        if (x === undefined)
          throw new BasinError(
            "BASIN_PARSE",
            `${where(i)}: key "${key}" is ${JSON.stringify(v)}, not ${t} like the lines before; fix the line, or read the key as a string with dtypes: { ${JSON.stringify(key)}: "string" }`,
          );
        values[c][rows] = x;
      }
      rows++;
    }
    return columnsTable(columns, values, rows);
  });
}

/** The literal text of top-level `key`'s value in a line JSON.parse accepted. */
function rawValue(text: string, key: string): string {
  let i = text.indexOf("{") + 1;
  const space = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const string = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    return text.slice(start, ++i);
  };
  for (;;) {
    space();
    const k = JSON.parse(string()) as string;
    space();
    i++; // the colon
    space();
    const start = i;
    for (let depth = 0; i < text.length;) {
      const c = text[i];
      if (c === '"') {
        string();
        continue;
      }
      if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]" || c === ",") {
        if (depth === 0) break;
        if (c !== ",") depth--;
      }
      i++;
    }
    if (k === key || i >= text.length) return text.slice(start, i).trim();
    i++; // the comma
  }
}

/** JSON text without the white space between its tokens (DuckDB's text of a nested value). */
function minified(json: string): string {
  let out = "";
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (c === '"') {
      const start = i++;
      while (i < json.length && json[i] !== '"') i += json[i] === "\\" ? 2 : 1;
      out += json.slice(start, i + 1);
    } else if (!" \t\r\n".includes(c)) out += c;
  }
  return out;
}

/** A JSON number literal's exact integer value when it is one int64 holds, else undefined. */
function exactInt(raw: string): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(raw);
  if (!m) return undefined;
  const digits = m[2] + (m[3] ?? "");
  const exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  let v: bigint;
  if (exp >= 0) {
    if (exp > 40) return undefined;
    v = BigInt(digits) * 10n ** BigInt(exp);
  } else {
    const cut = digits.length + exp;
    if (cut < 0 || !/^0*$/.test(digits.slice(Math.max(0, cut)))) return undefined;
    v = BigInt(digits.slice(0, Math.max(0, cut)) || "0");
  }
  if (m[1]) v = -v;
  return v >= -(2n ** 63n) && v < 2n ** 63n ? v : undefined;
}

/**
 * A table in the store from values `convert` made, column by column (null: no value).
 *
 * @example
 * columnsTable([{ name: "n", type: "int64" }], [[1n, null]], 2)
 */
export function columnsTable(columns: Field[], values: unknown[][], rows: number): Handle {
  const cols: JsColumn[] = columns.map((f, c) => {
    const v = values[c];
    const validity = v.some((x) => x === null) ? Uint8Array.from(v, (x) => (x === null ? 0 : 1)) : null;
    switch (f.type) {
      case "int64":
      case "timestamp":
        return { type: f.type, values: BigInt64Array.from(v, (x) => (x === null ? 0n : (x as bigint))), validity };
      case "float64":
        return { type: f.type, values: Float64Array.from(v, (x) => (x === null ? 0 : (x as number))), validity };
      case "bool":
        return { type: f.type, values: Uint8Array.from(v, (x) => (x ? 1 : 0)), validity };
      case "date":
        return { type: f.type, values: Int32Array.from(v, (x) => (x === null ? 0 : (x as number))), validity };
      case "string":
        return { type: f.type, values: v as (string | null)[], validity };
    }
  });
  return native().tableFromJs({ rows, names: columns.map((f) => f.name), columns: cols });
}
