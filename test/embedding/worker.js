// A Cloudflare Worker (workerd) that embeds the engine: every request is answered with the
// engine's answers to the three requests (three-requests.js), as JSON. `sheetrest/engine` is
// a module of the Worker's config that re-exports the package's dist/engine/mod.js, as a
// bundler would resolve the package's exports map (test/engine/embedding.test.ts writes the config).
import * as engine from 'sheetrest/engine';
import { threeRequests } from './three-requests.js';

export default {
  fetch() {
    return Response.json(threeRequests(engine));
  },
};
