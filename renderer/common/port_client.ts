// The workbench's transport in the desktop window: the EngineClient contract over
// a MessagePort that the Electron main process hands over (electron/preload.ts →
// window.basin.connect()). The main process relays it to the engine process and
// says when that process stops ({ engineProcess: { state: "crashed" } }); then
// the state is "crashed" until restartEngine() brings a fresh engine up.
import type { EngineProcessMessage, EngineRestartRequest } from "../../engine/common/rpc.js";
import { RpcClient } from "./rpc_client.js";

/** The part of a DOM MessagePort the client uses (Node's global MessagePort in tests). */
export interface PortLike {
  postMessage(message: unknown): void;
  onmessage: ((ev: { data: unknown }) => void) | null;
  close(): void;
}

/**
 * @example
 * const client = new PortEngineClient(receiveBridgePort(window, window.basin));
 * client.onConnection((s) => s === "crashed" && showRestart(client.crashMessage));
 */
export class PortEngineClient extends RpcClient {
  private port: PortLike | undefined;
  /** Requests made before the port arrived. */
  private readonly queued: object[] = [];

  constructor(port: PortLike | Promise<PortLike>) {
    super();
    Promise.resolve(port).then(
      (p) => this.opened(p),
      (e: Error) => this.setState("crashed", `no connection to the engine: ${e.message}`),
    );
  }

  /** Asks the main process to start the engine process again; the state turns "open" when it is up. */
  restartEngine(): void {
    if (!this.port) return;
    this.port.postMessage({ control: "restartEngine" } satisfies EngineRestartRequest);
    this.setState("connecting");
  }

  close(): void {
    this.closedByUser = true;
    this.port?.close();
    this.queued.length = 0;
    this.dropped("the workbench closed its connection to the engine");
    this.setState("closed");
  }

  protected transmit(message: object): void {
    if (this.port) this.port.postMessage(message);
    else this.queued.push(message);
  }

  private opened(port: PortLike): void {
    if (this.closedByUser) return port.close();
    this.port = port;
    port.onmessage = (ev) => this.fromHost(ev.data); // assigning onmessage also starts the port
    this.setState("open");
    for (const m of this.queued.splice(0)) port.postMessage(m);
  }

  private fromHost(message: unknown): void {
    const state = (message as Partial<EngineProcessMessage> | null)?.engineProcess;
    if (!state) return this.receive(message);
    if (state.state === "crashed") this.setState("crashed", state.message);
    else if (this.state !== "open") this.setState("open");
  }
}
