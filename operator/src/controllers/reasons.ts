/*
 * Condition types and reasons of App, in one place (cert-manager's habit): each reason is the
 * CamelCase word `kubectl describe` shows, and the comment says when it is set.
 */

/** Condition types of App.status.conditions. */
export const ConditionType = {
  /** The app is registered, every Deployment is available, and every region is served by its main API. */
  Ready: 'Ready',
  /** The app exists in the service's database with the App's settings, and its credentials Secret exists. */
  Registered: 'Registered',
  /** A Deployment is rolling out (spec changed and not every replica is updated and available yet). */
  Progressing: 'Progressing',
  /** Something needs a person: a reconcile step keeps failing, or a main API is down. */
  Degraded: 'Degraded',
  /** At least one region's standby has been told to serve because its main API is down. */
  StandbyServing: 'StandbyServing',
} as const;
export type ConditionTypeName = (typeof ConditionType)[keyof typeof ConditionType];

export const Reason = {
  // ---- Ready
  /** Ready=True: registered, all workloads available, all regions served by their main API. */
  AllRegionsServing: 'AllRegionsServing',
  /** Ready=False: the app is not (yet) registered; see the Registered condition. */
  NotRegistered: 'NotRegistered',
  /** Ready=False: some Deployment has fewer available replicas than it wants (or none, without a kubelet). */
  WorkloadsUnavailable: 'WorkloadsUnavailable',
  /** Ready=False (and StandbyServing=True): a region is served by its standby. */
  RegionOnStandby: 'RegionOnStandby',
  /**
   * Ready=False and Degraded=True: the spec cannot be carried out as written, for a reason only other
   * objects tell (a Secret missing or without its key, a host another App serves, a locality the
   * database lacks); the message names each. Nothing is rendered until it is fixed.
   */
  InvalidSpec: 'InvalidSpec',
  /**
   * Ready=False, StandbyServing=False: a region's main API is down and no standby process acknowledged
   * 'serve' (none reachable, none listed, or the sync credential refused); the message says which.
   */
  StandbyUnreachable: 'StandbyUnreachable',
  /** Ready=False: the app is disabled by spec.disabled. */
  AppDisabled: 'AppDisabled',

  // ---- Registered
  /** Registered=True: the service's database holds the app with the App's settings. */
  AppRegistered: 'AppRegistered',
  /** Registered=False: the admin API could not be reached or refused the request; retried with backoff. */
  AdminApiError: 'AdminApiError',
  /** Registered=False: the credentials Secret names an app key the service does not know. */
  AppNotFound: 'AppNotFound',
  /** Registered=False: the credentials Secret exists but lacks app_key or app_secret. */
  CredentialsInvalid: 'CredentialsInvalid',

  // ---- Progressing
  /** Progressing=True: a Deployment has not finished rolling out the current spec. */
  RollingOut: 'RollingOut',
  /** Progressing=False: every Deployment runs the current spec. */
  RolloutComplete: 'RolloutComplete',

  // ---- Degraded
  /** Degraded=False: nothing needs attention. */
  AsExpected: 'AsExpected',
  /**
   * Degraded=True and Ready=False: a reconcile step failed; the message says which and why; retried
   * with backoff (observedGeneration stays behind until a reconcile of this generation completes).
   */
  ReconcileError: 'ReconcileError',
  /** Degraded=True: a region's main API failed its probes (the region is on its standby). */
  MainApiDown: 'MainApiDown',

  // ---- StandbyServing
  /** StandbyServing=False: every region's main API answers its probes. */
  MainApiServing: 'MainApiServing',
  /** StandbyServing=True: the operator told a region's standby to serve after sustained probe failures. */
  MainApiUnhealthy: 'MainApiUnhealthy',
} as const;
export type ReasonName = (typeof Reason)[keyof typeof Reason];

/** Reasons of Events (transitions worth a line in `kubectl describe`). */
export const EventReason = {
  /** The app was created in the service's database. */
  Registered: 'Registered',
  /** The credentials Secret was written (new app, or regenerated after the Secret was deleted). */
  CredentialsCreated: 'CredentialsCreated',
  /** The app's settings in the service were updated to match the spec. */
  SettingsUpdated: 'SettingsUpdated',
  /** A region's main API failed its probes: the standby was told to serve. */
  StandbyActivated: 'StandbyActivated',
  /** A region's main API recovered: the standby was set back to follow its own probes. */
  MainApiRecovered: 'MainApiRecovered',
  /** The app was disabled in the service because the App is being deleted. */
  AppDisabled: 'AppDisabled',
  /**
   * Warning: the App was let go without disabling its app in the service: the skip-cleanup annotation,
   * or the admin API unreachable for the cleanup timeout. The app stays enabled in the service.
   */
  CleanupSkipped: 'CleanupSkipped',
  /** A reconcile step failed (Warning). */
  ReconcileFailed: 'ReconcileFailed',
} as const;
