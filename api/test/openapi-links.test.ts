import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';

/*
 * The OpenAPI document declared no links, so a stateful fuzzer (Schemathesis's stateful phase) or a client
 * generator could not follow a created app to its other operations. Every link must name an operation the
 * document has and a parameter that operation takes, and following it must reach the app it was made from.
 */
const run = await databaseAvailable();

const resolve = (doc: Json, ref: string) =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node: Json, key) => node?.[key], doc);

describe.runIf(run)('OpenAPI links', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('every link names an operation of the document and a parameter it takes', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Json;
    const links: [string, Json][] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(operation?.responses ?? {})) {
          for (const [name, link] of Object.entries<Json>(response.links ?? {})) {
            links.push([`${method.toUpperCase()} ${path} ${status} ${name}`, link]);
          }
        }
      }
    }
    expect(links.length).toBeGreaterThanOrEqual(12);
    for (const [where, link] of links) {
      const target = resolve(doc, link.operationRef);
      expect(target, where).toBeTruthy();
      const pathItem = resolve(doc, link.operationRef.replace(/\/[a-z]+$/, ''));
      const names = [...(pathItem.parameters ?? []), ...(target.parameters ?? [])].map((p: Json) => p.name);
      for (const parameter of Object.keys(link.parameters)) expect(names, where).toContain(parameter);
    }
  });

  it('following a created app’s link reaches that app', async () => {
    const admin = { authorization: `Bearer ${api.runtime.adminToken}` };
    const created = await api.post('/admin/v1/apps', { name: 'linked' }, admin);
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Json;
    const link = doc.paths['/admin/v1/apps'].post.responses['201'].links.GetApp;
    const pointer = (link.parameters.appKey as string).replace('$response.body#/', '');
    const appKey = resolve(created.body, pointer);
    const path = decodeURIComponent(
      link.operationRef.replace('#/paths/', '').replace(/\/get$/, ''),
    ).replaceAll('~1', '/');
    const res = await fetch(api.url + path.replace('{appKey}', appKey), { headers: admin });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).data.name).toBe('linked');
  });
});
