// Pure TypeScript shared between the renderer and the engine (no Node, no DOM).
export type { DType, Field, Schema } from "../../engine/common/types.js";
