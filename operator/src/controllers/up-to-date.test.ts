import { describe, expect, it } from 'vitest';
import { makeApp } from '../../test/fixtures.ts';
import { buildDeployment } from './desired/deployment.ts';
import { covers, INTENT_ANNOTATION, upToDate, withIntent } from './up-to-date.ts';

const defaults = {
  images: { api: 'api:1', standby: 'standby:1' },
  runtimeSecret: 'gatehouse-runtime',
  trustedProxies: 'private',
  operatorNamespace: 'gatehouse-system',
};

describe('covers', () => {
  it('ignores what the server or other controllers add, not what differs or is missing', () => {
    const want = { spec: { replicas: 2, ports: [{ name: 'http', port: 80 }] } };
    const live = {
      spec: { replicas: 2, ports: [{ name: 'http', port: 80, protocol: 'TCP' }], clusterIP: '10.0.0.7' },
    };
    expect(covers(live, want)).toBe(true);
    expect(covers({ spec: { ...live.spec, replicas: 3 } }, want)).toBe(false);
    expect(covers({ spec: { replicas: 2 } }, want)).toBe(false);
    expect(
      covers({ spec: { ...live.spec, ports: [...live.spec.ports, { name: 'x', port: 81 }] } }, want),
    ).toBe(false);
    expect(covers({ spec: { replicas: '2', ports: live.spec.ports } }, want)).toBe(false);
  });
});

describe('upToDate', () => {
  const app = makeApp();
  const region = app.spec.regions[0];
  if (!region) throw new Error('fixture without regions');
  const intent = withIntent(buildDeployment(app, region, 'api', defaults));
  const annotationsOf = (o: { metadata: object }) =>
    (o.metadata as { annotations?: Record<string, string> }).annotations;
  /** What the cache holds after the apply: defaults and status added, apiVersion and kind gone (list items). */
  const live = () => {
    const { apiVersion: _v, kind: _k, ...copy } = structuredClone(intent) as typeof intent;
    const annotations = { ...annotationsOf(copy), 'deployment.kubernetes.io/revision': '1' };
    return {
      ...copy,
      metadata: { ...copy.metadata, annotations, uid: 'u', resourceVersion: '9', generation: 1 },
      spec: { ...copy.spec, progressDeadlineSeconds: 600 },
      status: { replicas: 2 },
    };
  };

  it('is true for the object as applied, whatever was added around it', () => {
    expect(annotationsOf(intent)?.[INTENT_ANNOTATION]).toMatch(/^[0-9a-f]{20}$/);
    expect(upToDate(intent, live())).toBe(true);
  });

  it('is false when the object is missing, a set field was edited, or the intent changed', () => {
    expect(upToDate(intent, undefined)).toBe(false);
    const edited = live();
    edited.spec.replicas = 5;
    expect(upToDate(intent, edited)).toBe(false);
    // A field the operator stops setting: the live object still holds every wanted value, but not the hash.
    const fewer = structuredClone(buildDeployment(app, region, 'api', defaults)) as {
      spec: { replicas?: number };
    };
    delete fewer.spec.replicas;
    expect(upToDate(withIntent(fewer as typeof intent), live())).toBe(false);
  });
});
