import { describe, expect, it } from 'vitest';
import { loadOperatorConfig } from './config.ts';

const token = 'a'.repeat(32);

describe('loadOperatorConfig', () => {
  it('takes flags before the environment, and defaults the rest', () => {
    const c = loadOperatorConfig(['--admin-url', 'http://api.gatehouse.svc/', '--concurrency', '4'], {
      GATEHOUSE_ADMIN_URL: 'http://ignored',
      GATEHOUSE_ADMIN_TOKEN: token,
      POD_NAME: 'op-0',
    });
    expect(c).toMatchObject({
      adminUrl: 'http://api.gatehouse.svc',
      adminToken: token,
      concurrency: 4,
      healthPort: 8081,
      metricsPort: 8080,
      metricsAuth: 'kubernetes',
      resyncMs: 300_000,
      probe: {
        intervalMs: 500,
        timeoutMs: 400,
        failAfter: 3,
        recoverAfter: 3,
        flapWindowMs: 60_000,
        flapHoldMs: 30_000,
      },
      leaderElection: { enabled: true, namespace: 'gatehouse-system', name: 'gatehouse-operator-leader' },
    });
    expect(c.leaderElection.identity).toMatch(/^op-0_[0-9a-f]{8}$/);
  });

  it('never falls back to the admin token for the standby: standbys accept only their sync credential', () => {
    const c = loadOperatorConfig([], { GATEHOUSE_ADMIN_URL: 'http://api', GATEHOUSE_ADMIN_TOKEN: token });
    expect(c.standbyToken).toBeUndefined();
  });

  it('refuses bad settings with one precise line each, and a missing admin token', () => {
    expect(() =>
      loadOperatorConfig(['--admin-url', 'nope', '--probe-fail-after', '0'], {
        GATEHOUSE_ADMIN_TOKEN: token,
      }),
    ).toThrow(/--admin-url \(GATEHOUSE_ADMIN_URL\).*\n.*--probe-fail-after \(PROBE_FAIL_AFTER\)/);
    expect(() => loadOperatorConfig(['--admin-url', 'http://api'], {})).toThrow(/admin token is missing/);
    expect(() => loadOperatorConfig(['--no-such-flag', 'x'], {})).toThrow(/Unknown option/);
  });

  it('a separate standby token when given; leader election can be turned off', () => {
    const c = loadOperatorConfig(['--leader-elect', 'false'], {
      GATEHOUSE_ADMIN_URL: 'http://api',
      GATEHOUSE_ADMIN_TOKEN: token,
      GATEHOUSE_STANDBY_SYNC_TOKEN: 'sync',
    });
    expect(c.standbyToken).toBe('sync');
    expect(c.leaderElection.enabled).toBe(false);
  });

  it("the pods' TRUSTED_PROXIES: the Ingress controller's private addresses by default, a bad setting refused", () => {
    const env = { GATEHOUSE_ADMIN_URL: 'http://api', GATEHOUSE_ADMIN_TOKEN: token };
    expect(loadOperatorConfig([], env).trustedProxies).toBe('private');
    for (const good of ['2', 'private', '10.0.0.0/8,2001:db8::/32, loopback', '203.0.113.9'])
      expect(loadOperatorConfig(['--trusted-proxies', good], env).trustedProxies).toBe(good);
    for (const bad of ['0', 'true', '10.0.0.0/33', 'privat', '10.0.0.1,,private', '300.1.1.1'])
      expect(() => loadOperatorConfig(['--trusted-proxies', bad], env)).toThrow(
        /--trusted-proxies \(GATEHOUSE_TRUSTED_PROXIES\)/,
      );
  });
});
