// `npm run bench`: runs the suites bench/run.ts describes and prints their tables.
import { parseOptions, runBench } from "./run.js";

runBench(parseOptions(process.argv.slice(2))).then(
  (text) => process.stdout.write(text + "\n"),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
