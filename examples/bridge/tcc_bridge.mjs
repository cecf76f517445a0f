// The target side of the toolcall-conformance JSON-lines bridge (protocol 1, docs/bridge.md), for
// Node >= 20, no dependencies. Copy it next to your own handler or provider code:
//
//   import { serveHandler } from './tcc_bridge.mjs';   // delta level: a seed-shaped handler
//   serveHandler(makeHandler, { target: { name: 'my-handler' }, capabilities: { reasoning: false } });
//
//   import { serveStack } from './tcc_bridge.mjs';     // byte level: your provider code over a body
//   serveStack(async ({ api, pieces, options }) => ({ calls: [...], text, reasoning, error }), { ... });
//
// The suite starts the command once per run and sends one JSON object per line on stdin; every
// answer is one line on stdout. stdout is reserved for the protocol: console.log/info/debug/warn
// and any other process.stdout.write are sent to stderr, which the suite keeps and shows when
// something goes wrong.

import { realpathSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const PROTOCOL = 1;

// ---- stdout belongs to the protocol -------------------------------------------------------------
const protocolWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
for (const method of ['log', 'info', 'debug', 'warn']) {
  console[method] = (...args) => console.error(...args);
}

function send(message) {
  protocolWrite(`${JSON.stringify({ tcc: PROTOCOL, ...message })}\n`);
}

/** True when the module at `importMetaUrl` is the script Node was started with. */
export function isMain(importMetaUrl) {
  if (process.argv[1] === undefined) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(importMetaUrl));
  } catch {
    return false;
  }
}

// Built-in error classes that mean "the code hit a bug" rather than "the handler refused on purpose".
const ERROR_CLASSES = { TypeError: 'type', SyntaxError: 'value', RangeError: 'value', URIError: 'value' };

/**
 * An exception as data. `class` is the language-neutral kind the suite maps to its own exceptions:
 * "state" (a plain Error or your own subclass: the handler refuses, like Python's RuntimeError),
 * "value" (SyntaxError, RangeError: bad input, like ValueError), "type" (TypeError), "other".
 */
export function describeError(error) {
  if (error instanceof Error) {
    const type = error.name || error.constructor?.name || 'Error';
    const native = ['EvalError', 'ReferenceError', 'AggregateError', 'InternalError'].includes(type);
    return {
      type,
      message: String(error.message),
      class: ERROR_CLASSES[type] ?? (native ? 'other' : 'state'),
      stack: typeof error.stack === 'string' ? error.stack.split('\n').slice(0, 8).join('\n') : null,
    };
  }
  return { type: typeof error, message: String(error), class: 'other', stack: null };
}

async function serve(hello, handle) {
  send({ type: 'hello', protocol: [PROTOCOL], ...hello });
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let started = false;
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      send({ id: null, error: `not a JSON line: ${error.message}` });
      continue;
    }
    if (request?.type === 'bye') break;
    if (request?.type === 'start') {
      if (request.protocol !== PROTOCOL) {
        send({ id: null, error: `protocol ${request.protocol} is not offered (this target speaks ${PROTOCOL})` });
        process.exitCode = 2;
        break;
      }
      started = true;
      send({ type: 'ready' });
      continue;
    }
    if (!started) {
      send({ id: request?.id ?? null, error: 'a request came before start' });
      continue;
    }
    let answer;
    try {
      answer = await handle(request);
    } catch (error) {
      // A failure of the bridge code itself (never of the code under test, whose exceptions are data).
      answer = { error: `bridge failure on ${request.type}: ${describeError(error).message}` };
    }
    send({ id: request.id ?? null, ...answer });
  }
  lines.close();
}

// ---- delta level ----------------------------------------------------------------------------------

function method(handler, camel, snake) {
  const fn = handler[camel] ?? handler[snake];
  if (typeof fn !== 'function') throw new TypeError(`the handler has no ${camel}() (or ${snake}())`);
  return fn.bind(handler);
}

// Results are serialised when each operation returns, so a handler that later mutates an object it
// returned cannot rewrite what the suite saw. `undefined` becomes null; keys holding undefined
// vanish, exactly as a JavaScript application serialising the events would see them.
function plain(value) {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/**
 * Serve a seed-shaped handler at the delta level. `makeHandler({ onSegmentEvent, onToolInvocation })`
 * returns an object with feed(chunk), finalize(), getAllEvents(), getAllInvocations(), reset()
 * (snake_case names work too); with `capabilities.events: false`, a final-result accumulator with
 * add(chunk) and result() (calls, text, reasoning: see docs/bridge.md). Chunks arrive as plain objects with every key present (null when
 * absent): content, reasoning, is_complete, tool_calls [{index, call_id, name, arguments_delta,
 * provider_metadata}], finish_reason, error {kind, message}, usage, image_urls, audio_urls, video_urls.
 */
export function serveHandler(makeHandler, { target = {}, capabilities = {} } = {}) {
  const handlers = new Map();

  function create(name, callbacks) {
    const entry = { handler: null, fired: [], calls: 0 };
    let options = {};
    if (callbacks !== 'none') {
      const raiseFrom = typeof callbacks === 'object' && callbacks !== null ? callbacks.raise_from : null;
      const message = (typeof callbacks === 'object' && callbacks?.message) || 'callback failure injected by toolcall-conformance';
      const callback = kind => value => {
        const position = entry.calls++;
        try {
          entry.fired.push({ kind, value: plain(value) });
        } catch (error) {
          entry.fired.push({ kind, unreadable: `the ${kind} callback got a value JSON cannot carry: ${error.message}` });
        }
        if (raiseFrom !== null && position >= raiseFrom) throw new Error(message);
      };
      options = { onSegmentEvent: callback('event'), onToolInvocation: callback('invocation') };
    }
    entry.handler = makeHandler(options);
    handlers.set(name, entry);
  }

  // The handler's own call: what it returns, or what it raises (data, not a bridge failure).
  function call(request, handler) {
    switch (request.type) {
      case 'feed':
        return { value: method(handler, 'feed', 'feed')(request.chunk) };
      case 'finalize':
        return { value: method(handler, 'finalize', 'finalize')() };
      case 'events':
      case 'invocations': {
        const get = request.type === 'events'
          ? method(handler, 'getAllEvents', 'get_all_events')
          : method(handler, 'getAllInvocations', 'get_all_invocations');
        const first = get();
        // The same array twice: the getter hands out the handler's own list, not a copy.
        return { value: first, aliased: first !== null && typeof first === 'object' && first === get() };
      }
      case 'reset':
        method(handler, 'reset', 'reset')();
        return { value: null };
      // A final-result accumulator (capabilities.events: false): add(chunk) per chunk, then result().
      case 'add':
        method(handler, 'add', 'add')(request.chunk);
        return { value: null };
      case 'result':
        return { value: method(handler, 'result', 'result')() };
      default:
        return null;
    }
  }

  function operate(request, entry) {
    let result;
    try {
      result = call(request, entry.handler);
    } catch (error) {
      return { raised: describeError(error) };
    }
    if (result === null) return { error: `unknown request type ${JSON.stringify(request.type)}` };
    let ok;
    try {
      ok = plain(result.value);
    } catch (error) {
      return { unreadable: `${request.type} returned a value JSON cannot carry: ${describeError(error).message}` };
    }
    return result.aliased === undefined ? { ok } : { ok, aliased: result.aliased };
  }

  function handle(request) {
    for (const name of request.drop ?? []) handlers.delete(name);
    if (request.type === 'drop') return { ok: null };
    if (request.type === 'new') {
      try {
        create(request.h, request.callbacks ?? 'none');
      } catch (error) {
        return { raised: describeError(error), callbacks: [] };
      }
      return { ok: null, callbacks: [] };
    }
    const entry = handlers.get(request.h);
    if (entry === undefined) return { error: `no live handler named ${JSON.stringify(request.h)}` };
    entry.fired = [];
    return { ...operate(request, entry), callbacks: entry.fired };
  }

  return serve({ level: 'delta', target: withRuntime(target), capabilities }, handle);
}

// ---- byte level -----------------------------------------------------------------------------------

/**
 * Serve a whole provider stack at the byte level. `runStream({ api, pieces, options })` gets the
 * wire API name, the response body as Uint8Array pieces (deliver them to your HTTP layer exactly
 * as cut) and the recording's converter options; it returns the final result: `{ calls: [{ call_id,
 * name, raw_arguments, arguments } | { call_id, name, raw_arguments, error }], text, reasoning,
 * error, finish_reason }`. Return `{ unsupported: true }` for an api you do not run.
 */
export function serveStack(runStream, { target = {}, capabilities = {} } = {}) {
  async function handle(request) {
    if (request.type !== 'stream') return { error: `unknown request type ${JSON.stringify(request.type)}` };
    const pieces = request.pieces.map(piece => new Uint8Array(Buffer.from(piece, 'base64')));
    try {
      const result = await runStream({ api: request.api, pieces, options: request.options ?? {} });
      return { ok: plain(result) };
    } catch (error) {
      return { raised: describeError(error) };
    }
  }
  return serve({ level: 'bytes', target: withRuntime(target), capabilities }, handle);
}

function withRuntime(target) {
  return { language: 'javascript', runtime: `node ${process.version}`, ...target };
}
