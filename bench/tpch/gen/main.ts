/**
 * TPC-H data generator: `npm run tpch:gen -- --sf 1 --out DIR [--workers N] [--csv]`
 * writes DIR/<table>.parquet for the eight tables (and DIR/<table>.csv with --csv).
 */
import { parseArgs } from "node:util";
import { generateTpch } from "./generate.js";

function main(argv: string[]): Promise<void> | void {
  const { values } = parseArgs({
    args: argv,
    options: {
      sf: { type: "string", default: "1" },
      out: { type: "string" },
      workers: { type: "string" },
      csv: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write("usage: npm run tpch:gen -- --sf 1 [--out DIR] [--workers N] [--csv]\n");
    return;
  }
  const sf = Number(values.sf);
  if (!(sf > 0) || !Number.isFinite(sf)) throw new Error(`--sf: expected a positive scale factor, got "${values.sf}"`);
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 0))
    throw new Error(`--workers: expected a count (0 = no worker threads), got "${values.workers}"`);
  const out = values.out ?? `.bench-data/tpch-sf${values.sf}`;
  return generateTpch({ sf, out, workers, csv: values.csv, log: (l) => process.stderr.write(l + "\n") }).then((s) => {
    for (const t of s.tables)
      process.stdout.write(
        `${t.table.padEnd(9)} ${String(t.rows).padStart(11)} rows ${(t.bytes / 1e6).toFixed(1).padStart(9)} MB\n`,
      );
    process.stdout.write(`sf ${sf}: ${s.seconds.toFixed(1)} s into ${out}\n`);
  });
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`tpch:gen: ${(e as Error).message}\n`);
  process.exit(1);
}
