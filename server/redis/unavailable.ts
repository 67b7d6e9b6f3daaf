// The refusal every shared-store path gives while Redis is away. Its own module, without the
// Redis client: the admin API names it on every server, and most servers never load `redis`.
import { apiError, type ApiError } from '../../lib/errors.ts';

/** The 503 every refusal for want of Redis carries. */
export function redisUnavailable(what: string): ApiError {
  return apiError('upstream_unavailable', `${what}: the shared store (Redis) is unreachable; try again once it is back.`, { 'Retry-After': '1' });
}
