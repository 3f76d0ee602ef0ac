import type { ChallengeKind } from '@gatehouse/core/challenges';
import type { Deps } from '../deps.ts';
import { historyKey } from '../risk/answer-history.ts';
import { pickImageKind } from './kinds.ts';

/**
 * The kind of the next picture for a client: the kind it last answered wrongly, while the policy still
 * serves it, so a person who missed tries the same task again; otherwise one at random among the policy's
 * kinds. A script gains little from it: it gets again the kind it failed on. A store that does not answer
 * gives a random kind.
 */
export async function nextImageKind(
  deps: Pick<Deps, 'risk'>,
  appId: string,
  ip: string,
  kinds: readonly ChallengeKind[],
): Promise<ChallengeKind> {
  const answers = deps.risk.answers;
  const retry = answers.retryKind
    ? await answers.retryKind(historyKey(appId, ip)).catch(() => undefined)
    : undefined;
  return kinds.find((k) => k === retry) ?? pickImageKind(kinds);
}
