// A remote Basin engine over a real OpenSSH server on 127.0.0.1: `basin serve` is
// started on the "host" through SSH (then reused), driven by RemoteEngine through
// the tunnel, and by `basin run --cluster PROFILE`; results checked against DuckDB.
// Faults: a dropped connection mid-run, a wrong host key, a wrong Basin command.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveProfile, type SshProfile } from "../../engine/cluster/profiles.js";
import { RemoteEngine } from "../../engine/cluster/remote/remote_engine.js";
import type { EngineEvent, Page, WireValue, WorkspaceInfo } from "../../engine/common/rpc.js";
import { serve } from "../../engine/server/http_server.js";
import {
  BASIN_BIN,
  csvField,
  makeTempDir,
  parseTable,
  printedUrl,
  removeDir,
  rng,
  runBasin,
  writeText,
} from "../helpers/cli.js";
import { RpcClient, RpcError } from "../helpers/rpc_client.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";
import { startSshd, type Sshd } from "./sshd_procs.js";

const PIPELINE = `import { col, count, readCsv } from "basin";
export default readCsv("trips.csv").groupBy("city").agg(col("fare").sum().alias("total"), count().alias("n"), col("fare").max().alias("top"));
`;
const ORACLE = "SELECT city, sum(fare), count(*), max(fare) FROM t GROUP BY city";

let sshd: Sshd;
let workspace: string;
let profile: SshProfile;
let duck: Duck;

/** Every row of a remote result, in pages. */
async function allRows(engine: RemoteEngine, id: string, rows: number): Promise<WireValue[][]> {
  const out: WireValue[][] = [];
  for (let offset = 0; offset < rows; offset += 7) {
    const p: Page = await engine.page(id, offset, 7);
    for (let r = 0; r < p.values[0].length; r++) out.push(p.values.map((c) => c[r]));
  }
  return out;
}

/** Waits until `f()` holds, polling; fails after `ms`. */
async function until(f: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!f()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  sshd = await startSshd();
  workspace = makeTempDir("basin-remote-ws-");
  // Skewed keys, nulls in keys and values, unicode.
  const rand = rng(8);
  const cities = ["Zürich", "東京", "a", "a", "a", "a", "São Paulo", ""];
  const lines = ["rid,city,fare"];
  for (let i = 0; i < 2000; i++)
    lines.push(
      [
        i,
        csvField(cities[Math.floor(rand() * cities.length)] || null),
        rand() < 0.1 ? "" : (Math.round(rand() * 10000) / 100).toString(),
      ].join(","),
    );
  writeText(workspace, "trips.csv", `${lines.join("\n")}\n`);
  profile = {
    kind: "ssh",
    name: "box",
    host: "127.0.0.1",
    port: sshd.port,
    user: process.env.USER ?? "root",
    keyPath: sshd.clientKey,
    knownHosts: sshd.knownHosts,
    basin: `BASIN_WORKERS=2 ${process.execPath} ${BASIN_BIN}`,
    workspace,
  };
  duck = await Duck.open();
  await duck.run(
    `CREATE TABLE t AS SELECT * FROM read_csv('${join(workspace, "trips.csv")}', header = true, columns = {'rid': 'BIGINT', 'city': 'VARCHAR', 'fare': 'DOUBLE'})`,
  );
}, 60_000);

afterAll(async () => {
  // Stop the engine this file started on the "host", then the sshd.
  const engine = await RemoteEngine.connect(profile, { reconnect: false });
  await engine.stopRemote();
  duck?.close();
  await sshd?.stop();
  removeDir(workspace);
}, 60_000);

describe("remote Basin engine over SSH", () => {
  it("starts Basin on the host, runs uploaded pipeline text there, and a second session reuses that engine", async () => {
    const engine = await RemoteEngine.connect(profile);
    try {
      expect(engine.engineWas).toBe("started");
      expect(engine.state).toBe("open");
      expect((await engine.workspace()).files).toEqual(["trips.csv"]);
      const progress: number[] = [];
      const run = await engine.runToEnd("p.ts", PIPELINE, { onProgress: (p) => progress.push(p.done) });
      expect(progress.length).toBeGreaterThan(0);
      expect(run.result.schema.map((f) => `${f.name}:${f.type}`)).toEqual([
        "city:string",
        "total:float64",
        "n:int64",
        "top:float64",
      ]);
      expectSameRows(await allRows(engine, run.result.id, run.result.rows), await duck.rows(ORACLE), "remote group-by");
      await engine.release(run.result.id);
      expect((await engine.cluster()).store.tables).toBe(0);
    } finally {
      engine.close();
    }
    const again = await RemoteEngine.connect(profile);
    try {
      expect(again.engineWas).toBe("reused");
      const run = await again.runToEnd("p.ts", PIPELINE);
      expect(run.result.rows).toBe(5);
      await again.release(run.result.id);
    } finally {
      again.close();
    }
  });

  it("a failing pipeline rejects with the engine's error and its source line", async () => {
    const engine = await RemoteEngine.connect(profile);
    try {
      const bad =
        'import { col, readCsv } from "basin";\nexport default readCsv("trips.csv")\n  .filter(col("nope").gt(1));\n';
      const err = await engine.runToEnd("bad.ts", bad).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/bad\.ts:3:\d+: .*column "nope"/);
      const missing = await engine
        .runToEnd("q.ts", 'import { readCsv } from "basin";\nexport default readCsv("absent.csv");\n')
        .catch((e: Error) => e);
      expect((missing as Error).message).toMatch(/absent\.csv/);
    } finally {
      engine.close();
    }
  });

  it("a connection dropped mid-run fails the run naming the host; the session reconnects by itself and runs again", async () => {
    const engine = await RemoteEngine.connect(profile);
    try {
      // The pipeline takes a while to evaluate, so the drop lands mid-run.
      const slow = `await new Promise((r) => setTimeout(r, 4000));\n${PIPELINE}`;
      const running = engine.runToEnd("slow.ts", slow).catch((e: Error) => e);
      await until(() => engine.state === "open", 5000, "the run request");
      await new Promise((r) => setTimeout(r, 700));
      sshd.dropConnections();
      const err = (await running) as Error;
      expect(err.message).toMatch(
        new RegExp(
          `the run's outcome is unknown: the SSH connection to ${profile.user}@127\\.0\\.0\\.1:${sshd.port} dropped.*reconnects by itself`,
        ),
      );
      await expect(engine.workspace()).resolves.toBeDefined(); // queued until the reconnect, then answered
      await until(() => engine.state === "open", 20_000, "the reconnect");
      expect(engine.engineWas).toBe("reused");
      const run = await engine.runToEnd("p.ts", PIPELINE);
      expectSameRows(await allRows(engine, run.result.id, run.result.rows), await duck.rows(ORACLE), "after reconnect");
      await engine.release(run.result.id);
    } finally {
      engine.close();
    }
  });

  it("refuses a wrong host key, and names a wrong Basin command or workspace folder", async () => {
    await expect(RemoteEngine.connect({ ...profile, knownHosts: sshd.wrongKnownHosts })).rejects.toThrow(
      /differs from the one in .*wrong_known_hosts/,
    );
    const other = makeTempDir("basin-remote-ws2-");
    try {
      await expect(
        RemoteEngine.connect({ ...profile, basin: "/nonexistent/basin", workspace: other }, { timeoutMs: 10_000 }),
      ).rejects.toThrow(
        /cannot start Basin on .*127\.0\.0\.1:\d+ with `\/nonexistent\/basin serve`: basin serve exited:[\s\S]*check the profile's "basin" command/,
      );
    } finally {
      removeDir(other);
    }
    await expect(RemoteEngine.connect({ ...profile, workspace: "/nonexistent/folder" })).rejects.toThrow(
      /no folder \/nonexistent\/folder to open as the workspace/,
    );
  });

  it("basin run --cluster PROFILE runs the pipeline on the host and prints its result", async () => {
    const local = makeTempDir("basin-remote-cli-");
    try {
      const config = join(local, "config");
      mkdirSync(config);
      saveProfile(profile, join(config, "profiles.json"));
      writeText(
        local,
        "p.ts",
        `${PIPELINE}// sorted, so the printed order is fixed\n`.replace(
          'count().alias("n"), col("fare").max().alias("top"))',
          'count().alias("n"), col("fare").max().alias("top")).sort("city")',
        ),
      );
      const r = await runBasin(["run", "p.ts", "--cluster", "box"], {
        cwd: local,
        env: { BASIN_CONFIG_DIR: config },
        timeoutMs: 60_000,
      });
      expect(r.stderr).toMatch(/Basin engine on .*127\.0\.0\.1:\d+ \(profile box\)/);
      expect(r.code, r.stderr).toBe(0);
      const printed = parseTable(r.stdout);
      expect(printed.names).toEqual(["city", "total", "n", "top"]);
      expect(printed.footer).toBe("5 rows × 4 columns");
      const expected = await duck.rows(
        "SELECT coalesce(city, 'null'), count(*) FROM t GROUP BY city ORDER BY city NULLS LAST",
      );
      expect(printed.rows.map((row) => [row[0], Number(row[2])])).toEqual(expected.map(([c, n]) => [c, Number(n)]));
      const out = await runBasin(["run", "p.ts", "--cluster", "box", "--output", "r.csv"], {
        cwd: local,
        env: { BASIN_CONFIG_DIR: config },
      });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain('--output is not available with the remote Basin engine of profile "box" yet');
      expect(readFileSync(join(config, "profiles.json"), "utf8")).not.toMatch(/token/);
    } finally {
      removeDir(local);
    }
  });
});

describe("the workbench on the remote engine's workspace", () => {
  /** The error an RPC call fails with (one that succeeds fails the test). */
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error("the call succeeded");
      },
      (e: RpcError) => e,
    );

  it("lists, opens and saves the host's workspace files through the served RPC, runs there, and names host and path in errors", async () => {
    const local = makeTempDir("basin-remote-local-");
    writeText(local, "local-only.ts", "// must not be listed\n");
    const engine = await RemoteEngine.connect(profile);
    const server = await serve({ root: local, remote: engine });
    const client = await RpcClient.connect(
      `ws://127.0.0.1:${server.port}/?token=${server.token}`,
      `http://127.0.0.1:${server.port}`,
    );
    try {
      const before = await client.call<WorkspaceInfo>("workspace");
      expect(before).toEqual({ root: workspace, files: ["trips.csv"], host: engine.where });
      await client.call("writeFile", "sub/saved.ts", PIPELINE);
      expect(readFileSync(join(workspace, "sub/saved.ts"), "utf8")).toBe(PIPELINE);
      expect(existsSync(join(local, "sub"))).toBe(false);
      expect((await client.call<WorkspaceInfo>("workspace")).files).toEqual(["sub/", "sub/saved.ts", "trips.csv"]);
      expect(await client.call<string>("readFile", "sub/saved.ts")).toBe(PIPELINE);
      // The saved file runs there; its events come back through the local server.
      const { runId } = await client.call<{ runId: string }>("run", "sub/saved.ts");
      const done = (await client.waitFor(
        (e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId,
        30_000,
      )) as Extract<EngineEvent, { type: "runFinished" }>;
      expect(done.type, JSON.stringify(done)).toBe("runFinished");
      expect(done.result.rows).toBe(5);
      await client.call("release", done.result.id);
      const missing = await failure(client.call("readFile", "absent.ts"));
      expect(missing.error.code).toBe("BASIN_IO");
      expect(missing.error.message).toMatch(
        new RegExp(`^on ${engine.where}: absent\\.ts: ENOENT.*${workspace}/absent\\.ts`),
      );
      const outside = await failure(client.call("writeFile", "../escape.ts", "x"));
      expect(outside.error.message).toBe(
        `on ${engine.where}: ../escape.ts is outside the workspace ${workspace}; open that folder instead`,
      );
    } finally {
      client.close();
      await server.close();
      engine.close();
      removeDir(join(workspace, "sub"));
      removeDir(local);
    }
  }, 60_000);

  it("basin serve --cluster PROFILE serves the host's workspace; a local folder with it is refused", async () => {
    const local = makeTempDir("basin-remote-serve-");
    const config = join(local, "config");
    mkdirSync(config);
    saveProfile(profile, join(config, "profiles.json"));
    const child = spawn(process.execPath, [BASIN_BIN, "serve", "--port", "0", "--cluster", "box"], {
      cwd: local,
      env: { ...process.env, BASIN_CONFIG_DIR: config },
    });
    try {
      const { url, out } = await printedUrl(child, 40_000);
      expect(out).toContain(
        `Basin workbench for ${workspace} on ${profile.user}@127.0.0.1:${sshd.port} (profile box, its Basin engine reused)`,
      );
      const client = await RpcClient.open(url);
      expect(await client.call<WorkspaceInfo>("workspace")).toMatchObject({ root: workspace, files: ["trips.csv"] });
      await client.call("writeFile", "from-cli.ts", "// saved on the host\n");
      expect(readFileSync(join(workspace, "from-cli.ts"), "utf8")).toBe("// saved on the host\n");
      client.close();
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
      const both = await runBasin(["serve", ".", "--cluster", "box"], {
        cwd: local,
        env: { BASIN_CONFIG_DIR: config },
      });
      expect(both.code).toBe(1);
      expect(both.stderr).toContain("basin serve --cluster box opens the workspace on 127.0.0.1");
    } finally {
      child.kill("SIGKILL");
      removeDir(join(workspace, "from-cli.ts"));
      removeDir(local);
    }
  }, 60_000);

  it("basin stop PROFILE stops the engine sessions left on the host; with none running it says so", async () => {
    const local = makeTempDir("basin-remote-stop-");
    try {
      const config = join(local, "config");
      mkdirSync(config);
      saveProfile(profile, join(config, "profiles.json"));
      const engine = await RemoteEngine.connect(profile, { reconnect: false });
      engine.close(); // the engine on the host keeps running
      const where = `${profile.user}@127.0.0.1:${sshd.port} (profile box)`;
      const stop = () =>
        runBasin(["stop", "box"], { cwd: local, env: { BASIN_CONFIG_DIR: config }, timeoutMs: 30_000 });
      const first = await stop();
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`stopped the Basin engine on ${where}`);
      const again = await stop();
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`no Basin engine was running on ${where}`);
      const notSsh = await runBasin(["stop", "nope"], { cwd: local, env: { BASIN_CONFIG_DIR: config } });
      expect(notSsh.code).toBe(1);
      expect(notSsh.stderr).toMatch(/nope/);
    } finally {
      removeDir(local);
    }
  }, 60_000);
});
