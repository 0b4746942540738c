// The Dask scheduler addresses Basin can connect to, checked before a bridge starts.
import { BasinError } from "../../common/errors.js";

/**
 * Refuses what the bridge cannot connect to: Basin reaches a scheduler over plain TCP
 * (tls:// needs certificates and ucx:// UCX-Py, neither of which it passes), and the
 * address needs its port and nothing after it.
 *
 * @example
 * checkSchedulerAddress("tcp://10.0.0.5:8786") // fine
 * checkSchedulerAddress("tcp://10.0.0.5", 'dask profile "lab": ') // BASIN_PLAN: no port
 */
export function checkSchedulerAddress(address: string, owner = ""): void {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1]?.toLowerCase();
  if (scheme === "tls" || scheme === "ucx")
    throw new BasinError(
      "BASIN_PLAN",
      `${owner}"${address}": Basin connects to Dask schedulers over tcp:// only (${scheme}:// needs security or UCX settings Basin does not pass); listen on tcp:// too, or reach it through an SSH profile`,
    );
  // host: a name, an IPv4 address or a bracketed IPv6 one; the port is required.
  if (!/^tcp:\/\/(\[[0-9a-f:.]+\]|[A-Za-z0-9._-]+):\d{1,5}$/i.test(address) || Number(address.split(":").pop()) > 65535)
    throw new BasinError(
      "BASIN_PLAN",
      `${owner}"${address}" is not a Dask scheduler address; write it as tcp://host:port, e.g. tcp://127.0.0.1:8786`,
    );
}
