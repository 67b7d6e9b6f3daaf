// The fold worker's entry (fold-runner.ts starts it): plain JavaScript, like server/cli.js, so
// that in an installed package Node can load it and put in place the hook that strips the types
// of sheetrest's .ts files (hooks belong to one thread: the main thread's do not reach a worker).
import { stripOwnTypes } from '../../strip-types.js';

stripOwnTypes();
await import('./fold-worker.ts');
