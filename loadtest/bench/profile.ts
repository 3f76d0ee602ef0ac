import type { Profiler, Runtime } from 'node:inspector';
import type { ProfileSummary } from './protocol.ts';

type Frame = Runtime.CallFrame;

/**
 * Where a V8 CPU profile's time went. `byCategory`: each sample charged to the npm package or source
 * folder responsible for it, where time in Node's internals and native code (socket writes, hashing,
 * JSON) goes to the package that called into them; runtime buckets ((garbage collector), (program))
 * stay apart. `byFunction`: plain self time by function. Idle time and the profiler's own frames are
 * left out; percentages are of busy time.
 */
export function summariseProfile(profile: Profiler.Profile, top = 15): ProfileSummary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);

  const owners = new Map<number, string>();
  function owner(id: number): string {
    const known = owners.get(id);
    if (known) return known;
    let at: number | undefined = id;
    let found: string | undefined;
    while (at !== undefined) {
      const frame = nodes.get(at)?.callFrame;
      if (frame?.url && !frame.url.startsWith('node:')) {
        found = categoryOf(frame);
        break;
      }
      at = parent.get(at);
    }
    const result = found ?? categoryOf(nodes.get(id)!.callFrame);
    owners.set(id, result);
    return result;
  }

  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time between sample i-1 and sample i: charge it to sample i.
    const id = samples[i]!;
    const frame = nodes.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)' || frame.url === 'node:inspector') continue;
    const us = deltas[i] ?? 0;
    busyUs += us;
    const category = owner(id);
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const where = frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 100) / 10 }));
  return {
    totalMs: Math.round(busyUs / 1000),
    byCategory: sorted(byCategory),
    byFunction: sorted(byFunction),
  };
}

function categoryOf(frame: Frame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native, no JS caller)';
  if (url.startsWith('node:')) return 'node (http, net, streams)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(api|core)\/src\/([^/]+)/.exec(url);
  if (own) return `gatehouse ${own[1]}/${own[2]!.replace(/\.ts$/, '')}`;
  if (url.startsWith('wasm://')) return 'wasm';
  return url;
}

function shortUrl(url: string): string {
  const pkg = url.lastIndexOf('node_modules/');
  if (pkg >= 0) return url.slice(pkg + 'node_modules/'.length);
  const own = /\/((?:api|core)\/src\/.*)$/.exec(url);
  return own ? own[1]! : url.replace(/^file:\/\//, '');
}
