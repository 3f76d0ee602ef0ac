import { z } from 'zod';
import { deriveKey, type MacKey, macKey } from '../crypto.ts';
import { openToken, sealToken } from './codec.ts';
import { PREFIX } from './prefix.ts';

export { MAX_TOKEN_LENGTH, openToken, sealToken } from './codec.ts';
export {
  CLOCK_SKEW_SECONDS,
  claimedKid,
  LEGACY_OFFLINE_REASONS,
  MAX_OFFLINE_REASONS,
  OFFLINE_PREFIX,
  OFFLINE_REASON,
  OFFLINE_TOKEN_MAX_LIFETIME_SECONDS,
  OFFLINE_TOKEN_TTL_SECONDS,
  OfflineKeys,
  type OfflineTokenPayload,
  offlineTokenPayload,
  offlineTokenState,
  STANDBY_KID,
} from './offline.ts';
export { PREFIX } from './prefix.ts';

export type TokenKind = keyof typeof PREFIX;

const KINDS = Object.entries(PREFIX) as [TokenKind, string][];

/** Which kind of token a string claims to be, by prefix only (nothing is verified). */
export function tokenKind(token: string): TokenKind | null {
  // The prefixes listed once, not an array of pairs built per call: a validation asks twice.
  for (const [kind, prefix] of KINDS) {
    if (token.startsWith(prefix)) return kind;
  }
  return null;
}

/** Degraded tokens live exactly five minutes (spec, Limits). */
export const DEGRADED_TOKEN_TTL_SECONDS = 300;

/** Context recorded when a challenge was solved, echoed by validation (spec: captcha_args). */
export interface CaptchaArgs {
  platform: string;
  user_ip: string;
  referer: string | null;
  pkg: string | null;
  solved_at: number;
  risk_score: number;
  /** The risk engine's reasons for the score (`network.datacenter:+25`); absent on tokens minted before. */
  risk_reasons?: string[];
}

const unix = z.number().int().nonnegative();

export const passTokenPayload = z.object({
  id: z.string().min(1).max(64),
  app: z.string().min(1).max(64),
  exp: unix,
});
export type PassTokenPayload = z.infer<typeof passTokenPayload>;

export const serverTokenPayload = z.object({
  id: z.string().min(1).max(64),
  app: z.string().min(1).max(64),
  exp: unix,
});
export type ServerTokenPayload = z.infer<typeof serverTokenPayload>;

export const degradedTokenPayload = z.object({
  app: z.string().min(1).max(64),
  act: z.string().max(64),
  iat: unix,
  exp: unix,
});
export type DegradedTokenPayload = z.infer<typeof degradedTokenPayload>;

/** The keys every token kind is sealed with, derived from one master key. */
export class TokenKeys {
  readonly #master: Buffer;
  readonly #pass: MacKey;
  readonly #server: MacKey;

  constructor(master: Buffer) {
    if (master.length < 32) throw new Error('The token master key must be at least 32 bytes.');
    this.#master = master;
    this.#pass = macKey(deriveKey(master, 'pass-token'));
    this.#server = macKey(deriveKey(master, 'server-token'));
  }

  sealPass(payload: PassTokenPayload): string {
    return sealToken(PREFIX.pass, this.#pass, payload);
  }
  openPass(token: string): PassTokenPayload | null {
    return openToken(PREFIX.pass, this.#pass, token, passTokenPayload);
  }

  sealServer(payload: ServerTokenPayload): string {
    return sealToken(PREFIX.server, this.#server, payload);
  }
  openServer(token: string): ServerTokenPayload | null {
    return openToken(PREFIX.server, this.#server, token, serverTokenPayload);
  }

  /** `dg_` tokens are signed with a key of their own app: one app can never mint another's. */
  sealDegraded(appId: string, payload: Omit<DegradedTokenPayload, 'app'>): string {
    return sealToken(PREFIX.degraded, deriveKey(this.#master, 'degraded-token', appId), {
      app: appId,
      ...payload,
    });
  }
  openDegraded(appId: string, token: string): DegradedTokenPayload | null {
    const payload = openToken(
      PREFIX.degraded,
      deriveKey(this.#master, 'degraded-token', appId),
      token,
      degradedTokenPayload,
    );
    return payload && payload.app === appId ? payload : null;
  }

  /** A key for another purpose (sealed challenges, offline tokens), derived so it is independent of the others. */
  derive(purpose: string, subject = ''): Buffer {
    return deriveKey(this.#master, purpose, subject);
  }
}
