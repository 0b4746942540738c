// Writers on a Dask cluster: Dask does not run Basin's write tasks, so its result
// comes back to this process's store and the local workers encode it (CSV and
// Parquet into one file in order, or a folder of parts); DuckDB reads back the rows
// the local engine computes.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";
import { daskFixture } from "./dask_procs.js";

const fx = daskFixture(2);
let dir: string;
let duck: Duck;
beforeAll(async () => {
  dir = makeTempDir("basin-dask-write-");
  duck = await Duck.open();
});
afterAll(() => {
  duck.close();
  removeDir(dir);
});

const frame = () =>
  fromColumns(
    {
      id: Array.from({ length: 3000 }, (_, i) => i),
      s: Array.from({ length: 3000 }, (_, i) => (i % 9 === 0 ? null : i % 9 === 1 ? 'a "q", b' : `東${i % 13}`)),
      x: Array.from({ length: 3000 }, (_, i) => (i % 11 === 0 ? null : i / 8 - 100)),
    },
    { partitions: [1000, 0, 1500, 500] },
  ).filter(col("id").mod(3).ne(1));

it("writeCsv, writeParquet and a folder of parts from a Dask result hold the local engine's rows", async () => {
  const want = tableRows(await frame().compute({ cluster: fx.local }));
  const csv = join(dir, "d.csv");
  expect((await frame().writeCsv(csv, { cluster: fx.dask })).rows).toBe(want.length);
  expectSameRows(
    await duck.rows(
      `SELECT * FROM read_csv('${csv}', header=true, allow_quoted_nulls=false, columns={'id': 'BIGINT', 's': 'VARCHAR', 'x': 'DOUBLE'})`,
    ),
    want,
    "csv from dask",
  );
  const pq = join(dir, "d.parquet");
  await frame().writeParquet(pq, { cluster: fx.dask });
  expectSameRows(await duck.rows(`SELECT * FROM read_parquet('${pq}')`), want, "parquet from dask");
  const parts = join(dir, "parts/");
  const s = await frame().writeParquet(parts, { cluster: fx.dask });
  expect(readdirSync(parts)).toHaveLength(s.files!);
  expectSameRows(await duck.rows(`SELECT * FROM read_parquet('${parts}*.parquet')`), want, "parts from dask");
});
