import type { Condition, ConditionStatus } from '../api/v1alpha1/app-types.ts';
import type { ConditionTypeName, ReasonName } from './reasons.ts';

export interface ConditionInput {
  type: ConditionTypeName;
  status: ConditionStatus;
  reason: ReasonName;
  message: string;
}

/** metav1.Time: RFC 3339 in whole seconds. */
export const metaTime = (date: Date) => date.toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Sets one condition on a copy of `conditions`, in place of the one of the same type. Guarantees:
 * `lastTransitionTime` changes only when the status flips (a new reason or message keeps it), and the
 * other conditions and their order are kept, new types going last.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number,
  now: Date = new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    observedGeneration,
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : metaTime(now),
    reason: input.reason,
    message: input.message,
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: ConditionTypeName) {
  return conditions?.find((c) => c.type === type);
}

export const isTrue = (conditions: readonly Condition[] | undefined, type: ConditionTypeName) =>
  findCondition(conditions, type)?.status === 'True';
