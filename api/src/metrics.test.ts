import { describe, expect, it } from 'vitest';
import { createMetrics, labelledChildren } from './metrics.ts';

describe('labelledChildren', () => {
  it('makes a child once per label set and keeps it', () => {
    const made: Record<string, string>[] = [];
    const child = labelledChildren((values) => {
      made.push(values);
      return { values };
    });
    const a = child({ kind: 'pass', outcome: 'valid' });
    expect(child({ kind: 'pass', outcome: 'valid' })).toBe(a);
    expect(child({ kind: 'pass', outcome: 'invalid' })).not.toBe(a);
    expect(made).toHaveLength(2);
  });

  it('starts over past its bound instead of growing without end', () => {
    let made = 0;
    const child = labelledChildren(() => ({ n: made++ }), 3);
    for (const method of ['A', 'B', 'C', 'D']) child({ method });
    expect(made).toBe(4);
    // 'A' was dropped when the cache started over at 'D': asked again, it is made again.
    child({ method: 'A' });
    expect(made).toBe(5);
  });

  it("observes into prom-client's histogram: the exposition counts each observation in its bucket", async () => {
    const metrics = createMetrics();
    const durations = labelledChildren((v) => metrics.httpDuration.labels(v));
    durations({ method: 'POST', route: '/v1/validate', status: '200' }).observe(0.002);
    durations({ method: 'POST', route: '/v1/validate', status: '200' }).observe(3);
    const text = await metrics.registry.metrics();
    const labels = 'method="POST",route="/v1/validate",status="200"';
    expect(text).toContain(`gatehouse_http_request_duration_seconds_bucket{le="0.001",${labels}} 0`);
    expect(text).toContain(`gatehouse_http_request_duration_seconds_bucket{le="0.0025",${labels}} 1`);
    expect(text).toContain(`gatehouse_http_request_duration_seconds_bucket{le="+Inf",${labels}} 2`);
    expect(text).toContain(`gatehouse_http_request_duration_seconds_count{${labels}} 2`);
  });
});
