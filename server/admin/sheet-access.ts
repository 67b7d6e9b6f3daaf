// The admin token on a connection's own paths: `GET /sheets/crm/tabs` with `Authorization: Bearer
// <admin token>` is answered as if by a key with every operation and every tab, not counted
// against the connection's quota or rate limit, so the dashboard shows every connection's tabs,
// columns and rows and runs its playground without pasting an API key (docs/api.md,
// "The admin token"; docs/decisions.md).
// - Only with the admin API on (start.ts builds this only then): otherwise the header means nothing.
// - Any other `Authorization` (another scheme, a wrong token) means nothing either: the request
//   goes on as if it had none, so a wrong token gets exactly the 401 a request without a key gets
//   (or is served, on an open connection), never a hint that it was tried as the admin token.
// - A wrong Bearer token counts as a failed admin sign-in of the client's address
//   (sign-in-throttle.ts): guessing here is held to the admin API's limit. During a lockout the
//   header is not even compared (the right token means nothing then either).
// - Compared as a SHA-256 digest in constant time; never logged (the request line has no headers).
import { timingSafeEqual } from 'node:crypto';
import { digestKey } from '../auth.ts';
import type { Secret } from '../config/secret.ts';
import { clientAddressOf } from '../http/client-address.ts';
import type { IncomingRequest } from '../http/request.ts';
import type { SignInThrottle } from './sign-in-throttle.ts';

/** Whether a request to `/sheets/...` carries the admin token as `Authorization: Bearer <token>`. */
export type AdminBearer = (request: IncomingRequest) => boolean;

export function adminBearer(token: Secret, throttle: SignInThrottle): AdminBearer {
  const expected = digestKey(token.reveal());
  return (request) => {
    const header = request.headers.get('authorization');
    if (header === null) return false;
    const presented = /^Bearer +(\S+) *$/i.exec(header);
    if (presented === null) return false;
    const address = clientAddressOf(request);
    if (throttle.check(address) !== null) return false;
    // Digests have one length, as timingSafeEqual requires, whatever length was sent.
    if (!timingSafeEqual(digestKey(presented[1]), expected)) {
      throttle.failed(address);
      return false;
    }
    throttle.succeeded(address);
    return true;
  };
}
