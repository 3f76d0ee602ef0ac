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
  /** The server child's resident memory: before the run, its peak (sampled every 100 ms) and after. */
  rss: RssSummary;
  profile?: ProfileSummary;
}

/** Every case, measured or warming up, goes through here: POST, JSON body built per request. */
function drive(child: Child, spec: LoadSpec, options: LoadOptions) {
  return autocannon({
    url: child.url,
    connections: options.connections,
    duration: options.durationSeconds,
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
  const rss = sampleRss(child.pid);
  const result = await drive(child, spec, options);
  const after = snapshot(child.pid, options.parties);
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
