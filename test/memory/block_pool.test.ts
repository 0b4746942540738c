// Large buffers reuse the pages of freed ones (native/src/store/block_pool.h): a fresh
// buffer costs a page fault per 4 KiB, which at TPC-H SF 10 made the kernel's time as
// large as the engine's. The kept memory goes back to the system on release and when
// the engine is idle, and never beyond a quarter of the memory limit.
import { afterEach, expect, it } from "vitest";
import { col, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { IDLE_RELEASE_MS } from "../../engine/cluster/local.js";
import { native, type Handle } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const ROWS = 4_000_000; // 32 MB of float64; a concat of two is 64 MB (16,384 pages)
const PAGES = (2 * ROWS * 8) / 4096;
const faults = () => process.resourceUsage().minorPageFault;

function floats(): Handle {
  const values = new Float64Array(ROWS);
  for (let i = 0; i < ROWS; i++) values[i] = i * 0.5;
  return native().tableFromJs({ rows: ROWS, names: ["x"], columns: [{ type: "float64", values, validity: null }] });
}

/** Page faults taken while concatenating `h` with itself; the result is released after. */
function concatFaults(h: Handle): number {
  const f0 = faults();
  const c = native().concat([h, h]);
  const taken = faults() - f0;
  expect(native().tableRows(c)).toBe(2 * ROWS);
  native().release(c);
  return taken;
}

/** `body` over a fresh 32 MB float table, with the pool emptied first; the table is released after. */
function withFloats(body: (h: Handle) => void): void {
  native().releaseFreeMemory();
  const h = floats();
  try {
    body(h);
  } finally {
    native().release(h);
  }
}

let spillDir: string | undefined;
afterEach(() => {
  native().configureMemory({ hostLimit: -1, diskLimit: -1, directory: "" });
  if (spillDir) removeDir(spillDir);
  spillDir = undefined;
  native().releaseFreeMemory();
});

it("writes a new large buffer into the pages a freed one of its size left, until they are released", () =>
  withFloats((h) => {
    const first = concatFaults(h);
    const second = concatFaults(h);
    expect(native().memoryStats().pooledBytes).toBeGreaterThanOrEqual(2 * ROWS * 8);
    expect(native().releaseFreeMemory()).toBe(true);
    expect(native().memoryStats().pooledBytes).toBe(0);
    const third = concatFaults(h);
    console.log(`page faults: fresh ${first}, reused ${second}, after release ${third} (of ${PAGES} pages)`);
    expect(first, "a fresh buffer faults in its pages").toBeGreaterThan(PAGES * 0.9);
    expect(second, "the freed buffer's pages are written again").toBeLessThan(PAGES * 0.1);
    expect(third, "released pages went back to the system").toBeGreaterThan(PAGES * 0.9);
  }));

it("cuts a larger freed block for smaller buffers instead of faulting in fresh pages", () =>
  withFloats((h) => {
    concatFaults(h); // leaves one 64 MB block in the pool
    const f0 = faults();
    // 32 parts of ~1 MB each (32 MB in all): every one a cut of the kept block.
    const parts = native().hashPartition(h, [0], 32);
    const taken = faults() - f0;
    const rows = parts.reduce((n, p) => n + native().tableRows(p), 0);
    for (const p of parts) native().release(p);
    console.log(`page faults for 32 parts cut from a freed block: ${taken} (of ${PAGES / 2} pages)`);
    expect(rows).toBe(ROWS);
    expect(taken, "the parts were written into the freed block's pages").toBeLessThan((PAGES / 2) * 0.1);
    expect(native().memoryStats().pooledBytes, "the cut-off rest and the parts are kept").toBeGreaterThanOrEqual(
      2 * ROWS * 8,
    );
  }));

it("keeps no more freed memory than a quarter of the memory limit", () =>
  withFloats((h) => {
    spillDir = makeTempDir();
    // The pool may keep 50 MiB: less than the 64 MB buffer.
    native().configureMemory({ hostLimit: 200 * 2 ** 20, diskLimit: -1, directory: spillDir });
    concatFaults(h);
    expect(native().memoryStats().pooledBytes).toBe(0);
    expect(concatFaults(h), "nothing was kept to reuse").toBeGreaterThan(PAGES * 0.9);
  }));

it("gives kept memory back once the engine has been idle for a while", async () => {
  const cluster = new LocalCluster({ workers: 2 });
  try {
    const x = Array.from({ length: 2_000_000 }, (_, i) => i % 1000);
    const frame = fromColumns({ x }).withColumns({ y: col("x").mul(2) });
    const t = await frame.filter(col("y").gt(10)).compute({ cluster });
    expect(t.numRows).toBe(2_000_000 - 6 * 2000);
    expect(native().memoryStats().pooledBytes, "the run's freed buffers are kept").toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, IDLE_RELEASE_MS + 500));
    expect(native().memoryStats().pooledBytes).toBe(0);
  } finally {
    await cluster.close();
  }
});
