// `basin serve` as a user starts it: prints a tokenized URL on 127.0.0.1, answers
// the workbench's WebSocket with the folder as workspace, and stops on SIGTERM.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BASIN_BIN, makeTempDir, printedUrl, removeDir, runBasin, writeText } from "../helpers/cli.js";
import { RpcClient } from "../helpers/rpc_client.js";

describe("basin serve", () => {
  it("prints a URL with a token, serves the folder as the workspace, and exits 0 on SIGTERM", async () => {
    const dir = makeTempDir();
    writeText(dir, "data.csv", "a,b\n1,x\n2,y\n");
    writeText(dir, "p.ts", 'import { readCsv } from "basin";\nexport default readCsv("data.csv");\n');
    const child = spawn(process.execPath, [BASIN_BIN, "serve", dir, "--port", "0"], {
      cwd: "/",
      env: { ...process.env, BASIN_WORKERS: "1" },
    });
    try {
      const { url } = await printedUrl(child, 20_000);
      expect(url.searchParams.get("token")!.length).toBeGreaterThanOrEqual(32);
      const client = await RpcClient.connect(`ws://${url.host}/?token=${url.searchParams.get("token")}`, url.origin);
      expect((await client.call<{ files: string[] }>("workspace")).files).toEqual(["data.csv", "p.ts"]);
      // A relative data path in the pipeline resolves inside the workspace.
      const { runId } = await client.call<{ runId: string }>("run", "p.ts");
      const done = await client.waitFor(
        (e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId,
      );
      expect(done.type === "runFinished" && done.result.rows).toBe(2);
      client.close();
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
    } finally {
      child.kill("SIGKILL");
      removeDir(dir);
    }
  });

  it("a pipeline that fills the JavaScript heap fails its run with BASIN_PIPELINE; the server lives on", async () => {
    const dir = makeTempDir();
    writeText(dir, "p.ts", 'import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2] });\n');
    writeText(
      dir,
      "oom.ts",
      'import { fromColumns } from "basin";\nconst xs: number[][] = [];\nfor (;;) xs.push(new Array(1e6).fill(1.5));\nexport default fromColumns({ a: [1] });\n',
    );
    // A small heap (the driver thread's follows the process's) fills in a second. Node ends
    // the thread, not the process, when the heap fills in steps under 16 MB (its allowance
    // past the limit); one larger allocation past it still ends the process.
    const child = spawn(process.execPath, ["--max-old-space-size=192", BASIN_BIN, "serve", dir, "--port", "0"], {
      cwd: "/",
      env: { ...process.env, BASIN_WORKERS: "1" },
    });
    let died = false;
    child.once("exit", () => (died = true));
    try {
      const { url } = await printedUrl(child, 20_000);
      const client = await RpcClient.connect(`ws://${url.host}/?token=${url.searchParams.get("token")}`, url.origin);
      const runToEnd = async (file: string) => {
        const { runId } = await client.call<{ runId: string }>("run", file);
        return client.waitFor((e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId, 30_000);
      };
      const oom = await runToEnd("oom.ts");
      expect(oom.type === "runFailed" && oom.error.code).toBe("BASIN_PIPELINE");
      expect(oom.type === "runFailed" && oom.error.message).toContain("ran out of JavaScript memory");
      const next = await runToEnd("p.ts");
      expect(next.type === "runFinished" && next.result.rows).toBe(2);
      expect(died, "the server process is alive").toBe(false);
      client.close();
    } finally {
      child.kill("SIGKILL");
      removeDir(dir);
    }
  }, 60_000);

  it("refuses a folder that does not exist, a file, a bad port, and flags of other commands", async () => {
    const dir = makeTempDir();
    try {
      const missing = await runBasin(["serve", "nope"], { cwd: dir });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("nope: no such folder to open as the workspace");
      const port = await runBasin(["serve", ".", "--port", "http"], { cwd: dir });
      expect(port.code).toBe(2);
      expect(port.stderr).toContain('--port needs a port number, got "http"');
      writeText(dir, "p.ts", "export default 1;\n");
      const file = await runBasin(["serve", "p.ts"], { cwd: dir });
      expect(file.code).toBe(1);
      expect(file.stderr).toContain("p.ts is a file; basin serve opens a folder as the workspace (basin serve .)");
      // A flag of another command is refused, not ignored.
      const flag = await runBasin(["demo", "--output", "x.csv"], { cwd: dir });
      expect(flag.code).toBe(2);
      expect(flag.stderr).toContain("--output applies to basin run only, not basin demo");
      const empty = await runBasin(["run", "p.ts", "--output", ""], { cwd: dir });
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain("--output needs a file or folder path");
    } finally {
      removeDir(dir);
    }
  });
});
