import { describe, expect, it } from 'vitest';
import {
  ALTERNATIVES_PER_IP_PER_HOUR,
  alternativeSeconds,
  issueTicket,
  openTicket,
  TICKET_TTL_SECONDS,
  ticketLifetime,
} from './alternative.ts';

const key = Buffer.alloc(32, 7);

describe('alternative tickets', () => {
  it('outlive four times the expected work of every alternative an address can take in an hour, at either tier', () => {
    for (const tier of ['image', 'hard']) {
      for (let n = 1; n <= ALTERNATIVES_PER_IP_PER_HOUR; n++) {
        const seconds = alternativeSeconds(tier, n, 20);
        const ticket = issueTicket(key, 'app_1', 'ch_1', seconds);
        expect(ticket.expires_in).toBeGreaterThanOrEqual(Math.max(TICKET_TTL_SECONDS, 4 * seconds));
        const opened = openTicket(key, 'app_1', 'ch_1', ticket.ticket);
        expect(opened?.exp).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + ticket.expires_in - 1);
      }
    }
    // The case that did not fit before: the sixth at the hard tier expects 640 s.
    expect(ticketLifetime(alternativeSeconds('hard', 6, 20))).toBe(2560);
  });

  it('open only for their own app and challenge', () => {
    const { ticket } = issueTicket(key, 'app_1', 'ch_1', 1);
    expect(openTicket(key, 'app_1', 'ch_1', ticket)).not.toBeNull();
    expect(openTicket(key, 'app_2', 'ch_1', ticket)).toBeNull();
    expect(openTicket(key, 'app_1', 'ch_2', ticket)).toBeNull();
    expect(openTicket(Buffer.alloc(32, 8), 'app_1', 'ch_1', ticket)).toBeNull();
  });
});
