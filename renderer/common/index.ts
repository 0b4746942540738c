// Pure TypeScript shared between the renderer and the engine (no Node, no DOM).
export type { DType, Field, Schema } from "../../engine/common/types.js";
export { PageCache, blocksFor, type BlockRequest } from "./page_cache.js";
export { scrollHeightFor, scrollRatio, MAX_SCROLL_PX } from "./virtual_scale.js";
export { parseFilter } from "./filter_syntax.js";
export { parseLocation, workspaceFileOf } from "./location.js";
export { parseLayout, DEFAULT_LAYOUT, LAYOUT_KEY, type Layout, type BottomTab } from "./layout.js";
export { formatBytes, formatCell, formatMs, toTsv } from "./format.js";
export { describeArray, heatmapRgba } from "./array_display.js";
export { bagItemViews, BAG_PREVIEW_ITEMS, BAG_ITEM_MAX_CHARS, type BagItemView } from "./bag_items.js";
export { RpcClient, type ConnectionState, type WorkbenchClient } from "./rpc_client.js";
export { PortEngineClient, type PortLike } from "./port_client.js";
export {
  chooseTransport,
  createClient,
  receiveBridgePort,
  PORT_MESSAGE,
  type DesktopBridge,
  type Transport,
} from "./transport.js";
export { exportPathFor, resultLabel } from "./result_tabs.js";
