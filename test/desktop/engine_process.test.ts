// The desktop app's engine path without Electron: EngineHost (as the Electron
// main process runs it) forks the real engine process and relays a MessagePort;
// the renderer's PortEngineClient drives it. Runs a pipeline and pages its result
// (against DuckDB), exports it, survives a SIGKILL of the engine process (waiting
// requests fail clearly, the client reports the crash with its cause) and comes
// back with a restart.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BasinError } from "../../engine/common/errors.js";
import type { EngineEvent } from "../../engine/common/rpc.js";
import { EngineHost, type HostPort } from "../../electron/engine_host.js";
import { PortEngineClient, type PortLike } from "../../renderer/common/port_client.js";
import type { ConnectionState, WorkbenchClient } from "../../renderer/common/rpc_client.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "dist/engine/server/engine_process.js");
const ROWS = 1200;

let dir: string;
let host: EngineHost;
let client: PortEngineClient;
let windowPort: MessagePort;
let duck: Duck;

/** A Node MessagePort as the host sees a window's port (Electron's MessagePortMain, adapted the same way in main.ts). */
function asHostPort(port: MessagePort): HostPort {
  return {
    send: (m) => port.postMessage(m),
    onMessage: (l) => port.addEventListener("message", (e) => l((e as MessageEvent).data)),
    onClose: (l) => port.addEventListener("close", l),
    close: () => port.close(),
  };
}

function until<T extends EngineEvent>(c: WorkbenchClient, match: (e: EngineEvent) => e is T, ms = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error(`no matching event within ${ms} ms`))), ms);
    const off = c.onEvent((e) => match(e) && (clearTimeout(timer), off(), resolve(e)));
  });
}

function state(c: WorkbenchClient, want: ConnectionState, ms = 30_000): Promise<void> {
  if (c.state === want) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error(`still ${c.state} after ${ms} ms`))), ms);
    const off = c.onConnection((s) => s === want && (clearTimeout(timer), off(), resolve()));
  });
}

async function runToEnd(path: string): Promise<Extract<EngineEvent, { type: "runFinished" }>> {
  const done = until(
    client,
    (e): e is Extract<EngineEvent, { type: "runFinished" | "runFailed" }> =>
      e.type === "runFinished" || e.type === "runFailed",
  );
  const { runId } = await client.run(path);
  const e = await done;
  if (e.type !== "runFinished") throw new Error(`run failed: ${JSON.stringify(e)}`);
  expect(e.runId).toBe(runId);
  return e;
}

async function allRows(id: string, rows: number): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for (let offset = 0; offset < rows || offset === 0; offset += 500) {
    const p = await client.page(id, offset, 500);
    for (let r = 0; r < (p.values[0]?.length ?? 0); r++) out.push(p.values.map((c) => c[r]));
    if (rows === 0) break;
  }
  return out;
}

beforeAll(async () => {
  if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is not built: run \`npm run build\``);
  dir = writeTripsCsv(makeTrips(ROWS, 5), 3);
  writeFileSync(
    join(dir, "trips.ts"),
    `import { readCsv, col, show } from "basin";
const t = readCsv("*.csv", { blocksize: 2048, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] });
show(t.groupBy("city").agg(col("v").sum().alias("v")), "by city");
export default t.filter(col("v").gt(0));
`,
  );
  host = new EngineHost({ script: SCRIPT, root: dir, onStderr: () => {} });
  const channel = new MessageChannel();
  windowPort = channel.port1;
  host.attach(asHostPort(channel.port2));
  channel.port2.start();
  client = new PortEngineClient(windowPort as unknown as PortLike);
  duck = await Duck.open();
  await duck.run(`CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`);
});

afterAll(async () => {
  client?.close();
  await host?.close();
  duck?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("desktop engine process", { timeout: 90_000 }, () => {
  it("runs a pipeline in the forked engine and pages its results over the port", async () => {
    expect((await client.workspace()).files).toContain("trips.ts"); // sent before the engine said it was ready
    expect(client.state).toBe("open");
    const fin = await runToEnd("trips.ts");
    expect(fin.result.name).toBeUndefined();
    expect(fin.shown?.map((r) => r.name)).toEqual(["by city"]);
    const expected = await duck.rows("SELECT * FROM t WHERE v > 0 ORDER BY rid");
    const got = (await allRows(fin.result.id, fin.result.rows)).sort((a, b) => Number(a[0]) - Number(b[0]));
    expectSameRows(
      got.map((r) => r.map((v, i) => (i === 6 && typeof v === "string" ? new Date(v) : v))),
      expected,
      "default export",
    );
    const byCity = await allRows(fin.shown![0].id, fin.shown![0].rows);
    expectSameRows(byCity, await duck.rows("SELECT city, sum(v) FROM t GROUP BY city"), "show(by city)");
    const cluster = await client.cluster();
    expect(cluster.workers.length).toBeGreaterThan(0);
    for (const r of [fin.result, ...fin.shown!]) await client.release(r.id);
  });

  it("reports an engine crash (never hanging a request) and restarts", async () => {
    const first = host.pid!;
    const fin = await runToEnd("trips.ts");
    // Freeze the engine so a request is certainly waiting, then kill it.
    process.kill(first, "SIGSTOP");
    const waiting = client.page(fin.result.id, 0, 10).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const crashed = state(client, "crashed");
    process.kill(first, "SIGKILL");
    await crashed;
    expect(client.crashMessage).toMatch(/engine process was killed \(SIGKILL\)[\s\S]*Restart it/);
    const err = (await waiting) as BasinError;
    expect(err).toBeInstanceOf(BasinError);
    expect(err.message).toMatch(
      /^page: the engine process was killed \(SIGKILL\) before it answered; restart the engine/,
    );
    await expect(client.workspace()).rejects.toThrow(
      /workspace: the engine process is not running; restart the engine/,
    );

    client.restartEngine();
    await state(client, "open");
    expect(host.pid).not.toBe(first);
    // The old results are gone with the old process; new runs work.
    await expect(client.page(fin.result.id, 0, 1)).rejects.toThrow(/no result "result-\d+"/);
    const again = await runToEnd("trips.ts");
    expect(again.result.rows).toBe(fin.result.rows);
    for (const r of [again.result, ...again.shown!]) await client.release(r.id);
  });

  it("exports a result into the workspace as CSV and Parquet", async () => {
    const fin = await runToEnd("trips.ts");
    const csv = await client.exportResult(fin.result.id, "exports/positive.csv", "csv"); // a new folder is created, as Save does
    expect(csv).toMatchObject({ path: "exports/positive.csv", rows: fin.result.rows });
    expectSameRows(
      await duck.rows(
        `SELECT * FROM read_csv('${join(dir, "exports/positive.csv")}', header=true, columns=${TRIPS_SQL_COLUMNS})`,
      ),
      await duck.rows("SELECT * FROM t WHERE v > 0"),
      "exported csv",
    );
    await expect(client.exportResult(fin.result.id, "exports", "csv")).rejects.toThrow(
      /exports: it is a folder; name a file inside it/,
    );
    const out = await client.exportResult(fin.shown![0].id, "by_city.parquet", "parquet");
    expect(out).toMatchObject({ path: "by_city.parquet", rows: fin.shown![0].rows });
    expectSameRows(
      await duck.rows(`SELECT * FROM '${join(dir, "by_city.parquet")}'`),
      await duck.rows("SELECT city, sum(v) FROM t GROUP BY city"),
      "exported parquet",
    );
    for (const r of [fin.result, ...fin.shown!]) await client.release(r.id);
  });

  it("drops a closed window's port and serves a new one", async () => {
    const channel = new MessageChannel();
    host.attach(asHostPort(channel.port2));
    channel.port2.start();
    const second = new PortEngineClient(channel.port1 as unknown as PortLike);
    try {
      expect((await second.workspace()).root).toBe(dir);
    } finally {
      second.close();
    }
    expect((await client.workspace()).files).toContain("trips.ts");
  });
});
