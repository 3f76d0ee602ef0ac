import { constantTimeEqual, sha256Hex } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';
import type { SnapshotApp, SnapshotKeeper } from './snapshot.ts';

/** Fails closed: without a snapshot the standby cannot tell an app from a stranger. */
export function requireSnapshot(snapshots: SnapshotKeeper) {
  const snapshot = snapshots.snapshot;
  if (!snapshot)
    throw new GatehouseError('service_unavailable', 'The standby has no snapshot of the apps yet.');
  return snapshot;
}

/** The enabled app with this public key, from the snapshot. */
export function findApp(snapshots: SnapshotKeeper, appKey: string): SnapshotApp {
  requireSnapshot(snapshots);
  const app = appKey.length <= 128 ? snapshots.app(appKey) : undefined;
  if (!app) throw new GatehouseError('invalid_app_key');
  if (app.disabled) throw new GatehouseError('app_disabled');
  return app;
}

/**
 * Server-to-server authentication against the snapshot, as the main API does it: the key names an app,
 * the secret matches the current or (in its grace period) the previous one, in constant time.
 */
export function authenticate(snapshots: SnapshotKeeper, appKey: string, secret: string): SnapshotApp {
  requireSnapshot(snapshots);
  const app = appKey && appKey.length <= 128 ? snapshots.app(appKey) : undefined;
  if (!app) throw new GatehouseError('invalid_app_key');
  const hash = sha256Hex(secret);
  const current = constantTimeEqual(hash, app.secret_hash);
  const previous = constantTimeEqual(hash, app.previous_secret_hash ?? '');
  const inGrace =
    app.previous_secret_expires_at !== null && new Date(app.previous_secret_expires_at) > new Date();
  if (!secret || !(current || (previous && inGrace))) throw new GatehouseError('invalid_app_secret');
  if (app.disabled) throw new GatehouseError('app_disabled');
  return app;
}

/**
 * The app a secret belongs to, from the secret alone (siteverify gets no app key), as the main API finds
 * it: the secret's SHA-256 compared in constant time with every app's current hash, and with its previous
 * one during that secret's grace. Undefined for a stranger; a disabled app is the caller's to refuse.
 */
export function appBySecret(snapshots: SnapshotKeeper, secret: string): SnapshotApp | undefined {
  const snapshot = requireSnapshot(snapshots);
  if (!secret || secret.length > 256) return undefined;
  const hash = sha256Hex(secret);
  const now = new Date();
  let found: SnapshotApp | undefined;
  for (const app of snapshot.apps) {
    const current = constantTimeEqual(hash, app.secret_hash);
    const previous =
      constantTimeEqual(hash, app.previous_secret_hash ?? '') &&
      app.previous_secret_expires_at !== null &&
      new Date(app.previous_secret_expires_at) > now;
    if ((current || previous) && !found) found = app;
  }
  return found;
}
