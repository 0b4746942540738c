// The workbench's bag view logic: items' JSON text pretty-printed, numbered, cut when long.
import { describe, expect, it } from "vitest";
import { bagItemViews } from "../../renderer/common/index.js";

describe("bag item views", () => {
  it("pretty-prints items from their JSON text, numbered from the page offset", () => {
    const items = [{ a: 1, s: "東京" }, [1, null, "🙂"], "plain", 3.5, null];
    const views = bagItemViews(
      items.map((x) => JSON.stringify(x)),
      10,
    );
    expect(views.map((v) => v.index)).toEqual([10, 11, 12, 13, 14]);
    expect(views.map((v) => JSON.parse(v.text))).toEqual(items);
    expect(views[0].text).toBe('{\n  "a": 1,\n  "s": "東京"\n}');
    expect(views.every((v) => !v.cut)).toBe(true);
  });

  it("cuts long items and shows non-JSON text as it is", () => {
    const [long, odd] = bagItemViews(
      [JSON.stringify({ xs: Array.from({ length: 500 }, (_, i) => i) }), "not json {"],
      0,
      100,
    );
    expect(long.cut).toBe(true);
    expect(long.text.length).toBe(101);
    expect(long.text.endsWith("…")).toBe(true);
    expect(odd).toEqual({ index: 1, text: "not json {", cut: false });
  });
});
