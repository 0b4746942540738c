// Answers one request of the workbench contract (engine/common/rpc.ts) on an
// EngineClient. Every transport — the WebSocket of `basin serve`, the IPC channel
// of the desktop's engine process — sends requests through here, so they accept
// exactly the same methods and report failures the same way.
import { BasinError } from "../common/errors.js";
import type { EngineClient, EngineMethod, RpcRequest, RpcResponse } from "../common/rpc.js";

/** The methods a transport may call (EngineClient's, nothing else of the object). */
export const ENGINE_METHODS: readonly EngineMethod[] = [
  "workspace",
  "readFile",
  "writeFile",
  "openFile",
  "saveFile",
  "attach",
  "preview",
  "sample",
  "run",
  "cancel",
  "page",
  "view",
  "profile",
  "countDistinct",
  "bins2d",
  "runHistory",
  "release",
  "cluster",
  "exportResult",
];

/**
 * Calls the requested method; resolves to its response, or to a serialized
 * BasinError (never rejects).
 *
 * @example
 * const reply = await dispatch(engine, JSON.parse(text));
 * ws.send(JSON.stringify(reply));
 */
export async function dispatch(engine: EngineClient, message: unknown): Promise<RpcResponse> {
  const req = (typeof message === "object" && message !== null ? message : {}) as Partial<RpcRequest>;
  const id = typeof req.id === "number" ? req.id : -1;
  try {
    if (typeof message !== "object" || message === null)
      throw new BasinError("BASIN_PLAN", "a request must be a JSON object { id, method, params }");
    if (!ENGINE_METHODS.includes(req.method as EngineMethod))
      throw new BasinError("BASIN_PLAN", `unknown engine method "${String(req.method)}"`);
    if (!Array.isArray(req.params)) throw new BasinError("BASIN_PLAN", `${req.method}: params must be an array`);
    const method = engine[req.method as EngineMethod] as (...args: unknown[]) => Promise<unknown>;
    return { id, result: (await method.apply(engine, req.params)) ?? null };
  } catch (e) {
    return { id, error: BasinError.from(e).toJSON() };
  }
}
