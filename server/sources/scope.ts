// Which tab a request reads, from its path alone, so a source that reads tab by tab can be told
// before the request is parsed (a kept answer is found without parsing it):
// `/sheets/crm/tabs/Orders/3` -> { tab: 'Orders' }; `/sheets/crm?_limit=5` -> { tab: null } (the
// first tab); `/sheets/crm/tabs` -> {} (every tab: the list counts each tab's rows). The same
// segments as lib/parse-request.ts; a path it would refuse gives {} (the whole workbook, as before).
import type { ReadOptions } from './source.ts';

export function readScope(url: string): Pick<ReadOptions, 'tab'> {
  const start = url.indexOf('/sheets/');
  if (start < 0) return {};
  const queryAt = url.indexOf('?', start);
  const path = url.slice(start, queryAt < 0 ? undefined : queryAt);
  const segments = (path.endsWith('/') ? path.slice(0, -1) : path).split('/').slice(3);
  if (segments[0] !== 'tabs') return { tab: null };
  if (segments.length < 2) return {};
  try {
    return { tab: decodeURIComponent(segments[1]) };
  } catch {
    return {};
  }
}
