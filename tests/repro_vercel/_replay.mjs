// Minimal offline replay shared by the direct reproductions: serve `body` (a string) as the HTTP
// response to the provider's one request through the provider's `fetch` option, run streamText
// with the given tools, and return every part of `fullStream`. Pinned versions:
// examples/bridge/vercel/package-lock.json (node_modules here is a symlink to that folder's).
import { streamText, tool } from 'ai';
import { z } from 'zod';

globalThis.AI_SDK_LOG_WARNINGS = false;

export function recordedFetch(body) {
  let calls = 0;
  return async () => {
    if (++calls > 1) throw new Error('unexpected second request');
    return new Response(new TextEncoder().encode(body), { headers: { 'content-type': 'text/event-stream' } });
  };
}

/** tools: { name: executeFn | null }; returns { parts, result } */
export async function replay(model, tools) {
  const toolSet = Object.fromEntries(Object.entries(tools).map(([name, execute]) =>
    [name, tool({ inputSchema: z.looseObject({}), ...(execute ? { execute } : {}) })]));
  const result = streamText({ model, prompt: 'x', tools: toolSet, maxRetries: 0, onError() {} });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  return { parts, result };
}

export const sse = events => events.map(e => (typeof e === 'string' ? e : `data: ${JSON.stringify(e)}`) + '\n\n').join('');
export const anthropicSse = events => events.map(e => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
export const types = parts => parts.map(p => p.type);

// A Chat Completions chunk.
export const chunk = (delta, finish = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }] });

/** Prints REPRODUCED / NOT REPRODUCED and sets the exit status (0 / 1). */
export function verdict(reproduced, what) {
  console.log(`${reproduced ? 'REPRODUCED' : 'NOT REPRODUCED'}: ${what}`);
  process.exitCode = reproduced ? 0 : 1;
}
