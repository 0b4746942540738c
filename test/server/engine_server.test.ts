// The workbench's engine server (`basin serve`) over a real WebSocket: token and
// Origin checks, running pipeline files, paging results by viewport, engine-side
// sort/filter and column profiles (against DuckDB), cancellation, and clear errors.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { ColumnProfile, EngineEvent, Page, ResultFilter, ResultInfo } from "../../engine/common/rpc.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";
import { RpcClient } from "../helpers/rpc_client.js";
import { filterCode } from "../../renderer/common/view_code.js";
import type { DType } from "../../engine/common/types.js";

const ROWS = 2000;
let dir: string;
let server: RunningServer;
let cluster: LocalCluster;
let client: RpcClient;
let duck: Duck;
let origin: string;

const PIPELINE = (dir: string) => `import { readCsv, col } from "basin";
export default readCsv("${dir}/*.csv", { blocksize: 4096, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] })
  .filter(col("rid").lt(1500));
`;

beforeAll(async () => {
  dir = writeTripsCsv(makeTrips(ROWS, 11), 2);
  writeFileSync(join(dir, "trips.ts"), PIPELINE(dir));
  writeFileSync(
    join(dir, "bad_column.ts"),
    `import { readCsv, col } from "basin";\nconst t = readCsv("${dir}/*.csv");\nexport default t.filter(col("nope").gt(1));\n`,
  );
  writeFileSync(join(dir, "loops.ts"), `while (true) {}\nexport default 1;\n`);
  cluster = new LocalCluster({ workers: 2 });
  server = await serve({ root: dir, cluster });
  origin = `http://127.0.0.1:${server.port}`;
  client = await RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, origin);
  duck = await Duck.open();
  await duck.run(
    `CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS}) WHERE rid < 1500`,
  );
});

afterAll(async () => {
  client.close();
  await server.close();
  await cluster.close();
  duck.close();
});

async function runToEnd(path: string, source?: string): Promise<EngineEvent> {
  const { runId } = await client.call<{ runId: string }>("run", path, source);
  return client.waitFor((e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId);
}

async function finished(path: string, source?: string): Promise<ResultInfo> {
  const e = await runToEnd(path, source);
  if (e.type !== "runFinished") throw new Error(`run failed: ${JSON.stringify(e)}`);
  return e.result;
}

/** Every row of a result, fetched in pages of `size`. */
async function allRows(id: string, rows: number, size = 333): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for (let offset = 0; offset < rows; offset += size) {
    const p = await client.call<Page>("page", id, offset, size);
    for (let r = 0; r < p.values[0].length; r++) out.push(p.values.map((c) => c[r]));
  }
  return out;
}

/** DuckDB rows in wire form: dates as ISO text. */
async function duckRows(sql: string): Promise<unknown[][]> {
  return (await duck.rows(sql)).map((r) => r.map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : v)));
}

describe("engine server: access", () => {
  it("refuses a WebSocket without the token or from another Origin, and sets no cookie (it would reach every local port)", async () => {
    const page = await fetch(`${origin}/?token=${server.token}`);
    expect(page.headers.get("set-cookie")).toBeNull();
    await expect(RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=wrong`, origin)).rejects.toThrow(/HTTP 403/);
    await expect(RpcClient.connect(`ws://127.0.0.1:${server.port}/`, origin)).rejects.toThrow(/HTTP 403/);
    await expect(
      RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, "http://evil.example"),
    ).rejects.toThrow(/HTTP 403/);
  });

  it("answers only to its own Host (DNS rebinding) and tells the browser to send no referrer", async () => {
    const { request } = await import("node:http");
    const get = (host: string) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((ok, fail) =>
        request({ host: "127.0.0.1", port: server.port, path: `/?token=${server.token}`, headers: { host } }, (r) => {
          r.resume();
          ok({ status: r.statusCode ?? 0, headers: r.headers });
        })
          .on("error", fail)
          .end(),
      );
    expect((await get("evil.example:80")).status).toBe(421);
    expect((await get(`evil.example:${server.port}`)).status).toBe(421);
    expect((await get(`127.0.0.1.evil.example:${server.port}`)).status).toBe(421);
    const good = await get(`127.0.0.1:${server.port}`);
    expect(good.status).not.toBe(421);
    expect(good.headers["referrer-policy"]).toBe("no-referrer");
    expect((await get(`localhost:${server.port}`)).status).not.toBe(421);
  });

  it("serves nothing outside the app's assets, even with the token", async () => {
    const r = await fetch(`${origin}/..%2F..%2Fpackage.json?token=${server.token}`);
    expect([403, 404]).toContain(r.status);
  });

  it("lists, reads and writes workspace files, and refuses paths outside it", async () => {
    const ws = await client.call<{ files: string[] }>("workspace");
    expect(ws.files).toEqual(expect.arrayContaining(["trips.ts", "part-0.csv"]));
    await client.call("writeFile", "notes/new.ts", "export default 1;\n");
    expect(await client.call("readFile", "notes/new.ts")).toBe("export default 1;\n");
    await expect(client.call("readFile", "../../etc/passwd")).rejects.toThrow(/outside the workspace/);
    await expect(client.call("nope")).rejects.toThrow(/unknown engine method "nope"/);
  });
});

describe("engine server: hostile frames and files", () => {
  it("survives a frame over the size limit and one of invalid UTF-8: that connection closes, the server answers the next", async () => {
    const { WebSocket } = await import("ws");
    for (const frame of [Buffer.alloc(65 * 1024 * 1024, 0x20), Buffer.from([0xff, 0xfe])]) {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/?token=${server.token}`, { origin });
      await new Promise<void>((ok, fail) => (ws.once("open", () => ok()), ws.once("error", fail)));
      const closed = new Promise<number>((ok) => ws.once("close", (code) => ok(code)));
      ws.send(frame, { binary: false });
      expect([1007, 1009, 1006]).toContain(await closed);
    }
    const again = await RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, origin);
    expect((await again.call<{ files: string[] }>("workspace")).files).toContain("trips.ts");
    again.close();
    expect((await fetch(`${origin}/favicon.ico`)).status).toBe(204);
  });

  it("creates a new file but never over an existing one or as a folder name", async () => {
    writeFileSync(join(dir, "mine.ts"), "export default 42;\n");
    await expect(client.call("writeFile", "mine.ts", "template")).rejects.toThrow(/mine.ts already exists/);
    expect(await client.call("readFile", "mine.ts")).toBe("export default 42;\n");
    await expect(client.call("writeFile", "sub/", "template")).rejects.toThrow(/names a folder/);
  });

  it("opens only UTF-8 text for editing (a gzip or Latin-1 file is refused, so no save can rewrite its bytes); a BOM stays", async () => {
    // In a folder of their own: the pipelines here read the workspace's *.csv.
    mkdirSync(join(dir, "editor"), { recursive: true });
    writeFileSync(join(dir, "editor/data.csv.gz"), gzipSync("a,b\n1,x\n"));
    writeFileSync(join(dir, "editor/latin.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const f of ["editor/data.csv.gz", "editor/latin.txt"])
      await expect(client.call("openFile", f)).rejects.toThrow(
        new RegExp(`${f.replace(".", "\\.")} is not UTF-8 text`),
      );
    writeFileSync(join(dir, "bom.ts"), "\ufeffexport default 1;\n");
    const opened = await client.call<{ text: string; version: string }>("openFile", "bom.ts");
    expect(opened.text.charCodeAt(0)).toBe(0xfeff);
    await client.call("saveFile", "bom.ts", opened.text.replace("1", "2"), opened.version);
    expect(readFileSync(join(dir, "bom.ts"))[0]).toBe(0xef);
  });

  it("refuses to open a file too large for the editor, saying how to read it", async () => {
    mkdirSync(join(dir, "editor"), { recursive: true });
    writeFileSync(join(dir, "editor/huge.txt"), Buffer.alloc(17e6, 0x61));
    await expect(client.call("openFile", "editor/huge.txt")).rejects.toThrow(
      /huge.txt is 17 MB, too large for the editor/,
    );
  });
});

describe("engine server: runs and results", () => {
  it("runs a pipeline file with progress and pages through its result exactly", async () => {
    const info = await finished("trips.ts");
    expect(info.rows).toBe(1500);
    expect(info.schema.map((f) => f.name)).toEqual(["rid", "k", "city", "v", "f", "flag", "day"]);
    expect(client.events.some((e) => e.type === "progress")).toBe(true);
    expectSameRows(await allRows(info.id, info.rows), await duckRows("SELECT * FROM t ORDER BY rid"), "pages", true);
    const tail = await client.call<Page>("page", info.id, 1490, 100, ["rid", "city"]);
    expect(tail.columns).toEqual(["rid", "city"]);
    expect(tail.values[0]).toEqual([...Array(10).keys()].map((i) => 1490 + i));
    await expect(client.call("page", info.id, 0, 1e9)).rejects.toThrow(/page limit must be an integer/);
    await client.call("release", info.id);
    await expect(client.call("page", info.id, 0, 1)).rejects.toThrow(/no result "result-\d+"/);
  });

  it("runs unsaved editor text in place of the file", async () => {
    const info = await finished("trips.ts", PIPELINE(dir).replace("lt(1500)", "lt(10)"));
    expect(info.rows).toBe(10);
    await client.call("release", info.id);
  });

  it("sorts and filters a result in the engine, matching DuckDB", async () => {
    const info = await finished("trips.ts");
    const view = await client.call<ResultInfo>(
      "view",
      info.id,
      [
        { column: "city", descending: true },
        { column: "f", descending: false },
      ],
      [{ column: "v", kind: "range", min: -200, max: 300 }],
    );
    const expected = await duckRows(
      "SELECT * FROM t WHERE v BETWEEN -200 AND 300 ORDER BY city DESC NULLS LAST, f ASC NULLS LAST, rid",
    );
    expectSameRows(await allRows(view.id, view.rows), expected, "view", true);
    const nulls = await client.call<ResultInfo>("view", info.id, [], [{ column: "day", kind: "isNull" }]);
    expect(nulls.rows).toBe(Number((await duck.rows("SELECT count(*) FROM t WHERE day IS NULL"))[0][0]));
    // A text filter is a literal substring: "a,b" has regex-free punctuation, "ü" is multi-byte.
    for (const text of ["ü", "a,b", "."]) {
      const found = await client.call<ResultInfo>(
        "view",
        info.id,
        [{ column: "rid", descending: false }],
        [{ column: "city", kind: "contains", text }],
      );
      expectSameRows(
        await allRows(found.id, found.rows),
        await duckRows(`SELECT * FROM t WHERE contains(city, '${text}') ORDER BY rid`),
        `contains ${text}`,
        true,
      );
      await client.call("release", found.id);
    }
    await expect(client.call("view", info.id, [], [{ column: "v", kind: "contains", text: "1" }])).rejects.toThrow(
      /"v" is int64; a text filter needs a string column/,
    );
    for (const id of [info.id, view.id, nulls.id]) await client.call("release", id);
  });

  it("profiles columns: nulls, min/max, a histogram of numbers and the top strings", async () => {
    const info = await finished("trips.ts");
    const v = await client.call<ColumnProfile>("profile", info.id, "v");
    const [[nulls, min, max, n]] = await duck.rows("SELECT count(*) - count(v), min(v), max(v), count(v) FROM t");
    expect([v.nulls, v.min, v.max]).toEqual([Number(nulls), Number(min), Number(max)]);
    expect(v.histogram!.counts.reduce((a, b) => a + b, 0)).toBe(Number(n));
    // 20 bins centred on min … max: the outer edges reach half a bin beyond the data.
    const width = (Number(max) - Number(min)) / 19;
    expect(v.histogram!.edges[0]).toBeCloseTo(Number(min) - width / 2, 9);
    expect(v.histogram!.edges.at(-1)).toBeCloseTo(Number(max) + width / 2, 9);
    const bins = await duck.rows(
      `SELECT round_even((v - (${min})) / ${width}, 0)::INT AS b, count(*) FROM t WHERE v IS NOT NULL GROUP BY b ORDER BY b`,
    );
    const want = new Array<number>(20).fill(0);
    for (const [b, n] of bins) want[Number(b)] = Number(n);
    expect(v.histogram!.counts).toEqual(want);
    const city = await client.call<ColumnProfile>("profile", info.id, "city");
    const top = await duck.rows(
      "SELECT city, count(*) AS n FROM t WHERE city IS NOT NULL GROUP BY city ORDER BY n DESC, city LIMIT 10",
    );
    expect(city.top!.map((t) => [t.value, t.count])).toEqual(top.map(([c, k]) => [c, Number(k)]));
    const day = await client.call<ColumnProfile>("profile", info.id, "day");
    const [[dmin, dmax]] = await duckRows("SELECT min(day), max(day) FROM t");
    expect([day.min, day.max]).toEqual([dmin, dmax]);
    await client.call("release", info.id);
  });

  it("a result released while a view, profile, sample or count is computed over it: they finish, never BASIN_HANDLE", async () => {
    for (let i = 0; i < 6; i++) {
      const info = await finished("trips.ts");
      const calls = [
        client.call("view", info.id, [{ column: "city", descending: i % 2 === 0 }], []),
        client.call("profile", info.id, ["v", "city", "f"][i % 3]),
        client.call("sample", info.id, 100, ["v", "f"]),
        client.call("countDistinct", info.id, "city"),
        client.call("bins2d", info.id, "v", "f", 8, 8),
      ];
      // Released right behind them, while they compute.
      await client.call("release", info.id);
      for (const c of await Promise.allSettled(calls)) {
        if (c.status === "fulfilled") continue;
        expect(String((c.reason as Error).message)).not.toMatch(/BASIN_HANDLE|unknown handle/);
      }
      for (const c of await Promise.allSettled(calls))
        if (c.status === "fulfilled" && (c.value as ResultInfo)?.id?.startsWith?.("result-"))
          await client.call("release", (c.value as ResultInfo).id);
    }
  });
});

describe("engine server: errors and cancellation", () => {
  it("reports a pipeline error with its file and line", async () => {
    const e = await runToEnd("bad_column.ts");
    expect(e.type).toBe("runFailed");
    if (e.type !== "runFailed") return;
    expect(e.error.code).toBe("BASIN_PLAN");
    expect(e.error.location).toMatch(/bad_column\.ts:3:\d+$/);
    expect(e.error.message).toMatch(/column "nope" does not exist/);
  });

  it("reports a syntax error in unsaved text at its line", async () => {
    const e = await runToEnd("trips.ts", 'import { col } from "basin";\nexport default col(;\n');
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_SYNTAX");
    expect(e.type === "runFailed" && e.error.location).toMatch(/trips\.ts:2:\d+$/);
  });

  it("reports what the pipeline's own code threw as BASIN_PIPELINE at its line (evaluated in the driver thread)", async () => {
    const e = await runToEnd(
      "trips.ts",
      `import { readCsv } from "basin";\nconst t = readCsv("${dir}/*.csv");\nexport default t.fliter(1);\n`,
    );
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_PIPELINE");
    expect(e.type === "runFailed" && e.error.location).toMatch(/trips\.ts:3:\d+$/);
    expect(e.type === "runFailed" && e.error.message).toContain("TypeError: t.fliter is not a function");
  });

  it("reports a pipeline that calls process.exit as BASIN_PIPELINE saying so, and the next run works", async () => {
    const e = await runToEnd("trips.ts", `process.exit(3);\nexport default 1;\n`);
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_PIPELINE");
    expect(e.type === "runFailed" && e.error.message).toContain("ended its evaluation (process.exit(3))");
    expect((await finished("trips.ts")).rows).toBeGreaterThan(0);
  });

  it("cancels a run whose pipeline file never finishes evaluating", async () => {
    const { runId } = await client.call<{ runId: string }>("run", "loops.ts");
    await new Promise((r) => setTimeout(r, 300));
    await client.call("cancel", runId);
    const e = await client.waitFor((x) => x.type === "runFailed" && x.runId === runId, 5000);
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_CANCELLED");
  });

  it("runs cancelled while their pipeline file starts to load leave no open files behind (40 Run/Stop)", async () => {
    const fds = () => readdirSync("/proc/self/fd").length;
    // One run first: what stays open for the server's life (esbuild's service) is open before counting.
    await finished("trips.ts");
    const before = fds();
    for (let i = 0; i < 40; i++) {
      const { runId } = await client.call<{ runId: string }>("run", "trips.ts");
      await new Promise((r) => setTimeout(r, 5 + ((i * 7) % 120))); // across the engine's load, 5–125 ms
      await client.call("cancel", runId);
      await client.waitFor((x) => (x.type === "runFailed" || x.type === "runFinished") && x.runId === runId, 10_000);
    }
    // Threads terminated once loaded close their files; wait for them (bounded).
    for (let i = 0; i < 100 && fds() > before + 8; i++) await new Promise((r) => setTimeout(r, 100));
    expect(fds(), "open files after 40 early cancels").toBeLessThanOrEqual(before + 8);
    expect((await finished("trips.ts")).rows).toBeGreaterThan(0);
  });

  it("cancels a run whose tasks never finish: it answers at once, the workers are freed, the next run works", async () => {
    const loop = `import { bag } from "basin";
export default bag.fromItems([1, 2, 3, 4], { partitions: 2 }).map((x: number) => {
  for (;;) if (x < 0) return x;
});
`;
    const { runId } = await client.call<{ runId: string }>("run", "loop_tasks.ts", loop);
    await new Promise((r) => setTimeout(r, 800));
    const t0 = performance.now();
    await client.call("cancel", runId);
    const e = await client.waitFor((x) => x.type === "runFailed" && x.runId === runId, 5000);
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_CANCELLED");
    expect(performance.now() - t0, "Cancel answers at once").toBeLessThan(500);
    const info = await finished("trips.ts");
    expect(info.rows).toBeGreaterThan(0);
    await client.call("release", info.id);
  });

  it("sorts and profiles a kept result while a long run is under way: they take turns on the workers instead of waiting for it", async () => {
    const info = await finished("trips.ts");
    // 400 tasks of 100 ms on 2 workers: 20 s alone.
    const slow = `import { bag } from "basin";
export default bag.fromItems(Array.from({ length: 400 }, (_, i) => i), { partitions: 400 }).map((x: number) => {
  const end = Date.now() + 100;
  while (Date.now() < end);
  return x * 2;
});
`;
    const { runId } = await client.call<{ runId: string }>("run", "slow_tasks.ts", slow);
    let longOver = false;
    const long = client
      .waitFor((e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId, 60_000)
      .then((e) => ((longOver = true), e));
    await client.waitFor((e) => e.type === "progress" && e.runId === runId && e.progress.done > 0, 10_000);
    const view = await client.call<ResultInfo>("view", info.id, [{ column: "rid", descending: true }], []);
    const v = await client.call<ColumnProfile>("profile", info.id, "v");
    expect(longOver, "the view and profile answered before the long run ended").toBe(false);
    expectSameRows(
      await allRows(view.id, view.rows),
      await duckRows("SELECT * FROM t ORDER BY rid DESC"),
      "view",
      true,
    );
    const [[nulls, min, max]] = await duck.rows("SELECT count(*) - count(v), min(v), max(v) FROM t");
    expect([v.nulls, v.min, v.max]).toEqual([Number(nulls), Number(min), Number(max)]);
    await client.call("cancel", runId);
    const e = await long;
    expect(e.type === "runFailed" && e.error.code).toBe("BASIN_CANCELLED");
    for (const id of [info.id, view.id]) await client.call("release", id);
  });

  it("reports the cluster's workers and store", async () => {
    const s = await client.call<{ workers: { name: string }[] }>("cluster");
    expect(s.workers.length).toBe(2);
  });
});

describe("what the workbench's issue 20 fixes need of the server", () => {
  it("filters with strict comparisons, !=, not null and case-insensitive contains / starts-with, matching DuckDB", async () => {
    const info = await finished("trips.ts");
    const cases: [object, string][] = [
      [{ column: "v", kind: "compare", op: "gt", value: 0 }, "v > 0"],
      [{ column: "v", kind: "compare", op: "ge", value: 0 }, "v >= 0"],
      [{ column: "v", kind: "compare", op: "lt", value: 0 }, "v < 0"],
      [{ column: "city", kind: "compare", op: "ne", value: "plain" }, "city <> 'plain'"],
      [{ column: "city", kind: "compare", op: "eq", value: "plain" }, "city = 'plain'"],
      [{ column: "day", kind: "notNull" }, "day IS NOT NULL"],
      [{ column: "city", kind: "contains", text: "ZÜR", ignoreCase: true }, "contains(lower(city), 'zür')"],
      [{ column: "city", kind: "contains", text: "PLAIN", ignoreCase: true }, "contains(lower(city), 'plain')"],
      [{ column: "city", kind: "startsWith", text: "Pla", ignoreCase: true }, "starts_with(lower(city), 'pla')"],
      [{ column: "city", kind: "startsWith", text: "pla" }, "starts_with(city, 'pla')"],
    ];
    for (const [filter, where] of cases) {
      const v = await client.call<ResultInfo>("view", info.id, [{ column: "rid", descending: false }], [filter]);
      expectSameRows(
        await allRows(v.id, v.rows),
        await duckRows(`SELECT * FROM t WHERE ${where} ORDER BY rid`),
        where,
        true,
      );
      await client.call("release", v.id);
    }
    await client.call("release", info.id);
  });

  it("filters an int64 column on a value past 2^53 exactly (=, !=, <, ranges), and a float64 one on NaN and ±Infinity", async () => {
    /**
     * The ids a view of `frame`'s result keeps under `filter`; "Copy as code" of the
     * filter, pasted after the frame in a pipeline, keeps the same rows.
     */
    const keeps = (frame: string, type: DType) => async (filter: ResultFilter) => {
      const info = await finished("trips.ts", `import { fromColumns } from "basin";\nexport default ${frame};\n`);
      const v = await client.call<ResultInfo>("view", info.id, [{ column: "id", descending: false }], [filter]);
      const ids = (await allRows(v.id, v.rows)).map((r) => r[0]);
      const code = filterCode(filter, type);
      const pasted = await finished(
        "trips.ts",
        `import { fromColumns, col } from "basin";\nexport default ${frame}.filter(${code}).sort("id");\n`,
      );
      expect(
        (await allRows(pasted.id, pasted.rows)).map((r) => r[0]),
        code,
      ).toEqual(ids);
      for (const id of [v.id, info.id, pasted.id]) await client.call("release", id);
      return ids;
    };
    const big = "fromColumns({ id: [1, 2, 3], big: [9007199254740992n, 9007199254740993n, 9223372036854775807n] })";
    const ids = keeps(big, "int64");
    expect(await ids({ column: "big", kind: "compare", op: "eq", value: "9007199254740993" })).toEqual([2]);
    expect(await ids({ column: "big", kind: "compare", op: "ne", value: "9007199254740993" })).toEqual([1, 3]);
    expect(await ids({ column: "big", kind: "compare", op: "lt", value: "9007199254740993" })).toEqual([1]);
    expect(await ids({ column: "big", kind: "compare", op: "ge", value: "9007199254740993" })).toEqual([2, 3]);
    expect(await ids({ column: "big", kind: "range", min: 1, max: "9007199254740993" })).toEqual([1, 2]);
    expect(await ids({ column: "big", kind: "range", min: "9007199254740993", max: "9223372036854775807" })).toEqual([
      2, 3,
    ]);
    const info = await finished("trips.ts", `import { fromColumns } from "basin";\nexport default ${big};\n`);
    await expect(
      client.call("view", info.id, [], [{ column: "big", kind: "compare", op: "lt", value: "12x" }]),
    ).rejects.toThrow(/"12x" is not an integer for the int64 column "big"/);
    await expect(
      client.call("view", info.id, [], [{ column: "big", kind: "compare", op: "lt", value: "9223372036854775808" }]),
    ).rejects.toThrow(/9223372036854775808 is outside what the int64 column "big" can hold/);
    await client.call("release", info.id);

    const fids = keeps("fromColumns({ id: [1, 2, 3, 4, 5], f: [NaN, 1.5, Infinity, -Infinity, null] })", "float64");
    expect(await fids({ column: "f", kind: "compare", op: "eq", value: "NaN" })).toEqual([1]);
    expect(await fids({ column: "f", kind: "compare", op: "eq", value: "Infinity" })).toEqual([3]);
    expect(await fids({ column: "f", kind: "compare", op: "lt", value: "Infinity" })).toEqual([2, 4]);
    expect(await fids({ column: "f", kind: "compare", op: "eq", value: "-Infinity" })).toEqual([4]);
  });

  it("a case-insensitive text filter finds every exact substring, letters the engine does not lowercase included", async () => {
    const words = ["Ǆemal x", "ＡＢＣ def", "İstanbul", "ᏣᎳᎩ", "Zürich"];
    const info = await finished(
      "trips.ts",
      `import { fromColumns } from "basin";\nexport default fromColumns({ s: ${JSON.stringify(words)} });\n`,
    );
    for (const [i, needle] of [
      [0, "Ǆemal"],
      [1, "ＡＢＣ"],
      [2, "İstanbul"],
      [3, "ᏣᎳᎩ"],
      [4, "ZÜRICH"],
    ] as const) {
      const v = await client.call<ResultInfo>(
        "view",
        info.id,
        [],
        [{ column: "s", kind: "contains", text: needle, ignoreCase: true }],
      );
      expect(
        (await allRows(v.id, v.rows)).map((r) => r[0]),
        needle,
      ).toEqual([words[i]]);
      await client.call("release", v.id);
    }
    await client.call("release", info.id);
  });

  it("samples a result uniformly: the asked number of distinct real rows, in order, from all of it", async () => {
    const info = await finished("trips.ts");
    const s = await client.call<{ values: unknown[][]; total: number; columns: string[] }>("sample", info.id, 100, [
      "rid",
      "v",
      "rid",
    ]);
    expect(s.total).toBe(info.rows);
    expect(s.columns).toEqual(["rid", "v", "rid"]);
    const rids = s.values[0] as number[];
    expect(rids).toHaveLength(100);
    expect(new Set(rids).size).toBe(100);
    expect(s.values[2]).toEqual(rids);
    expect([...rids].sort((a, b) => a - b)).toEqual(rids); // the result's order (rid ascends in it)
    // Not the first rows: spread over the whole result.
    expect(rids[0]).toBeLessThan(info.rows * 0.1);
    expect(rids[99]).toBeGreaterThan(info.rows * 0.9);
    const all = new Map((await allRows(info.id, info.rows)).map((r) => [r[0], r]));
    const vIndex = info.schema.findIndex((f) => f.name === "v");
    rids.forEach((rid, i) => expect(s.values[1][i]).toEqual(all.get(rid)![vIndex]));
    // A small result: all of it.
    const whole = await client.call<{ values: unknown[][] }>("sample", info.id, 10_000, ["rid"]);
    expect(whole.values[0]).toHaveLength(info.rows);
    await expect(client.call("sample", info.id, 0, ["rid"])).rejects.toThrow(/sample size must be an integer/);
    await client.call("release", info.id);
  });

  it("saves a file only over the version it was opened at (BASIN_CONFLICT otherwise), or when told to overwrite", async () => {
    writeFileSync(join(dir, "edited.ts"), "export default 1;\n");
    const opened = await client.call<{ text: string; version: string }>("openFile", "edited.ts");
    expect(opened.text).toBe("export default 1;\n");
    const saved = await client.call<{ version: string }>(
      "saveFile",
      "edited.ts",
      "export default 2;\n",
      opened.version,
    );
    expect(saved.version).not.toBe(opened.version);
    expect((await client.call<{ version: string }>("openFile", "edited.ts")).version).toBe(saved.version);
    writeFileSync(join(dir, "edited.ts"), "export default 3; // by someone else\n");
    await expect(client.call("saveFile", "edited.ts", "export default 4;\n", saved.version)).rejects.toThrow(
      /BASIN_CONFLICT: edited\.ts changed on disk since it was opened/,
    );
    expect(await client.call("readFile", "edited.ts")).toBe("export default 3; // by someone else\n");
    await client.call("saveFile", "edited.ts", "export default 4;\n");
    expect(await client.call("readFile", "edited.ts")).toBe("export default 4;\n");
  });

  it("keeps a session's results and last run for the page that attaches again, and sends its run events to it alone", async () => {
    const session = "session-test-0001";
    const page = await RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, origin);
    try {
      const fresh = await page.call<{ results: ResultInfo[]; run?: unknown }>("attach", session);
      expect(fresh.results).toEqual([]);
      expect(fresh.run).toBeUndefined();
      const { runId } = await page.call<{ runId: string }>("run", "trips.ts");
      const done = await page.waitFor((e) => e.type === "runFinished" && e.runId === runId);
      // Another page (not of this session) hears nothing of it.
      expect(client.events.some((e) => "runId" in e && e.runId === runId)).toBe(false);
      const result = (done as Extract<EngineEvent, { type: "runFinished" }>).result;
      const view = await page.call<ResultInfo>("view", result.id, [{ column: "rid", descending: true }], []);
      page.close();
      // The page reloads: a new connection attaches to the same session.
      const again = await RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, origin);
      try {
        const back = await again.call<{
          results: ResultInfo[];
          others: string[];
          run: { runId: string; status: string; elapsedMs: number; tasks: number };
        }>("attach", session);
        expect(back.results.map((r) => r.id)).toEqual([result.id]);
        expect(back.others).toEqual([view.id]);
        expect(back.run).toMatchObject({ runId, status: "done" });
        expect(back.run.elapsedMs).toBeGreaterThanOrEqual(0);
        expect((await again.call<Page>("page", result.id, 0, 2)).values[0]).toHaveLength(2);
        await expect(again.call("attach", "bad id!")).rejects.toThrow(/session id/);
        for (const id of [result.id, view.id]) await again.call("release", id);
      } finally {
        again.close();
      }
    } finally {
      page.close();
    }
  });
});
