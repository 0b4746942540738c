// Named results and export at the RPC level, over `basin serve`'s WebSocket on a
// 1-worker and a 4-worker cluster: show(frame, name) adds results besides the
// default export (matching DuckDB, with nulls, unicode, skewed keys and empty and
// one-row partitions), exportResult writes a result or a sorted view as CSV or
// Parquet into the workspace, and each misuse fails with a clear error.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportSummary, ResultInfo } from "../../engine/common/rpc.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";
import { servedWorkspace } from "../helpers/served.js";

const ROWS = 1500;
let dir: string;
let duck: Duck;

const SHOWS = (dir: string) => `import { readCsv, fromColumns, col, count, show } from "basin";
const t = readCsv("${dir}/*.csv", { blocksize: 4096, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] });
show(t.groupBy("city").agg(count().alias("n"), col("v").sum().alias("v")), "by city");
show(t.filter(col("k").eq(0)).select("rid", "city", "f"));
show(fromColumns({ s: ["Zürich", null, "東京", "🙂"], x: [1, null, 3, 4] }, { partitions: [0, 1, 3, 0] }), "tiny 東京");
export default show(t.select("rid", "day", "flag"), "selected").filter(col("rid").lt(10));
`;

beforeAll(async () => {
  dir = writeTripsCsv(makeTrips(ROWS, 23), 3);
  writeFileSync(join(dir, "shows.ts"), SHOWS(dir));
  writeFileSync(
    join(dir, "twice.ts"),
    `import { fromColumns, show } from "basin";\nconst f = fromColumns({ x: [1] });\nshow(f, "a");\nshow(f, "a");\nexport default f;\n`,
  );
  writeFileSync(
    join(dir, "not_frame.ts"),
    `import { show } from "basin";\nimport { fromColumns } from "basin";\n\nshow(42 as never, "n");\nexport default fromColumns({ x: [1] });\n`,
  );
  writeFileSync(
    join(dir, "bag_shown.ts"),
    `import { bag, show } from "basin";\n\nshow(bag.fromItems([1, 2]) as never, "b");\nexport default 1;\n`,
  );
  duck = await Duck.open();
  await duck.run(`CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`);
});

afterAll(() => duck.close());

/** DuckDB rows in wire form: dates as ISO text. */
async function duckRows(sql: string): Promise<unknown[][]> {
  return (await duck.rows(sql)).map((r) =>
    r.map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : typeof v === "bigint" ? Number(v) : v)),
  );
}

describe.each([1, 4])("named results and export on %i worker(s)", (workers) => {
  const served = servedWorkspace(() => dir, workers);
  const { runToEnd } = served;
  const allRows = (r: ResultInfo) => served.allRows(r.id, r.rows, 700);

  it("shows each show(frame, name) as its own named result, after the default export", async () => {
    const e = await runToEnd("shows.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    expect(e.result.name).toBeUndefined();
    expect(e.shown!.map((r) => r.name)).toEqual(["by city", "result 2", "tiny 東京", "selected"]);
    const [byCity, k0, tiny, selected] = e.shown!;
    expectSameRows(
      await allRows(e.result),
      await duckRows("SELECT rid, day, flag FROM t WHERE rid < 10"),
      "default export",
    );
    expectSameRows(
      await allRows(byCity),
      await duckRows("SELECT city, count(*), sum(v) FROM t GROUP BY city"),
      "by city",
    );
    expectSameRows(await allRows(k0), await duckRows("SELECT rid, city, f FROM t WHERE k = 0"), "k = 0 (skewed key)");
    expectSameRows(
      await allRows(tiny),
      [
        ["Zürich", 1],
        [null, null],
        ["東京", 3],
        ["🙂", 4],
      ],
      "tiny",
      true,
    );
    expectSameRows(await allRows(selected), await duckRows("SELECT rid, day, flag FROM t"), "selected");
    for (const r of [e.result, ...e.shown!]) await served.client.call("release", r.id);
  });

  it("exports a result and a sorted view as CSV and Parquet, atomically, inside the workspace", async () => {
    const e = await runToEnd("shows.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    const byCity = e.shown![0];
    const view = await served.client.call<ResultInfo>(
      "view",
      byCity.id,
      [
        { column: "n", descending: true },
        { column: "city", descending: false },
      ],
      [],
    );
    const csv = await served.client.call<ExportSummary>("exportResult", view.id, `out-${workers}/by city.csv`, "csv");
    expect(csv).toMatchObject({ path: `out-${workers}/by city.csv`, rows: byCity.rows });
    expect(csv.bytes).toBeGreaterThan(0);
    // The workbench hears the export's progress: parts written, the last one all of them.
    const progress = (path: string) =>
      served.client.events.flatMap((ev) => (ev.type === "exportProgress" && ev.path === path ? [ev.progress] : []));
    const csvProgress = progress(`out-${workers}/by city.csv`);
    expect(csvProgress.length).toBeGreaterThan(0);
    expect(csvProgress.at(-1)).toMatchObject({ group: "write", done: csvProgress.at(-1)!.total });
    const sorted = "SELECT city, count(*) AS n, sum(v) AS v FROM t GROUP BY city ORDER BY n DESC, city NULLS LAST";
    expectSameRows(
      await duckRows(
        `SELECT * FROM read_csv('${join(dir, `out-${workers}/by city.csv`)}', header=true, columns={'city': 'VARCHAR', 'n': 'BIGINT', 'v': 'BIGINT'})`,
      ),
      await duckRows(sorted),
      "csv in view order",
      true,
    );
    const pq = await served.client.call<ExportSummary>(
      "exportResult",
      e.result.id,
      `out-${workers}/selected.parquet`,
      "parquet",
    );
    expect(pq.rows).toBe(e.result.rows);
    const pqProgress = progress(`out-${workers}/selected.parquet`);
    expect(pqProgress.at(-1)).toMatchObject({ group: "write", done: pqProgress.at(-1)!.total });
    expectSameRows(
      await duckRows(`SELECT * FROM '${join(dir, `out-${workers}/selected.parquet`)}'`),
      await duckRows("SELECT rid, day, flag FROM t WHERE rid < 10"),
      "parquet",
    );
    // Nothing but the finished files is left behind (the writer renames a temp file).
    expect(readdirSync(join(dir, `out-${workers}`)).sort()).toEqual(["by city.csv", "selected.parquet"]);
    for (const r of [view, e.result, ...e.shown!]) await served.client.call("release", r.id);
  });

  it("refuses bad exports and bad show() calls clearly", async () => {
    const e = await runToEnd("shows.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    await expect(served.client.call("exportResult", e.result.id, "../escape.csv", "csv")).rejects.toThrow(
      /BASIN_IO: \.\.\/escape\.csv is outside the workspace .*; open that folder instead/,
    );
    await expect(served.client.call("exportResult", e.result.id, "x.json", "json")).rejects.toThrow(
      /BASIN_PLAN: export format must be "csv" or "parquet", got "json"/,
    );
    await expect(served.client.call("exportResult", "result-999", "x.csv", "csv")).rejects.toThrow(
      /no result "result-999".*run the pipeline again/,
    );
    expect(existsSync(join(dir, "x.csv"))).toBe(false);
    for (const r of [e.result, ...e.shown!]) await served.client.call("release", r.id);

    const twice = await runToEnd("twice.ts");
    expect(twice.type === "runFailed" && twice.error).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringMatching(
        /show\(\): the name "a" is already used by another shown frame; give each one its own name/,
      ),
      location: expect.stringMatching(/twice\.ts:4:\d+$/),
    });
    const notFrame = await runToEnd("not_frame.ts");
    expect(notFrame.type === "runFailed" && notFrame.error).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringMatching(/show\(\) needs a DataFrame as its first argument, got number/),
      location: expect.stringMatching(/not_frame\.ts:4:\d+$/),
    });
    const bagShown = await runToEnd("bag_shown.ts");
    expect(bagShown.type === "runFailed" && bagShown.error).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining("got a Bag; a bag or an array shows as the pipeline's default export"),
      location: expect.stringMatching(/bag_shown\.ts:3:\d+$/),
    });
  });
});
