// Which GPU is home to each persisted partition where the GPUs alone compute: its columns
// are uploaded there once, when persist() keeps it, instead of by its first query.

/** A partition kept on a GPU: its index among the persisted partitions and the device. */
export interface DeviceHome {
  index: number;
  device: number;
}

/**
 * Deals partitions to GPUs in turn, each GPU taking partitions while their bytes, with
 * what earlier persists keep there (`kept`, bytes by device), stay within `budget`
 * (the rest stay on the host and are uploaded by the queries that read them, spilling
 * least recently used columns as the device cache does).
 *
 * @example
 * deviceHomes([100, 100, 100], [0, 1], 150) // [{ index: 0, device: 0 }, { index: 1, device: 1 }]
 * deviceHomes([100], [0], 150, new Map([[0, 100]])) // []: GPU 0 already keeps 100
 */
export function deviceHomes(
  bytes: readonly number[],
  gpus: readonly number[],
  budget: number,
  kept: ReadonlyMap<number, number> = new Map(),
): DeviceHome[] {
  const used = new Map(gpus.map((d) => [d, kept.get(d) ?? 0]));
  const homes: DeviceHome[] = [];
  bytes.forEach((b, index) => {
    const device = gpus[index % gpus.length];
    if (device === undefined || used.get(device)! + b > budget) return;
    used.set(device, used.get(device)! + b);
    homes.push({ index, device });
  });
  return homes;
}
