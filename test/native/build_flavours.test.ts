// The native build works both ways: with CUDA where nvcc is found, CPU-only when
// it is not (forced here with BASIN_DISABLE_CUDA) — and both load and report GPUs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { native, type NativeAddon } from "../../engine/native/addon.js";

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

  it("builds and loads CPU-only with BASIN_DISABLE_CUDA, reporting zero GPUs", () => {
    const out = mkdtempSync(join(tmpdir(), "basin-cpu-build-"));
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
        ],
        { cwd: ROOT, stdio: "pipe" },
      );
      const addon = createRequire(import.meta.url)(join(out, "Release/basin.node")) as NativeAddon;
      expect(addon.buildInfo()).toEqual({ cuda: false, gpus: 0, napiVersion: 8 });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});
