#!/usr/bin/env node
// Mastra (`@mastra/core` Agent over an `@ai-sdk/openai` Chat Completions model) as a byte-level
// bridge target (docs/bridge.md), fully offline.
//
//   cd examples/bridge/node-sdks && npm ci
//   toolcall-conformance run --bridge "node examples/bridge/node-sdks/mastra_bridge.mjs"
//   node examples/bridge/node-sdks/mastra_bridge.mjs --once openai-chat body.sse [--piece N]   (one body, for debugging)
//
// Each recorded Chat Completions body is served, in exactly the byte pieces the suite chose, by a
// custom `fetch` handed to `createOpenAI({ fetch, apiKey }).chat(...)` (@ai-sdk/openai 2.x, the AI
// SDK v5 provider Mastra 0.24 runs): a Response whose body stream enqueues one piece per pull. The
// application is a Mastra `Agent` whose tools are made with `createTool`; each tool's `execute`
// records the call (id, name, the input Mastra hands it) and returns a value. `agent.stream(...)`
// runs with `maxSteps: 1`, so Mastra's own loop decides which calls run in that one step and sends no
// second request. A call counts as one the application ran exactly when Mastra executed it; every
// other `tool-call` part of the stream is reported with an `error` saying it did not run.
//
// Layers: the bytes are parsed by @ai-sdk/openai's chat model (the same AI SDK code the Vercel column
// runs, one major version earlier); what runs is decided by Mastra's loop (it executes each
// `tool-call` the provider emits). A finding is the provider's when its parts already say it (a
// tool input that never becomes a `tool-call`), Mastra's when it runs a call the parts mark as
// unfinished (a step that finished with 'length' or 'unknown').
//
// The agent declares a tool for every name the body mentions (the application's registry is not
// what is checked; an unknown tool name would be Mastra's not-found path).
//
// Offline: globalThis.fetch and net.Socket#connect throw, so any attempt to reach the network fails
// loudly (telemetry export included); the provider only ever calls the `fetch` passed to it.

import { readFileSync } from 'node:fs';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { isMain, serveStack } from '../tcc_bridge.mjs';
import { forbidNetwork, streamOf, versionsOf } from './offline.mjs';

const PACKAGES = ['@mastra/core', '@ai-sdk/openai', 'zod'];
export const VERSIONS = versionsOf(PACKAGES);

// ---- offline guard ------------------------------------------------------------------------------
globalThis.AI_SDK_LOG_WARNINGS = false;
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

// Every string the body gives as a "name" (tool names): the application declares those tools.
function toolNames(body) {
  const names = new Set();
  for (const match of body.matchAll(/"name"\s*:\s*("(?:[^"\\]|\\.)*")/g)) {
    try {
      const name = JSON.parse(match[1]);
      if (name) names.add(name);
    } catch {
      // not a whole JSON string (a name cut by the body's end): no tool of that name
    }
  }
  return [...names];
}

function toolsFor(names, executed) {
  const tools = {};
  for (const name of names) {
    tools[name] = createTool({
      id: name,
      description: `the ${name} tool`,
      inputSchema: z.looseObject({}),
      execute: async ({ context }, options) => {
        executed.push({ id: options?.toolCallId ?? null, name, input: context });
        return 'ok';
      },
    });
  }
  return tools;
}

const errorText = error =>
  error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : JSON.stringify(error);

// The provider's id, or null when the wire never held it (the AI SDK mints one then).
function providerId(id, body) {
  return typeof id === 'string' && body.includes(JSON.stringify(id)) ? id : null;
}

/** Run one recorded body through a Mastra Agent (one step) and return the final result the suite reads. */
export async function runStream({ pieces }) {
  const body = Buffer.concat(pieces).toString('utf8');
  const executed = [];
  const agent = new Agent({
    name: 'replay',
    instructions: 'replay',
    model: createOpenAI({ fetch: recordedFetch(pieces), apiKey: 'test' }).chat('gpt-4o-mini'),
    tools: toolsFor(toolNames(body), executed),
  });
  const turn = { text: '', reasoning: '', inputs: new Map(), calls: [], errors: [], finishReason: null };
  try {
    const output = await agent.stream('replay', { maxSteps: 1, maxRetries: 0 });
    for await (const part of output.fullStream) {
      const payload = part.payload ?? {};
      switch (part.type) {
        case 'text-delta':
          turn.text += payload.text ?? '';
          break;
        case 'reasoning-delta':
          turn.reasoning += payload.text ?? '';
          break;
        case 'tool-call-input-streaming-start':
          turn.inputs.set(payload.toolCallId, { name: payload.toolName, deltas: [] });
          break;
        case 'tool-call-delta':
          turn.inputs.get(payload.toolCallId)?.deltas.push(payload.argsTextDelta ?? '');
          break;
        case 'tool-call':
          turn.calls.push(payload);
          break;
        case 'tool-error':
          turn.errors.push(`tool-error ${payload.toolName}: ${errorText(payload.error)}`);
          break;
        case 'error':
          turn.errors.push(errorText(payload.error));
          break;
        case 'finish':
          turn.finishReason = payload.stepResult?.reason ?? turn.finishReason;
          break;
        default:
          break;
      }
    }
  } catch (error) {
    turn.errors.push(`agent.stream raised ${errorText(error)}`);
  }
  // In the order the stream announced the calls (tool-call-input-streaming-start, wire order): the
  // provider emits each tool-call part when that call's arguments first parse, so parallel calls whose
  // deltas interleave finish in another order; which one completes first is not what is judged.
  const announced = [...turn.inputs.keys()];
  const place = call => {
    const at = announced.indexOf(call.toolCallId);
    return at < 0 ? announced.length : at;
  };
  const calls = turn.calls
    .filter(call => !call.providerExecuted)
    .map((call, at) => ({ call, at }))
    .sort((a, b) => place(a.call) - place(b.call) || a.at - b.at)
    .map(({ call }) => call)
    .map(call => {
      const streamed = turn.inputs.get(call.toolCallId);
      const raw = streamed ? streamed.deltas.join('') : typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {});
      const common = { call_id: providerId(call.toolCallId, body), name: call.toolName, raw_arguments: raw };
      const ran = executed.find(e => e.id === call.toolCallId && e.name === call.toolName);
      return ran ? { ...common, arguments: ran.input } : { ...common, error: 'not executed by the agent' };
    });
  const abnormal = turn.finishReason !== 'stop' && turn.finishReason !== 'tool-calls';
  const errors = [...turn.errors];
  if (abnormal && errors.length === 0) errors.push(`finish reason '${turn.finishReason}'`);
  const ended = new Set(turn.calls.map(call => call.toolCallId));
  return {
    calls,
    text: turn.text,
    reasoning: turn.reasoning,
    error: errors.length ? errors.join('; ') : null,
    finish_reason: turn.finishReason,
    // Diagnostics (the suite reads only the keys above): executions no tool-call part announced, and
    // tool inputs that started and never became a call.
    executed_without_part: executed.filter(e => !turn.calls.some(c => c.toolCallId === e.id)),
    unfinished_inputs: [...turn.inputs.entries()].filter(([id]) => !ended.has(id)).map(([id, { name, deltas }]) => ({ id, name, raw: deltas.join('') })),
  };
}

// ---- entry points -------------------------------------------------------------------------------
function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

// No reasoning: @ai-sdk/openai's chat model does not read `reasoning_content` (not OpenAI's wire).
export const CAPABILITIES = { apis: APIS, text: true, reasoning: false, converter_options: false, json_numbers: 'double' };

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
      target: { name: 'mastra', version: `@mastra/core ${VERSIONS['@mastra/core']}`, versions: VERSIONS, surface: 'Agent.stream() (maxSteps 1) over @ai-sdk/openai .chat()' },
      // No converter options: a recording that needs a server profile is not applicable, by name.
      // JavaScript numbers are IEEE doubles.
      capabilities: CAPABILITIES,
    });
  }
}
