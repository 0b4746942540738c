// Ctrl+C and killed runs through the real `basin` command: SIGINT ends a run whose
// task never finishes within 2 s with exit code 130, and leaves no transpiled
// pipeline or spill folder behind; SIGINT while --output is written keeps the old
// file; what a killed run left is removed by the next; --output onto a link writes
// the file it points to.
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BASIN_BIN, errorLines, makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";

const dir = makeTempDir("basin-interrupt-");
const tmp = join(dir, "tmp"); // the runs' TMPDIR: what they leave there is theirs
mkdirSync(tmp);
afterAll(() => removeDir(dir));

interface Interrupted {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** ms from SIGINT to exit */
  exitMs: number;
}

/**
 * Runs `basin run <args>`, sends SIGINT `delayMs` after stderr matches `when` (or, for
 * a function, once it returns true, polled every 2 ms), and waits for the exit.
 */
function interrupt(
  args: string[],
  when: RegExp | (() => boolean),
  delayMs = 0,
  signal: NodeJS.Signals = "SIGINT",
): Promise<Interrupted> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BASIN_BIN, "run", ...args], {
      cwd: dir,
      env: { ...process.env, TMPDIR: tmp, NO_COLOR: "1" },
    });
    let stderr = "";
    let sent = 0;
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no exit in time; stderr: ${stderr}`));
    }, 30_000);
    const fire = () => {
      sent = -1;
      setTimeout(() => {
        sent = performance.now();
        child.kill(signal);
      }, delayMs);
    };
    const poll =
      typeof when === "function"
        ? setInterval(() => {
            if (!sent && when()) fire();
          }, 2)
        : undefined;
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (!sent && typeof when !== "function" && when.test(stderr)) fire();
    });
    child.on("exit", (code, sig) => {
      clearTimeout(guard);
      clearInterval(poll);
      resolve({ code, signal: sig, stderr, exitMs: performance.now() - sent });
    });
  });
}

/** A pipeline whose 64 partitions take a while to write. */
const BIG = `import { fromColumns } from "basin";
const n = 3_000_000;
export default fromColumns({ i: Array.from({ length: n }, (_, k) => k), s: Array.from({ length: n }, (_, k) => "row " + k) }, { partitions: 64 });
`;

/** Whether the temp file of an output being written holds some rows (the partitions are written as they are made). */
const writing = (out: string) => () =>
  readdirSync(dir).some((n) => n.startsWith(`.${out}.partial-`) && statSync(join(dir, n)).size > 1000);

const leftovers = () => [
  ...readdirSync(tmp).filter((n) => n.startsWith("basin-pipeline-")),
  ...(existsSync(join(tmp, "basin")) ? readdirSync(join(tmp, "basin")) : []),
];

describe("basin run and Ctrl+C", () => {
  it("a task that loops forever: SIGINT exits 130 within 2 s with BASIN_CANCELLED, leaving nothing behind", async () => {
    writeText(
      dir,
      "loop.ts",
      `import { bag } from "basin";
// Marks that the run started, then loops.
console.error("started");
export default bag.fromItems([1, 2, 3, 4], { partitions: 2 }).map((x: number) => {
  for (;;) if (x < 0) return x;
});
`,
    );
    // Well after the tasks started looping on both workers.
    const r = await interrupt(["loop.ts", "--workers", "2"], /started/, 1000);
    expect(r.code, r.stderr).toBe(130);
    expect(r.exitMs).toBeLessThan(2000);
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/^error \[BASIN_CANCELLED\]: .*interrupted/)]);
    expect(leftovers()).toEqual([]);
  });

  it("SIGINT while --output is written keeps the old file and leaves no temp file", async () => {
    writeText(dir, "big.ts", BIG);
    writeFileSync(join(dir, "out.csv"), "old\n");
    const r = await interrupt(["big.ts", "--output", "out.csv"], writing("out.csv"));
    expect(r.code, r.stderr).toBe(130);
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/^error \[BASIN_CANCELLED\]: .*old file is kept/)]);
    expect(readFileSync(join(dir, "out.csv"), "utf8")).toBe("old\n");
    expect(readdirSync(dir).filter((n) => n.includes(".partial-"))).toEqual([]);
  });

  it("SIGTERM or SIGHUP while a new --output is written cancels like Ctrl+C (exit 128 + the signal): nothing written, no temp file", async () => {
    writeText(dir, "big2.ts", BIG);
    for (const [signal, code] of [
      ["SIGTERM", 143],
      ["SIGHUP", 129],
    ] as const) {
      const r = await interrupt(["big2.ts", "--output", "fresh.csv"], writing("fresh.csv"), 0, signal);
      expect(r.code, r.stderr).toBe(code);
      expect(errorLines(r.stderr)).toEqual([
        expect.stringMatching(/^error \[BASIN_CANCELLED\]: .*nothing was written/),
      ]);
      expect(readdirSync(dir).filter((n) => n.includes("fresh.csv"))).toEqual([]);
    }
  });

  it("SIGINT while the pipeline's own top-level code loops forever ends the process at once", async () => {
    writeText(dir, "spin.ts", `console.error("spinning");\nwhile (Date.now() > 0) {}\nexport default 1;\n`);
    const r = await interrupt(["spin.ts"], /spinning/, 200);
    expect(r.signal, r.stderr).toBe("SIGINT");
    expect(r.exitMs).toBeLessThan(2000);
  });

  it("the next run removes what a killed run left: a writer's temp file, a transpiled pipeline", async () => {
    const dead = 2 ** 22 + 12345; // above any pid_max in use here: no such process
    writeFileSync(join(dir, `.small.csv.partial-${dead}-abc`), "half a fi");
    mkdirSync(join(tmp, `basin-pipeline-${dead}-xyz`));
    writeText(dir, "small.ts", `import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2] });\n`);
    const r = await runBasin(["run", "small.ts", "--output", "small.csv"], { cwd: dir, env: { TMPDIR: tmp } });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).filter((n) => n.includes(".partial-"))).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it("--output onto a symbolic link writes the file it points to and keeps the link", async () => {
    mkdirSync(join(dir, "real"));
    writeFileSync(join(dir, "real", "target.csv"), "old\n");
    symlinkSync(join("real", "target.csv"), join(dir, "link.csv"));
    const r = await runBasin(["run", "small.ts", "--output", "link.csv"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(dir, "link.csv")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, "real", "target.csv"), "utf8")).toBe("a\n1\n2\n");
  });

  it("--output onto a symbolic link to a folder of parts replaces the folder it points to and keeps the link", async () => {
    mkdirSync(join(dir, "real", "parts"), { recursive: true });
    writeFileSync(join(dir, "real", "parts", "part-00000.csv"), "old\n");
    writeFileSync(join(dir, "real", "parts", "part-00001.csv"), "old\n");
    symlinkSync(join("real", "parts"), join(dir, "parts_link.csv"));
    const r = await runBasin(["run", "small.ts", "--output", "parts_link.csv/"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(dir, "parts_link.csv")).isSymbolicLink()).toBe(true);
    const parts = readdirSync(join(dir, "real", "parts")).sort();
    expect(parts.length).toBeGreaterThan(0);
    const text = parts.map((f) => readFileSync(join(dir, "real", "parts", f), "utf8")).join("");
    expect(text).not.toContain("old");
    expect(text.split("\n").filter((l) => /^\d+$/.test(l))).toEqual(["1", "2"]);
    expect(readdirSync(join(dir, "real")).filter((n) => n.startsWith(".parts."))).toEqual([]);
  });
});
