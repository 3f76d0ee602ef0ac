/**
 * Checks of rendered manifests against a real kube-apiserver: JSON schemas for kubeconform taken from its
 * /openapi/v2 (so kubeconform runs offline, strict, CRD kinds included), real creation of CRDs and
 * Namespaces, and a server-side dry-run (`?dryRun=All&fieldValidation=Strict`) of everything else.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ControlPlane, startControlPlane } from '@gatehouse/operator/testing';
import { loadAll } from 'js-yaml';
import { run } from './tools.ts';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  [key: string]: unknown;
}

/** Every object of a multi-document YAML stream (empty documents dropped). */
export function parseObjects(text: string): KubeObject[] {
  return (loadAll(text) as (KubeObject | null)[]).filter(
    (o): o is KubeObject => !!o && typeof o === 'object',
  );
}

export const describe = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

type Json = Record<string, unknown>;

/** Makes Kubernetes' OpenAPI v2 definitions usable as strict JSON schemas, as openapi2jsonschema --strict does. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) out[k] = toJsonSchema(v);
  if (out.format === 'int-or-string' || out['x-kubernetes-int-or-string'] === true) {
    delete out.type;
    delete out.format;
    out.oneOf = [{ type: 'string' }, { type: 'integer' }];
  }
  if (
    out.properties &&
    out.additionalProperties === undefined &&
    !out['x-kubernetes-preserve-unknown-fields']
  ) {
    out.additionalProperties = false;
  }
  return out;
}

/**
 * Writes `<dir>/_definitions.json` (every definition) and one `<kind>-<group>-<version>.json` per kind
 * (kubeconform's `{{ .ResourceKind }}{{ .KindSuffix }}.json`), each a $ref into the definitions.
 * Returns the `-schema-location` template.
 */
export async function writeSchemas(
  cp: ControlPlane,
  dir: string,
): Promise<{ location: string; kinds: number }> {
  const res = await cp.call('GET', '/openapi/v2');
  if (res.status !== 200) throw new Error(`GET /openapi/v2: ${res.status} ${res.text.slice(0, 300)}`);
  const definitions = (res.body as { definitions: Record<string, Json> }).definitions;
  const fixed: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(definitions)) fixed[name] = toJsonSchema(def);
  // Quantity is a string or a number in manifests (`cpu: 1`).
  fixed['io.k8s.apimachinery.pkg.api.resource.Quantity'] = {
    oneOf: [{ type: 'string' }, { type: 'number' }],
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '_definitions.json'), JSON.stringify({ definitions: fixed }));
  let kinds = 0;
  for (const [name, def] of Object.entries(definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'] as
      | { group: string; version: string; kind: string }[]
      | undefined;
    if (gvks?.length !== 1) continue;
    const { group, version, kind } = gvks[0]!;
    const suffix = group ? `-${group.split('.')[0]}-${version}` : `-${version}`;
    writeFileSync(
      join(dir, `${kind.toLowerCase()}${suffix}.json`),
      JSON.stringify({ $ref: `_definitions.json#/definitions/${name}` }),
    );
    kinds++;
  }
  return { location: join(dir, '{{ .ResourceKind }}{{ .KindSuffix }}.json'), kinds };
}

export interface KubeconformReport {
  code: number;
  valid: number;
  invalid: string[];
  output: string;
}

/** kubeconform -strict against the schemas of writeSchemas, offline; every object must have a schema. */
export async function kubeconform(location: string, yaml: string): Promise<KubeconformReport> {
  const r = await run(
    'kubeconform',
    ['-strict', '-summary', '-output', 'json', '-schema-location', location, '-'],
    { input: yaml },
  );
  const report = JSON.parse(r.stdout || '{}') as {
    resources?: { filename: string; kind: string; name: string; status: string; msg: string }[];
    summary?: { valid: number };
  };
  const invalid = (report.resources ?? [])
    .filter((x) => x.status !== 'statusValid')
    .map((x) => `${x.kind} ${x.name}: ${x.status} ${x.msg}`);
  return { code: r.code, valid: report.summary?.valid ?? 0, invalid, output: r.stdout + r.stderr };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** REST paths by apiVersion and kind, from the apiserver's discovery documents. */
export async function discover(
  cp: ControlPlane,
): Promise<Map<string, { path: string; namespaced: boolean }>> {
  const found = new Map<string, { path: string; namespaced: boolean }>();
  const add = async (base: string, apiVersion: string) => {
    const res = await cp.call('GET', base);
    for (const r of (res.body as { resources: ApiResource[] }).resources) {
      if (!r.name.includes('/'))
        found.set(`${apiVersion}/${r.kind}`, { path: `${base}/${r.name}`, namespaced: r.namespaced });
    }
  };
  await add('/api/v1', 'v1');
  const groups = (await cp.call('GET', '/apis')).body as {
    groups: { versions: { groupVersion: string }[] }[];
  };
  for (const g of groups.groups)
    for (const v of g.versions) await add(`/apis/${v.groupVersion}`, v.groupVersion);
  return found;
}

/** The collection URL of an object (namespaced ones in their namespace, or `namespace`). */
export function collectionPath(
  paths: Map<string, { path: string; namespaced: boolean }>,
  o: KubeObject,
  namespace: string,
) {
  const r = paths.get(`${o.apiVersion}/${o.kind}`);
  if (!r) throw new Error(`the apiserver does not serve ${o.apiVersion} ${o.kind}`);
  if (!r.namespaced) return r.path;
  const [prefix, plural] = [
    r.path.slice(0, r.path.lastIndexOf('/')),
    r.path.slice(r.path.lastIndexOf('/') + 1),
  ];
  return `${prefix}/namespaces/${o.metadata.namespace ?? namespace}/${plural}`;
}

/** Creates a CRD for real and waits until it is Established (its kind is then served). */
export async function createCrd(cp: ControlPlane, crd: KubeObject) {
  const res = await cp.call(
    'POST',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict',
    crd,
  );
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`creating ${describe(crd)}: ${res.status} ${res.text}`);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const got = await cp.call(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
    );
    const conditions =
      (got.body as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((ok) => setTimeout(ok, 250));
  }
  throw new Error(`${describe(crd)} was not Established within 60 s`);
}

/** Creates a namespace for real (objects are dry-run into it); an existing one is fine. */
export async function ensureNamespace(cp: ControlPlane, name: string) {
  const res = await cp.call('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`creating namespace ${name}: ${res.status} ${res.text}`);
}

/** Server-side dry-run of a create; returns undefined when accepted, else the apiserver's message. */
export async function dryRunCreate(
  cp: ControlPlane,
  paths: Map<string, { path: string; namespaced: boolean }>,
  o: KubeObject,
  namespace: string,
): Promise<string | undefined> {
  const res = await cp.call(
    'POST',
    `${collectionPath(paths, o, namespace)}?dryRun=All&fieldValidation=Strict`,
    o,
  );
  if (res.status === 201 || res.status === 200) return undefined;
  const message = (res.body as { message?: string }).message ?? res.text;
  return `${describe(o)}: HTTP ${res.status}: ${message}`;
}

/**
 * What every suite does with a rendered stream: CRDs and Namespaces for real, the rest dry-run.
 * Returns the failures (empty when the apiserver accepted everything).
 */
export async function applyDryRun(
  cp: ControlPlane,
  objects: KubeObject[],
  namespace: string,
): Promise<{ failures: string[]; checked: number }> {
  for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) await createCrd(cp, crd);
  await ensureNamespace(cp, namespace);
  for (const ns of objects.filter((o) => o.kind === 'Namespace')) await ensureNamespace(cp, ns.metadata.name);
  for (const o of objects) if (o.metadata.namespace) await ensureNamespace(cp, o.metadata.namespace);
  const paths = await discover(cp);
  const failures: string[] = [];
  let checked = 0;
  for (const o of objects) {
    if (o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace') continue;
    const failure = await dryRunCreate(cp, paths, o, namespace);
    if (failure) failures.push(failure);
    checked++;
  }
  return { failures, checked };
}

/** Waits until /openapi/v2 describes a kind (CRD schemas are published a moment after Established). */
export async function waitForOpenApiKind(cp: ControlPlane, definition: string, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const res = await cp.call('GET', '/openapi/v2');
    if ((res.body as { definitions?: Record<string, unknown> }).definitions?.[definition]) return;
    await new Promise((ok) => setTimeout(ok, 500));
  }
  throw new Error(`/openapi/v2 did not describe ${definition} within ${seconds} s`);
}

/**
 * What the chart and manifest suites validate against: a control plane without controllers that serves
 * the App kind (the CRD taken from `objects`, created for real), and kubeconform schemas written from it.
 */
export async function startSchemaCluster(
  objects: KubeObject[],
): Promise<{ cp: ControlPlane; schemas: string }> {
  const crd = objects.find(
    (o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'apps.gatehouse.dev',
  );
  if (!crd) throw new Error('no CustomResourceDefinition apps.gatehouse.dev among the objects');
  const cp = await startControlPlane({ controllers: false });
  try {
    await createCrd(cp, crd);
    // The apiserver publishes the App schema a moment after the CRD is Established.
    await waitForOpenApiKind(cp, 'dev.gatehouse.v1alpha1.App');
    return { cp, schemas: (await writeSchemas(cp, join(cp.work, 'schemas'))).location };
  } catch (error) {
    await cp.stop();
    throw error;
  }
}
