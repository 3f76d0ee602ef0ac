import type { Machine } from './machine.ts';

/**
 * What `npm run bench:report` records: each step's own JSON output, kept as it wrote it, with how the
 * step ran. Only the fields the report reads are typed here; the steps are separate programs
 * (api/bench/run.ts, core/bench/pow/run.ts, core/bench/images.ts, k6 through loadtest/run.sh).
 */

export interface Step<T> {
  /** The command as a person would type it from the repository's root. */
  command: string;
  started: string;
  seconds: number;
  loadBefore: string;
  loadAfter: string;
  /** Absent when the step failed or did not run; `error` says why. */
  data?: T;
  error?: string;
}

export interface ApiMeasurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
  /** Microseconds of CPU per request; null where /proc could not say. */
  cpu: { server: number | null; postgres: number | null; redis: number | null; loadgen: number | null };
  /** The server process's resident set, sampled every 100 ms. */
  rss?: { beforeMiB: number | null; peakMiB: number | null; afterMiB: number | null };
}

export type Flow = 'baseline' | 'validate' | 'init' | 'submit' | 'issue';
export type Server = 'koa' | 'gatehouse' | 'cap' | 'altcha';

export interface ApiCase {
  name: string;
  flow: Flow;
  server: Server;
  note?: string;
  skipped?: string;
  /** Peer cases: how many answers said valid and invalid (the peers answer 200 either way). */
  outcomes?: { accepted: number; rejected: number };
  measurement?: ApiMeasurement;
}

export interface ApiBench {
  run: { command: string; date: string; machine: string; node: string; postgres: string; settings: string };
  cases: ApiCase[];
  /** The aim's verdict as the bench states it (validate against half of bare Koa). */
  verdict?: string;
}

export interface PowBench {
  machine: { chromium: string; go: string; rounds: number; msPerMeasurement: number };
  rows: {
    c: { id: string };
    browser: number[];
    node: number[];
    native: number[];
    ratio: number[];
    sources: string[];
  }[];
  peers: {
    id: string;
    difficulty: string;
    expected: number;
    medianMs: number;
    medianWallMs: number;
    browserRate: number;
    nativeRate: number;
    ratio: number;
    solves: { cpuMs: number }[];
  }[];
}

export interface ImageBench {
  runs: number;
  results: {
    name: string;
    runs: number;
    cpuMs: { p50: number; p99: number };
    wallMs: { p50: number; p99: number };
    bytes: Record<string, { mean: number; max: number }>;
  }[];
}

/** k6's handleSummary data, as loadtest/lib/gatehouse.js writes it. */
export interface K6Summary {
  metrics: Record<string, { values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }>;
}

export interface ReportData {
  version: 1;
  command: string;
  date: string;
  machine: Machine;
  steps: {
    api?: Step<ApiBench>;
    pow?: Step<PowBench>;
    images?: Step<ImageBench>;
    soak?: Step<K6Summary>;
    failoverOne?: Step<K6Summary>;
    failoverAll?: Step<K6Summary>;
  };
}
