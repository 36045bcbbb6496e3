import assert from 'node:assert/strict'
import { ALICE, BOB, bearer, TOKENS, uploadFile } from '../helpers/auth.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const exemptConfig = {
  auth: { tokens: TOKENS },
  http: { errorStatus: 'http' as const },
  limits: { uploadsPerMinute: 2, concurrentUploads: 1, exemptUsers: ['bob'] },
}

describe('limits.exemptUsers lifts the per-client upload limits for the listed users only', () => {
  test('an exempt user keeps uploading past the rate while another user on the same address is refused', async (t) => {
    const srv = await startTestServer(t, exemptConfig)
    for (let i = 0; i < 5; i++) {
      const answer = await uploadFile(srv, bearer(BOB))
      assert.equal(answer.body.state, 'SUCCESS', JSON.stringify(answer.body))
    }
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    const refused = await uploadFile(srv, bearer(ALICE))
    assert.equal(refused.body.code, 'UE_RATE_LIMITED')
    assert.equal(refused.status, 429)
  })

  test('an exempt user may have more uploads in flight than limits.concurrentUploads', async (t) => {
    const srv = await startTestServer(t, exemptConfig)
    const answers = await Promise.all(Array.from({ length: 6 }, () => uploadFile(srv, bearer(BOB))))
    for (const answer of answers) assert.equal(answer.body.state, 'SUCCESS')
  })

  test('without limits.exemptUsers nobody is exempt: the same user is refused past the rate', async (t) => {
    const srv = await startTestServer(t, { ...exemptConfig, limits: { uploadsPerMinute: 2 } })
    await uploadFile(srv, bearer(BOB))
    await uploadFile(srv, bearer(BOB))
    assert.equal((await uploadFile(srv, bearer(BOB))).body.code, 'UE_RATE_LIMITED')
  })

  test('a name in limits.exemptUsers that is not a valid user id stops the server at start', async (t) => {
    await assert.rejects(
      startTestServer(t, { ...exemptConfig, limits: { exemptUsers: ['bob smith'] } }),
      /limits\.exemptUsers/,
    )
  })
})
