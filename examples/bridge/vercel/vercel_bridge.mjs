#!/usr/bin/env node
// The Vercel AI SDK as a byte-level bridge target (docs/bridge.md), fully offline.
//
//   cd examples/bridge/vercel && npm ci
//   toolcall-conformance run --bridge "node examples/bridge/vercel/vercel_bridge.mjs"
//   node examples/bridge/vercel/vercel_bridge.mjs --once openai-chat body.sse [--piece N]   (one body, for debugging)
//
// Each recorded response body is served, in exactly the byte pieces the suite chose, by a custom
// `fetch` (the providers' public option: a Response whose body stream enqueues one piece per pull)
// to the real provider: @ai-sdk/openai (Chat Completions with .chat(), Responses with
// .responses()), @ai-sdk/anthropic or @ai-sdk/google, driven by `streamText()` from `ai`, whose
// `fullStream` is what an application consumes. Tools are declared without `execute`: nothing
// runs. A call counts as one the application would run only when streamText would execute it:
// a valid `tool-call` part (not invalid, not provider-executed) in a step that finished with
// 'stop' or 'tool-calls' (ai/src/generate-text/is-tool-execution-allowed-finish-reason.ts); every
// other call comes back with an `error` saying why it would not run.
//
// `--chat-provider openai-compatible` serves Chat Completions bodies to @ai-sdk/openai-compatible
// instead (the provider AI SDK users take for DeepSeek/vLLM-style servers).
//
// Offline: globalThis.fetch and net.Socket#connect throw, so any attempt to reach the network
// fails loudly; the providers only ever call the `fetch` passed to them; the model object is
// passed directly (the AI Gateway is never used); telemetry is off unless asked for.

import net from 'node:net';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { isMain, serveStack } from '../tcc_bridge.mjs';

const require = createRequire(import.meta.url);
const PACKAGES = ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google', '@ai-sdk/openai-compatible', 'zod'];
export const VERSIONS = Object.fromEntries(PACKAGES.map(name => [name, require(`${name}/package.json`).version]));

// ---- offline guard ------------------------------------------------------------------------------
globalThis.AI_SDK_LOG_WARNINGS = false;
globalThis.fetch = async input => {
  throw new Error(`network access attempted (global fetch ${String(input?.url ?? input)})`);
};
net.Socket.prototype.connect = function connect() {
  throw new Error('network access attempted (net.Socket#connect)');
};

export const APIS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

// ---- the recorded response ----------------------------------------------------------------------
function recordedFetch(pieces) {
  let requests = 0;
  return async url => {
    if (++requests > 1) throw new Error(`unexpected request #${requests} to ${url}`);
    let next = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (next < pieces.length) controller.enqueue(pieces[next++]);
        else controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

function modelFor(api, fetch, chatProvider) {
  const common = { fetch, apiKey: 'test' };
  switch (api) {
    case 'openai-chat':
      if (chatProvider === 'openai-compatible') {
        return createOpenAICompatible({ ...common, name: 'compat', baseURL: 'https://compat.invalid/v1' }).chatModel('model-under-test');
      }
      return createOpenAI(common).chat('model-under-test');
    case 'openai-responses':
      return createOpenAI(common).responses('model-under-test');
    case 'anthropic':
      return createAnthropic(common)('model-under-test');
    case 'gemini':
      return createGoogleGenerativeAI(common)('gemini-test');
    default:
      throw new Error(`unknown api ${api}`);
  }
}

// The application declares whatever tool the model calls, with a permissive schema and no
// execute: unknown-tool handling is not what is checked here.
const anyTool = tool({ description: 'a tool', inputSchema: z.looseObject({}) });
const everyTool = new Proxy({}, { get: (_, name) => (typeof name === 'string' ? anyTool : undefined), has: () => true });

const errorText = error =>
  error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : JSON.stringify(error);

/** Fold the fullStream parts into what an AI SDK application ends up with. */
function newTurn() {
  return { text: '', reasoning: '', inputs: new Map(), calls: [], errors: [], finishReason: null, rawFinishReason: null };
}

function take(turn, part) {
  switch (part.type) {
    case 'text-delta':
      turn.text += part.text;
      break;
    case 'reasoning-delta':
      turn.reasoning += part.text;
      break;
    case 'tool-input-start':
      turn.inputs.set(part.id, { name: part.toolName, deltas: [] });
      break;
    case 'tool-input-delta':
      turn.inputs.get(part.id)?.deltas.push(part.delta);
      break;
    case 'tool-call': {
      const streamed = turn.inputs.get(part.toolCallId);
      turn.calls.push({ part, raw: streamed ? streamed.deltas.join('') : typeof part.input === 'string' ? part.input : JSON.stringify(part.input) });
      break;
    }
    case 'finish-step':
    case 'finish':
      turn.finishReason = part.finishReason ?? turn.finishReason;
      turn.rawFinishReason = part.rawFinishReason ?? turn.rawFinishReason;
      break;
    case 'error':
      turn.errors.push(errorText(part.error));
      break;
    case 'abort':
      turn.errors.push(`abort: ${part.reason ?? ''}`);
      break;
    default:
      break;
  }
}

// The provider's id, or null when the SDK minted one (the wire had none): a minted id is random,
// so reporting it would make the same body give a different result on every run.
function providerId(id, body) {
  return typeof id === 'string' && body.includes(JSON.stringify(id)) ? id : null;
}

function finalResult(turn, body) {
  // streamText executes client tools only when the step finished with 'stop' or 'tool-calls'.
  const allowed = turn.finishReason === 'stop' || turn.finishReason === 'tool-calls';
  // Provider-executed tools (web search, code execution) ran on the server: not the application's calls.
  const clientCalls = turn.calls.filter(({ part }) => !part.providerExecuted);
  const calls = clientCalls.map(({ part, raw }) => {
    const call = { call_id: providerId(part.toolCallId, body), name: part.toolName, raw_arguments: raw, sdk_call_id: part.toolCallId };
    if (part.invalid) return { ...call, error: `invalid tool call: ${errorText(part.error)}` };
    if (!allowed) return { ...call, error: `not executed: the step finished with '${turn.finishReason}'` };
    return { ...call, arguments: part.input };
  });
  const abnormal = turn.finishReason !== 'stop' && turn.finishReason !== 'tool-calls';
  const errors = [...turn.errors];
  if (abnormal && errors.length === 0) errors.push(`finish reason '${turn.finishReason}' (raw ${JSON.stringify(turn.rawFinishReason)})`);
  const ended = new Set(turn.calls.map(({ part }) => part.toolCallId));
  return {
    calls,
    text: turn.text,
    reasoning: turn.reasoning,
    error: errors.length ? errors.join('; ') : null,
    finish_reason: turn.finishReason,
    provider_executed: turn.calls.filter(({ part }) => part.providerExecuted).map(({ part }) => part.toolName),
    // Diagnostics (the suite reads only the keys above): tool inputs that started and never became a call.
    unfinished_inputs: [...turn.inputs.entries()].filter(([id]) => !ended.has(id)).map(([id, { name, deltas }]) => ({ id, name, raw: deltas.join('') })),
  };
}

/** Run one recorded body through streamText and return the final result the suite reads. */
export async function runStream({ api, pieces, chatProvider = 'openai' }) {
  const result = streamText({
    model: modelFor(api, recordedFetch(pieces), chatProvider),
    prompt: 'replay',
    tools: everyTool,
    maxRetries: 0,
    onError: () => {}, // errors are read from the stream's error parts
  });
  const turn = newTurn();
  for await (const part of result.fullStream) take(turn, part);
  return finalResult(turn, Buffer.concat(pieces).toString('utf8'));
}

// ---- entry points -------------------------------------------------------------------------------
function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

if (isMain(import.meta.url)) {
  const chatProvider = option('--chat-provider', 'openai');
  if (process.argv[2] === '--once') {
    const [api, file] = process.argv.slice(3, 5);
    const body = readFileSync(file);
    const size = Number(option('--piece', body.length || 1));
    const pieces = [];
    for (let at = 0; at < body.length; at += size) pieces.push(new Uint8Array(body.subarray(at, at + size)));
    console.error(JSON.stringify(await runStream({ api, pieces, chatProvider }), null, 1));
  } else {
    const name = chatProvider === 'openai' ? 'Vercel AI SDK' : `Vercel AI SDK (Chat Completions via @ai-sdk/${chatProvider})`;
    await serveStack(({ api, pieces }) => runStream({ api, pieces, chatProvider }), {
      target: { name, version: `ai ${VERSIONS.ai}`, versions: VERSIONS, surface: 'streamText().fullStream' },
      // No converter options: a recording that needs a server profile (cumulative arguments) is
      // not applicable, by name. JavaScript numbers are IEEE doubles.
      capabilities: { apis: APIS, text: true, reasoning: true, converter_options: false, json_numbers: 'double' },
    });
  }
}
