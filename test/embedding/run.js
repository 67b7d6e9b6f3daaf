// Run from a folder where the packed sheetrest is installed, by Node (22.18 and 24), Deno and
// Bun alike: imports the engine by its package name, as an embedder would, checks that importing
// it creates no globals, then prints the answers to the three requests (three-requests.js) as JSON.
const globalsBefore = Object.getOwnPropertyNames(globalThis);
const engine = await import('sheetrest/engine');
const newGlobals = Object.getOwnPropertyNames(globalThis).filter((name) => !globalsBefore.includes(name));
const root = await import('sheetrest');
const { threeRequests } = await import('./three-requests.js');
console.log(JSON.stringify({ newGlobals, sameAsRoot: root.handle === engine.handle, answers: threeRequests(engine) }));
