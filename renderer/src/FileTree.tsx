// The workspace's files as a tree of folders; clicking a file opens it.
import { useMemo, useState } from "react";

interface Node {
  name: string;
  path: string;
  children: Node[] | undefined;
}

function tree(files: readonly string[]): Node[] {
  const root: Node = { name: "", path: "", children: [] };
  const dirs = new Map<string, Node>([["", root]]);
  const dirOf = (path: string): Node => {
    const known = dirs.get(path);
    if (known) return known;
    const cut = path.lastIndexOf("/", path.length - 2);
    const parent = dirOf(cut < 0 ? "" : path.slice(0, cut + 1));
    const node: Node = { name: path.slice(cut + 1, -1), path, children: [] };
    parent.children!.push(node);
    dirs.set(path, node);
    return node;
  };
  for (const f of files) {
    if (f.endsWith("/")) dirOf(f);
    else {
      const cut = f.lastIndexOf("/");
      dirOf(cut < 0 ? "" : f.slice(0, cut + 1)).children!.push({
        name: f.slice(cut + 1),
        path: f,
        children: undefined,
      });
    }
  }
  return root.children!;
}

/** `host`: where the workspace is ("user@host:port:/folder") when the engine is remote. */
export function FileTree(props: {
  files: readonly string[];
  host?: string;
  active: string | undefined;
  dirty: ReadonlySet<string>;
  onOpen(path: string): void;
  onNew(): void;
  onRefresh(): void;
}) {
  const nodes = useMemo(() => tree(props.files), [props.files]);
  const [closed, setClosed] = useState<Set<string>>(new Set());
  const render = (list: Node[], depth: number) =>
    list.map((n) =>
      n.children ? (
        <div key={n.path}>
          <div
            className="tree-item dir"
            style={{ paddingLeft: 8 + depth * 12 }}
            onClick={() =>
              setClosed((c) => (c.has(n.path) ? new Set([...c].filter((x) => x !== n.path)) : new Set([...c, n.path])))
            }
          >
            <span className="chev">{closed.has(n.path) ? "▸" : "▾"}</span>
            {n.name}
          </div>
          {!closed.has(n.path) && render(n.children, depth + 1)}
        </div>
      ) : (
        <div
          key={n.path}
          className={`tree-item file${props.active === n.path ? " active" : ""}`}
          style={{ paddingLeft: 20 + depth * 12 }}
          onClick={() => props.onOpen(n.path)}
          title={n.path}
          data-path={n.path}
        >
          <span className={`file-icon ${n.name.endsWith(".ts") ? "ts" : ""}`}>
            {n.name.endsWith(".ts") ? "TS" : "·"}
          </span>
          {n.name}
          {props.dirty.has(n.path) && <span className="dirty-dot">●</span>}
        </div>
      ),
    );
  return (
    <div className="sidebar">
      <div className="sidebar-title">
        <span>EXPLORER</span>
        {props.host && (
          <span className="muted workspace-host" title={`the workspace on ${props.host}`}>
            &nbsp;{props.host}
          </span>
        )}
        <span className="grow" />
        <button className="icon-btn" title="New pipeline file" onClick={props.onNew} aria-label="New file">
          +
        </button>
        <button className="icon-btn" title="Refresh" onClick={props.onRefresh} aria-label="Refresh">
          ⟳
        </button>
      </div>
      <div className="tree">{render(nodes, 0)}</div>
    </div>
  );
}
