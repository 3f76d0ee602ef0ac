import type { App } from '../../api/v1alpha1/app-types.ts';
import { resourcePath, SECRETS } from '../../runtime/resources.ts';
import type { ControllerDeps, ReconcileContext, Step } from '../context.ts';

/*
 * What the apiserver cannot check when an App is written, because the answer lies in other objects: a
 * host another App already serves, a Secret that does not exist (yet) or lacks its key, a locality the
 * database does not have. Each makes the App Ready=False with reason InvalidSpec and a message naming
 * it, and nothing is rendered until it is fixed: pods that could not start (or an Ingress that would
 * steal another App's traffic) help no one.
 */

export const hostsOf = (app: App) =>
  app.spec.regions.flatMap((r) => [r.hosts.api, ...r.hosts.bypass, ...r.hosts.fallback]);

const keyOf = (app: App) => `${app.metadata.namespace}/${app.metadata.name}`;

/** The App created first keeps a contested host (then the name decides): the newcomer is the one refused. */
function claimsFirst(other: App, app: App): boolean {
  const a = other.metadata.creationTimestamp ?? '';
  const b = app.metadata.creationTimestamp ?? '';
  return a !== b ? a < b : keyOf(other) < keyOf(app);
}

function hostConflicts(app: App, others: readonly App[]): string[] {
  const mine = new Set(hostsOf(app));
  return others
    .filter(
      (o) => o.metadata.uid !== app.metadata.uid && !o.metadata.deletionTimestamp && claimsFirst(o, app),
    )
    .flatMap((o) =>
      hostsOf(o)
        .filter((h) => mine.has(h))
        .map((h) => `host ${h} is already served by App ${keyOf(o)}`),
    );
}

type Secret = { data?: Record<string, string> };

/** Secrets the pods read: the runtime one (whole), and per region the database and store keys. */
function secretNeeds(app: App, runtimeSecret: string) {
  const needs: { name: string; key?: string; what: string }[] = [
    { name: app.spec.runtimeSecretRef?.name ?? runtimeSecret, what: 'runtime environment' },
  ];
  for (const r of app.spec.regions) {
    if (r.databaseSecretRef) needs.push({ ...r.databaseSecretRef, what: `region ${r.name} database URL` });
    if (r.standbyStoreSecretRef)
      needs.push({ ...r.standbyStoreSecretRef, what: `region ${r.name} standby store URL` });
  }
  return needs;
}

async function secretProblems(ctx: ReconcileContext, deps: ControllerDeps): Promise<string[]> {
  const ns = ctx.app.metadata.namespace;
  const seen = new Map<string, Promise<Secret | null>>();
  const problems: string[] = [];
  for (const need of secretNeeds(ctx.app, deps.defaults.runtimeSecret)) {
    if (!seen.has(need.name))
      seen.set(need.name, deps.client.getOrNull<Secret>(resourcePath(SECRETS, ns, need.name)));
    const secret = await seen.get(need.name);
    if (!secret) problems.push(`Secret ${need.name} (${need.what}) does not exist in namespace ${ns}`);
    else if (need.key && !secret.data?.[need.key])
      problems.push(`Secret ${need.name} (${need.what}) has no key ${need.key}`);
  }
  return problems;
}

function localityProblems(app: App, known: readonly string[] | undefined): string[] {
  if (!known?.length) return [];
  return app.spec.regions
    .map((r) => ({ r, locality: r.locality ?? r.name }))
    .filter(({ locality }) => !known.includes(locality))
    .map(
      ({ r, locality }) =>
        `region ${r.name}: locality ${locality} is not a database region (${known.join(', ')})${r.locality ? '' : '; set regions[].locality'}`,
    );
}

/** Step 2: stops the reconcile (ctx.invalid) when the App cannot be carried out as written. */
export const checkSpec: Step = async function checkSpec(ctx, deps) {
  const ns = ctx.app.metadata.namespace;
  if (deps.secretNamespaces && !deps.secretNamespaces.includes(ns)) {
    ctx.invalid = `the operator may not read Secrets in namespace ${ns} (it may in ${deps.secretNamespaces.join(', ')}): add it to operator.secretNamespaces (--secret-namespaces)`;
    return;
  }
  const problems = [
    ...localityProblems(ctx.app, deps.databaseRegions),
    ...hostConflicts(ctx.app, deps.apps()),
    ...(await secretProblems(ctx, deps)),
  ];
  if (problems.length) ctx.invalid = problems.join('; ');
};
