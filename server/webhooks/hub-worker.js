// The webhooks worker's entry (hub.ts starts it): plain JavaScript, like the fold worker's
// (server/sources/file/fold-worker.js), so that in an installed package Node can strip the types
// of sheetrest's .ts files in this thread too (hooks belong to one thread).
import { stripOwnTypes } from '../strip-types.js';

stripOwnTypes();
await import('./hub-worker.ts');
