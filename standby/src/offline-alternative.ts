import {
  ALTERNATIVES_PER_IP_PER_HOUR,
  type AlternativeBody,
  type AlternativeResult,
  alternativeHour,
  alternativeSeconds,
  issueTicket,
} from '@gatehouse/core/alternative';
import { GatehouseError } from '@gatehouse/core/errors';
import { clientKey } from '@gatehouse/core/ip';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import { CHALLENGE_TTL_SECONDS, openOfflineChallenge, STANDBY_TIER } from './offline-challenges.ts';
import { offlineTicketKey } from './offline-tickets.ts';
import type { SnapshotApp } from './snapshot.ts';

/**
 * POST /v1/challenge/alternative on a `bypass.` host (docs/accessibility.md): the accessible alternative to
 * the standby's slide, so that a person who cannot see the picture is not stopped by an outage. The main
 * API's limits, counted in the standby's shared store (Redis in production, shared by both `bypass.` hosts;
 * memory when run alone): 1. the sealed challenge (forged, altered, another app's: not found), 2. unexpired,
 * 3. one alternative per challenge, 4. ALTERNATIVES_PER_IP_PER_HOUR per client address and hour (over it:
 * rate limited), 5. priced as the main API's hard tier (every standby challenge is hard), sealed into a ticket
 * that the submit redeems (offline-challenges.ts). Whether the challenge is solved or out of attempts is
 * known only to the submit here (the store counts, it does not read): it refuses then, as for any answer.
 */
export async function requestOfflineAlternative(
  keys: Buffer[],
  store: ConsumptionStore,
  app: SnapshotApp,
  body: AlternativeBody,
  ip: string,
  baseSeconds: number,
): Promise<AlternativeResult> {
  const c = openOfflineChallenge(keys, app, body);
  if (c.img === undefined) {
    throw new GatehouseError('invalid_request', 'This challenge shows no picture: it needs no alternative.');
  }
  if (c.exp * 1000 <= Date.now()) throw new GatehouseError('challenge_expired');
  if ((await store.consumeOnce(`alternative:${c.id}`, CHALLENGE_TTL_SECONDS * 2)) !== 'consumed') {
    throw new GatehouseError('challenge_not_found', 'This challenge already has its alternative.');
  }
  const { hour, retryAfter } = alternativeHour();
  // Per client, as on the main API: an IPv6 client is its /64.
  const n = await store.countAttempt(`alternative-ip:${clientKey(ip)}:${hour}`, 3600);
  if (n > ALTERNATIVES_PER_IP_PER_HOUR) {
    throw new GatehouseError(
      'rate_limited',
      'Too many alternatives from this address. Try again within the hour.',
      { 'Retry-After': String(retryAfter) },
    );
  }
  const [key] = keys;
  if (!key) throw new GatehouseError('service_unavailable', 'This standby has no signing key.');
  return issueTicket(offlineTicketKey(key), app.id, c.id, alternativeSeconds(STANDBY_TIER, n, baseSeconds));
}
