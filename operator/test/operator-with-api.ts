import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll } from 'vitest';
import type { OperatorConfig } from '../src/config.ts';
import type { Manager, ManagerOptions } from '../src/manager.ts';
import type { KubeClient } from '../src/runtime/kube-client.ts';
import { createNamespace, startClusterWithOperator, startOperator, testConfig } from './cluster.ts';
import type { ControlPlane } from './control-plane.ts';

/** What a suite drives: the control plane, its admin client, a live API and the operator in front of it. */
export interface OperatorWithApi {
  cp: ControlPlane;
  admin: KubeClient;
  api: TestApi;
  manager: Manager;
}

/**
 * Registers the suite's set-up and tear-down: a control plane with the shipped CRD and RBAC, the suite's
 * namespaces, a live API, and the operator against both (the main API healthy and no standby pods listed,
 * unless `operator` says otherwise). The fields are there once the suite's beforeAll has run.
 */
export function useOperatorWithApi(setup: {
  namespaces: string[];
  cluster?: { secretsEverywhere?: boolean };
  config?: Partial<OperatorConfig>;
  operator?: Partial<ManagerOptions>;
}): OperatorWithApi {
  const fleet = {} as OperatorWithApi;
  beforeAll(async () => {
    ({ cp: fleet.cp, admin: fleet.admin } = await startClusterWithOperator(setup.cluster));
    for (const ns of setup.namespaces) await createNamespace(fleet.admin, ns);
    fleet.api = await startTestApi();
    fleet.manager = await startOperator(
      fleet.cp.kubeConfig('operator'),
      testConfig(fleet.api.url, fleet.api.runtime.adminToken, setup.config),
      { probe: async () => true, standbyTargets: async () => [], ...setup.operator },
    );
  }, 300_000);
  afterAll(async () => {
    await fleet.manager?.stop();
    await fleet.api?.close();
    await fleet.cp?.stop();
  }, 60_000);
  return fleet;
}
