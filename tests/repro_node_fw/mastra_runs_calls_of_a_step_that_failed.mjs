// Mastra: a call whose arguments completed runs although its step then failed (an in-band error
// event), was cut at the token limit, or ended without its finish chunk.
//
// Layer: Mastra's loop (it executes each `tool-call` part as it arrives; @ai-sdk/openai emits the part
// as soon as the arguments parse, before the step's end). The AI SDK's own streamText fixed the same
// in v6: client tools run only when the step finished with 'stop' or 'tool-calls'
// (ai/src/generate-text/is-tool-execution-allowed-finish-reason.ts). Harm: ran_wrong. Realism:
// observed; OpenAI sends `{"error": ...}` inside a stream that already started (the openai client raises
// APIError on it), and every provider stops at max_tokens. Suite recordings:
// openai-chat/stream_cut_after_arguments; generated/openai-chat/014 to 018.
//
// Run: node mastra_runs_calls_of_a_step_that_failed.mjs   (next to a node_modules with @mastra/core 0.24.9, @ai-sdk/openai 2.0.130 and zod).
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

const opening =
  chunk({ role: 'assistant', content: '' }) +
  call({ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }) +
  call({ index: 0, function: { arguments: '{"path": "a.py", "content": "x = 1"}' } });
const endings = {
  'an in-band error event': 'data: {"error": {"message": "Overloaded", "type": "server_error", "code": 503}}\n\n',
  'finish_reason "length"': chunk({}, 'length') + 'data: [DONE]\n\n',
  'no finish chunk (body cut)': '',
};
let defect = false;
for (const [ending, tail] of Object.entries(endings)) {
  const result = await runAgent(opening + tail, ['write_file']);
  console.log(`what the stream says: write_file id=call_1 {"path": "a.py", "content": "x = 1"}, then ${ending}: it must not run`);
  console.log(`  what Mastra did: executed ${JSON.stringify(result.executed)}; finish ${result.finish}; errors ${JSON.stringify(result.errors)}`);
  defect ||= result.executed.length > 0;
}
console.log(defect ? 'DEFECT: Mastra ran a call of a step that did not finish normally' : 'FIXED: no call of a failed step runs');
process.exitCode = defect ? 1 : 0;
