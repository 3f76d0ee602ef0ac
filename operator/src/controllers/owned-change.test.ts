import { describe, expect, it } from 'vitest';
import { ownedChange } from './owned-change.ts';

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

describe('ownedChange', () => {
  it('a hand edit or a label change needs a reconcile now, a rollout state change a batched one', () => {
    expect(ownedChange('Deployment', deployment(), deployment({ spec: { replicas: 5 } }))).toBe('now');
    expect(
      ownedChange('Deployment', deployment(), deployment({ metadata: { generation: 1, labels: {} } })),
    ).toBe('now');
    expect(
      ownedChange(
        'Deployment',
        deployment(),
        deployment({ status: { replicas: 2, availableReplicas: 1, conditions: [] } }),
      ),
    ).toBe('batched');
    expect(ownedChange('Secret', { data: { a: 'x' } }, { data: { a: 'y' } })).toBe('now');
  });

  it("a new resourceVersion alone, or another kind's status, does not", () => {
    expect(ownedChange('Deployment', deployment(), deployment())).toBe('none');
    expect(
      ownedChange(
        'Service',
        { spec: { ports: [] }, status: { loadBalancer: {} } } as never,
        { spec: { ports: [] }, status: { loadBalancer: { ingress: [] } } } as never,
      ),
    ).toBe('none');
  });
});
