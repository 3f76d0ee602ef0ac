import { createPuzzle, DEFAULT_POW_POLICY, difficultyForSeconds, type Puzzle } from '@gatehouse/core/pow';
import { z } from 'zod';

/**
 * Expected browser seconds of the extra proof-of-work a slide answer made with the keyboard carries (issue 15
 * item 3): about the hard tier's work at score 90 (docs/accessibility.md, "The keyboard path"). The widget
 * starts it at the first key press inside the challenge, so it runs while the person moves the piece.
 */
export const KEYBOARD_POW_SECONDS = 4.5;

/**
 * Sub-puzzles of the flat-priced puzzles (the keyboard's proof, the accessible alternative's ticket): several
 * seconds of work whose end the widget announces, so the spread of one geometric draw (a 95th percentile
 * of 3× the mean) would be felt; twelve bring it to 1.5×. The server hashes every one (docs/pow.md), twelve
 * hashes for these rare submits against one for the invisible tier's.
 */
export const FLAT_PRICE_SUB_PUZZLES = 12;

/** A puzzle costing `seconds` of one browser core on average, in FLAT_PRICE_SUB_PUZZLES sub-puzzles. */
export function powForSeconds(seconds: number): Puzzle {
  return createPuzzle(
    difficultyForSeconds(seconds, { ...DEFAULT_POW_POLICY, maxCount: FLAT_PRICE_SUB_PUZZLES }),
  );
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
