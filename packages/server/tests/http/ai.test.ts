import assert from 'node:assert/strict'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { auditLines, startAiRelay } from '../helpers/ai-relay.js'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, BOB, bearer, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const MODEL_KEY = 'sk-model-key-that-must-stay-on-the-server-0123456789'

function setup(
  t: { after(fn: () => Promise<void>): void },
  ai: NonNullable<ServerConfigInput['ai']> = {},
  extra: ServerConfigInput = {},
) {
  return startAiRelay(t, { apiKey: MODEL_KEY, ...ai }, extra)
}

/** POSTs a body to the AI action as the UEditor Plus dialog does. */
function ask(srv: TestServer, body: unknown, headers: Record<string, string> = bearer(ALICE)) {
  return fetch(srv.action('ai'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

/** The JSON of every `data:` line of an SSE body; `[DONE]` stays a string. */
function events(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)))
}

const modstart = { systemPrompt: '你是一个翻译助手', prompt: '翻译：你好' }
const openai = {
  model: 'test-model',
  messages: [
    { role: 'system', content: 'Summarise.' },
    { role: 'user', content: '<p>Some text</p>' },
  ],
  stream: true,
}

describe('the AI action', () => {
  test('a ModStart body streams back ModStart data events and an end event', async (t) => {
    const { srv, upstream, log } = await setup(t)
    const res = await ask(srv, modstart)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/)
    const text = await res.text()
    assert.deepEqual(events(text), [
      { type: 'data', data: 'Hello' },
      { type: 'data', data: ', ' },
      { type: 'data', data: 'world' },
      { type: 'end', data: '' },
    ])
    const seen = upstream.requests[0]
    assert.equal(seen?.path, '/v1/chat/completions')
    assert.equal(seen?.authorization, `Bearer ${MODEL_KEY}`)
    assert.equal(seen?.body.model, 'test-model')
    assert.deepEqual(seen?.body.messages, [
      { role: 'system', content: modstart.systemPrompt },
      { role: 'user', content: modstart.prompt },
    ])
    const [line] = await eventually(async () => auditLines(log), {
      until: (l) => l.length > 0,
      what: 'an audit line',
    })
    assert.equal(line.user, 'alice')
    assert.equal(line.model, 'test-model')
    assert.equal(line.tokensIn, 12)
    assert.equal(line.tokensOut, 3)
    assert.equal(line.usage, 'reported')
    assert.equal(line.outcome, 'ok')
    assert.equal(typeof line.ms, 'number')
    assert.ok(!JSON.stringify(line).includes('翻译'), 'no prompt text unless enabled')
  })

  test('an OpenAI chat body streams back chat completion chunks ending with [DONE]', async (t) => {
    const { srv, upstream } = await setup(t)
    const res = await ask(srv, openai)
    assert.equal(res.status, 200)
    const list = events(await res.text())
    assert.equal(list.at(-1), '[DONE]')
    const chunks = list.slice(0, -1) as { choices: { delta: { content: string } }[] }[]
    // Every chunk carries `delta.content`: the dialog appends it and would print "undefined".
    for (const c of chunks) assert.equal(typeof c.choices[0]?.delta.content, 'string')
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content).join(''), 'Hello, world')
    assert.deepEqual(upstream.requests[0]?.body.messages, openai.messages)
    assert.equal(upstream.requests[0]?.body.stream, true)
  })

  test('what the free-text box sends (a system prompt alone) reaches the upstream as the user message', async (t) => {
    const { srv, upstream } = await setup(t)
    const res = await ask(srv, { systemPrompt: 'Write a haiku about rivers', prompt: '' })
    assert.deepEqual(events(await res.text()).at(-1), { type: 'end', data: '' })
    assert.deepEqual(upstream.requests[0]?.body.messages, [
      { role: 'user', content: 'Write a haiku about rivers' },
    ])
  })

  test('the model key never reaches an answer or a log line, even when the upstream quotes it', async (t) => {
    const { srv, upstream, log } = await setup(t)
    const config = await (await fetch(srv.action('config'))).text()
    const ok = await (await ask(srv, modstart)).text()
    upstream.mode = 'fail'
    const failed = await ask(srv, openai)
    const failedText = await failed.text()
    assert.equal(failed.status, 200)
    const [event] = events(failedText) as { type: string; data: string; code: string }[]
    assert.equal(event?.type, 'error')
    assert.equal(event?.code, 'UE_AI_UPSTREAM_FAILED')
    assert.equal(event?.data, 'AI 服务暂时不可用，请稍后再试')
    await eventually(async () => auditLines(log), {
      until: (l) => l.length >= 2,
      what: 'two audit lines',
    })
    for (const text of [config, ok, failedText, ...log.lines])
      assert.ok(!text.includes(MODEL_KEY), text.slice(0, 200))
    assert.ok(log.lines.some((l) => l.includes('"upstreamStatus":401')))
  })

  test('config points the dialog at this server and sends no key', async (t) => {
    const { srv } = await setup(t)
    const body = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
    assert.deepEqual(body.ai, {
      driver: 'ModStart',
      driverConfig: { url: '/ueditor?action=ai' },
    })
  })

  test('without AI configured, config says nothing about AI and the action does not exist', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS } })
    const body = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
    assert.equal(body.ai, undefined)
    const res = await ask(srv, modstart)
    assert.deepEqual(await res.json(), { state: '请求地址出错', code: 'UE_ACTION_UNKNOWN' })
  })

  test('a request without a credential, or with a wrong one, gets 401 and reaches no upstream', async (t) => {
    const { srv, upstream } = await setup(t)
    for (const headers of [{}, bearer('wrong-token-0123456789abcdef')]) {
      const res = await ask(srv, modstart, headers)
      assert.equal(res.status, 401)
      const [event] = events(await res.text()) as { type: string; code: string }[]
      assert.equal(event?.type, 'error')
      assert.equal(event?.code, 'UE_UNAUTHORIZED')
    }
    assert.equal(upstream.requests.length, 0)
  })

  test('in auth mode none, a loopback client may use AI (local development)', async (t) => {
    const upstream = await startAiUpstream(t)
    const srv = await startTestServer(t, {
      ai: { baseUrl: upstream.baseUrl, apiKey: MODEL_KEY, model: 'test-model' },
    })
    const res = await ask(srv, modstart, {})
    assert.equal(res.status, 200)
    assert.deepEqual(events(await res.text()).at(-1), { type: 'end', data: '' })
  })

  test('a client-chosen model is served only from the allow-list', async (t) => {
    const { srv, upstream } = await setup(t, { models: ['other-model'] })
    const refused = events(await (await ask(srv, { ...openai, model: 'gpt-expensive' })).text())
    assert.deepEqual(refused, [
      {
        type: 'error',
        data: '不支持所选的 AI 模型',
        code: 'UE_AI_MODEL_NOT_ALLOWED',
        error: { message: '不支持所选的 AI 模型', code: 'UE_AI_MODEL_NOT_ALLOWED' },
      },
    ])
    assert.equal(upstream.requests.length, 0)
    const allowed = events(await (await ask(srv, { ...openai, model: 'other-model' })).text())
    assert.equal(allowed.at(-1), '[DONE]')
    assert.equal(upstream.requests[0]?.body.model, 'other-model')
  })

  test('a prompt past the size cap is refused before any upstream call', async (t) => {
    const { srv, upstream } = await setup(t, { maxPromptChars: 100 })
    const res = await ask(srv, { systemPrompt: 'x', prompt: 'y'.repeat(200) })
    const [event] = events(await res.text()) as { code: string }[]
    assert.equal(event?.code, 'UE_AI_PROMPT_TOO_LARGE')
    const huge = await ask(srv, { systemPrompt: 'x', prompt: 'y'.repeat(1_000_000) })
    const [hugeEvent] = events(await huge.text()) as { code: string }[]
    assert.equal(hugeEvent?.code, 'UE_BODY_TOO_LARGE')
    assert.equal(upstream.requests.length, 0)
  })

  test('the per-user rate limit holds, and one user does not use up another', async (t) => {
    const { srv, upstream } = await setup(t, { requestsPerMinute: 2 })
    for (let i = 0; i < 2; i++)
      assert.deepEqual(events(await (await ask(srv, modstart)).text()).at(-1), {
        type: 'end',
        data: '',
      })
    const [event] = events(await (await ask(srv, modstart)).text()) as { code: string }[]
    assert.equal(event?.code, 'UE_AI_RATE_LIMITED')
    assert.equal(upstream.requests.length, 2)
    const bob = events(await (await ask(srv, modstart, bearer(BOB))).text())
    assert.deepEqual(bob.at(-1), { type: 'end', data: '' })
  })

  test('the daily token budget holds, counted from the usage the upstream reports', async (t) => {
    const { srv, upstream } = await setup(t, { dailyTokens: 200 })
    upstream.usage = { prompt_tokens: 80, completion_tokens: 70 }
    const first = events(await (await ask(srv, modstart)).text())
    assert.deepEqual(first.at(-1), { type: 'end', data: '' })
    assert.equal(upstream.requests[0]?.body.stream_options?.include_usage, true)
    // The output cap never exceeds what is left of the budget once the prompt is reserved:
    // 39 bytes of text, 8 per message and 32 per call make 87.
    assert.equal(upstream.requests[0]?.body.max_tokens, 200 - 87)
    const [event] = events(await (await ask(srv, modstart)).text()) as {
      code: string
      data: string
    }[]
    assert.equal(event?.code, 'UE_AI_BUDGET_EXCEEDED')
    assert.equal(event?.data, '今日 AI 用量已达上限')
    assert.equal(upstream.requests.length, 1)
    const bob = events(await (await ask(srv, modstart, bearer(BOB))).text())
    assert.deepEqual(bob.at(-1), { type: 'end', data: '' })
  })

  test('the daily token budget is shared by two nodes on one database and outlives a restart', async (t) => {
    const { srv: first, upstream } = await setup(t, { dailyTokens: 200 })
    upstream.usage = { prompt_tokens: 80, completion_tokens: 70 }
    const index = first.ue.config.index
    assert.equal(index.driver, 'sqlite')
    const node = () =>
      startTestServer(t, {
        auth: { tokens: TOKENS },
        ai: { baseUrl: upstream.baseUrl, apiKey: MODEL_KEY, model: 'test-model', dailyTokens: 200 },
        index,
      })
    const second = await node()
    assert.deepEqual(events(await (await ask(first, modstart)).text()).at(-1), {
      type: 'end',
      data: '',
    })
    // The other node has never seen this user in its own memory.
    const [onSecond] = events(await (await ask(second, modstart)).text()) as { code: string }[]
    assert.equal(onSecond?.code, 'UE_AI_BUDGET_EXCEEDED')
    await first.close()
    const restarted = await node()
    const [afterRestart] = events(await (await ask(restarted, modstart)).text()) as {
      code: string
    }[]
    assert.equal(afterRestart?.code, 'UE_AI_BUDGET_EXCEEDED')
    assert.equal(upstream.requests.length, 1)
    const bob = events(await (await ask(restarted, modstart, bearer(BOB))).text())
    assert.deepEqual(bob.at(-1), { type: 'end', data: '' })
  })

  test('a client that disconnects aborts the upstream request at once', async (t) => {
    const { srv, upstream, log } = await setup(t)
    upstream.mode = 'drip'
    const controller = new AbortController()
    const res = await fetch(srv.action('ai'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(ALICE) },
      body: JSON.stringify(modstart),
      signal: controller.signal,
    })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    const first = await reader.read()
    assert.match(new TextDecoder().decode(first.value), /drip/)
    assert.equal(upstream.open(), 1)
    controller.abort()
    const closed = await eventually(async () => upstream.closedEarly(), {
      until: (n) => n === 1,
      timeoutMs: 10_000,
      what: 'the upstream call closed early',
    })
    assert.equal(closed, 1)
    const lines = await eventually(async () => auditLines(log), {
      until: (l) => l.length > 0,
      timeoutMs: 10_000,
      what: 'an audit line',
    })
    assert.equal(lines[0]?.outcome, 'aborted')
    assert.ok(lines[0]?.tokensOut > 0, 'the tokens streamed so far are counted')
  })

  test('a stalled upstream ends in an error event once the idle timeout passes', async (t) => {
    const { srv, upstream } = await setup(t, { idleTimeoutMs: 300 })
    upstream.mode = 'stall'
    const started = Date.now()
    const list = events(await (await ask(srv, modstart)).text())
    assert.deepEqual(list, [
      { type: 'data', data: 'thinking' },
      {
        type: 'error',
        data: 'AI 服务响应超时，请稍后再试',
        code: 'UE_AI_TIMEOUT',
        error: { message: 'AI 服务响应超时，请稍后再试', code: 'UE_AI_TIMEOUT' },
      },
    ])
    // Ended by the timeout, not by the upstream (which never ends) nor the default 120 s.
    assert.ok(Date.now() - started < 60_000)
    await eventually(async () => upstream.closedEarly(), {
      until: (n) => n === 1,
      what: 'the upstream call closed early',
    })
    assert.equal(upstream.closedEarly(), 1)
  })

  test('calls in flight per user are capped', async (t) => {
    const { srv, upstream } = await setup(t, { concurrencyPerUser: 1 })
    upstream.mode = 'drip'
    const controller = new AbortController()
    const running = await fetch(srv.action('ai'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(ALICE) },
      body: JSON.stringify(modstart),
      signal: controller.signal,
    })
    await (running.body as ReadableStream<Uint8Array>).getReader().read()
    const [event] = events(await (await ask(srv, modstart)).text()) as { code: string }[]
    assert.equal(event?.code, 'UE_AI_RATE_LIMITED')
    controller.abort()
    assert.equal(upstream.requests.length, 1)
  })

  test('a page on another allowed origin may call the AI action (preflight and answer)', async (t) => {
    const origin = 'https://cms.example'
    const { srv } = await setup(t, {}, { http: { corsOrigins: [origin] } })
    const preflight = await fetch(srv.action('ai'), {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    assert.equal(preflight.status, 204)
    assert.equal(preflight.headers.get('access-control-allow-origin'), origin)
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/)
    const res = await ask(srv, modstart, { ...bearer(ALICE), origin })
    assert.equal(res.headers.get('access-control-allow-origin'), origin)
    assert.deepEqual(events(await res.text()).at(-1), { type: 'end', data: '' })
  })

  test('with http.errorStatus "http", refusals after sign-in carry their real status', async (t) => {
    const { srv } = await setup(t, { requestsPerMinute: 1 }, { http: { errorStatus: 'http' } })
    const first = await ask(srv, modstart)
    assert.equal(first.status, 200)
    await first.text()
    const refused = await ask(srv, modstart)
    assert.equal(refused.status, 429)
    const [event] = events(await refused.text()) as { code: string }[]
    assert.equal(event?.code, 'UE_AI_RATE_LIMITED')
  })

  test('a body that is neither shape is refused with a readable error event', async (t) => {
    const { srv, upstream } = await setup(t)
    for (const body of [{ foo: 1 }, [], { messages: [] }, { ...openai, stream: false }]) {
      const [event] = events(await (await ask(srv, body)).text()) as { code: string }[]
      assert.equal(event?.code, 'UE_VALIDATION_FAILED', JSON.stringify(body))
    }
    const res = await fetch(srv.action('ai'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(ALICE) },
      body: '{not json',
    })
    const [event] = events(await res.text()) as { code: string }[]
    assert.equal(event?.code, 'UE_BODY_INVALID')
    assert.equal(upstream.requests.length, 0)
  })
})
