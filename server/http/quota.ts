// The quota stage's two decisions around `Quota.take` (server/quota/): what a request counts as
// (`DELETE /sheets/demo/3` -> a `delete`, known from the method before the body is read), and
// the answer when the billing plan refuses it: 402 throttle with the X-RateLimit-* headers.
import { apiError } from '../../lib/errors.ts';
import type { Operation } from '../../lib/parse-request.ts';
import type { QuotaDecision } from '../quota/quota.ts';
import { errorAnswer, type Answer } from './respond.ts';

const METHOD_OPERATIONS: Record<string, Operation> = { POST: 'create', PATCH: 'update', PUT: 'update', DELETE: 'delete' };

/** The operation a method counts as (the override only turns PUT into PATCH, another update). */
export function operationOf(method: string): Operation {
  return METHOD_OPERATIONS[method] ?? 'read';
}

/** The answer to a request the billing plan refused: its error with the quota's headers and CORS'. */
export function quotaRefusal(decision: QuotaDecision, cors: Readonly<Record<string, string>>): Answer {
  return errorAnswer(decision.error ?? apiError('throttle', 'The monthly request quota is used up.'), { ...decision.headers, ...cors });
}
