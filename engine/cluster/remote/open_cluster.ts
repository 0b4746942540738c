// `--cluster X`: a Dask scheduler address, or a saved profile's name (a Dask
// scheduler, directly or through an SSH tunnel, or a Dask cluster in SLURM jobs).
import { BasinError } from "../../common/errors.js";
import { DaskCluster, type DaskClusterOptions } from "../dask/dask_cluster.js";
import { findProfile, type Profile } from "./profiles.js";
import { SshSession } from "./ssh_session.js";
import type { SlurmCluster } from "../slurm/slurm_cluster.js";
import { openSlurm } from "../slurm/open_slurm.js";

export interface OpenCluster {
  cluster: DaskCluster;
  /** What it is, for messages: "tcp://..." or "profile gpu-box (via ssh)". */
  label: string;
  /** With a slurm profile: its jobs. */
  slurm?: SlurmCluster;
  /** Disconnects; with a slurm profile, also cancels its jobs. */
  close(): Promise<void>;
}

/**
 * @example
 * const { cluster, close } = await openCluster("tcp://127.0.0.1:8786");
 * await df.compute({ cluster }); await close();
 */
export async function openCluster(spec: string | Profile, options: DaskClusterOptions & { log?: (line: string) => void } = {}): Promise<OpenCluster> {
  if (typeof spec === "string" && /^[a-z]+:\/\//.test(spec)) {
    const cluster = new DaskCluster(spec, options);
    return { cluster, label: spec, close: () => cluster.close() };
  }
  const p = typeof spec === "string" ? findProfile(spec) : spec;
  if (p.kind === "dask") {
    const cluster = new DaskCluster(p.scheduler, options);
    return { cluster, label: `${p.scheduler} (profile ${p.name})`, close: () => cluster.close() };
  }
  if (p.kind === "slurm") return openSlurm(p, options);
  if (!p.scheduler)
    throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}" has no Dask scheduler; add "scheduler": "tcp://127.0.0.1:8786" (as the host sees it) to the profile`);
  const m = /^tcp:\/\/([^:/]+):(\d+)$/.exec(p.scheduler);
  if (!m) throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}": scheduler must be tcp://host:port, got "${p.scheduler}"`);
  const [host, port] = [m[1], Number(m[2])];
  let ssh = await SshSession.connect(p);
  let tunnel = await ssh.tunnel(host, port);
  const localPort = tunnel.port;
  const cluster = new DaskCluster(`tcp://127.0.0.1:${localPort}`, { ...options, viaScheduler: true });
  // A dropped connection fails the runs in flight at once (their bridge waits on a dead
  // tunnel), then the session reconnects by itself on the same local port.
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let delay = 200;
  const reconnect = (): void => {
    if (closed) return;
    retry = setTimeout(() => {
      void SshSession.connect(p).then(
        async (s) => {
          try {
            tunnel = await s.tunnel(host, port, localPort);
          } catch (e) {
            s.close();
            throw e;
          }
          if (closed) return void (await tunnel.close(), s.close());
          ssh = s;
          watch(s);
          delay = 200;
        },
      ).catch(() => {
        delay = Math.min(delay * 2, 5000);
        reconnect();
      });
    }, delay);
  };
  const watch = (s: SshSession): void => {
    s.whenDropped((e) => {
      cluster.abandon(new BasinError("BASIN_IO", `the Dask run at ${p.scheduler} on ${p.host} stopped: ${e.message.replace(/; reconnect to go on$/, "")}; this session reconnects by itself, run again`));
      void tunnel.close();
      reconnect();
    });
  };
  watch(ssh);
  return {
    cluster,
    label: `${p.scheduler} on ${p.host} (profile ${p.name}, via ssh)`,
    async close() {
      closed = true;
      clearTimeout(retry);
      await cluster.close();
      await tunnel.close();
      ssh.close();
    },
  };
}
