import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../api/src/cli/main.ts';
import { Gatehouse } from '../src/index.ts';

/** `gatehouse solve` in-process (the same `main` the bin runs) against a real API. */
describe('gatehouse solve', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function gatehouse(...argv: string[]) {
    let out = '';
    let err = '';
    const code = await main(argv, {
      out: (t) => {
        out += t;
      },
      err: (t) => {
        err += t;
      },
      env: {},
      cwd: process.cwd(),
    });
    return { code, out, err };
  }

  it('prints the pass token alone on stdout, a summary on stderr', async () => {
    const app = await api.createApp({ name: 'cli', test_mode: true });
    const run = await gatehouse('solve', '--app-key', app.appKey, '--action', 'login', '--url', api.url);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^pt_\S+\n$/);
    expect(run.err).toMatch(/^gatehouse: solved ch_\S+ \(invisible tier, proof-of-work \d+ ms\)/);
    const gh = new Gatehouse({ appKey: app.appKey, appSecret: app.appSecret, baseUrl: api.url });
    expect(await gh.validate(run.out.trim(), { expectedAction: 'login' })).toMatchObject({ accepted: true });
  });

  it('an image tier exits 1 with the documented sentence', async () => {
    const app = await api.createApp({ name: 'cli', risk_policy: { invisible_below: 0, image_below: 101 } });
    const run = await gatehouse(
      'solve',
      '--app-key',
      app.appKey,
      '--action',
      'login',
      '--url',
      api.url,
      '--json',
    );
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.err).toContain(
      "this app's policy gave the image tier; the headless solver passes only where the policy gives the invisible tier",
    );
    expect(run.err).toContain('(image_tier)');
  });

  it('API refusals exit 1 with their code; usage mistakes exit 2', async () => {
    const unknown = await gatehouse('solve', '--app-key', 'ak_nobody', '--action', 'login', '--url', api.url);
    expect(unknown).toMatchObject({ code: 1, out: '' });
    expect(unknown.err).toContain('(invalid_app_key)');
    const noAction = await gatehouse('solve', '--app-key', 'ak_x');
    expect(noAction.code).toBe(2);
    expect(noAction.err).toContain("'gatehouse solve' needs --action ACTION");
    const badUrl = await gatehouse(
      'solve',
      '--app-key',
      'ak_x',
      '--action',
      'login',
      '--url',
      'localhost:8080',
    );
    expect(badUrl.code).toBe(2);
    expect(badUrl.err).toContain("--url must be an http:// or https:// URL; got 'localhost:8080'.");
    const help = await gatehouse('solve', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: gatehouse solve --app-key KEY --action ACTION');
  });
});
