// The bench's command line: what reaches the GPU contenders.
import { describe, expect, it } from "vitest";
import { parseOptions } from "../../bench/run.js";

describe("bench options", () => {
  it("passes a device memory limit and direct copies to the GPU contenders only when asked", () => {
    const plain = parseOptions(["--suite", "groupby", "--systems", "duckdb,basin-gpu"]);
    expect(plain.deviceMemoryLimit).toBeUndefined();
    expect(plain.deviceDirectCopies).toBeUndefined();
    const asked = parseOptions(["--suite", "groupby", "--device-memory-limit", "2.4GB", "--device-direct-copies"]);
    expect(asked.deviceMemoryLimit).toBe("2.4GB");
    expect(asked.deviceDirectCopies).toBe(true);
  });
});
