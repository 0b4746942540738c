// The shared RPC client lives in engine/common (RemoteEngine uses it too); the
// workbench's transports import it from here.
export { RpcClient, type ConnectionState, type WorkbenchClient } from "../../engine/common/rpc_client.js";
