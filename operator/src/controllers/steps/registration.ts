import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { App } from '../../api/v1alpha1/app-types.ts';
import { isConflict } from '../../runtime/kube-client.ts';
import { resourcePath, SECRETS } from '../../runtime/resources.ts';
import { AdminApiError, type AppSettings, type RemoteApp } from '../admin-client.ts';
import type { ControllerDeps, ReconcileContext, Step } from '../context.ts';
import { childMetadata, credentialsSecretName, displayName } from '../names.ts';
import { EventReason, Reason } from '../reasons.ts';

type Secret = { data?: Record<string, string>; metadata?: { name?: string } };

/** app_key and app_secret from a Secret, or null when either is missing. Never logged. */
export function readCredentials(secret: Secret | null): { appKey: string; appSecret: string } | null {
  const get = (k: string) =>
    secret?.data?.[k] ? Buffer.from(secret.data[k], 'base64').toString('utf8') : '';
  const appKey = get('app_key');
  const appSecret = get('app_secret');
  return appKey && appSecret ? { appKey, appSecret } : null;
}

/** The admin API's settings for an App's spec (unset quota and overage: the plan decides). */
export function desiredSettings(app: App): AppSettings {
  const s = app.spec;
  return {
    name: displayName(app),
    plan: s.plan,
    monthly_quota: s.monthlyQuota ?? null,
    overage_allowed: s.overageAllowed ?? null,
    server_token_required: s.serverTokenRequired,
    test_mode: s.testMode,
    risk_policy: s.riskPolicy ?? {},
    allowed_domains: s.allowedDomains ?? [],
    managed_by: { kind: 'App', namespace: app.metadata.namespace, name: app.metadata.name },
    ...(s.passTokenTtl !== undefined ? { pass_token_ttl: s.passTokenTtl } : {}),
    ...(s.clientIpPolicy !== undefined ? { client_ip_policy: s.clientIpPolicy } : {}),
  };
}

const hashOf = (settings: AppSettings, disabled: boolean) =>
  createHash('sha256').update(JSON.stringify({ settings, disabled })).digest('hex');

/** A JSON value as the wire carries it (undefined members dropped), for comparing documents. */
const normalise = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** Fields the admin API echoes as set (quota and overage come back as effective values: compared when set). */
function drifted(remote: RemoteApp, want: AppSettings): boolean {
  // Semantic equality: the service stores risk_policy as jsonb, which gives keys back in its own order.
  const same = (a: unknown, b: unknown) => isDeepStrictEqual(normalise(a), normalise(b));
  return (
    remote.name !== want.name ||
    remote.plan !== want.plan ||
    remote.server_token_required !== want.server_token_required ||
    remote.test_mode !== want.test_mode ||
    !same(remote.allowed_domains, want.allowed_domains) ||
    !same(remote.risk_policy, want.risk_policy) ||
    !same(remote.managed_by ?? null, want.managed_by) ||
    (want.monthly_quota !== null && remote.monthly_quota !== want.monthly_quota) ||
    (want.overage_allowed !== null && remote.overage_allowed !== want.overage_allowed) ||
    (want.pass_token_ttl !== undefined && remote.pass_token_ttl !== want.pass_token_ttl) ||
    (want.client_ip_policy !== undefined && remote.client_ip_policy !== want.client_ip_policy)
  );
}

/** Creates the credentials Secret, owned by the App (garbage-collected with it). Create, never overwrite. */
async function storeCredentials(
  ctx: ReconcileContext,
  deps: ControllerDeps,
  creds: { appKey: string; appSecret: string },
) {
  const name = credentialsSecretName(ctx.app);
  const b64 = (v: string) => Buffer.from(v, 'utf8').toString('base64');
  deps.memory.pendingCredentials.set(ctx.app.metadata.uid, creds);
  try {
    await deps.client.create(resourcePath(SECRETS, ctx.app.metadata.namespace), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: childMetadata(ctx.app, name),
      type: 'Opaque',
      data: { app_key: b64(creds.appKey), app_secret: b64(creds.appSecret) },
    });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  deps.memory.pendingCredentials.delete(ctx.app.metadata.uid);
}

/**
 * Step 2: the app exists in the service's database with the spec's settings, and its credentials are in
 * the Secret. A missing Secret means a new app (registered, then stored) or a deleted Secret (the
 * secret is rotated at once and stored again). The admin API being away is a soft failure: the
 * workloads are still applied (the API this App deploys may be the admin API itself).
 */
export const ensureRegistration: Step = async function ensureRegistration(ctx, deps) {
  const { app } = ctx;
  const secretName = credentialsSecretName(app);
  const want = desiredSettings(app);
  try {
    // The Secret the operator made is in its watch; one named by the spec, or not seen yet, is read.
    const secret =
      (deps.live(SECRETS, app.metadata.namespace, secretName) as Secret | undefined) ??
      (await deps.client.getOrNull<Secret>(resourcePath(SECRETS, app.metadata.namespace, secretName)));
    let creds = readCredentials(secret);
    const hash = hashOf(want, app.spec.disabled);
    const verified = deps.memory.verifiedSettings.get(app.metadata.uid);
    if (creds && verified?.hash === hash && Date.now() - verified.at < deps.registrationRefreshMs) {
      ctx.appKey = creds.appKey;
      return;
    }
    if (secret && !creds) {
      ctx.registered = {
        type: 'Registered',
        status: 'False',
        reason: Reason.CredentialsInvalid,
        message: `Secret ${secretName} lacks app_key or app_secret`,
      };
      ctx.retry = ctx.registered.message;
      return;
    }
    let remote = creds ? await deps.admin.get(creds.appKey) : null;
    if (creds && !remote) {
      ctx.registered = {
        type: 'Registered',
        status: 'False',
        reason: Reason.AppNotFound,
        message: `Secret ${secretName} names app ${creds.appKey}, which the service does not know`,
      };
      ctx.retry = ctx.registered.message;
      return;
    }
    if (!creds) {
      const pending = deps.memory.pendingCredentials.get(app.metadata.uid);
      const known = pending ? null : app.status?.appKey ? await deps.admin.get(app.status.appKey) : null;
      if (pending) {
        creds = pending;
      } else if (known) {
        const rotated = await deps.admin.rotateSecret(known.app_key, 0);
        creds = { appKey: known.app_key, appSecret: rotated.app_secret };
        deps.recorder.event(
          app,
          'Normal',
          EventReason.CredentialsCreated,
          `Secret ${secretName} was missing: new secret issued for ${known.app_key}`,
        );
      } else {
        const created = await deps.admin.create(want);
        creds = { appKey: created.app_key, appSecret: created.app_secret };
        deps.recorder.event(
          app,
          'Normal',
          EventReason.Registered,
          `App registered in the service as ${created.app_key}`,
        );
      }
      ctx.appKey = creds.appKey;
      await storeCredentials(ctx, deps, creds);
      deps.recorder.event(
        app,
        'Normal',
        EventReason.CredentialsCreated,
        `Credentials stored in Secret ${secretName}`,
      );
      remote = await deps.admin.get(creds.appKey);
    }
    ctx.appKey = creds.appKey;
    if (!remote)
      throw new AdminApiError(404, 'app_not_found', `app ${creds.appKey} vanished during registration`);
    // Quota and overage come back as effective values, so a spec that unsets them is sent once unasked.
    if (drifted(remote, want) || !verified || verified.hash !== hash) {
      await deps.admin.update(creds.appKey, want);
      if (drifted(remote, want)) {
        deps.recorder.event(
          app,
          'Normal',
          EventReason.SettingsUpdated,
          'App settings in the service updated to match the spec',
        );
      }
    }
    if (remote.disabled !== app.spec.disabled) await deps.admin.setDisabled(creds.appKey, app.spec.disabled);
    deps.memory.verifiedSettings.set(app.metadata.uid, { hash, at: Date.now() });
    ctx.registered = {
      type: 'Registered',
      status: 'True',
      reason: Reason.AppRegistered,
      message: `Registered as ${creds.appKey}; credentials in Secret ${secretName}`,
    };
  } catch (err) {
    if (!(err instanceof AdminApiError)) throw err;
    ctx.registered = {
      type: 'Registered',
      status: 'False',
      reason: Reason.AdminApiError,
      message: err.message,
    };
    ctx.retry = err.message;
  }
};
