import type { App } from '../../api/v1alpha1/app-types.ts';
import type { KubeObject } from '../../runtime/kube-client.ts';
import {
  DEPLOYMENTS,
  INGRESSES,
  NETWORK_POLICIES,
  PDBS,
  type ResourceType,
  SERVICES,
} from '../../runtime/resources.ts';
import { ROLES } from '../names.ts';
import { type BuildDefaults, buildDeployment } from './deployment.ts';
import { buildIngress, buildNetworkPolicies, buildPdb, buildService } from './network.ts';

export type { BuildDefaults } from './deployment.ts';

/** Kinds the operator creates per region, in the order they are applied (Services before their Ingress). */
export const CHILD_TYPES: readonly ResourceType[] = [
  DEPLOYMENTS,
  SERVICES,
  PDBS,
  INGRESSES,
  NETWORK_POLICIES,
];

export interface DesiredObject {
  type: ResourceType;
  object: KubeObject & { metadata: { name: string; namespace: string } };
}

/** Everything an App should own, every region: 3 Deployments, Services and PDBs, 1 Ingress, 2 NetworkPolicies. */
export function desiredObjects(app: App, defaults: BuildDefaults): DesiredObject[] {
  const out: DesiredObject[] = [];
  for (const region of app.spec.regions) {
    for (const role of ROLES) {
      out.push({ type: DEPLOYMENTS, object: buildDeployment(app, region, role, defaults) });
      out.push({ type: SERVICES, object: buildService(app, region, role) });
      out.push({ type: PDBS, object: buildPdb(app, region, role) });
    }
    out.push({ type: INGRESSES, object: buildIngress(app, region) });
    for (const object of buildNetworkPolicies(app, region, defaults))
      out.push({ type: NETWORK_POLICIES, object });
  }
  return out;
}
