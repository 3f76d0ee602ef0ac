import { afterAll, describe, expect, it, vi } from 'vitest';
import type { SubmitOutcome } from './contract.ts';
import type { Session } from './flow.ts';
import type { Route } from './route.ts';
import { GatehouseError } from './transport.ts';

// The loader's modules read the page's script and address when loaded: a page, as far as they look.
vi.stubGlobal('location', new URL('https://site.example/login?reset=secret'));
vi.stubGlobal('document', { currentScript: null });
const { verify } = await import('./flow.ts');
afterAll(() => {
  vi.unstubAllGlobals();
});

const IMAGE = { kind: 'select', view: {}, alternative: true } as const;
const challenge = (id: string) => ({
  mode: 'challenge',
  challenge_id: id,
  challenge: `sealed-${id}`,
  tier: 'image',
  expires_in: 120,
  image: IMAGE,
});

/** A route whose inits answer `inits` in turn and whose submits answer `submit`. */
function fakeRoute(inits: unknown[], submit: (body: { challenge_id: string }) => Promise<unknown>) {
  const bodies: Array<{ challenge_id: string; answer?: unknown }> = [];
  const route = {
    init: vi.fn(async () => ({ data: inits.shift(), base: 'https://api.example', standby: false })),
    submit: vi.fn(async (_base: string, body: { challenge_id: string; answer?: unknown }) => {
      bodies.push(body);
      return submit(body);
    }),
    widgetHosts: () => ['https://api.example'],
  };
  return { route: route as unknown as Route, bodies };
}

function session(route: Route, answer: unknown, outcomes: SubmitOutcome[]): Session {
  return {
    route,
    appKey: 'ak_test',
    action: 'login',
    lang: 'en',
    signal: new AbortController().signal,
    signals: () => ({}),
    serverToken: async () => undefined,
    progress: () => {},
    // The person answers each challenge once, as shown.
    showImage: (_image, submit) =>
      new Promise(() => {
        submit(answer).then(
          (o) => outcomes.push(o),
          () => {},
        );
      }),
  };
}

describe('verify: one answer per picture', () => {
  it('a wrong answer brings a new challenge, even when the server still speaks of attempts left', async () => {
    const { route, bodies } = fakeRoute(
      [challenge('ch_1'), { mode: 'degraded', pass_token: 'dg_ok', expires_in: 300 }],
      async () => {
        throw new GatehouseError('invalid_answer', 'Invalid answer: 1 attempt left.', 422);
      },
    );
    const outcomes: SubmitOutcome[] = [];
    const passed = await verify(session(route, [0, 4], outcomes));
    expect(outcomes).toEqual([{ type: 'restart', message: 'Invalid answer: 1 attempt left.' }]);
    expect(bodies.map((b) => b.challenge_id)).toEqual(['ch_1']);
    expect(route.init).toHaveBeenCalledTimes(2);
    expect(passed).toEqual({ token: 'dg_ok', expiresIn: 300 });
  });

  it('a keyboard answer is sent as the UI made it: the list of tiles with its input and proof', async () => {
    const answer = { input: 'keyboard', picks: [2, 5], pow: { nonces: [1, 2] } };
    const { route, bodies } = fakeRoute([challenge('ch_2')], async () => ({
      pass_token: 'pt_ok',
      expires_in: 300,
    }));
    const outcomes: SubmitOutcome[] = [];
    expect(await verify(session(route, answer, outcomes))).toEqual({ token: 'pt_ok', expiresIn: 300 });
    expect(outcomes).toEqual([{ type: 'ok' }]);
    expect(bodies[0]?.answer).toEqual(answer);
  });
});
