// The typings of chat (bindings/index.d.ts: CausalLM#chat, ChatTurn, ChatOptions, Tokenizer#applyChatTemplate,
// chatStopTokens; bindings/tokenizer.d.ts's re-exports) compile under `tsc --noEmit --strict` with
// tests/types/tsconfig.json's settings, against a usage file written to a temporary folder that imports the
// bindings by path; misuses must fail (@ts-expect-error).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const USAGE = (root) => `
import { init } from '${root}bindings/index.js';
import type { AssistantMessage, ChatMessage, ChatOptions, ChatTurn, GeneratedToken } from '${root}bindings/index.js';
import { Tokenizer } from '${root}bindings/tokenizer.js';
import type { ApplyChatTemplateOptions, ChatMessage as TokenizerChatMessage } from '${root}bindings/tokenizer.js';

export async function main(): Promise<void> {
  const aw = await init();
  const lm = await aw.loadCausalLM('model/', { tokenizerConfig: '{}' });
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image' }] },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: {} } }] },
    { role: 'tool', content: '42', tool_call_id: 'abcdefghi' },
  ];
  const options: ChatOptions = {
    maxNewTokens: 5, temperature: 0.7, topK: 40, topP: 0.9, seed: 1, signal: new AbortController().signal, stopTokens: [1, 2],
    tools: [{ type: 'function', function: { name: 'f' } }], documents: [{ title: 'T', text: 'x' }],
    chatTemplate: 'tool_use', chatTemplateKwargs: { enable_thinking: false }, now: new Date(),
  };
  const turn: ChatTurn = lm.chat(messages, options);
  for await (const t of turn) {
    const token: GeneratedToken = t;
    const text: string | undefined = token.text;
    console.log(text, t.id, t.index, t.ms);
  }
  const prompt: string = turn.prompt;
  const promptIds: Int32Array = turn.promptIds;
  const stops: number[] = turn.stopTokens;
  const reason: 'stop' | 'length' | 'context' | 'aborted' | 'error' | null = turn.stopReason;
  console.log(prompt, promptIds, stops, reason, turn.ids, turn.text, turn.seed);
  const message: AssistantMessage = await turn.finalMessage();
  messages.push(message, turn.message);
  const r = await lm.chat(messages).next();
  if (r.done) {
    const content: string = r.value.content;
    console.log(content);
  }
  const ended: IteratorResult<GeneratedToken, AssistantMessage> = await turn.return();
  console.log(ended);

  const tok = Tokenizer.fromJSON('{}', '{}');
  const same: TokenizerChatMessage[] = messages;
  const ids: Int32Array = tok.applyChatTemplate(same);
  const withPrompt: Int32Array = tok.applyChatTemplate(messages, { addGenerationPrompt: true, enable_thinking: false, tokenize: true });
  const text: string = tok.applyChatTemplate(messages, { tokenize: false, addGenerationPrompt: true });
  const o: ApplyChatTemplateOptions = { tokenize: Math.random() > 0.5, documents: [], chatTemplate: '{{ messages[0].content }}' };
  const either: Int32Array | string = tok.applyChatTemplate(messages, o);
  const stopIds: number[] = tok.chatStopTokens({ chatTemplate: 'tool_use', tools: [] });
  console.log(ids, withPrompt, text, either, stopIds, tok.chatStopTokens());

  // @ts-expect-error addGenerationPrompt is a boolean
  tok.applyChatTemplate(messages, { addGenerationPrompt: 'yes' });
  // @ts-expect-error tokenize: false gives the text, not ids
  const wrong: Int32Array = tok.applyChatTemplate(messages, { tokenize: false });
  // @ts-expect-error maxNewTokens is a number
  lm.chat(messages, { maxNewTokens: '5' });
  // @ts-expect-error a message has a role
  lm.chat([{ content: 'x' }]);
  // @ts-expect-error chatTemplateKwargs is an object
  lm.chat(messages, { chatTemplateKwargs: 'enable_thinking' });
  console.log(wrong);
}
`;

test('the chat typings compile under tsc --strict; misuses are errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-chat-types-'));
  try {
    const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tests/types/tsconfig.json'), 'utf8'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['usage.ts'] }));
    writeFileSync(join(dir, 'usage.ts'), USAGE(ROOT));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
    } catch (e) {
      assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
