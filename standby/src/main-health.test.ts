import { describe, expect, it } from 'vitest';
import { MainHealth } from './main-health.ts';

const settings = { intervalMs: 1000, timeoutMs: 500, failAfter: 3, recoverAfter: 2 };

describe('MainHealth', () => {
  it('starts up and online: a fresh standby never takes traffic', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    expect(health.status()).toMatchObject({ main: 'up', serving: false });
  });
  it('goes down only after failAfter consecutive failures, and back up after recoverAfter successes', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    const changes: string[] = [];
    health.on('change', (s) => changes.push(s));
    for (const ok of [false, false, true, false, false]) health.record(ok);
    expect(health.serving).toBe(false);
    health.record(false);
    expect(health.serving).toBe(true);
    health.record(true);
    health.record(false);
    health.record(true);
    expect(health.serving).toBe(true);
    health.record(true);
    expect(health.serving).toBe(false);
    expect(changes).toEqual(['down', 'up']);
  });
  it('obeys the operator: serve and online override the probes, auto returns to them', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    health.setMode('serve');
    expect(health.serving).toBe(true);
    for (let i = 0; i < 5; i++) health.record(false);
    health.setMode('online');
    expect(health.serving).toBe(false);
    health.setMode('auto');
    expect(health.serving).toBe(true);
  });
  it('probes a real endpoint: a closed port is a failure', async () => {
    expect(await new MainHealth('http://127.0.0.1:9', settings).probeOnce()).toBe(false);
  });
});
