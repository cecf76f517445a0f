// Mastra over @ai-sdk/openai 2.x: a tool input that never closes (the turn cut at the token limit,
// by an in-band error or by the body's end) is dropped: tool-call-input-streaming-start and deltas,
// then no input end, no tool-call and no tool-error.
//
// Layer: the provider (@ai-sdk/openai 2.0.130 has no end-of-stream handling for unfinished calls).
// Nothing runs (right), but the application that rendered the started call is never told it was
// abandoned. The same finding as the vercel-ai-sdk column's anthropic_unclosed_tool_block_dropped.
// Harm: stream_shape. Realism: every provider cuts at max_tokens (finish_reason "length"). Suite
// recordings: openai-chat/truncated_max_tokens, openai-chat/error_event_mid_call,
// openai-chat/stream_cut_mid_call; generated/openai-chat/013.
//
// Run: node mastra_provider_unclosed_tool_input_dropped.mjs   (next to a node_modules with @mastra/core 0.24.9, @ai-sdk/openai 2.0.130 and zod).
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
  call({ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"path": "x.py", "content": "def f():\\n' } }) +
  chunk({}, 'length') +
  'data: [DONE]\n\n';
const result = await runAgent(body, ['write_file']);
console.log('what the stream says: write_file id=call_1 arguments cut by the token limit; finish_reason "length"');
console.log(`what Mastra did: parts ${result.types.join(', ')}; executed ${JSON.stringify(result.executed)}; finish ${result.finish}`);
const started = result.types.includes('tool-call-input-streaming-start');
const resolved = result.types.some(t => ['tool-call-input-streaming-end', 'tool-call', 'tool-error'].includes(t));
const fixed = !started || resolved;
console.log(fixed ? 'FIXED: the started tool input is closed or reported' : 'DEFECT: a started tool input is abandoned without any part saying so');
process.exitCode = fixed ? 0 : 1;
