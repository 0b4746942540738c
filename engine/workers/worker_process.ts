// Entry point of a worker process (each GPU's worker, and CPU workers where asked):
// the same task loop as a worker thread, but with a store of its own, so a crash or
// a sticky CUDA error ends this process only. Task outputs stay here until the engine
// asks for them (`save`) or lets them go (`release`); inputs made elsewhere arrive as
// files (`load`).
import { BasinError } from "../common/errors.js";
import { applyMemory } from "../memory/limits.js";
import { addSpill, spillCounters } from "../memory/status.js";
import { native, type GpuFault } from "../native/addon.js";
import type { ProcessReply, ProcessRequest, ResultMessage, WorkerStats } from "./protocol.js";
import { runTask } from "./run_task.js";
import { guardExit } from "./user_exit.js";

if (!process.send) throw new Error("workers/worker_process.js must run as a forked process");
const exit = guardExit();
/** Answers the engine; an engine gone meanwhile (its channel broke) ends this worker quietly. */
function send(msg: ProcessReply): void {
  process.send!(msg, undefined, undefined, (err) => {
    if (err) exit(0);
  });
}
const gpuArg = process.argv[2];
const gpu = gpuArg === undefined || gpuArg === "" ? undefined : Number(gpuArg);
// The store spills under its limit only for tables a worker makes (owner ≠ 0): the
// engine's own thread never waits on a spill. This process is a worker.
native().setThreadOwner(1);
/** The GPU settings applied last: the same again keeps what the device caches. */
let gpuApplied = "";
/** A fault the next task injects instead of running (the GPU suite's sticky-fault check). */
let fault: GpuFault | undefined;

function faulted(key: string, kind: GpuFault): ResultMessage {
  try {
    native().gpuFault(gpu ?? 0, kind);
    throw new BasinError("BASIN_INTERNAL", `the injected ${kind} fault did not fail`);
  } catch (e) {
    return { key, ok: false, error: BasinError.from(e).toJSON() };
  }
}

function reply(id: number, work: () => number | WorkerStats | Promise<number>): void {
  Promise.resolve()
    .then(work)
    .then(
      (value): ProcessReply => ({ type: "reply", id, ok: true, value }),
      (e): ProcessReply => ({ type: "reply", id, ok: false, error: BasinError.from(e).toJSON() }),
    )
    .then(send);
}

process.on("message", (msg: ProcessRequest) => {
  const addon = native();
  switch (msg.type) {
    case "task": {
      const before = spillCounters(addon.memoryStats());
      const ran = fault ? faulted(msg.task.key, fault) : runTask(msg.task, gpu);
      const result = ran.ok ? { ...ran, spill: addSpill(spillCounters(addon.memoryStats()), before, -1) } : ran;
      fault = undefined;
      for (const h of msg.task.transient ?? []) addon.release(h);
      send({ type: "result", result } satisfies ProcessReply);
      // A CUDA error may leave the GPU's context in doubt: this process makes way for a fresh one.
      if (gpu !== undefined && !result.ok && result.error.code === "BASIN_CUDA") exit(1);
      break;
    }
    case "configure":
      reply(msg.id, () => {
        applyMemory(msg.memory);
        const key = msg.gpu ? JSON.stringify(msg.gpu) : "";
        if (msg.gpu && key !== gpuApplied) {
          addon.gpuConfigure(msg.gpu.device, msg.gpu.config);
          addon.gpuWarm(msg.gpu.device);
        }
        gpuApplied = key;
        return 0;
      });
      break;
    case "save":
      reply(msg.id, () => addon.tableSave(msg.handle, msg.path));
      break;
    case "load":
      reply(msg.id, () => addon.tableLoad(msg.path));
      break;
    case "keep":
      reply(msg.id, async () => {
        if (gpu !== undefined) await addon.gpuKeep(gpu, msg.handle);
        return 0;
      });
      break;
    case "stats":
      reply(msg.id, () => ({
        store: addon.storeStats(),
        memory: addon.memoryStats(),
        gpus: addon.gpuStats().filter((s) => s.device === gpu),
      }));
      break;
    case "fault":
      fault = msg.kind;
      break;
    case "release":
      for (const h of msg.handles) addon.release(h);
      break;
    case "idle":
      addon.purgeBroadcastBuilds();
      if (msg.trim) addon.releaseFreeMemory();
      break;
  }
});
// The engine going away (its IPC channel closes) ends this worker too.
process.on("disconnect", () => exit(0));
