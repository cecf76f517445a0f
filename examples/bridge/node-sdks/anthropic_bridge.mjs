#!/usr/bin/env node
// The `@anthropic-ai/sdk` npm package's Messages stream helpers as a byte-level bridge target
// (docs/bridge.md), fully offline.
//
//   cd examples/bridge/node-sdks && npm ci
//   toolcall-conformance run --bridge "node examples/bridge/node-sdks/anthropic_bridge.mjs"
//   node examples/bridge/node-sdks/anthropic_bridge.mjs --once body.sse [--piece N]   (one body, for debugging)
//
// Each recorded Messages body is served, in exactly the byte pieces the suite chose, by a custom
// `fetch` (the client's public option: a Response whose body stream enqueues one piece per pull)
// to `new Anthropic({ fetch })`. The layer that decides what runs is the SDK's own tool runner,
// `client.beta.messages.toolRunner({ stream: true, tools })` (lib/tools/BetaToolRunner): it reads
// each reply's `stop_reason` (determineNextStepFromStopReason: `tool_use` runs the reply's
// tool_use blocks; `end_turn`, `max_tokens`, `refusal`, a missing stop reason, ... run none), runs
// each `betaTool` the reply called with the `input` the stream parsed, and sends the tool results
// in a second request, which the fetch answers with a plain text reply so the loop ends. A call
// counts as one the application would run exactly when the runner invoked its `run`; every other
// tool_use block of the reply comes back with an `error` saying why not.
//
// The runner needs its tools declared before the request. The application declares the tools its
// model calls: their names are read from a first pass of the same body through the SDK's plain
// stream helper (`client.messages.stream(...).finalMessage()`, MessageStream); when that pass
// fails no tool is declared (the runner's own pass of the body then fails the same way).
//
// What it cannot map: the final message keeps no raw argument text; `raw_arguments` is the text
// the stream accumulated for the block (the SDK's non-enumerable `__json_buf`), else the input
// serialised. Server tools (server_tool_use: web search, code execution) ran at the provider and
// are not the application's calls: left out.
//
// Offline: globalThis.fetch and net.Socket#connect throw; the client only ever calls the `fetch`
// passed to it.

import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { isMain, serveStack } from '../tcc_bridge.mjs';
import { forbidNetwork, streamOf, versionsOf } from './offline.mjs';

export const VERSIONS = versionsOf(['@anthropic-ai/sdk']);

// ---- offline guard ------------------------------------------------------------------------------
forbidNetwork();

export const APIS = ['anthropic'];

const sse = events => events.map(event => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');

// What the fetch answers every request after the first: the model's reply to the tool results,
// plain text, so the runner's loop ends.
const FOLLOW_UP = new TextEncoder().encode(sse([
  { type: 'message_start', message: { id: 'msg_follow_up', type: 'message', role: 'assistant', model: 'm', content: [],
    stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'done' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
]));

function offlineClient(pieces) {
  let requests = 0;
  const fetch = async () => {
    const body = ++requests === 1 ? streamOf(pieces) : streamOf([FOLLOW_UP]);
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return new Anthropic({ apiKey: 'offline', baseURL: 'https://offline.invalid', fetch, maxRetries: 0 });
}

const errorText = error => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

const REQUEST = { model: 'model-under-test', max_tokens: 1024, messages: [{ role: 'user', content: 'replay' }] };

/** The tool names the turn calls, as the SDK's plain stream helper reads them (none when it fails). */
async function calledNames(pieces) {
  try {
    const message = await offlineClient(pieces).messages.stream(REQUEST).finalMessage();
    const names = message.content.filter(block => block.type === 'tool_use').map(block => block.name);
    return [...new Set(names.filter(name => typeof name === 'string' && name))];
  } catch {
    return [];
  }
}

function rawArguments(block) {
  if (typeof block.__json_buf === 'string') return block.__json_buf;
  try {
    return JSON.stringify(block.input) ?? '';
  } catch {
    return '';
  }
}

function textOf(message) {
  const blocks = message?.content ?? [];
  return {
    text: blocks.filter(block => block.type === 'text').map(block => block.text).join(''),
    reasoning: blocks.filter(block => block.type === 'thinking').map(block => block.thinking).join(''),
  };
}

/** Run one recorded body through the tool runner and return the final result the suite reads. */
export async function runStream({ pieces }) {
  const names = await calledNames(pieces);
  const ran = []; // { id, input } in the order the runner invoked the tools
  const tools = names.map(name =>
    betaTool({
      name,
      inputSchema: { type: 'object' },
      run: (input, context) => {
        ran.push({ id: context?.toolUse?.id, input });
        return 'ok';
      },
    }));
  const runner = offlineClient(pieces).beta.messages.toolRunner({ ...REQUEST, tools, stream: true });
  let first; // the reply to the recorded body: the first stream's final message
  let snapshot; // the latest snapshot of that stream, for a reply that never finished
  try {
    for await (const stream of runner) {
      if (first !== undefined) continue; // the follow-up turn
      stream.on('streamEvent', (_event, current) => {
        snapshot = current;
      });
      first = await stream.finalMessage();
    }
  } catch (error) {
    const message = first ?? snapshot;
    const blocks = (message?.content ?? []).filter(block => block.type === 'tool_use');
    return {
      calls: blocks.map(block => ({
        call_id: block.id ?? null,
        name: block.name ?? null,
        raw_arguments: rawArguments(block),
        error: `the run failed: ${errorText(error)}${ran.length ? ` (after ${ran.length} tool(s) ran)` : ''}`,
      })),
      ...textOf(message),
      error: errorText(error),
      finish_reason: message?.stop_reason ?? null,
    };
  }
  const used = new Set();
  const calls = (first?.content ?? []).filter(block => block.type === 'tool_use').map(block => {
    const reported = { call_id: block.id ?? null, name: block.name ?? null, raw_arguments: rawArguments(block) };
    const at = ran.findIndex((item, position) => !used.has(position) && item.id === block.id);
    if (at >= 0) {
      used.add(at);
      return { ...reported, arguments: ran[at].input };
    }
    return { ...reported, error: `not run: the reply stopped with stop_reason ${JSON.stringify(first.stop_reason)}` };
  });
  const ended = first?.stop_reason;
  const abnormal = ended === null || ended === undefined || ended === 'max_tokens' || ended === 'refusal';
  return {
    calls,
    ...textOf(first),
    error: abnormal ? `the reply stopped with stop_reason ${JSON.stringify(ended ?? null)}` : null,
    finish_reason: ended ?? null,
    tools_run: ran.length,
  };
}

// ---- entry points -------------------------------------------------------------------------------
function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === '--once') {
    const body = readFileSync(process.argv[3]);
    const size = Number(option('--piece', body.length || 1));
    const pieces = [];
    for (let at = 0; at < body.length; at += size) pieces.push(new Uint8Array(body.subarray(at, at + size)));
    console.error(JSON.stringify(await runStream({ pieces }), null, 1));
  } else {
    await serveStack(({ api, pieces }) => (api === 'anthropic' ? runStream({ pieces }) : { unsupported: true }), {
      target: {
        name: 'anthropic-node',
        version: `@anthropic-ai/sdk ${VERSIONS['@anthropic-ai/sdk']}`,
        versions: VERSIONS,
        surface: 'beta.messages.toolRunner({ stream: true })',
      },
      // No server profiles; thinking blocks are the reasoning; JSON numbers are IEEE doubles.
      capabilities: { apis: APIS, text: true, reasoning: true, converter_options: false, json_numbers: 'double' },
    });
  }
}
