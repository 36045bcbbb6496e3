import { createHmac, timingSafeEqual } from 'node:crypto'

/** The `X-Ueditor-Signature` value of a body: `sha256=` and the hex HMAC-SHA256 of its bytes. */
export function signatureOf(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/**
 * For a Node host app: whether `header` is the signature of the raw `body` under `secret`,
 * compared in constant time. Verify the bytes as received, before parsing the JSON.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string | Uint8Array,
  header: string | null | undefined,
): boolean {
  if (typeof header !== 'string') return false
  const expected = Buffer.from(signatureOf(secret, body))
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
