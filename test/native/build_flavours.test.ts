// The native build works both ways: with CUDA where nvcc is found, CPU-only when it
// is not, and without lz4/zstd where their headers are missing (forced here with
// BASIN_DISABLE_CUDA and BASIN_DISABLE_COMPRESSION) — each loads and says what it has.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { native, type JsTable, type NativeAddon } from "../../engine/native/addon.js";

const ROOT = new URL("../..", import.meta.url).pathname;

function hasNvcc(): boolean {
  try {
    execFileSync("nvcc", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("native build flavours", () => {
  it("the default build enables CUDA exactly when nvcc is found, and loads without a GPU driver", () => {
    const info = native().buildInfo();
    expect(info.cuda).toBe(hasNvcc());
    expect(info.gpus).toBeGreaterThanOrEqual(0);
  });

  it("defines every Basin function the addon calls (one left undefined would load, then fail when called)", () => {
    const addon = process.env.BASIN_ADDON ?? join(ROOT, "native/build/Release/basin.node");
    const undefinedSymbols = execFileSync("nm", ["-D", "-C", "--undefined-only", addon], { encoding: "utf8" });
    expect(undefinedSymbols.split("\n").filter((line) => line.includes("basin::"))).toEqual([]);
  });

  it("builds and loads on a minimal machine (no CUDA, no lz4/zstd): zero GPUs, spills uncompressed, refuses lz4 naming the package", async () => {
    const out = mkdtempSync(join(tmpdir(), "basin-min-build-"));
    try {
      execFileSync(
        process.execPath,
        [
          join(ROOT, "node_modules/cmake-js/bin/cmake-js"),
          "compile",
          "-d",
          "native",
          "--out",
          out,
          "--CDBASIN_DISABLE_CUDA=ON",
          "--CDBASIN_DISABLE_COMPRESSION=ON",
        ],
        { cwd: ROOT, stdio: "pipe" },
      );
      const addon = createRequire(import.meta.url)(join(out, "Release/basin.node")) as NativeAddon;
      expect(addon.buildInfo()).toEqual({ cuda: false, gpus: 0, napiVersion: 8, spillCompression: ["none"] });
      const spill = join(out, "spill");
      mkdirSync(spill);
      expect(() =>
        addon.configureMemory({ hostLimit: 1e12, diskLimit: -1, directory: spill, compression: "lz4" }),
      ).toThrow(
        expect.objectContaining({
          code: "BASIN_PLAN",
          message: expect.stringContaining("apt-get install -y liblz4-dev"),
        }),
      );
      // Its default is what it has: spilling works, uncompressed.
      addon.configureMemory({ hostLimit: 1e12, diskLimit: -1, directory: spill });
      expect(addon.memoryStats().compression).toBe("none");
      const table: JsTable = {
        rows: 3,
        names: ["v"],
        columns: [{ type: "float64", values: new Float64Array([1.5, -2, 3]), validity: new Uint8Array([1, 0, 1]) }],
      };
      const h = addon.tableFromJs(table);
      try {
        addon.memorySpill(1e12);
        expect(addon.isSpilled(h)).toBe(true);
        expect(readdirSync(spill)).toHaveLength(1);
        await addon.readBack(h);
        const back = addon.tableToJs(h);
        const v = back.columns[0].values as Float64Array;
        expect([v[0], v[2]]).toEqual([1.5, 3]); // the null slot's value is unspecified
        expect([...back.columns[0].validity!]).toEqual([1, 0, 1]);
      } finally {
        addon.release(h);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});
