import { describe, expect, it } from 'vitest';
import { ownedChangeMatters } from './owned-change.ts';

const deployment = (over: Record<string, unknown> = {}) => ({
  metadata: { generation: 1, labels: { a: '1' } },
  spec: { replicas: 2 },
  status: {
    replicas: 2,
    availableReplicas: 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
  },
  ...over,
});

describe('ownedChangeMatters', () => {
  it('a hand edit, a label change or a rollout state change needs a reconcile', () => {
    expect(ownedChangeMatters('Deployment', deployment(), deployment({ spec: { replicas: 5 } }))).toBe(true);
    expect(
      ownedChangeMatters('Deployment', deployment(), deployment({ metadata: { generation: 1, labels: {} } })),
    ).toBe(true);
    expect(
      ownedChangeMatters(
        'Deployment',
        deployment(),
        deployment({ status: { replicas: 2, availableReplicas: 1, conditions: [] } }),
      ),
    ).toBe(true);
    expect(ownedChangeMatters('Secret', { data: { a: 'x' } }, { data: { a: 'y' } })).toBe(true);
  });

  it("a new resourceVersion alone, or another kind's status, does not", () => {
    expect(ownedChangeMatters('Deployment', deployment(), deployment())).toBe(false);
    expect(
      ownedChangeMatters(
        'Service',
        { spec: { ports: [] }, status: { loadBalancer: {} } } as never,
        { spec: { ports: [] }, status: { loadBalancer: { ingress: [] } } } as never,
      ),
    ).toBe(false);
  });
});
