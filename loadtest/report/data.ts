import type { ImageResult } from '../bench/images.ts';
import type { BenchJson, Flow, Server } from '../bench/report.ts';
import type { Machine } from './machine.ts';

/**
 * What `npm run bench:report` records: each step's own JSON output, kept as it wrote it, with how the
 * step ran. The steps are separate programs (loadtest/bench/run.ts, loadtest/bench/pow/run.ts,
 * loadtest/bench/images.ts, k6 through loadtest/run.sh); where a step exports the type of its JSON, the
 * report imports that type, and types here only the fields it reads of the others.
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

/** The API bench's `--json` output, as loadtest/bench/report.ts defines it (a type import: nothing runs). */
export type ApiBench = BenchJson;
export type ApiCase = BenchJson['cases'][number];
export type { Flow, Server };

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
  results: ImageResult[];
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
