import { describe, expect, it } from 'vitest';
import { toSvg } from '../report/charts.ts';
import type { ApiCase, K6Summary, ReportData, Step } from '../report/data.ts';
import { failedSteps, placeBlock, render } from '../report/render.ts';

/** `npm run bench:report`'s rendering, from figures made up here: what the report says about a run. */

const machine = {
  cores: 2,
  cpu: 'Test CPU',
  memoryGiB: 8,
  kernel: 'Linux 6.1',
  node: 'Node v24.0.0',
  tools: { k6: 'k6 v2.2.0' },
};

function step<T>(command: string, data?: T, error?: string): Step<T> {
  // A step either has its data or says why not.
  return {
    command,
    started: '2026-11-21T10:00:00.000Z',
    seconds: 12,
    loadBefore: '0.50 0.40 0.30',
    loadAfter: '1.50 0.60 0.40',
    ...(data ? { data } : {}),
    ...(error ? { error } : {}),
  };
}

function apiCase(name: string, flow: ApiCase['flow'], server: ApiCase['server'], reqPerSec: number): ApiCase {
  return {
    name,
    group: server === 'koa' ? 'bare Koa' : 'PostgreSQL',
    flow,
    server,
    measurement: {
      reqPerSec,
      seconds: 5,
      p50: 1000 / reqPerSec,
      p99: 10_000 / reqPerSec,
      requests: reqPerSec * 5,
      statuses: { '200': reqPerSec * 5 },
      errors: 0,
      cpu: { server: 1e6 / reqPerSec, postgres: 10, redis: null, loadgen: 20, machineBusy: null },
      rss: { beforeMiB: 100, peakMiB: 150 + reqPerSec / 1000, afterMiB: 120 },
    },
  };
}

const API_COMMAND = 'node loadtest/bench/run.ts --peers --only postgresql --no-write --json FILE';

function data(overrides: Partial<ReportData['steps']> = {}): ReportData {
  const k6 = (over: number, back: number) => ({
    metrics: {
      switch_over_ms: { values: { max: over } },
      switch_back_ms: { values: { max: back } },
      failed_verifications: { values: { count: 0 } },
      tokens_accepted_twice: { values: { count: 0 } },
      iterations: { values: { count: 222 } },
      'verification_ms{phase:steady}': { values: { 'p(99)': 19 } },
      'verification_ms{phase:switching}': { values: { 'p(99)': 717 } },
    },
  });
  return {
    version: 1,
    command: 'npm run bench:report',
    date: '2026-11-21T10:00:00.000Z',
    machine,
    steps: {
      api: step(API_COMMAND, {
        run: {
          command: API_COMMAND,
          date: '',
          machine: '',
          node: '',
          postgres: 'PostgreSQL 15',
          settings: '5 s per case',
          options: {},
        },
        cases: [
          apiCase('bare Koa, JSON answer', 'baseline', 'koa', 16_000),
          apiCase('validate, fresh token (PostgreSQL)', 'validate', 'gatehouse', 1_600),
          apiCase('validate, used token (PostgreSQL)', 'validate', 'gatehouse', 900),
          apiCase('validate (Cap)', 'validate', 'cap', 800),
          apiCase('challenge init (ALTCHA)', 'init', 'altcha', 240),
          apiCase('challenge init, invisible tier (PostgreSQL)', 'init', 'gatehouse', 480),
        ],
        verdict: '',
      }),
      pow: step('POW_BENCH_ROUNDS=2 node loadtest/bench/pow/run.ts', {
        machine: { chromium: '156', go: 'go1.26', rounds: 2, msPerMeasurement: 1000 },
        rows: [
          {
            c: { id: 'scrypt N=4096 (4MiB)' },
            browser: [100, 120],
            node: [60, 70],
            native: [170, 180],
            ratio: [1.7, 1.5],
            sources: ['libsodium', 'libsodium'],
          },
        ],
        peers: [
          {
            id: 'Cap',
            difficulty: 'c=50',
            expected: 3e6,
            medianMs: 620,
            medianWallMs: 610,
            browserRate: 4.8e6,
            nativeRate: 1.2e7,
            ratio: 2.5,
            solves: [{ cpuMs: 620 }],
          },
        ],
      }),
      images: step('node loadtest/bench/images.ts --runs 200 --json FILE', {
        runs: 200,
        results: [
          {
            name: 'slide',
            kind: 'slide',
            format: 'webp',
            runs: 200,
            cpuMs: { p50: 9.1, p99: 18.6 },
            wallMs: { p50: 9.4, p99: 19 },
            bytes: { background: { mean: 10_240, max: 10_500 } },
          },
        ],
      }),
      failoverOne: step('DRILL=one loadtest/run.sh failover --short', k6(568, 1723)),
      failoverAll: step('DRILL=all loadtest/run.sh failover --short', k6(601, 2904)),
      ...overrides,
    },
  };
}

describe('benchmark report', () => {
  it('gives every section its command and load, and the ratios within the run', () => {
    const { markdown } = render(data(), 'benchmarks');
    expect(markdown).toContain('Written by `npm run bench:report`');
    expect(markdown).toContain('2 × Test CPU, 8 GiB, Linux 6.1, Node v24.0.0');
    expect(markdown).toContain(`Command: \`${API_COMMAND}\``);
    expect(markdown).toContain(
      'on 2 × Test CPU, 8 GiB, Linux 6.1, Node v24.0.0; load average 0.50 0.40 0.30 before, 1.50 0.60 0.40 after',
    );
    // Gatehouse 1,600 req/s against Koa 16,000 and Cap 800: 0.10× and 2.00×.
    expect(markdown).toContain(
      '- validate, fresh token: 1,600 req/s, 0.10× bare Koa, JSON answer, 2.00× validate (Cap).',
    );
    expect(markdown).toContain(
      '- challenge init, invisible tier: 480 req/s, 0.03× bare Koa, JSON answer, 2.00× challenge init (ALTCHA).',
    );
    // Replays are in the table, not in the first-use comparisons.
    expect(markdown).toMatch(/\| validate, used token \(PostgreSQL\) +\| 900 /);
    expect(markdown).not.toContain('- validate, used token');
    expect(markdown).toMatch(
      /\| scrypt N=4096 \(4MiB\) +\| 110 +\| 65\.0 +\| 175 \(libsodium\) +\| 1\.60× +\|/,
    );
    expect(markdown).toMatch(/\| one region +\| 568 +\| 1,723 +\| 19 · 717 +\| 222 +\| 0 +\| 0 +\|/);
    expect(markdown).toMatch(/\| every region +\| 601 +\| 2,904 /);
    expect(markdown).toMatch(/\| validate, fresh token \(PostgreSQL\) +\| 100 +\| 152 +\| 120 +\|/);
  });

  it('draws every plot it references, each naming its command and machine', async () => {
    const { markdown, charts } = render(data(), 'benchmarks');
    expect(charts.map((c) => c.name).sort()).toEqual(
      [
        'api-cpu',
        'api-latency',
        'api-throughput',
        'failover',
        'images',
        'memory',
        'pow-native-advantage',
        'pow-rates',
        'pow-solves',
      ].sort(),
    );
    for (const chart of charts) {
      expect(markdown).toContain(`](benchmarks/${chart.name}.svg)`);
      const svg = await toSvg(chart);
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).toContain('Test CPU');
      expect(svg).toContain('$ ');
    }
    const throughput = await toSvg(charts.find((c) => c.name === 'api-throughput')!);
    for (const label of [
      'Gatehouse',
      'Cap (@cap.js/server)',
      'ALTCHA (altcha-lib)',
      'bare Koa, JSON answer',
    ]) {
      expect(throughput).toContain(label);
    }
  });

  it('takes no throughput ratio of a case sent at a fixed pace, and says its pace in the table', async () => {
    const base = data();
    const api = base.steps.api!.data!;
    const paced = {
      ...apiCase('validate, bystander idle (PostgreSQL)', 'validate', 'gatehouse', 100),
      pacedPerSec: 100,
    };
    const report = {
      ...base,
      steps: { ...base.steps, api: { ...base.steps.api!, data: { ...api, cases: [...api.cases, paced] } } },
    };
    const { markdown, charts } = render(report, 'benchmarks');
    // Its 100 req/s is the pace set, not a capacity: no "0.01× bare Koa" line, no bar.
    expect(markdown).not.toContain('- validate, bystander idle');
    expect(markdown).toMatch(/\| validate, bystander idle \(PostgreSQL\) +\| 100 +\| paced at 100\/s +\|/);
    const throughput = await toSvg(charts.find((c) => c.name === 'api-throughput')!);
    expect(throughput).not.toContain('bystander idle');
    // The flat-out cases keep their ratios.
    expect(markdown).toContain(
      '- validate, fresh token: 1,600 req/s, 0.10× bare Koa, JSON answer, 2.00× validate (Cap).',
    );
  });

  it('says which steps were not measured, and why', () => {
    const report = data({
      failoverAll: step<K6Summary>('DRILL=all loadtest/run.sh failover --short', undefined, 'k6 not found'),
    });
    const { markdown } = render(report, 'benchmarks');
    expect(markdown).toContain('every region: **not measured**: k6 not found.');
    expect(failedSteps(report)).toEqual(['failoverAll: k6 not found']);
    expect(failedSteps(data())).toEqual([]);
  });

  it('replaces only its own block of docs/benchmarks.md', () => {
    const first = placeBlock('# Benchmarks\n\nIntro.\n\n## Foundation\n\nAnalysis.\n', 'one');
    expect(first).toMatch(
      /^# Benchmarks\n\n## Report\n\n<!-- bench:report:begin[^\n]*-->\none\n<!-- bench:report:end -->\n/,
    );
    const second = placeBlock(first, 'two');
    expect(second).toContain('\ntwo\n');
    expect(second).not.toContain('\none\n');
    expect(second.endsWith('## Foundation\n\nAnalysis.\n')).toBe(true);
    expect(second.match(/## Report/g)).toHaveLength(1);
  });
});
