// Where bags come from: in-memory items, lines of text files, newline-delimited JSON.
import { BasinError } from "../../common/errors.js";
import type { JsonValue } from "../../common/bag.js";
import { expandPaths } from "../file_list.js";
import { partitionSizes } from "../from_columns.js";
import { parseBlocksize } from "../read_csv.js";
import { callerLocation } from "../source_location.js";
import { notJson } from "../user_fn.js";
import { Bag } from "./bag.js";

export interface FromItemsOptions {
  /** Number of partitions (items split evenly), or the size of each partition (default 1). */
  partitions?: number | number[];
}

export interface ReadTextOptions {
  /** Bytes per partition, as a number or "64MB" (default 64 MiB); partitions end on line breaks. */
  blocksize?: number | string;
}

/**
 * A bag of in-memory items (JSON values).
 *
 * @example
 * const b = bag.fromItems([{ name: "Zoë", age: 31 }, { name: "東京", age: 7 }], { partitions: 2 });
 */
export function fromItems<T>(items: T[], options: FromItemsOptions = {}): Bag<T> {
  const loc = callerLocation();
  if (!Array.isArray(items)) throw new BasinError("BASIN_PLAN", "fromItems() needs an array of items", loc);
  const why = notJson(items, "items");
  if (why)
    throw new BasinError(
      "BASIN_PLAN",
      `fromItems: ${why}; bag items must be JSON values (objects, arrays, strings, finite numbers, booleans, null)`,
      loc,
    );
  let at = 0;
  const partitions = partitionSizes(items.length, options.partitions, loc).map((n) => {
    const part = items.slice(at, at + n) as JsonValue[];
    at += n;
    return part;
  });
  return new Bag<T>({ kind: "items", partitions, loc });
}

/**
 * A bag of the lines of text files (without their line breaks), in file order.
 *
 * @example
 * const lines = bag.readText("logs/*.log");
 */
export function readText(paths: string | string[], options: ReadTextOptions = {}): Bag<string> {
  const loc = callerLocation();
  const files = expandPaths(paths, "bag.readText", "txt", loc);
  return new Bag<string>({
    kind: "files",
    files,
    format: "text",
    blocksize: parseBlocksize(options.blocksize ?? "64MiB", loc),
    loc,
  });
}

/**
 * A bag of the JSON values of newline-delimited JSON files, one per non-blank line
 * (any JSON value: nested objects and arrays too). A line that is not JSON fails the
 * run with the file and line.
 *
 * @example
 * const events = bag.readJson("events/*.ndjson").filter((e) => e.kind === "click");
 */
export function readJson<T = unknown>(paths: string | string[], options: ReadTextOptions = {}): Bag<T> {
  const loc = callerLocation();
  const files = expandPaths(paths, "bag.readJson", "ndjson", loc);
  return new Bag<T>({
    kind: "files",
    files,
    format: "json",
    blocksize: parseBlocksize(options.blocksize ?? "64MiB", loc),
    loc,
  });
}
