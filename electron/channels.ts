// IPC channel names shared by the main process and the preload script.

/** preload → main: this window wants a port to the engine. */
export const CONNECT_CHANNEL = "basin:connect";
/** main → preload: here is the port (in the event's ports). */
export const PORT_CHANNEL = "basin:port";
