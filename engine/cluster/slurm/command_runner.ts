// Where SLURM's commands run: on this machine, or on a login node over an existing
// SSH session. Both take an argv (quoted for the remote shell) and read and write
// small files on the storage the jobs share, so the SLURM cluster has one code path.
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { BasinError } from "../../common/errors.js";
import { shellQuote } from "../ssh/shell_quote.js";
import type { SshSession } from "../ssh/ssh_session.js";

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs commands and touches files where SLURM is. */
export interface CommandRunner {
  /** "this machine" or "user@host", for messages. */
  readonly where: string;
  run(argv: string[]): Promise<CommandResult>;
  /** Best effort, synchronous (for process exit); false where it cannot be done synchronously. */
  runSync(argv: string[]): boolean;
  /** A file's text, or undefined when it does not exist (yet). */
  readFile(path: string): Promise<string | undefined>;
  writeFile(path: string, text: string): Promise<void>;
  mkdir(path: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** The user's home folder there. */
  home(): Promise<string>;
}

/**
 * SLURM commands on this machine; `env` is added to the process's environment (e.g. SLURM_CONF).
 *
 * @example
 * const runner = new LocalRunner();
 * const { stdout } = await runner.run(["squeue", "--me"]);
 */
export class LocalRunner implements CommandRunner {
  readonly where = "this machine";
  private readonly env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv = {}) {
    this.env = { ...process.env, ...env };
  }

  run(argv: string[]): Promise<CommandResult> {
    return new Promise((resolve) => {
      execFile(
        argv[0],
        argv.slice(1),
        { env: this.env, encoding: "utf8", timeout: 60_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          const e = err as (Error & { code?: number | string }) | null;
          if (e && typeof e.code === "string") return resolve({ code: 127, stdout, stderr: `${stderr}${e.message}` }); // ENOENT: not installed
          resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, stdout, stderr });
        },
      );
    });
  }

  runSync(argv: string[]): boolean {
    try {
      execFileSync(argv[0], argv.slice(1), { env: this.env, stdio: "ignore", timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  }

  async readFile(path: string): Promise<string | undefined> {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  }

  async writeFile(path: string, text: string): Promise<void> {
    writeFileSync(path, text, { mode: 0o700 });
  }

  async mkdir(path: string): Promise<void> {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  }

  async remove(path: string): Promise<void> {
    rmSync(path, { recursive: true, force: true });
  }

  async home(): Promise<string> {
    return homedir();
  }
}

/**
 * SLURM commands on a login node, over an SSH session the caller owns.
 *
 * @example
 * const runner = new SshRunner(await SshSession.connect(profile));
 */
export class SshRunner implements CommandRunner {
  readonly where: string;
  private homeDir?: string;

  constructor(private readonly ssh: SshSession) {
    this.where = `${ssh.profile.user}@${ssh.profile.host}`;
  }

  async run(argv: string[]): Promise<CommandResult> {
    return this.ssh.exec(argv.map(shellQuote).join(" "));
  }

  runSync(): boolean {
    return false;
  }

  async readFile(path: string): Promise<string | undefined> {
    const r = await this.ssh.exec(`cat ${shellQuote(path)} 2>/dev/null`);
    return r.code === 0 ? r.stdout : undefined;
  }

  async writeFile(path: string, text: string): Promise<void> {
    await this.check(
      `umask 077 && printf %s ${shellQuote(text)} > ${shellQuote(path)} && chmod 700 ${shellQuote(path)}`,
      `write ${path}`,
    );
  }

  async mkdir(path: string): Promise<void> {
    await this.check(`mkdir -p -m 700 ${shellQuote(path)}`, `create the folder ${path}`);
  }

  async remove(path: string): Promise<void> {
    await this.ssh.exec(`rm -rf ${shellQuote(path)}`);
  }

  async home(): Promise<string> {
    this.homeDir ??= (await this.check('printf %s "$HOME"', "find the home folder")).trim();
    return this.homeDir;
  }

  private async check(command: string, what: string): Promise<string> {
    const r = await this.ssh.exec(command);
    if (r.code !== 0)
      throw new BasinError(
        "BASIN_IO",
        `cannot ${what} on ${this.where}: ${r.stderr.trim() || `exit code ${r.code}`}; check the profile's directory and its permissions`,
      );
    return r.stdout;
  }
}
