// `--cluster X`: a Dask scheduler address, or a saved profile's name (a Dask
// scheduler, directly or through an SSH tunnel).
import { BasinError } from "../../common/errors.js";
import { DaskCluster, type DaskClusterOptions } from "../dask/dask_cluster.js";
import { findProfile, type Profile } from "./profiles.js";
import { SshSession } from "./ssh_session.js";

export interface OpenCluster {
  cluster: DaskCluster;
  /** What it is, for messages: "tcp://..." or "profile gpu-box (via ssh)". */
  label: string;
  close(): Promise<void>;
}

/**
 * @example
 * const { cluster, close } = await openCluster("tcp://127.0.0.1:8786");
 * await df.compute({ cluster }); await close();
 */
export async function openCluster(spec: string | Profile, options: DaskClusterOptions = {}): Promise<OpenCluster> {
  if (typeof spec === "string" && /^[a-z]+:\/\//.test(spec)) {
    const cluster = new DaskCluster(spec, options);
    return { cluster, label: spec, close: () => cluster.close() };
  }
  const p = typeof spec === "string" ? findProfile(spec) : spec;
  if (p.kind === "dask") {
    const cluster = new DaskCluster(p.scheduler, options);
    return { cluster, label: `${p.scheduler} (profile ${p.name})`, close: () => cluster.close() };
  }
  if (!p.scheduler)
    throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}" has no Dask scheduler; add "scheduler": "tcp://127.0.0.1:8786" (as the host sees it) to the profile`);
  const m = /^tcp:\/\/([^:/]+):(\d+)$/.exec(p.scheduler);
  if (!m) throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}": scheduler must be tcp://host:port, got "${p.scheduler}"`);
  const ssh = await SshSession.connect(p);
  const tunnel = await ssh.tunnel(m[1], Number(m[2]));
  const cluster = new DaskCluster(`tcp://127.0.0.1:${tunnel.port}`, { ...options, viaScheduler: true });
  return {
    cluster,
    label: `${p.scheduler} on ${p.host} (profile ${p.name}, via ssh)`,
    async close() {
      await cluster.close();
      await tunnel.close();
      ssh.close();
    },
  };
}
