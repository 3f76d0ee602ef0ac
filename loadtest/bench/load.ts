import { Agent, request } from 'node:http';
import { type EventLoopUtilization, performance as nodePerformance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { Child } from './child.ts';
import { type CpuPerRequest, type CpuSnapshot, type Parties, perRequest, snapshot } from './cpu.ts';
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
  /**
   * Paced cases only (bystanderCases in run.ts; sub-millisecond, from every answer's own time): p99.9 and
   * the slowest answer, ms. paced() rather than autocannon there: autocannon's rate sends each connection's
   * share of a second back to back at the top of that second and, at a fixed rate, adds coordinated-omission
   * samples in 1 ms steps below every slow answer, so one slow answer among a few hundred set the p99.
   */
  p999?: number;
  max?: number;
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
  /**
   * The share of the run the server's event loop was busy (0..1, performance.eventLoopUtilization between
   * the run's start and end): near 1, the server's one thread sets the pace and only less CPU per request
   * serves more; well below it, the server waits (on its database, on the load generator) and the cost is
   * elsewhere. Measured cases only (measure()).
   */
  loopBusy?: number;
  profile?: ProfileSummary;
}

/** What measure() reads of a run, from autocannon or from paced(). */
interface DriveResult {
  requests: { average: number; total: number };
  duration: number;
  latency: { p50: number; p99: number; p999?: number; max?: number };
  errors: number;
  statusCodeStats?: Record<string, { count?: number }>;
}

/** The `q` quantile (0..1) of ascending `sorted`, nearest rank. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * An open-loop client at a fixed rate: request i is sent at start + i/rate (whether or not earlier ones were
 * answered; beyond `connections` in flight it waits for a free connection, and that wait counts in its
 * time), over keep-alive connections, each answer timed from its send to its last byte.
 */
export async function paced(
  url: string,
  spec: LoadSpec,
  options: { connections: number; rate: number; amount: number },
  stop?: { stopped: boolean },
): Promise<DriveResult & { latenciesMs: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(spec.path, url);
  const latencies: number[] = [];
  const statusCodeStats: Record<string, { count: number }> = {};
  let errors = 0;
  const one = (body: string) =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...spec.headers,
          },
        },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            latencies.push(performance.now() - sent);
            const code = String(res.statusCode);
            statusCodeStats[code] = { count: (statusCodeStats[code]?.count ?? 0) + 1 };
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < options.amount && !stop?.stopped; i++) {
    const due = started + (i * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (stop?.stopped) break;
    pending.push(one(spec.body()));
  }
  await Promise.all(pending);
  agent.destroy();
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.toSorted((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    requests: { average: latencies.length / seconds, total: latencies.length },
    duration: seconds,
    latency: {
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      p999: round(quantile(sorted, 0.999)),
      max: round(sorted.at(-1) ?? 0),
    },
    errors,
    statusCodeStats,
    latenciesMs: latencies,
  };
}

/** paced() until `stopped` resolves (or `amount` is sent); resolves to how many were answered. */
export async function pacedUntil(
  url: string,
  spec: LoadSpec,
  options: { connections: number; rate: number; amount: number },
  stopped: Promise<void>,
): Promise<number> {
  const stop = { stopped: false };
  void stopped.then(() => {
    stop.stopped = true;
  });
  const result = await paced(url, spec, options, stop);
  return result.requests.total;
}

/** Every case, measured or warming up, goes through here: POST, JSON body built per request. */
async function drive(child: Child, spec: LoadSpec, options: LoadOptions): Promise<DriveResult> {
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
  const loopBefore = await child.call<EventLoopUtilization>({ type: 'loop' });
  const before = snapshot(child.pid, options.parties);
  const started = performance.now();
  const rss = sampleRss(child.pid);
  const result = await drive(child, spec, options);
  const after = snapshot(child.pid, options.parties);
  const loopAfter = await child.call<EventLoopUtilization>({ type: 'loop' });
  const cpuWindowSeconds = (performance.now() - started) / 1000;
  const memory = rss.stop();
  const profile = options.profile
    ? await child.call<ProfileSummary>({
        type: 'profile-stop',
        ...(options.profileFile ? { file: options.profileFile } : {}),
      })
    : undefined;
  const stats = result.statusCodeStats ?? {};
  const statuses = Object.fromEntries(Object.entries(stats).map(([code, s]) => [code, s.count ?? 0]));
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
    // With both arguments Node only subtracts them: the child's loop, not this process's.
    loopBusy: nodePerformance.eventLoopUtilization(loopAfter, loopBefore).utilization,
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
    /** Wraps the measured run (not the idle windows). */
    around?: (task: () => Promise<Measurement>) => Promise<Measurement>;
  },
): Promise<Measurement> {
  const window = options.durationSeconds + 0.1;
  const beforeRate = await (options.idleBefore ?? idleCpu(child, window));
  const run = () => measure(child, spec, options);
  const m = await (options.around ? options.around(run) : run());
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

/** One paced stretch of a case measured in several (bystanderRounds in run.ts): what combine() adds up. */
export interface Segment {
  latenciesMs: number[];
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  cpuWindowSeconds: number;
  before: CpuSnapshot;
  after: CpuSnapshot;
  rss: RssSummary;
}

/** A paced stretch of `spec` at `options`' rate and amount, with the same CPU and RSS accounting as measure(). */
export async function pacedSegment(
  child: Child,
  spec: LoadSpec,
  options: { connections: number; rate: number; amount: number },
  parties?: Parties,
): Promise<Segment> {
  const before = snapshot(child.pid, parties);
  const started = performance.now();
  const rss = sampleRss(child.pid);
  const result = await paced(child.url, spec, options);
  const after = snapshot(child.pid, parties);
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
  );
  return {
    latenciesMs: result.latenciesMs,
    statuses,
    errors: result.errors,
    seconds: result.duration,
    cpuWindowSeconds: (performance.now() - started) / 1000,
    before,
    after,
    rss: rss.stop(),
  };
}

/** The segments of one case as one Measurement: latencies pooled, CPU summed over the segments' windows. */
export function combine(segments: Segment[]): Measurement {
  const latencies = segments.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const s of segments)
    for (const [code, n] of Object.entries(s.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const sum = (pick: (c: CpuSnapshot) => number | null) => {
    let total = 0;
    for (const s of segments) {
      const a = pick(s.before);
      const b = pick(s.after);
      if (a === null || b === null) return null;
      total += b - a;
    }
    return total;
  };
  const zero = { server: 0, serverOwn: 0, postgres: 0, redis: 0, loadgen: 0, machine: { busy: 0, total: 0 } };
  const busy = sum((c) => c.machine?.busy ?? null);
  const all = sum((c) => c.machine?.total ?? null);
  const after: CpuSnapshot = {
    server: sum((c) => c.server),
    serverOwn: sum((c) => c.serverOwn),
    postgres: sum((c) => c.postgres),
    redis: sum((c) => c.redis),
    loadgen: sum((c) => c.loadgen) ?? 0,
    machine: busy === null || all === null ? null : { busy, total: all },
  };
  const seconds = segments.reduce((a, s) => a + s.seconds, 0);
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  const peak = (pick: (r: RssSummary) => number | null | undefined) =>
    segments.reduce<number | null>((m, s) => {
      const v = pick(s.rss) ?? null;
      return v === null ? m : m === null ? v : Math.max(m, v);
    }, null);
  return {
    reqPerSec: requests / Math.max(seconds, 1e-9),
    seconds,
    p50: round(quantile(latencies, 0.5)),
    p99: round(quantile(latencies, 0.99)),
    p999: round(quantile(latencies, 0.999)),
    max: round(latencies.at(-1) ?? 0),
    requests,
    statuses,
    errors: segments.reduce((a, s) => a + s.errors, 0),
    cpu: perRequest(zero, after, requests),
    cpuWindowSeconds: segments.reduce((a, s) => a + s.cpuWindowSeconds, 0),
    rss: {
      beforeMiB: segments[0]?.rss.beforeMiB ?? null,
      peakMiB: peak((r) => r.peakMiB),
      afterMiB: segments.at(-1)?.rss.afterMiB ?? null,
    },
  };
}
