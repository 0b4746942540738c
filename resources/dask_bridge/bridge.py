"""The Basin <-> Dask bridge: one process per Dask connection, driven by the engine
(engine/cluster/dask.ts) with newline-delimited JSON on stdin/stdout.

    python3 bridge.py --scheduler tcp://127.0.0.1:8786 [--timeout 10] [--no-direct] [--name LABEL]

Requests: {"id", "op": "connect" | "run" | "status" | "retire" | "cancel" | "close", ...}.
Replies:  {"id", "ok": true, ...} or {"id", "ok": false, "error": {code, message, location}}.
A run's result comes first, as lines {"id", "part": table} in row order, then its reply.
Needs only the standard library, dask, distributed and pandas (the cluster's Python).
"""
import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import CancelledError
import traceback

# Ctrl+C reaches the whole foreground process group, this bridge too: the engine handles it
# (it cancels the run, then closes the bridge), so the bridge must not die of it mid-run.
# Set before the slow imports below. The bridge ends when its stdin closes.
signal.signal(signal.SIGINT, signal.SIG_IGN)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dask  # noqa: E402
import distributed  # noqa: E402
import pandas as pd  # noqa: E402

import basin_csv_location  # noqa: E402
import basin_exprs  # noqa: E402
import basin_parquet  # noqa: E402
import basin_plan  # noqa: E402
import basin_text  # noqa: E402
import basin_types  # noqa: E402
import basin_wire  # noqa: E402
from basin_types import BridgeError  # noqa: E402

# The workers need not have the bridge installed: its modules are uploaded on connect
# (as a worker plugin, so workers that join later get them too).
MODULES = (basin_types, basin_text, basin_csv_location, basin_exprs, basin_parquet, basin_plan, basin_wire)

out_lock = threading.Lock()

# A run waits for its result in steps of WATCH_EVERY_S, checking the scheduler between them:
# it fails once the scheduler has had no workers for NO_WORKERS_GRACE_S (the tasks would wait
# forever), or when the scheduler does not answer that check within SCHEDULER_ANSWER_S. The
# grace is a minute by default: an adaptive cluster (dask-jobqueue, Kubernetes) may start
# workers only once work arrives; BASIN_DASK_NO_WORKERS_S sets it.
WATCH_EVERY_S = 1.0
NO_WORKERS_GRACE_S = float(os.environ.get("BASIN_DASK_NO_WORKERS_S", "60"))
SCHEDULER_ANSWER_S = 10.0


def dumps(msg):
    return json.dumps(msg, allow_nan=False, separators=(",", ":"))


def send(msg):
    send_line(dumps(msg))


def send_line(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Bridge:
    def __init__(self, args):
        self.args = args
        self.client = None
        self.lock = threading.Lock()
        self.futures = {}
        # Runs the engine asked to cancel: a cancel may come before its run has a future
        # (still connecting), and a run's CancelledError is the user's only when listed here.
        self.cancelled = set()
        self.runs_lock = threading.Lock()

    def connect(self):
        with self.lock:
            if self.client is not None:
                return self.client
            try:
                self.client = distributed.Client(
                    self.args.scheduler, timeout=f"{self.args.timeout}s", set_as_default=False,
                    direct_to_workers=not self.args.no_direct,
                )
                for module in MODULES:
                    self.client.upload_file(module.__file__)
            except (OSError, TimeoutError) as e:
                # distributed's own text names the address it dialled: a tunnel's local end
                # means nothing to the user, so it reads as the scheduler they named.
                said = str(e).replace(self.args.scheduler, self.where())
                waited = f" within {self.args.timeout:g} s" if isinstance(e, TimeoutError) or "Timed out" in said else ""
                raise BridgeError(
                    "BASIN_IO",
                    f"cannot reach the Dask scheduler at {self.where()}{waited} ({said}); "
                    "check the address, that the scheduler is running (dask scheduler), and any tunnel or firewall on the way",
                )
            return self.client

    def where(self):
        """The scheduler as the user named it (a tunnelled one: its address on its host, not the tunnel's)."""
        return self.args.name or self.args.scheduler

    def handle(self, req):
        op = req.get("op")
        if op == "connect":
            c = self.connect()
            return {"dashboard": c.dashboard_link, "workers": len(c.scheduler_info()["workers"])}
        if op == "status":
            return self.status()
        if op == "run":
            return self.run(req)
        if op == "retire":
            return self.retire(req)
        if op == "cancel":
            with self.runs_lock:
                self.cancelled.add(req.get("target"))
                fut = self.futures.get(req.get("target"))
            if fut is not None:
                self.client.cancel(fut)
            return {}
        raise BridgeError("BASIN_INTERNAL", f"unknown bridge request {op!r}")

    def run(self, req):
        plan = req["plan"]
        basin_plan.check(plan)  # before anything is submitted
        ddf = basin_plan.translate(plan["root"])
        client = self.connect()
        rid = req["id"]
        with self.runs_lock:
            if rid in self.cancelled:
                raise BridgeError("BASIN_CANCELLED", "the run was cancelled")
            fut = client.compute(ddf)
            self.futures[rid] = fut
        try:
            df = self.wait(fut, client)
        except (CancelledError, distributed.client.CancelledError):
            if rid in self.cancelled:
                raise BridgeError("BASIN_CANCELLED", "the run was cancelled")
            # Nobody asked: the scheduler went away (stopped, killed, its job ended) and took the run with it.
            raise BridgeError(
                "BASIN_IO",
                f"lost the Dask scheduler at {self.where()} during the run (it stopped, or the connection to it "
                "dropped); nothing was written; check that the scheduler is running and run the pipeline again",
            )
        finally:
            with self.runs_lock:
                self.futures.pop(rid, None)
                self.cancelled.discard(rid)
        schema = plan["root"]["schema"]
        df = basin_types.conform_frame(df, schema)
        head = '{"id":' + dumps(rid) + ',"part":'
        parts = 0
        for table in basin_wire.frame_parts(df, schema, dumps):
            send_line(head + table + "}")
            parts += 1
        return {"parts": parts}

    def wait(self, fut, client):
        """The run's result, once its tasks are done; fails (BridgeError) when the scheduler
        is left without workers or stops answering, rather than waiting forever."""
        alone_since = None
        while True:
            try:
                client.sync(distributed.client._wait, [fut], timeout=WATCH_EVERY_S)  # not the result: a large one takes longer to fetch
                break
            except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on, two before
                pass
            workers = self.workers_now(client, fut)
            if workers > 0:
                alone_since = None
                continue
            alone_since = alone_since or time.monotonic()
            if time.monotonic() - alone_since >= NO_WORKERS_GRACE_S:
                fut.release()
                raise BridgeError(
                    "BASIN_WORKER",
                    f"the Dask scheduler at {self.where()} has had no workers for {NO_WORKERS_GRACE_S:g} s, so the run "
                    "cannot go on (its workers stopped, or none ever joined); nothing was written; start workers "
                    f"(dask worker {self.args.scheduler}), or check that they can reach the scheduler, and run the pipeline again",
                )
        return fut.result()

    def workers_now(self, client, fut):
        """How many workers the scheduler has, asked with a bounded wait."""
        try:
            threads = client.sync(client.scheduler.ncores, callback_timeout=SCHEDULER_ANSWER_S)  # {worker: threads}
        except (TimeoutError, asyncio.TimeoutError):
            fut.release()  # sent without waiting for the scheduler
            raise BridgeError(
                "BASIN_IO",
                f"the Dask scheduler at {self.where()} stopped answering during the run (no reply within "
                f"{SCHEDULER_ANSWER_S:g} s); nothing was written; check that the scheduler is running and not "
                "stopped or overloaded, and run the pipeline again",
            )
        except OSError:
            if fut.done():
                return 1  # the result came; fut.result() reports it
            fut.release()
            raise BridgeError(
                "BASIN_IO",
                f"lost the Dask scheduler at {self.where()} during the run (it stopped, or the connection to it "
                "dropped); nothing was written; check that the scheduler is running and run the pipeline again",
            )
        return len(threads)

    def status(self):
        client = self.connect()
        self.ask(client._update_scheduler_info)  # scheduler_info() asks it, unbounded
        info = client._scheduler_identity
        workers = []
        for addr, w in info["workers"].items():
            m = w.get("metrics", {})
            workers.append({
                "address": addr, "name": str(w.get("name", addr)), "threads": w.get("nthreads", 0),
                "memory": m.get("memory", 0), "memoryLimit": w.get("memory_limit", 0),
                "tasks": m.get("executing", 0) + m.get("ready", 0),
            })
        load = self.ask(client._run_on_scheduler, scheduler_load)
        return {"scheduler": info.get("address"), "dashboard": self.client.dashboard_link, "workers": workers, **load}

    def ask(self, fn, *args):
        """The scheduler's answer to `fn`, or a BridgeError once it has not answered within SCHEDULER_ANSWER_S."""
        try:
            return self.client.sync(fn, *args, callback_timeout=SCHEDULER_ANSWER_S)
        except (TimeoutError, asyncio.TimeoutError):
            raise BridgeError(
                "BASIN_IO",
                f"the Dask scheduler at {self.where()} did not answer within {SCHEDULER_ANSWER_S:g} s; check that it "
                "is running and not stopped or overloaded",
            )

    def retire(self, req):
        names = set(req.get("names", []))
        client = self.connect()
        addresses = [a for a, w in client.scheduler_info()["workers"].items() if str(w.get("name")) in names]
        if addresses:
            client.retire_workers(workers=addresses, close_workers=True)
        return {"retired": len(addresses)}


def scheduler_load(dask_scheduler=None):
    """Runs on the scheduler: tasks on workers, and tasks waiting for one (for adaptive scaling)."""
    s = dask_scheduler
    processing = sum(len(ws.processing) for ws in s.workers.values())
    waiting = len(getattr(s, "queued", ())) + len(getattr(s, "unrunnable", ()))
    return {"processing": processing, "waiting": waiting}


def serve(bridge, req):
    try:
        send({"id": req.get("id"), "ok": True, **bridge.handle(req)})
    except BridgeError as e:
        send({"id": req.get("id"), "ok": False, "error": e.to_json()})
    except Exception as e:  # an unexpected failure: report it, keep serving
        traceback.print_exc(file=sys.stderr)
        send({"id": req.get("id"), "ok": False, "error": {"name": "BasinError", "code": "BASIN_INTERNAL", "message": f"the Dask run failed: {type(e).__name__}: {e}"}})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scheduler", required=True)
    p.add_argument("--timeout", type=float, default=10)
    p.add_argument("--name", default="", help="the scheduler as errors name it (default: --scheduler)")
    p.add_argument("--no-direct", action="store_true", help="fetch results through the scheduler (tunnelled clusters)")
    args = p.parse_args()
    bridge = Bridge(args)
    send({"id": None, "ok": True, "hello": {"dask": dask.__version__, "distributed": distributed.__version__, "pandas": pd.__version__}})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get("op") == "close":
            break
        threading.Thread(target=serve, args=(bridge, req), daemon=True).start()
    if bridge.client is not None:
        bridge.client.close(timeout=5)


if __name__ == "__main__":
    main()
