import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { CLUSTER_DIR, IN_CI, ROOT, TOOLS_BIN } from './harness.ts';

/**
 * k6 as a drill's load (k6/drill.js): end users of each region verify through the cluster's Services
 * (host ports of forward.sh) while the test breaks something. The test tells the virtual users when the
 * drill is over through a control server on the host (127.0.0.1:CONTROL_PORT); they report each outcome
 * to it, so the drill can wait for "a first verification" or "verifications after the switch back".
 * k6's summary (its thresholds on failed verifications, double spends and checks) decides correctness.
 */

export const K6 = process.env.K6 ?? join(TOOLS_BIN, 'k6');
const SCRIPT = join(ROOT, 'loadtest/cluster/test/k6/drill.js');
const CONTROL_PORT = 22640;

/** Why k6 cannot run, or undefined; under CI=true a missing k6 is an error. */
export function k6Missing(): string | undefined {
  if (existsSync(K6)) return undefined;
  const message = `k6 not found at ${K6}: build it with 'nice bash .ci/tools.sh k6'`;
  if (IN_CI) throw new Error(`${message} (CI=true: the drills must not run without their load)`);
  return message;
}

export interface RegionTarget {
  name: string;
  /** The region's main API host (end users). */
  api: string;
  bypass: string;
  fallback: string;
  /** The integrator's main host for this region's tokens. */
  validate: string;
}

export interface DrillLoadOptions {
  name: string;
  regions: RegionTarget[];
  appKey: string;
  appSecret: string;
  /** Virtual users per region. */
  vus?: number;
  /** Regions whose end users must all verify (default: every region). */
  strictRegions?: string[];
  minValidations?: number;
  minOffline?: number;
  /** A new connection for every request (distinct end users) instead of each VU keeping its own. */
  noConnectionReuse?: boolean;
}

export interface Tally {
  ok: number;
  offline: number;
  failed: number;
}

export interface K6Result {
  code: number | null;
  output: string;
  /** The end-of-test summary (handleSummary's JSON): metrics with their values and thresholds. */
  // biome-ignore lint/suspicious/noExplicitAny: k6's summary document
  summary: any;
  /** A metric's count (0 when k6 never recorded it); `metric{tag:value}` for a submetric. */
  count(metric: string): number;
  /** Every threshold as "metric threshold: ok|FAIL". */
  thresholds(): string[];
  failedThresholds(): string[];
}

function count(tallies: Record<string, Tally>, key: string, outcome: keyof Tally) {
  const t = tallies[key] ?? { ok: 0, offline: 0, failed: 0 };
  t[outcome]++;
  tallies[key] = t;
}

/** A running drill load: its tallies as reported live, the phase the test sets, and its end. */
export class DrillLoad {
  readonly tally: Record<string, Tally> = {};
  /** Outcomes per phase, every region together. */
  readonly byPhase: Record<string, Tally> = {};
  phase = 'before';
  #done = false;
  #server: Server;
  #exit: Promise<K6Result>;
  #kill: () => void;

  private constructor(server: Server, exit: Promise<K6Result>, kill: () => void) {
    this.#server = server;
    this.#exit = exit;
    this.#kill = kill;
  }

  static async start(o: DrillLoadOptions): Promise<DrillLoad> {
    const dir = join(CLUSTER_DIR, 'k6');
    mkdirSync(dir, { recursive: true });
    const endpoints = join(dir, `${o.name}.endpoints.json`);
    writeFileSync(
      endpoints,
      JSON.stringify({
        regions: o.regions,
        apps: { test: { appKey: o.appKey, appSecret: o.appSecret } },
        control: `http://127.0.0.1:${CONTROL_PORT}/`,
      }),
    );
    let load: DrillLoad | undefined;
    const server = createServer((req, res) => {
      if (req.method === 'POST') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString('utf8')));
        req.on('end', () => {
          const { region, phase, outcome } = JSON.parse(body) as {
            region: string;
            phase: string;
            outcome: keyof Tally;
          };
          if (load) {
            count(load.tally, region, outcome);
            count(load.byPhase, phase, outcome);
          }
          res.end('{}');
        });
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ done: load?.done ?? false, phase: load?.phase ?? 'before' }));
    });
    await new Promise<void>((ok, fail) => server.once('error', fail).listen(CONTROL_PORT, '127.0.0.1', ok));

    // Vitest puts Vite's BASE_URL ('/') in process.env: not ours to pass on.
    const { BASE_URL: _vite, ...inherited } = process.env;
    const child = spawn(K6, ['run', '--quiet', '--no-color', SCRIPT], {
      cwd: ROOT,
      env: {
        ...inherited,
        ENDPOINTS: endpoints,
        NAME: o.name,
        SUMMARY_DIR: dir,
        VUS: String(o.vus ?? 2),
        STRICT_REGIONS: (o.strictRegions ?? o.regions.map((r) => r.name)).join(','),
        MIN_VALIDATIONS: String(o.minValidations ?? 1),
        MIN_OFFLINE: String(o.minOffline ?? 0),
        NO_REUSE: o.noConnectionReuse ? '1' : '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exit = new Promise<K6Result>((resolve) =>
      child.on('exit', (code) => {
        const file = join(dir, `${o.name}.json`);
        const summary = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { metrics: {} };
        const thresholds = () =>
          Object.entries(summary.metrics as Record<string, { thresholds?: Record<string, { ok: boolean }> }>)
            .flatMap(([m, v]) =>
              Object.entries(v.thresholds ?? {}).map(([t, r]) => `${m} ${t}: ${r.ok ? 'ok' : 'FAIL'}`),
            )
            .sort();
        resolve({
          code,
          output,
          summary,
          count: (metric) => summary.metrics[metric]?.values?.count ?? 0,
          thresholds,
          failedThresholds: () => thresholds().filter((t) => t.endsWith('FAIL')),
        });
      }),
    );
    load = new DrillLoad(server, exit, () => child.kill('SIGKILL'));
    return load;
  }

  get done(): boolean {
    return this.#done;
  }

  /** End users verified (main or offline) so far, every region together. */
  get verified(): number {
    return Object.values(this.tally).reduce((n, t) => n + t.ok + t.offline, 0);
  }

  /**
   * Tells the virtual users the drill is over and waits for k6's summary; k6 still running after
   * `ms` (an end user stuck past every timeout) is killed, and its summary is then missing.
   */
  async stop(ms = 60_000): Promise<K6Result> {
    this.#done = true;
    const timer = setTimeout(this.#kill, ms);
    try {
      return await this.#exit;
    } finally {
      clearTimeout(timer);
      await new Promise((r) => this.#server.close(r));
    }
  }
}
