import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LabelledHistogram } from './metrics.ts';

const options = {
  name: 'gatehouse_http_request_duration_seconds',
  help: 'HTTP request duration by route and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
};

/** The same observations into prom-client's Histogram and into LabelledHistogram, each in its own registry. */
function both() {
  const reference = new Registry();
  const ours = new Registry();
  const stock = new Histogram({ ...options, registers: [reference] });
  const fast = new LabelledHistogram({ ...options, registers: [ours] });
  return { reference, ours, stock, fast };
}

const labelValue = fc.oneof(
  fc.constantFrom('POST', 'GET', '/v1/validate', 'unmatched', '200', '404'),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('a"b', 'back\\slash', 'new\nline'),
);

describe('LabelledHistogram', () => {
  it('exposes exactly what prom-client exposes for the same observations (text and JSON)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            method: labelValue,
            route: labelValue,
            status: labelValue,
            value: fc.oneof(
              fc.double({ min: -1, max: 10, noNaN: true }),
              fc.constantFrom(0, 0.001, 0.0025, 2.5, 2.5000001, 1e6),
            ),
          }),
          { maxLength: 40 },
        ),
        async (observations) => {
          const { reference, ours, stock, fast } = both();
          for (const { value, ...labels } of observations) {
            stock.labels(labels).observe(value);
            fast.labels(labels).observe(value);
          }
          expect(await ours.metrics()).toBe(await reference.metrics());
          expect(await ours.getMetricsAsJSON()).toEqual(await reference.getMetricsAsJSON());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a label it was not made with and a value that is not a finite number, as prom-client does', () => {
    const { stock, fast } = both();
    expect(() => stock.labels({ tier: 'x' } as never)).toThrow(/not included/);
    expect(() => fast.labels({ tier: 'x' } as never)).toThrow(/not included/);
    expect(() => stock.labels({ method: 'GET' }).observe(Number.NaN)).toThrow(TypeError);
    expect(() => fast.labels({ method: 'GET' }).observe(Number.NaN)).toThrow(TypeError);
    expect(() => fast.labels({ method: 'GET' }).observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });

  it('starts over on reset, as the registry resets it', async () => {
    const { ours, fast } = both();
    fast.labels({ method: 'GET', route: '/x', status: '200' }).observe(0.01);
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('_count{');
  });
});
