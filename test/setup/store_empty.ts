// After every test file: the default cluster is stopped and the native store holds
// nothing — no test may leak a buffer.
import { afterAll, expect } from "vitest";
import { closeDefaultCluster } from "../../engine/cluster/default.js";
import { native } from "../../engine/native/addon.js";

afterAll(async () => {
  await closeDefaultCluster();
  expect(native().storeStats(), "the native store must be empty after the test file").toMatchObject({ handles: 0, buffers: 0 });
});
