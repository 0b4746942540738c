// Reads vitest's JSON report and prints the closing "N passed, N failed" line.
// In strict mode (BASIN_TEST_STRICT=1) a skipped or todo test counts as failed:
// only the GPU suite may skip, and it names itself "gpu".
import { existsSync, readFileSync } from "node:fs";

const [file, status] = process.argv.slice(2);
if (!existsSync(file)) {
  console.log(`ci: vitest wrote no report (exit ${status})`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, "utf8"));
let passed = 0, failed = 0;
const strict = process.env.BASIN_TEST_STRICT === "1";
for (const f of report.testResults) {
  for (const t of f.assertionResults) {
    if (t.status === "passed") passed++;
    else if (t.status === "failed") failed++;
    else if (strict && !/\bgpu\b/i.test(`${f.name} ${t.fullName}`)) {
      console.log(`ci: skipped in strict mode counts as failed: ${t.fullName}`);
      failed++;
    }
  }
  if (f.status === "failed" && f.assertionResults.length === 0) {
    console.log(`ci: test file failed to run: ${f.name}: ${f.message ?? ""}`);
    failed++;
  }
}
if (Number(status) !== 0 && failed === 0) failed = 1; // vitest failed outside any test (e.g. a hook)
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
