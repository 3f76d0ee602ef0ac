import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

/*
 * The route histogram and the validation counter keep their labelled children between requests:
 * each request must still land in its own (method, route, status) and (kind, outcome) series.
 */
const run = await databaseAvailable();

describe.runIf(run)('request metrics', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  /** The value of one series in the Prometheus text, 0 when absent. */
  async function series(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  }

  it('counts each request under its route and status, and each verdict under its kind and outcome', async () => {
    const app = await api.createApp({ name: 'metrics' });
    const auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    const forged = { pass_token: 'pt_eyJpZCI6IngiLCJhcHAiOiJ5IiwiZXhwIjoxfQ.AAAAAAAAAAAAAAAAAAAAAA' };
    for (let i = 0; i < 3; i++) expect((await api.post('/v1/validate', forged, auth)).status).toBe(200);
    const wrong = await api.post('/v1/validate', forged, { ...auth, 'X-App-Secret': 'sk_wrong' });
    expect(wrong.status).toBe(401);
    await api.post('/v1/challenge/init', { app_key: 'ak_unknown', action: 'login' });
    expect((await fetch(`${api.url}/no/such/path/x1`)).status).toBe(404);

    const duration = 'gatehouse_http_request_duration_seconds_count';
    expect(await series(duration, 'method="POST",route="/v1/validate",status="200"')).toBe(3);
    expect(await series(duration, 'method="POST",route="/v1/validate",status="401"')).toBe(1);
    expect(await series(duration, 'method="POST",route="/v1/challenge/init",status="401"')).toBe(1);
    // An unknown path is one series, whatever the path: never a label value of its own.
    expect(await series(duration, 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(await series('gatehouse_validations_total', 'kind="pass",outcome="invalid"')).toBe(3);
    expect(await series('gatehouse_validations_total', 'kind="pass",outcome="valid"')).toBe(0);
  });
});
