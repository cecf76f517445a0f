// Seed 001's handler, with a handler that logs on stdout as plenty of real code does: the bridge
// runtime (examples/bridge/tcc_bridge.mjs) must keep stdout for the protocol.
import { makeHandler as makeSeedHandler } from '../../examples/bridge/seed001_handler.mjs';
import { serveHandler } from '../../examples/bridge/tcc_bridge.mjs';

function makeHandler(options) {
  const handler = makeSeedHandler(options);
  const feed = handler.feed.bind(handler);
  handler.feed = chunk => {
    console.log('feeding', JSON.stringify(chunk).slice(0, 40));
    process.stdout.write('raw write on stdout\n');
    console.info('info'); console.debug('debug'); console.warn('warn');
    return feed(chunk);
  };
  return handler;
}

await serveHandler(makeHandler, { target: { name: 'noisy seed 001' }, capabilities: { reasoning: false } });
