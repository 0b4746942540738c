import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The store-empty check collects garbage first: a result's arrays may share buffers
    // with stored tables, and those stay alive (and counted) until JS collects them.
    execArgv: ["--expose-gc"],
    setupFiles: ["test/setup/store_empty.ts"],
  },
});
