import { z } from 'zod';

/**
 * What the widget reports about the browser and the user's behaviour. Everything here is claimed by the
 * client, so the engine only ever lets it raise the score or ignores it (invariant 3): a bot that sends
 * perfect signals gains nothing over one that sends none... except that sending none raises the score.
 */
export const clientSignals = z
  .object({
    webdriver: z.boolean().optional(),
    /** Headless hints the widget observed (e.g. 'no-plugins', 'zero-outer-size', 'headless-ua'). */
    headless: z.array(z.string().max(32)).max(16).optional(),
    languages: z.array(z.string().max(35)).max(16).optional(),
    timezone: z.string().max(64).optional(),
    screen: z
      .object({ w: z.number().int().min(0).max(20_000), h: z.number().int().min(0).max(20_000) })
      .optional(),
    touch: z.boolean().optional(),
    /** Behaviour since the page loaded. */
    pointer: z
      .object({
        moves: z.number().int().min(0).max(1_000_000),
        /** Standard deviation of intervals between pointer samples, ms. */
        intervalStdMs: z.number().min(0).max(100_000).optional(),
        /** Fraction of consecutive moves that are exactly collinear, 0..1. */
        straightness: z.number().min(0).max(1).optional(),
      })
      .optional(),
    keys: z
      .object({
        presses: z.number().int().min(0).max(1_000_000),
        intervalStdMs: z.number().min(0).max(100_000).optional(),
      })
      .optional(),
    touches: z.number().int().min(0).max(1_000_000).optional(),
  })
  .strict();
export type ClientSignals = z.infer<typeof clientSignals>;

/** What the server itself saw of the request: these are facts, not claims. */
export interface RequestFacts {
  ip: string;
  userAgent: string;
  acceptLanguage: string;
  secChUa: string;
  secChUaMobile: string;
  secChUaPlatform: string;
  platform: string;
}

/** One rule's contribution: points added to the score and a reason for the logs. */
export interface RiskFinding {
  points: number;
  reason: string;
}
