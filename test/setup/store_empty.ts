// After every test file: the default cluster is stopped and, once JS has collected the
// results whose arrays share stored buffers, the native store holds nothing — no test
// may leak a buffer.
import { afterAll, expect } from "vitest";
import { closeDefaultCluster } from "../../engine/cluster/default.js";
import { native } from "../../engine/native/addon.js";
import { collectResults } from "../../engine/run/take.js";

afterAll(async () => {
  await closeDefaultCluster();
  await collectResults(); // vitest.config.ts runs the tests with --expose-gc
  expect(native().storeStats(), "the native store must be empty after the test file").toMatchObject({
    handles: 0,
    buffers: 0,
  });
});
