// The seed computation: x + x.T - x.mean(axis=0), summed, for an n × n
// float64 array of seeded random values; Basin's time and peak store memory next
// to NumPy's time for the same computation (python3 with numpy, if present).
//
//   node dist/bench/array.js [--n 4000] [--chunks 1000] [--workers 4]
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { array, LocalCluster } from "../engine/api/index.js";
import { native } from "../engine/native/addon.js";

const { values } = parseArgs({
  options: { n: { type: "string" }, chunks: { type: "string" }, workers: { type: "string" } },
});
const n = Number(values.n ?? 4000);
const chunks = Number(values.chunks ?? 1000);
const workers = values.workers ? Number(values.workers) : undefined;

const cluster = new LocalCluster({ workers });
const x = array.random.random([n, n], { seed: 42, chunks });
const y = x
  .add(x.T)
  .sub(x.mean({ axis: 0 }))
  .sum();
const t0 = performance.now();
const r = await y.compute({ cluster });
const secs = (performance.now() - t0) / 1000;
const peak = native().storeStats().peakBytes;
await cluster.close();
console.log(
  `basin  n=${n} chunks=${chunks} workers=${cluster.workerCount}: ${secs.toFixed(2)} s, peak store ${(peak / 2 ** 30).toFixed(2)} GiB, sum ${Number(r.data[0])}, peak rss ${(process.resourceUsage().maxRSS / 2 ** 20).toFixed(2)} GiB`,
);

const script = `
import time, numpy as np, resource
n = ${n}
x = np.random.default_rng(42).random((n, n))
t = time.perf_counter()
s = (x + x.T - x.mean(axis=0)).sum()
print(f"numpy  n={n}: {time.perf_counter() - t:.2f} s, peak rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB, sum {s}")
`;
try {
  process.stdout.write(execFileSync("python3", ["-c", script], { encoding: "utf8" }));
} catch (e) {
  console.log(`numpy: not run (${(e as Error).message.split("\n")[0]})`);
}
