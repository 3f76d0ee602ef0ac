import { openTicket, type Ticket } from '@gatehouse/core/alternative';
import { deriveKey } from '@gatehouse/core/crypto';
import { GatehouseError } from '@gatehouse/core/errors';

/** The accessible alternative's tickets on a standby (offline-alternative.ts issues them, the submit redeems them). */

/** The key a standby seals its tickets with: derived, so a ticket never opens as a challenge, nor one as a ticket. */
export const offlineTicketKey = (challengeKey: Buffer): Buffer =>
  deriveKey(challengeKey, 'offline-challenge-alternative');

/**
 * The ticket an answer carries (`answer.alternative`), opened with any of the region's live keys; undefined
 * when it carries none; `challenge_not_found` when it is altered, forged, or another challenge's.
 */
export function answerTicket(keys: Buffer[], appId: string, id: string, answer: object): Ticket | undefined {
  if (!('alternative' in answer)) return undefined;
  for (const key of keys) {
    const ticket = openTicket(offlineTicketKey(key), appId, id, answer.alternative);
    if (ticket) return ticket;
  }
  throw new GatehouseError('challenge_not_found', 'This alternative is not valid.');
}
