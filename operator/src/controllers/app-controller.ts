import type { App, AppStatus } from '../api/v1alpha1/app-types.ts';
import { API_VERSION, FIELD_MANAGER, KIND } from '../api/v1alpha1/groupversion.ts';
import { isConflict, isNotFound } from '../runtime/kube-client.ts';
import { APPS, resourcePath } from '../runtime/resources.ts';
import { type ControllerDeps, ReconcileContext, type Step } from './context.ts';
import { credentialsSecretName } from './names.ts';
import { EventReason, Reason } from './reasons.ts';
import { computeStatus, statusChanged } from './status.ts';
import { ensureFinalizer, finalize } from './steps/finalizer.ts';
import { explainUnavailable } from './steps/pods.ts';
import { checkSpec } from './steps/preflight.ts';
import { ensureRegistration } from './steps/registration.ts';
import { ensureProbes, ensureTrafficMode } from './steps/traffic.ts';
import { ensureWorkloads, pruneRemovedRegions } from './steps/workloads.ts';

/** The reconcile of an App, in order. Each step is small, idempotent, and may stop the rest by throwing. */
export const STEPS: readonly Step[] = [
  ensureFinalizer,
  checkSpec,
  ensureRegistration,
  ensureWorkloads,
  pruneRemovedRegions,
  ensureProbes,
  ensureTrafficMode,
  explainUnavailable,
];

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** Thrown after the status is written, so the key is retried with backoff. */
export class RetryLater extends Error {
  override name = 'RetryLater';
}

/**
 * Turns an App into its registration, workloads and traffic mode, then writes what it saw into
 * status, once, and only when it changed. The App is read fresh from the apiserver (`getApp`), not
 * from the informer cache: the status is computed from the previous one (conditions keep their
 * lastTransitionTime), and a cache that has not seen the last status write yet would roll it back.
 * It works on a copy; an App that is gone is done.
 */
export class AppController {
  readonly #deps: ControllerDeps;
  readonly #getApp: (key: string) => Promise<App | null>;

  constructor(deps: ControllerDeps, getApp: (key: string) => Promise<App | null>) {
    this.#deps = deps;
    this.#getApp = getApp;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const cached = await this.#getApp(key);
    if (!cached) {
      this.#deps.prober.forget(key);
      return {};
    }
    const ctx = new ReconcileContext(cached, this.#deps.logger);
    if (ctx.app.metadata.deletionTimestamp) {
      await finalize(ctx, this.#deps);
      return {};
    }
    for (const step of STEPS) {
      try {
        await step(ctx, this.#deps);
      } catch (err) {
        if (isNotFound(err) && step === ensureFinalizer) return {};
        ctx.error = { step: step.name, message: (err as Error).message };
        ctx.log.warn({ step: step.name, err: (err as Error).message }, 'reconcile step failed');
        if (!isConflict(err)) {
          this.#deps.recorder.event(
            ctx.app,
            'Warning',
            EventReason.ReconcileFailed,
            `${step.name}: ${(err as Error).message}`,
          );
        }
        break;
      }
      if (ctx.invalid) break;
    }
    await this.#writeStatus(ctx);
    if (ctx.error) throw new RetryLater(`${ctx.error.step}: ${ctx.error.message}`);
    if (ctx.invalid) throw new RetryLater(ctx.invalid);
    if (ctx.retry) throw new RetryLater(ctx.retry);
    return ctx.requeueAfterMs === undefined ? {} : { requeueAfterMs: ctx.requeueAfterMs };
  }

  /** One Event per condition whose status or reason changed (Warning when it is bad news). */
  #announceTransitions(app: App, status: AppStatus): void {
    for (const c of status.conditions ?? []) {
      const before = app.status?.conditions?.find((p) => p.type === c.type);
      if (before && before.status === c.status && before.reason === c.reason) continue;
      if (!before && c.status !== 'True' && c.type !== 'Ready') continue;
      // Bad news: Degraded, not Ready or not Registered, a standby serving or nobody serving.
      const bad =
        (c.type === 'Degraded' && c.status === 'True') ||
        ((c.type === 'Ready' || c.type === 'Registered') && c.status === 'False') ||
        c.reason === Reason.StandbyUnreachable ||
        c.reason === Reason.MainApiUnhealthy;
      this.#deps.recorder.event(
        app,
        bad ? 'Warning' : 'Normal',
        c.reason,
        `${c.type}=${c.status}: ${c.message}`,
      );
    }
  }

  async #writeStatus(ctx: ReconcileContext): Promise<void> {
    const { app } = ctx;
    const status = computeStatus({
      app,
      now: new Date(),
      appKey: ctx.appKey,
      secretName: credentialsSecretName(app),
      registered: ctx.registered,
      deployment: (name) => this.#deps.deployment(`${app.metadata.namespace}/${name}`),
      health: (region) => this.#deps.prober.health(ctx.key, region),
      traffic: (region) => ctx.traffic.get(region),
      problem: ctx.error ? `${ctx.error.step}: ${ctx.error.message}` : ctx.retry,
      failed: ctx.error !== undefined,
      invalid: ctx.invalid,
      podReasons: (name) => ctx.podReasons.get(name),
      probeStatusRefreshMs: this.#deps.probeStatusRefreshMs,
    });
    if (!statusChanged(app.status, status)) return;
    this.#announceTransitions(app, status);
    try {
      await this.#deps.client.apply(
        resourcePath(APPS, app.metadata.namespace, app.metadata.name, 'status'),
        {
          apiVersion: API_VERSION,
          kind: KIND,
          metadata: { name: app.metadata.name, namespace: app.metadata.namespace },
          status,
        },
        FIELD_MANAGER,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
