// Where a SLURM-backed profile's commands run: here, or on the login node of the ssh
// profile its `ssh` field names, with the Dask scheduler (as a compute node sees its
// address) reached through a tunnel of that SSH connection. Shared by slurm and
// runner profiles.
import { BasinError } from "../../common/errors.js";
import type { Reach } from "../dask/started_dask.js";
import { findProfile } from "../profiles.js";
import { SshSession, type Tunnel } from "../ssh/ssh_session.js";
import { LocalRunner, SshRunner, type CommandRunner } from "./command_runner.js";

export interface LoginNode {
  runner: CommandRunner;
  /** Set over SSH: tunnels to the scheduler (without it the address is used as it is). */
  reach?: Reach;
  /** "ssh user@host:22" over SSH, for messages. */
  via?: string;
  /** Closes the tunnels and the SSH session. */
  close(): Promise<void>;
}

/**
 * The login node of `profile` (its `ssh` field), or this machine without one.
 *
 * @example
 * const login = await loginNode({ name: "hpc", ssh: "login" }, "slurm profile");
 * await login.runner.run(["squeue", "--me"]); await login.close();
 */
export async function loginNode(profile: { name: string; ssh?: string }, kind: string): Promise<LoginNode> {
  if (!profile.ssh) return { runner: new LocalRunner(), close: async () => {} };
  const sp = findProfile(profile.ssh);
  if (sp.kind !== "ssh")
    throw new BasinError(
      "BASIN_PLAN",
      `${kind} "${profile.name}": "ssh": "${profile.ssh}" names a ${sp.kind} profile; name an ssh profile of the login node`,
    );
  const session = await SshSession.connect(sp);
  const tunnels: Tunnel[] = [];
  return {
    runner: new SshRunner(session),
    via: `ssh ${session.where}`,
    async reach(address) {
      const m = /^tcp:\/\/([^:/]+):(\d+)$/.exec(address);
      if (!m)
        throw new BasinError(
          "BASIN_IO",
          `the Dask scheduler of ${kind} "${profile.name}" listens at ${address}, which an SSH tunnel cannot reach; use protocol tcp`,
        );
      const t = await session.tunnel(m[1], Number(m[2]));
      tunnels.push(t);
      return { address: `tcp://127.0.0.1:${t.port}`, viaScheduler: true };
    },
    async close() {
      for (const t of tunnels) await t.close();
      session.close();
    },
  };
}
