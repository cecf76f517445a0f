// Mastra over @ai-sdk/openai 2.x: a call whose first delta has no id ends the whole turn with
// InvalidResponseDataError ("Expected 'id' to be a string."): the call never runs and the text after it
// is lost.
//
// Layer: the provider (@ai-sdk/openai 2.0.130 throws on a call's first delta without an id, although
// its chunk schema admits `id: nullish`); @ai-sdk/openai 3.x (ToolCallTracker) mints an id instead.
// Mastra surfaces the error part and runs nothing. Harm: lost. Realism: observed; vLLM streamed calls
// without any id (https://github.com/vllm-project/vllm/issues/18412); an id that comes late is
// theoretical. Suite recording: openai-compatible/dialect_id_late; generated/openai-chat/005, 006, 007.
//
// Run: node mastra_provider_call_without_id_ends_the_turn.mjs   (next to a node_modules with @mastra/core 0.24.9, @ai-sdk/openai 2.0.130 and zod).
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
  call({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"city": "Paris"}' } }) +
  chunk({ content: 'Checking.' }) +
  chunk({}, 'tool_calls') +
  'data: [DONE]\n\n';
const result = await runAgent(body, ['get_weather']);
console.log('what the stream says: get_weather (no id) {"city": "Paris"}, text "Checking."; finish_reason "tool_calls"');
console.log(`what Mastra did: executed ${JSON.stringify(result.executed)}; text ${JSON.stringify(result.text)}; errors ${JSON.stringify(result.errors)}; finish ${result.finish}`);
const fixed = result.executed.some(e => e.name === 'get_weather' && e.input?.city === 'Paris');
console.log(fixed ? 'FIXED: the id-less call runs' : 'DEFECT: a call without an id ends the turn in an error; nothing runs');
process.exitCode = fixed ? 0 : 1;
