// The workbench's WebSocket transport against a real `serve()`: requests and
// events, engine errors as BasinErrors, pending requests failing clearly when the
// engine goes away, and reconnecting when it comes back on the same port.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { BasinError } from "../../engine/common/errors.js";
import type { EngineEvent } from "../../engine/common/rpc.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import {
  TOKEN_REFUSED,
  WsEngineClient,
  type ConnectionState,
  type SocketLike,
} from "../../renderer/common/ws_client.js";

let dir: string;
let cluster: LocalCluster;
let server: RunningServer;

const connect = (s: RunningServer) => {
  const origin = `http://127.0.0.1:${s.port}`;
  return new WsEngineClient({
    url: `ws://127.0.0.1:${s.port}/?token=${s.token}`,
    createSocket: (url) => new WebSocket(url, { origin }) as unknown as SocketLike,
    reconnectMs: 50,
  });
};

function until<T>(client: WsEngineClient, match: (e: EngineEvent) => e is EngineEvent & T, ms = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error(`no matching event within ${ms} ms`))), ms);
    const off = client.onEvent((e) => match(e) && (clearTimeout(timer), off(), resolve(e)));
  });
}

function state(client: WsEngineClient, want: ConnectionState, ms = 10_000): Promise<void> {
  if (client.state === want) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error(`still ${client.state} after ${ms} ms`))), ms);
    const off = client.onConnection((s) => s === want && (clearTimeout(timer), off(), resolve()));
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-ws-"));
  writeFileSync(
    join(dir, "t.ts"),
    `import { fromColumns } from "basin";\nexport default fromColumns({ x: [1, 2, null, 4], s: ["a", "東京", null, "d"] }, { partitions: [0, 1, 3, 0] });\n`,
  );
  writeFileSync(join(dir, "loops.ts"), `while (true) {}\nexport default 1;\n`);
  cluster = new LocalCluster({ workers: 1 });
  server = await serve({ root: dir, cluster });
});

afterAll(async () => {
  await server.close();
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("WsEngineClient", () => {
  it("runs a pipeline, receives its events and pages its result", async () => {
    const client = connect(server);
    try {
      expect((await client.workspace()).files).toEqual(["loops.ts", "t.ts"]); // queued until the socket opened
      const done = until(client, (e): e is Extract<EngineEvent, { type: "runFinished" }> => e.type === "runFinished");
      const { runId } = await client.run("t.ts");
      const fin = await done;
      expect(fin.runId).toBe(runId);
      expect(fin.result.rows).toBe(4);
      const page = await client.page(fin.result.id, 1, 2);
      expect(page).toEqual({
        resultId: fin.result.id,
        offset: 1,
        columns: ["x", "s"],
        values: [
          [2, null],
          ["東京", null],
        ],
      });
      const sorted = await client.view(
        fin.result.id,
        [{ column: "x", descending: true }],
        [{ column: "x", kind: "range", min: 2 }],
      );
      expect((await client.page(sorted.id, 0, 10, ["x"])).values).toEqual([[4, 2]]);
      expect((await client.profile(fin.result.id, "x")).nulls).toBe(1);
      await client.release(sorted.id);
      await client.release(fin.result.id);
    } finally {
      client.close();
    }
  });

  it("rejects with the engine's BasinError", async () => {
    const client = connect(server);
    try {
      const err = await client.page("result-nope", 0, 10).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BasinError);
      expect((err as BasinError).code).toBe("BASIN_PLAN");
      expect((err as BasinError).message).toMatch(/no result "result-nope".*run the pipeline again/);
      await expect(client.readFile("../outside.ts")).rejects.toThrow(/outside the workspace/);
    } finally {
      client.close();
    }
  });

  it("fails waiting requests clearly when the engine stops, and reconnects when it is back", async () => {
    const own = new LocalCluster({ workers: 1 });
    let s = await serve({ root: dir, cluster: own });
    const port = s.port,
      token = s.token;
    const client = connect(s);
    try {
      await state(client, "open");
      const { runId } = await client.run("loops.ts");
      expect(runId).toMatch(/^run-/);
      // A request the engine will not answer before it stops.
      const waiting = client.profile("result-1", "x").catch((e: unknown) => e);
      void s.close();
      const err = (await waiting) as BasinError;
      expect(err).toBeInstanceOf(BasinError);
      expect(err.message).toMatch(/profile: the connection to the engine dropped.*reconnects by itself/);
      await state(client, "closed");
      s = await serve({ root: dir, cluster: own, port, token });
      await state(client, "open");
      expect((await client.workspace()).files).toContain("t.ts");
    } finally {
      client.close();
      await s.close();
      await own.close();
    }
    await expect(client.workspace()).rejects.toThrow(/connection to the engine is closed/);
  });

  it("stops reconnecting, saying to open the new URL, when basin serve comes back with another token", async () => {
    const own = new LocalCluster({ workers: 1 });
    let s = await serve({ root: dir, cluster: own });
    const port = s.port;
    const client = new WsEngineClient({
      url: `ws://127.0.0.1:${port}/?token=${s.token}`,
      createSocket: (url) => new WebSocket(url, { origin: `http://127.0.0.1:${port}` }) as unknown as SocketLike,
      reconnectMs: 50,
    });
    try {
      await state(client, "open");
      await s.close();
      await state(client, "closed");
      s = await serve({ root: dir, cluster: own, port }); // a fresh token
      await state(client, "crashed");
      expect(client.crashMessage).toBe(TOKEN_REFUSED);
      expect(client.crashMessage).toContain("Open the URL it printed");
    } finally {
      client.close();
      await s.close();
      await own.close();
    }
  });
});
