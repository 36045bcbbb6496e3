import assert from 'node:assert/strict'
import { openMetadataStore } from '../../src/db/open.js'
import { auditLines, startAiRelay } from '../helpers/ai-relay.js'
import type { SeenRequest } from '../helpers/ai-upstream.js'
import { ALICE, BOB, bearer } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import type { TestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const BUDGET = 1_000

/**
 * Usage as a real upstream reports it for English text: about four characters a token, a few
 * tokens of chat template per message, and an answer of at most the max_tokens it was sent.
 */
function honestUsage(body: SeenRequest['body']) {
  const messages = body.messages ?? []
  const chars = messages.reduce((n, m) => n + m.content.length, 0)
  return {
    prompt_tokens: Math.ceil(chars / 4) + 4 * messages.length,
    completion_tokens: Math.min(body.max_tokens ?? Number.POSITIVE_INFINITY, 120),
  }
}

function ask(srv: TestServer, prompt: string, token = ALICE) {
  return fetch(srv.action('ai'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: prompt }] }),
  }).then((res) => res.text())
}

const words = (chars: number) =>
  'the river runs to the sea; '.repeat(Math.ceil(chars / 27)).slice(0, chars)

async function counted(srv: TestServer, subject: string): Promise<number> {
  const store = await openMetadataStore(srv.ue.config.index)
  try {
    return await store.aiUsage.used(subject, new Date().toISOString().slice(0, 10))
  } finally {
    await store.close()
  }
}

test('concurrent calls of a fresh user with a small budget never take the day past it, and a prompt that cannot fit is never sent', async (t) => {
  const { srv, upstream, log } = await startAiRelay(t, {
    dailyTokens: BUDGET,
    requestsPerMinute: 0,
    concurrencyPerUser: 8,
  })
  upstream.usageOf = honestUsage

  // The attack pass's calls: two at once, each a 59,000-character prompt.
  const huge = await Promise.all([ask(srv, words(59_000)), ask(srv, words(59_000))])
  const hugeSent = upstream.requests.length
  const afterHuge = await counted(srv, 'user:alice')
  t.diagnostic(
    `2 concurrent calls of 59,000 characters: ${hugeSent} sent upstream, ${afterHuge} tokens counted of a budget of ${BUDGET}`,
  )
  for (const text of huge) assert.match(text, /UE_AI_BUDGET_EXCEEDED/, text.slice(0, 200))
  assert.equal(hugeSent, 0, 'a prompt that cannot fit never reaches the upstream')

  // Then eight at once of 600 characters: each fits alone, not all together.
  const answers = await Promise.all(Array.from({ length: 8 }, () => ask(srv, words(600))))
  const served = answers.filter((a) => a.includes('"finish_reason":"stop"')).length
  const refused = answers.filter((a) => a.includes('UE_AI_BUDGET_EXCEEDED')).length
  const lines = await eventually(async () => auditLines(log).filter((l) => l.outcome === 'ok'), {
    until: (l) => l.length === served,
    what: 'an audit line per served call',
  })
  const reported = lines.reduce((n, l) => n + l.tokensIn + l.tokensOut, 0)
  const count = await counted(srv, 'user:alice')
  t.diagnostic(
    `of 8 concurrent 600-character calls ${served} served and ${refused} refused; ${count} tokens counted of a budget of ${BUDGET} (the upstream reported ${reported}); max_tokens sent: ${upstream.requests.map((r) => r.body.max_tokens).join(', ')}`,
  )
  assert.equal(served + refused, 8)
  assert.equal(lines.length, served)
  assert.ok(served >= 1)
  assert.equal(count, reported)
  assert.ok(count <= BUDGET, `${count} tokens counted`)
  // Another user's day is untouched.
  assert.match(await ask(srv, words(600), BOB), /"finish_reason":"stop"/)
})
