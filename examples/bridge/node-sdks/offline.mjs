// What every program of this folder shares: no network, the pinned versions, a body served in the
// suite's byte pieces. Imported before the library is used, so the guard is in place from the start.

import net from 'node:net';
import { readFileSync } from 'node:fs';

/** Make any attempt to reach the network throw: the libraries must only call the `fetch` given to them. */
export function forbidNetwork() {
  globalThis.fetch = async input => {
    throw new Error(`network access attempted (global fetch ${String(input?.url ?? input)})`);
  };
  net.Socket.prototype.connect = function connect() {
    throw new Error('network access attempted (net.Socket#connect)');
  };
}

/** The installed version of each package (read from node_modules: not every package exports ./package.json). */
export function versionsOf(names) {
  const versionOf = name => JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
  return Object.fromEntries(names.map(name => [name, versionOf(name)]));
}

/** A response body that delivers exactly ``pieces``, one per read, as a network would. */
export function streamOf(pieces) {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next < pieces.length) controller.enqueue(pieces[next++]);
      else controller.close();
    },
  });
}
