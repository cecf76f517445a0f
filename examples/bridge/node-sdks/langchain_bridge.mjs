#!/usr/bin/env node
// LangChain.js (`@langchain/openai` ChatOpenAI over `@langchain/core`) as a byte-level bridge target
// (docs/bridge.md), fully offline.
//
//   cd examples/bridge/node-sdks && npm ci
//   toolcall-conformance run --stack conformance.adapters.langchain_js:open_stack_target
//   node examples/bridge/node-sdks/langchain_bridge.mjs --once openai-chat body.sse [--piece N]   (one body, for debugging)
//
// Each recorded Chat Completions body is served, in exactly the byte pieces the suite chose, by a
// custom `fetch` handed to ChatOpenAI's `configuration` (passed through to the `openai` client it
// builds): a Response whose body stream enqueues one piece per pull. The application code is what
// every LangChain.js app does: `model.bindTools([...]).stream(...)`, each AIMessageChunk folded with
// `.concat()`, then the final message read through `.tool_calls`, `.invalid_tool_calls`, `.content`
// and `response_metadata.finish_reason`.
//
// What runs: LangGraph's ToolNode (and `createAgent` in `langchain`, which uses it) runs the last
// AIMessage's `tool_calls`, every one of them, whatever the finish reason; `invalid_tool_calls` are
// never run (https://js.langchain.com/docs/concepts/tool_calling/ : "invalid_tool_calls" hold calls
// whose arguments could not be parsed). Those packages are not installed here, so the fold is read
// the way that layer reads it: a valid tool_call runs, an invalid one does not. An exception out of
// `.stream()` (the openai client raises APIError on an in-band error event) means nothing ran: the
// turn is reported with that error and no calls.
//
// Offline: globalThis.fetch and net.Socket#connect throw, so any attempt to reach the network fails
// loudly; the openai client only ever calls the `fetch` passed to it.

import { readFileSync } from 'node:fs';
import { ChatOpenAI } from '@langchain/openai';
import { isMain, serveStack } from '../tcc_bridge.mjs';
import { forbidNetwork, streamOf, versionsOf } from './offline.mjs';

const PACKAGES = ['@langchain/openai', '@langchain/core', 'openai'];
export const VERSIONS = versionsOf(PACKAGES);

// ---- offline guard ------------------------------------------------------------------------------
forbidNetwork();

export const APIS = ['openai-chat'];

// ---- the recorded response ----------------------------------------------------------------------
function recordedFetch(pieces) {
  let requests = 0;
  return async url => {
    if (++requests > 1) throw new Error(`unexpected request #${requests} to ${url}`);
    const body = streamOf(pieces);
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

// The tools bound only shape the request; ChatOpenAI parses whatever calls the stream holds, by any
// name. Whether the application has a tool of that name is its registry, not checked here.
const TOOLS = [{ type: 'function', function: { name: 'any_tool', description: 'a tool', parameters: { type: 'object', properties: {} } } }];

const errorText = error => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

// The provider's id, or null when LangChain has none or the wire never held it.
function providerId(id, body) {
  return typeof id === 'string' && body.includes(JSON.stringify(id)) ? id : null;
}

// The concatenated message keeps the wire's tool_call_chunks (merged by index); `.tool_calls` and
// `.invalid_tool_calls` are collapsed from them into two lists, so the wire order of valid and invalid
// calls is recovered by walking the chunks and taking, for each, the first unused entry of either list
// that carries its id (a chunk whose entry was already taken belongs to an earlier call).
function inWireOrder(message) {
  const valid = [...(message.tool_calls ?? [])].map(call => ({ call, ok: true }));
  const invalid = [...(message.invalid_tool_calls ?? [])].map(call => ({ call, ok: false }));
  const ordered = [];
  const take = (list, chunk) => {
    const at = list.findIndex(({ call }) => (call.id ?? null) === (chunk.id ?? null));
    return at >= 0 ? list.splice(at, 1)[0] : null;
  };
  for (const chunk of message.tool_call_chunks ?? []) {
    const entry = take(valid, chunk) ?? take(invalid, chunk);
    if (entry) ordered.push({ ...entry, raw: typeof chunk.args === 'string' ? chunk.args : '' });
  }
  // Entries no chunk claimed (a group collapsed from several chunks under another id): in list order.
  for (const entry of [...valid, ...invalid]) ordered.push({ ...entry, raw: entry.ok ? JSON.stringify(entry.call.args) : String(entry.call.args ?? '') });
  return ordered;
}

function finalResult(message, body, streamError) {
  if (message === null) {
    return { calls: [], text: '', reasoning: '', error: streamError ?? 'the stream yielded no message', finish_reason: null };
  }
  const calls = inWireOrder(message).map(({ call, ok, raw }) => {
    const common = { call_id: providerId(call.id, body), name: call.name ?? '', raw_arguments: raw };
    if (!ok) return { ...common, error: `invalid_tool_calls: ${call.error ?? 'unparsable arguments'}` };
    // .stream() raised: the application got no final AIMessage, so no ToolNode ran anything.
    if (streamError) return { ...common, error: `not run: .stream() raised ${streamError}` };
    return { ...common, arguments: call.args };
  });
  return {
    calls,
    text: typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
    reasoning: typeof message.additional_kwargs?.reasoning_content === 'string' ? message.additional_kwargs.reasoning_content : '',
    error: streamError,
    finish_reason: message.response_metadata?.finish_reason ?? null,
  };
}

/** Run one recorded body through ChatOpenAI.bindTools().stream() and return the final result the suite reads. */
export async function runStream({ pieces }) {
  const model = new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: 'test',
    maxRetries: 0,
    configuration: { fetch: recordedFetch(pieces), baseURL: 'https://api.openai.invalid/v1' },
  });
  const bound = model.bindTools(TOOLS);
  let message = null;
  let streamError = null;
  try {
    for await (const chunk of await bound.stream('replay')) message = message === null ? chunk : message.concat(chunk);
  } catch (error) {
    streamError = errorText(error);
  }
  return finalResult(message, Buffer.concat(pieces).toString('utf8'), streamError);
}

// ---- entry points -------------------------------------------------------------------------------
function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

export const CAPABILITIES = { apis: APIS, text: true, reasoning: true, converter_options: false, json_numbers: 'double' };

if (isMain(import.meta.url)) {
  if (process.argv[2] === '--once') {
    const file = process.argv[4];
    const body = readFileSync(file);
    const size = Number(option('--piece', body.length || 1));
    const pieces = [];
    for (let at = 0; at < body.length; at += size) pieces.push(new Uint8Array(body.subarray(at, at + size)));
    console.error(JSON.stringify(await runStream({ pieces }), null, 1));
  } else {
    await serveStack(({ pieces }) => runStream({ pieces }), {
      target: { name: 'langchain-js', version: `@langchain/openai ${VERSIONS['@langchain/openai']}`, versions: VERSIONS, surface: 'ChatOpenAI.bindTools().stream() folded with concat()' },
      // No converter options: a recording that needs a server profile is not applicable, by name.
      // JavaScript numbers are IEEE doubles.
      capabilities: CAPABILITIES,
    });
  }
}
