import { createHash } from 'node:crypto';
import type { KubeObject } from '../runtime/kube-client.ts';

/**
 * A hash of the intent the operator last applied to an object, kept on the object. It tells a field
 * the operator stopped setting (an optional spec field removed, `replicas` handed to an autoscaler):
 * the live object still has it, but the hash differs, so the object is applied and the field released.
 */
export const INTENT_ANNOTATION = 'gatehouse.dev/intent';

/** The desired object with the hash of itself in INTENT_ANNOTATION (a copy). */
export function withIntent<T extends KubeObject>(desired: T): T {
  const hash = createHash('sha256').update(JSON.stringify(desired)).digest('hex').slice(0, 20);
  const metadata = desired.metadata ?? {};
  const annotations = (metadata.annotations ?? {}) as Record<string, string>;
  return {
    ...desired,
    metadata: { ...metadata, annotations: { ...annotations, [INTENT_ANNOTATION]: hash } },
  };
}

/**
 * Whether `live` holds every value `want` sets: objects key by key, lists element by element with the
 * same length, scalars equal. What the apiserver or other controllers add (defaults, status, their own
 * labels) does not count; a value it rewrites in its own form (a quantity `0.5` stored as `500m`)
 * counts as a difference, which costs an apply that changes nothing, never a missed change.
 */
export function covers(live: unknown, want: unknown): boolean {
  if (want === undefined) return true;
  if (want === null) return live === null || live === undefined;
  if (Array.isArray(want))
    return Array.isArray(live) && live.length === want.length && want.every((w, i) => covers(live[i], w));
  if (typeof want === 'object') {
    if (typeof live !== 'object' || live === null || Array.isArray(live)) return false;
    const l = live as Record<string, unknown>;
    return Object.entries(want).every(([k, w]) => covers(l[k], w));
  }
  return live === want;
}

/**
 * An object needs no apply when the live one (from the informer cache) carries this very intent and
 * every value of it: nobody changed a field the operator sets, and the operator wants nothing new.
 * Applying it again would change nothing but cost a request. apiVersion and kind are left out: the
 * cache got them from the path (items of a list do not carry them).
 */
export function upToDate(intent: KubeObject, live: KubeObject | undefined): boolean {
  const { apiVersion: _v, kind: _k, ...rest } = intent;
  return live !== undefined && covers(live, rest);
}
