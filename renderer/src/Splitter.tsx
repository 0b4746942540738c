// A drag handle between two panels; reports the new size of the panel it controls.
import type { PointerEvent } from "react";

export function Splitter(props: {
  direction: "vertical" | "horizontal";
  size: number;
  min: number;
  max: number;
  invert?: boolean;
  onResize(size: number): void;
}) {
  const start = (e: PointerEvent<HTMLDivElement>) => {
    e.preventDefault();
    const el = e.currentTarget;
    el.setPointerCapture(e.pointerId);
    const origin = props.direction === "vertical" ? e.clientX : e.clientY;
    const base = props.size;
    const move = (ev: globalThis.PointerEvent) => {
      const delta = (props.direction === "vertical" ? ev.clientX : ev.clientY) - origin;
      props.onResize(Math.round(Math.min(props.max, Math.max(props.min, base + (props.invert ? -delta : delta)))));
    };
    const up = () => {
      el.removeEventListener("pointermove", move);
      el.removeEventListener("pointerup", up);
    };
    el.addEventListener("pointermove", move);
    el.addEventListener("pointerup", up);
  };
  return <div className={`splitter ${props.direction}`} onPointerDown={start} role="separator" />;
}
