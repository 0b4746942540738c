// Engine log events and run summaries, newest last.
import { useEffect, useRef } from "react";

export interface LogLine {
  time: number;
  level: "info" | "warn" | "error";
  text: string;
}

export function OutputPanel({ lines }: { lines: LogLine[] }) {
  const end = useRef<HTMLDivElement>(null);
  // An effect returns nothing or its cleanup: scrollIntoView's value (a Promise in newer
  // browsers) must not leak out as a "cleanup", or React fails when the effect is torn down.
  useEffect(() => {
    end.current?.scrollIntoView({ block: "end" });
  }, [lines.length]);
  return (
    <div className="output" data-testid="output">
      {lines.map((l, i) => (
        <div key={i} className={`log ${l.level}`}>
          <span className="log-time">{new Date(l.time).toLocaleTimeString()}</span> {l.text}
        </div>
      ))}
      <div ref={end} />
    </div>
  );
}
