import type { appSpecSchema, regionSchema } from './app-spec.ts';
import type { appStatusSchema, conditionSchema, regionStatusSchema } from './app-status.ts';
import type { Infer } from './schema.ts';

/*
 * The operator's types of the App API, inferred from the schemas the CRD is generated from
 * (app-spec.ts, app-status.ts): one source for both.
 */

export type AppSpec = Infer<typeof appSpecSchema>;
export type RegionSpec = Infer<typeof regionSchema>;
export type AppStatus = Infer<typeof appStatusSchema>;
export type RegionStatus = Infer<typeof regionStatusSchema>;
export type Condition = Infer<typeof conditionSchema>;
export type ConditionStatus = Condition['status'];

/** An App as read from the apiserver (defaults applied). */
export interface App {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation: number;
    resourceVersion: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: AppSpec;
  status?: AppStatus;
}
