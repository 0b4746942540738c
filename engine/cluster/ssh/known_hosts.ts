// Host-key verification against an OpenSSH known_hosts file: a host whose key is
// unknown, or differs from the recorded one, is refused with its fingerprint shown.
import { createHash, createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

/** How OpenSSH names a host in known_hosts: "host", or "[host]:port" off port 22. */
export function knownHostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** The SHA256 fingerprint OpenSSH prints for a key ("SHA256:..."). */
export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

/** The keys recorded for `name` (plain host patterns; hashed entries are compared by their HMAC). */
export function recordedKeys(file: string, name: string): Buffer[] {
  if (!existsSync(file)) return [];
  const keys: Buffer[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 3 || parts[0].startsWith("#") || parts[0].startsWith("@")) continue;
    const [hosts, , blob] = parts;
    if (hosts.split(",").some((h) => hostMatches(h, name))) keys.push(Buffer.from(blob, "base64"));
  }
  return keys;
}

function hostMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith("|1|")) {
    const [salt, hash] = pattern.slice(3).split("|");
    return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
  }
  return pattern === name;
}

export type HostKeyVerdict = { ok: true } | { ok: false; reason: "unknown" | "changed"; fingerprint: string };

/** Compares the key a server offered with known_hosts. */
export function checkHostKey(file: string, host: string, port: number, key: Buffer): HostKeyVerdict {
  const recorded = recordedKeys(file, knownHostName(host, port));
  if (recorded.some((k) => k.equals(key))) return { ok: true };
  return { ok: false, reason: recorded.length === 0 ? "unknown" : "changed", fingerprint: fingerprint(key) };
}
