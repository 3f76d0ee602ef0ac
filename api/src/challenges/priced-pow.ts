import { createPuzzle, flatPriceDifficulty, type Puzzle } from '@gatehouse/core/pow';
import { z } from 'zod';

/**
 * Expected browser seconds of the extra proof-of-work a slide answer made with the keyboard carries: about the hard tier's work at score 90 (docs/accessibility.md, "The keyboard path"). The widget
 * starts it at the first key press inside the challenge, so it runs while the person moves the piece.
 */
export const KEYBOARD_POW_SECONDS = 4.5;

/** A puzzle costing `seconds` of one browser core on average, at the flat price's sub-puzzle count. */
export function powForSeconds(seconds: number): Puzzle {
  return createPuzzle(flatPriceDifficulty(seconds));
}

const keyboardEnv = z.object({
  KEYBOARD_POW_SECONDS: z.coerce.number().min(0.05).max(60).default(KEYBOARD_POW_SECONDS),
});

/** KEYBOARD_POW_SECONDS, read and checked (tests lower it); bootstrap reads it once so a bad value stops the start. */
export function keyboardPowSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = keyboardEnv.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid configuration: KEYBOARD_POW_SECONDS: ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data.KEYBOARD_POW_SECONDS;
}

/** The keyboard puzzle of a slide challenge, priced by KEYBOARD_POW_SECONDS. */
export function keyboardPow(): Puzzle {
  return powForSeconds(keyboardPowSeconds());
}
