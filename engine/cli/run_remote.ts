// `basin run file.ts --cluster PROFILE` where PROFILE is an ssh profile without a
// Dask scheduler: the pipeline runs on the Basin engine of that host (started or
// reused over SSH), its data paths relative to the profile's remote workspace.
// Only the rows printed cross the connection.
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import type { Value } from "../run/table.js";
import { BasinError } from "../common/errors.js";
import type { Page, ResultInfo, WireValue } from "../common/rpc.js";
import type { DType } from "../common/types.js";
import type { SshProfile } from "../cluster/profiles.js";
import { RemoteEngine } from "../cluster/remote/remote_engine.js";
import { formatTable, MAX_PRINTED_ROWS, type PrintableTable } from "./format_table.js";
import { ProgressBar } from "./progress.js";
import { noteStop, STOP_SIGNALS } from "./stop_signals.js";

/** A wire cell as the CLI prints local values (timestamps as Dates when exact to the millisecond). */
function fromWire(type: DType, v: WireValue): Value {
  if (v === null) return null;
  if (type === "float64" && typeof v === "string") return Number(v);
  if (type === "timestamp" && typeof v === "string")
    return /\.\d{3}Z$/.test(v) ? new Date(v) : v.replace("T", " ").replace(/Z$/, "");
  return v;
}

/** The head and tail rows of a remote result (what formatTable shows), as a printable table. */
async function printable(engine: RemoteEngine, info: ResultInfo, maxRows: number): Promise<PrintableTable> {
  const half = Math.floor(maxRows / 2);
  const ranges: [number, number][] =
    info.rows <= maxRows
      ? [[0, info.rows]]
      : [
          [0, half],
          [info.rows - half, half],
        ];
  const pages: Page[] = [];
  for (const [offset, limit] of ranges) if (limit > 0) pages.push(await engine.page(info.id, offset, limit));
  const names = info.schema.map((f) => f.name);
  return {
    schema: info.schema,
    numRows: info.rows,
    columnNames: names,
    column(name: string): Value[] {
      const c = names.indexOf(name);
      const out: Value[] = [];
      for (const p of pages) p.values[c].forEach((v, r) => (out[p.offset + r] = fromWire(info.schema[c].type, v)));
      return out;
    },
  };
}

/**
 * Runs `file` on the host of `profile` and prints its result as `basin run` does locally.
 *
 * @example
 * await runRemote("p.ts", { kind: "ssh", name: "gpu", host: "gpu.lab", user: "me", workspace: "data" });
 */
export async function runRemote(
  file: string,
  profile: SshProfile,
  opts: { output?: string; explain?: boolean },
): Promise<void> {
  if (opts.output || opts.explain)
    throw new BasinError(
      "BASIN_PLAN",
      `--${opts.output ? "output" : "explain"} is not available with the remote Basin engine of profile "${profile.name}" yet; run without it, or open the host's workspace in the workbench and export from there`,
    );
  if (!existsSync(file))
    throw new BasinError("BASIN_IO", `${file}: no such pipeline file (looked in ${process.cwd()})`);
  const source = readFileSync(file, "utf8");
  const engine = await RemoteEngine.connect(profile, { reconnect: false });
  const bar = new ProgressBar(process.stderr);
  const ac = new AbortController();
  const onSigint = (signal: NodeJS.Signals) => {
    noteStop(signal);
    ac.abort("interrupted");
  };
  for (const sig of STOP_SIGNALS) process.once(sig, onSigint);
  try {
    process.stderr.write(
      `${engine.engineWas === "reused" ? "using the" : "started a"} Basin engine on ${engine.where} (profile ${profile.name})\n`,
    );
    const t0 = performance.now();
    let run;
    try {
      run = await engine.runToEnd(basename(file), source, { onProgress: (p) => bar.update(p), signal: ac.signal });
    } finally {
      bar.done();
    }
    const secs = ((performance.now() - t0) / 1000).toFixed(2);
    try {
      const table = await printable(engine, run.result, MAX_PRINTED_ROWS);
      process.stderr.write(`${run.tasks} tasks in ${secs} s on ${profile.host}\n`);
      process.stdout.write(`${formatTable(table)}\n`);
    } finally {
      // The results stay in the remote engine until released.
      for (const r of [run.result, ...run.shown]) await engine.release(r.id).catch(() => {});
    }
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSigint);
    engine.close();
  }
}
