import type { GenuineRefusal } from './offline-validation.ts';

/** Logs each (key, reason) at most once a minute: an attacker replaying forgeries must not flood the log. */
const QUIET_MS = 60_000;

/**
 * The `onGenuineRefused` of the main API and the standby: a warning naming the key, its region and the
 * reason (never the token), at most once a minute per key and reason, and `count` for a metric.
 */
export function genuineRefusalAlarm(
  logger: { warn(obj: object, msg: string): void },
  count?: (reason: GenuineRefusal) => void,
) {
  const lastLogged = new Map<string, number>();
  return (refusal: { kid: string; region: string; reason: GenuineRefusal }) => {
    count?.(refusal.reason);
    const key = `${refusal.kid}|${refusal.reason}`;
    const now = Date.now();
    if (now - (lastLogged.get(key) ?? 0) < QUIET_MS) return;
    if (lastLogged.size > 1000) lastLogged.clear();
    lastLogged.set(key, now);
    logger.warn(
      refusal,
      'offline_ token signed with a real standby key refused: rotate or revoke the key if no standby minted it (docs/failover.md)',
    );
  };
}
