// Mastra over @ai-sdk/openai 2.x: of two calls sent on index 0 (each with its own id), the second
// is dropped: it never runs and nothing says why.
//
// Layer: the provider (@ai-sdk/openai 2.0.130 keys calls by index only; once index 0's call has
// finished, every later delta on index 0, the new id included, is skipped). @ai-sdk/openai 3.x
// (ToolCallTracker) starts a new call on a new id, but then loses its arguments (the vercel-ai-sdk
// column's finding, vercel/ai#14277). Harm: lost. Realism: observed; Ollama's OpenAI-compatible API
// (0.20.x) puts every call on index 0 (https://github.com/ollama/ollama/issues/15457). Suite
// recording: openai-compatible/dialect_index_always_zero; generated bodies rendered with
// index_always_zero.
//
// Run: node mastra_provider_index_zero_second_call_dropped.mjs   (next to a node_modules with @mastra/core 0.24.9, @ai-sdk/openai 2.0.130 and zod).
// Exit 1 while the defect is there, 0 once fixed, 2 when it cannot run. Offline: the body is served by
// the provider's own `fetch` option; `maxSteps: 1` keeps Mastra to the one request.
let Agent, createTool, createOpenAI, z;
try {
  ({ Agent } = await import('@mastra/core/agent'));
  ({ createTool } = await import('@mastra/core/tools'));
  ({ createOpenAI } = await import('@ai-sdk/openai'));
  ({ z } = await import('zod'));
} catch (error) {
  console.error(`cannot run: ${error.message}`);
  process.exit(2);
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const call = entry => chunk({ tool_calls: [entry] });

/** Serve `body` to a Mastra Agent (tools `names`, one step) through the provider's fetch option. */
async function runAgent(body, names) {
  const executed = [];
  const tools = Object.fromEntries(names.map(name => [name, createTool({
    id: name,
    description: name,
    inputSchema: z.looseObject({}),
    execute: async ({ context }, options) => {
      executed.push({ name, id: options?.toolCallId, input: context });
      return 'done';
    },
  })]));
  let requests = 0;
  const fetch = async () => {
    if (++requests > 1) throw new Error('unexpected second request');
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  const agent = new Agent({ name: 'repro', instructions: 'repro', model: createOpenAI({ fetch, apiKey: 'offline' }).chat('gpt-4o-mini'), tools });
  const output = await agent.stream('go', { maxSteps: 1, maxRetries: 0 });
  const parts = [];
  for await (const part of output.fullStream) parts.push(part);
  const finish = parts.find(p => p.type === 'finish')?.payload?.stepResult?.reason ?? null;
  const errors = parts.filter(p => p.type === 'error').map(p => String(p.payload?.error?.message ?? p.payload?.error));
  const types = parts.map(p => p.type).filter(t => !['start', 'step-start', 'step-finish', 'finish', 'text-start', 'text-end'].includes(t));
  return { executed, finish, errors, types, text: parts.filter(p => p.type === 'text-delta').map(p => p.payload.text).join('') };
}

const body =
  chunk({ role: 'assistant', content: '' }) +
  call({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"city": "Paris"}' } }) +
  call({ index: 0, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"tz": "Europe/Oslo"}' } }) +
  chunk({}, 'tool_calls') +
  'data: [DONE]\n\n';
const result = await runAgent(body, ['get_weather', 'get_time']);
console.log('what the stream says: get_weather id=call_a {"city": "Paris"}, then get_time id=call_b {"tz": "Europe/Oslo"}, both on index 0');
console.log(`what Mastra did: executed ${JSON.stringify(result.executed)}; errors ${JSON.stringify(result.errors)}`);
const fixed = result.executed.some(e => e.name === 'get_time' && e.input?.tz === 'Europe/Oslo');
console.log(fixed ? 'FIXED: the second call runs with its arguments' : 'DEFECT: the second call on index 0 is dropped without a word');
process.exitCode = fixed ? 0 : 1;
