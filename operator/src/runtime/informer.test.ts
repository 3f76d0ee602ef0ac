import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Informer, type WatchSource } from './informer.ts';
import { KubeApiError, type KubeList, type KubeObject, type WatchEvent } from './kube-client.ts';
import { SECRETS } from './resources.ts';

const obj = (name: string, rv: string): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

type Step = (emit: (e: WatchEvent<KubeObject>) => void, query: Record<string, unknown>) => Promise<void>;

/** A scripted apiserver: each list() returns the next list, each watch() runs the next step. */
function fakeSource(lists: KubeObject[][], steps: Step[]) {
  const calls: string[] = [];
  let l = 0;
  let w = 0;
  const source: WatchSource = {
    async list<T>() {
      const items = lists[Math.min(l, lists.length - 1)] as T[];
      calls.push(`list#${++l}`);
      return { items, metadata: { resourceVersion: String(100 * l) } } as KubeList<T>;
    },
    async watch<T>(
      _path: string,
      query: Record<string, unknown>,
      onEvent: (e: WatchEvent<T>) => void,
      signal: AbortSignal,
    ) {
      calls.push(`watch@${query.resourceVersion}`);
      const step = steps[w++];
      if (!step) return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      await step(onEvent as (e: WatchEvent<KubeObject>) => void, query);
    },
  };
  return { source, calls };
}

const quiet = pino({ level: 'silent' });
const fastBackoff = { baseMs: 1, maxMs: 5 };
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
};

describe('Informer', () => {
  it('lists, then watches from the list version and applies events', async () => {
    const { source, calls } = fakeSource(
      [[obj('a', '1')]],
      [
        async (emit) => {
          emit({ type: 'ADDED', object: obj('b', '101') });
          emit({ type: 'MODIFIED', object: obj('a', '102') });
          emit({ type: 'BOOKMARK', object: obj('', '150') });
          emit({ type: 'DELETED', object: obj('b', '151') });
        },
      ],
    );
    const seen: string[] = [];
    const inf = new Informer(source, { type: SECRETS, logger: quiet, backoff: fastBackoff }).on({
      add: (o) => seen.push(`add ${o.metadata?.name}`),
      update: (_old, o) => seen.push(`update ${o.metadata?.name}`),
      delete: (o) => seen.push(`delete ${o.metadata?.name}`),
    });
    inf.start();
    await inf.waitForSync();
    await until(() => calls.length >= 3);
    await inf.stop();
    expect(calls.slice(0, 3)).toEqual(['list#1', 'watch@100', 'watch@151']);
    expect(seen).toEqual(['add a', 'add b', 'update a', 'delete b']);
    expect(inf.list().map((o) => o.metadata?.name)).toEqual(['a']);
  });

  it('relists on 410 Gone (HTTP status or ERROR event) and reports what changed meanwhile as events', async () => {
    const { source, calls } = fakeSource(
      [
        [obj('a', '1'), obj('b', '1')],
        [obj('a', '2'), obj('c', '1')],
        [obj('a', '2'), obj('c', '1')],
      ],
      [
        async () => {
          throw new KubeApiError(410, 'Expired', 'too old resource version');
        },
        async (emit) =>
          emit({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'gone' } as KubeObject }),
      ],
    );
    const seen: string[] = [];
    let relists = 0;
    const inf = new Informer(source, {
      type: SECRETS,
      logger: quiet,
      backoff: fastBackoff,
      onRelist: () => relists++,
    }).on({
      add: (o) => seen.push(`add ${o.metadata?.name}`),
      update: (_old, o) => seen.push(`update ${o.metadata?.name}`),
      delete: (o) => seen.push(`delete ${o.metadata?.name}`),
    });
    inf.start();
    await until(() => relists === 3 && calls.length >= 6);
    await inf.stop();
    expect(calls.slice(0, 6)).toEqual(['list#1', 'watch@100', 'list#2', 'watch@200', 'list#3', 'watch@300']);
    expect(seen).toEqual(['add a', 'add b', 'delete b', 'update a', 'add c']);
  });

  it('reconnects after connection failures with backoff, from the last version seen, without relisting', async () => {
    const { source, calls } = fakeSource(
      [[]],
      [
        async (emit) => {
          emit({ type: 'ADDED', object: obj('a', '120') });
          throw new Error('socket hang up');
        },
        async () => {
          throw new Error('ECONNREFUSED');
        },
      ],
    );
    const errors: string[] = [];
    const inf = new Informer(source, {
      type: SECRETS,
      logger: quiet,
      backoff: fastBackoff,
      onReconnect: (e) => errors.push((e as Error).message),
    });
    inf.start();
    await until(() => calls.length >= 4);
    await inf.stop();
    expect(calls.slice(0, 4)).toEqual(['list#1', 'watch@100', 'watch@120', 'watch@120']);
    expect(errors).toEqual(['socket hang up', 'ECONNREFUSED']);
    expect(inf.get('ns/a')).toBeDefined();
  });
});
