#!/usr/bin/env node
// The `openai` npm package's Chat Completions stream helpers as a byte-level bridge target
// (docs/bridge.md), fully offline.
//
//   cd examples/bridge/node-sdks && npm ci
//   toolcall-conformance run --bridge "node examples/bridge/node-sdks/openai_bridge.mjs"
//   node examples/bridge/node-sdks/openai_bridge.mjs --once body.sse [--piece N]   (one body, for debugging)
//
// Each recorded Chat Completions body is served, in exactly the byte pieces the suite chose, by a
// custom `fetch` (the client's public option: a Response whose body stream enqueues one piece per
// pull) to `new OpenAI({ fetch })`. The layer that decides what runs is the SDK's own tool runner,
// `client.chat.completions.runTools({ stream: true, tools })` (ChatCompletionStreamingRunner, a
// ChatCompletionStream that also refuses `length` / `content_filter` turns): it runs each
// function tool the model called, with the arguments its `parse` (JSON.parse, the README's
// example) accepts, then sends a second request, which the fetch answers with a plain text reply
// so the loop ends. A call counts as one the application would run exactly when the runner
// invoked its function; every other call of the turn comes back with an `error` (the tool
// message the runner wrote for it, or the exception that ended the run).
//
// The runner needs its tools declared before the request. The application declares the tools its
// model calls: their names are read from a first pass of the same body through the SDK's plain
// stream helper (`client.chat.completions.stream(...).finalChatCompletion()`); when that pass
// fails no tool is declared (the runner then fails the same way before any tool could run).
//
// Offline: globalThis.fetch and net.Socket#connect throw; the client only ever calls the `fetch`
// passed to it.

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { isMain, serveStack } from '../tcc_bridge.mjs';
import { forbidNetwork, streamOf, versionsOf } from './offline.mjs';

export const VERSIONS = versionsOf(['openai']);

// ---- offline guard ------------------------------------------------------------------------------
forbidNetwork();

export const APIS = ['openai-chat'];

// What the fetch answers every request after the first: the model's reply to the tool results,
// plain text, so the runner's loop ends.
const FOLLOW_UP = new TextEncoder().encode(
  `data: ${JSON.stringify({ id: 'chatcmpl-follow-up', object: 'chat.completion.chunk', created: 0, model: 'm',
    choices: [{ index: 0, delta: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
);

function offlineClient(pieces) {
  let requests = 0;
  const fetch = async () => {
    const body = ++requests === 1 ? streamOf(pieces) : streamOf([FOLLOW_UP]);
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return new OpenAI({ apiKey: 'offline', baseURL: 'https://offline.invalid/v1', fetch, maxRetries: 0 });
}

const errorText = error => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

// The provider's id, or null when the SDK minted one (`call_<uuid>` for a call the wire gave no id).
function providerId(id, body) {
  return typeof id === 'string' && id !== '' && body.includes(JSON.stringify(id)) ? id : null;
}

const REQUEST = { model: 'model-under-test', messages: [{ role: 'user', content: 'replay' }] };

/** The tool names the turn calls, as the SDK's plain stream helper reads them (none when it fails). */
async function calledNames(pieces) {
  try {
    const completion = await offlineClient(pieces).chat.completions.stream(REQUEST).finalChatCompletion();
    const calls = completion.choices[0]?.message?.tool_calls ?? [];
    return [...new Set(calls.map(call => call?.function?.name).filter(name => typeof name === 'string' && name))];
  } catch {
    return [];
  }
}

function snapshotCalls(message, body, why) {
  return (message?.tool_calls ?? []).filter(Boolean).map(call => ({
    call_id: providerId(call.id, body),
    name: call.function?.name ?? null,
    raw_arguments: call.function?.arguments ?? '',
    error: why,
  }));
}

/** Run one recorded body through runTools and return the final result the suite reads. */
export async function runStream({ pieces }) {
  const body = Buffer.concat(pieces).toString('utf8');
  const names = await calledNames(pieces);
  const ran = [];
  const tools = names.map(name => ({
    type: 'function',
    function: {
      name,
      parameters: { type: 'object' },
      parse: JSON.parse,
      function: args => {
        ran.push(args);
        return `ran#${ran.length - 1}`;
      },
    },
  }));
  const runner = offlineClient(pieces).chat.completions.runTools({ ...REQUEST, stream: true, tools });
  let lastSnapshot;
  runner.on('chunk', (_chunk, snapshot) => {
    if (lastSnapshot === undefined || runner.allChatCompletions().length === 0) lastSnapshot = snapshot;
  });
  try {
    await runner.done();
  } catch (error) {
    // The run failed: no tool ran (the runner runs tools only on a finished completion).
    const first = runner.allChatCompletions()[0];
    const message = first ? first.choices[0]?.message : lastSnapshot?.choices?.[0]?.message;
    return {
      calls: snapshotCalls(message, body, `the run failed: ${errorText(error)}`).map(call =>
        ran.length ? { ...call, error: `${call.error} (after ${ran.length} tool(s) ran)` } : call),
      text: message?.content ?? '',
      error: errorText(error),
      finish_reason: first?.choices[0]?.finish_reason ?? null,
    };
  }
  const first = runner.allChatCompletions()[0];
  const choice = first?.choices[0];
  const message = choice?.message;
  // The tool messages the runner added right after the first assistant message, in call order.
  const assistantAt = runner.messages.indexOf(message);
  const answers = [];
  for (const item of runner.messages.slice(assistantAt + 1)) {
    if (item.role !== 'tool') break;
    answers.push(item);
  }
  const calls = (message?.tool_calls ?? []).map((call, position) => {
    const reported = { call_id: providerId(call?.id, body), name: call?.function?.name ?? null, raw_arguments: call?.function?.arguments ?? '' };
    const answer = answers.find(item => item.tool_call_id === call?.id) ?? answers[position];
    const ranAt = typeof answer?.content === 'string' && /^ran#\d+$/.test(answer.content) ? Number(answer.content.slice(4)) : null;
    if (ranAt !== null) return { ...reported, arguments: ran[ranAt] };
    return { ...reported, error: answer ? `not run: ${answer.content}` : `not run (type ${JSON.stringify(call?.type)})` };
  });
  return { calls, text: message?.content ?? '', error: null, finish_reason: choice?.finish_reason ?? null, tools_run: ran.length };
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
    await serveStack(({ api, pieces }) => (api === 'openai-chat' ? runStream({ pieces }) : { unsupported: true }), {
      target: { name: 'openai-node', version: `openai ${VERSIONS.openai}`, versions: VERSIONS, surface: 'chat.completions.runTools({ stream: true })' },
      // No server profiles (cumulative arguments); the SDK's message has no reasoning field;
      // JSON.parse gives IEEE doubles.
      capabilities: { apis: APIS, text: true, reasoning: false, converter_options: false, json_numbers: 'double' },
    });
  }
}
