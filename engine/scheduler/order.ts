import type { TaskGraph } from "../graph/tasks.js";

/**
 * A priority for every task (lower runs first): post-order depth-first from the
 * output, so each branch finishes, and frees its inputs, before the next starts
 * (the idea behind dask.order).
 *
 * @example
 * const prio = graphOrder(graph); prio.get(graph.output) === graph.tasks.length - 1
 */
export function graphOrder(graph: TaskGraph): Map<string, number> {
  const deps = new Map(graph.tasks.map((t) => [t.key, t.deps.map((d) => d.key)]));
  const order = new Map<string, number>();
  // Iterative DFS: deep graphs must not overflow the stack.
  const stack: { key: string; next: number }[] = [{ key: graph.output, next: 0 }];
  const seen = new Set([graph.output]);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const children = deps.get(top.key) ?? [];
    if (top.next < children.length) {
      const child = children[top.next++];
      if (!seen.has(child)) {
        seen.add(child);
        stack.push({ key: child, next: 0 });
      }
      continue;
    }
    order.set(top.key, order.size);
    stack.pop();
  }
  // Tasks that do not lead to the output still get a place, after the rest.
  for (const t of graph.tasks) if (!order.has(t.key)) order.set(t.key, order.size);
  return order;
}
