import autocannon from 'autocannon';
import type { Child } from './child.ts';
import { type CpuPerRequest, type Parties, perRequest, snapshot } from './cpu.ts';
import { type RssSummary, sampleRss } from './memory.ts';
import type { ProfileSummary } from './protocol.ts';

/** One request shape; `body()` is asked for every request, so each can carry a different token. */
export interface LoadSpec {
  path: string;
  headers: Record<string, string>;
  body: () => string;
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as answered. */
  rate?: number;
  /**
   * Send exactly this many requests (a multiple of `connections`) instead of running for `durationSeconds`:
   * a burst through a batch of prepared items that cannot be made for a whole run (real puzzles).
   */
  amount?: number;
}

export interface Measurement {
  reqPerSec: number;
  /** Measured seconds (autocannon's own figure). */
  seconds: number;
  p50: number;
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
  cpu: CpuPerRequest;
  /** Wall seconds between the two CPU snapshots that `cpu` divides (a little more than `seconds`). */
  cpuWindowSeconds?: number;
  /**
   * Cases measured at a fixed low rate: the same server's CPU while nothing was sent to it, over windows as
   * long as `cpuWindowSeconds` just before and just after the run, and `cpu.server` net of it (see `idle`).
   */
  idle?: IdleNet;
  /** The server child's resident memory: before the run, its peak (sampled every 100 ms) and after. */
  rss: RssSummary;
  profile?: ProfileSummary;
}

/** Every case, measured or warming up, goes through here: POST, JSON body built per request. */
function drive(child: Child, spec: LoadSpec, options: LoadOptions) {
  return autocannon({
    url: child.url,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.durationSeconds }),
    ...(options.rate ? { overallRate: options.rate } : {}),
    requests: [
      {
        method: 'POST',
        path: spec.path,
        headers: { 'content-type': 'application/json', ...spec.headers },
        setupRequest: (request) => ({ ...request, body: spec.body() }),
      },
    ],
  });
}

/**
 * Drives `child` with autocannon for the given duration. Every case goes through the same code path here
 * (POST, JSON body built per request by setupRequest), so the load generator costs the same everywhere.
 */
export async function measure(
  child: Child,
  spec: LoadSpec,
  options: LoadOptions & { profile?: boolean; profileFile?: string | undefined; parties?: Parties },
): Promise<Measurement> {
  if (options.profile) await child.call({ type: 'profile-start' });
  const before = snapshot(child.pid, options.parties);
  const started = performance.now();
  const rss = sampleRss(child.pid);
  const result = await drive(child, spec, options);
  const after = snapshot(child.pid, options.parties);
  const cpuWindowSeconds = (performance.now() - started) / 1000;
  const memory = rss.stop();
  const profile = options.profile
    ? await child.call<ProfileSummary>({
        type: 'profile-stop',
        ...(options.profileFile ? { file: options.profileFile } : {}),
      })
    : undefined;
  const stats = (result as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const statuses = Object.fromEntries(Object.entries(stats).map(([code, s]) => [code, s.count]));
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    reqPerSec: result.requests.average,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests,
    statuses,
    errors: result.errors,
    cpu: perRequest(before, after, requests),
    cpuWindowSeconds,
    rss: memory,
    ...(profile ? { profile } : {}),
  };
}

/** A short unmeasured run of the same requests (JIT, connection pools, app cache). */
export async function warmUp(child: Child, spec: LoadSpec, options: LoadOptions): Promise<void> {
  if (options.durationSeconds <= 0) return;
  await drive(child, spec, options);
}

/** Unmeasured load beside a measured case (a flood a bystander's requests must live with); resolves at its end. */
export async function background(child: Child, spec: LoadSpec, options: LoadOptions): Promise<number> {
  const result = await drive(child, spec, options);
  return result.requests.total;
}

/** What a server child spends with nothing sent to it: CPU µs per wall second over one window. */
export async function idleCpu(child: Child, seconds: number): Promise<number | null> {
  const before = snapshot(child.pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = snapshot(child.pid);
  const elapsed = (performance.now() - started) / 1000;
  return before.server === null || after.server === null ? null : (after.server - before.server) / elapsed;
}

export interface IdleNet {
  /** The server's CPU µs per second with nothing sent to it, in the window before and the one after. */
  beforeUsPerSecond: number;
  afterUsPerSecond: number;
  /** `cpu.server` less the lower of those two rates over the run's window, per request. */
  netServerUs: number;
}

/**
 * A case at a fixed low rate (a few dozen requests a second) charges each request with the process's own
 * background work (timers, flushes, metrics, the GC of it) divided by few requests. This measures that work
 * over an equal window with nothing sent, before and after the run, and nets out the lower of the two rates:
 * the window after may still hold work the run left behind (closing its connections, collecting its
 * garbage), which belongs to the requests and must not be subtracted. Each window is as long as the run's,
 * so the /proc tick (10 ms) weighs the same on all three.
 */
export async function measureNetOfIdle(
  child: Child,
  spec: LoadSpec,
  options: Parameters<typeof measure>[2] & {
    /** The idle rate before, measured already (while the case's items were being prepared elsewhere). */
    idleBefore?: Promise<number | null> | undefined;
  },
): Promise<Measurement> {
  const window = options.durationSeconds + 0.1;
  const beforeRate = await (options.idleBefore ?? idleCpu(child, window));
  const m = await measure(child, spec, options);
  const afterRate = await idleCpu(child, window);
  if (beforeRate === null || afterRate === null || m.cpu.server === null || m.requests === 0) return m;
  const idleUs = Math.min(beforeRate, afterRate) * (m.cpuWindowSeconds ?? m.seconds);
  const netServerUs = Math.round(m.cpu.server - idleUs / m.requests);
  return {
    ...m,
    idle: {
      beforeUsPerSecond: Math.round(beforeRate),
      afterUsPerSecond: Math.round(afterRate),
      netServerUs,
    },
  };
}
