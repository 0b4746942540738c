// Above an array result's element table: its dtype, shape and chunks, and for a
// 2-D array a heatmap of block means (computed by the engine).
import { useEffect, useRef } from "react";
import type { ArrayInfo } from "../../engine/common/rpc.js";
import { describeArray, heatmapRgba } from "../common/array_display.js";

export function ArrayHeader({ array }: { array: ArrayInfo }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const h = array.heatmap;
  useEffect(() => {
    const ctx = canvas.current?.getContext("2d");
    if (!ctx || !h) return;
    ctx.putImageData(new ImageData(heatmapRgba(h), h.cols, h.rows), 0, 0);
  }, [h]);
  return (
    <div className="array-bar" data-result-kind="array">
      <span data-testid="array-description">{describeArray(array)}</span>
      {h && (
        <>
          <canvas
            ref={canvas}
            width={h.cols}
            height={h.rows}
            className="array-heatmap"
            data-testid="array-heatmap"
            title={`block means, ${h.min} … ${h.max}`}
          />
          <span className="muted">{`${h.min.toPrecision(4)} … ${h.max.toPrecision(4)}`}</span>
        </>
      )}
    </div>
  );
}
