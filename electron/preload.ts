// The desktop window's preload script (sandboxed, context-isolated; built as
// CommonJS into dist/electron/preload.cjs). It exposes one thing to the page:
// window.basin.connect(), which asks the main process for a MessagePort to the
// engine. Ports cannot cross the context bridge, so the port arrives here and is
// handed to the page with window.postMessage (renderer/common/transport.ts
// receives it). The page gets no Node and no ipcRenderer.
import { contextBridge, ipcRenderer } from "electron";
import { PORT_MESSAGE } from "../renderer/common/transport.js";
import { CONNECT_CHANNEL, PORT_CHANNEL } from "./channels.js";

contextBridge.exposeInMainWorld("basin", {
  desktop: true,
  connect: () => ipcRenderer.send(CONNECT_CHANNEL),
});

ipcRenderer.on(PORT_CHANNEL, (event) => window.postMessage(PORT_MESSAGE, "*", event.ports));
