// Generated test data: nulls, unicode, skew; written as CSV files for both Basin and DuckDB.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "../../engine/common/random.js";
import { csvField } from "../../engine/common/csv_field.js";

export const WORDS = ["Zürich", "東京", "naïve", "🙂 smile", "a,b", 'say "hi"', "line\nbreak", "plain", "Ωmega"];

export interface Trips {
  rid: number[];
  k: (number | null)[];
  city: (string | null)[];
  v: (number | null)[];
  f: (number | null)[];
  flag: (boolean | null)[];
  day: (string | null)[];
}

/** `rows` rows with nulls in every column, a skewed key and unicode strings. */
export function makeTrips(rows: number, seed = 7): Trips {
  const r = seededRandom(seed);
  const t: Trips = { rid: [], k: [], city: [], v: [], f: [], flag: [], day: [] };
  for (let i = 0; i < rows; i++) {
    t.rid.push(i);
    t.k.push(r() < 0.05 ? null : r() < 0.5 ? 1 : Math.floor(r() * 20));
    t.city.push(r() < 0.07 ? null : WORDS[Math.floor(r() * WORDS.length)]);
    t.v.push(r() < 0.1 ? null : Math.floor(r() * 2000) - 1000);
    t.f.push(r() < 0.1 ? null : Math.round((r() * 200 - 50) * 1e4) / 1e4);
    t.flag.push(r() < 0.1 ? null : r() < 0.5);
    t.day.push(r() < 0.1 ? null : new Date(Date.UTC(2024, 0, 1 + Math.floor(r() * 60))).toISOString().slice(0, 10));
  }
  return t;
}

function cell(v: unknown): string {
  if (v === null) return "";
  const s = String(v);
  return s === "" ? '""' : csvField(s);
}

/** Writes the data as `files` CSV files; returns their directory. */
export function writeTripsCsv(t: Trips, files: number): string {
  const dir = mkdtempSync(join(tmpdir(), "basin-test-"));
  const names = Object.keys(t) as (keyof Trips)[];
  const n = t.rid.length;
  for (let f = 0; f < files; f++) {
    const lo = Math.floor((n * f) / files),
      hi = Math.floor((n * (f + 1)) / files);
    const lines = [names.join(",")];
    for (let i = lo; i < hi; i++) lines.push(names.map((c) => cell(t[c][i])).join(","));
    writeFileSync(join(dir, `part-${f}.csv`), lines.join("\n") + "\n");
  }
  return dir;
}

export const TRIPS_SQL_COLUMNS =
  "{'rid': 'BIGINT', 'k': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE', 'flag': 'BOOLEAN', 'day': 'DATE'}";
