// The one way to open a cluster from what a user names (`--cluster X`, the
// workbench): a Dask scheduler address, or a saved profile's name (a Dask
// scheduler, directly or through an SSH tunnel, a Dask cluster in SLURM jobs, or
// one in a runner's single allocation).
// Closing what it returns frees everything it took: tunnels, sessions, jobs.
import { BasinError } from "../common/errors.js";
import type { Cluster } from "./cluster.js";
import { DaskCluster, type DaskClusterOptions } from "./dask/dask_cluster.js";
import { findProfile, type Profile } from "./profiles.js";
import { SshSession } from "./ssh/ssh_session.js";
import { openRunner } from "./runner/open_runner.js";
import { openSlurm } from "./slurm/open_slurm.js";

/** How a cluster is opened: the bridge's Python and timeouts, and where progress lines go. */
export type OpenClusterOptions = Omit<DaskClusterOptions, "label" | "onClose"> & { log?: (line: string) => void };

/**
 * @example
 * const cluster = await openCluster("tcp://127.0.0.1:8786");
 * await df.compute({ cluster }); await cluster.close();
 */
export async function openCluster(spec: string | Profile, options: OpenClusterOptions = {}): Promise<Cluster> {
  if (typeof spec === "string" && /^[a-z]+:\/\//.test(spec)) return new DaskCluster(spec, options);
  const p = typeof spec === "string" ? findProfile(spec) : spec;
  if (p.kind === "dask")
    return new DaskCluster(p.scheduler, { ...options, label: `${p.scheduler} (profile ${p.name})` });
  if (p.kind === "slurm") return openSlurm(p, options);
  if (p.kind === "runner") return openRunner(p, options);
  if (!p.scheduler)
    throw new BasinError(
      "BASIN_PLAN",
      `ssh profile "${p.name}" has no Dask scheduler; add "scheduler": "tcp://127.0.0.1:8786" (as the host sees it) to the profile`,
    );
  const m = /^tcp:\/\/([^:/]+):(\d+)$/.exec(p.scheduler);
  if (!m)
    throw new BasinError(
      "BASIN_PLAN",
      `ssh profile "${p.name}": scheduler must be tcp://host:port, got "${p.scheduler}"`,
    );
  const [host, port] = [m[1], Number(m[2])];
  let ssh = await SshSession.connect(p);
  let tunnel = await ssh.tunnel(host, port);
  const localPort = tunnel.port;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const cluster = new DaskCluster(`tcp://127.0.0.1:${localPort}`, {
    ...options,
    viaScheduler: true,
    label: `${p.scheduler} on ${p.host} (profile ${p.name}, via ssh)`,
    async onClose() {
      closed = true;
      clearTimeout(retry);
      await tunnel.close();
      ssh.close();
    },
  });
  // A dropped connection fails the runs in flight at once (their bridge waits on a dead
  // tunnel), then the session reconnects by itself on the same local port.
  let delay = 200;
  const reconnect = (): void => {
    if (closed) return;
    retry = setTimeout(() => {
      void SshSession.connect(p)
        .then(async (s) => {
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
        })
        .catch(() => {
          delay = Math.min(delay * 2, 5000);
          reconnect();
        });
    }, delay);
  };
  const watch = (s: SshSession): void => {
    s.whenDropped((e) => {
      cluster.abandon(
        new BasinError(
          "BASIN_IO",
          `the Dask run at ${p.scheduler} on ${p.host} stopped: ${e.message.replace(/; reconnect to go on$/, "")}; this session reconnects by itself, run again`,
        ),
      );
      void tunnel.close();
      reconnect();
    });
  };
  watch(ssh);
  return cluster;
}
