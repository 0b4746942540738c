// When to add and remove SLURM jobs: a pure function of the jobs, the scheduler's
// work and the clock, so the policy is tested without a cluster.

/** One of the cluster's jobs, as the policy sees it. */
export interface PolicyJob {
  id: string;
  /** Submitted but its worker has not joined yet (pending in the queue, or starting). */
  starting: boolean;
  /** The job that runs the Dask scheduler: never removed (the cluster would go with it). */
  scheduler: boolean;
  /** Since when its worker has had no task (ms); undefined while it has some. */
  idleSince?: number;
}

export interface PolicyInput {
  now: number;
  jobs: PolicyJob[];
  /** Tasks the workers are processing (running or ready on them). */
  processing: number;
  /** Tasks waiting at the scheduler for a worker (queued, or no worker can take them). */
  waiting: number;
  /** Threads each job's worker brings. */
  threadsPerJob: number;
  minJobs: number;
  maxJobs: number;
  /** A job idle this long (ms) may be removed. */
  idleMs: number;
}

export interface PolicyDecision {
  /** How many jobs to submit. */
  submit: number;
  /** Jobs to remove (their workers retire, then they are cancelled). */
  remove: string[];
}

/**
 * Adaptive scaling between minJobs and maxJobs: below the minimum, submit up to it;
 * when the tasks (processing + waiting) exceed the threads of every live job (starting
 * ones count, so a job is not asked for twice), submit enough jobs for them, up to the
 * maximum; with nothing waiting, remove jobs idle for idleMs (starting ones first, the
 * scheduler's never) as long as the remaining jobs still hold the work and the minimum.
 *
 * @example
 * scaleDecision({ now, jobs, processing: 8, waiting: 20, threadsPerJob: 4, minJobs: 1, maxJobs: 4, idleMs: 60_000 });
 * // → { submit: 3, remove: [] } with one running job
 */
export function scaleDecision(input: PolicyInput): PolicyDecision {
  const { jobs, threadsPerJob, minJobs, maxJobs } = input;
  const live = jobs.length;
  const demand = input.processing + input.waiting;
  if (live < minJobs) return { submit: minJobs - live, remove: [] };
  const capacity = live * threadsPerJob;
  if (demand > capacity && live < maxJobs)
    return { submit: Math.min(maxJobs - live, Math.ceil((demand - capacity) / threadsPerJob)), remove: [] };
  if (input.waiting > 0) return { submit: 0, remove: [] };
  const candidates = jobs
    .filter((j) => !j.scheduler && j.idleSince !== undefined && input.now - j.idleSince >= input.idleMs)
    .sort((a, b) => Number(b.starting) - Number(a.starting) || (a.idleSince ?? 0) - (b.idleSince ?? 0));
  const remove: string[] = [];
  for (const j of candidates) {
    const left = live - remove.length - 1;
    if (left < minJobs || demand > left * threadsPerJob) break;
    remove.push(j.id);
  }
  return { submit: 0, remove };
}
