// Reads vitest's JSON report and prints the closing "N passed, N failed, N skipped"
// line. In strict mode (BASIN_TEST_STRICT=1) a skipped or todo test counts as failed,
// except in the GPU suite (test/gpu/), which skips where no GPU is visible.
import { existsSync, readFileSync } from "node:fs";
import { relative, sep } from "node:path";

const [file, status] = process.argv.slice(2);
if (!existsSync(file)) {
  console.log(`ci: vitest wrote no report (exit ${status})`);
  console.log("0 passed, 1 failed, 0 skipped");
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, "utf8"));
let passed = 0,
  failed = 0,
  skipped = 0;
const strict = process.env.BASIN_TEST_STRICT === "1";
/** Only files under test/gpu/ may skip: the path, not a name that happens to say "gpu". */
const mayskip = (name) => relative(process.cwd(), name).split(sep).slice(0, 2).join("/") === "test/gpu";
for (const f of report.testResults) {
  for (const t of f.assertionResults) {
    if (t.status === "passed") passed++;
    else if (t.status === "failed") failed++;
    else if (strict && !mayskip(f.name)) {
      console.log(`ci: skipped in strict mode counts as failed: ${f.name}: ${t.fullName}`);
      failed++;
    } else skipped++;
  }
  if (f.status === "failed" && f.assertionResults.length === 0) {
    console.log(`ci: test file failed to run: ${f.name}: ${f.message ?? ""}`);
    failed++;
  }
}
if (Number(status) !== 0 && failed === 0) failed = 1; // vitest failed outside any test (e.g. a hook)
if (skipped > 0) console.log(`ci: ${skipped} test(s) skipped in test/gpu/ (no GPU visible here)`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
