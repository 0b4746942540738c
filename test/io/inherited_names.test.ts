// Column and key names that every JS object inherits ("constructor", "toString",
// "valueOf", "__proto__") are names like any other: read from CSV and NDJSON, renamed,
// typed, aggregated, persisted and returned as rows. They failed with BASIN_INTERNAL
// (a function sent to a worker), gave nonsense types, or dropped "__proto__" from rows.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bag, col, fromColumns, LocalCluster, readCsv, readJson } from "../../engine/api/index.js";
import type { DType } from "../../engine/common/types.js";

const cluster = new LocalCluster({ workers: 2 });
afterAll(() => cluster.close());
const dir = mkdtempSync(join(tmpdir(), "basin-names-"));
const NAMES = ["constructor", "toString", "__proto__", "valueOf"];
/** Two rows: 1 2 3 4 and 5 6 7 8, by NAMES. */
const rowsOf = (...names: string[]) =>
  [0, 4].map((base) => Object.fromEntries(names.map((n) => [n, base + NAMES.indexOf(n) + 1])));

writeFileSync(join(dir, "p.csv"), `${NAMES.join(",")}\n1,2,3,4\n5,6,7,8\n`);
writeFileSync(
  join(dir, "p.ndjson"),
  '{"constructor":1,"toString":2,"__proto__":3,"valueOf":4}\n{"constructor":5,"toString":6,"__proto__":7,"valueOf":8}\n',
);

describe("inherited names as column names", () => {
  it.each(["p.csv", "p.ndjson"])("are read from %s with every column, typed int64, and returned in rows", async (f) => {
    const df = f.endsWith(".csv") ? readCsv(join(dir, f)) : readJson(join(dir, f));
    expect(df.schema).toEqual(NAMES.map((name) => ({ name, type: "int64" })));
    const rows = (await df.compute({ cluster })).toRows();
    expect(rows).toEqual(rowsOf(...NAMES));
    expect(Object.keys(rows[0])).toEqual(NAMES);
  });

  it("are renamed from and to, typed by dtypes, and aggregated", async () => {
    const csv = readCsv(join(dir, "p.csv"), { dtypes: JSON.parse('{"__proto__":"float64"}') });
    expect(csv.schema.find((f) => f.name === "__proto__")?.type).toBe("float64");
    const renamed = await csv.rename({ constructor: "c" }).select("c", "valueOf").compute({ cluster });
    expect(renamed.toRows()).toEqual([
      { c: 1, valueOf: 4 },
      { c: 5, valueOf: 8 },
    ]);
    const to = await fromColumns({ a: [1] })
      .rename({ a: "toString" })
      .compute({ cluster });
    expect(to.toRows()).toEqual([{ toString: 1 }]);
    const sums = await csv.agg(col("constructor").sum(), col("__proto__").max()).compute({ cluster });
    expect(sums.toRows()).toEqual([JSON.parse('{"constructor":6,"__proto__":7}')]);
    const typed = fromColumns({ constructor: [1, 2], a: [3, 4] }, { types: { a: "float64" } });
    expect(typed.schema).toEqual([
      { name: "constructor", type: "int64" },
      { name: "a", type: "float64" },
    ]);
  });

  it("key a persisted frame's ranges and a bag's items like other names", async () => {
    const kept = await readJson(join(dir, "p.ndjson")).persist({ cluster });
    try {
      const t = await kept.filter(col("constructor").gt(2)).compute({ cluster });
      expect(t.toRows()).toEqual(rowsOf(...NAMES).slice(1));
    } finally {
      await kept.unpersist();
    }
    // An item without the key has null there, not Object's constructor function.
    const items = bag.fromItems<Record<string, unknown>>([{ toString: "a" }, { valueOf: 2 }], { partitions: 1 });
    const types = Object.fromEntries([
      ["toString", "string"],
      ["valueOf", "int64"],
    ]) as Record<string, DType>;
    const t = await items.toDataFrame(types).compute({ cluster });
    expect(t.toRows()).toEqual([
      { toString: "a", valueOf: null },
      { toString: null, valueOf: 2 },
    ]);
  });
});
